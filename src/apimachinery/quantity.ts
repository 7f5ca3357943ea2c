// resource.Quantity (k8s.io/apimachinery/pkg/api/resource) as an exact rational with the format its
// text was written in, and its canonical String(): what the API server writes back for a
// quantity ("1000" is stored as "1k", "0.5" as "500m", "2048" as "2Ki" only when written in a binary
// suffix). parseQuantity is the one parser: the body's decode (gotypes.ts) takes its error texts,
// the CEL library and the quota code its values.

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BIN_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const BIN_EXP: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DEC_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };

/** ErrFormatWrong's text. */
export const ERR_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const ERR_NUMERIC = 'unable to parse numeric part of quantity';
const ERR_SUFFIX = "unable to parse quantity's suffix";
/** Exponents beyond this are valid text but too large to hold as an exact rational here. */
const MAX_EXACT_EXPONENT = 1000n;

const gcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a || 1n;
};

export class Quantity {
  readonly num: bigint;
  readonly den: bigint;

  constructor(
    num: bigint,
    den: bigint,
    readonly format: QuantityFormat = 'DecimalSI',
  ) {
    const g = gcd(num, den);
    this.num = num / g;
    this.den = den / g;
  }

  static fromInt(n: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(BigInt(n), 1n, format);
  }

  /** A JSON value as UnmarshalJSON reads it (a number as its text, a string trimmed); undefined when it does not parse. */
  static parse(v: unknown): Quantity | undefined {
    const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : undefined;
    return s === undefined ? undefined : parseQuantity(s).quantity;
  }

  sign(): number {
    return this.num < 0n ? -1 : this.num > 0n ? 1 : 0;
  }

  cmp(o: Quantity): number {
    const l = this.num * o.den;
    const r = o.num * this.den;
    return l < r ? -1 : l > r ? 1 : 0;
  }

  neg(): Quantity {
    return new Quantity(-this.num, this.den, this.format);
  }

  /** The sum, in this quantity's format (Quantity.Add keeps the receiver's). */
  add(o: Quantity): Quantity {
    return new Quantity(this.num * o.den + o.num * this.den, this.den * o.den, this.format);
  }

  /** Whether MilliValue() % 1000 == 0: the value rounded up to milli units is a whole number. */
  isInteger(): boolean {
    const milli = ceilDiv(this.num * 1000n, this.den);
    return milli % 1000n === 0n;
  }

  /** Quantity.String(): the canonical form. */
  toString(): string {
    if (this.num === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const small = this.num > -1024n * this.den && this.num < 1024n * this.den;
      if (small || this.den !== 1n) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let n = this.num;
      let p = 0;
      while (p < 6 && n % 1024n === 0n) {
        n /= 1024n;
        p++;
      }
      return `${n}${BIN_SUFFIXES[p]}`;
    }
    // Rounded up to nano units, then the largest exponent (a multiple of 3) that keeps it whole.
    let n = ceilDiv(this.num * 10n ** 9n, this.den);
    let e = -9;
    if (n === 0n) return '0';
    while (n % 1000n === 0n && e < 18) {
      n /= 1000n;
      e += 3;
    }
    if (format === 'DecimalExponent') return e === 0 ? `${n}` : `${n}e${e}`;
    return `${n}${DEC_SUFFIX[e]}`;
  }
}

/**
 * resource.ParseQuantity(str), untrimmed: Go's error text, or the quantity. The quantity is
 * undefined for two texts Go accepts: a sign or point with no digit ("-", "."; Go reads 0, kplane
 * refuses them) and an exponent beyond ±1000 (not held exactly here). No rounding to nano units.
 */
export function parseQuantity(str: string): { error: string; quantity?: undefined } | { error?: undefined; quantity: Quantity | undefined } {
  const parts = scanQuantity(str);
  if (typeof parts === 'string') return { error: parts };
  return { quantity: quantityOf(parts) };
}

/** resource.ParseQuantity(str)'s error text, or undefined; the body's decode checks without building the value. */
export function parseQuantityError(str: string): string | undefined {
  const parts = scanQuantity(str);
  return typeof parts === 'string' ? parts : undefined;
}

interface QuantityParts {
  readonly negative: boolean;
  /** the digits before and after the point, leading zeros stripped from `num` */
  readonly num: string;
  readonly denom: string;
  /** the text before the suffix; kplane refuses it without a digit */
  readonly value: string;
  readonly format: QuantityFormat;
  /** a power of 2 (BinarySI) or of 10 */
  readonly exponent: bigint;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** parseQuantityString and the suffix's interpretation: the parts, or Go's error. */
function scanQuantity(str: string): QuantityParts | string {
  if (str.length === 0) return ERR_QUANTITY_FORMAT;
  let pos = 0;
  const end = str.length;
  const negative = str[0] === '-';
  if (negative || str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return checkParts(negative, str, '0', '', ''); // only zeros (or a bare sign): Go reads 0
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return checkParts(negative, str, num, '', '');
  pos = i;
  if (num.length === 0) num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return checkParts(negative, str, num, denom, '');
    pos = i;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  i = pos;
  while (i < end && 'eEinumkKMGTP'.includes(str[i]!)) i++;
  if (i < end) {
    pos = i;
    if (str[pos] === '-' || str[pos] === '+') pos++;
    for (i = pos; i < end; i++) if (!isDigit(str[i])) return ERR_QUANTITY_FORMAT;
  }
  return checkParts(negative, value, num, denom, str.slice(suffixStart));
}

function checkParts(negative: boolean, value: string, num: string, denom: string, suffix: string): QuantityParts | string {
  let exponent: bigint;
  let format: QuantityFormat;
  if (suffix in DEC_EXP) {
    exponent = BigInt(DEC_EXP[suffix]!);
    format = 'DecimalSI';
  } else if (suffix in BIN_EXP) {
    exponent = BigInt(BIN_EXP[suffix]!);
    format = 'BinarySI';
  } else if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const rest = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(rest)) return ERR_SUFFIX;
    exponent = BigInt(rest);
    if (exponent < -(2n ** 63n) || exponent > 2n ** 63n - 1n) return ERR_SUFFIX; // strconv.ParseInt
    format = 'DecimalExponent';
  } else {
    return ERR_SUFFIX;
  }
  // Go tries an int64 fast path (which never fails when taken), then inf.Dec.SetString(value),
  // which needs a digit: so the only numeric error is a value without one.
  if (!fastPathTaken(num, denom, format, Number(BigInt.asIntN(32, exponent))) && !/[0-9]/.test(value)) return ERR_NUMERIC;
  return { negative, num, denom, value, format, exponent };
}

/** Whether ParseQuantity's int64 fast path holds the value (Go's precision and scale checks). */
function fastPathTaken(num: string, denom: string, format: QuantityFormat, exponent: number): boolean {
  let precision: number;
  let scale: number;
  let mantissa = 1n;
  if (format !== 'BinarySI') {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  } else {
    scale = 0;
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else precision = -1;
  }
  if (precision < 0) return false;
  scale -= denom.length;
  return scale >= -9 && BigInt(num + denom) * mantissa <= 2n ** 63n - 1n;
}

function quantityOf(p: QuantityParts): Quantity | undefined {
  if (!/[0-9]/.test(p.value)) return undefined;
  if (p.exponent > MAX_EXACT_EXPONENT || p.exponent < -MAX_EXACT_EXPONENT) return undefined;
  let num = BigInt(p.num + p.denom);
  let den = 10n ** BigInt(p.denom.length);
  if (p.negative) num = -num;
  if (p.format === 'BinarySI') num *= 2n ** p.exponent;
  else if (p.exponent >= 0n) num *= 10n ** p.exponent;
  else den *= 10n ** -p.exponent;
  return new Quantity(num, den, p.format);
}

/** Division rounding away from zero (inf.Dec's RoundUp, as AsScale rounds). */
function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : a < 0n ? q - 1n : q + 1n;
}

/** A ResourceList's quantities written as the server writes them back (canonical strings); values that do not parse stay. */
export function canonicalResourceList(list: unknown): Record<string, unknown> | undefined {
  if (!list || typeof list !== 'object' || Array.isArray(list)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(list as Record<string, unknown>)) {
    const q = Quantity.parse(v);
    out[k] = q ? q.toString() : v;
  }
  return out;
}
