// CEL for admission (k8s.io/apiserver/pkg/admission/plugin/cel): the expressions of
// ValidatingAdmissionPolicies and of webhook and policy matchConditions, compiled once per
// configuration change and evaluated per request. The variables are upstream's: `object`,
// `oldObject`, `request`, `namespaceObject`, `params` (when the policy has a paramKind) and
// `variables` (a policy's spec.variables, each evaluated at most once per request, when first read).
//
// `authorizer` is the authz library's (authz.ts).
//
// Differences from upstream kept: `object`, `oldObject`, `params`, `request` and `namespaceObject`
// are all dynamic (upstream types `request` and `namespaceObject`), so a misspelt field of `request`
// is found when the expression runs, not when the policy is written.
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import { PER_CALL_LIMIT, celErrorText, checkConstantPatterns, countNodes, meterComprehensions, useRE2 } from '../../apimachinery/cel/expressions.js';
import { CostExceeded, armMeter, baseEnvironment, meter } from '../../apimachinery/cel/library.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { AdmissionAttributes, EquivalentVersion } from '../interfaces.js';
import { AUTHORIZER_TYPE, registerAuthz } from './authz.js';
import {
  ESCAPE_KEY_FUNCTION,
  JSONPATCH_FUNCTION,
  JSONPatchValue,
  OBJECT_FUNCTION,
  ObjectValue,
  escapeKey,
  fieldsOf,
  rewriteConstructionsMapped,
} from './construct.js';
import { celSourceMap, parseCel } from '../../apimachinery/cel/source.js';

/** cel.OptionalVariableDeclarations: which of the optional variables an expression may use. */
export interface Declarations {
  readonly params: boolean;
  /** The policy declares spec.variables (`variables.<name>`). */
  readonly variables: boolean;
  /** MutatingAdmissionPolicy mutations: `Object{…}`, `JSONPatch{…}`, `jsonpatch.escapeKey` (construct.ts). */
  readonly patchTypes?: boolean;
}

/** A compiled expression, or why it did not compile (apiservercel.Error: Invalid or Required). */
export type Compiled = { readonly program: ParseResult; readonly expression: string; readonly baseCost: number } | { readonly error: string };

const envs = new Map<string, Environment>();

/**
 * The environment of an expression's declarations. `typed`: `request` and `namespaceObject` have
 * upstream's types (BuildRequestType, BuildNamespaceType), which is what upstream compiles with, so
 * that `request.operaton` does not compile; kplane type-checks there (see compileExpression) and
 * evaluates in the untyped one, whose values are the same plain objects.
 */
function environment(d: Declarations, typed = false): Environment {
  const key = `${d.params}/${d.variables}/${d.patchTypes === true}/${typed}`;
  let env = envs.get(key);
  if (!env) {
    env = baseEnvironment().clone();
    if (typed) registerRequestTypes(env);
    env.registerVariable('object', 'dyn');
    env.registerVariable('oldObject', 'dyn');
    env.registerVariable('request', typed ? 'kubernetes.AdmissionRequest' : 'dyn');
    env.registerVariable('namespaceObject', typed ? 'kubernetes.Namespace' : 'dyn');
    registerAuthz(env);
    env.registerVariable('authorizer', AUTHORIZER_TYPE);
    if (d.params) env.registerVariable('params', 'dyn');
    if (d.variables) env.registerVariable('variables', 'map');
    if (d.patchTypes) registerPatchTypes(env);
    envs.set(key, env);
  }
  return env;
}

/** Upstream's AdmissionRequest and Namespace types (plugin/cel/compile.go), for type checking only. */
function registerRequestTypes(env: Environment): void {
  const type = (name: string, fields: Record<string, string>): void => {
    env.registerType(name, { ctor: { [name]: class {} }[name]!, fields } as never);
  };
  type('kubernetes.GroupVersionKind', { group: 'string', version: 'string', kind: 'string' });
  type('kubernetes.GroupVersionResource', { group: 'string', version: 'string', resource: 'string' });
  type('kubernetes.UserInfo', { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' });
  type('kubernetes.AdmissionRequest', {
    kind: 'kubernetes.GroupVersionKind',
    resource: 'kubernetes.GroupVersionResource',
    subResource: 'string',
    requestKind: 'kubernetes.GroupVersionKind',
    requestResource: 'kubernetes.GroupVersionResource',
    requestSubResource: 'string',
    name: 'string',
    namespace: 'string',
    operation: 'string',
    userInfo: 'kubernetes.UserInfo',
    dryRun: 'bool',
    options: 'dyn',
  });
  type('kubernetes.NamespaceSpec', { finalizers: 'list<string>' });
  type('kubernetes.NamespaceCondition', {
    status: 'string',
    type: 'string',
    lastTransitionTime: 'google.protobuf.Timestamp',
    message: 'string',
    reason: 'string',
  });
  type('kubernetes.NamespaceStatus', { conditions: 'list<kubernetes.NamespaceCondition>', phase: 'string' });
  type('kubernetes.NamespaceMetadata', {
    name: 'string',
    generateName: 'string',
    namespace: 'string',
    labels: 'map<string, string>',
    annotations: 'map<string, string>',
    UID: 'string',
    creationTimestamp: 'google.protobuf.Timestamp',
    deletionGracePeriodSeconds: 'int',
    deletionTimestamp: 'google.protobuf.Timestamp',
    generation: 'int',
    resourceVersion: 'string',
    finalizers: 'list<string>',
  });
  type('kubernetes.Namespace', { metadata: 'kubernetes.NamespaceMetadata', spec: 'kubernetes.NamespaceSpec', status: 'kubernetes.NamespaceStatus' });
}

/** The mutation types: `Object…` and `JSONPatch` initializers as typed maps, and jsonpatch.escapeKey. */
function registerPatchTypes(env: Environment): void {
  env.registerType('Object', { ctor: ObjectValue } as never);
  env.registerType('JSONPatch', { ctor: JSONPatchValue } as never);
  env.registerFunction(`${OBJECT_FUNCTION}(string, map): Object`, (t: string, m: unknown) => new ObjectValue(t, fieldsOf(m)));
  env.registerFunction(`${JSONPATCH_FUNCTION}(map): JSONPatch`, (m: unknown) => new JSONPatchValue(fieldsOf(m)));
  env.registerFunction(`${ESCAPE_KEY_FUNCTION}(string): string`, escapeKey);
}

/** cel-go's type names: `list(dyn)`, `map(string, dyn)`. */
const goTypeName = (t: string): string =>
  t
    .replace(/</g, '(')
    .replace(/>/g, ')')
    .replace(/,(?! )/g, ', ');

/**
 * plugin/cel CompileCELExpression: `compilation failed: ERROR: <input>:1:…` for what does not parse or
 * type-check, `must evaluate to bool but got string` for the wrong result type (dyn is accepted).
 */
export function compileExpression(expression: string, want: 'bool' | 'string' | 'any' | 'Object' | 'list<JSONPatch>', d: Declarations): Compiled {
  // Mutations' initializers are rewritten before parsing; errors point back into the expression.
  const rewritten = d.patchTypes ? rewriteConstructionsMapped(expression) : undefined;
  const source = rewritten?.text ?? expression;
  const failed = (e: unknown): Compiled => ({ error: `compilation failed: ${celErrorText(expression, e, celSourceMap(expression, rewritten))}` });
  let program: ParseResult;
  let typed: ParseResult;
  try {
    // Type-checked as upstream compiles it (request and namespaceObject typed), evaluated untyped.
    typed = parseCel(environment(d, true), source);
    program = parseCel(environment(d), source);
  } catch (e) {
    return failed(e);
  }
  useRE2(typed.ast);
  useRE2(program.ast);
  const checked = typed.check();
  if (!checked.valid) return failed(checked.error);
  const untyped = program.check();
  if (!untyped.valid) return failed(untyped.error);
  // A list whose element type is not known (`[]`, `list<dyn>`) is accepted where a list is wanted.
  const anyList = want.startsWith('list<') && (checked.type === 'list<dyn>' || checked.type === 'list<T>');
  if (want !== 'any' && checked.type !== want && checked.type !== 'dyn' && !anyList) {
    return { error: `must evaluate to ${goTypeName(want)} but got ${goTypeName(checked.type ?? 'dyn')}` };
  }
  // On the typed AST: cel-go's string.format check reads the arguments' types.
  const badPattern = checkConstantPatterns(typed.ast, expression, celSourceMap(expression, rewritten));
  if (badPattern) return { error: badPattern };
  meterComprehensions(program.ast);
  return { program, expression, baseCost: countNodes(program.ast) };
}

/**
 * JSON as CEL values: integral numbers become ints. The evaluator takes plain objects as maps and
 * arrays as lists, so a part of the value without numbers (and without undefined fields, which a
 * map cannot hold) is used as it is, shared with the object: only the objects and arrays on the
 * way to a number are copied (objects into maps). A ConfigMap, whose fields are all strings, is
 * not copied at all; converting every object of every request was most of a policy's cost.
 * Nothing evaluated in CEL mutates its variables.
 */
export function toCEL(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const c = toCEL(x);
      if (out) out.push(c);
      else if (c !== x) {
        out = v.slice(0, i);
        out.push(c);
      }
    }
    return out ?? v;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  const plain = proto === Object.prototype || proto === null;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let m: Map<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const c = x === undefined ? undefined : toCEL(x);
    if (m) {
      if (c !== undefined) m.set(k, c);
    } else if (c !== x || x === undefined || !plain) {
      // The first field that differs (or an object that is not a plain one): copy into a map.
      m = new Map<string, unknown>();
      for (let j = 0; j < i; j++) m.set(keys[j]!, o[keys[j]!]);
      if (c !== undefined) m.set(k, c);
    }
  }
  return m ?? (plain ? v : new Map());
}

/** cel.CreateAdmissionRequest: the `request` variable. */
export function admissionRequest(a: AdmissionAttributes, as?: EquivalentVersion): Record<string, unknown> {
  const requestKind = { group: a.kind.group, version: a.kind.version, kind: a.kind.kind };
  const requestResource = { group: a.resource.group, version: a.resource.version, resource: a.resource.resource };
  // Matched through an equivalent version (matchPolicy: Equivalent): kind and resource are that version's.
  const kind = as ? { group: a.kind.group, version: as.version, kind: as.kind } : requestKind;
  const resource = as ? { ...requestResource, version: as.version } : requestResource;
  const u = a.userInfo;
  const options = operationOptions(a);
  return {
    kind,
    resource,
    subResource: a.subresource,
    requestKind,
    requestResource,
    requestSubResource: a.subresource,
    name: a.name,
    namespace: a.namespace,
    operation: a.operation,
    userInfo: { username: u.name, uid: u.uid ?? '', groups: [...u.groups], extra: u.extra ?? {} },
    dryRun: a.dryRun,
    ...(options ? { options } : {}),
  };
}

/**
 * admission.Attributes.GetOperationOptions as an AdmissionReview (and a policy's `request.options`)
 * carries it: the operation's options kind with the request's options, or only its dryRun where
 * those are not known; null for CONNECT.
 */
export function operationOptions(a: AdmissionAttributes): Record<string, unknown> | null {
  const kind = a.operation === 'CREATE' ? 'CreateOptions' : a.operation === 'UPDATE' ? 'UpdateOptions' : a.operation === 'DELETE' ? 'DeleteOptions' : undefined;
  if (!kind) return null;
  return { kind, apiVersion: 'meta.k8s.io/v1', ...(a.options ?? (a.dryRun ? { dryRun: ['All'] } : {})) };
}

/** cel.CreateNamespaceObject: what `namespaceObject` shows of the request's namespace. */
export function namespaceObject(ns: KubeObject | undefined): unknown {
  if (!ns) return null;
  const m = ns.metadata ?? {};
  return {
    metadata: {
      name: m.name,
      generateName: m.generateName,
      namespace: m.namespace,
      labels: m.labels,
      annotations: m.annotations,
      uid: m.uid,
      creationTimestamp: m.creationTimestamp,
      deletionTimestamp: m.deletionTimestamp,
      deletionGracePeriodSeconds: m.deletionGracePeriodSeconds,
      generation: m.generation,
      resourceVersion: m.resourceVersion,
      finalizers: m.finalizers,
      ownerReferences: m.ownerReferences,
    },
    spec: (ns as { spec?: unknown }).spec ?? {},
    status: (ns as { status?: unknown }).status ?? {},
  };
}

export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** Thrown out of an evaluation when the request's budget is spent: nothing more is evaluated. */
export class OutOfBudget extends Error {
  constructor() {
    super(OUT_OF_BUDGET);
  }
}

/** The variables of one request; `remaining` is the request's runtime cost budget. */
export interface Activation {
  readonly vars: Record<string, unknown>;
  remaining: number;
  readonly deadline: number;
}

export type Evaluation = { readonly value: unknown } | { readonly error: string };

/**
 * Runs one program (activation.Evaluate): its cost comes off the request's budget; past the
 * per-call limit the result is an error; past the budget, OutOfBudget is thrown.
 */
export function evaluateExpression(c: Extract<Compiled, { program: unknown }>, act: Activation): Evaluation {
  const saved = { used: meter.used, limit: meter.limit, deadline: meter.deadline, exceeded: meter.exceeded, ticks: meter.ticks };
  armMeter(Math.min(PER_CALL_LIMIT, act.remaining), act.deadline);
  meter.used = c.baseCost;
  let out: Evaluation;
  try {
    const value: unknown = c.program(act.vars);
    out = meter.exceeded ? { error: new CostExceeded().message } : { value };
  } catch (e) {
    if (e instanceof OutOfBudget) throw e;
    out = { error: e instanceof CostExceeded || meter.exceeded ? new CostExceeded().message : errorText(e) };
  }
  const cost = meter.used;
  // A variable read inside this program ran its own program on the same meter: restore the outer run's.
  Object.assign(meter, saved);
  if (cost > act.remaining || performance.now() > act.deadline) throw new OutOfBudget();
  act.remaining -= cost;
  if ('error' in out) return { error: `expression '${c.expression}' resulted in error: ${out.error}` };
  return out;
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const s = (e as { summary?: string }).summary ?? e.message.split('\n')[0] ?? '';
    return s.replace(/^No such key/, 'no such key').replace(/^No such overload/, 'no such overload');
  }
  return String(e);
}

/**
 * `variables`: a map whose entries are evaluated when first read (upstream's composition
 * context), each at most once per request; an entry whose expression failed fails the read. A
 * plain Map (the evaluator knows maps by their constructor) with its own get/has.
 */
export function lazyVariables(compiled: ReadonlyMap<string, Compiled>, act: () => Activation): Map<string, unknown> {
  const done = new Map<string, Evaluation>();
  const m = new Map<string, unknown>();
  const get = (k: string): unknown => {
    const c = compiled.get(k);
    if (!c) return undefined;
    let r = done.get(k);
    if (!r) {
      r = 'error' in c ? { error: `composited variable "${k}" fails to compile: ${c.error}` } : evaluateExpression(c, act());
      done.set(k, r);
    }
    if ('error' in r) throw new Error(r.error);
    return r.value;
  };
  Object.defineProperties(m, {
    get: { value: get },
    has: { value: (k: string): boolean => compiled.has(k) },
    size: { get: () => compiled.size },
    keys: { value: () => compiled.keys() },
  });
  return m;
}
