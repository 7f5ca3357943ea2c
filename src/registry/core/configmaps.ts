import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
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

function stringMap(obj: KubeObject, field: string, issues: FieldIssue[]): Record<string, unknown> {
  const v = obj[field];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    issues.push(fieldIssue.typeInvalid(field, v, 'must be a map of strings'));
    return {};
  }
  const out = v as Record<string, unknown>;
  for (const [k, val] of Object.entries(out)) {
    if (typeof val !== 'string') issues.push(fieldIssue.typeInvalid(`${field}[${k}]`, val, 'must be a string'));
  }
  return out;
}

function validateConfigMap(obj: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const data = stringMap(obj, 'data', issues);
  const binary = stringMap(obj, 'binaryData', issues);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    issues.push(...configKeyIssues(`data[${k}]`, k));
    total += k.length + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
  }
  for (const [k, v] of Object.entries(binary)) {
    issues.push(...configKeyIssues(`binaryData[${k}]`, k));
    if (k in data) issues.push(fieldIssue.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
    total += k.length + (typeof v === 'string' ? Math.floor((v.length * 3) / 4) : 0);
  }
  if (total > MAX_DATA_BYTES) issues.push({ type: 'FieldValueTooLong', field: '', detail: `must have at most ${MAX_DATA_BYTES} bytes` });
  if (obj.immutable !== undefined && typeof obj.immutable !== 'boolean') issues.push(fieldIssue.typeInvalid('immutable', obj.immutable, 'must be a boolean'));
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
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateConfigMap,
  validateUpdate: (obj, old) => [...validateConfigMap(obj), ...immutableDataIssues(obj, old, ['data', 'binaryData'])],
  tableColumns: [nameColumn, { name: 'Data', type: 'string', description: 'Number of keys in data and binaryData.', priority: 0 }, ageColumn],
  tableCells: (o) => [
    o.metadata?.name ?? '',
    Object.keys((o.data as object | undefined) ?? {}).length + Object.keys((o.binaryData as object | undefined) ?? {}).length,
    ageSince(o.metadata?.creationTimestamp),
  ],
};
