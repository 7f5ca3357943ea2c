// cel-go's two-variable comprehensions (ext.TwoVarComprehensions, in kube's base environment since
// 1.32), as macros of the evaluator with their own type check and loop, since its comprehension node
// has one iteration variable:
//   <list>.all(i, v, p), <map>.all(k, v, p); exists; existsOne (also exists_one) — i an int index
//   transformList(i, v, [filter,] e) → list; transformMap(k, v, [filter,] e) → map from k to e;
//   transformMapEntry(k, v, [filter,] e) → the union of the one-entry maps e makes, a key made
//   twice being the error `insert failed: key <k> already exists`.
// all and exists absorb errors as their one-variable forms do (a false, or a true, decides); the
// others stop at the first error. Every iteration charges the runtime meter as a one-variable
// comprehension's step does, and `comprehension2` on the macro lets the static cost estimate see
// the loop (src/apiextensions/cel/cost.ts).
import { EvaluationError, ParseError, type ASTNode, type Environment } from '@marcbachmann/cel-js';
import { countNodes, type MacroChecker as Checker, type MacroEvaluator as Evaluator, type MacroScope as Scope, type MacroType as CelType } from './ast.js';

type Kind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry';

/** What the static cost estimate reads from a two-variable comprehension's macro. */
export interface Comprehension2 {
  receiver: ASTNode;
  var1: string;
  var2: string;
  filter?: ASTNode;
  step: ASTNode;
}

interface Macro {
  kind: Kind;
  name: string;
  comprehension2: Comprehension2;
  stepCost: number;
  outer?: Scope;
  inner?: Scope;
  async: false;
  typeCheck(chk: Checker, m: Macro, ctx: Scope): CelType;
  evaluate(ev: Evaluator, m: Macro, ctx: unknown): unknown;
}

const ACCUMULATORS = new Set(['__result__', '@result']);

function iterVar(n: ASTNode): string {
  if (n.op !== 'id') throw new ParseError({ code: 'invalid_macro_argument', message: 'argument must be a simple name', node: n });
  const name = n.args;
  if (ACCUMULATORS.has(name)) throw new ParseError({ code: 'invalid_macro_argument', message: 'iteration variable overwrites accumulator variable', node: n });
  return name;
}

function typeCheck(chk: Checker, m: Macro, ctx: Scope): CelType {
  const c = m.comprehension2;
  const range = chk.check(c.receiver, ctx);
  let t1: CelType;
  let t2: CelType;
  if (range.kind === 'list') [t1, t2] = [chk.intType, range.valueType ?? chk.dynType];
  else if (range.kind === 'map') [t1, t2] = [range.keyType ?? chk.dynType, range.valueType ?? chk.dynType];
  else if (range.kind === 'dyn') [t1, t2] = [chk.dynType, chk.dynType];
  else {
    throw chk.createError(
      'invalid_comprehension_range',
      `Expression of type '${chk.formatType(range)}' cannot be range of a comprehension (must be list, map, or dynamic).`,
      c.receiver,
    );
  }
  m.outer = ctx.forkWithVariable(c.var1, t1);
  m.inner = m.outer.forkWithVariable(c.var2, t2);
  const mustBeBool = (n: ASTNode, what: string): void => {
    const t = chk.check(n, m.inner!);
    if (t.isDynOrBool()) return;
    // cel-go's expansion folds all's predicate with _&&_ and exists' with _||_: its checker names those.
    const op = n === c.step ? { all: '_&&_', exists: '_||_' }[m.kind as 'all' | 'exists'] : undefined;
    const message = op
      ? `found no matching overload for '${op}' applied to '(bool, ${chk.formatType(t)})'`
      : `${m.name}(var, var, ${what}) ${what} must return bool, got '${chk.formatType(t)}'`;
    throw chk.createError('invalid_condition_type', message, n);
  };
  if (c.filter) mustBeBool(c.filter, 'filter');
  switch (m.kind) {
    case 'all':
    case 'exists':
    case 'existsOne':
      mustBeBool(c.step, 'predicate');
      return chk.boolType;
    case 'transformList':
      return chk.registry.getListType(chk.check(c.step, m.inner));
    case 'transformMap':
      return chk.registry.getMapType(t1, chk.check(c.step, m.inner));
    case 'transformMapEntry': {
      const t = chk.check(c.step, m.inner);
      if (t.kind === 'map') return t;
      if (t.kind === 'dyn') return chk.registry.getMapType(chk.dynType, chk.dynType);
      throw chk.createError('invalid_argument_type', `${m.name}(var, var, transform) transform must return a map, got '${chk.formatType(t)}'`, c.step);
    }
  }
}

/** The entries of a list (index as int, element) or a map (key, value), as the evaluator holds them. */
function* entries(ev: Evaluator, coll: unknown, receiver: ASTNode): Generator<[unknown, unknown]> {
  if (Array.isArray(coll)) {
    for (let i = 0; i < coll.length; i++) yield [BigInt(i), coll[i]];
  } else if (coll instanceof Set) {
    let i = 0;
    for (const v of coll) yield [BigInt(i++), v];
  } else if (coll instanceof Map) {
    yield* coll.entries();
  } else if (coll && typeof coll === 'object' && (coll.constructor === Object || coll.constructor === undefined)) {
    for (const k of Object.keys(coll)) yield [k, (coll as Record<string, unknown>)[k]];
  } else {
    throw ev.createError('invalid_comprehension_range', 'Expression cannot be range of a comprehension (must be list, map, or dynamic).', receiver);
  }
}

/**
 * A map as the evaluator makes its map literals: an object when every key is a string (so that its
 * own literals and this compare and index alike), otherwise a Map (int keys of a list's indices).
 */
function asCelMap(map: Map<unknown, unknown>): unknown {
  for (const k of map.keys()) if (typeof k !== 'string') return map;
  const o = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of map) o[k as string] = v;
  return o;
}

const mapEntries = (v: unknown): Iterable<[unknown, unknown]> => (v instanceof Map ? v.entries() : Object.entries(v as Record<string, unknown>));

function makeEvaluate(charge: (n: number) => void) {
  return function evaluate(ev: Evaluator, m: Macro, ctx: unknown): unknown {
    const c = m.comprehension2;
    const coll = ev.run(c.receiver, ctx);
    const outer = m.outer!.reuse(ctx);
    const inner = m.inner!.reuse(outer);
    const bool = (n: ASTNode, v: unknown, what: string): boolean => {
      if (typeof v === 'boolean') return v;
      throw ev.createError('invalid_condition_type', `${m.name}(var, var, ${what}) ${what} must return bool`, n);
    };
    let error: Error | undefined;
    let count = 0;
    const list: unknown[] = [];
    const map = new Map<unknown, unknown>();
    for (const [k, v] of entries(ev, coll, c.receiver)) {
      charge(m.stepCost);
      outer.setIterValue(k, ev);
      inner.setIterValue(v, ev);
      if (m.kind === 'all' || m.kind === 'exists') {
        const r = ev.tryEval(c.step, inner);
        if (r instanceof Error) {
          error ??= r;
          continue;
        }
        if (bool(c.step, r, 'predicate') === (m.kind === 'exists')) return m.kind === 'exists';
        continue;
      }
      if (c.filter && !bool(c.filter, ev.run(c.filter, inner), 'filter')) continue;
      const r = ev.run(c.step, inner);
      if (m.kind === 'existsOne') {
        if (bool(c.step, r, 'predicate')) count++;
      } else if (m.kind === 'transformList') list.push(r);
      else if (m.kind === 'transformMap') map.set(k, r);
      else {
        if (!r || typeof r !== 'object') throw ev.createError('invalid_argument_type', `${m.name}(var, var, transform) transform must return a map`, c.step);
        for (const [ek, evv] of mapEntries(r)) {
          if (map.has(ek)) throw new EvaluationError({ code: 'invalid_argument', message: `insert failed: key ${String(ek)} already exists`, node: c.step });
          map.set(ek, evv);
        }
      }
    }
    switch (m.kind) {
      case 'all':
      case 'exists':
        if (error) throw error;
        return m.kind === 'all';
      case 'existsOne':
        return count === 1;
      case 'transformList':
        return list;
      default:
        return asCelMap(map);
    }
  };
}

/** Registers the two-variable comprehension macros; `charge` is the runtime meter. */
export function registerTwoVarComprehensions(env: Environment, charge: (n: number) => void): void {
  const evaluate = makeEvaluate(charge);
  const macro =
    (kind: Kind, name: string, withFilter: boolean) =>
    ({ args, receiver }: { args: ASTNode[]; receiver: ASTNode }): Macro => {
      const var1 = iterVar(args[0]!);
      const var2 = iterVar(args[1]!);
      if (var1 === var2) throw new ParseError({ code: 'invalid_macro_argument', message: `duplicate variable name: ${var1}`, node: args[1]! });
      const filter = withFilter ? args[2] : undefined;
      const step = withFilter ? args[3]! : args[2]!;
      return {
        kind,
        name,
        comprehension2: { receiver, var1, var2, step, ...(filter ? { filter } : {}) },
        stepCost: countNodes(step) + (filter ? countNodes(filter) : 0) + 1,
        async: false,
        typeCheck,
        evaluate,
      };
    };
  const register = (signature: string, handler: ReturnType<typeof macro>): void => {
    env.registerFunction(signature, handler as never);
  };
  register('dyn.all(ast, ast, ast): bool', macro('all', 'all', false));
  register('dyn.exists(ast, ast, ast): bool', macro('exists', 'exists', false));
  register('dyn.existsOne(ast, ast, ast): bool', macro('existsOne', 'existsOne', false));
  register('dyn.exists_one(ast, ast, ast): bool', macro('existsOne', 'exists_one', false));
  for (const [kind, ret] of [
    ['transformList', 'list<dyn>'],
    ['transformMap', 'map<dyn, dyn>'],
    ['transformMapEntry', 'map<dyn, dyn>'],
  ] as const) {
    register(`dyn.${kind}(ast, ast, ast): ${ret}`, macro(kind, kind, false));
    register(`dyn.${kind}(ast, ast, ast, ast): ${ret}`, macro(kind, kind, true));
  }
}
