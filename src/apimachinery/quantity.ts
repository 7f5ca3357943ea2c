// resource.Quantity (k8s.io/apimachinery/pkg/api/resource) as an exact rational with the format its
// text was written in, and its canonical String(): what the API server writes back for a
// quantity ("1000" is stored as "1k", "0.5" as "500m", "2048" as "2Ki" only when written in a binary
// suffix). Parsing errors are gotypes.ts's parseQuantityError (the body's decode refuses them first).

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const BIN_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;
const BIN_POW: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DEC_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DEC_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const QTY_RE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;

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

  /** ParseQuantity for a text that decodes (undefined otherwise); a JSON number is taken as its text. */
  static parse(v: unknown): Quantity | undefined {
    const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : undefined;
    if (s === undefined) return undefined;
    const m = QTY_RE.exec(s);
    if (!m) return undefined;
    const [, sign, ip = '', fp = '', suffix = ''] = m;
    if (ip === '' && fp === '') return undefined;
    let num = BigInt((ip || '0') + fp);
    let den = 10n ** BigInt(fp.length);
    if (sign === '-') num = -num;
    let format: QuantityFormat = 'DecimalSI';
    if (suffix in BIN_POW) {
      num *= 1024n ** BigInt(BIN_POW[suffix]!);
      format = 'BinarySI';
    } else {
      let e: number;
      if (suffix in DEC_EXP) e = DEC_EXP[suffix]!;
      else {
        e = Number(suffix.slice(1));
        format = 'DecimalExponent';
      }
      if (Math.abs(e) > 1000) return undefined;
      if (e >= 0) num *= 10n ** BigInt(e);
      else den *= 10n ** BigInt(-e);
    }
    return new Quantity(num, den, format);
  }

  sign(): number {
    return this.num < 0n ? -1 : this.num > 0n ? 1 : 0;
  }

  cmp(o: Quantity): number {
    const l = this.num * o.den;
    const r = o.num * this.den;
    return l < r ? -1 : l > r ? 1 : 0;
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
