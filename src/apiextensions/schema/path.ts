// Small shared helpers: field.Path rendering, JSON deep copy/equality and Go's number printing.
// Kept dependency-free; every function here is on the custom-resource hot path or feeds messages.
import type { JsonValue } from '../../apimachinery/types.js';
import type { Structural } from './types.js';

/** field.Path.Child: `a.b`. An empty parent renders as the bare name, like a nil Path's child. */
export const child = (p: string, name: string): string => (p ? `${p}.${name}` : name);
/** field.Path.Key: `a[k]`. */
export const key = (p: string, k: string): string => `${p}[${k}]`;
/** field.Path.Index: `a[3]`. */
export const index = (p: string, i: number): string => `${p}[${i}]`;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** runtime.DeepCopyJSONValue. Recursion depth is bounded by the value itself, which the callers bound. */
export function deepCopyJSON<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = deepCopyJSON<unknown>(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const k in v) {
    if (Object.prototype.hasOwnProperty.call(v, k)) out[k] = deepCopyJSON((v as Record<string, unknown>)[k]);
  }
  return out as T;
}

/** reflect.DeepEqual on JSON values, with numbers compared by value (Go would also split int64/float64). */
export function deepEqualJSON(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqualJSON(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (!Object.prototype.hasOwnProperty.call(ao, k)) continue;
    if (ao[k] === undefined) continue;
    n++;
    if (!Object.prototype.hasOwnProperty.call(bo, k) || !deepEqualJSON(ao[k], bo[k])) return false;
  }
  let m = 0;
  for (const k in bo) if (Object.prototype.hasOwnProperty.call(bo, k) && bo[k] !== undefined) m++;
  return n === m;
}

/**
 * Go's `%v` for a float64 (strconv 'g', shortest): exponent form when the decimal exponent is
 * below -4 or at least 6, so 1e6 prints as `1e+06` where JS would print `1000000`.
 */
export function goFloat(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : x < 0 ? '-Inf' : 'NaN';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const e = x.toExponential(); // shortest round-trip digits, e.g. "1.5e+6"
  const [mant, expStr] = e.split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mant}e${exp < 0 ? '-' : '+'}${abs < 10 ? '0' : ''}${abs}`;
  }
  return String(x);
}

/** Go's `%v` for a JSON number as the unstructured decoder would hold it (int64 when integral). */
export function goNumber(x: number): string {
  return Number.isInteger(x) && Math.abs(x) < 2 ** 63 ? BigInt(x).toString() : goFloat(x);
}

/** True when `v` nests at most `depth` arrays/objects deep (stops early; no full traversal). */
export function depthAtMost(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return true;
  if (depth <= 0) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (!depthAtMost(x, depth - 1)) return false;
    return true;
  }
  for (const k in v as Record<string, unknown>) if (!depthAtMost((v as Record<string, unknown>)[k], depth - 1)) return false;
  return true;
}

const MAX_PRINT_DEPTH = 100;

/**
 * A bad value safe to put in a FieldIssue: messages print bad values recursively, so a hostile,
 * deeply nested value is replaced by a marker instead of overflowing the stack later.
 */
export function printable(v: unknown): unknown {
  return depthAtMost(v, MAX_PRINT_DEPTH) ? v : '<value nested too deeply to print>';
}

/**
 * Whether any node of a structural schema satisfies `pred`, memoized per node and predicate: the
 * embedded-resource and list-type walks skip subtrees that cannot contain what they look for.
 */
export function subtreeHas(s: Structural | undefined, pred: (s: Structural) => boolean, memo: WeakMap<Structural, boolean>): boolean {
  if (!s) return false;
  const hit = memo.get(s);
  if (hit !== undefined) return hit;
  let r = pred(s) || subtreeHas(s.items, pred, memo) || subtreeHas(s.additionalProperties?.structural, pred, memo);
  if (!r && s.properties)
    for (const p of s.properties.values())
      if (subtreeHas(p, pred, memo)) {
        r = true;
        break;
      }
  memo.set(s, r);
  return r;
}

export type { JsonValue };
