// JSON text exactly as Go's encoding/json writes it (the encoder opm's declcfg writers use):
// struct fields in declaration order, map keys sorted by their UTF-8 bytes, float64 numbers in Go's
// shortest form, strings escaped as Go escapes them, and json.Encoder's SetIndent layout.

export interface GoJSONOptions {
  /** indent unit (json.Encoder.SetIndent("", indent)); compact when absent */
  indent?: string;
  /** escape <, > and & as \u003c, \u003e, \u0026 (json.Marshal's default; opm's writers turn it off) */
  escapeHTML?: boolean;
}

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
        case 0x08: rep = '\\b'; break;
        case 0x0c: rep = '\\f'; break;
        case 0x0a: rep = '\\n'; break;
        case 0x0d: rep = '\\r'; break;
        case 0x09: rep = '\\t'; break;
        default: rep = '\\u00' + HEX[c >> 4] + HEX[c & 0xf];
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

/** A float64 as Go's encoder writes it ('f' form, or 'e' below 1e-6 and from 1e21 on). */
export function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${n}`);
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  // JavaScript's Number#toString switches to exponent form at the same thresholds, with the same
  // shortest digits and the same exponent spelling (e-7, e+21) as Go after its cleanup.
  return String(n);
}

/** Orders strings as Go does: by UTF-8 bytes, i.e. by code points. */
export function compareGoStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after every BMP character in UTF-8.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
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

/**
 * value as Go's json.Encoder writes it (without the trailing newline Encode adds). Plain objects
 * are written in goKeys order; undefined members are left out (omitempty fields are simply not set).
 */
export function goJSON(value: unknown, opts: GoJSONOptions = {}): string {
  const parts: string[] = [];
  encode(value, opts.indent ?? '', opts.indent !== undefined && opts.indent !== '' ? '\n' : '', opts.escapeHTML ?? false, parts);
  return parts.join('');
}

function encode(value: unknown, indent: string, nl: string, escapeHTML: boolean, out: string[]): void {
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
      encode(value[i], indent, inner, esc, out);
    }
    out.push(nl, ']');
    return;
  }
  const obj = value as Record<string, unknown>;
  const keys = goKeys(obj);
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out.push(first ? '{' : ',', inner, goString(k, esc), nl === '' ? ':' : ': ');
    first = false;
    encode(v, indent, inner, esc, out);
  }
  out.push(first ? '{}' : nl + '}');
}
