// The CEL of MutatingAdmissionPolicy mutations (k8s.io/apiserver/pkg/cel/mutation): object
// construction `Object{spec: Object.spec{replicas: 1}}` for apply configurations and
// `JSONPatch{op: 'add', path: '/x', value: 1}` for JSON patches, and `jsonpatch.escapeKey(s)`.
//
// cel-js does not parse message construction (`Name{field: value}`), so before parsing an
// expression is rewritten: `T{f: e, ?g: o}` becomes `__kplane_object("T", {"f": dyn(e), ?"g": dyn(o)})`
// (`__kplane_jsonpatch({...})` for JSONPatch), a call the environment declares with the result
// type `Object` (or `JSONPatch`), so the type checker still tells an expression that does not
// evaluate to `Object` / `list(JSONPatch)` apart. Only `Object…` and `JSONPatch` are rewritten: any
// other `Name{` is left for the parser to refuse, as cel-go refuses an undeclared type.
//
// Values are typed maps: ObjectValue (its type name, e.g. `Object.spec`, and its fields) and
// JSONPatchValue. Upstream's dynamic object type also checks, when the result is used, that each
// nested initializer's type name is its parent's name plus the field (`Object.spec{selector:
// Object.spec.selector{}}`); checkTypeNames does the same here.

import type { SourceMap } from '../../apimachinery/cel/expressions.js';
import { Rewrite, isIdent, isIdentStart, literalEnd, skipSpace } from '../../apimachinery/cel/source.js';

/** An `Object…{}` initializer's value: its type name and its fields (CEL values). */
export class ObjectValue {
  constructor(
    readonly typeName: string,
    readonly fields: ReadonlyMap<string, unknown>,
  ) {}
}

/** A `JSONPatch{}` initializer's value. */
export class JSONPatchValue {
  constructor(readonly fields: ReadonlyMap<string, unknown>) {}
}

export const OBJECT_FUNCTION = '__kplane_object';
export const JSONPATCH_FUNCTION = '__kplane_jsonpatch';
export const ESCAPE_KEY_FUNCTION = '__kplane_jsonpatch_escape_key';

/** A CEL map literal's value (cel-js gives plain objects or Maps) as a Map. */
export function fieldsOf(m: unknown): Map<string, unknown> {
  if (m instanceof Map) return new Map(m as Map<string, unknown>);
  return new Map(Object.entries((m ?? {}) as Record<string, unknown>));
}

/** jsonpatch.escapeKey: a map key as one JSON pointer token (`~` → `~0`, `/` → `~1`). */
export const escapeKey = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Rewrites the object constructions and `jsonpatch.escapeKey` of `src` (see the file comment). */
export function rewriteConstructions(src: string): string {
  return rewriteRange(src, 0, src.length).text;
}

/** rewriteConstructions, with where each offset of the result comes from in `src`. */
export function rewriteConstructionsMapped(src: string): SourceMap {
  return rewriteRange(src, 0, src.length).map(src);
}

function rewriteRange(src: string, from: number, to: number): Rewrite {
  const out = new Rewrite();
  let i = from;
  while (i < to) {
    const c = src[i]!;
    if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      const end = nl < 0 || nl > to ? to : nl;
      out.copy(src, i, end);
      i = end;
      continue;
    }
    const lit = literalEnd(src, i);
    if (lit > 0) {
      out.copy(src, i, Math.min(lit, to));
      i = lit;
      continue;
    }
    if (isIdentStart(c) && !isIdent(src[i - 1])) {
      // An identifier chain `a.b.c`; a construction when it names Object… or JSONPatch and a `{` follows.
      let j = i;
      const names: string[] = [];
      for (;;) {
        const s = j;
        while (j < to && isIdent(src[j])) j++;
        names.push(src.slice(s, j));
        const k = skipSpace(src, j);
        if (src[k] === '.' && isIdentStart(src[skipSpace(src, k + 1)])) j = skipSpace(src, k + 1);
        else break;
      }
      const prev = out.text.trimEnd().slice(-1);
      const brace = skipSpace(src, j);
      const typeName = names.join('.');
      const constructs = prev !== '.' && src[brace] === '{' && (names[0] === 'Object' || typeName === 'JSONPatch');
      if (constructs) {
        const r = rewriteInitializer(src, i, brace, to, typeName);
        if (r) {
          out.append(r.out);
          i = r.end;
          continue;
        }
      }
      if (prev !== '.' && typeName === 'jsonpatch.escapeKey') {
        out.insert(ESCAPE_KEY_FUNCTION, i);
        i = j;
        continue;
      }
      out.copy(src, i, j);
      i = j;
      continue;
    }
    out.copy(src, i, i + 1);
    i++;
  }
  return out;
}

/** Index of the next top-level `,` or closing bracket from `i` (skipping strings and nesting). */
function expressionEnd(src: string, i: number, to: number): number {
  let depth = 0;
  while (i < to) {
    const lit = literalEnd(src, i);
    if (lit > 0) {
      i = lit;
      continue;
    }
    const c = src[i]!;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return i;
      depth--;
    } else if (c === ',' && depth === 0) return i;
    i++;
  }
  return to;
}

/**
 * `T{f: e, ...}` (its name at `at`, its `{` at `brace`) as the call; undefined when it is not a
 * field initializer list. The call's own text stands for the name, a field's for the field name.
 */
function rewriteInitializer(src: string, at: number, brace: number, to: number, typeName: string): { out: Rewrite; end: number } | undefined {
  const map = new Rewrite().insert('{', brace);
  let i = skipSpace(src, brace + 1);
  let first = true;
  while (src[i] !== '}') {
    // `?f: e`, an optional field (set only when the optional e has a value): an optional entry of
    // the map it becomes (source.ts parseCel).
    const optional = src[i] === '?';
    if (optional) i = skipSpace(src, i + 1);
    if (!isIdentStart(src[i])) return undefined;
    const s = i;
    while (isIdent(src[i])) i++;
    const name = src.slice(s, i);
    i = skipSpace(src, i);
    if (src[i] !== ':') return undefined;
    const e = expressionEnd(src, i + 1, to);
    if (e >= to) return undefined;
    if (!first) map.insert(', ', s);
    first = false;
    map
      .insert(`${optional ? '?' : ''}${JSON.stringify(name)}: dyn(`, s)
      .append(rewriteRange(src, i + 1, e))
      .insert(')', e);
    i = skipSpace(src, e);
    if (src[i] === ',') i = skipSpace(src, i + 1);
    else if (src[i] !== '}') return undefined;
  }
  map.insert('}', i);
  const out = new Rewrite();
  if (typeName === 'JSONPatch') out.insert(`${JSONPATCH_FUNCTION}(`, at);
  else out.insert(`${OBJECT_FUNCTION}(${JSON.stringify(typeName)}, `, at);
  return { out: out.append(map).insert(')', i), end: i + 1 };
}

/**
 * CheckTypeNamesMatchFieldPathNames: a nested initializer's type is its parent's type name and the
 * field (`Object.spec` in `Object{spec: …}`), also for the items of a list field.
 */
export function checkTypeNames(v: ObjectValue): string | undefined {
  for (const [field, value] of v.fields) {
    const want = `${v.typeName}.${field}`;
    const items = Array.isArray(value) ? (value as unknown[]) : [value];
    for (const item of items) {
      if (!(item instanceof ObjectValue)) continue;
      if (item.typeName !== want) return `expected type name ${want} for field ${field} of ${v.typeName}, but got ${item.typeName}`;
      const inner = checkTypeNames(item);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** A CEL value as JSON: ints as numbers, maps and initializers as objects. */
export function celToJSON(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === null || v === undefined || typeof v !== 'object') return v;
  if (v instanceof ObjectValue || v instanceof JSONPatchValue) return celToJSON(v.fields);
  if (Array.isArray(v)) return v.map(celToJSON);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString();
  const out: Record<string, unknown> = {};
  const entries = v instanceof Map ? [...(v as Map<unknown, unknown>)] : Object.entries(v);
  for (const [k, x] of entries) out[String(k)] = celToJSON(x);
  return out;
}
