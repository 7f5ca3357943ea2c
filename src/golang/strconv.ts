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
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += '\\ufffd'; // lone surrogate: Go sees invalid UTF-8
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

// ---------------------------------------------------------------------------------------------
// strconv's integer and boolean parsers with their *NumError texts. Each returns the value or the
// NumError; callers print err.message where Go prints err.Error() and never spell the words.

/** strconv.ErrSyntax's text. */
export const ERR_SYNTAX = 'invalid syntax';
/** strconv.ErrRange's text. */
export const ERR_RANGE = 'value out of range';

/**
 * strconv.NumError: the failing function (`ParseInt`, `ParseUint`, `Atoi`, `ParseBool`), the input
 * and the reason (ERR_SYNTAX, ERR_RANGE, `invalid base N`, `invalid bit size N`). Not an Error: no
 * stack is captured, since callers mostly rewrap or discard it.
 */
export class NumError {
  constructor(
    readonly func: string,
    readonly num: string,
    readonly err: string,
  ) {}

  /** NumError.Error(): `strconv.ParseInt: parsing "x": invalid syntax` (the input as Quote gives it). */
  get message(): string {
    return `strconv.${this.func}: parsing ${goQuote(this.num)}: ${this.err}`;
  }
}

const MAX_UINT64 = (1n << 64n) - 1n;

/** The digit value of the character code c in bases up to 36 (Go's lower() trick), or 99. */
function digitValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x7a ? l - 0x61 + 10 : 99;
}

/**
 * strconv.ParseUint(s, base, bitSize): base 0 reads a 0b/0o/0x/0 prefix and allows underscores
 * between digits; bitSize 0 is int (64 bits, as on the platforms kube runs on). Like Go, digits are
 * read left to right and overflow is reported as soon as it happens, even if a bad character
 * follows (`99999999999999999999x` is out of range, not a syntax error).
 */
export function parseGoUint(s: string, base = 10, bitSize = 64): bigint | NumError {
  const fn = 'ParseUint';
  if (s === '') return new NumError(fn, s, ERR_SYNTAX);
  const base0 = base === 0;
  let body = s;
  if (base0) {
    base = 10;
    if (s[0] === '0') {
      const p = s.length >= 3 ? s.charCodeAt(1) | 0x20 : 0;
      if (p === 0x62 /* b */) base = 2;
      else if (p === 0x6f /* o */) base = 8;
      else if (p === 0x78 /* x */) base = 16;
      else base = 8;
      body = s.slice(base === 8 && p !== 0x6f ? 1 : 2);
    }
  } else if (!(base >= 2 && base <= 36)) return new NumError(fn, s, `invalid base ${base}`);
  if (bitSize === 0) bitSize = 64;
  else if (bitSize < 0 || bitSize > 64) return new NumError(fn, s, `invalid bit size ${bitSize}`);
  // Decimal input that fits in 2^53 (every resourceVersion, limit, index) needs no bigint loop.
  if (base === 10 && body.length <= 15 && /^[0-9]+$/.test(body)) {
    const n = BigInt(body);
    return bitSize < 50 && n > (1n << BigInt(bitSize)) - 1n ? new NumError(fn, s, ERR_RANGE) : n;
  }
  const b = BigInt(base);
  const cutoff = MAX_UINT64 / b + 1n;
  const maxVal = (1n << BigInt(bitSize)) - 1n;
  let underscores = false;
  let n = 0n;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x5f /* _ */ && base0) {
      underscores = true;
      continue;
    }
    const d = digitValue(c);
    if (d >= base) return new NumError(fn, s, ERR_SYNTAX);
    if (n >= cutoff) return new NumError(fn, s, ERR_RANGE);
    n = n * b + BigInt(d);
    if (n > maxVal) return new NumError(fn, s, ERR_RANGE);
  }
  if (underscores && !underscoreOK(s)) return new NumError(fn, s, ERR_SYNTAX);
  return n;
}

/** strconv.ParseInt(s, base, bitSize): an optional sign, then ParseUint's rules (see parseGoUint). */
export function parseGoInt(s: string, base = 10, bitSize = 64): bigint | NumError {
  const fn = 'ParseInt';
  if (s === '') return new NumError(fn, s, ERR_SYNTAX);
  const neg = s[0] === '-';
  const un = parseGoUint(neg || s[0] === '+' ? s.slice(1) : s, base, bitSize);
  if (un instanceof NumError && un.err !== ERR_RANGE) return new NumError(fn, s, un.err);
  const size = bitSize === 0 ? 64 : bitSize;
  const cutoff = 1n << BigInt(size - 1);
  // A range error of ParseUint is one here too (its value, maxVal, is past the cutoff).
  if (un instanceof NumError || (!neg && un >= cutoff) || (neg && un > cutoff)) return new NumError(fn, s, ERR_RANGE);
  return neg ? -un : un;
}

/** strconv.Atoi(s): ParseInt(s, 10, 0) (int is 64 bits) with the error naming Atoi. */
export function goAtoi(s: string): bigint | NumError {
  const r = parseGoInt(s, 10, 0);
  return r instanceof NumError ? new NumError('Atoi', s, r.err) : r;
}

/** strconv.ParseBool(s): 1 t T TRUE true True, 0 f F FALSE false False. */
export function parseGoBool(s: string): boolean | NumError {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
    default:
      return new NumError('ParseBool', s, ERR_SYNTAX);
  }
}

/**
 * strconv's underscoreOK: with base 0, underscores may only separate digits (or follow a base
 * prefix), after an optional sign.
 */
export function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s[0] === '+' || s[0] === '-') s = s.slice(1);
  let hex = false;
  const p = s.length >= 2 && s[0] === '0' ? s.charCodeAt(1) | 0x20 : 0;
  if (p === 0x62 || p === 0x6f || p === 0x78) {
    i = 2;
    saw = '0'; // a base prefix counts as a digit for "underscore as digit separator"
    hex = p === 0x78;
  }
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (hex && (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)) {
      saw = '0';
      continue;
    }
    if (c === 0x5f) {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}
