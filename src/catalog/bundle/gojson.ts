// JSON as Go's encoding/json writes and reads it, for the bytes opm derives from a bundle: the
// base64 of every olm.bundle.object is taken over json.Marshal output, so key order (sorted),
// string escapes (<, > and & as \u003c... when escaping HTML) and number forms must match exactly.

/** Go's json.Marshal of a decoded (map/slice/scalar) value: object keys sorted bytewise. */
export function goMarshal(v: unknown, escapeHTML = true): string {
  const out: string[] = [];
  write(v, escapeHTML, out);
  return out.join('');
}

function write(v: unknown, escapeHTML: boolean, out: string[]): void {
  if (v === null || v === undefined) {
    out.push('null');
  } else if (typeof v === 'string') {
    out.push(goQuote(v, escapeHTML));
  } else if (typeof v === 'number') {
    out.push(goNumber(v));
  } else if (typeof v === 'bigint') {
    out.push(v.toString()); // an int64 beyond 2^53, kept exact
  } else if (typeof v === 'boolean') {
    out.push(v ? 'true' : 'false');
  } else if (Array.isArray(v)) {
    out.push('[');
    v.forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, escapeHTML, out);
    });
    out.push(']');
  } else if (typeof v === 'object') {
    const keys = Object.keys(v).sort(compareBytes);
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(goQuote(k, escapeHTML), ':');
      write((v as Record<string, unknown>)[k], escapeHTML, out);
    });
    out.push('}');
  } else {
    throw new Error(`json: unsupported type: ${typeof v}`);
  }
}

/** Go's float64 encoding: the shortest round-trip digits, exponent form outside [1e-6, 1e21). */
export function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`json: unsupported value: ${Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf'}`);
  if (Object.is(n, -0)) return '-0';
  // JavaScript's Number#toString uses the same shortest digits and the same switch points
  // (1e21 and 1e-7 vs Go's 1e-6); only the small end differs, handled here.
  const abs = Math.abs(n);
  if (abs !== 0 && abs < 1e-6) return n.toExponential(); // e.g. 5e-7 (Go trims e-07 to e-7)
  return String(n);
}

const HEX = '0123456789abcdef';
const NEEDS_ESCAPE_HTML = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;
const ESCAPE_HTML_ALL = /["\\\u0000-\u001f<>&\u2028\u2029]|[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g;
const ESCAPE_ALL = /["\\\u0000-\u001f\u2028\u2029]|[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g;

function escapeChar(m: string): string {
  if (m.length === 2) return m; // a valid surrogate pair: written as is
  const c = m.charCodeAt(0);
  switch (c) {
    case 0x22:
      return '\\"';
    case 0x5c:
      return '\\\\';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x2028:
      return '\\u2028';
    case 0x2029:
      return '\\u2029';
  }
  // a lone surrogate is invalid UTF-8 once encoded: Go writes U+FFFD for it
  if (c >= 0xd800 && c <= 0xdfff) return '\ufffd';
  return `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
}

/** Go's string encoding (encoding/json encodeState.string). */
export function goQuote(s: string, escapeHTML: boolean): string {
  if (!(escapeHTML ? NEEDS_ESCAPE_HTML : NEEDS_ESCAPE).test(s)) return `"${s}"`;
  return `"${s.replace(escapeHTML ? ESCAPE_HTML_ALL : ESCAPE_ALL, escapeChar)}"`;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Go compares strings bytewise (UTF-8); UTF-16 order differs only when surrogates are involved. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * A struct field as Go's decoder finds it: a key equal to the name, or equal ignoring ASCII case;
 * when several keys match, the last one in the object wins (each overwrites the field).
 */
export function field(obj: unknown, name: string): unknown {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return undefined;
  const lower = name.toLowerCase();
  let found: unknown;
  for (const [k, v] of Object.entries(obj)) {
    if (k === name || k.toLowerCase() === lower) found = v;
  }
  return found;
}

/** A JSON value's kind in Go's error texts ("cannot unmarshal number into ..."). */
export function goKind(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'number';
  return typeof v;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A string field decoded as Go would: absent or null is "", another type is an error. */
export function stringField(obj: unknown, name: string, where: string): string {
  const v = field(obj, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${goKind(v)} into Go struct field ${where}.${name} of type string`);
  return v;
}

// ---- a JSON reader that keeps each value's source text (Go's json.RawMessage) ----

/** A parsed JSON value with the exact source text it came from. */
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
 * `whole`), keeping raw text for every value.
 */
export function parseRawJSON(text: string, whole = true): RawValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`invalid character ${i < text.length ? `'${text[i]}'` : 'EOF'} ${what}`);
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
          if (text[i] !== ':') fail("after object key");
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
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value();
  if (whole) {
    ws();
    if (i < text.length) fail('after top-level value');
  }
  return v;
}

/**
 * A JSON number as the k8s decoder keeps it: an integer that fits int64 stays exact (a bigint
 * beyond 2^53), anything else is a float64.
 */
export function jsonNumber(lit: string): number | bigint {
  const n = Number(lit);
  if (Number.isSafeInteger(n) || !/^-?\d+$/.test(lit)) return n;
  const b = BigInt(lit);
  return b >= -9223372036854775808n && b <= 9223372036854775807n ? b : n;
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
