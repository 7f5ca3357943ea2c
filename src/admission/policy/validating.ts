// The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver/pkg/admission/plugin/policy/validating):
// bindings select policies; a policy whose matchConstraints, binding matchResources and
// matchConditions all match the request has its validations evaluated (once per parameter object),
// and each failure is acted on as the binding's validationActions say: Deny refuses the request with
// the policy's message and reason, Warn adds a warning, Audit adds the
// `validation.policy.admission.k8s.io/validation_failure` audit annotation. Errors (a param not
// found with Deny, an expression that fails) follow the policy's failurePolicy.
import { StatusError } from '../../apimachinery/errors.js';
import { EVERYTHING, isEmptySelector, matchesLabels, tryLabelSelectorFromObject, type LabelSelector } from '../../apimachinery/labels.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { RUNTIME_CEL_COST_BUDGET, MAX_MESSAGE_EXPRESSION_BYTES } from '../../apimachinery/cel/expressions.js';
import { ALLOW_ALL, authorizerFor, Checks, type CheckAuthorizer } from '../cel/authz.js';
import {
  OutOfBudget,
  admissionRequest,
  compileExpression,
  evaluateExpression,
  lazyVariables,
  namespaceObject,
  toCEL,
  type Activation,
  type Compiled,
  type Declarations,
} from '../cel/compile.js';
import {
  compileMatchConditions,
  matchConditionMetrics,
  matchConditions,
  settledObserving,
  type CompiledMatchConditions,
  type MatchConditionObserver,
} from '../cel/matchconditions.js';
import { unlessIdle } from '../chain.js';
import { convertFor, equivalentMatch, type Converted } from '../equivalent.js';
import type { AdmissionAttributes, AdmissionPlugin, EquivalentResources, EquivalentVersion } from '../interfaces.js';
import { isExemptAdmissionConfigurationResource, isNamespaceResource, ruleMatches } from '../webhook/rules.js';
import type { MatchResources, NamedRuleWithOperations, ParamKind, ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './types.js';

export interface CompiledMatch {
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly resourceRules: readonly NamedRuleWithOperations[];
  readonly excludeResourceRules: readonly NamedRuleWithOperations[];
  /** matchPolicy Equivalent (the registry's default): the rules also match other versions of the resource. */
  readonly equivalent: boolean;
}

interface CompiledValidation {
  readonly expression: string;
  readonly message?: string;
  readonly reason?: string;
  readonly compiled: Compiled;
  readonly messageCompiled?: Compiled;
}

export interface CompiledBinding {
  readonly name: string;
  readonly match?: CompiledMatch;
  readonly paramRef?: ParamRef;
  readonly actions: readonly string[];
}

export interface CompiledPolicy {
  readonly name: string;
  readonly failOpen: boolean;
  readonly paramKind?: ParamKind;
  readonly constraints: CompiledMatch;
  readonly matchConditions?: CompiledMatchConditions;
  readonly variables: ReadonlyMap<string, Compiled>;
  readonly validations: readonly CompiledValidation[];
  readonly auditAnnotations: readonly { readonly key: string; readonly compiled: Compiled; readonly expression: string }[];
  readonly bindings: readonly CompiledBinding[];
}

/** Where the plugin reads the current policies with their bindings (an informer's cache, never storage per request). */
export interface PolicySource {
  policies(): readonly CompiledPolicy[];
}

/** The parameter objects of a binding: by name, or every one matching a selector; [] when none. */
export type ParamLookup = (
  paramKind: ParamKind,
  namespace: string | undefined,
  ref: { readonly name?: string; readonly selector?: LabelSelector },
) => Promise<{ readonly namespaced: boolean; readonly items: readonly KubeObject[] } | { readonly error: string }>;

/** A namespace object, or undefined when there is no such namespace. */
export type NamespaceLookup = (name: string) => Promise<KubeObject | undefined>;

/** apiserver_validating_admission_policy_check_total (and its duration): one per decision acted on. */
export type PolicyCheckObserver = (
  policy: string,
  binding: string,
  enforcement: 'deny' | 'warn' | 'audit' | 'allow',
  errorType: string,
  seconds: number,
) => void;

export interface PolicyPluginOptions {
  readonly source: PolicySource;
  readonly namespace: NamespaceLookup;
  readonly params: ParamLookup;
  readonly observe?: PolicyCheckObserver;
  /** Without it, `matchPolicy: Equivalent` matches as `Exact`. */
  readonly equivalents?: EquivalentResources;
  /** What `authorizer` checks ask; without it every check is allowed (AlwaysAllow). */
  readonly authorizer?: CheckAuthorizer;
  /** matchConditions' evaluation errors and time (upstream's admission metrics, kind `policy`, type `validate`). */
  readonly observeMatchCondition?: MatchConditionObserver;
}

export function compileMatch(m: MatchResources | undefined): CompiledMatch | undefined {
  if (!m) return undefined;
  const sel = (s: MatchResources['namespaceSelector']): LabelSelector => {
    if (!s) return EVERYTHING;
    const r = tryLabelSelectorFromObject(s);
    return r.ok ? r.selector : { requirements: [], matchesNothing: true };
  };
  return {
    namespaceSelector: sel(m.namespaceSelector),
    objectSelector: sel(m.objectSelector),
    resourceRules: m.resourceRules ?? [],
    excludeResourceRules: m.excludeResourceRules ?? [],
    equivalent: m.matchPolicy === 'Equivalent',
  };
}

/** Compiles the policies with their bindings (sorted by name, as upstream's policy source). */
export function compilePolicies(policies: readonly ValidatingAdmissionPolicy[], bindings: readonly ValidatingAdmissionPolicyBinding[]): CompiledPolicy[] {
  const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
  for (const b of bindings) {
    const p = b.spec?.policyName ?? '';
    let l = byPolicy.get(p);
    if (!l) byPolicy.set(p, (l = []));
    l.push(b);
  }
  const out: CompiledPolicy[] = [];
  const byName = (a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }): number =>
    (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
  for (const p of [...policies].sort(byName)) {
    const name = p.metadata?.name ?? '';
    const bs = byPolicy.get(name);
    if (!bs?.length) continue; // a policy without bindings does nothing
    const spec = p.spec ?? {};
    const params = spec.paramKind !== undefined && spec.paramKind !== null;
    const decl: Declarations = { params, variables: (spec.variables?.length ?? 0) > 0 };
    const variables = new Map<string, Compiled>();
    for (const v of spec.variables ?? []) variables.set(v.name ?? '', compileExpression(v.expression ?? '', 'any', decl));
    const conditions = compileMatchConditions(spec.matchConditions, spec.failurePolicy, { params, variables: false });
    out.push({
      name,
      failOpen: spec.failurePolicy === 'Ignore',
      ...(params ? { paramKind: spec.paramKind! } : {}),
      constraints: compileMatch(spec.matchConstraints) ?? compileMatch({})!,
      ...(conditions ? { matchConditions: conditions } : {}),
      variables,
      validations: (spec.validations ?? []).map((v) => ({
        expression: v.expression ?? '',
        ...(v.message !== undefined ? { message: v.message } : {}),
        ...(v.reason !== undefined ? { reason: v.reason } : {}),
        compiled: compileExpression(v.expression ?? '', 'bool', decl),
        ...(v.messageExpression?.trim() ? { messageCompiled: compileExpression(v.messageExpression, 'string', decl) } : {}),
      })),
      auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({
        key: a.key ?? '',
        expression: a.valueExpression ?? '',
        compiled: compileExpression((a.valueExpression ?? '').trim(), 'any', decl),
      })),
      bindings: [...bs].sort(byName).map((b) => {
        const m = compileMatch(b.spec?.matchResources);
        return {
          name: b.metadata?.name ?? '',
          ...(m ? { match: m } : {}),
          ...(b.spec?.paramRef ? { paramRef: b.spec.paramRef } : {}),
          actions: b.spec?.validationActions ?? [],
        };
      }),
    });
  }
  return out;
}

function namedRuleMatches(r: NamedRuleWithOperations, a: AdmissionAttributes): boolean {
  if (!ruleMatches(r, a)) return false;
  return !r.resourceNames?.length || r.resourceNames.includes(a.name);
}

/**
 * matching.Matches: namespace selector, object selector, excludeResourceRules, resourceRules. Under
 * matchPolicy Equivalent a rule also matches the resource's other versions (`eq`): the answer is then
 * the version that matched, which the policy sees the request in.
 */
export async function matches(
  m: CompiledMatch,
  a: AdmissionAttributes,
  ns: () => Promise<KubeObject | undefined>,
  eq?: EquivalentResources,
): Promise<boolean | EquivalentVersion | { error: string }> {
  if (!isEmptySelector(m.namespaceSelector) && (a.namespace !== '' || isNamespaceResource(a))) {
    if (m.namespaceSelector.matchesNothing) return false;
    let labels: Readonly<Record<string, string>> | undefined;
    if (isNamespaceResource(a)) labels = (a.object ?? a.oldObject)?.metadata?.labels ?? {};
    else {
      const o = await ns();
      if (!o) return { error: `namespace "${a.namespace}" not found` };
      labels = o.metadata?.labels ?? {};
    }
    if (!matchesLabels(m.namespaceSelector, labels)) return false;
  }
  if (!isEmptySelector(m.objectSelector)) {
    const l = (o: KubeObject | undefined): boolean => o !== undefined && matchesLabels(m.objectSelector, o.metadata?.labels ?? {});
    if (!(l(a.object) || l(a.oldObject))) return false;
  }
  const fuzzy = m.equivalent ? eq : undefined;
  if (matchesRules(m.excludeResourceRules, a, fuzzy)) return false;
  if (!m.resourceRules.length) return true;
  return matchesRules(m.resourceRules, a, fuzzy);
}

/** matchesResourceRules: true for the request's own version, else the equivalent version a rule matches, else false. */
function matchesRules(rules: readonly NamedRuleWithOperations[], a: AdmissionAttributes, eq: EquivalentResources | undefined): boolean | EquivalentVersion {
  if (rules.some((r) => namedRuleMatches(r, a))) return true;
  return (eq && equivalentMatch(rules, a, eq, namedRuleMatches)) ?? false;
}

interface Denial {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
  readonly reason?: string;
}

/** reasonToCode. */
function reasonToCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}

/** admission.NewForbidden with the decision's reason and code, as the dispatcher answers. */
function denialError(a: AdmissionAttributes, d: Denial): StatusError {
  const message = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const gr = { group: a.resource.group, resource: a.resource.resource };
  let name = a.name;
  if (!name) name = a.object?.metadata?.name || a.object?.metadata?.generateName || 'Unknown';
  const qualified = gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
  const reason = d.reason || 'Invalid';
  return new StatusError({
    message: `${qualified} "${name}" is forbidden: ${message}`,
    reason: reason as StatusError['status']['reason'],
    details: { name, ...(gr.group ? { group: gr.group } : {}), kind: gr.resource, causes: [{ message }] },
    code: reasonToCode(reason),
  });
}

type Decision = { action: 'admit' } | { action: 'deny'; message: string; reason?: string; evalError: boolean; elapsed: number };

const errorType = (d: Extract<Decision, { action: 'deny' }>): string =>
  !d.evalError
    ? 'invalid_error'
    : d.message.startsWith('compilation')
      ? 'compile_error'
      : d.message.startsWith('validation failed due to running out of cost budget')
        ? 'out_of_budget'
        : 'invalid_error';

/** validator.Validate for one parameter: matchConditions, then every validation. */
function validateOne(
  p: CompiledPolicy,
  vars: Record<string, unknown>,
  deadline: number,
  operation: string,
  observer: MatchConditionObserver | undefined,
): { decisions: Decision[]; audits: { key: string; value: string }[]; auditErrors: string[] } {
  const fail = (message: string): Decision[] => (p.failOpen ? [] : [{ action: 'deny', message, evalError: true, elapsed: 0 }]);
  if (p.matchConditions) {
    const metrics = matchConditionMetrics(observer, { name: p.name, kind: 'policy', type: 'validate', operation });
    const r = matchConditions(p.matchConditions, vars, deadline, metrics);
    if ('error' in r) return { decisions: fail(r.error), audits: [], auditErrors: [] };
    if (!r.matches) return { decisions: [], audits: [], auditErrors: [] };
  }
  const act: Activation = { vars, remaining: RUNTIME_CEL_COST_BUDGET, deadline };
  if (p.variables.size) vars.variables = lazyVariables(p.variables, () => act);
  const decisions: Decision[] = [];
  try {
    for (const v of p.validations) {
      const started = performance.now();
      if ('error' in v.compiled) {
        decisions.push(...fail(`compilation error: ${v.compiled.error}`));
        continue;
      }
      const r = evaluateExpression(v.compiled, act);
      const elapsed = (performance.now() - started) / 1000;
      if ('error' in r) {
        decisions.push(...fail(r.error));
        continue;
      }
      if (r.value === true) {
        decisions.push({ action: 'admit' });
        continue;
      }
      let message = '';
      if (v.messageCompiled && 'program' in v.messageCompiled) {
        const m = evaluateExpression(v.messageCompiled, act);
        if ('value' in m && typeof m.value === 'string') {
          message = m.value.trim();
          if (Buffer.byteLength(message) > MAX_MESSAGE_EXPRESSION_BYTES || /\n/.test(message)) message = '';
        }
      }
      if (!message && v.message) message = v.message.trim();
      if (!message) message = `failed expression: ${v.expression.trim()}`;
      decisions.push({ action: 'deny', message, reason: v.reason ?? 'Invalid', evalError: false, elapsed });
    }
  } catch (e) {
    if (!(e instanceof OutOfBudget)) throw e;
    decisions.push(...fail(e.message));
    return { decisions, audits: [], auditErrors: [] };
  }
  const audits: { key: string; value: string }[] = [];
  const auditErrors: string[] = [];
  const auditAct: Activation = { vars, remaining: RUNTIME_CEL_COST_BUDGET, deadline };
  for (const an of p.auditAnnotations) {
    if ('error' in an.compiled) {
      if (!p.failOpen) auditErrors.push(`compilation error: ${an.compiled.error}`);
      continue;
    }
    let r;
    try {
      r = evaluateExpression(an.compiled, auditAct);
    } catch (e) {
      if (!(e instanceof OutOfBudget)) throw e;
      if (!p.failOpen) auditErrors.push(e.message);
      break;
    }
    if ('error' in r) {
      if (!p.failOpen) auditErrors.push(r.error);
    } else if (typeof r.value === 'string') {
      const value = r.value.trim();
      if (value) audits.push({ key: an.key, value: value.slice(0, 10 * 1024) });
    } else if (r.value !== null) {
      auditErrors.push(
        `valueExpression '${an.expression}' resulted in unsupported return type: ${typeof r.value === 'boolean' ? 'bool' : typeof r.value === 'bigint' ? 'int' : typeof r.value === 'number' ? 'double' : 'dyn'}. Return type must be either string or null.`,
      );
    }
  }
  return { decisions, audits, auditErrors };
}

/** The CEL variables of a request (its objects as the policy sees them; `as`: the equivalent version matched). */
function celBase(
  a: AdmissionAttributes,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
  as: EquivalentVersion | undefined,
  ns: unknown,
  checks: Checks,
): Record<string, unknown> {
  return {
    object: toCEL(object ?? null),
    oldObject: toCEL(oldObject ?? null),
    request: toCEL(admissionRequest(a, as)),
    namespaceObject: ns,
    authorizer: authorizerFor(a, checks),
  };
}

/** `namespaceObject`: the request's namespace, for a namespaced resource. */
async function nsVar(a: AdmissionAttributes, ns: () => Promise<KubeObject | undefined>): Promise<unknown> {
  return a.namespace && !isNamespaceResource(a) ? toCEL(namespaceObject(await ns())) : null;
}

/**
 * The CEL variables with the objects converted to the equivalent version `as`, or why they could
 * not be (a configuration error of the policy, as upstream's `failed to convert object version`).
 */
async function equivalentBase(
  eq: EquivalentResources,
  a: AdmissionAttributes,
  as: EquivalentVersion,
  ns: () => Promise<KubeObject | undefined>,
  checks: Checks,
): Promise<{ readonly vars: Record<string, unknown> } | { readonly error: string }> {
  let versioned: Converted;
  try {
    versioned = await convertFor(eq, a, as);
  } catch (e) {
    return { error: `failed to convert object version: ${e instanceof Error ? e.message : String(e)}` };
  }
  return { vars: celBase(a, versioned.object, versioned.oldObject, as, await nsVar(a, ns), checks) };
}

/** The plugin. */
export function validatingAdmissionPolicyPlugin(opts: PolicyPluginOptions): AdmissionPlugin {
  // Answered at once, without a promise, when there is no policy (or the resource is exempt).
  return unlessIdle((a) => isExemptAdmissionConfigurationResource(a) || opts.source.policies().length === 0, {
    name: 'ValidatingAdmissionPolicy',
    async validate(a) {
      if (isExemptAdmissionConfigurationResource(a)) return;
      const policies = opts.source.policies();
      if (policies.length === 0) return;
      let nsCache: Promise<KubeObject | undefined> | undefined;
      const ns = (): Promise<KubeObject | undefined> => (nsCache ??= a.namespace ? opts.namespace(a.namespace) : Promise.resolve(undefined));
      const denials: Denial[] = [];
      const failures: { message: string; policy: string; binding: string; expressionIndex: number; validationActions: readonly string[] }[] = [];
      const configError = (p: CompiledPolicy, binding: string | undefined, err: string): void => {
        if (p.failOpen) return;
        denials.push({
          policy: p.name,
          ...(binding !== undefined ? { binding } : {}),
          message: binding !== undefined ? `failed to configure binding: ${err}` : `failed to configure policy: ${err}`,
        });
      };
      // The variables the policies see the request through: in its own version, or (matchPolicy
      // Equivalent) in each equivalent version a policy matched.
      let base: Record<string, unknown> | undefined;
      // The `authorizer` checks of every expression evaluated for this request, with their answers.
      const checks = new Checks(opts.authorizer ?? ALLOW_ALL);
      let equivalentBases: Map<string, { readonly vars: Record<string, unknown> } | { readonly error: string }> | undefined;
      for (const p of policies) {
        const m = await matches(p.constraints, a, ns, opts.equivalents);
        if (typeof m === 'object' && 'error' in m) {
          configError(p, undefined, m.error);
          continue;
        }
        if (m === false) continue;
        // Matched through another version of the resource: the policy sees the request in that version.
        const as = m === true ? undefined : m;
        // The objects in that version, converted once per version (a failure too); a failed
        // conversion is the policy's configuration error (its failurePolicy decides), as upstream.
        let asVars: Record<string, unknown> | undefined;
        if (as && opts.equivalents) {
          equivalentBases ??= new Map();
          let converted = equivalentBases.get(as.version);
          if (!converted) {
            converted = await equivalentBase(opts.equivalents, a, as, ns, checks);
            equivalentBases.set(as.version, converted);
          }
          if ('error' in converted) {
            configError(p, undefined, converted.error);
            continue;
          }
          asVars = converted.vars;
        }
        const annotations = new Map<string, string[]>();
        for (const b of p.bindings) {
          if (b.match) {
            const bm = await matches(b.match, a, ns, opts.equivalents);
            if (typeof bm === 'object' && 'error' in bm) {
              configError(p, b.name, bm.error);
              continue;
            }
            if (bm === false) continue;
          }
          const params = await collectParams(p, b, a, opts.params);
          if ('error' in params) {
            configError(p, b.name, params.error);
            continue;
          }
          let vars0: Record<string, unknown>;
          if (asVars) vars0 = asVars;
          else {
            base ??= celBase(a, a.object, a.oldObject, undefined, await nsVar(a, ns), checks);
            vars0 = base;
          }
          let deadline = performance.now() + 1000;
          for (const param of params.items) {
            const vars: Record<string, unknown> = { ...vars0, ...(p.paramKind ? { params: param === null ? null : toCEL(param) } : {}) };
            // Evaluated again when an `authorizer` check waited for its answer (the time waited is
            // not the expressions'); only the last evaluation's match-condition metrics count.
            let r = settledObserving(
              checks,
              opts.observeMatchCondition,
              (observer) => validateOne(p, vars, deadline, a.operation, observer),
              (ms) => (deadline += ms),
            );
            if (r instanceof Promise) r = await r;
            r.decisions.forEach((d, i) => {
              if (d.action === 'admit') return;
              for (const action of b.actions) {
                if (action === 'Deny') {
                  denials.push({ policy: p.name, binding: b.name, message: d.message, ...(d.reason ? { reason: d.reason } : {}) });
                  opts.observe?.(p.name, b.name, 'deny', errorType(d), d.elapsed);
                } else if (action === 'Warn') {
                  a.warnings?.addWarning(`Validation failed for ValidatingAdmissionPolicy '${p.name}' with binding '${b.name}': ${d.message}`);
                  opts.observe?.(p.name, b.name, 'warn', errorType(d), d.elapsed);
                } else if (action === 'Audit') {
                  failures.push({ message: d.message, policy: p.name, binding: b.name, expressionIndex: i, validationActions: b.actions });
                  opts.observe?.(p.name, b.name, 'audit', errorType(d), d.elapsed);
                }
              }
            });
            for (const an of r.audits) {
              const l = annotations.get(an.key) ?? [];
              if (!l.includes(an.value)) l.push(an.value);
              annotations.set(an.key, l);
            }
            for (const e of r.auditErrors) denials.push({ policy: p.name, binding: b.name, message: e });
          }
        }
        for (const [key, values] of annotations) a.annotations?.addAnnotation(`${p.name}/${key}`, values.join(', '));
      }
      if (failures.length) {
        a.annotations?.addAnnotation('validation.policy.admission.k8s.io/validation_failure', JSON.stringify(failures.slice(0, 50)));
      }
      if (denials.length) throw denialError(a, denials[0]!);
    },
  });
}

/** generic.CollectParams: [null] when the policy or binding has no params; the objects otherwise. */
export async function collectParams(
  p: Pick<CompiledPolicy, 'paramKind'>,
  b: Pick<CompiledBinding, 'paramRef'>,
  a: AdmissionAttributes,
  lookup: ParamLookup,
): Promise<{ items: readonly (KubeObject | null)[] } | { error: string }> {
  if (!p.paramKind || !b.paramRef) return { items: [null] };
  const ref = b.paramRef;
  let selector: LabelSelector | undefined;
  if (!ref.name) {
    if (!ref.selector) return { error: 'one of name or selector must be provided' };
    const s = tryLabelSelectorFromObject(ref.selector);
    if (!s.ok) return { error: s.message };
    selector = s.selector;
  }
  const found = await lookup(p.paramKind, ref.namespace || a.namespace || undefined, ref.name ? { name: ref.name } : { selector: selector! });
  if ('error' in found) return found;
  if (found.namespaced && !ref.namespace && !a.namespace)
    return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' };
  if (!found.namespaced && ref.namespace) return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' };
  if (found.items.length === 0 && ref.parameterNotFoundAction === 'Deny')
    return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
  return { items: found.items };
}
