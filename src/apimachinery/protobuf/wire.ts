// Protobuf wire primitives. Hand-written instead of protobufjs' Writer/Reader because the codec
// needs Go's exact bytes (zero values written, fields by number, map keys sorted), Go's error texts
// on malformed input, and no recursion while skipping unknown groups (protobufjs recurses).

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

const TWO_32 = 4294967296;

/** A malformed-input error; `path` is filled in while unwinding so the message names the field. */
export class WireError extends Error {
  path = '';
  constructor(readonly base: string) {
    super(base);
  }
  at(field: string): this {
    this.path = this.path ? `${field}.${this.path}` : field;
    return this;
  }
  describe(): string {
    return this.path ? `${this.base} (field ${this.path})` : this.base;
  }
}

export const errUnexpectedEOF = (): WireError => new WireError('unexpected EOF');

export function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  let n = 4;
  let x = Math.floor(v / 0x10000000);
  while (x > 0) {
    n++;
    x = Math.floor(x / 128);
  }
  return n;
}

export class Writer {
  buf: Buffer;
  pos = 0;

  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  reset(): void {
    this.pos = 0;
  }

  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** An unsigned value below 2^32 (tags, lengths, non-negative int32). */
  uint32(v: number): void {
    this.ensure(5);
    const b = this.buf;
    let p = this.pos;
    while (v > 127) {
      b[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (hi) {
      b[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      b[p++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    b[p++] = lo;
    this.pos = p;
  }

  /** int32 and int64 alike: negatives are sign-extended to 10 bytes, as Go does. */
  int(v: number): void {
    if (v >= 0) {
      if (v < TWO_32) this.uint32(v);
      else this.varint64((v % TWO_32) >>> 0, Math.floor(v / TWO_32) >>> 0);
      return;
    }
    const a = -v;
    let lo = (a % TWO_32) >>> 0;
    let hi = Math.floor(a / TWO_32) >>> 0;
    lo = (~lo + 1) >>> 0;
    hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    this.varint64(lo, hi);
  }

  /** An int64 past 2^53 (a bigint, golang/json-int64.ts), exactly: its two's complement 64 bits. */
  bigint64(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.varint64(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  tag(field: number, wire: number): void {
    this.uint32(((field << 3) | wire) >>> 0);
  }

  string(s: string): void {
    const n = s.length;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (s.charCodeAt(i) > 127) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      this.uint32(n);
      this.ensure(n);
      const b = this.buf;
      const p = this.pos;
      if (n > 48) b.write(s, p, n, 'latin1');
      else for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i);
      this.pos = p + n;
      return;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    this.ensure(len);
    this.buf.write(s, this.pos, len, 'utf8');
    this.pos += len;
  }

  bytes(u: Uint8Array): void {
    this.uint32(u.length);
    this.ensure(u.length);
    this.buf.set(u, this.pos);
    this.pos += u.length;
  }

  /**
   * Starts a length-delimited value: one byte is reserved for its length and the body is moved
   * up in `close` when the length needs more. Bodies under 128 bytes (most) are never moved.
   */
  open(): number {
    this.ensure(1);
    return this.pos++;
  }

  close(start: number): void {
    const len = this.pos - start - 1;
    if (len < 128) {
      this.buf[start] = len;
      return;
    }
    const n = varintSize(len);
    this.ensure(n - 1);
    this.buf.copyWithin(start + n, start + 1, this.pos);
    this.pos += n - 1;
    const end = this.pos;
    this.pos = start;
    this.uint32(len);
    this.pos = end;
  }

  /** A copy of the bytes written so far, so the writer can be reused. */
  finish(prefix?: Uint8Array): Buffer {
    const extra = prefix ? prefix.length : 0;
    const out = Buffer.allocUnsafe(extra + this.pos);
    if (prefix) out.set(prefix, 0);
    this.buf.copy(out, extra, 0, this.pos);
    return out;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

export class Reader {
  /** Low and high 32 bits of the last varint read by `varint64`. */
  lo = 0;
  hi = 0;

  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    public end: number,
  ) {}

  varint64(): void {
    const b = this.buf;
    const end = this.end;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (shift >= 70) throw new WireError('proto: integer overflow');
      if (p >= end) throw errUnexpectedEOF();
      const c = b[p++]!;
      if (shift < 28) lo |= (c & 127) << shift;
      else if (shift === 28) {
        lo |= (c & 15) << 28;
        hi |= (c & 127) >> 4;
      } else hi |= (c & 127) << (shift - 32);
      if (c < 128) break;
    }
    this.pos = p;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  /** Tags, lengths, and small values: anything that fits 32 bits (high bits ignored). */
  uint32(): number {
    const b = this.buf;
    const p = this.pos;
    if (p < this.end && b[p]! < 128) {
      this.pos = p + 1;
      return b[p]!;
    }
    this.varint64();
    return this.lo;
  }

  int32(): number {
    this.varint64();
    return this.lo | 0;
  }

  /** int64 as JSON decoding gives it: a number, or a bigint past 2^53 (golang/json-int64.ts). */
  int64(): number | bigint {
    this.varint64();
    let n: number;
    if (this.hi >= 0x80000000) {
      // two's complement negative
      const lo = (~this.lo + 1) >>> 0;
      const hi = (~this.hi + (lo === 0 ? 1 : 0)) >>> 0;
      n = -(hi * TWO_32 + lo);
    } else {
      n = this.hi * TWO_32 + this.lo;
    }
    if (Number.isSafeInteger(n)) return n;
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo));
  }

  bool(): boolean {
    this.varint64();
    return this.lo !== 0 || this.hi !== 0;
  }

  /** Reads a length prefix and returns the end offset of the value it announces. */
  lengthEnd(): number {
    this.varint64();
    // Go reads lengths as int64: only the sign bit makes them negative; anything else too big is EOF.
    if (this.hi >= 0x80000000) throw new WireError('proto: negative length found during unmarshaling');
    if (this.hi !== 0 || this.pos + this.lo > this.end) throw errUnexpectedEOF();
    return this.pos + this.lo;
  }

  string(): string {
    const end = this.lengthEnd();
    const b = this.buf;
    const start = this.pos;
    this.pos = end;
    // TextDecoder's call overhead dominates for the short ASCII strings that make up most objects.
    // Invalid UTF-8 becomes U+FFFD, which is what Go's JSON encoder makes of it too.
    if (end - start < 32) {
      let s = '';
      for (let p = start; p < end; p++) {
        const c = b[p]!;
        if (c > 127) return utf8.decode(b.subarray(start, end));
        s += String.fromCharCode(c);
      }
      return s;
    }
    return utf8.decode(b.subarray(start, end));
  }

  bytes(): Uint8Array {
    const end = this.lengthEnd();
    const out = this.buf.subarray(this.pos, end);
    this.pos = end;
    return out;
  }

  /** Skips one value of the given wire type. Groups are skipped iteratively (any depth). */
  skip(wire: number): void {
    let depth = 0;
    for (;;) {
      switch (wire) {
        case WIRE_VARINT:
          this.varint64();
          break;
        case WIRE_FIXED64:
          if (this.pos + 8 > this.end) throw errUnexpectedEOF();
          this.pos += 8;
          break;
        case WIRE_LEN:
          this.pos = this.lengthEnd();
          break;
        case WIRE_START_GROUP:
          depth++;
          break;
        case WIRE_END_GROUP:
          if (depth === 0) throw new WireError('proto: unexpected end of group');
          depth--;
          break;
        case WIRE_FIXED32:
          if (this.pos + 4 > this.end) throw errUnexpectedEOF();
          this.pos += 4;
          break;
        default:
          throw new WireError(`proto: illegal wireType ${wire}`);
      }
      if (depth === 0) return;
      if (this.pos >= this.end) throw errUnexpectedEOF();
      wire = this.uint32() & 7;
    }
  }
}
