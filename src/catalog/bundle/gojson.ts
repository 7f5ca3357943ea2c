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

/** Go's string encoding (encoding/json encodeState.string). */
export function goQuote(s: string, escapeHTML: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (escapeHTML && (c === 0x3c || c === 0x3e || c === 0x26))) {
      switch (c) {
        case 0x22:
          out += '\\"';
          break;
        case 0x5c:
          out += '\\\\';
          break;
        case 0x0a:
          out += '\\n';
          break;
        case 0x0d:
          out += '\\r';
          break;
        case 0x09:
          out += '\\t';
          break;
        case 0x08:
          out += '\\b';
          break;
        case 0x0c:
          out += '\\f';
          break;
        default:
          out += `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
      }
    } else if (c === 0x2028 || c === 0x2029) {
      out += c === 0x2028 ? '\\u2028' : '\\u2029';
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate is invalid UTF-8 once encoded; Go writes U+FFFD for it.
      const next = s.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else {
        out += '\ufffd';
      }
    } else {
      out += s[i];
    }
  }
  return out + '"';
}

/** Go compares strings bytewise (UTF-8); UTF-16 order differs only above the BMP. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
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
    const v = lit === 'true' ? true : lit === 'false' ? false : lit === 'null' ? null : Number(lit);
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
