// Reading a template the way opm does: sigs.k8s.io/yaml's Unmarshal/UnmarshalStrict into a Go struct.
// That is three steps, each with behaviour users see:
//  1. go-yaml v2 parses the first YAML document (YAML 1.1 scalars: `yes`/`on`/`y` are booleans,
//     `0x10` and `010` are integers; strict mode rejects duplicate keys, listing each by line);
//  2. the value becomes JSON, guided by the target struct: a scalar bound for a string field is
//     turned into that string (`image: 1.0` is "1"), and map keys end up sorted by their bytes;
//  3. encoding/json decodes it: keys match fields exactly or case-insensitively (`Schema`,
//     `GENERATEMAJORCHANNELS`), null leaves a field alone, a type mismatch or (strict) an unknown
//     field is an error, and only the first error, in sorted-key order, is reported.
// Messages are Go's: "error converting YAML to JSON: ...", "error unmarshaling JSON: while decoding
// JSON: json: unknown field \"x\"", "json: cannot unmarshal string into Go struct field ...".

import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node as YAMLNode } from 'yaml';
import { compareGoStrings, foldName, jsonKind } from '../golang/json.js';
import { formatFloat32, goQuote } from '../golang/strconv.js';

/** The Go type a template field decodes into (only the kinds templates use). */
export type GoType =
  | { readonly kind: 'string'; readonly goName: string }
  | { readonly kind: 'bool' }
  | { readonly kind: 'struct'; readonly goName: string; readonly short: string; readonly fields: readonly GoField[] }
  | { readonly kind: 'slice'; readonly goName: string; readonly elem: GoType };

export interface GoField {
  /** the json tag name */
  readonly name: string;
  readonly type: GoType;
}

export class GoDecodeError extends Error {
  override readonly name = 'GoDecodeError';
}

/** A YAML value after step 1: go-yaml's view of it (integers may be bigint, floats are numbers). */
type YValue = null | string | boolean | number | bigint | YValue[] | YMap;
interface YMap {
  readonly kind: 'map';
  readonly entries: [YValue, YValue][];
}

/**
 * sigs.k8s.io/yaml Unmarshal (strictYAML false, as opm v1.26 used with DisallowUnknownFields) or
 * UnmarshalStrict (strictYAML true, as opm ≥ v1.27 does). Returns the decoded object: fields by
 * their json names, present only when the input set them to something other than null.
 */
export function unmarshalYAMLInto(
  text: string,
  target: GoType,
  opts: { strictYAML: boolean; disallowUnknownFields: boolean; /** false: plain YAMLToJSON, not guided by the target */ guided?: boolean },
): Record<string, unknown> | undefined {
  let y: YValue;
  try {
    y = parseYAMLv2(text, opts.strictYAML);
  } catch (err) {
    throw new GoDecodeError(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  let json: JValue;
  try {
    json = toJSONable(y, opts.guided === false ? undefined : target);
    checkMarshalable(json);
  } catch (err) {
    throw new GoDecodeError(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  // json.Marshal wrote the map keys sorted, so the decoder meets them in that order
  const d = new Decoder(opts.disallowUnknownFields, true);
  const out = d.decode(json, target, undefined);
  if (d.firstError !== undefined) throw new GoDecodeError(`error unmarshaling JSON: while decoding JSON: ${d.firstError}`);
  return out as Record<string, unknown> | undefined;
}

/** json.Unmarshal of an already parsed JSON value (keys met in their source order). */
export function decodeJSONInto(value: unknown, target: GoType, opts: { disallowUnknownFields?: boolean } = {}): Record<string, unknown> | undefined {
  const d = new Decoder(opts.disallowUnknownFields ?? false, false);
  const out = d.decode(value, target, undefined);
  if (d.firstError !== undefined) throw new GoDecodeError(d.firstError);
  return out as Record<string, unknown> | undefined;
}

// ---- step 1: go-yaml v2 ----------------------------------------------------------------------

function parseYAMLv2(text: string, strict: boolean): YValue {
  const lc = new LineCounter();
  // failsafe: every scalar stays a string, and go-yaml's own resolution is applied below
  const docs = parseAllDocuments(text, { schema: 'failsafe', uniqueKeys: false, lineCounter: lc, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  const doc = list[0];
  if (doc === undefined) return null; // no document: go-yaml leaves the target untouched
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = lc.linePos(e.pos[0]).line;
    throw new Error(`yaml: line ${line}: ${e.message.split('\n')[0]}`);
  }
  const dups: string[] = [];
  const v = fromNode(doc.contents as YAMLNode | null, { doc, lc, dups: strict ? dups : undefined, visited: 0 }, 0);
  if (dups.length > 0) throw new Error(`yaml: unmarshal errors:\n${dups.map((d) => `  ${d}`).join('\n')}`);
  return v;
}

interface WalkContext {
  readonly doc: Document;
  readonly lc: LineCounter;
  /** where duplicate keys are reported (strict mode), else undefined */
  readonly dups: string[] | undefined;
  /** nodes visited, aliases expanded: bounded like go-yaml's excessive-aliasing check */
  visited: number;
}

const MAX_NODES = 1_000_000;

function fromNode(node: YAMLNode | null | undefined, ctx: WalkContext, depth: number): YValue {
  if (depth > 10_000) throw new Error('yaml: exceeded max depth of 10000');
  if (++ctx.visited > MAX_NODES) throw new Error('yaml: document contains excessive aliasing');
  if (node === null || node === undefined) return null;
  if (isAlias(node)) return fromNode(node.resolve(ctx.doc) ?? null, ctx, depth + 1);
  if (isScalar(node)) {
    const raw = node.value === null || node.value === undefined ? '' : String(node.value);
    const tag = node.tag;
    if (tag !== undefined && tag !== '!') return resolveTagged(tag, raw);
    if (node.type === 'PLAIN' || node.type === undefined) return resolvePlain(raw);
    return raw;
  }
  if (isMap(node)) {
    const entries: [YValue, YValue][] = [];
    const seen: YValue[] = [];
    for (const pair of node.items) {
      const keyNode = pair.key as YAMLNode | null;
      const k = fromNode(keyNode, ctx, depth + 1);
      if (k === '<<' && isScalar(keyNode) && keyNode.type === 'PLAIN') {
        // merge key: the merged map's entries, unless set explicitly
        const mergeCtx: WalkContext = { ...ctx, dups: undefined };
        const merged = fromNode(pair.value as YAMLNode | null, mergeCtx, depth + 1);
        ctx.visited = mergeCtx.visited;
        for (const m of Array.isArray(merged) ? merged : [merged]) {
          if (m !== null && typeof m === 'object' && !Array.isArray(m) && typeof m !== 'bigint') {
            for (const [mk, mv] of m.entries) if (!seen.some((s) => sameKey(s, mk))) entries.push([mk, mv]);
          }
        }
        continue;
      }
      const v = fromNode(pair.value as YAMLNode | null, ctx, depth + 1);
      const i = seen.findIndex((s) => sameKey(s, k));
      if (i >= 0) {
        if (ctx.dups !== undefined) {
          const offset = keyNode?.range?.[0] ?? 0;
          ctx.dups.push(`line ${ctx.lc.linePos(offset).line}: key ${goSharpV(k)} already set in map`);
        }
        const at = entries.findIndex(([ek]) => sameKey(ek, k));
        if (at >= 0) entries[at] = [k, v];
        continue;
      }
      seen.push(k);
      entries.push([k, v]);
    }
    return { kind: 'map', entries };
  }
  if (isSeq(node)) return node.items.map((it) => fromNode(it as YAMLNode | null, ctx, depth + 1));
  return null;
}

function sameKey(a: YValue, b: YValue): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a === 'number' && Number.isNaN(a)) return false;
  if (a !== null && typeof a === 'object') return false; // composite keys are never equal to go-yaml (not hashable)
  return a === b;
}

/** Go's %#v of a scalar key. */
function goSharpV(k: YValue): string {
  if (typeof k === 'string') return goQuote(k);
  if (k === null) return '<nil>';
  return String(k);
}

const BOOL_TRUE = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const BOOL_FALSE = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/** go-yaml v2's resolve() for an untagged plain scalar. */
export function resolvePlain(s: string): YValue {
  if (NULLS.has(s)) return null;
  if (BOOL_TRUE.has(s)) return true;
  if (BOOL_FALSE.has(s)) return false;
  if (/^\.(nan|NaN|NAN)$/.test(s)) return NaN;
  if (/^\+?\.(inf|Inf|INF)$/.test(s)) return Infinity;
  if (/^-\.(inf|Inf|INF)$/.test(s)) return -Infinity;
  const c = s[0]!;
  if (c === '.') {
    const f = goParseFloat(s);
    return f === undefined ? s : f;
  }
  if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    if (/^\d{4}-\d\d?-\d\d?([Tt ]|$)/.test(s)) return s; // a timestamp stays a string when decoded into interface{}
    const plain = s.replaceAll('_', '');
    const i = goParseInt(plain);
    if (i !== undefined) return i;
    if (YAML_FLOAT.test(plain)) {
      const f = goParseFloat(plain);
      if (f !== undefined) return f;
    }
  }
  return s;
}

function resolveTagged(tag: string, raw: string): YValue {
  switch (tag) {
    case 'tag:yaml.org,2002:str':
    case 'tag:yaml.org,2002:binary':
      return raw;
    case 'tag:yaml.org,2002:null':
      return null;
    default: {
      const r = resolvePlain(raw);
      return r;
    }
  }
}

/** strconv.ParseInt(s, 0, 64), then ParseUint; as go-yaml tries them. */
function goParseInt(s: string): number | bigint | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (m === null) return undefined;
  const [, sign, body] = m as unknown as [string, string, string];
  let n: bigint;
  if (/^0[xXbBoO]/.test(body)) n = BigInt(body.slice(0, 2).toLowerCase() + body.slice(2));
  else if (body.length > 1 && body[0] === '0') n = BigInt('0o' + body.slice(1));
  else n = BigInt(body);
  if (sign === '-') n = -n;
  if (n < -(1n << 63n) || n > (1n << 64n) - 1n || (sign === '-' && n > 0n)) return undefined;
  if (n > (1n << 63n) - 1n && sign !== '') return undefined; // ParseUint takes no sign
  return Number.isSafeInteger(Number(n)) ? Number(n) : n;
}

function goParseFloat(s: string): number | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

// ---- step 2: YAML value into JSON, guided by the target ---------------------------------------

type JValue = null | string | boolean | number | bigint | JValue[] | { [k: string]: JValue };

function toJSONable(v: YValue, target: GoType | undefined): JValue {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    // no prototype: a "__proto__" key is just a key
    const out = Object.create(null) as { [k: string]: JValue };
    for (const [k, val] of v.entries) {
      const key = keyString(k, val);
      let fieldType: GoType | undefined;
      if (target?.kind === 'struct') fieldType = findField(target, key)?.type;
      out[key] = toJSONable(val, fieldType);
    }
    return out;
  }
  if (Array.isArray(v)) {
    const elem = target?.kind === 'slice' ? target.elem : undefined;
    return v.map((e) => toJSONable(e, elem));
  }
  if (target?.kind === 'string' && v !== null && typeof v !== 'string') {
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint') return v.toString();
    if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return v.toString(); // go-yaml gave an int
    return formatFloat32(v);
  }
  return v;
}

function keyString(k: YValue, v: YValue): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (typeof k === 'bigint') return k.toString();
  if (typeof k === 'number') {
    if (Number.isInteger(k)) return k.toString();
    const s = formatFloat32(k);
    return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
  }
  throw new Error(`unsupported map key of type: ${k === null ? '<nil>' : Array.isArray(k) ? '[]interface {}' : 'map[interface {}]interface {}'}, key: ${k === null ? '<nil>' : '...'}, value: ${v === null ? '<nil>' : '...'}`);
}

/** json.Marshal refuses NaN and infinities. */
function checkMarshalable(v: JValue): void {
  if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`);
  if (Array.isArray(v)) v.forEach(checkMarshalable);
  else if (v !== null && typeof v === 'object') Object.values(v).forEach(checkMarshalable);
}

// ---- step 3: encoding/json -------------------------------------------------------------------

function findField(t: Extract<GoType, { kind: 'struct' }>, key: string): GoField | undefined {
  const exact = t.fields.find((f) => f.name === key);
  if (exact !== undefined) return exact;
  const k = foldName(key);
  return t.fields.find((f) => foldName(f.name) === k);
}

class Decoder {
  firstError: string | undefined;
  private readonly stack: string[] = [];
  private struct: string | undefined;

  constructor(
    private readonly disallowUnknown: boolean,
    private readonly sortKeys: boolean,
  ) {}

  private save(msg: string): void {
    if (this.firstError === undefined) this.firstError = msg;
  }

  private typeError(v: JValue, t: GoType): void {
    const goName = t.kind === 'bool' ? 'bool' : t.goName;
    if (this.struct !== undefined || this.stack.length > 0) {
      this.save(`json: cannot unmarshal ${jsonKind(v)} into Go struct field ${this.struct ?? ''}.${this.stack.join('.')} of type ${goName}`);
    } else {
      this.save(`json: cannot unmarshal ${jsonKind(v)} into Go value of type ${goName}`);
    }
  }

  /** Decodes v into a value of type t that may already hold `existing` (Go decodes in place). */
  decode(v: unknown, t: GoType, existing: unknown): unknown {
    const jv = v as JValue;
    if (jv === null) return existing; // null leaves the target alone
    switch (t.kind) {
      case 'string':
        if (typeof jv === 'string') return jv;
        this.typeError(jv, t);
        return existing;
      case 'bool':
        if (typeof jv === 'boolean') return jv;
        this.typeError(jv, t);
        return existing;
      case 'slice': {
        if (!Array.isArray(jv)) {
          this.typeError(jv, t);
          return existing;
        }
        const prev = Array.isArray(existing) ? existing : [];
        return jv.map((e, i) => this.decode(e, t.elem, i < prev.length ? prev[i] : zero(t.elem)));
      }
      case 'struct': {
        if (typeof jv !== 'object' || Array.isArray(jv)) {
          this.typeError(jv, t);
          return existing;
        }
        const out: Record<string, unknown> = { ...((existing as Record<string, unknown> | undefined) ?? {}) };
        const keys = Object.keys(jv);
        if (this.sortKeys) keys.sort(compareGoStrings);
        for (const key of keys) {
          const f = findField(t, key);
          if (f === undefined) {
            if (this.disallowUnknown) this.save(`json: unknown field ${goQuote(key)}`);
            continue;
          }
          const depth = this.stack.length;
          const savedStruct = this.struct;
          this.stack.push(f.name);
          this.struct = t.short;
          const r = this.decode(jv[key]!, f.type, out[f.name]);
          if (r !== undefined) out[f.name] = r;
          this.stack.length = depth;
          this.struct = savedStruct;
        }
        return out;
      }
    }
  }
}

function zero(t: GoType): unknown {
  switch (t.kind) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'slice':
      return undefined;
    case 'struct':
      return {};
  }
}
