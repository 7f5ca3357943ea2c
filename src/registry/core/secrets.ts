import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';
import { MAX_DATA_BYTES, configKeyIssues, immutableDataIssues } from './configmaps.js';

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Keys each well-known secret type must carry (core/v1 validation). */
const requiredKeys: Record<string, { anyOf?: string[]; allOf?: string[] }> = {
  'kubernetes.io/dockercfg': { allOf: ['.dockercfg'] },
  'kubernetes.io/dockerconfigjson': { allOf: ['.dockerconfigjson'] },
  'kubernetes.io/basic-auth': { anyOf: ['username', 'password'] },
  'kubernetes.io/ssh-auth': { allOf: ['ssh-privatekey'] },
  'kubernetes.io/tls': { allOf: ['tls.crt', 'tls.key'] },
};

function dataOf(obj: KubeObject): Record<string, string> {
  const d = obj.data;
  return d && typeof d === 'object' && !Array.isArray(d) ? (d as Record<string, string>) : {};
}

function validateSecret(obj: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const raw = obj.data;
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    return [fieldIssue.typeInvalid('data', raw, 'must be a map of base64-encoded strings')];
  }
  const data = dataOf(obj);
  let total = 0;
  for (const [k, v] of Object.entries(data)) {
    issues.push(...configKeyIssues(`data[${k}]`, k));
    if (typeof v !== 'string' || !BASE64_RE.test(v)) {
      issues.push(fieldIssue.invalid(`data[${k}]`, '<secret contents redacted>', 'must be a base64-encoded string'));
      continue;
    }
    total += Math.floor((v.length * 3) / 4);
  }
  if (total > MAX_DATA_BYTES) issues.push({ type: 'FieldValueTooLong', field: 'data', detail: `must have at most ${MAX_DATA_BYTES} bytes` });
  const type = typeof obj.type === 'string' ? obj.type : 'Opaque';
  const rule = requiredKeys[type];
  if (rule?.allOf) for (const k of rule.allOf) if (!(k in data)) issues.push(fieldIssue.required(`data[${k}]`));
  if (rule?.anyOf && !rule.anyOf.some((k) => k in data)) {
    issues.push(fieldIssue.required(`data[${rule.anyOf[0]}]`));
  }
  if (type === 'kubernetes.io/service-account-token' && !obj.metadata?.annotations?.['kubernetes.io/service-account.name']) {
    issues.push(fieldIssue.required('metadata.annotations[kubernetes.io/service-account.name]'));
  }
  if (type === 'kubernetes.io/dockerconfigjson' && typeof data['.dockerconfigjson'] === 'string') {
    try {
      JSON.parse(Buffer.from(data['.dockerconfigjson'], 'base64').toString('utf8'));
    } catch (e) {
      issues.push(fieldIssue.invalid('data[.dockerconfigjson]', '<secret contents redacted>', (e as Error).message));
    }
  }
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

export const secretStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  defaults(obj) {
    if (obj.type === undefined || obj.type === '') obj.type = 'Opaque';
  },
  prepareForCreate: foldStringData,
  prepareForUpdate: foldStringData,
  validate: validateSecret,
  validateUpdate(obj, old) {
    const issues = validateSecret(obj);
    if ((obj.type ?? 'Opaque') !== (old.type ?? 'Opaque')) issues.push(fieldIssue.invalid('type', obj.type, 'field is immutable'));
    return [...issues, ...immutableDataIssues(obj, old, ['data'])];
  },
  selectableFields: (o) => ({ type: typeof o.type === 'string' ? o.type : 'Opaque' }),
  tableColumns: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'The type of secret', priority: 0 },
    { name: 'Data', type: 'string', description: 'Number of keys in data.', priority: 0 },
    ageColumn,
  ],
  tableCells: (o) => [o.metadata?.name ?? '', o.type ?? 'Opaque', Object.keys(dataOf(o)).length, ageSince(o.metadata?.creationTimestamp)],
};
