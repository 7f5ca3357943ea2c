import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import { MAX_JSON_DEPTH, describeJsonSyntaxError } from '../../../apimachinery/json.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import { secretDefinitions, secretGoFieldTypes } from './definitions.js';
import { MAX_DATA_BYTES, configKeyIssues, decodedKind, immutableDataIssues, prepareDecoded } from '../configmaps/strategy.js';
import { decodeStdBase64 } from '../../../golang/base64.js';
import { cannotUnmarshal } from '../../../golang/json-errors.js';

const REDACTED = '<secret contents redacted>';

const SECRET = decodedKind('Secret', secretDefinitions, secretGoFieldTypes);

function dataOf(obj: KubeObject): Record<string, string> {
  const d = obj.data;
  return d && typeof d === 'object' && !Array.isArray(d) ? (d as Record<string, string>) : {};
}

/** A data value's bytes (after prepare every value is canonical base64). */
function bytesOf(v: unknown): Buffer | undefined {
  if (typeof v !== 'string') return undefined;
  const r = decodeStdBase64(v);
  return typeof r === 'number' ? undefined : r;
}

/**
 * err.Error() of Go's `json.Unmarshal(b, &map[string]interface{}{})`, or undefined when it
 * succeeds: the scanner's syntax error (without a position), or the type error for a top-level
 * value that is not an object (null is accepted).
 */
export function goUnmarshalMapError(b: Buffer): string | undefined {
  // Go's scanner works on bytes: latin1 gives one character per byte, so a bad byte is named
  // as Go's quoteChar names it ('Ã' for the first byte of "é"), and offsets line up.
  const text = b.toString('latin1');
  const goDepth = (m: string): string => m.replace(/ exceeded max depth of \d+$/, ' exceeded max depth');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    const m = describeJsonSyntaxError(text, MAX_JSON_DEPTH, false);
    // At the end of input Go's scanner steps once more with a space (scanner.eof), so a cut-off
    // literal reads "invalid character ' ' in literal true (expecting 'e')".
    return goDepth(m === 'unexpected end of JSON input' ? describeJsonSyntaxError(`${text} `, MAX_JSON_DEPTH, false) : m);
  }
  // JSON.parse has no nesting limit; Go's scanner stops past 10000 levels.
  if (text.length > MAX_JSON_DEPTH * 2) {
    const m = describeJsonSyntaxError(text, MAX_JSON_DEPTH, false);
    if (m.includes('exceeded max depth')) return goDepth(m);
  }
  if (v === null || (typeof v === 'object' && !Array.isArray(v))) return undefined;
  return cannotUnmarshal(v, 'map[string]interface {}');
}

/** The per-type rules of ValidateSecret. */
function typeIssues(obj: KubeObject, data: Record<string, string>): FieldIssue[] {
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(data, k);
  const type = typeof obj.type === 'string' ? obj.type : 'Opaque';
  switch (type) {
    case 'kubernetes.io/service-account-token':
      // Only the annotation is required; data[token] etc. come later from the token controller.
      if (!obj.metadata?.annotations?.['kubernetes.io/service-account.name']) {
        return [fieldIssue.required('metadata.annotations[kubernetes.io/service-account.name]')];
      }
      return [];
    case 'kubernetes.io/dockercfg':
    case 'kubernetes.io/dockerconfigjson': {
      const key = type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) return [fieldIssue.required(`data[${key}]`)];
      // The content must be well-formed JSON (an object or null), with Go's error text.
      const err = goUnmarshalMapError(bytesOf(data[key]) ?? Buffer.alloc(0));
      return err === undefined ? [] : [fieldIssue.invalid(`data[${key}]`, REDACTED, err)];
    }
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one of them must be present; upstream then names both.
      if (!has('username') && !has('password')) return [fieldIssue.required('data[username]'), fieldIssue.required('data[password]')];
      return [];
    case 'kubernetes.io/ssh-auth':
      // Upstream checks the length, so a present but empty key is missing too.
      return (bytesOf(data['ssh-privatekey'])?.length ?? 0) === 0 ? [fieldIssue.required('data[ssh-privatekey]')] : [];
    case 'kubernetes.io/tls':
      return ['tls.crt', 'tls.key'].filter((k) => !has(k)).map((k) => fieldIssue.required(`data[${k}]`));
    default:
      return [];
  }
}

/** ValidateSecret (metadata aside). The size limit counts decoded values only, not keys. */
function validateSecret(obj: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const data = dataOf(obj);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    issues.push(...configKeyIssues(`data[${k}]`, k));
    const b = bytesOf(v);
    // Not reachable through the store (prepare rejects such bodies with a 400); kept for direct callers.
    if (b === undefined) issues.push(fieldIssue.invalid(`data[${k}]`, REDACTED, 'must be a base64-encoded string'));
    else total += b.length;
  }
  if (total > MAX_DATA_BYTES) issues.push(fieldIssue.tooLong('data', '', MAX_DATA_BYTES));
  issues.push(...typeIssues(obj, data));
  return issues;
}

/** stringData is write-only: merged into data (base64) and never stored. */
function foldStringData(obj: KubeObject): void {
  const sd = obj.stringData;
  if (sd && typeof sd === 'object' && !Array.isArray(sd)) {
    const data = { ...dataOf(obj) };
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

/** Decode as kube-apiserver does (a 400 for what does not decode), then fold stringData. */
function prepareSecret(obj: KubeObject): void {
  prepareDecoded(obj, SECRET);
  foldStringData(obj);
}

export const secretStrategy: Strategy = {
  finalizerNames: 'kube',
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaults(obj) {
    // null decodes to the zero value "", which SetDefaults_Secret turns into Opaque.
    if (obj.type === undefined || obj.type === null || obj.type === '') obj.type = 'Opaque';
  },
  prepareForCreate: prepareSecret,
  prepareForUpdate: prepareSecret,
  validate: validateSecret,
  validateUpdate(obj, old) {
    // ValidateSecretUpdate's order: type, then the immutable rules, then ValidateSecret.
    const issues: FieldIssue[] = [];
    if ((obj.type ?? 'Opaque') !== (old.type ?? 'Opaque')) issues.push(fieldIssue.invalid('type', obj.type, 'field is immutable'));
    return [...issues, ...immutableDataIssues(obj, old, ['data']), ...validateSecret(obj)];
  },
  selectableFields: (o) => ({ type: typeof o.type === 'string' ? o.type : 'Opaque' }),
  tableColumns: [
    nameColumn,
    {
      name: 'Type',
      type: 'string',
      description: 'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
      priority: 0,
    },
    {
      name: 'Data',
      type: 'string',
      description:
        "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
      priority: 0,
    },
    ageColumn,
  ],
  tableCells: (o) => [o.metadata?.name ?? '', o.type ?? 'Opaque', Object.keys(dataOf(o)).length, ageSince(o.metadata?.creationTimestamp)],
};
