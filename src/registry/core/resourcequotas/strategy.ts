// ResourceQuota's strategy (pkg/registry/core/resourcequota/strategy.go) and validation
// (pkg/apis/core/validation: ValidateResourceQuota, ...Update, ...StatusUpdate). The status is
// written through /status only (by the quota controller and the quota admission plugin); a write
// of the object keeps the stored status, one through /status keeps the stored spec.
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import { Quantity, canonicalResourceList } from '../../../apimachinery/quantity.js';
import {
  STANDARD_QUOTA_SCOPES,
  isIntegerResourceName,
  isScopeValidForResource,
  isStandardQuotaResourceName,
  isStandardResourceName,
} from '../../../apimachinery/quota.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { cloneObject } from '../../codec.js';
import { isQualifiedName } from '../../../apimachinery/validation/names.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

export interface ScopedResourceSelectorRequirement {
  scopeName?: string;
  operator?: string;
  values?: string[];
}

export interface ResourceQuotaSpec {
  hard?: Record<string, unknown>;
  scopes?: string[];
  scopeSelector?: { matchExpressions?: ScopedResourceSelectorRequirement[] };
}

export interface ResourceQuotaStatus {
  hard?: Record<string, string>;
  used?: Record<string, string>;
}

export type ResourceQuota = KubeObject & { spec?: ResourceQuotaSpec; status?: ResourceQuotaStatus };

const IS_NEGATIVE = 'must be greater than or equal to 0';
const IS_NOT_INTEGER = 'must be an integer';
const IS_INVALID_QUOTA_RESOURCE = 'must be a standard resource for quota';
const FIELD_IMMUTABLE = 'field is immutable';

/** validateResourceName then ValidateResourceQuotaResourceName's own check. */
function resourceNameIssues(name: string, path: string): FieldIssue[] {
  const issues = isQualifiedName(name).map((m) => fieldIssue.invalid(path, name, m));
  if (issues.length === 0 && !name.includes('/') && !isStandardResourceName(name)) {
    issues.push(fieldIssue.invalid(path, name, 'must be a standard resource type or fully qualified'));
  }
  if (!name.includes('/') && !isStandardQuotaResourceName(name)) issues.push(fieldIssue.invalid(path, name, IS_INVALID_QUOTA_RESOURCE));
  return issues;
}

/** ValidateResourceQuantityValue (the value as the server writes it back). */
function quantityIssues(name: string, value: unknown, path: string): FieldIssue[] {
  const q = Quantity.parse(value);
  if (!q) return [];
  const issues: FieldIssue[] = [];
  if (q.sign() < 0) issues.push(fieldIssue.invalid(path, q.toString(), IS_NEGATIVE));
  if (isIntegerResourceName(name) && !q.isInteger()) issues.push(fieldIssue.invalid(path, q.toString(), IS_NOT_INTEGER));
  return issues;
}

function resourceListIssues(list: Record<string, unknown> | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [k, v] of Object.entries(list ?? {})) {
    const p = `${path}[${k}]`;
    issues.push(...resourceNameIssues(k, p), ...quantityIssues(k, v, p));
  }
  return issues;
}

const CONFLICTING = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
] as const;

/** validateResourceQuotaScopes. */
function scopesIssues(spec: ResourceQuotaSpec): FieldIssue[] {
  const scopes = spec.scopes ?? [];
  if (scopes.length === 0) return [];
  const issues: FieldIssue[] = [];
  const hard = Object.keys(spec.hard ?? {}).sort();
  for (const scope of scopes) {
    if (!STANDARD_QUOTA_SCOPES.includes(scope)) issues.push(fieldIssue.invalid('spec.scopes', scopes, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isScopeValidForResource(scope, k)) {
        issues.push(fieldIssue.invalid('spec.scopes', scopes, 'unsupported scope applied to resource'));
      }
    }
  }
  for (const pair of CONFLICTING) if (pair.every((s) => scopes.includes(s))) issues.push(fieldIssue.invalid('spec.scopes', scopes, 'conflicting scopes'));
  return issues;
}

const EXISTS_ONLY = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity']);

/** validateScopeSelector / validateScopedResourceSelectorRequirement (upstream's paths carry no index). */
function scopeSelectorIssues(spec: ResourceQuotaSpec): FieldIssue[] {
  const selector = spec.scopeSelector;
  if (!selector) return [];
  const path = 'spec.scopeSelector.matchExpressions';
  const issues: FieldIssue[] = [];
  const hard = Object.keys(spec.hard ?? {}).sort();
  const seen = new Set<string>();
  for (const req of selector.matchExpressions ?? []) {
    const scope = req.scopeName ?? '';
    if (!STANDARD_QUOTA_SCOPES.includes(scope)) issues.push(fieldIssue.invalid(`${path}.scopeName`, scope, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !isScopeValidForResource(scope, k)) {
        issues.push(fieldIssue.invalid(path, selector, 'unsupported scope applied to resource'));
      }
    }
    if (EXISTS_ONLY.has(scope) && req.operator !== 'Exists') {
      issues.push(
        fieldIssue.invalid(
          `${path}.operator`,
          req.operator ?? '',
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          issues.push(fieldIssue.required(`${path}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length !== 0) {
          issues.push(fieldIssue.invalid(`${path}.values`, values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
        }
        break;
      default:
        issues.push(fieldIssue.invalid(`${path}.operator`, req.operator ?? '', 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const pair of CONFLICTING) if (pair.every((s) => seen.has(s))) issues.push(fieldIssue.invalid(path, selector, 'conflicting scopes'));
  return issues;
}

function specIssues(o: ResourceQuota): FieldIssue[] {
  const spec = o.spec ?? {};
  return [...resourceListIssues(spec.hard, 'spec.hard'), ...scopesIssues(spec), ...scopeSelectorIssues(spec)];
}

function statusIssues(o: ResourceQuota): FieldIssue[] {
  return [...resourceListIssues(o.status?.hard, 'status.hard'), ...resourceListIssues(o.status?.used, 'status.used')];
}

/** ValidateResourceQuotaUpdate's immutability of the scopes (compared as sets). */
function scopesImmutableIssues(o: ResourceQuota, old: ResourceQuota): FieldIssue[] {
  const a = new Set(o.spec?.scopes ?? []);
  const b = new Set(old.spec?.scopes ?? []);
  const same = a.size === b.size && [...a].every((s) => b.has(s));
  return same ? [] : [fieldIssue.invalid('spec.scopes', o.spec?.scopes ?? [], FIELD_IMMUTABLE)];
}

/** The quantities as the server writes them back (Quantity's canonical form). */
function canonicalize(o: ResourceQuota): void {
  if (o.spec?.hard) o.spec.hard = canonicalResourceList(o.spec.hard) ?? {};
  if (o.status?.hard) o.status.hard = canonicalResourceList(o.status.hard) as Record<string, string>;
  if (o.status?.used) o.status.used = canonicalResourceList(o.status.used) as Record<string, string>;
}

function keepStored(o: ResourceQuota, old: ResourceQuota, field: 'spec' | 'status'): void {
  const stored = old[field];
  if (stored) (o as Record<string, unknown>)[field] = cloneObject(stored as KubeObject);
  else delete o[field];
}

/** printResourceQuota's REQUEST and LIMIT cells: `name: used/hard` over status.hard, sorted; limits.* go to LIMIT. */
export function quotaCells(o: ResourceQuota): [string, string] {
  const hard = o.status?.hard ?? {};
  const used = o.status?.used ?? {};
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const pieces = name.split('.');
    const cell = `${name}: ${used[name] ?? '0'}/${hard[name]}`;
    (pieces.length > 1 && pieces[0] === 'limits' ? limit : request).push(cell);
  }
  return [request.join(', '), limit.join(', ')];
}

export const resourceQuotaStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  finalizerNames: 'kube',
  prepareForCreate(o) {
    const q = o as ResourceQuota;
    delete q.status;
    canonicalize(q);
  },
  prepareForUpdate(o, old) {
    keepStored(o, old, 'status');
    canonicalize(o);
  },
  validate: (o) => [...specIssues(o), ...statusIssues(o)],
  validateUpdate: (o, old) => [...specIssues(o), ...scopesImmutableIssues(o, old)],
  resetFields: { '': [['status']], status: [['spec']] },
  subresources: {
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate(o, old) {
        keepStored(o, old, 'spec');
        canonicalize(o);
      },
      // ValidateResourceQuotaStatusUpdate.
      validateUpdate: (o) => statusIssues(o),
    },
  },
  tableColumns: [
    nameColumn,
    ageColumn,
    { name: 'Request', type: 'string', description: 'Request represents a minimum amount of cpu/memory that a container may consume.', priority: 0 },
    {
      name: 'Limit',
      type: 'string',
      description: 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
      priority: 0,
    },
  ],
  tableCells: (o) => [o.metadata?.name ?? '', ageSince(o.metadata?.creationTimestamp), ...quotaCells(o)],
};
