// The served bundles as bytes: every bundle of the catalog encoded once, at start-up, as its api.Bundle
// message, and the messages packed back to back into a few large Buffers, with their field boundaries
// in typed arrays. The JS heap then holds a handful of objects for 30,000 bundles instead of the model's
// ~100 per bundle, which keeps V8's scavenges short while serving.
//
// A bundle's message is kept as protobufjs encodes it (fields in declaration order; every set string
// written, empty or not), in segments:
//   A  csvName=1 packageName=2 channelName=3
//   B  csvJson=4 object=5
//   C  bundlePath=6 .. properties=12
//   D  replaces=13 skips=14
//   E  deprecation=15
// A, C, D and E make a bundle's record. B, the bulk (the CSV and the manifests), is stored on its own,
// so that the copies of a bundle in several channels share it; and an object that is the CSV itself
// (as for bundles made from olm.csv.metadata) is not stored twice: it is the csvJson field's bytes
// under the object field's tag. The two forms the index serves are put together from the segments:
// "trimmed" (replaces and skips cleared: GetBundle and friends) and ListBundles' (csvJson and objects
// dropped when the bundle has an image).
import protobuf from 'protobufjs';
import type { ApiBundle, Deprecation, GroupVersionKind, TypedValue } from '../api/api.js';

const utf8Write = protobuf.util.utf8.write;

/** wire type 2 (length-delimited) tags of api.Bundle's fields */
const TAG = {
  csvName: (1 << 3) | 2,
  packageName: (2 << 3) | 2,
  channelName: (3 << 3) | 2,
  csvJson: (4 << 3) | 2,
  object: (5 << 3) | 2,
  bundlePath: (6 << 3) | 2,
  providedApis: (7 << 3) | 2,
  requiredApis: (8 << 3) | 2,
  version: (9 << 3) | 2,
  skipRange: (10 << 3) | 2,
  dependencies: (11 << 3) | 2,
  properties: (12 << 3) | 2,
  replaces: (13 << 3) | 2,
  skips: (14 << 3) | 2,
  deprecation: (15 << 3) | 2,
} as const;

/** replaces="" and no skips: the D segment of every trimmed answer */
const TRIMMED_D = Buffer.from([TAG.replaces, 0]);
/** csvJson="" and no objects: the B segment of ListBundles' answer for a bundle with an image */
const LISTED_B = Buffer.from([TAG.csvJson, 0]);

// a record's flags
const F_ERROR = 1;
/** bundlePath is set (not ""): ListBundles drops csvJson and objects */
const F_HAS_PATH = 2;

// a record's bounds (byte offsets into its chunk): A is start..aEnd, C aEnd..cEnd, D cEnd..dEnd, E dEnd..eEnd
const R_START = 0;
const R_A_END = 1;
const R_C_END = 2;
const R_D_END = 3;
const R_E_END = 4;
const R_BOUNDS = 5;

// a B segment's bounds: csvJson=4 is start..b1End, the objects before the CSV's place b1End..b2End, the rest b2End..bEnd
const B_START = 0;
const B1_END = 1;
const B2_END = 2;
const B_END = 3;
const B_BOUNDS = 4;
/** B's flag: the CSV's copy among the objects goes at b2End */
const B_CSV_OBJECT = 1;

const FIRST_CHUNK = 64 * 1024;
const MAX_CHUNK = 16 * 1024 * 1024;

function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** A message that cannot be served: the conversion error's text, given when it is asked for. */
export class PackedBundleError extends Error {
  override readonly name = 'PackedBundleError';
}

/** A growable typed array of fixed-width rows. */
class Rows<T extends Uint32Array | Uint8Array> {
  count = 0;
  constructor(
    public data: T,
    private readonly width: number,
  ) {}

  /** Appends a zeroed row and returns its number. */
  push(): number {
    if ((this.count + 1) * this.width > this.data.length) {
      const next = new (this.data.constructor as new (n: number) => T)(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    return this.count++;
  }

  done(): T {
    return this.data.slice(0, this.count * this.width) as T;
  }
}

interface PackedArrays {
  /** per record: R_BOUNDS offsets, its chunk, its B segment, its flags */
  records: Uint32Array;
  recordChunk: Uint32Array;
  recordB: Uint32Array;
  recordFlags: Uint8Array;
  /** per B segment: B_BOUNDS offsets, its chunk, its flags */
  bs: Uint32Array;
  bChunk: Uint32Array;
  bFlags: Uint8Array;
  /** the conversion errors, by record */
  errors: Map<number, string>;
}

/** Appends api.Bundle records; `finish()` hands the packed bundles over. */
export class BundlePacker {
  private chunks: Buffer[] = [];
  private buf: Buffer = Buffer.allocUnsafeSlow(FIRST_CHUNK);
  private pos = 0;
  private readonly records = new Rows(new Uint32Array(R_BOUNDS * 256), R_BOUNDS);
  private readonly recordChunk = new Rows(new Uint32Array(256), 1);
  private readonly recordB = new Rows(new Uint32Array(256), 1);
  private readonly recordFlags = new Rows(new Uint8Array(256), 1);
  private readonly bs = new Rows(new Uint32Array(B_BOUNDS * 256), B_BOUNDS);
  private readonly bChunk = new Rows(new Uint32Array(256), 1);
  private readonly bFlags = new Rows(new Uint8Array(256), 1);
  private readonly errors = new Map<number, string>();

  /**
   * Adds a bundle (or the error that stops it being served) and returns its slot. With `objectsOf`,
   * the caller vouches that the bundle's csvJson and objects are those of that earlier slot's bundle:
   * they are not stored again.
   */
  add(b: ApiBundle | PackedBundleError, objectsOf?: number): number {
    const slot = this.records.push();
    this.recordChunk.push();
    this.recordB.push();
    this.recordFlags.push();
    if (b instanceof PackedBundleError) {
      this.recordFlags.data[slot] = F_ERROR;
      this.errors.set(slot, b.message);
      return slot;
    }
    const shared = objectsOf !== undefined && objectsOf < slot && !(this.recordFlags.data[objectsOf]! & F_ERROR);
    // the record and its B segment go in one chunk
    this.reserve(upperBound(b, !shared));
    this.recordChunk.data[slot] = this.chunks.length;
    const r = this.records.data;
    const o = slot * R_BOUNDS;
    r[o + R_START] = this.pos;
    this.str(TAG.csvName, b.csvName);
    this.str(TAG.packageName, b.packageName);
    this.str(TAG.channelName, b.channelName);
    r[o + R_A_END] = this.pos;
    this.str(TAG.bundlePath, b.bundlePath);
    for (const g of b.providedApis ?? []) this.gvk(TAG.providedApis, g);
    for (const g of b.requiredApis ?? []) this.gvk(TAG.requiredApis, g);
    this.str(TAG.version, b.version);
    this.str(TAG.skipRange, b.skipRange);
    for (const d of b.dependencies ?? []) this.typed(TAG.dependencies, d);
    for (const p of b.properties ?? []) this.typed(TAG.properties, p);
    r[o + R_C_END] = this.pos;
    this.str(TAG.replaces, b.replaces);
    for (const s of b.skips ?? []) this.item(TAG.skips, s);
    r[o + R_D_END] = this.pos;
    if (b.deprecation != null) this.deprecation(b.deprecation);
    r[o + R_E_END] = this.pos;
    this.recordFlags.data[slot] = b.bundlePath !== '' ? F_HAS_PATH : 0;
    this.recordB.data[slot] = shared ? this.recordB.data[objectsOf]! : this.addB(b);
    return slot;
  }

  /** Writes B (csvJson=4, object=5) where the record ends. */
  private addB(b: ApiBundle): number {
    const n = this.bs.push();
    this.bChunk.push();
    this.bFlags.push();
    this.bChunk.data[n] = this.chunks.length;
    const bounds = this.bs.data;
    const o = n * B_BOUNDS;
    bounds[o + B_START] = this.pos;
    this.str(TAG.csvJson, b.csvJson);
    bounds[o + B1_END] = this.pos;
    const objects = b.object ?? [];
    // the first object that is the CSV's text is not stored again
    const csvAt = typeof b.csvJson === 'string' && b.csvJson !== '' ? objects.indexOf(b.csvJson) : -1;
    for (let i = 0; i < objects.length; i++) {
      if (i === csvAt) bounds[o + B2_END] = this.pos;
      else this.item(TAG.object, objects[i]);
    }
    if (csvAt < 0) bounds[o + B2_END] = this.pos;
    else this.bFlags.data[n] = B_CSV_OBJECT;
    bounds[o + B_END] = this.pos;
    return n;
  }

  /** The packed bundles; the packer is done with. */
  finish(): PackedBundles {
    // the last chunk is cut to its size when that frees much
    const last = this.pos < this.buf.length / 2 ? Buffer.from(this.buf.subarray(0, this.pos)) : this.buf.subarray(0, this.pos);
    const chunks = [...this.chunks, last];
    this.chunks = [];
    this.buf = Buffer.alloc(0);
    return new PackedBundles(chunks, {
      records: this.records.done(),
      recordChunk: this.recordChunk.done(),
      recordB: this.recordB.done(),
      recordFlags: this.recordFlags.done(),
      bs: this.bs.done(),
      bChunk: this.bChunk.done(),
      bFlags: this.bFlags.done(),
      errors: this.errors,
    });
  }

  /** Room for n more bytes in the current chunk; a record never spans two chunks. */
  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos > 0) this.chunks.push(this.buf.subarray(0, this.pos));
    const next = Math.min(MAX_CHUNK, this.buf.length * 2);
    this.buf = Buffer.allocUnsafeSlow(Math.max(next, n));
    this.pos = 0;
  }

  private varint(n: number): void {
    const buf = this.buf;
    let pos = this.pos;
    while (n > 127) {
      buf[pos++] = (n & 127) | 128;
      n >>>= 7;
    }
    buf[pos++] = n;
    this.pos = pos;
  }

  /**
   * Writes a length prefix and what `write` writes after it. The bytes are written first, after room
   * for the prefix as `guess` (a length in bytes) needs it, and moved when the length turns out to need
   * another size (rare: only text far from ASCII), so no string is measured before it is written.
   */
  private delimited(guess: number, write: () => void): void {
    const guessed = varintSize(guess);
    const at = this.pos;
    const start = at + guessed;
    this.pos = start;
    write();
    const len = this.pos - start;
    const size = varintSize(len);
    if (size !== guessed) this.buf.copyWithin(at + size, start, start + len);
    this.pos = at;
    this.varint(len);
    this.pos += len;
  }

  /** A string field as protobufjs writes a set one (left out only when null or undefined). */
  private str(tag: number, v: unknown): void {
    if (v == null) return;
    const s = typeof v === 'string' ? v : String(v);
    this.buf[this.pos++] = tag;
    if (s.length < 40) {
      // at most 117 bytes: a one-byte length
      const at = this.pos++;
      const len = utf8Write(s, this.buf, this.pos);
      this.buf[at] = len;
      this.pos += len;
    } else {
      this.delimited(s.length, () => {
        this.pos += (this.buf as NodeBuffer).utf8Write(s, this.pos, this.buf.length - this.pos);
      });
    }
  }

  /** An element of a repeated string field: protobufjs writes every one (null as "null"). */
  private item(tag: number, v: unknown): void {
    this.str(tag, typeof v === 'string' ? v : String(v));
  }

  /** api.GroupVersionKind: group=1 version=2 kind=3 plural=4 */
  private gvk(tag: number, g: GroupVersionKind): void {
    this.buf[this.pos++] = tag;
    this.delimited(guessSize(g.group) + guessSize(g.version) + guessSize(g.kind) + guessSize(g.plural), () => {
      this.str(0x0a, g.group);
      this.str(0x12, g.version);
      this.str(0x1a, g.kind);
      this.str(0x22, g.plural);
    });
  }

  /** api.Dependency and api.Property: type=1 value=2 */
  private typed(tag: number, t: TypedValue): void {
    this.buf[this.pos++] = tag;
    this.delimited(guessSize(t.type) + guessSize(t.value), () => {
      this.str(0x0a, t.type);
      this.str(0x12, t.value);
    });
  }

  /** api.Deprecation: message=1 */
  private deprecation(d: Deprecation): void {
    this.buf[this.pos++] = TAG.deprecation;
    this.delimited(guessSize(d.message), () => this.str(0x0a, d.message));
  }
}

/** A nested string field's size if its text is ASCII (0 when it is left out). */
function guessSize(v: unknown): number {
  if (v == null) return 0;
  const n = typeof v === 'string' ? v.length : String(v).length;
  return 1 + varintSize(n) + n;
}

/** Buffer's UTF-8 writer without the argument checks of Buffer#write (protobufjs uses it too). */
interface NodeBuffer extends Buffer {
  utf8Write(s: string, offset: number, length: number): number;
}

/** At most this many bytes for a string field of v: 3 per UTF-16 unit, a tag and a length. */
function strBound(v: unknown): number {
  return v == null ? 0 : 6 + 3 * (typeof v === 'string' ? v.length : String(v).length);
}

/** At most this many bytes for the record of b, and its B segment when withB. */
function upperBound(b: ApiBundle, withB: boolean): number {
  let n = strBound(b.csvName) + strBound(b.packageName) + strBound(b.channelName) + strBound(b.bundlePath) + strBound(b.version);
  n += strBound(b.skipRange) + strBound(b.replaces);
  for (const x of b.skips ?? []) n += strBound(x);
  for (const g of b.providedApis ?? []) n += 6 + strBound(g.group) + strBound(g.version) + strBound(g.kind) + strBound(g.plural);
  for (const g of b.requiredApis ?? []) n += 6 + strBound(g.group) + strBound(g.version) + strBound(g.kind) + strBound(g.plural);
  for (const t of b.dependencies ?? []) n += 6 + strBound(t.type) + strBound(t.value);
  for (const t of b.properties ?? []) n += 6 + strBound(t.type) + strBound(t.value);
  if (b.deprecation != null) n += 6 + strBound(b.deprecation.message);
  if (withB) {
    n += strBound(b.csvJson);
    for (const x of b.object ?? []) n += strBound(x);
  }
  return n;
}

/** The packed api.Bundle messages, by slot. */
export class PackedBundles {
  private readonly records: Uint32Array;
  private readonly recordChunk: Uint32Array;
  private readonly recordB: Uint32Array;
  private readonly recordFlags: Uint8Array;
  private readonly bs: Uint32Array;
  private readonly bChunk: Uint32Array;
  private readonly bFlags: Uint8Array;
  private readonly errors: Map<number, string>;

  constructor(
    private readonly chunks: Buffer[],
    a: PackedArrays,
  ) {
    this.records = a.records;
    this.recordChunk = a.recordChunk;
    this.recordB = a.recordB;
    this.recordFlags = a.recordFlags;
    this.bs = a.bs;
    this.bChunk = a.bChunk;
    this.bFlags = a.bFlags;
    this.errors = a.errors;
  }

  get size(): number {
    return this.recordFlags.length;
  }

  /** The bundle with replaces and skips cleared (GetBundle, GetBundleForChannel, ...). */
  trimmed(slot: number): Buffer {
    return this.assemble(slot, true);
  }

  /** The bundle as ListBundles sends it: replaces and skips kept; csvJson and objects dropped when it has an image. */
  listed(slot: number): Buffer {
    return this.assemble(slot, false);
  }

  /** A, B, C, D (or the trimmed one) and E, copied into one new Buffer. */
  private assemble(slot: number, trimmed: boolean): Buffer {
    const flags = this.recordFlags[slot]!;
    if (flags & F_ERROR) throw new PackedBundleError(this.errors.get(slot) ?? '');
    const rc = this.chunks[this.recordChunk[slot]!]!;
    const o = slot * R_BOUNDS;
    const start = this.records[o + R_START]!;
    const aEnd = this.records[o + R_A_END]!;
    const cEnd = this.records[o + R_C_END]!;
    const dEnd = this.records[o + R_D_END]!;
    const eEnd = this.records[o + R_E_END]!;
    const bn = this.recordB[slot]!;
    const bc = this.chunks[this.bChunk[bn]!]!;
    const bo = bn * B_BOUNDS;
    const bStart = this.bs[bo + B_START]!;
    const b1End = this.bs[bo + B1_END]!;
    const b2End = this.bs[bo + B2_END]!;
    const bEnd = this.bs[bo + B_END]!;
    // ListBundles sends B as csvJson="" alone for a bundle with an image
    const withB = trimmed || (flags & F_HAS_PATH) === 0;
    const csvObject = withB && (this.bFlags[bn]! & B_CSV_OBJECT) !== 0;
    const size =
      aEnd -
      start +
      (withB ? bEnd - bStart : LISTED_B.length) +
      (csvObject ? b1End - bStart : 0) +
      (cEnd - aEnd) +
      (trimmed ? TRIMMED_D.length : dEnd - cEnd) +
      (eEnd - dEnd);
    const out = Buffer.allocUnsafe(size);
    let pos = rc.copy(out, 0, start, aEnd);
    if (withB) {
      pos += bc.copy(out, pos, bStart, b2End);
      if (csvObject) {
        out[pos++] = TAG.object;
        pos += bc.copy(out, pos, bStart + 1, b1End);
      }
      pos += bc.copy(out, pos, b2End, bEnd);
    } else {
      pos += LISTED_B.copy(out, pos);
    }
    if (trimmed) {
      pos += rc.copy(out, pos, aEnd, cEnd);
      pos += TRIMMED_D.copy(out, pos);
      rc.copy(out, pos, dEnd, eEnd);
    } else {
      rc.copy(out, pos, aEnd, eEnd);
    }
    return out;
  }

  /** Bytes held: the messages' segments and their bounds. */
  byteLength(): number {
    let n = this.records.byteLength + this.recordChunk.byteLength + this.recordB.byteLength + this.recordFlags.byteLength;
    n += this.bs.byteLength + this.bChunk.byteLength + this.bFlags.byteLength;
    for (const c of this.chunks) n += c.length;
    return n;
  }
}
