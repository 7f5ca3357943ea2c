// cel-go's optional types beyond what the evaluator has (its optional.of/none, hasValue, value,
// or, orValue, `.?f` and `[?k]`), as kube's base environment has them (cel.OptionalTypes()):
//   optional.ofNonZeroValue(x)  optional.of(x) unless x is its type's zero value
//   opt.optMap(v, e)            optional.of(e) with v bound to opt's value; none stays none
//   opt.optFlatMap(v, e)        e (itself optional) with v bound to opt's value; none stays none
//   [a, ?b]  {k: v, ?k2: v2}    optional entries of list and map literals: present only when the
//                               optional has a value (Object{?f: v} in mutations, through them)
//   list.first(), list.last()   the first or last element, none for an empty list (version 2)
//   optional.unwrap(l), l.unwrapOpt()  the values of a list of optionals (version 2)
// The evaluator's parser does not read `?` before an entry, so source.ts's parseCel blanks it
// before parsing (the entry keeps its columns) and marks the literal afterwards: the literal's
// node gets its own type check and evaluation (a macro, in the evaluator's terms).
import { EvaluationError, Optional, ParseError, type ASTNode, type Environment } from '@marcbachmann/cel-js';
import type { MacroChecker as Checker, MacroEvaluator as Evaluator, MacroScope as Scope, MacroType as CelType } from './ast.js';

interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
  setMeta(key: string, value: unknown): Node;
}

// ---------- ofNonZeroValue ----------

/** cel-go's IsZeroValue for the evaluator's values. */
function isZero(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === 0n || v === '') return true;
  if (typeof v !== 'object') return false;
  if (v instanceof Optional) return !v.hasValue();
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (v instanceof Map || v instanceof Set) return v.size === 0;
  const ctor = v.constructor;
  if (ctor === Object || ctor === undefined) return Object.keys(v).length === 0;
  // UnsignedInt (valueOf a bigint), Duration and others that read as a number.
  const n = (v as { valueOf(): unknown }).valueOf();
  return n !== v && (n === 0 || n === 0n);
}

// ---------- optMap, optFlatMap ----------

interface OptMacro {
  name: 'optMap' | 'optFlatMap';
  receiver: ASTNode;
  varName: string;
  expr: ASTNode;
  scope?: Scope;
  async: false;
  typeCheck(chk: Checker, m: OptMacro, ctx: Scope): CelType;
  evaluate(ev: Evaluator, m: OptMacro, ctx: unknown): unknown;
}

function optTypeCheck(chk: Checker, m: OptMacro, ctx: Scope): CelType {
  const t = chk.check(m.receiver, ctx);
  if (t.kind !== 'optional' && t.kind !== 'dyn')
    throw chk.createError('optional_expected', `${m.name}() receiver must be optional, got '${chk.formatType(t)}'`, m.receiver);
  m.scope = ctx.forkWithVariable(m.varName, t.valueType ?? chk.dynType);
  const r = chk.check(m.expr, m.scope);
  if (m.name === 'optMap') return chk.registry.getOptionalType(r);
  if (r.kind !== 'optional' && r.kind !== 'dyn')
    throw chk.createError('optional_expected', `optFlatMap() expression must be optional, got '${chk.formatType(r)}'`, m.expr);
  return r.kind === 'dyn' ? chk.getType('optional') : r;
}

function optEvaluate(ev: Evaluator, m: OptMacro, ctx: unknown): unknown {
  const o = ev.run(m.receiver, ctx);
  if (!(o instanceof Optional)) throw new EvaluationError({ code: 'optional_expected', message: `${m.name}() receiver must be optional`, node: m.receiver });
  if (!o.hasValue()) return Optional.none();
  const r = ev.run(m.expr, m.scope!.reuse(ctx).setIterValue(o.value(), ev));
  if (m.name === 'optMap') return Optional.of(r);
  if (!(r instanceof Optional)) throw new EvaluationError({ code: 'optional_expected', message: 'optFlatMap() expression must be optional', node: m.expr });
  return r;
}

const unwrap = (l: readonly unknown[]): unknown[] => {
  const out: unknown[] = [];
  for (const o of l) {
    if (!(o instanceof Optional)) throw new EvaluationError('optional.unwrap() list elements must be optional');
    if (o.hasValue()) out.push(o.value());
  }
  return out;
};

/** Registers optional.ofNonZeroValue, optMap, optFlatMap, and version 2's first, last and unwrap. */
export function registerOptionalHelpers(env: Environment): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  fn('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_: unknown, v: unknown) => (isZero(v) ? Optional.none() : Optional.of(v)));
  fn('list<A>.first(): optional<A>', (l: unknown[]) => (l.length ? Optional.of(l[0]) : Optional.none()));
  fn('list<A>.last(): optional<A>', (l: unknown[]) => (l.length ? Optional.of(l.at(-1)) : Optional.none()));
  fn('OptionalNamespace.unwrap(list<optional<A>>): list<A>', (_: unknown, l: unknown[]) => unwrap(l));
  fn('list<optional<A>>.unwrapOpt(): list<A>', (l: unknown[]) => unwrap(l));
  for (const name of ['optMap', 'optFlatMap'] as const) {
    const handler = ({ args, receiver }: { args: ASTNode[]; receiver: ASTNode }): OptMacro => {
      const v = args[0]!;
      if (v.op !== 'id') throw new ParseError({ code: 'invalid_macro_argument', message: `${name}() variable name must be a simple identifier`, node: v });
      return { name, receiver, varName: v.args, expr: args[1]!, async: false, typeCheck: optTypeCheck, evaluate: optEvaluate };
    };
    env.registerFunction(`dyn.${name}(ast, ast): dyn`, handler as never);
  }
}

// ---------- optional entries of list and map literals ----------

/** Lowest start and highest end over a node and everything below it. */
function span(n: unknown, acc = { start: Number.POSITIVE_INFINITY, end: -1 }): { start: number; end: number } {
  if (!n || typeof n !== 'object') return acc;
  if (Array.isArray(n)) {
    for (const x of n) span(x, acc);
    return acc;
  }
  if (!('op' in n)) return acc;
  const node = n as Node;
  acc.start = Math.min(acc.start, node.start);
  acc.end = Math.max(acc.end, node.end);
  span(node.args, acc);
  return acc;
}

interface EntriesMacro {
  optional: readonly boolean[];
  map: boolean;
  async: false;
  typeCheck(chk: Checker, m: EntriesMacro, ctx: unknown): CelType;
  evaluate(ev: Evaluator, m: EntriesMacro, ctx: unknown): unknown;
  node: Node;
}

function entryType(chk: Checker, m: EntriesMacro, i: number, n: ASTNode, ctx: unknown): CelType {
  const t = chk.check(n, ctx);
  if (!m.optional[i]) return t;
  if (t.kind === 'optional') return t.valueType ?? chk.dynType;
  if (t.kind === 'dyn') return t;
  throw chk.createError('optional_expected', `optional entry must be optional, got '${chk.formatType(t)}'`, n);
}

const unify = (chk: Checker, a: CelType | undefined, b: CelType): CelType => (a ? (a.unify(chk.registry, b) ?? chk.dynType) : b);

function entriesTypeCheck(chk: Checker, m: EntriesMacro, ctx: unknown): CelType {
  let k: CelType | undefined;
  let v: CelType | undefined;
  if (!m.map) {
    (m.node.args as ASTNode[]).forEach((e, i) => (v = unify(chk, v, entryType(chk, m, i, e, ctx))));
    return chk.registry.getListType(v ?? chk.dynType);
  }
  (m.node.args as [ASTNode, ASTNode][]).forEach(([key, value], i) => {
    k = unify(chk, k, chk.check(key, ctx));
    v = unify(chk, v, entryType(chk, m, i, value, ctx));
  });
  return chk.registry.getMapType(k ?? chk.dynType, v ?? chk.dynType);
}

function present(m: EntriesMacro, i: number, v: unknown, n: ASTNode): { has: boolean; value?: unknown } {
  if (!m.optional[i]) return { has: true, value: v };
  if (!(v instanceof Optional)) throw new EvaluationError({ code: 'optional_expected', message: 'optional entry must be optional', node: n });
  return v.hasValue() ? { has: true, value: v.value() } : { has: false };
}

function entriesEvaluate(ev: Evaluator, m: EntriesMacro, ctx: unknown): unknown {
  if (!m.map) {
    const out: unknown[] = [];
    (m.node.args as ASTNode[]).forEach((e, i) => {
      const p = present(m, i, ev.run(e, ctx), e);
      if (p.has) out.push(p.value);
    });
    return out;
  }
  // As the evaluator's own map literals: an object (keys as strings).
  const out = Object.create(null) as Record<string, unknown>;
  (m.node.args as [ASTNode, ASTNode][]).forEach(([key, value], i) => {
    const k = ev.run(key, ctx);
    const p = present(m, i, ev.run(value, ctx), value);
    if (p.has) out[String(k)] = p.value;
  });
  return out;
}

/**
 * Marks the list and map literals of `ast` that have an entry whose `?` (at one of `marks`, blanked
 * in the source) precedes it: such an entry lies after the previous entry's text and before its own.
 */
export function markOptionalEntries(ast: ASTNode, marks: readonly number[]): void {
  if (marks.length === 0) return;
  const visit = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (!('op' in n)) return;
    const node = n as Node;
    if (node.op === 'list' || node.op === 'map') {
      const entries = node.args as unknown[];
      let prevEnd = node.start;
      const optional = entries.map((e) => {
        const s = span(node.op === 'map' ? (e as unknown[])[0] : e);
        const has = marks.some((q) => q >= prevEnd && q < s.start);
        prevEnd = span(e).end;
        return has;
      });
      if (optional.some(Boolean)) {
        const macro: EntriesMacro = { optional, map: node.op === 'map', async: false, typeCheck: entriesTypeCheck, evaluate: entriesEvaluate, node };
        node.setMeta('macro', macro).setMeta('async', false);
      }
    }
    visit(node.args);
  };
  visit(ast);
}
