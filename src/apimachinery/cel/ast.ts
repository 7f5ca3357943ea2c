// The evaluator's AST nodes, read loosely (see src/apiextensions/cel/cost.ts for their shape): a
// walk over every node once, the node count the runtime meter charges per comprehension step, and
// the interfaces a macro with its own type check and evaluation sees (comprehensions.ts,
// optional.ts; the evaluator's typings do not describe them).
import type { ASTNode } from '@marcbachmann/cel-js';

/** A type as the evaluator's checker holds it. */
export interface MacroType {
  kind: string;
  keyType?: MacroType;
  valueType?: MacroType;
  isDynOrBool(): boolean;
  unify(registry: unknown, other: MacroType): MacroType | null;
}

/** The variables in scope: the checker's, and at run time the evaluation's. */
export interface MacroScope {
  forkWithVariable(name: string, type: MacroType): MacroScope;
  /** This scope over the evaluation's `parent` (the checker's scope reused at run time). */
  reuse(parent: unknown): MacroScope;
  setIterValue(v: unknown, ev: unknown): MacroScope;
}

export interface MacroChecker {
  registry: {
    getListType(t: MacroType): MacroType;
    getMapType(k: MacroType, v: MacroType): MacroType;
    getOptionalType(t: MacroType): MacroType;
  };
  boolType: MacroType;
  intType: MacroType;
  dynType: MacroType;
  check(n: ASTNode, ctx: unknown): MacroType;
  getType(name: string): MacroType;
  formatType(t: MacroType): string;
  createError(code: string, message: string, n: ASTNode): Error;
}

export interface MacroEvaluator {
  run(n: ASTNode, ctx: unknown): unknown;
  tryEval(n: ASTNode, ctx: unknown): unknown;
  createError(code: string, message: string, n?: ASTNode): Error;
}

export interface AnyNode {
  op: string;
  args: unknown;
  meta?: { alternate?: AnyNode; macro?: { args?: AnyNode[] } };
}

/**
 * Calls `f` on every node below `n`, each once: a macro's expansion (`meta.alternate`) holds the
 * call's own argument nodes, so the same node is reachable twice (a nested comprehension would be
 * metered twice, and every level of nesting doubles the visits).
 */
export function walk(n: unknown, f: (n: AnyNode) => void, seen = new Set<unknown>()): void {
  if (!n || typeof n !== 'object' || !('op' in n) || seen.has(n)) return;
  seen.add(n);
  const node = n as AnyNode;
  f(node);
  if (node.meta?.alternate) walk(node.meta.alternate, f, seen);
  if (node.meta?.macro?.args) for (const a of node.meta.macro.args) walk(a, f, seen);
  const a = node.args;
  if (Array.isArray(a)) {
    for (const x of a) {
      if (Array.isArray(x)) for (const y of x) walk(y, f, seen);
      else walk(x, f, seen);
    }
  } else if (a && typeof a === 'object') {
    if ('op' in a) walk(a, f, seen);
    else if (node.op === 'comprehension') {
      const c = a as { iterable: unknown; init: unknown; step: unknown };
      walk(c.iterable, f, seen);
      walk(c.init, f, seen);
      walk(c.step, f, seen);
    }
  }
}

/** Number of AST nodes below `n` (the static part of a comprehension step's runtime charge). */
export function countNodes(n: unknown): number {
  const node = n && typeof n === 'object' && 'op' in n ? (n as AnyNode) : undefined;
  if (!node) return 0;
  if (node.meta?.alternate) return countNodes(node.meta.alternate);
  let c = 1;
  const a = node.args;
  if (Array.isArray(a)) {
    for (const x of a) c += Array.isArray(x) ? x.reduce((s: number, y: unknown) => s + countNodes(y), 0) : countNodes(x);
  } else if (a && typeof a === 'object') {
    if ('op' in a) c += countNodes(a);
    else if (node.op === 'comprehension') {
      const cc = a as { iterable: unknown; init: unknown; step: unknown };
      c += countNodes(cc.iterable) + countNodes(cc.init);
    }
  }
  return c;
}
