// Go's time package, for the texts kube-apiserver prints: time.ParseDuration with its errors,
// time.Parse's errors for the RFC 3339 layouts metav1 uses, and the quote() both put values in.

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

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
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

// ---------------------------------------------------------------------------------------------
// time.Parse(time.RFC3339 | RFC3339Micro, s) of Go 1.24, errors only (metav1.Time / MicroTime).

const TIME_RE = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:[.,]\d+)?(?:Z|[+-](\d\d):(\d\d))$/;
const MICRO_RE = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)[.,]\d{6}(?:Z|[+-](\d\d):(\d\d))$/;
/** time.RFC3339, the layout of metav1.Time. */
export const RFC3339 = '2006-01-02T15:04:05Z07:00';
/** metav1.RFC3339Micro, the layout of metav1.MicroTime. */
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

const isDigitAt = (b: Uint8Array, i: number): boolean => i < b.length && b[i]! >= 48 && b[i]! <= 57;

/**
 * The error of time.Parse(layout, s) for the RFC 3339 layouts metav1 uses, or undefined. Go
 * parses the UTF-8 bytes; ParseError.Error() quotes the value, the layout and the elements.
 */
export function parseTimeError(s: string, micro: boolean): string | undefined {
  // Fast path: the usual well-formed value, checked without building the byte view.
  const m = (micro ? MICRO_RE : TIME_RE).exec(s);
  if (m !== null) {
    const month = +m[2]!;
    const day = +m[3]!;
    if (
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysIn(month, +m[1]!) &&
      +m[4]! < 24 &&
      +m[5]! < 60 &&
      +m[6]! < 60 &&
      (m[7] === undefined || (+m[7] <= 24 && +m[8]! <= 60))
    )
      return undefined;
  }
  const b = Buffer.from(s, 'utf8');
  const layout = micro ? RFC3339_MICRO : RFC3339;
  const parseErr = (layoutElem: string, at: number): string =>
    `parsing time ${timeQuoteBytes(b)} as "${layout}": cannot parse ${timeQuoteBytes(b, at)} as "${layoutElem}"`;
  const msgErr = (message: string): string => `parsing time ${timeQuoteBytes(b)}${message}`;
  const rangeErr = (what: string): string => msgErr(`: ${what} out of range`);

  let p = 0; // the remaining value is b[p:]
  const prefix = (ch: number, elem: string): string | undefined => {
    if (p >= b.length || b[p] !== ch) return parseErr(elem, p);
    p++;
    return undefined;
  };
  // getnum(value, fixed): one or two digits (two when fixed); -1 on error.
  const getnum = (fixed: boolean): number => {
    if (!isDigitAt(b, p)) return -1;
    if (!isDigitAt(b, p + 1)) {
      if (fixed) return -1;
      return b[p++]! - 48;
    }
    const n = (b[p]! - 48) * 10 + (b[p + 1]! - 48);
    p += 2;
    return n;
  };

  // 2006
  let hold = p;
  if (b.length - p < 4 || !isDigitAt(b, p) || !isDigitAt(b, p + 1) || !isDigitAt(b, p + 2) || !isDigitAt(b, p + 3)) return parseErr('2006', hold);
  const year = (b[p]! - 48) * 1000 + (b[p + 1]! - 48) * 100 + (b[p + 2]! - 48) * 10 + (b[p + 3]! - 48);
  p += 4;
  let e = prefix(45, '-');
  if (e) return e;
  // 01
  hold = p;
  const month = getnum(true);
  if (month < 0) return parseErr('01', hold);
  if (month === 0 || month > 12) return rangeErr('month');
  e = prefix(45, '-');
  if (e) return e;
  // 02 (validated against the month at the end)
  hold = p;
  const day = getnum(true);
  if (day < 0) return parseErr('02', hold);
  e = prefix(84, 'T');
  if (e) return e;
  // 15
  hold = p;
  const hour = getnum(false);
  if (hour < 0) return parseErr('15', hold);
  if (hour >= 24) return rangeErr('hour');
  e = prefix(58, ':');
  if (e) return e;
  // 04
  hold = p;
  const min = getnum(true);
  if (min < 0) return parseErr('04', hold);
  if (min >= 60) return rangeErr('minute');
  e = prefix(58, ':');
  if (e) return e;
  // 05, and a fraction the layout does not have (".123" or ",123")
  hold = p;
  const sec = getnum(true);
  if (sec < 0) return parseErr('05', hold);
  if (sec >= 60) return rangeErr('second');
  const commaOrPeriod = (i: number): boolean => i < b.length && (b[i] === 46 || b[i] === 44);
  if (!micro && commaOrPeriod(p) && isDigitAt(b, p + 1)) {
    p += 2;
    while (isDigitAt(b, p)) p++;
  }
  if (micro) {
    // .000000: exactly a separator and six characters, read by atoi (which allows a sign)
    hold = p;
    if (b.length - p < 7) return parseErr('.000000', hold);
    const ok = commaOrPeriod(p);
    p += 7;
    if (!ok) return parseErr('.000000', hold);
    let q = hold + 1;
    let neg = false;
    if (b[q] === 45 || b[q] === 43) {
      neg = b[q] === 45;
      q++;
    }
    if (q === p) {
      // atoi("") / atoi("-"): leadingInt reads nothing, which is not an error; the value is 0
    } else {
      for (let i = q; i < p; i++) if (!isDigitAt(b, i)) return parseErr('.000000', hold);
    }
    if (neg && q < p) {
      let nonZero = false;
      for (let i = q; i < p; i++) if (b[i] !== 48) nonZero = true;
      if (nonZero) return rangeErr('fractional second');
    }
  }
  // Z07:00
  hold = p;
  if (p < b.length && b[p] === 90) {
    p++;
  } else {
    if (b.length - p < 6 || b[p + 3] !== 58) return parseErr('Z07:00', hold);
    const sign = b[p]!;
    const hh = p + 1;
    const mm = p + 4;
    p += 6;
    const hDigits = isDigitAt(b, hh) && isDigitAt(b, hh + 1);
    const mDigits = hDigits && isDigitAt(b, mm) && isDigitAt(b, mm + 1);
    const hr = hDigits ? (b[hh]! - 48) * 10 + (b[hh + 1]! - 48) : 0;
    const mi = mDigits ? (b[mm]! - 48) * 10 + (b[mm + 1]! - 48) : 0;
    if (mi > 60) return rangeErr('time zone offset minute');
    if (hr > 24) return rangeErr('time zone offset hour');
    if (!mDigits || (sign !== 43 && sign !== 45)) return parseErr('Z07:00', hold);
  }
  if (p < b.length) return msgErr(`: extra text: ${timeQuoteBytes(b, p)}`);
  if (day < 1 || day > daysIn(month, year)) return msgErr(': day out of range');
  return undefined;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
