import { fieldIssue, undecodable, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { canonicalStdBase64, decodeStdBase64 } from '../../../golang/base64.js';
import { META_GO_FIELD_TYPES, goFieldTypeTable, goTypeError, type GoFieldTypeTable, type GoFieldTypes } from '../../../apimachinery/gotypes.js';
import { metaDefinitions } from '../../../apimachinery/definitions/meta.js';
import type { Definitions } from '../../../apimachinery/schema.js';
import { configMapDefinitions } from './definitions.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

const CONFIG_KEY_RE = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
/** Total size of a ConfigMap's or Secret's data (corev1.MaxSecretSize). */
export const MAX_DATA_BYTES = 1024 * 1024;

/** validation.IsConfigMapKey: the rules for keys of ConfigMap and Secret data. */
export function configKeyIssues(field: string, key: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (key.length > 253) issues.push(fieldIssue.invalid(field, key, 'must be no more than 253 characters'));
  if (!CONFIG_KEY_RE.test(key)) issues.push(fieldIssue.invalid(field, key, CONFIG_KEY_MSG));
  if (key === '.') issues.push(fieldIssue.invalid(field, key, "must not be '.'"));
  else if (key === '..') issues.push(fieldIssue.invalid(field, key, "must not be '..'"));
  else if (key.startsWith('..')) issues.push(fieldIssue.invalid(field, key, "must not start with '..'"));
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Decoding. kube-apiserver decodes a body into the typed v1 struct with encoding/json, so a value
// of the wrong JSON type, or a []byte value (Secret data, ConfigMap binaryData) that is not valid
// base64, fails the decode itself: a 400 BadRequest before any validation, not a 422. Its message
// is goTypeError's (src/apimachinery/gotypes.ts), which checks the whole body, metadata included.
// Here, on the hot path, one pass over the kind's own fields stores them as the server writes the
// decoded object back, and asks goTypeError only when some value is not plainly well-typed.

/** How a top-level field of the kind is written back, from its definition. */
type FieldForm = 'bytes-map' | 'string-map' | 'boolean' | 'string';

/** A kind whose fields prepareDecoded writes back as Go's decoder would. */
export interface DecodedKind {
  readonly kind: string;
  readonly definition: string;
  /** The kind's fields other than metadata, apiVersion and kind, in definition order. */
  readonly fields: readonly (readonly [string, FieldForm])[];
  /**
   * The kind's own definitions (with meta's) and the Go types they lose: what its Go struct is does
   * not depend on the control plane serving it.
   */
  readonly definitions: Definitions;
  readonly fieldTypes: GoFieldTypeTable;
}

/** The DecodedKind of a core/v1 kind whose fields are maps of string or []byte, bools and strings. */
export function decodedKind(kind: string, kindDefinitions: Definitions, goFieldTypes: GoFieldTypes = {}): DecodedKind {
  const definition = `io.k8s.api.core.v1.${kind}`;
  const definitions = { ...metaDefinitions, ...kindDefinitions };
  const fields: [string, FieldForm][] = [];
  for (const [name, s] of Object.entries(definitions[definition]?.properties ?? {})) {
    if (name === 'metadata' || name === 'apiVersion' || name === 'kind') continue;
    const elem = s.additionalProperties;
    if (s.type === 'object' && typeof elem === 'object' && elem.type === 'string') fields.push([name, elem.format === 'byte' ? 'bytes-map' : 'string-map']);
    else if (s.type === 'boolean' || s.type === 'string') fields.push([name, s.type]);
    else throw new Error(`decodedKind: ${definition}.${name} is not a map of strings or []byte, a bool or a string`);
  }
  return { kind, definition, fields, definitions, fieldTypes: goFieldTypeTable(META_GO_FIELD_TYPES, goFieldTypes) };
}

/**
 * Writes back `obj`'s fields as the decoded object holds them: []byte values in canonical base64
 * ("YW\nJj" is stored as "YWJj", an array of bytes as their base64), null map values as empty ones,
 * null fields dropped. False when a value does not decode plainly (the object is then only partly
 * written back: well-typed values are rewritten into well-typed values, nothing else is touched).
 */
function normalizeDecoded(obj: KubeObject, fields: DecodedKind['fields']): boolean {
  let plain = true;
  for (const [name, form] of fields) {
    const v = obj[name];
    if (v === undefined) continue;
    if (v === null) {
      delete obj[name];
      continue;
    }
    if (form === 'boolean' || form === 'string') {
      if (typeof v !== form) plain = false;
      continue;
    }
    if (typeof v !== 'object' || Array.isArray(v)) {
      plain = false;
      continue;
    }
    const map = v as Record<string, unknown>;
    for (const k in map) {
      const val = map[k];
      if (val === null) map[k] = '';
      else if (form === 'string-map') {
        if (typeof val !== 'string') plain = false;
      } else {
        const canonical = typeof val === 'string' ? canonicalStdBase64(val) : Array.isArray(val) ? byteArrayBase64(val) : undefined;
        if (typeof canonical !== 'string') plain = false;
        else if (canonical !== val) map[k] = canonical;
      }
    }
  }
  return plain;
}

/** A JSON array of uint8 numbers (how encoding/json also takes a []byte) as base64; undefined for any other. */
function byteArrayBase64(items: readonly unknown[]): string | undefined {
  const out = Buffer.alloc(items.length);
  for (let i = 0; i < items.length; i++) {
    const e = items[i];
    if (e === null) continue; // the zero byte
    if (typeof e !== 'number' || !Number.isInteger(e) || e < 0 || e > 255 || Object.is(e, -0)) return undefined;
    out[i] = e;
  }
  return out.toString('base64');
}

/**
 * Decodes `obj` into the kind as kube-apiserver would: the 400 of a value that does not decode,
 * else the fields written back as the server stores them.
 */
export function prepareDecoded(obj: KubeObject, kind: DecodedKind): void {
  if (normalizeDecoded(obj, kind.fields)) return;
  const err = goTypeError(obj, kind.definition, kind.definitions, kind.fieldTypes);
  if (err !== undefined) throw undecodable(kind.kind, 'v1', kind.kind, err);
}

/** Decoded size of a []byte value for the size limit (a value that does not decode counts 0). */
export function decodedLength(v: unknown): number {
  if (typeof v !== 'string') return 0;
  const r = decodeStdBase64(v);
  return typeof r === 'number' ? 0 : r.length;
}

const CONFIGMAP = decodedKind('ConfigMap', configMapDefinitions);

function prepareConfigMap(obj: KubeObject): void {
  prepareDecoded(obj, CONFIGMAP);
}

function mapOf(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** ValidateConfigMap. Sizes count values only (data bytes and decoded binaryData), not keys. */
function validateConfigMap(obj: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const data = mapOf(obj.data);
  const binary = mapOf(obj.binaryData);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    issues.push(...configKeyIssues(`data[${k}]`, k));
    if (k in binary) issues.push(fieldIssue.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
    total += typeof v === 'string' ? Buffer.byteLength(v) : 0;
  }
  for (const [k, v] of Object.entries(binary)) {
    issues.push(...configKeyIssues(`binaryData[${k}]`, k));
    total += decodedLength(v);
  }
  // field.NewPath("") prints as "[]": upstream's message reads `is invalid: []: Too long: ...`.
  if (total > MAX_DATA_BYTES) issues.push(fieldIssue.tooLong('[]', '', MAX_DATA_BYTES));
  return issues;
}

/** Immutable ConfigMaps/Secrets: data and the flag itself are frozen once set (shared rule). */
export function immutableDataIssues(obj: KubeObject, old: KubeObject, fields: readonly string[]): FieldIssue[] {
  if (old.immutable !== true) return [];
  const issues: FieldIssue[] = [];
  if (obj.immutable !== true) issues.push(fieldIssue.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      issues.push(fieldIssue.forbidden(f, 'field is immutable when `immutable` is set'));
    }
  }
  return issues;
}

export const configMapStrategy: Strategy = {
  finalizerNames: 'kube',
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate: prepareConfigMap,
  prepareForUpdate: prepareConfigMap,
  validate: validateConfigMap,
  // ValidateConfigMapUpdate: the immutability checks come first, then ValidateConfigMap.
  validateUpdate: (obj, old) => [...immutableDataIssues(obj, old, ['data', 'binaryData']), ...validateConfigMap(obj)],
  tableColumns: [
    nameColumn,
    {
      name: 'Data',
      type: 'string',
      description:
        "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
      priority: 0,
    },
    ageColumn,
  ],
  tableCells: (o) => [
    o.metadata?.name ?? '',
    Object.keys((o.data as object | undefined) ?? {}).length + Object.keys((o.binaryData as object | undefined) ?? {}).length,
    ageSince(o.metadata?.creationTimestamp),
  ],
};
