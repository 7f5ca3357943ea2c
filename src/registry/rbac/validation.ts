// pkg/apis/rbac/validation and the v1 defaults (pkg/apis/rbac/v1/defaults.go), shared by the four kinds.
import { fieldIssue, omitValue, type FieldIssue } from '../../apimachinery/errors.js';
import { goQuote } from '../../golang/strconv.js';
import { tryLabelSelectorFromObject, type LabelSelectorObject } from '../../apimachinery/labels.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { isDNS1123Subdomain, isPathSegmentName } from '../../apimachinery/validation/names.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}
interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

const rulesOf = (o: KubeObject): PolicyRule[] => (Array.isArray(o.rules) ? (o.rules as PolicyRule[]) : []);
const subjectsOf = (o: KubeObject): Subject[] => (Array.isArray(o.subjects) ? (o.subjects as Subject[]) : []);
export const roleRefOf = (o: KubeObject): RoleRef => (o.roleRef && typeof o.roleRef === 'object' ? o.roleRef : {});

/** validatePolicyRule. */
function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!rule.verbs?.length) issues.push(fieldIssue.required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (rule.nonResourceURLs?.length) {
    if (namespaced) issues.push(fieldIssue.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length)
      issues.push(fieldIssue.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    return issues;
  }
  if (!rule.apiGroups?.length) issues.push(fieldIssue.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!rule.resources?.length) issues.push(fieldIssue.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  if (rule.resourceNames?.length && (rule.resources?.length ?? 0) > 1)
    issues.push(fieldIssue.required(`${path}.resourceNames`, 'resource names cannot apply to multiple resources'));
  return issues;
}

export function validateRules(o: KubeObject, namespaced: boolean): FieldIssue[] {
  return rulesOf(o).flatMap((r, i) => validatePolicyRule(r ?? {}, namespaced, `rules[${i}]`));
}

/** ValidateClusterRole's aggregationRule part. */
export function validateAggregationRule(o: KubeObject): FieldIssue[] {
  const rule = o.aggregationRule as { clusterRoleSelectors?: LabelSelectorObject[] } | undefined | null;
  if (rule === undefined || rule === null) return [];
  const selectors = rule.clusterRoleSelectors ?? [];
  const issues: FieldIssue[] = [];
  if (selectors.length === 0)
    issues.push(fieldIssue.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
  selectors.forEach((s, i) => {
    const r = tryLabelSelectorFromObject(s);
    if (!r.ok) {
      const path = `aggregationRule.clusterRoleSelectors[${i}]`;
      for (const issue of r.issues) issues.push({ ...issue, field: issue.field ? `${path}.${issue.field}` : path });
    }
  });
  return issues;
}

/** ValidateRoleBinding / ValidateClusterRoleBinding, without the metadata part. */
export function validateBinding(o: KubeObject, namespaced: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ref = roleRefOf(o);
  if (ref.apiGroup !== RBAC_GROUP) issues.push(fieldIssue.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind ?? '')) issues.push(fieldIssue.notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) issues.push(fieldIssue.required('roleRef.name'));
  else for (const msg of isPathSegmentName(ref.name)) issues.push(fieldIssue.invalid('roleRef.name', ref.name, msg));
  subjectsOf(o).forEach((s, i) => issues.push(...validateSubject(s ?? {}, namespaced, `subjects[${i}]`)));
  return issues;
}

function validateSubject(s: Subject, namespaced: boolean, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const name = s.name ?? '';
  if (!name) issues.push(fieldIssue.required(`${path}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name) for (const msg of isDNS1123Subdomain(name)) issues.push(fieldIssue.invalid(`${path}.name`, name, msg));
      if (s.apiGroup) issues.push(fieldIssue.notSupported(`${path}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) issues.push(fieldIssue.required(`${path}.namespace`));
      break;
    case 'User':
      if (!name) issues.push(fieldIssue.invalid(`${path}.name`, name, 'user name cannot be empty'));
      if (s.apiGroup !== RBAC_GROUP) issues.push(fieldIssue.notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    case 'Group':
      if (!name) issues.push(fieldIssue.invalid(`${path}.name`, name, 'group name cannot be empty'));
      if (s.apiGroup !== RBAC_GROUP) issues.push(fieldIssue.notSupported(`${path}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      issues.push(fieldIssue.notSupported(`${path}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return issues;
}

/** ValidateRoleBindingUpdate: `roleRef` may not change (a binding is deleted and made again instead). */
export function validateRoleRefUnchanged(o: KubeObject, old: KubeObject): FieldIssue[] {
  const a = roleRefOf(o);
  const b = roleRefOf(old);
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  // field.Invalid of the internal rbac.RoleRef, which has no String(): Go prints it with %#v.
  const value = `rbac.RoleRef{APIGroup:${goQuote(a.apiGroup ?? '')}, Kind:${goQuote(a.kind ?? '')}, Name:${goQuote(a.name ?? '')}}`;
  return [{ ...fieldIssue.invalid('roleRef', omitValue, `${value}: cannot change roleRef`) }];
}

/** SetDefaults_RoleBinding / _ClusterRoleBinding / _Subject. */
export function defaultBinding(o: KubeObject): void {
  const ref = o.roleRef as RoleRef | undefined;
  if (ref && typeof ref === 'object' && !ref.apiGroup) ref.apiGroup = RBAC_GROUP;
  for (const s of subjectsOf(o)) {
    if (!s || typeof s !== 'object' || s.apiGroup) continue;
    if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  }
}
