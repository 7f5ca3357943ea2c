// The APIService strategy (kube-aggregator's pkg/registry/apiservice/strategy.go and
// pkg/apis/apiregistration/validation): status is reset on create and kept on spec writes, the
// name must be `<version>.<group>`, priorities are bounded, and a local APIService (no service)
// may carry neither a caBundle nor insecureSkipTLSVerify.
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1035Label, isDNS1123Subdomain, nameIsPathSegment } from '../../../apimachinery/validation/names.js';
import { keepStoredField, type Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import { availableCondition, type APIService } from './types.js';

const CONDITION_STATUSES = ['True', 'False', 'Unknown'];

/** Bytes of a base64 value as Go would decode it (the length upstream reports). */
function base64Length(v: string): number {
  return Buffer.from(v, 'base64').length;
}

export function validateAPIService(o: APIService): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = o.spec ?? {};
  const group = spec.group ?? '';
  const version = spec.version ?? '';
  const name = o.metadata?.name ?? '';
  const requiredName = `${version}.${group}`;
  // The name validator has checked it is a path segment; this is the rest of upstream's name func.
  if (name !== '' && nameIsPathSegment(name, false).length === 0 && name !== requiredName) {
    issues.push(fieldIssue.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(requiredName)}`));
  }
  if (group === '' && version !== 'v1') issues.push(fieldIssue.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group !== '') for (const msg of isDNS1123Subdomain(group)) issues.push(fieldIssue.invalid('spec.group', group, msg));
  for (const msg of isDNS1035Label(version)) issues.push(fieldIssue.invalid('spec.version', version, msg));
  const gpm = spec.groupPriorityMinimum ?? 0;
  if (gpm <= 0 || gpm > 20000) issues.push(fieldIssue.invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
  const vp = spec.versionPriority ?? 0;
  if (vp <= 0 || vp > 1000) issues.push(fieldIssue.invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
  const caBytes = spec.caBundle ? base64Length(spec.caBundle) : 0;
  if (spec.service === undefined || spec.service === null) {
    if (caBytes !== 0) issues.push(fieldIssue.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify) issues.push(fieldIssue.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return issues;
  }
  if (!spec.service.namespace) issues.push(fieldIssue.required('spec.service.namespace'));
  if (!spec.service.name) issues.push(fieldIssue.required('spec.service.name'));
  if (spec.insecureSkipTLSVerify && caBytes > 0) issues.push(fieldIssue.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return issues;
}

export function validateAPIServiceStatus(o: APIService): FieldIssue[] {
  const issues: FieldIssue[] = [];
  (o.status?.conditions ?? []).forEach((c, i) => {
    if (!CONDITION_STATUSES.includes(c.status)) issues.push(fieldIssue.notSupported(`status.conditions[${i}].status`, c.status, CONDITION_STATUSES));
  });
  return issues;
}

/** The SERVICE cell: `namespace/name`, or `Local`. */
export function serviceCell(o: APIService): string {
  const s = o.spec?.service;
  return s ? `${s.namespace ?? ''}/${s.name ?? ''}` : 'Local';
}

/** The AVAILABLE cell: `True`, `False (Reason)`, or `Unknown` without the condition. */
export function availableCell(o: APIService): string {
  const c = availableCondition(o);
  if (!c) return 'Unknown';
  if (c.status === 'True' || !c.reason) return c.status;
  return `${c.status} (${c.reason})`;
}

function defaults(o: KubeObject): void {
  const svc = (o as APIService).spec?.service;
  if (svc && svc.port === undefined) svc.port = 443;
}

export const apiServiceStrategy: Strategy = {
  namespaced: false,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  nameValidator: nameIsPathSegment,
  defaults,
  prepareForCreate(o) {
    (o as APIService).status = {};
    defaults(o);
  },
  prepareForUpdate(o, old) {
    keepStoredField(o, old, 'status');
    defaults(o);
  },
  validate: (o) => validateAPIService(o),
  validateUpdate: (o) => validateAPIService(o),
  resetFields: { '': [['status']], status: [['spec']] },
  subresources: {
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
      validateUpdate: (o) => validateAPIServiceStatus(o),
    },
  },
  tableColumns: [
    nameColumn,
    { name: 'Service', type: 'string', format: '', description: 'The reference to the service that hosts this API endpoint.', priority: 0 },
    { name: 'Available', type: 'string', format: '', description: 'Whether this service is available.', priority: 0 },
    ageColumn,
  ],
  tableCells: (o) => [o.metadata?.name ?? '', serviceCell(o), availableCell(o), ageSince(o.metadata?.creationTimestamp)],
};
