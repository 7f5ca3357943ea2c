// Stored values as answers: a stored value is the object's JSON without metadata.resourceVersion
// (see encodeForStorage), so the answer is its bytes with `"resourceVersion":"<modRevision>",`
// spliced in right after the opening of metadata. These helpers write that splice straight into a
// caller's buffer: no Buffer per part, no string per resourceVersion, one copy of the value.

const RV_KEY = Buffer.from('"resourceVersion":"', 'latin1');
const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;

/** Whether `value` starts with `prefix` and has more after it (at least an object's closing bytes). */
export function splicable(value: Uint8Array, prefix: Uint8Array): boolean {
  const n = prefix.length;
  if (value.length <= n + 1) return false;
  for (let i = 0; i < n; i++) if (value[i] !== prefix[i]) return false;
  return true;
}

/** Decimal digits of a resourceVersion as `String(rv)` writes it (the plain case: a safe non-negative integer). */
function digitCount(rv: number): number {
  if (!(Number.isSafeInteger(rv) && rv >= 0)) return Buffer.byteLength(String(rv), 'latin1');
  let digits = 1;
  for (let x = rv; x >= 10; x = Math.floor(x / 10)) digits++;
  return digits;
}

/** Length of the spliced value (`value` must be splicable with a prefix of `prefixLength` bytes). */
export function splicedLength(value: Uint8Array, prefixLength: number, rv: number): number {
  // `"resourceVersion":"` + digits + `"`, and a comma unless metadata was empty.
  return value.length + RV_KEY.length + digitCount(rv) + 1 + (value[prefixLength] === CLOSE_BRACE ? 0 : 1);
}

/**
 * Writes `value` with `"resourceVersion":"<rv>"` spliced in after `prefix` (which it starts with,
 * see splicable) into `out` at `pos`; returns the position after it. `out` must have room for
 * splicedLength(value, prefix.length, rv) bytes from `pos`.
 */
export function writeSpliced(out: Uint8Array, pos: number, value: Uint8Array, prefix: Uint8Array, rv: number): number {
  const plen = prefix.length;
  const comma = value[plen] !== CLOSE_BRACE;
  const digits = digitCount(rv);
  const insert = RV_KEY.length + digits + 1 + (comma ? 1 : 0);
  // The whole value goes `insert` bytes further on: its remainder after the prefix lands where it
  // belongs, and the prefix and the resourceVersion then overwrite what lies before (including
  // the value's own copy of the prefix). One copy of the value, no subarray.
  out.set(value, pos + insert);
  out.set(prefix, pos);
  let p = pos + plen;
  for (let i = 0; i < RV_KEY.length; i++) out[p++] = RV_KEY[i]!;
  if (Number.isSafeInteger(rv) && rv >= 0) {
    let x = rv;
    for (let i = p + digits - 1; i >= p; i--) {
      out[i] = 0x30 + (x % 10);
      x = Math.floor(x / 10);
    }
  } else {
    const text = String(rv);
    for (let i = 0; i < digits; i++) out[p + i] = text.charCodeAt(i) & 0xff;
  }
  p += digits;
  out[p++] = QUOTE;
  if (comma) out[p] = COMMA;
  return pos + value.length + insert;
}
