// Go's strconv, for the texts opm's messages and encoders print: Quote (%q) and FormatFloat.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** strconv.Quote (fmt's %q of a string): printable Unicode is kept (strconv.IsPrint), the rest escaped. */
export function goQuote(s: string): string {
  // Most values (times, addresses, header values) are printable ASCII without quotes or backslashes.
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) {
      plain = false;
      break;
    }
  }
  if (plain) return '"' + s + '"';
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (cp < 0x80 && cp >= 0x20 && cp !== 0x7f) out += ch;
    else if (ch === '\u0007') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x80) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd'; // lone surrogate: Go sees invalid UTF-8
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** The shortest decimal digits of a float32 (as float64 value x > 0) and the exponent of the first. */
function shortest32(x: number): [string, number] {
  for (let p = 1; p <= 9; p++) {
    const s = x.toExponential(p - 1);
    if (Math.fround(Number(s)) === x) return splitExponential(s);
  }
  return splitExponential(x.toExponential(8));
}

function splitExponential(s: string): [string, number] {
  const [mant, e] = s.split('e') as [string, string];
  return [mant.replace('.', '').replace(/0+$/, '') || '0', Number(e)];
}

/** strconv.FormatFloat(f, 'g', -1, 64) (fmt's %v of a float64). */
export function formatFloat64(f: number): string {
  return formatFloatG(f, 64);
}

/** strconv.FormatFloat(f, 'g', -1, 32): f rounded to a float32 first. */
export function formatFloat32(f: number): string {
  return formatFloatG(f, 32);
}

/**
 * The shortest digits that read back as the same float64 (or float32), in %e form when the
 * exponent is below -4 or at least 6.
 */
function formatFloatG(f: number, bits: 32 | 64): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  const x = bits === 32 ? Math.fround(f) : f;
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const sign = x < 0 ? '-' : '';
  const [digits, exp] = bits === 32 ? shortest32(Math.abs(x)) : splitExponential(Math.abs(x).toExponential());
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const a = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${a < 10 ? '0' + a : String(a)}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/**
 * strconv.ParseFloat(s, bitSize) for decimal and special values (inf, infinity and nan in any case);
 * Go also reads hexadecimal and underscored forms, which count as syntax errors here. The value
 * Go returns and whether it returned an error: 0 for a syntax error, ±Inf for a value out of range.
 */
export function parseGoFloat(s: string, bitSize: 32 | 64): { value: number; err: boolean } {
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) {
    const value = bitSize === 32 ? Math.fround(Number(s)) : Number(s);
    return { value, err: !Number.isFinite(value) };
  }
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (special === null) return { value: 0, err: true };
  if (special[2]!.toLowerCase() === 'nan') return special[1] === '' ? { value: NaN, err: false } : { value: 0, err: true };
  return { value: special[1] === '-' ? -Infinity : Infinity, err: false };
}
