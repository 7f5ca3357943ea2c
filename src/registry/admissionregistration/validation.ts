// Validation and defaults of the webhook configurations (pkg/apis/admissionregistration/validation
// and the v1 defaulters): the texts and field paths are upstream's.
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { validateLabelSelector } from '../../apimachinery/validation/objectmeta.js';
import type { Webhook, WebhookConfiguration, WebhookRule } from '../../admission/webhook/types.js';
import { compileExpression } from '../../admission/cel/compile.js';
import { isDNS1035Label, isDNS1123Subdomain, isQualifiedName } from '../../apimachinery/validation/names.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const ALL_SIDE_EFFECTS = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
/** AcceptedAdmissionReviewVersions. */
export const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook / SetDefaults_Rule / SetDefaults_ServiceReference. */
export function defaultWebhooks(o: KubeObjectWithHooks, mutating: boolean): void {
  if (!Array.isArray(o.webhooks)) return;
  for (const h of o.webhooks) {
    if (!h || typeof h !== 'object') continue;
    h.failurePolicy ??= 'Fail';
    h.matchPolicy ??= 'Equivalent';
    h.namespaceSelector ??= {};
    h.objectSelector ??= {};
    h.timeoutSeconds ??= 10;
    if (mutating) h.reinvocationPolicy ??= 'Never';
    if (h.clientConfig?.service) h.clientConfig.service.port ??= 443;
    for (const r of Array.isArray(h.rules) ? h.rules : []) if (r && typeof r === 'object') r.scope ??= '*';
  }
}

type KubeObjectWithHooks = WebhookConfiguration;

export interface ValidationOptions {
  readonly requireNoSideEffects: boolean;
  readonly requireRecognizedAdmissionReviewVersion: boolean;
  readonly requireUniqueWebhookNames: boolean;
}

export const CREATE_OPTIONS: ValidationOptions = { requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true };

/** ValidateValidatingWebhookConfigurationUpdate's options: what the old object already broke stays allowed. */
export function updateOptions(old: WebhookConfiguration): ValidationOptions {
  const hooks = Array.isArray(old.webhooks) ? old.webhooks : [];
  const names = new Set<string>();
  let unique = true;
  for (const h of hooks) {
    if (names.has(h.name ?? '')) unique = false;
    names.add(h.name ?? '');
  }
  return {
    requireNoSideEffects: hooks.every((h) => h.sideEffects !== undefined && NO_SIDE_EFFECTS.includes(h.sideEffects)),
    requireRecognizedAdmissionReviewVersion: hooks.every(
      (h) => !h.admissionReviewVersions?.length || h.admissionReviewVersions.some((v) => ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)),
    ),
    requireUniqueWebhookNames: unique,
  };
}

export function validateWebhookConfiguration(o: WebhookConfiguration, mutating: boolean, opts: ValidationOptions): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const names = new Set<string>();
  const hooks = Array.isArray(o.webhooks) ? o.webhooks : [];
  hooks.forEach((h, i) => {
    const path = `webhooks[${i}]`;
    issues.push(...validateWebhook(h ?? {}, mutating, opts, path));
    issues.push(
      ...validateAdmissionReviewVersions(h?.admissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, `${path}.admissionReviewVersions`),
    );
    const name = h?.name ?? '';
    if (opts.requireUniqueWebhookNames && name) {
      if (names.has(name)) issues.push(fieldIssue.duplicate(`${path}.name`, name));
      else names.add(name);
    }
  });
  return issues;
}

/** validateMatchConditions (webhooks and policies): at most 64, unique names, expressions that compile. */
export function validateMatchConditions(conds: readonly { name?: string; expression?: string }[] | undefined, params: boolean, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const list: readonly { name?: string; expression?: string }[] = Array.isArray(conds) ? conds : [];
  if (list.length > 64) issues.push(fieldIssue.tooMany(path, list.length, 64));
  const names = new Set<string>();
  list.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const expr = (c?.expression ?? '').trim();
    if (!expr) issues.push(fieldIssue.required(`${p}.expression`, ''));
    else {
      const r = compileExpression(expr, 'bool', { params, variables: false });
      if ('error' in r) issues.push(fieldIssue.invalid(`${p}.expression`, expr, r.error));
    }
    const name = c?.name ?? '';
    if (!name) issues.push(fieldIssue.required(`${p}.name`, ''));
    else for (const msg of isQualifiedName(name)) issues.push(fieldIssue.invalid(`${p}.name`, name, msg));
    if (name) {
      if (names.has(name)) issues.push(fieldIssue.duplicate(`${p}.name`, name));
      else names.add(name);
    }
  });
  return issues;
}

function validateWebhook(h: Webhook, mutating: boolean, opts: ValidationOptions, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [...isFullyQualifiedName(`${path}.name`, h.name ?? '')];
  (h.rules ?? []).forEach((r, i) => issues.push(...validateRuleWithOperations(r ?? {}, `${path}.rules[${i}]`)));
  if (h.failurePolicy !== undefined && !FAILURE_POLICIES.includes(h.failurePolicy))
    issues.push(fieldIssue.notSupported(`${path}.failurePolicy`, h.failurePolicy, FAILURE_POLICIES));
  if (h.matchPolicy !== undefined && !MATCH_POLICIES.includes(h.matchPolicy))
    issues.push(fieldIssue.notSupported(`${path}.matchPolicy`, h.matchPolicy, MATCH_POLICIES));
  const allowed = opts.requireNoSideEffects ? NO_SIDE_EFFECTS : ALL_SIDE_EFFECTS;
  if (h.sideEffects === undefined || h.sideEffects === null)
    issues.push(fieldIssue.required(`${path}.sideEffects`, `must specify one of ${allowed.join(', ')}`));
  else if (!allowed.includes(h.sideEffects)) issues.push(fieldIssue.notSupported(`${path}.sideEffects`, h.sideEffects, allowed));
  if (h.timeoutSeconds !== undefined && (h.timeoutSeconds > 30 || h.timeoutSeconds < 1)) {
    issues.push(fieldIssue.invalid(`${path}.timeoutSeconds`, h.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  if (h.namespaceSelector) issues.push(...validateLabelSelector(h.namespaceSelector, `${path}.namespaceSelector`));
  issues.push(...validateMatchConditions(h.matchConditions as { name?: string; expression?: string }[] | undefined, false, `${path}.matchConditions`));
  if (h.objectSelector) issues.push(...validateLabelSelector(h.objectSelector, `${path}.objectSelector`));
  if (mutating && h.reinvocationPolicy !== undefined && !REINVOCATION_POLICIES.includes(h.reinvocationPolicy)) {
    issues.push(fieldIssue.notSupported(`${path}.reinvocationPolicy`, h.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  const cc = h.clientConfig ?? {};
  const hasURL = cc.url !== undefined && cc.url !== null;
  const hasService = cc.service !== undefined && cc.service !== null;
  if (hasURL === hasService) issues.push(fieldIssue.required(`${path}.clientConfig`, 'exactly one of url or service is required'));
  else if (hasURL) issues.push(...validateWebhookURL(`${path}.clientConfig.url`, cc.url!));
  else issues.push(...validateWebhookService(`${path}.clientConfig.service`, cc.service!));
  return issues;
}

/** utilvalidation.IsFullyQualifiedName. */
function isFullyQualifiedName(path: string, name: string): FieldIssue[] {
  if (!name) return [fieldIssue.required(path, '')];
  const errs = isDNS1123Subdomain(name);
  if (errs.length) return [fieldIssue.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [fieldIssue.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

export function validateRuleWithOperations(r: WebhookRule, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ops = r.operations ?? [];
  if (ops.length === 0) issues.push(fieldIssue.required(`${path}.operations`, ''));
  if (ops.length > 1 && ops.includes('*')) issues.push(fieldIssue.invalid(`${path}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) issues.push(fieldIssue.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = r.apiGroups ?? [];
  if (groups.length === 0) issues.push(fieldIssue.required(`${path}.apiGroups`, ''));
  if (groups.length > 1 && groups.includes('*'))
    issues.push(fieldIssue.invalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions = r.apiVersions ?? [];
  if (versions.length === 0) issues.push(fieldIssue.required(`${path}.apiVersions`, ''));
  if (versions.length > 1 && versions.includes('*'))
    issues.push(fieldIssue.invalid(`${path}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') issues.push(fieldIssue.required(`${path}.apiVersions[${i}]`, ''));
  });
  issues.push(...validateResources(r.resources ?? [], `${path}.resources`));
  if (r.scope !== undefined && !SCOPES.includes(r.scope)) issues.push(fieldIssue.notSupported(`${path}.scope`, r.scope, SCOPES));
  return issues;
}

function validateResources(resources: string[], path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (resources.length === 0) issues.push(fieldIssue.required(path, ''));
  const resWithWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((rs, i) => {
    if (rs === '') {
      issues.push(fieldIssue.required(`${path}[${i}]`, ''));
      return;
    }
    if (rs === '*/*') doubleWildcard = true;
    if (rs === '*') singleWildcard = true;
    const slash = rs.indexOf('/');
    if (slash < 0) {
      withoutSub = rs !== '*';
      return;
    }
    const res = rs.slice(0, slash);
    const sub = rs.slice(slash + 1);
    if (resWithWildcardSub.has(res)) issues.push(fieldIssue.invalid(`${path}[${i}]`, rs, `if '${res}/*' is present, must not specify ${rs}`));
    if (subWithWildcardRes.has(sub)) issues.push(fieldIssue.invalid(`${path}[${i}]`, rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') resWithWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) issues.push(fieldIssue.invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    issues.push(fieldIssue.invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return issues;
}

function validateAdmissionReviewVersions(versions: string[] | undefined, requireRecognized: boolean, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!versions || versions.length < 1) return [fieldIssue.required(path, `must specify one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ')}`)];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      issues.push(fieldIssue.invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const msg of isDNS1035Label(v)) issues.push(fieldIssue.invalid(`${path}[${i}]`, v, msg));
    if (ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted)
    issues.push(fieldIssue.invalid(path, versions, `must include at least one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ')}`));
  return issues;
}

const URL_FORM = '; desired format: https://host[/path]';

/** webhook.ValidateWebhookURL with forceHttps. */
export function validateWebhookURL(path: string, raw: string): FieldIssue[] {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [fieldIssue.required(path, `url must be a valid URL: parse ${JSON.stringify(raw)}: invalid URI for request${URL_FORM}`)];
  }
  const issues: FieldIssue[] = [];
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 'https') issues.push(fieldIssue.invalid(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (!u.host) issues.push(fieldIssue.invalid(path, u.host, `host must be specified${URL_FORM}`));
  if (u.username || u.password)
    issues.push(fieldIssue.invalid(path, u.password ? `${u.username}:${u.password}` : u.username, 'user information is not permitted in the URL'));
  if (u.hash.length > 1 || raw.includes('#')) {
    const frag = u.hash.slice(1);
    if (frag) issues.push(fieldIssue.invalid(path, decodeURIComponent(frag), 'fragments are not permitted in the URL'));
  }
  if (u.search.length > 1) issues.push(fieldIssue.invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return issues;
}

/** webhook.ValidateWebhookService. */
export function validateWebhookService(path: string, svc: { namespace?: string; name?: string; path?: string; port?: number }): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!svc.name) issues.push(fieldIssue.required(`${path}.name`, ''));
  if (!svc.namespace) issues.push(fieldIssue.required(`${path}.namespace`, ''));
  const port = svc.port ?? 443;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    issues.push(fieldIssue.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (svc.path === undefined) return issues;
  const p = svc.path;
  if (p === '/') return issues;
  if (!p.startsWith('/')) {
    issues.push(fieldIssue.invalid(`${path}.path`, p, "must start with a '/'"));
    return issues;
  }
  const steps = p.slice(1).split('/');
  steps.forEach((step, i) => {
    if (step === '') issues.push(fieldIssue.invalid(`${path}.path`, p, `segment[${i}] may not be empty`));
    else {
      const errs = isDNS1123Subdomain(step);
      if (errs.length) issues.push(fieldIssue.invalid(`${path}.path`, p, `segment[${i}]: ${errs.join(', ')}`));
    }
  });
  return issues;
}
