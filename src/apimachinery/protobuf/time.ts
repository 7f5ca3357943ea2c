// metav1.Time / MicroTime conversions between their JSON strings and protobuf Timestamps.

/** Unix seconds of 0001-01-01T00:00:00Z, Go's zero time.Time (JSON null, empty protobuf). */
export const GO_ZERO_TIME_SECONDS = -62135596800;
const MIN_SECONDS = -62167219200; // 0000-01-01T00:00:00Z
const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z

// Go accepts a fraction of any length after the seconds, with '.' or ',' (time.Parse).
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Parses what Go's time.Parse(time.RFC3339, s) accepts; undefined when it would fail. */
export function parseRfc3339(s: string): { seconds: number; nanos: number } | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const d = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  d.setUTCFullYear(year, month - 1, day);
  if (d.getUTCDate() !== day) return undefined; // Go rejects "day out of range" instead of rolling over
  let seconds = d.getTime() / 1000 + hour * 3600 + minute * 60 + second;
  if (m[8]) {
    if (+m[9]! > 23 || +m[10]! > 59) return undefined; // "time zone offset out of range"
    const offset = +m[9]! * 3600 + +m[10]! * 60;
    seconds += m[8] === '+' ? -offset : offset;
  }
  const nanos = m[7] ? +(m[7] + '000000000').slice(0, 9) : 0;
  return { seconds, nanos };
}

/** Go's Time.MarshalJSON (seconds precision, UTC); throws outside years 0-9999 as Go does. */
export function formatTime(seconds: number): string {
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) throw new RangeError('Time.MarshalJSON: year outside of range [0,9999]');
  return new Date(seconds * 1000).toISOString().slice(0, 19) + 'Z';
}

/**
 * Go's MicroTime: nanos truncated toward zero to microseconds, then normalised into the second
 * as time.Unix does, then MarshalJSON's RFC3339 with exactly six fractional digits.
 */
export function formatMicroTime(seconds: number, nanos: number): string {
  let n = nanos - (nanos % 1000);
  if (n < 0 || n >= 1e9) {
    const carry = Math.floor(n / 1e9);
    seconds += carry;
    n -= carry * 1e9;
  }
  return formatTime(seconds).slice(0, 19) + '.' + String(n / 1000).padStart(6, '0') + 'Z';
}
