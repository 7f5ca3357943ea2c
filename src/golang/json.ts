// Go's encoding/json, as opm's output depends on it:
//  - writing: struct fields in declaration order, map keys sorted by their UTF-8 bytes, float64
//    numbers in Go's shortest form, strings escaped as Go escapes them (HTML escaping on for
//    json.Marshal, off for opm's writers), and json.Encoder's SetIndent layout;
//  - reading: the kind names of its type errors, its case-insensitive field matching, and values
//    kept with their source text (json.RawMessage) or as exact int64s (the k8s decoder).
// Error texts are built by json-errors.ts.
import { cannotUnmarshal, UNEXPECTED_END_OF_JSON } from './json-errors.js';
import { scanJSON } from './json-scanner.js';

export interface GoJSONOptions {
  /** indent unit (json.Encoder.SetIndent("", indent)); compact when absent */
  indent?: string;
  /** escape <, > and & as \u003c, \u003e, \u0026 (json.Marshal's default; opm's writers turn it off) */
  escapeHTML?: boolean;
  /**
   * write every object's keys sorted, as Go writes a map[string]interface{} (json.Marshal of a
   * decoded value); otherwise objects are written in goKeys order
   */
  sortKeys?: boolean;
}

// ---- values Go tells apart and JavaScript does not ----

/**
 * Property values built the way opm builds them in memory (json.Marshal, which escapes HTML) keep
 * those escapes when written: a json.RawMessage is copied, not re-escaped. Mark such a value with
 * htmlEscaped(value) and the writers escape <, > and & inside it even though they do not elsewhere.
 */
const HTML_ESCAPED = new WeakSet<object>();
export function htmlEscaped<T>(value: T): T {
  if (typeof value === 'object' && value !== null) HTML_ESCAPED.add(value);
  return value;
}
export function isHTMLEscaped(value: unknown): boolean {
  return typeof value === 'object' && value !== null && HTML_ESCAPED.has(value);
}

/**
 * Go tells a nil slice (written as null) from an empty one (written as []). A loaded channel or
 * deprecation without entries gets a nil slice: an empty array that the writers write as null.
 * (Copies of the array are ordinary empty arrays.)
 */
const NIL_SLICES = new WeakSet<unknown[]>();
export function nilSlice<T>(): T[] {
  const a: T[] = [];
  NIL_SLICES.add(a);
  return a;
}
export function isNilSlice(a: unknown): boolean {
  return Array.isArray(a) && a.length === 0 && NIL_SLICES.has(a);
}

/** Objects whose []byte field Go holds as nil (an icon without base64data: written as null). */
const NIL_BYTES = new WeakSet<object>();
export function markNilBytes<T extends object>(o: T): T {
  NIL_BYTES.add(o);
  return o;
}
export function hasNilBytes(o: object): boolean {
  return NIL_BYTES.has(o);
}

// ---- strings, numbers, key order ----

const HEX = '0123456789abcdef';
// Characters that need work: ", \, controls, <, >, &, U+2028, U+2029 and surrogates (lone ones are
// invalid UTF-8 to Go, which writes U+FFFD for them).
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

/** A string as Go's encoder writes it (encoding/json appendString). */
export function goString(s: string, escapeHTML = false): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c < 0x20) {
      switch (c) {
        case 0x08:
          rep = '\\b';
          break;
        case 0x0c:
          rep = '\\f';
          break;
        case 0x0a:
          rep = '\\n';
          break;
        case 0x0d:
          rep = '\\r';
          break;
        case 0x09:
          rep = '\\t';
          break;
        default:
          rep = '\\u00' + HEX[c >> 4] + HEX[c & 0xf];
      }
    } else if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = '\\\\';
    else if (escapeHTML && (c === 0x3c || c === 0x3e || c === 0x26)) rep = '\\u00' + HEX[c >> 4] + HEX[c & 0xf];
    else if (c === 0x2028) rep = '\\u2028';
    else if (c === 0x2029) rep = '\\u2029';
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++; // a valid pair: written as is
        continue;
      }
      rep = '\ufffd';
    } else if (c >= 0xdc00 && c <= 0xdfff) rep = '\ufffd';
    if (rep !== undefined) {
      out += s.slice(start, i) + rep;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

/** strconv.FormatFloat(f, 'g', -1, 64)'s spelling of the values JSON cannot hold. */
function nonFinite(n: number): string {
  return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
}

/**
 * A float64 as Go's encoder writes it ('f' form, or 'e' below 1e-6 and from 1e21 on); NaN and
 * infinities fail with json.Marshal's UnsupportedValueError text.
 */
export function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${nonFinite(n)}`);
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // JavaScript's Number#toString switches to exponent form at the same thresholds, with the same
  // shortest digits and the same exponent spelling (e-7, e+21) as Go after its cleanup.
  return String(n);
}

/**
 * Orders strings as Go does: by UTF-8 bytes, i.e. by code points. A lone surrogate is U+FFFD to
 * Go (its decoders replace it), so it sorts as that.
 */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if ((x >= 0xd800 && x <= 0xdfff) || (y >= 0xd800 && y <= 0xdfff)) return compareUTF8(a, b);
    return x < y ? -1 : 1;
  }
  // (a longer string is greater also when the common prefix ends in a lone high surrogate: the
  // longer one goes on with a pair, F0.. > EF.., or with U+FFFD's bytes and more)
  return a.length - b.length;
}

function compareUTF8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const INTEGER_KEY = /^(0|[1-9][0-9]*)$/;

/**
 * Keys of a plain object in the order Go writes them. Objects keep insertion order (a struct's field
 * order, or a decoded map's already sorted keys), except that JavaScript moves integer-like keys to
 * the front; only a Go map can have such keys, so such an object is sorted as Go sorts a map.
 */
export function goKeys(obj: Record<string, unknown>): string[] {
  const keys = Object.keys(obj);
  if (keys.length > 1 && INTEGER_KEY.test(keys[0]!)) keys.sort(compareGoStrings);
  return keys;
}

/** obj[key] = value, also for the key "__proto__" (an own member, as JSON.parse makes it). */
export function setMember(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/** Sorts an object's keys (recursively) the way a Go map[string]interface{} is written. */
export function sortedKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeysDeep);
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort(compareGoStrings)) setMember(out, k, sortedKeysDeep(obj[k]));
  return out;
}

// ---- the encoder ----

/**
 * value as Go's json.Encoder writes it (without the trailing newline Encode adds). Plain objects
 * are written in goKeys order (or sorted, with sortKeys); undefined members are left out (omitempty
 * fields are simply not set). A bigint is an integer written exactly.
 */
export function goJSON(value: unknown, opts: GoJSONOptions = {}): string {
  const parts: string[] = [];
  const indent = opts.indent ?? '';
  encode(value, indent, indent !== '' ? '\n' : '', opts.escapeHTML ?? false, opts.sortKeys ?? false, parts);
  return parts.join('');
}

/** json.Marshal of a decoded (map/slice/scalar) value: compact, object keys sorted, HTML escaped unless told not to. */
export function goMarshal(value: unknown, escapeHTML = true): string {
  return goJSON(value, { escapeHTML, sortKeys: true });
}

function encode(value: unknown, indent: string, nl: string, escapeHTML: boolean, sortKeys: boolean, out: string[]): void {
  switch (typeof value) {
    case 'string':
      out.push(goString(value, escapeHTML));
      return;
    case 'number':
      out.push(goNumber(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'bigint':
      out.push(value.toString());
      return;
    case 'object':
      break;
    default:
      out.push('null');
      return;
  }
  if (value === null) {
    out.push('null');
    return;
  }
  const esc = escapeHTML || HTML_ESCAPED.has(value);
  const inner = nl === '' ? '' : nl + indent;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push(NIL_SLICES.has(value) ? 'null' : '[]');
      return;
    }
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      out.push(inner);
      encode(value[i], indent, inner, esc, sortKeys, out);
    }
    out.push(nl, ']');
    return;
  }
  const obj = value as Record<string, unknown>;
  const keys = sortKeys ? Object.keys(obj).sort(compareGoStrings) : goKeys(obj);
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out.push(first ? '{' : ',', inner, goString(k, esc), nl === '' ? ':' : ': ');
    first = false;
    encode(v, indent, inner, esc, sortKeys, out);
  }
  out.push(first ? '{}' : nl + '}');
}

/**
 * Writes a struct the way Go does: fields in declaration order, each given as [name, encoded value];
 * a field whose value is undefined is left out (omitempty decided by the caller).
 */
export function goStruct(fields: readonly (readonly [string, string | undefined])[]): string {
  const parts: string[] = [];
  for (const [name, text] of fields) if (text !== undefined) parts.push(`${goString(name)}:${text}`);
  return `{${parts.join(',')}}`;
}

/** Removes insignificant whitespace from JSON text (Go's json.Compact, without escaping). */
export function compactJSON(raw: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (inStr) {
      out += c;
      if (c === '\\') out += raw[++i] ?? '';
      else if (c === '"') inStr = false;
    } else if (c === '"') {
      inStr = true;
      out += c;
    } else if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') {
      out += c;
    }
  }
  return out;
}

// ---- the decoder's view ----

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A name folded as encoding/json folds keys to match struct fields (ASCII case, plus the two
 * non-ASCII letters that fold onto ASCII ones: ſ onto S and the Kelvin sign onto K).
 */
export function foldName(s: string): string {
  let out = s.toUpperCase();
  if (out.length !== s.length || /[^\x00-\x7f]/.test(s)) {
    // toUpperCase goes further than Go's simple folding (ß → SS, ı → I); fold character by character
    out = '';
    for (const ch of s) {
      const c = ch.charCodeAt(0);
      if (c < 0x80) out += ch.toUpperCase();
      else if (ch === '\u017f') out += 'S';
      else if (ch === '\u212a') out += 'K';
      else out += ch;
    }
  }
  return out;
}

/**
 * A struct field as Go's decoder finds it: a key equal to the name, or equal to it when folded;
 * when several keys match, the last one in the object wins (each overwrites the field).
 */
export function field(obj: unknown, name: string): unknown {
  if (!isObject(obj)) return undefined;
  const folded = foldName(name);
  let found: unknown;
  for (const [k, v] of Object.entries(obj)) {
    if (k === name || foldName(k) === folded) found = v;
  }
  return found;
}

/**
 * The struct field a JSON key decodes into: the one named exactly so, else the first whose name
 * matches folded (encoding/json, and sigs.k8s.io/yaml when it looks for string fields).
 */
export function findField<F extends { readonly name: string }>(fields: readonly F[], key: string): F | undefined {
  const exact = fields.find((f) => f.name === key);
  if (exact !== undefined) return exact;
  const k = foldName(key);
  return fields.find((f) => foldName(f.name) === k);
}

/** A string field decoded as Go would: absent or null is "", another type is an error. */
export function stringField(obj: unknown, name: string, where: string): string {
  const v = field(obj, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(cannotUnmarshal(v, 'string', { struct: where, field: name }));
  return v;
}

/**
 * A JSON number as the k8s decoder keeps it: an integer that fits int64 stays exact (a bigint
 * beyond 2^53), anything else is a float64.
 */
export function jsonNumber(lit: string): number | bigint {
  const n = Number(lit);
  if (Number.isSafeInteger(n) || !/^-?\d+$/.test(lit)) return n;
  return int64OrFloat(BigInt(lit));
}

/** An integer as the k8s decoder reads it back from JSON: exact within int64, else a float64. */
export function int64OrFloat(b: bigint): number | bigint {
  if (b >= -9223372036854775808n && b <= 9223372036854775807n) {
    const n = Number(b);
    return Number.isSafeInteger(n) ? n : b;
  }
  return Number(b);
}

/** A parsed JSON value with the exact source text it came from (Go's json.RawMessage). */
export interface RawValue {
  readonly value: unknown;
  readonly raw: string;
  /** for objects: each member's RawValue, in source order */
  readonly members?: ReadonlyArray<readonly [string, RawValue]>;
  /** for arrays: each element's RawValue */
  readonly items?: readonly RawValue[];
}

/**
 * Parses the first JSON value of text (as json.Decoder does; what follows it is ignored unless
 * `whole`), keeping raw text for every value; numbers as jsonNumber reads them.
 */
export function parseRawJSON(text: string, whole = true): RawValue {
  let i = 0;
  const fail = (what: string): never => {
    // Go's words come from its scanner, which reads bytes (latin1: one character per byte).
    const r = scanJSON(Buffer.from(text).toString('latin1'), 0, { stream: !whole });
    if (r.kind === 'error') throw new Error(r.message);
    if (r.kind === 'eof') throw new Error(whole ? UNEXPECTED_END_OF_JSON : 'unexpected EOF');
    // (the scanner accepts what this reader does not: a number longer than it looks at)
    throw new Error(`invalid character '${text[i]}' ${what}`);
  };
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const value = (): RawValue => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: Array<readonly [string, RawValue]> = [];
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
      } else {
        for (;;) {
          ws();
          if (text[i] !== '"') fail('looking for beginning of object key string');
          const k = str();
          ws();
          if (text[i] !== ':') fail('after object key');
          i++;
          const v = value();
          members.push([k, v]);
          obj[k] = v.value;
          ws();
          if (text[i] === ',') {
            i++;
            continue;
          }
          if (text[i] === '}') {
            i++;
            break;
          }
          fail('after object key:value pair');
        }
      }
      return { value: obj, raw: text.slice(start, i), members };
    }
    if (c === '[') {
      i++;
      const items: RawValue[] = [];
      ws();
      if (text[i] === ']') {
        i++;
      } else {
        for (;;) {
          items.push(value());
          ws();
          if (text[i] === ',') {
            i++;
            continue;
          }
          if (text[i] === ']') {
            i++;
            break;
          }
          fail('after array element');
        }
      }
      return { value: items.map((x) => x.value), raw: text.slice(start, i), items };
    }
    if (c === '"') {
      const s = str();
      return { value: s, raw: text.slice(start, i) };
    }
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!m) fail('looking for beginning of value');
    i += m![0].length;
    const lit = m![0];
    const v = lit === 'true' ? true : lit === 'false' ? false : lit === 'null' ? null : jsonNumber(lit);
    return { value: v, raw: lit };
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 0x20) fail('in string literal');
      i++;
    }
    if (i >= text.length) fail('in string literal');
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('in string escape code'); // a bad escape: the scanner names it
    }
  };
  const v = value();
  if (whole) {
    ws();
    if (i < text.length) fail('after top-level value');
  }
  return v;
}
