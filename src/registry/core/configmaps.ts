import { badRequest, fieldIssue, type FieldIssue, type StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { decodeStdBase64 } from '../../apimachinery/gobase64.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';

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
// of the wrong JSON type, or a []byte field (Secret data, ConfigMap binaryData) that is not valid
// base64, fails the decode itself: a 400 BadRequest before any validation, not a 422.

/** How a field of the v1 struct decodes: its Go type as encoding/json's errors name it. */
export interface FieldCodec {
  readonly codec: 'bytes-map' | 'string-map' | 'bool' | 'string';
  readonly goType: string;
}

/** A JSON value's kind as Go's UnmarshalTypeError names it. */
function goKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/**
 * A JSON array decodes into []byte as a list of uint8 numbers (encoding/json treats []byte as a
 * slice there): the bytes, or Go's error for the first element that is not one.
 */
function byteArray(items: readonly unknown[], where: string): Buffer | string {
  const out = Buffer.alloc(items.length);
  for (let i = 0; i < items.length; i++) {
    const e = items[i];
    if (e === null) continue; // null leaves the zero value
    if (typeof e === 'number') {
      // Go parses the literal with ParseUint; integers 0-255 are the ones that fit.
      if (Number.isInteger(e) && e >= 0 && e <= 255) out[i] = e;
      else return `json: cannot unmarshal number ${String(e)} into ${where} of type uint8`;
    } else {
      return `json: cannot unmarshal ${goKind(e)} into ${where} of type uint8`;
    }
  }
  return out;
}

/** One []byte map value as bytes, or encoding/json's error text for it. */
function bytesValue(v: unknown, where: string): Buffer | string {
  if (v === null) return Buffer.alloc(0);
  if (typeof v === 'string') {
    const r = decodeStdBase64(v);
    return typeof r === 'number' ? `illegal base64 data at input byte ${r}` : r;
  }
  if (Array.isArray(v)) return byteArray(v, where);
  return `json: cannot unmarshal ${goKind(v)} into ${where} of type []uint8`;
}

/**
 * The error encoding/json reports decoding `obj` into the v1 struct `kind`, for the fields in
 * `fields`, or undefined. Go keeps the first error in document order and carries on, so the
 * fields are checked in the object's own key order.
 */
export function decodeErrorOf(obj: KubeObject, kind: string, fields: Readonly<Record<string, FieldCodec>>): string | undefined {
  for (const name of Object.keys(obj)) {
    const spec = fields[name];
    const v = obj[name];
    if (!spec || v === null || v === undefined) continue;
    // encoding/json names a struct field by its struct, not by the map key within it.
    const where = `Go struct field ${kind}.${name}`;
    const typeError = (x: unknown, goType: string): string => `json: cannot unmarshal ${goKind(x)} into ${where} of type ${goType}`;
    if (spec.codec === 'bool') {
      if (typeof v !== 'boolean') return typeError(v, spec.goType);
    } else if (spec.codec === 'string') {
      if (typeof v !== 'string') return typeError(v, spec.goType);
    } else if (typeof v !== 'object' || Array.isArray(v)) {
      return typeError(v, spec.goType);
    } else {
      for (const val of Object.values(v as Record<string, unknown>)) {
        if (spec.codec === 'string-map') {
          if (val !== null && typeof val !== 'string') return typeError(val, 'string');
        } else {
          const r = bytesValue(val, where);
          if (typeof r === 'string') return r;
        }
      }
    }
  }
  return undefined;
}

/** The 400 for a body that does not decode into the typed object. */
export function decodeError(kind: string, message: string): StatusError {
  return badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${message}`);
}

/**
 * What the decoded object holds once the server writes it back: []byte values in canonical
 * base64 ("YW\nJj" is stored as "YWJj"), null map values as empty ones, null fields dropped.
 * Call only after decodeErrorOf found nothing.
 */
export function normalizeDecoded(obj: KubeObject, fields: Readonly<Record<string, FieldCodec>>): void {
  for (const [name, spec] of Object.entries(fields)) {
    const v = obj[name];
    if (v === null) {
      delete obj[name];
      continue;
    }
    if ((spec.codec !== 'bytes-map' && spec.codec !== 'string-map') || typeof v !== 'object' || v === undefined) continue;
    const map = v as Record<string, unknown>;
    for (const [k, val] of Object.entries(map)) {
      if (spec.codec === 'string-map') {
        if (val === null) map[k] = '';
      } else {
        const r = bytesValue(val, '');
        if (typeof r !== 'string') {
          const canonical = r.toString('base64');
          if (canonical !== val) map[k] = canonical;
        }
      }
    }
  }
}

/** Decoded size of a []byte value for the size limit (a value that does not decode counts 0). */
export function decodedLength(v: unknown): number {
  if (typeof v !== 'string') return 0;
  const r = decodeStdBase64(v);
  return typeof r === 'number' ? 0 : r.length;
}

const CONFIGMAP_FIELDS: Readonly<Record<string, FieldCodec>> = {
  data: { codec: 'string-map', goType: 'map[string]string' },
  binaryData: { codec: 'bytes-map', goType: 'map[string][]uint8' },
  immutable: { codec: 'bool', goType: 'bool' },
};

function prepareConfigMap(obj: KubeObject): void {
  const err = decodeErrorOf(obj, 'ConfigMap', CONFIGMAP_FIELDS);
  if (err !== undefined) throw decodeError('ConfigMap', err);
  normalizeDecoded(obj, CONFIGMAP_FIELDS);
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
  tableColumns: [nameColumn, { name: 'Data', type: 'string', description: 'Number of keys in data and binaryData.', priority: 0 }, ageColumn],
  tableCells: (o) => [
    o.metadata?.name ?? '',
    Object.keys((o.data as object | undefined) ?? {}).length + Object.keys((o.binaryData as object | undefined) ?? {}).length,
    ageSince(o.metadata?.creationTimestamp),
  ],
};
