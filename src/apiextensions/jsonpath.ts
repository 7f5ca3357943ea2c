// The JSONPath subset CRDs use (additionalPrinterColumns, scale paths): `.a.b`, `.a[0]`, `.a[*]`,
// `.a['k.with.dots']`, `..a` (recursive descent) and filters `[?(@.type=="Ready")]` with
// == != < <= > >= or bare existence. Results are in document order, like k8s.io/client-go/util/jsonpath.

type Seg =
  | { t: 'field'; name: string }
  | { t: 'wild' }
  | { t: 'index'; start: number; end?: number; step?: number; slice: boolean }
  | { t: 'recursive'; name: string }
  | { t: 'filter'; path: Seg[]; op?: string; value?: unknown };

export interface CompiledJSONPath {
  readonly source: string;
  find(obj: unknown): unknown[];
}

export class JSONPathError extends Error {}

const IDENT = /^[A-Za-z0-9_\-/$]+/;

function parse(src: string): Seg[] {
  let s = src.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1).trim();
  if (s.startsWith('$')) s = s.slice(1);
  const segs: Seg[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.') {
      if (s[i + 1] === '.') {
        const m = IDENT.exec(s.slice(i + 2));
        if (!m) throw new JSONPathError(`invalid recursive descent at ${i}`);
        segs.push({ t: 'recursive', name: m[0] });
        i += 2 + m[0].length;
        continue;
      }
      if (s[i + 1] === '*') {
        segs.push({ t: 'wild' });
        i += 2;
        continue;
      }
      const m = IDENT.exec(s.slice(i + 1));
      if (!m) {
        if (i + 1 === s.length) {
          i++;
          continue; // a trailing or lone '.' names the current object
        }
        throw new JSONPathError(`unrecognized character in action: ${JSON.stringify(s[i + 1])}`);
      }
      segs.push({ t: 'field', name: m[0] });
      i += 1 + m[0].length;
      continue;
    }
    if (c === '[') {
      const close = findClose(s, i);
      const inner = s.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') segs.push({ t: 'wild' });
      else if (/^'.*'$|^".*"$/.test(inner)) segs.push({ t: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) segs.push(parseFilter(inner.slice(2, -1).trim()));
      else if (/^-?\d*(:-?\d*)?(:-?\d*)?$/.test(inner) && inner !== '') {
        const parts = inner.split(':');
        const num = (x: string | undefined): number | undefined => (x === undefined || x === '' ? undefined : Number(x));
        if (parts.length === 1) segs.push({ t: 'index', start: Number(parts[0]), slice: false });
        else {
          const seg: Seg = { t: 'index', start: num(parts[0]) ?? 0, slice: true };
          const end = num(parts[1]);
          const step = num(parts[2]);
          if (end !== undefined) seg.end = end;
          if (step !== undefined) seg.step = step;
          segs.push(seg);
        }
      } else throw new JSONPathError(`invalid array index ${inner}`);
      continue;
    }
    throw new JSONPathError(`unrecognized character in action: ${JSON.stringify(c)}`);
  }
  return segs;
}

function findClose(s: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let j = open; j < s.length; j++) {
    const c = s[j]!;
    if (quote) {
      if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  throw new JSONPathError('unclosed array expect ]');
}

function parseFilter(expr: string): Seg {
  const m = /^@((?:\.[A-Za-z0-9_\-/]+|\[[^\]]*\])*)\s*(==|!=|<=|>=|<|>)?\s*(.*)$/.exec(expr);
  if (!m) throw new JSONPathError(`invalid filter ${expr}`);
  const path = parse(m[1] ?? '');
  if (!m[2]) {
    if (m[3]) throw new JSONPathError(`invalid filter ${expr}`);
    return { t: 'filter', path };
  }
  const raw = (m[3] ?? '').trim();
  let value: unknown;
  if (/^'.*'$|^".*"$/.test(raw)) value = raw.slice(1, -1);
  else if (raw === 'true' || raw === 'false') value = raw === 'true';
  else if (raw !== '' && !Number.isNaN(Number(raw))) value = Number(raw);
  else throw new JSONPathError(`invalid filter value ${raw}`);
  return { t: 'filter', path, op: m[2], value };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function step(values: unknown[], seg: Seg): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (seg.t) {
      case 'field':
        if (isObj(v) && Object.hasOwn(v, seg.name)) out.push(v[seg.name]);
        break;
      case 'wild':
        if (Array.isArray(v)) out.push(...(v as unknown[]));
        else if (isObj(v)) for (const k of Object.keys(v).sort()) out.push(v[k]);
        break;
      case 'index': {
        if (!Array.isArray(v)) break;
        if (!seg.slice) {
          const i = seg.start < 0 ? v.length + seg.start : seg.start;
          if (i >= 0 && i < v.length) out.push(v[i]);
          break;
        }
        const norm = (x: number): number => Math.min(Math.max(x < 0 ? v.length + x : x, 0), v.length);
        const start = norm(seg.start);
        const end = seg.end === undefined ? v.length : norm(seg.end);
        const by = seg.step && seg.step > 0 ? seg.step : 1;
        for (let i = start; i < end; i += by) out.push(v[i]);
        break;
      }
      case 'recursive':
        collect(v, seg.name, out);
        break;
      case 'filter': {
        const items = Array.isArray(v) ? v : [];
        for (const item of items) {
          const found = evaluate(seg.path, item);
          if (seg.op === undefined) {
            if (found.length > 0 && found[0] !== null && found[0] !== undefined) out.push(item);
            continue;
          }
          if (found.length > 0 && compare(found[0], seg.op, seg.value)) out.push(item);
        }
        break;
      }
    }
  }
  return out;
}

function collect(v: unknown, name: string, out: unknown[]): void {
  if (Array.isArray(v)) for (const x of v) collect(x, name, out);
  else if (isObj(v)) {
    if (Object.hasOwn(v, name)) out.push(v[name]);
    for (const k of Object.keys(v)) collect(v[k], name, out);
  }
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
  }
  // < and > compare a bigint (an int64 past 2^53) with a number exactly.
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    if (op === '<') return a < b;
    if (op === '<=') return a <= b;
    if (op === '>') return a > b;
    if (op === '>=') return a >= b;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    if (op === '<') return a < b;
    if (op === '<=') return a <= b;
    if (op === '>') return a > b;
    if (op === '>=') return a >= b;
  }
  return false;
}

function evaluate(segs: readonly Seg[], obj: unknown): unknown[] {
  let values: unknown[] = [obj];
  for (const s of segs) {
    values = step(values, s);
    if (values.length === 0) break;
  }
  return values;
}

/** Parses once; throws JSONPathError on syntax errors. */
export function compileJSONPath(source: string): CompiledJSONPath {
  const segs = parse(source);
  return { source, find: (obj) => evaluate(segs, obj) };
}

/** Plain dotted paths (`.spec.replicas`) as field names, for scale paths that are written to. */
export function simplePathFields(path: string): string[] {
  return path
    .split('.')
    .slice(1)
    .filter((p) => p !== '');
}

export function getPath(obj: unknown, fields: readonly string[]): unknown {
  let v: unknown = obj;
  for (const f of fields) {
    if (!isObj(v)) return undefined;
    v = v[f];
  }
  return v;
}

export function setPath(obj: Record<string, unknown>, fields: readonly string[], value: unknown): void {
  let v: Record<string, unknown> = obj;
  for (const f of fields.slice(0, -1)) {
    if (!isObj(v[f])) v[f] = {};
    v = v[f] as Record<string, unknown>;
  }
  v[fields[fields.length - 1]!] = value;
}
