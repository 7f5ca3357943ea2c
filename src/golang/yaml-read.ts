// YAML read as opm's Go dependencies read it, in the three steps users see:
//  1. go-yaml v2 (go.yaml.in/yaml/v2, YAML 1.1) decodes the first document into interface{}:
//     plain scalars resolve as resolve.go does (yes/no/on/off/y/n are booleans, 0x/0o/0b and
//     leading-0 octal ints, underscores in numbers, timestamps kept as strings), ints stay apart from
//     floats, merge keys (<<) are applied in order, and strict mode reports every key set twice;
//  2. sigs.k8s.io/yaml turns that into something JSON can hold (convertToJSONableObject): map keys
//     become strings (floats as float32 %g), and a scalar bound for a Go string field becomes that
//     string;
//  3. the caller decodes the JSON (into float64s, the k8s decoder's int64s, or a struct).
// k8s.io/apimachinery's YAMLReader, which cuts a stream into documents at `---` lines, is here too.
// The parsing itself is eemeli/yaml's; its errors are turned into go-yaml's words by yamlerrors.ts.
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node as YAMLNode, type YAMLMap } from 'yaml';
import { findField, goNumber } from './json.js';
import { formatFloat32, formatFloat64, goQuote } from './strconv.js';
import { parseBlockYAML, UNSUPPORTED } from './yaml-block.js';
import { goYAMLError } from './yamlerrors.js';

// ---- step 1: scalars (resolve.go) ----

/** A value as go-yaml v2 decodes it into interface{}: an int (int/int64/uint64) is a bigint, a float64 a number. */
export type GoYAMLValue = null | string | boolean | number | bigint | GoYAMLValue[] | GoYAMLMap;

/** A map[interface{}]interface{}: keys in the order first set (a key set again keeps its place). */
export interface GoYAMLMap {
  readonly kind: 'map';
  readonly entries: [GoYAMLValue, GoYAMLValue][];
}

export type YAMLTag = 'str' | 'int' | 'float' | 'bool' | 'null' | 'timestamp' | 'merge';

const TAG_PREFIX = 'tag:yaml.org,2002:';
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

const RESOLVE_MAP = new Map<string, [YAMLTag, GoYAMLValue]>();
for (const s of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) RESOLVE_MAP.set(s, ['bool', true]);
for (const s of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) RESOLVE_MAP.set(s, ['bool', false]);
for (const s of ['', '~', 'null', 'Null', 'NULL']) RESOLVE_MAP.set(s, ['null', null]);
for (const s of ['.nan', '.NaN', '.NAN']) RESOLVE_MAP.set(s, ['float', NaN]);
for (const s of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) RESOLVE_MAP.set(s, ['float', Infinity]);
for (const s of ['-.inf', '-.Inf', '-.INF']) RESOLVE_MAP.set(s, ['float', -Infinity]);
RESOLVE_MAP.set('<<', ['merge', '<<']);

/** resolve.go's hint table: what the first byte says a plain scalar may be. */
function hint(c: number): 'S' | 'D' | 'M' | '.' | undefined {
  if (c === 0x2b || c === 0x2d) return 'S';
  if (c >= 0x30 && c <= 0x39) return 'D';
  if (c === 0x2e) return '.';
  // y Y n N t T f F o O ~
  if (c === 0x79 || c === 0x59 || c === 0x6e || c === 0x4e || c === 0x74 || c === 0x54 || c === 0x66 || c === 0x46 || c === 0x6f || c === 0x4f || c === 0x7e)
    return 'M';
  return undefined;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const GO_INT = /^([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)$/;

/** strconv.ParseInt(s, 0, 64), then ParseUint(s, 0, 64) (which takes no sign), as resolve tries them. */
function parseGoInt(s: string): bigint | undefined {
  const m = GO_INT.exec(s);
  if (m === null) return undefined;
  const body = m[2]!;
  let v: bigint;
  if (body.length > 1 && body[0] === '0' && body[1]! >= '0' && body[1]! <= '7') v = BigInt('0o' + body.slice(1));
  else v = BigInt(body.length > 1 && body[0] === '0' ? '0' + body[1]!.toLowerCase() + body.slice(2) : body);
  if (m[1] === '-') v = -v;
  if (v >= INT64_MIN && v <= INT64_MAX) return v;
  return m[1] === '' && v <= UINT64_MAX ? v : undefined;
}

/** underscoreOK from strconv: underscores only between digits (or after a base prefix). */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s[0] === '+' || s[0] === '-') s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/**
 * strconv.ParseFloat(s, 64) for the decimal forms that reach it here (a leading '.', or what
 * matched yamlStyleFloat); underscores between digits are allowed, overflow is an error.
 */
function parseGoFloat(s: string): number | undefined {
  if (!/^[+-]?([0-9_]+\.?[0-9_]*|\.[0-9_]+)([eE][+-]?[0-9_]+)?$/.test(s)) return undefined;
  if (s.includes('_')) {
    if (!underscoreOK(s)) return undefined;
    s = s.replaceAll('_', '');
  }
  const f = Number(s);
  return Number.isFinite(f) ? f : undefined;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const TIMESTAMP = [
  // 2006-1-2T15:4:5.999999999Z07:00 (also with t), 2006-1-2 15:4:5.999999999, 2006-1-2
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2})$/,
];

/** go-yaml v2's parseTimestamp (time.Parse with its layouts). */
export function isTimestamp(s: string): boolean {
  for (const re of TIMESTAMP) {
    const m = re.exec(s);
    if (m === null) continue;
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    if (month < 1 || month > 12 || day < 1) continue;
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    if (day > (month === 2 && !leap ? 28 : DAYS[month - 1]!)) continue;
    if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59)) continue;
    const zone = m[8];
    // (time.Parse's zone check is > 24 and > 60: some people write +24:00)
    if (zone !== undefined && zone !== 'Z' && (Number(zone.slice(1, 3)) > 24 || Number(zone.slice(4, 6)) > 60)) continue;
    return true;
  }
  return false;
}

/** resolve("", s) for a plain scalar (and the tag-checked resolutions): the tag and value. */
function resolveUntagged(s: string, timestamps: boolean): [YAMLTag, GoYAMLValue] {
  const h = s === '' ? 'M' : hint(s.charCodeAt(0));
  if (h === undefined) return ['str', s];
  const known = RESOLVE_MAP.get(s);
  if (known !== undefined) return known;
  if (h === '.') {
    const f = parseGoFloat(s);
    return f === undefined ? ['str', s] : ['float', f];
  }
  if (h === 'S' || h === 'D') {
    if (timestamps && isTimestamp(s)) return ['timestamp', s]; // decoded into interface{}: the text
    const plain = s.replaceAll('_', '');
    const i = parseGoInt(plain);
    if (i !== undefined) return ['int', i];
    if (YAML_STYLE_FLOAT.test(plain)) {
      const f = parseGoFloat(plain);
      if (f !== undefined) return ['float', f];
    }
    if (plain.startsWith('0b')) {
      const m = /^([+-]?)([01]+)$/.exec(plain.slice(2));
      if (m !== null) {
        const v = m[1] === '-' ? -BigInt('0b' + m[2]) : BigInt('0b' + m[2]);
        if ((v >= INT64_MIN && v <= INT64_MAX) || (m[1] === '' && v <= UINT64_MAX)) return ['int', v];
      }
    } else if (plain.startsWith('-0b') && /^[01]+$/.test(plain.slice(3))) {
      const v = -BigInt('0b' + plain.slice(3));
      if (v >= INT64_MIN) return ['int', v];
    }
  }
  return ['str', s];
}

/** The tag go-yaml v2 resolves a plain, untagged scalar to. */
export function plainTag(s: string): YAMLTag {
  if (s !== '' && hint(s.charCodeAt(0)) === undefined) return 'str'; // most strings: words
  return resolveUntagged(s, true)[0];
}

/**
 * go-yaml v2's value for a scalar decoded into interface{}: `tag` as written (long form, or '!'
 * or a local tag), undefined for none; `quoted` for a quoted or block scalar. Throws go-yaml's
 * error when the tag does not fit the text.
 */
export function resolveScalar(s: string, tag: string | undefined, quoted: boolean): GoYAMLValue {
  if (tag === undefined || tag === '') return quoted ? s : resolveUntagged(s, true)[1];
  const short = tag.startsWith(TAG_PREFIX) ? tag.slice(TAG_PREFIX.length) : undefined;
  switch (short) {
    case 'str':
      return s;
    case 'binary':
      return decodeBinary(s);
    case 'bool':
    case 'int':
    case 'float':
    case 'null':
    case 'timestamp': {
      const [rtag, value] = resolveUntagged(s, short === 'timestamp');
      if (rtag === short) return value;
      if (short === 'float' && rtag === 'int') return Number(value);
      throw new Error(`yaml: cannot decode !!${rtag} \`${s}\` as a !!${short}`);
    }
    default:
      return s; // not a tag go-yaml resolves ('!', local tags, !!set ...): the text
  }
}

function decodeBinary(s: string): string {
  const clean = s.replace(/[\t\n\r ]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(clean)) throw new Error('yaml: !!binary value contains invalid base64 data');
  return Buffer.from(clean, 'base64').toString('utf8');
}

/**
 * A plain scalar's value for the fast readers: as resolveScalar, with an int as a number when it
 * is a safe integer (a bigint beyond). Most scalars are words, answered without a lookup.
 */
export function resolvePlain(s: string): unknown {
  if (s !== '' && hint(s.charCodeAt(0)) === undefined) return s;
  const v = resolveUntagged(s, false)[1];
  if (typeof v !== 'bigint') return v;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

// ---- step 1: documents ----

export interface ReadOptions {
  /** yaml.UnmarshalStrict: a key set twice in a map is an error (listing every one, by line) */
  strict?: boolean;
}

export const MAX_DEPTH = 10_000;
const MAX_NODES = 1_000_000;

/**
 * Whether flow collections (`[`, `{`) or block sequence indicators on one line (`- - - x`) nest
 * deeper than `limit`, as go-yaml refuses them (`exceeded max depth`). Checked before the yaml
 * library parses: it recurses once per level, and a stack that deep can make V8 fail fatally while
 * compiling a regular expression (not a catchable RangeError). Quoted scalars and comments are
 * skipped; the count may overshoot on odd text, never undershoot.
 */
export function nestingExceeds(text: string, limit: number = MAX_DEPTH): boolean {
  if (text.length <= limit) return false;
  let flow = 0;
  let dashes = 0;
  let atLineIndent = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      atLineIndent = true;
      dashes = 0;
      continue;
    }
    if (c === 0x22 || c === 0x27) {
      // a quoted scalar: skip to its end ('' escapes a single quote, \ escapes in double quotes)
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (c === 0x22 && d === 0x5c) i++;
        else if (d === c) {
          if (c === 0x27 && text.charCodeAt(i + 1) === 0x27) i++;
          else break;
        }
      }
      atLineIndent = false;
      continue;
    }
    if (c === 0x23 && (i === 0 || text.charCodeAt(i - 1) === 0x20 || text.charCodeAt(i - 1) === 0x0a)) {
      while (i < text.length && text.charCodeAt(i) !== 0x0a) i++;
      i--;
      continue;
    }
    if (c === 0x5b || c === 0x7b) {
      if (++flow > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      if (flow > 0) flow--;
    } else if (atLineIndent && c === 0x2d && (text.charCodeAt(i + 1) === 0x20 || text.charCodeAt(i + 1) === 0x0a)) {
      if (++dashes > limit) return true;
    } else if (c !== 0x20 && c !== 0x09) {
      atLineIndent = false;
    }
  }
  return false;
}

interface WalkContext {
  readonly doc: Document;
  readonly lc: LineCounter;
  /** where keys set twice are reported (strict mode), else undefined */
  readonly dups: string[] | undefined;
  /** nodes visited, aliases expanded: bounded like go-yaml's excessive-aliasing check */
  visited: number;
}

/**
 * The first YAML document of text as go-yaml v2's Unmarshal decodes it into interface{} (null when
 * there is none); go-yaml's error otherwise.
 */
export function readGoYAML(text: string, opts: ReadOptions = {}): GoYAMLValue {
  if (nestingExceeds(text, MAX_DEPTH)) throw new Error(`yaml: exceeded max depth of ${MAX_DEPTH}`);
  const lc = new LineCounter();
  // failsafe: every scalar stays a string, and go-yaml's own resolution is applied below
  const docs = parseAllDocuments(text, { schema: 'failsafe', uniqueKeys: false, version: '1.1', lineCounter: lc });
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  if (doc === undefined) return null;
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const known = goYAMLError(text, { code: e.code, message: e.message, offset: e.pos[0] });
    if (known !== undefined) throw new Error(known);
    // eemeli/yaml messages carry a source excerpt after the first line
    const message = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new Error(`yaml: line ${lc.linePos(e.pos[0]).line}: ${message}`);
  }
  const ctx: WalkContext = { doc, lc, dups: opts.strict ? [] : undefined, visited: 0 };
  const v = fromNode(doc.contents, ctx, 0);
  if (ctx.dups !== undefined && ctx.dups.length > 0) throw new Error(`yaml: unmarshal errors:\n${ctx.dups.map((d) => `  ${d}`).join('\n')}`);
  return v;
}

/**
 * go-yaml v2's strict-mode complaints about text's first document, `line N: key "k" already set in
 * map`, one per key set twice, in the order it meets them (none when it does not parse: its decoder
 * then says why). sigs.k8s.io/yaml's strict YAMLToJSON reports them as "yaml: unmarshal errors:".
 */
export function goYAMLDuplicateKeys(text: string): string[] {
  if (nestingExceeds(text, MAX_DEPTH)) return [];
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { schema: 'failsafe', uniqueKeys: false, version: '1.1', lineCounter: lc });
  const doc = Array.isArray(docs) ? docs[0] : undefined;
  if (doc === undefined || doc.errors.length > 0) return [];
  const ctx: WalkContext = { doc, lc, dups: [], visited: 0 };
  try {
    fromNode(doc.contents, ctx, 0);
  } catch {
    return [];
  }
  return ctx.dups!;
}

function fromNode(node: YAMLNode | null | undefined, ctx: WalkContext, depth: number): GoYAMLValue {
  if (depth > MAX_DEPTH) throw new Error(`yaml: exceeded max depth of ${MAX_DEPTH}`);
  if (++ctx.visited > MAX_NODES) throw new Error('yaml: document contains excessive aliasing');
  if (node === null || node === undefined) return null;
  if (isAlias(node)) {
    const target = node.resolve(ctx.doc);
    if (target === undefined) throw new Error(`yaml: unknown anchor '${node.source}' referenced`);
    return fromNode(target, ctx, depth + 1);
  }
  if (isScalar(node)) {
    const raw = node.value === null || node.value === undefined ? '' : String(node.value);
    return resolveScalar(raw, node.tag, node.type !== 'PLAIN' && node.type !== undefined);
  }
  if (isSeq(node)) return node.items.map((it) => fromNode(it as YAMLNode | null, ctx, depth + 1));
  if (isMap(node)) {
    const m: GoYAMLMap = { kind: 'map', entries: [] };
    fillMap(m, node, ctx, depth);
    return m;
  }
  return null;
}

/** decoder.mapping into m: each pair set in order; a `<<` merges its maps into m right there. */
function fillMap(m: GoYAMLMap, node: YAMLMap, ctx: WalkContext, depth: number): void {
  for (const pair of node.items) {
    const keyNode = pair.key as YAMLNode | null;
    const valueNode = pair.value as YAMLNode | null;
    if (isMergeKey(keyNode)) {
      merge(m, valueNode, ctx, depth + 1);
      continue;
    }
    const k = fromNode(keyNode, ctx, depth + 1);
    if (Array.isArray(k) || isGoYAMLMap(k)) throw new Error(`yaml: invalid map key: ${goSharpV(k)}`);
    set(m, k, fromNode(valueNode, ctx, depth + 1), valueNode ?? keyNode, ctx);
  }
}

/** A `<<` key: plain (or tagged !!merge), not quoted. */
function isMergeKey(node: YAMLNode | null): boolean {
  if (!isScalar(node) || node.value !== '<<') return false;
  return node.tag === TAG_PREFIX + 'merge' || ((node.type === 'PLAIN' || node.type === undefined) && (node.tag === undefined || node.tag === '!'));
}

/** decoder.merge: a map, or a list of maps applied last to first (so earlier ones win among the list), each as if written here. */
function merge(m: GoYAMLMap, node: YAMLNode | null, ctx: WalkContext, depth: number): void {
  const wantMap = (): never => {
    throw new Error('yaml: map merge requires map or sequence of maps as the value');
  };
  const target = (n: YAMLNode | null): YAMLNode | null => (isAlias(n) ? ((n.resolve(ctx.doc) as YAMLNode | undefined) ?? null) : n);
  const sources = isSeq(node) ? [...(node.items as (YAMLNode | null)[])].reverse() : [node];
  if (!isSeq(node) && !isMap(target(node))) wantMap();
  for (const src of sources) {
    const t = target(src);
    if (!isMap(t)) wantMap();
    if (depth > MAX_DEPTH) throw new Error(`yaml: exceeded max depth of ${MAX_DEPTH}`);
    if (++ctx.visited > MAX_NODES) throw new Error('yaml: document contains excessive aliasing');
    fillMap(m, t as YAMLMap, ctx, depth + 1);
  }
}

/** decoder.setMapIndex: a key set again overwrites, or (strict) is reported by the line of its value. */
function set(m: GoYAMLMap, k: GoYAMLValue, v: GoYAMLValue, at: YAMLNode | null, ctx: WalkContext): void {
  const i = m.entries.findIndex(([ek]) => sameKey(ek, k));
  if (i < 0) {
    m.entries.push([k, v]);
    return;
  }
  if (ctx.dups !== undefined) {
    ctx.dups.push(`line ${ctx.lc.linePos(at?.range?.[0] ?? 0).line}: key ${goSharpV(k)} already set in map`);
    return;
  }
  m.entries[i] = [k, v];
}

function isGoYAMLMap(v: GoYAMLValue): v is GoYAMLMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go map key equality: same type and value (an int 1 and a float 1 are different keys; NaN is no key twice). */
function sameKey(a: GoYAMLValue, b: GoYAMLValue): boolean {
  return typeof a === typeof b && a === b;
}

/** fmt's %#v of a decoded YAML value. */
function goSharpV(v: GoYAMLValue): string {
  if (v === null) return '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'bigint') return v > INT64_MAX ? `0x${v.toString(16)}` : v.toString();
  if (typeof v === 'number') return formatFloat64(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  return `map[interface {}]interface {}{${v.entries.map(([k, x]) => `${goSharpV(k)}:${goSharpV(x)}`).join(', ')}}`;
}

// ---- step 2: sigs.k8s.io/yaml's conversion to JSON ----

/**
 * The Go type a decoded value is bound for, as far as the conversion cares: string fields, and the
 * structs (fields by json name) and slices around them; other kinds are left alone.
 */
export interface JSONTarget {
  readonly kind: string;
  readonly elem?: JSONTarget;
  readonly fields?: readonly { readonly name: string; readonly type: JSONTarget }[];
}

export interface ToJSONOptions {
  /** the Go value it will be decoded into (sigs.k8s.io/yaml.Unmarshal); none for YAMLToJSON */
  target?: JSONTarget;
  /**
   * how the JSON decoder reads an int back: float64 for interface{} targets (the default here), the
   * k8s decoder's int64 (int64OrFloat), or exact
   */
  int?: (v: bigint) => unknown;
}

/**
 * convertToJSONableObject, then json.Marshal's refusals (NaN, infinities): a value JSON can hold,
 * maps as plain objects (a "__proto__" key is an own member).
 */
export function toJSONValue(v: GoYAMLValue, opts: ToJSONOptions = {}): unknown {
  return convert(v, opts.target, opts.int ?? Number);
}

function convert(v: GoYAMLValue, target: JSONTarget | undefined, int: (v: bigint) => unknown): unknown {
  if (isGoYAMLMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v.entries) {
      const key = jsonKey(k, val);
      const field = target?.kind === 'struct' && target.fields !== undefined ? findField(target.fields, key) : undefined;
      const value = convert(val, field?.type, int);
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }
  if (Array.isArray(v)) return v.map((e) => convert(e, target?.kind === 'slice' ? target.elem : undefined, int));
  if (target?.kind === 'string' && v !== null && typeof v !== 'string') {
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint') return v.toString();
    return formatFloat32(v);
  }
  if (typeof v === 'bigint') return int(v);
  if (typeof v === 'number') goNumber(v); // NaN and infinities: json.Marshal's error
  return v;
}

/** A map key as sigs.k8s.io/yaml makes it a JSON object key. */
function jsonKey(k: GoYAMLValue, value: GoYAMLValue): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (typeof k === 'bigint' && k <= INT64_MAX) return k.toString();
  if (typeof k === 'number') {
    const s = formatFloat32(k);
    return s === '+Inf' ? '.inf' : s === '-Inf' ? '-.inf' : s === 'NaN' ? '.nan' : s;
  }
  const type = k === null ? '%!s(<nil>)' : 'uint64';
  throw new Error(`unsupported map key of type: ${type}, key: ${goSharpV(k)}, value: ${goSharpV(value)}`);
}

// ---- steps 1 and 2 for block-style documents, fast ----

class NotFinite extends Error {}

/**
 * One YAML document as sigs.k8s.io/yaml's YAMLToJSON makes it JSON, read back with `int` (float64
 * by default): by the block-style reader when it can (catalog files of tens of megabytes are
 * common, and a general YAML parser reads them at a few MB/s), else by the full parser, which is
 * also where .inf and .nan are reported. `fast: false` always takes the full parser.
 */
export function yamlToJSON(doc: string, opts: { int?: (v: bigint) => unknown; fast?: boolean } = {}): unknown {
  const int = opts.int ?? Number;
  if (opts.fast !== false) {
    let fast: unknown;
    try {
      fast = parseBlockYAML(doc, (s) => {
        const v = resolvePlain(s);
        if (typeof v === 'bigint') return int(v);
        if (typeof v === 'number' && !Number.isFinite(v)) throw new NotFinite();
        return v;
      });
    } catch (e) {
      if (!(e instanceof NotFinite)) throw e;
      fast = UNSUPPORTED;
    }
    if (fast !== UNSUPPORTED) return fast;
  }
  return toJSONValue(readGoYAML(doc), { int });
}

// ---- the stream: k8s.io/apimachinery's YAMLReader and YAMLOrJSONDecoder ----

/**
 * GuessJSONStream over the decoder's first `size` bytes: JSON when the first non-space character
 * within them is '{'.
 */
export function looksLikeJSON(text: string, size: number): boolean {
  // the first `size` bytes lie within the first `size` characters
  const head = Buffer.from(text.slice(0, size), 'utf8').subarray(0, size).toString('utf8');
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*\{/u.test(head);
}

/**
 * The YAMLReader's documents: a document ends at a line starting with `---` (followed by nothing
 * but spaces or a comment) once it has content; every line, the last one too, ends with a newline.
 * With `first`, stops after the first document.
 */
export function splitYAMLDocuments(text: string, first = false): string[] {
  const docs: string[] = [];
  // the current document is text[bufStart, bufEnd): whole lines, kept as slices of the text
  let bufStart = 0;
  let bufEnd = 0;
  const flush = (): void => {
    const chunk = text.slice(bufStart, bufEnd);
    docs.push(chunk.endsWith('\n') ? chunk : chunk + '\n');
  };
  let start = 0;
  const n = text.length;
  while (start < n) {
    let nl = text.indexOf('\n', start);
    if (nl < 0) nl = n;
    const lineEnd = nl < n ? nl + 1 : n;
    if (text.startsWith('---', start)) {
      const trimmed = text.slice(start + 3, nl).trim();
      if (trimmed.length > 0 && trimmed[0] !== '#') throw new YAMLSeparatorError(`invalid Yaml document separator: ${trimmed}`, docs.length);
      if (bufEnd > bufStart) {
        flush();
        if (first) return docs;
        bufStart = bufEnd = lineEnd;
        start = lineEnd;
        continue;
      }
    }
    if (bufEnd === bufStart) bufStart = start;
    bufEnd = lineEnd;
    start = lineEnd;
  }
  if (bufEnd > bufStart) flush();
  return docs;
}

/** A bad `---` line: the YAMLReader's error; `docIndex` is the document it would have started. */
export class YAMLSeparatorError extends Error {
  constructor(
    message: string,
    readonly docIndex: number,
  ) {
    super(message);
  }
}
