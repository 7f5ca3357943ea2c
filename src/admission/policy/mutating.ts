// The MutatingAdmissionPolicy admission plugin (k8s.io/apiserver/pkg/admission/plugin/policy/mutating):
// bindings select policies as for ValidatingAdmissionPolicy (matchConstraints, the binding's
// matchResources, params); for every parameter object a policy's matchConditions decide whether it
// applies, then its mutations run in order, each on the object the previous one left:
// - ApplyConfiguration: the CEL expression builds an `Object{…}` that is merged onto the object with
//   structured-merge semantics (the server-side apply merge, with the kind's schema); an apply
//   configuration that sets an atomic list, map or struct is refused, as upstream's validatePatch.
// - JSONPatch: the expression gives a list of `JSONPatch{op, path, value}`, applied as RFC 6902 (a
//   failed `test` leaves the object as it was).
// Errors (CEL, a configuration that does not fit, params) follow the policy's failurePolicy: with
// Fail the request is refused with upstream's 403 "policy '<p>' with binding '<b>' denied request: …".
// reinvocationPolicy IfNeeded: when a later policy or a mutating webhook changed the object, the
// IfNeeded ones that ran before run once more, in the chain's second pass (reinvocation.ts).
import { isDeepStrictEqual } from 'node:util';
import { StatusError } from '../../apimachinery/errors.js';
import { DEDUCED, type TypeRef } from '../../apimachinery/apply/index.js';
import { mergeTyped } from '../../apimachinery/apply/merge-values.js';
import { validateTyped } from '../../apimachinery/apply/typed.js';
import { RUNTIME_CEL_COST_BUDGET } from '../../apimachinery/cel/expressions.js';
import { CostExceeded } from '../../apimachinery/cel/library.js';
import { deepCopyJSON } from '../../apimachinery/deepcopy.js';
import { applyJsonPatchOperations } from '../../apimachinery/patch/json-patch.js';
import type { JsonValue, KubeObject } from '../../apimachinery/types.js';
import { ALLOW_ALL, authorizerFor, Checks, settled, type CheckAuthorizer } from '../cel/authz.js';
import { JSONPatchValue, ObjectValue, celToJSON, checkTypeNames } from '../cel/construct.js';
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
  type Evaluation,
} from '../cel/compile.js';
import {
  compileMatchConditions,
  matchConditionMetrics,
  matchConditions,
  settledObserving,
  type CompiledMatchConditions,
  type MatchConditionObserver,
} from '../cel/matchconditions.js';
import { conversionFailed, convertFor, type Converted } from '../equivalent.js';
import { enterDispatcher } from '../reinvocation.js';
import type { AdmissionAttributes, AdmissionPlugin, EquivalentResources, EquivalentVersion } from '../interfaces.js';
import { isExemptAdmissionConfigurationResource, isNamespaceResource } from '../webhook/rules.js';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding } from './mutating-types.js';
import type { ParamKind, ParamRef } from './types.js';
import { collectParams, compileMatch, matches, type CompiledMatch, type NamespaceLookup, type ParamLookup } from './validating.js';

interface CompiledMutation {
  readonly patchType: 'ApplyConfiguration' | 'JSONPatch';
  readonly compiled: Compiled;
}

export interface CompiledMutatingBinding {
  readonly name: string;
  readonly match?: CompiledMatch;
  readonly paramRef?: ParamRef;
}

export interface CompiledMutatingPolicy {
  readonly name: string;
  readonly failOpen: boolean;
  readonly reinvoke: boolean;
  readonly paramKind?: ParamKind;
  readonly constraints: CompiledMatch;
  readonly matchConditions?: CompiledMatchConditions;
  readonly variables: ReadonlyMap<string, Compiled>;
  readonly mutations: readonly CompiledMutation[];
  readonly bindings: readonly CompiledMutatingBinding[];
}

/** Where the plugin reads the current policies with their bindings (an informer's cache). */
export interface MutatingPolicySource {
  policies(): readonly CompiledMutatingPolicy[];
}

/** apiserver_mutating_admission_policy_check_total (and its duration): one per mutation evaluated. */
export type MutationObserver = (
  policy: string,
  binding: string,
  errorType: 'no_error' | 'compile_error' | 'invalid_error' | 'out_of_budget',
  seconds: number,
) => void;

export interface MutatingPolicyPluginOptions {
  readonly source: MutatingPolicySource;
  readonly namespace: NamespaceLookup;
  readonly params: ParamLookup;
  /** The structured-merge type of the request's kind (its OpenAPI schema); undefined: deduced. */
  readonly type: (a: Pick<AdmissionAttributes, 'resource'>) => TypeRef | undefined;
  readonly observe?: MutationObserver;
  /** Without it, `matchPolicy: Equivalent` matches as `Exact`. */
  readonly equivalents?: EquivalentResources;
  /** What `authorizer` checks ask; without it every check is allowed (AlwaysAllow). */
  readonly authorizer?: CheckAuthorizer;
  /** matchConditions' evaluation errors and time (upstream's admission metrics, kind `policy`, type `admit`). */
  readonly observeMatchCondition?: MatchConditionObserver;
}

const COST_EXCEEDED = new CostExceeded().message;

const byName = (a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }): number =>
  (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;

/** compilePolicy for every policy with bindings (sorted by name, as the policy source). */
export function compileMutatingPolicies(
  policies: readonly MutatingAdmissionPolicy[],
  bindings: readonly MutatingAdmissionPolicyBinding[],
): CompiledMutatingPolicy[] {
  const byPolicy = new Map<string, MutatingAdmissionPolicyBinding[]>();
  for (const b of bindings) {
    const p = b.spec?.policyName ?? '';
    let l = byPolicy.get(p);
    if (!l) byPolicy.set(p, (l = []));
    l.push(b);
  }
  const out: CompiledMutatingPolicy[] = [];
  for (const p of [...policies].sort(byName)) {
    const name = p.metadata?.name ?? '';
    const bs = byPolicy.get(name);
    if (!bs?.length) continue;
    const spec = p.spec ?? {};
    const params = spec.paramKind !== undefined && spec.paramKind !== null;
    const decl: Declarations = { params, variables: (spec.variables?.length ?? 0) > 0 };
    const variables = new Map<string, Compiled>();
    for (const v of spec.variables ?? []) variables.set(v.name ?? '', compileExpression(v.expression ?? '', 'any', decl));
    const conditions = compileMatchConditions(spec.matchConditions, spec.failurePolicy, { params, variables: false });
    const mutations: CompiledMutation[] = [];
    for (const m of spec.mutations ?? []) {
      const patchDecl: Declarations = { ...decl, patchTypes: true };
      if (m.patchType === 'JSONPatch' && m.jsonPatch)
        mutations.push({ patchType: 'JSONPatch', compiled: compileExpression((m.jsonPatch.expression ?? '').trim(), 'list<JSONPatch>', patchDecl) });
      else if (m.patchType === 'ApplyConfiguration' && m.applyConfiguration)
        mutations.push({
          patchType: 'ApplyConfiguration',
          compiled: compileExpression((m.applyConfiguration.expression ?? '').trim(), 'Object', patchDecl),
        });
    }
    out.push({
      name,
      failOpen: spec.failurePolicy === 'Ignore',
      reinvoke: spec.reinvocationPolicy === 'IfNeeded',
      ...(params ? { paramKind: spec.paramKind! } : {}),
      constraints: compileMatch(spec.matchConstraints) ?? compileMatch({})!,
      ...(conditions ? { matchConditions: conditions } : {}),
      variables,
      mutations,
      bindings: [...bs].sort(byName).map((b) => {
        const m = compileMatch(b.spec?.matchResources);
        return { name: b.metadata?.name ?? '', ...(m ? { match: m } : {}), ...(b.spec?.paramRef ? { paramRef: b.spec.paramRef } : {}) };
      }),
    });
  }
  return out;
}

/** generic.PolicyError: refuses the request unless the policy fails open. */
interface PolicyError {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
  /** Mutation and matchCondition errors are Invalid; configuration errors keep Forbidden. */
  readonly reason?: 'Invalid';
}

const policyErrorText = (e: PolicyError): string =>
  e.binding !== undefined
    ? `policy '${e.policy}' with binding '${e.binding}' denied request: ${e.message}`
    : `policy "${e.policy}" denied request: ${e.message}`;

/** The dispatcher's refusal: admission.NewForbidden with the first error's message (and reason), every error a cause. */
function refusal(a: AdmissionAttributes, errors: readonly PolicyError[]): StatusError {
  let name = a.name;
  if (!name) name = a.object?.metadata?.name || a.object?.metadata?.generateName || 'Unknown';
  const first = errors[0]!;
  return new StatusError({
    message: policyErrorText(first),
    reason: first.reason ?? 'Forbidden',
    details: {
      name,
      ...(a.resource.group ? { group: a.resource.group } : {}),
      kind: a.resource.resource,
      causes: errors.map((e) => ({ message: policyErrorText(e) })),
    },
    code: 403,
  });
}

/** The object's content replaced in place: the handler holds `a.object`. */
function replaceObject(a: AdmissionAttributes, next: KubeObject): void {
  const target = a.object as Record<string, unknown>;
  for (const k of Object.keys(target)) delete target[k];
  Object.assign(target, next);
}

/** patchTypeName of a path for findAtomics: `.spec.ports[0]`. */
function findAtomics(v: unknown, type: TypeRef, path: string, out: string[]): void {
  const atom = type.atom;
  if (Array.isArray(v) && atom.list) {
    if (atom.list.atomic) out.push(path);
    v.forEach((item, i) => findAtomics(item, atom.list!.elem, `${path}[${i}]`, out));
  } else if (v !== null && typeof v === 'object' && !Array.isArray(v) && atom.map) {
    if (atom.map.atomic) out.push(path);
    for (const [k, x] of Object.entries(v)) {
      const t = atom.map.fields.get(k);
      if (t) findAtomics(x, t, `${path}.${k}`, out);
    }
  }
}

/** patch.ApplyStructuredMergeDiff: the apply configuration merged onto the object. */
function applyConfiguration(object: KubeObject, config: Record<string, unknown>, type: TypeRef): KubeObject {
  const patch = { ...config, apiVersion: object.apiVersion, kind: object.kind } as JsonValue;
  const issues = validateTyped(patch, type);
  if (issues.length) {
    const text = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('\n');
    throw new Error(`error applying patch: failed to convert patch object to typed object: ${text}`);
  }
  const atomics: string[] = [];
  findAtomics(patch, type, '', atomics);
  if (atomics.length) throw new Error(`error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  return mergeTyped(object as unknown as JsonValue, patch, type) as unknown as KubeObject;
}

/** Runs one mutation on `a.object`; an error message when it fails. */
/** A mutation's expression on the request (its result is applied by `applyMutation`). */
function evaluateMutation(m: CompiledMutation, act: Activation): Evaluation {
  if ('error' in m.compiled) return { error: `compilation failed: ${m.compiled.error}` };
  return evaluateExpression(m.compiled, act);
}

/** Applies an evaluated mutation to the request's object; answers the mutation's error, if any. */
function applyMutation(m: CompiledMutation, r: Evaluation, a: AdmissionAttributes, type: TypeRef): string | undefined {
  if ('error' in r) return r.error;
  const object = a.object!;
  let next: KubeObject;
  try {
    if (m.patchType === 'ApplyConfiguration') {
      if (!(r.value instanceof ObjectValue)) return `unsupported return type from ApplyConfiguration expression: ${typeof r.value}`;
      const mismatch = checkTypeNames(r.value);
      if (mismatch) return `type mismatch: ${mismatch}`;
      next = applyConfiguration(object, celToJSON(r.value) as Record<string, unknown>, type);
    } else {
      if (!Array.isArray(r.value)) return 'type mismatch: JSONPatchType.expression should evaluate to array';
      const ops: JsonValue[] = [];
      for (const op of r.value as unknown[]) {
        if (!(op instanceof JSONPatchValue)) return 'type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch';
        const f = op.fields;
        const value = f.get('value');
        if (value instanceof ObjectValue) {
          const mismatch = checkTypeNames(value);
          if (mismatch) return `type mismatch: ${mismatch}`;
        }
        ops.push({
          op: String(f.get('op') ?? ''),
          path: String(f.get('path') ?? ''),
          ...(f.get('from') ? { from: String(f.get('from')) } : {}),
          ...(f.has('value') ? { value: celToJSON(value) as JsonValue } : {}),
        });
      }
      try {
        next = applyJsonPatchOperations(object as unknown as JsonValue, ops) as unknown as KubeObject;
      } catch (e) {
        // A failed `test` leaves the object as it was; any other failure is the mutation's error.
        if (ops.some((o) => (o as { op: string }).op === 'test') && testFails(object, ops)) return undefined;
        return `JSONPath: ${e instanceof Error ? e.message : String(e)}`;
      }
      if (next === null || typeof next !== 'object' || Array.isArray(next)) return 'JSONPath: the patched object is not an object';
    }
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  replaceObject(a, next);
  return undefined;
}

/** Whether one of the `test` operations, applied in order, is what failed. */
function testFails(object: KubeObject, ops: readonly JsonValue[]): boolean {
  let doc = object as unknown as JsonValue;
  for (const op of ops) {
    try {
      doc = applyJsonPatchOperations(doc, [op]);
    } catch {
      return (op as { op?: string }).op === 'test';
    }
  }
  return false;
}

/** The plugin; answers at once (no promise) when no policy is bound. */
export function mutatingAdmissionPolicyPlugin(opts: MutatingPolicyPluginOptions): AdmissionPlugin {
  return {
    name: 'MutatingAdmissionPolicy',
    admit(a) {
      if (isExemptAdmissionConfigurationResource(a)) return;
      const policies = opts.source.policies();
      if (policies.length === 0 || !a.object) return;
      return dispatch(opts, policies, a);
    },
  };
}

async function dispatch(opts: MutatingPolicyPluginOptions, policies: readonly CompiledMutatingPolicy[], a: AdmissionAttributes): Promise<void> {
  let nsCache: Promise<KubeObject | undefined> | undefined;
  const ns = (): Promise<KubeObject | undefined> => (nsCache ??= a.namespace ? opts.namespace(a.namespace) : Promise.resolve(undefined));
  const errors: PolicyError[] = [];
  const fail = (p: CompiledMutatingPolicy, e: PolicyError): void => {
    if (!p.failOpen) errors.push(e);
  };
  // Invocations (policy, binding, param) to run, found once; `as`: the equivalent version the policy matched.
  const invocations: { p: CompiledMutatingPolicy; b: CompiledMutatingBinding; param: KubeObject | null; key: string; as: EquivalentVersion | undefined }[] = [];
  for (const p of policies) {
    const m = await matches(p.constraints, a, ns, opts.equivalents);
    if (typeof m === 'object' && 'error' in m) {
      fail(p, { policy: p.name, message: `failed to configure policy: ${m.error}` });
      continue;
    }
    if (m === false) continue;
    const as = m === true ? undefined : m;
    for (const b of p.bindings) {
      if (b.match) {
        const bm = await matches(b.match, a, ns, opts.equivalents);
        if (typeof bm === 'object' && 'error' in bm) {
          fail(p, { policy: p.name, binding: b.name, message: `failed to configure binding: ${bm.error}` });
          continue;
        }
        if (bm === false) continue;
      }
      const params = await collectParams(p, b, a, opts.params);
      if ('error' in params) {
        fail(p, { policy: p.name, binding: b.name, message: `failed to configure binding: ${params.error}` });
        continue;
      }
      for (const param of params.items) {
        const key = `${p.name}\u0000${b.name}\u0000${param?.metadata?.namespace ?? ''}/${param?.metadata?.name ?? ''}`;
        invocations.push({ p, b, param, key, as });
      }
    }
  }
  if (invocations.length === 0) {
    if (errors.length) throw refusal(a, errors);
    return;
  }
  const type = opts.type(a);
  const nsObject = a.namespace && !isNamespaceResource(a) ? toCEL(namespaceObject(await ns())) : null;
  const request = toCEL(admissionRequest(a));
  const oldObject = toCEL(a.oldObject ?? null);
  // The `authorizer` checks of every expression evaluated for this request, with their answers.
  const checks = new Checks(opts.authorizer ?? ALLOW_ALL);
  const authorizer = authorizerFor(a, checks);
  // Time spent waiting for a check's answer is not the expressions': it moves the deadline.
  let deadline = performance.now() + 1000;
  const waited = (ms: number): void => void (deadline += ms);
  // Reinvocation as upstream's dispatcher: in the chain's second pass only the IfNeeded invocations
  // made before a later change (by a policy, or by any plugin since this one last ran) run again.
  const state = enterDispatcher(a, 'MutatingAdmissionPolicy');
  // A change matters only to IfNeeded invocations made before it: not compared when there is none.
  const reinvocable = invocations.some((i) => i.p.reinvoke);
  const invoke = async (inv: (typeof invocations)[number]): Promise<void> => {
    const { p, b, param } = inv;
    if (state.skips(inv.key)) return;
    // Matched through an equivalent version: the policy mutates the object converted to that version,
    // and the result is converted back (upstream's versioned attributes).
    const eq = inv.as && opts.equivalents ? { eq: opts.equivalents, as: inv.as } : undefined;
    let target = a;
    let vars: Record<string, unknown>;
    if (eq) {
      let versioned: Converted;
      try {
        versioned = await convertFor(eq.eq, a, eq.as);
      } catch (e) {
        throw conversionFailed(e);
      }
      target = { ...a, object: versioned.object };
      vars = {
        object: toCEL(versioned.object),
        oldObject: toCEL(versioned.oldObject ?? null),
        request: toCEL(admissionRequest(a, eq.as)),
        namespaceObject: nsObject,
        authorizer,
      };
    } else vars = { object: toCEL(a.object), oldObject, request, namespaceObject: nsObject, authorizer };
    if (p.paramKind) vars.params = param === null ? null : toCEL(param);
    if (p.matchConditions) {
      const conditions = p.matchConditions;
      // Evaluated again when an `authorizer` check waited for its answer; only the last
      // evaluation's metrics count.
      const labels = { name: p.name, kind: 'policy', type: 'admit', operation: a.operation };
      let r = settledObserving(
        checks,
        opts.observeMatchCondition,
        (observer) => matchConditions(conditions, vars, deadline, matchConditionMetrics(observer, labels)),
        waited,
      );
      if (r instanceof Promise) r = await r;
      if ('error' in r) return fail(p, { policy: p.name, binding: b.name, message: r.error, reason: 'Invalid' });
      if (!r.matches) return;
    }
    // Whether the object changed matters only for reinvocation: not compared when no policy asks for it.
    const before = reinvocable ? deepCopyJSON(a.object) : undefined;
    const versionedBefore = eq ? deepCopyJSON(target.object) : undefined;
    const targetType = eq ? opts.type({ resource: { ...a.resource, version: eq.as.version } }) : type;
    let act: Activation = { vars, remaining: RUNTIME_CEL_COST_BUDGET, deadline };
    if (p.variables.size) vars.variables = lazyVariables(p.variables, () => act);
    for (const m of p.mutations) {
      act.remaining = RUNTIME_CEL_COST_BUDGET;
      const started = performance.now();
      let waitedMs = 0;
      let err: string | undefined;
      let budget = false;
      // Evaluated again, with fresh variables, when an `authorizer` check waited for its answer (an
      // evaluation out of budget too: it may not be once the check has its answer).
      let rounds = 0;
      let r = settled(
        checks,
        (): Evaluation | OutOfBudget => {
          if (rounds++ > 0) {
            act = { vars, remaining: RUNTIME_CEL_COST_BUDGET, deadline };
            if (p.variables.size) vars.variables = lazyVariables(p.variables, () => act);
          }
          try {
            return evaluateMutation(m, act);
          } catch (e) {
            if (e instanceof OutOfBudget) return e;
            throw e;
          }
        },
        (ms) => {
          waitedMs += ms;
          waited(ms);
        },
      );
      if (r instanceof Promise) r = await r;
      if (r instanceof OutOfBudget) {
        err = r.message;
        budget = true;
      } else err = applyMutation(m, r, target, targetType ?? DEDUCED);
      opts.observe?.(
        p.name,
        b.name,
        err === undefined ? 'no_error' : 'error' in m.compiled ? 'compile_error' : budget || err.includes(COST_EXCEEDED) ? 'out_of_budget' : 'invalid_error',
        (performance.now() - started - waitedMs) / 1000,
      );
      if (err !== undefined) fail(p, { policy: p.name, binding: b.name, message: err, reason: 'Invalid' });
      else vars.object = toCEL(target.object);
    }
    if (eq && target.object && !isDeepStrictEqual(versionedBefore, target.object)) {
      try {
        replaceObject(a, await eq.eq.convert(target.object, a.resource.group, a.resource.resource, eq.as.version, a.resource.version));
      } catch (e) {
        throw conversionFailed(e);
      }
    }
    state.invoked(inv.key, reinvocable && !isDeepStrictEqual(before, a.object), p.reinvoke);
  };
  try {
    for (const inv of invocations) await invoke(inv);
  } finally {
    state.leave(a.object);
  }
  if (errors.length) throw refusal(a, errors);
}
