// Go's time package, for the texts kube-apiserver prints: time.ParseDuration with its errors, and
// the quote() those errors (and time.Parse's) put values in.

/**
 * time's quote(): the UTF-8 bytes b[from:to] in double quotes, bytes outside printable ASCII as
 * \xNN (not strconv.Quote: time escapes every non-ASCII byte, even of a valid rune).
 */
export function timeQuoteBytes(b: Uint8Array, from = 0, to = b.length): string {
  let out = '"';
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c >= 0x80 || c < 0x20) out += '\\x' + (c < 16 ? '0' : '') + c.toString(16);
    else if (c === 0x22 || c === 0x5c) out += '\\' + String.fromCharCode(c);
    else out += String.fromCharCode(c);
  }
  return out + '"';
}

/** time's quote() of a string (its UTF-8 bytes). */
export function timeQuote(s: string): string {
  return timeQuoteBytes(Buffer.from(s, 'utf8'));
}

const UNIT_NS: Record<string, bigint> = { ns: 1n, us: 1_000n, 'µs': 1_000n, 'μs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };
const MAX_U63 = 1n << 63n;

/**
 * time.ParseDuration: nanoseconds, or its error text (`time: invalid duration "x"`, `time: missing
 * unit in duration "5"`, `time: unknown unit "x" in duration "5x"`). A bigint because int64
 * nanoseconds go past 2^53.
 */
export function parseGoDuration(s: string): { ns: bigint } | { error: string } {
  const invalid = { error: `time: invalid duration ${timeQuote(s)}` };
  let rest = s;
  let neg = false;
  if (rest[0] === '-' || rest[0] === '+') {
    neg = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return { ns: 0n };
  if (rest === '') return invalid;
  let total = 0n;
  while (rest !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const intDigits = m[1]!;
    const fracDigits = m[2];
    // The next character must be a digit or a point, and some digit must come before the unit.
    if (intDigits === '' && !fracDigits) return invalid;
    rest = rest.slice(m[0].length);
    let v = intDigits === '' ? 0n : BigInt(intDigits);
    if (v > MAX_U63) return invalid;
    // The fraction as Go's leadingFraction keeps it: digits until one more would overflow.
    let f = 0n;
    let scale = 1;
    for (const d of fracDigits ?? '') {
      const next = f * 10n + BigInt(d);
      if (f > (MAX_U63 - 1n) / 10n || next > MAX_U63) break;
      f = next;
      scale *= 10;
    }
    const unitText = /^[^\d.]*/.exec(rest)![0];
    if (unitText === '') return { error: `time: missing unit in duration ${timeQuote(s)}` };
    rest = rest.slice(unitText.length);
    const unit = UNIT_NS[unitText];
    if (unit === undefined) return { error: `time: unknown unit ${timeQuote(unitText)} in duration ${timeQuote(s)}` };
    if (v > MAX_U63 / unit) return invalid;
    v *= unit;
    if (f > 0n) {
      // float64, as Go computes it (nanosecond-exact for fractions of an hour).
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > MAX_U63) return invalid;
    }
    total += v;
    if (total > MAX_U63) return invalid;
  }
  if (neg) return { ns: -total };
  if (total > MAX_U63 - 1n) return invalid;
  return { ns: total };
}
