// Validation and defaults of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
// (pkg/apis/admissionregistration/validation, the v1 defaulters): texts and field paths are
// upstream's, including the binding's `spec.matchResouces` spelling. Expressions are compiled with
// admission's CEL environment: what does not compile is a 422 at the expression's path.
//
// As upstream, a policy's expressions are not refused for their estimated cost: the per-call cost
// limit and the request's budget stop them when they run.
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { isDNS1035Label, isDNS1123Subdomain, isPathSegmentName, isQualifiedName } from '../../apimachinery/validation/names.js';
import { validateLabelSelector } from '../../apimachinery/validation/objectmeta.js';
import { compileExpression, type Declarations } from '../../admission/cel/compile.js';
import type { MatchResources, ParamKind, ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from '../../admission/policy/types.js';
import { validateMatchConditions, validateRuleWithOperations } from './validation.js';
import { CEL_RESERVED_WORDS } from '../../apimachinery/cel/expressions.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH = 5 * 1024;

export function defaultMatchResources(m: MatchResources | undefined): void {
  if (!m || typeof m !== 'object') return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const list of [m.resourceRules, m.excludeResourceRules])
    for (const r of Array.isArray(list) ? list : []) if (r && typeof r === 'object') r.scope ??= '*';
}

/** SetDefaults_ValidatingAdmissionPolicySpec and SetDefaults_MatchResources. */
export function defaultPolicy(o: ValidatingAdmissionPolicy): void {
  if (!o.spec || typeof o.spec !== 'object') return;
  o.spec.failurePolicy ??= 'Fail';
  defaultMatchResources(o.spec.matchConstraints);
}

/** SetDefaults_MatchResources on the binding's matchResources. */
export function defaultBinding(o: ValidatingAdmissionPolicyBinding): void {
  if (!o.spec || typeof o.spec !== 'object') return;
  defaultMatchResources(o.spec.matchResources);
}

function compileIssue(path: string, expression: string, want: 'bool' | 'string' | 'any', d: Declarations): FieldIssue[] {
  const r = compileExpression(expression, want, d);
  return 'error' in r ? [fieldIssue.invalid(path, expression, r.error)] : [];
}

export function validateParamKind(pk: ParamKind, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const av = pk.apiVersion ?? '';
  if (!av) issues.push(fieldIssue.required(`${path}.apiVersion`, ''));
  else {
    const slashes = av.split('/').length - 1;
    if (slashes > 1) issues.push(fieldIssue.invalid(`${path}.apiVersion`, av, `unexpected GroupVersion string: ${av}`));
    else {
      const [group, version] = slashes === 1 ? (av.split('/') as [string, string]) : ['', av];
      if (group) {
        const errs = isDNS1123Subdomain(group);
        if (errs.length) issues.push(fieldIssue.invalid(`${path}.apiVersion`, group, errs.join(',')));
      }
      if (!version) issues.push(fieldIssue.invalid(`${path}.apiVersion`, av, 'version must be specified'));
      else {
        const errs = isDNS1035Label(version);
        if (errs.length) issues.push(fieldIssue.invalid(`${path}.apiVersion`, version, errs.join(',')));
      }
    }
  }
  const kind = pk.kind ?? '';
  if (!kind) issues.push(fieldIssue.required(`${path}.kind`, ''));
  else {
    const errs = isDNS1035Label(kind.toLowerCase());
    if (errs.length) issues.push(fieldIssue.invalid(`${path}.kind`, kind, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
  }
  return issues;
}

export function validateMatchResources(m: MatchResources, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (m.matchPolicy === undefined) issues.push(fieldIssue.required(`${path}.matchPolicy`, ''));
  else if (!MATCH_POLICIES.includes(m.matchPolicy)) issues.push(fieldIssue.notSupported(`${path}.matchPolicy`, m.matchPolicy, MATCH_POLICIES));
  if (!m.namespaceSelector) issues.push(fieldIssue.required(`${path}.namespaceSelector`, ''));
  else issues.push(...validateLabelSelector(m.namespaceSelector, `${path}.namespaceSelector`));
  if (!m.objectSelector) issues.push(fieldIssue.required(`${path}.objectSelector`, ''));
  else issues.push(...validateLabelSelector(m.objectSelector, `${path}.objectSelector`));
  for (const [field, list] of [
    ['resourceRules', m.resourceRules],
    ['excludeResourceRules', m.excludeResourceRules],
  ] as const) {
    (Array.isArray(list) ? list : []).forEach((r, i) => {
      const p = `${path}.${field}[${i}]`;
      const seen = new Set<string>();
      (r?.resourceNames ?? []).forEach((n, j) => {
        for (const msg of isPathSegmentName(n)) issues.push(fieldIssue.invalid(`${p}.resourceNames[${j}]`, n, msg));
        if (seen.has(n)) issues.push(fieldIssue.duplicate(`${p}.resourceNames[${j}]`, n));
        else seen.add(n);
      });
      issues.push(...validateRuleWithOperations(r ?? {}, p));
    });
  }
  return issues;
}

const hasNewlines = (s: string): boolean => /[\n\r]/.test(s);

/** validateValidatingAdmissionPolicy (create and update). */
export function validatePolicy(o: ValidatingAdmissionPolicy): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = o.spec ?? {};
  const params = spec.paramKind !== undefined && spec.paramKind !== null;
  const variables = Array.isArray(spec.variables) && spec.variables.length > 0;
  const decl: Declarations = { params, variables };
  if (spec.failurePolicy === undefined) issues.push(fieldIssue.required('spec.failurePolicy', ''));
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy)) issues.push(fieldIssue.notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  if (params) issues.push(...validateParamKind(spec.paramKind!, 'spec.paramKind'));
  if (!spec.matchConstraints) issues.push(fieldIssue.required('spec.matchConstraints', ''));
  else {
    issues.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'));
    if (!spec.matchConstraints.resourceRules?.length) issues.push(fieldIssue.required('spec.matchConstraints.resourceRules', ''));
  }
  issues.push(...validateMatchConditions(spec.matchConditions, params, 'spec.matchConditions'));
  (spec.variables ?? []).forEach((v, i) => {
    const p = `spec.variables[${i}]`;
    const name = v?.name ?? '';
    if (!name.trim()) issues.push(fieldIssue.required(`${p}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) || CEL_RESERVED_WORDS.has(name))
      issues.push(fieldIssue.invalid(`${p}.name`, name, 'name is not a valid CEL identifier'));
    const expr = v?.expression ?? '';
    if (!expr.trim()) issues.push(fieldIssue.required(`${p}.expression`, 'expression is not specified'));
    else issues.push(...compileIssue(`${p}.expression`, expr, 'any', decl));
  });
  const validations = Array.isArray(spec.validations) ? spec.validations : [];
  const audits = Array.isArray(spec.auditAnnotations) ? spec.auditAnnotations : [];
  if (validations.length === 0 && audits.length === 0) {
    issues.push(fieldIssue.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    issues.push(fieldIssue.required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
    return issues;
  }
  validations.forEach((v, i) => {
    const p = `spec.validations[${i}]`;
    const expr = v?.expression ?? '';
    if (!expr.trim()) issues.push(fieldIssue.required(`${p}.expression`, 'expression is not specified'));
    else issues.push(...compileIssue(`${p}.expression`, expr, 'bool', decl));
    const me = v?.messageExpression;
    if (me !== undefined && me.length > 0 && !me.trim()) issues.push(fieldIssue.invalid(`${p}.messageExpression`, me, 'must be non-empty if specified'));
    else if (me?.trim()) issues.push(...compileIssue(`${p}.messageExpression`, me, 'string', { params, variables }));
    const msg = v?.message;
    if (msg !== undefined && msg.length > 0 && !msg.trim()) issues.push(fieldIssue.invalid(`${p}.message`, msg, 'message must be non-empty if specified'));
    else if (msg && hasNewlines(msg.trim())) issues.push(fieldIssue.invalid(`${p}.message`, msg, 'message must not contain line breaks'));
    if (v?.reason !== undefined && !REASONS.includes(v.reason)) issues.push(fieldIssue.notSupported(`${p}.reason`, v.reason, REASONS));
  });
  if (audits.length > MAX_AUDIT_ANNOTATIONS)
    issues.push(fieldIssue.invalid('spec.auditAnnotations', audits, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const keys = new Set<string>();
  audits.forEach((a, i) => {
    const p = `spec.auditAnnotations[${i}]`;
    const name = o.metadata?.name ?? '';
    if (name) for (const m of isQualifiedName(`${name}/${a?.key ?? ''}`)) issues.push(fieldIssue.invalid(`${p}.key`, `${name}/${a?.key ?? ''}`, m));
    else issues.push(fieldIssue.invalid(`${p}.key`, a?.key ?? '', 'requires metadata.name be non-empty'));
    const ve = (a?.valueExpression ?? '').trim();
    if (!ve) issues.push(fieldIssue.required(`${p}.valueExpression`, 'valueExpression is not specified'));
    else if (ve.length > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH)
      issues.push(fieldIssue.required(`${p}.valueExpression`, `must not exceed ${MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_LENGTH} bytes in length`));
    else {
      const r = compileExpression(ve, 'any', decl);
      if ('error' in r) issues.push(fieldIssue.invalid(`${p}.valueExpression`, a?.valueExpression, r.error));
    }
    if (keys.has(a?.key ?? '')) issues.push(fieldIssue.duplicate(`${p}.key`, a?.key));
    keys.add(a?.key ?? '');
  });
  return issues;
}

export function validateParamRef(pr: ParamRef, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (pr.name) {
    for (const msg of isPathSegmentName(pr.name)) issues.push(fieldIssue.invalid(`${path}.name`, pr.name, msg));
    if (pr.selector) issues.push(fieldIssue.forbidden(`${path}.name`, 'name and selector are mutually exclusive'));
  }
  if (pr.selector) {
    issues.push(...validateLabelSelector(pr.selector, `${path}.selector`));
    if (pr.name) issues.push(fieldIssue.forbidden(`${path}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!pr.name && !pr.selector) issues.push(fieldIssue.required(path, 'one of name or selector must be specified'));
  if (!pr.parameterNotFoundAction) issues.push(fieldIssue.required(`${path}.parameterNotFoundAction`, ''));
  else if (pr.parameterNotFoundAction !== 'Deny' && pr.parameterNotFoundAction !== 'Allow')
    issues.push(fieldIssue.notSupported(`${path}.parameterNotFoundAction`, pr.parameterNotFoundAction, ['Deny', 'Allow']));
  return issues;
}

/** validateValidatingAdmissionPolicyBinding (create and update). */
export function validateBinding(o: ValidatingAdmissionPolicyBinding): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = o.spec ?? {};
  if (!spec.policyName) issues.push(fieldIssue.required('spec.policyName', ''));
  else for (const msg of isDNS1123Subdomain(spec.policyName)) issues.push(fieldIssue.invalid('spec.policyName', spec.policyName, msg));
  if (spec.paramRef) issues.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  if (spec.matchResources) issues.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!VALIDATION_ACTIONS.includes(a)) issues.push(fieldIssue.notSupported(`spec.validationActions[${i}]`, a, VALIDATION_ACTIONS));
    if (seen.has(a)) issues.push(fieldIssue.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    issues.push(
      fieldIssue.invalid(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) issues.push(fieldIssue.required('spec.validationActions', 'at least one validation action is required'));
  return issues;
}
