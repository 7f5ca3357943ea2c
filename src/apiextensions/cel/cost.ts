// Static cost estimation of a CEL rule (upstream: cel-go's checker.Cost with the apiextensions
// size estimator). An AST walk that tracks, for sub-expressions derived from `self`/`oldSelf`, the
// schema node they come from, so lists, maps and strings are sized by maxItems/maxProperties/
// maxLength, or by what fits in a request when undeclared. Costs are in cel-go-like units: one per
// node, plus size-proportional charges for comprehensions, string scans and list traversals. It is
// a bound, not cel-go's exact figure; nested comprehensions over unbounded lists land far above
// the limit either way, as upstream.
import type { ASTNode } from '@marcbachmann/cel-js';
import type { Structural } from '../schema/types.js';
import { escapeProperty, maxSize, MAX_REQUEST_SIZE_BYTES } from './types.js';
import { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, countNodes } from '../../apimachinery/cel/expressions.js';

/** Upstream limits (k8s.io/apiserver/pkg/apis/cel/config.go). */
export { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, countNodes };
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

interface Est {
  cost: number;
  /** Max length of a string, or max size of a list/map. */
  size: number;
  /** Schema the value comes from, when known. */
  schema?: Structural;
}

type Scope = ReadonlyMap<string, Structural | undefined>;

/** The evaluator's AST nodes: `op`, `args`, and `meta` (macro expansion). Read loosely on purpose. */
interface Node {
  op: string;
  args: unknown;
  meta?: {
    alternate?: Node;
    macro?: {
      args?: Node[];
      receiver?: Node;
      expr?: Node;
      node?: Node;
      var?: string;
      val?: Node;
      exp?: Node;
      comprehension2?: { receiver: Node; var1: string; var2: string; filter?: Node; step: Node };
    };
  };
}

const asNode = (n: unknown): Node | undefined => (n && typeof n === 'object' && 'op' in n ? (n as Node) : undefined);

const UNKNOWN = MAX_REQUEST_SIZE_BYTES;

function childSchema(s: Structural | undefined, field: string): Structural | undefined {
  if (!s) return undefined;
  if (s.properties) {
    for (const [prop, child] of s.properties) if (escapeProperty(prop) === field) return child;
  }
  return s.additionalProperties?.structural;
}

function elemSchema(s: Structural | undefined): Structural | undefined {
  if (!s) return undefined;
  return s.type === 'array' ? s.items : s.additionalProperties?.structural;
}

const LIST_FUNCS = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'join']);
const SCAN_FUNCS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'lowerAscii',
  'upperAscii',
  'trim',
  'reverse',
  'replace',
  'split',
  'substring',
  'charAt',
  'url',
  'isURL',
]);
const REGEX_FUNCS = new Set(['matches', '__re2_matches', 'find', 'findAll']);

function est(n: Node | undefined, scope: Scope, root: Structural): Est {
  if (!n) return { cost: 0, size: 1 };
  const alt = n.meta?.alternate;
  if (alt) return est(alt, scope, root);
  const macro = n.meta?.macro;
  if (macro?.comprehension2) {
    // A two-variable comprehension: the range's size times the filter and the step, the second
    // variable sized by the range's elements (the first is an index or a key).
    const c = macro.comprehension2;
    const it = est(c.receiver, scope, root);
    const inner = new Map(scope);
    inner.set(c.var1, undefined);
    inner.set(c.var2, elemSchema(it.schema));
    const perElement = est(c.step, inner, root).cost + (c.filter ? est(c.filter, inner, root).cost : 0) + 1;
    return { cost: it.cost + it.size * perElement, size: it.size };
  }
  if (macro?.receiver && macro.expr) {
    // optMap / optFlatMap: the receiver and the expression.
    return { cost: 1 + est(macro.receiver, scope, root).cost + est(macro.expr, scope, root).cost, size: 1 };
  }
  if (macro?.val && macro.exp) {
    // cel.bind(v, val, exp): both, v sized as val.
    const val = est(macro.val, scope, root);
    const inner = new Map(scope);
    if (macro.var) inner.set(macro.var, val.schema);
    const exp = est(macro.exp, inner, root);
    return { cost: 1 + val.cost + exp.cost, size: exp.size, ...(exp.schema ? { schema: exp.schema } : {}) };
  }
  // A list or map literal with optional entries is estimated as the literal (its macro's `node`).
  if (macro && !macro.node) {
    // has(x.f): the select chain only.
    let c = 1;
    for (const a of macro.args ?? []) c += est(asNode(a), scope, root).cost;
    return { cost: c, size: 1 };
  }
  const a = n.args;
  switch (n.op) {
    case 'value':
      return { cost: 0, size: typeof a === 'string' ? a.length : 1 };
    case 'id': {
      const name = a as string;
      if (name === 'self' || name === 'oldSelf') return { cost: 1, size: maxSize(root), schema: root };
      if (scope.has(name)) {
        const s = scope.get(name);
        return { cost: 1, size: s ? maxSize(s) : UNKNOWN, ...(s ? { schema: s } : {}) };
      }
      return { cost: 1, size: UNKNOWN };
    }
    case '.':
    case '.?': {
      const [obj, field] = a as [Node, string];
      const o = est(obj, scope, root);
      const s = o.schema && o.schema.type !== 'array' ? childSchema(o.schema, field) : undefined;
      return { cost: o.cost + 1, size: s ? maxSize(s) : UNKNOWN, ...(s ? { schema: s } : {}) };
    }
    case '[]':
    case '[?]': {
      const [obj, idx] = a as [Node, Node];
      const o = est(obj, scope, root);
      const i = est(idx, scope, root);
      const s = elemSchema(o.schema);
      return { cost: o.cost + i.cost + 1, size: s ? maxSize(s) : UNKNOWN, ...(s ? { schema: s } : {}) };
    }
    case 'comprehension': {
      const c = a as { iterable: Node; iterVarName: string; init: Node; step: Node };
      const it = est(c.iterable, scope, root);
      let el: Structural | undefined;
      if (it.schema?.type === 'array') el = it.schema.items;
      // Map comprehensions range over keys: strings of unknown length.
      const inner = new Map(scope);
      inner.set(c.iterVarName, el);
      const step = est(c.step, inner, root);
      const init = est(c.init, scope, root);
      return { cost: it.cost + init.cost + it.size * (step.cost + 1), size: it.size };
    }
    case 'accuValue':
    case 'accuInc':
      return { cost: 1, size: 1 };
    case 'accuPush':
      return { cost: 1 + est(asNode(a), scope, root).cost, size: 1 };
    case 'call':
    case 'rcall': {
      const name = (a as unknown[])[0] as string;
      const recv = n.op === 'rcall' ? est(asNode((a as unknown[])[1]), scope, root) : undefined;
      const argNodes = ((n.op === 'rcall' ? (a as unknown[])[2] : (a as unknown[])[1]) ?? []) as Node[];
      const args = argNodes.map((x) => est(x, scope, root));
      let cost = 1 + (recv?.cost ?? 0);
      for (const x of args) cost += x.cost;
      const subject = recv ?? args[0];
      if (LIST_FUNCS.has(name) && subject) cost += subject.size;
      else if (SCAN_FUNCS.has(name) && subject) cost += Math.ceil(subject.size / 10) + (args[0] && recv ? Math.ceil(args[0].size / 10) : 0);
      else if (REGEX_FUNCS.has(name) && subject) {
        // cel-go's estimate for matches (kube's for find/findAll): the string's traversal, offset by
        // one so an empty string still pays for the pattern, times one expression per 4 characters.
        const pattern = recv ? args[0] : args[1];
        cost += Math.ceil((subject.size + 1) * 0.1) * Math.ceil((pattern?.size ?? 1) * 0.25);
      }
      const size = name === 'size' ? 1 : (subject?.size ?? 1);
      return { cost, size };
    }
    case 'list': {
      let cost = 1;
      for (const x of a as Node[]) cost += est(x, scope, root).cost;
      return { cost, size: (a as Node[]).length };
    }
    case 'map': {
      let cost = 1;
      for (const [k, v] of a as Array<[Node, Node]>) cost += est(k, scope, root).cost + est(v, scope, root).cost;
      return { cost, size: (a as unknown[]).length };
    }
    case '?:': {
      const [c, t, f] = (a as Node[]).map((x) => est(x, scope, root)) as [Est, Est, Est];
      return { cost: c.cost + Math.max(t.cost, f.cost), size: Math.max(t.size, f.size) };
    }
    case '!_':
    case '-_': {
      const x = est(asNode(a), scope, root);
      return { cost: x.cost + 1, size: 1 };
    }
    default: {
      // Binary operators (and && ||).
      const parts = Array.isArray(a) ? (a as Node[]).map((x) => est(x, scope, root)) : [];
      let cost = 1;
      for (const p of parts) cost += p.cost;
      const [l, r] = parts;
      if (n.op === '==' || n.op === '!=' || n.op === '<' || n.op === '<=' || n.op === '>' || n.op === '>=') {
        cost += Math.ceil(Math.min(l?.size ?? 1, r?.size ?? 1) / 10);
      } else if (n.op === 'in') cost += r?.size ?? 1;
      else if (n.op === '+') {
        cost += Math.ceil(((l?.size ?? 1) + (r?.size ?? 1)) / 10);
        return { cost, size: (l?.size ?? 1) + (r?.size ?? 1) };
      }
      return { cost, size: 1 };
    }
  }
}

/** Estimated maximum cost of one evaluation of `ast` with `self` (and `oldSelf`) of schema `root`. */
export function estimateCost(ast: ASTNode, root: Structural): number {
  return est(asNode(ast), new Map(), root).cost;
}

/** upstream getCostErrorMessage. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
