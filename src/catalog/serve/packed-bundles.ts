// The served bundles as bytes: every bundle of the catalog encoded once, at start-up, as its api.Bundle
// message, and the messages packed back to back into a few large Buffers, with their field boundaries
// in typed arrays. The JS heap then holds a handful of objects for 30,000 bundles instead of the model's
// ~100 per bundle, which keeps V8's scavenges short while serving.
//
// A record is the message as protobufjs encodes the bundle (fields in declaration order; every set
// string written, empty or not), cut into segments:
//   A  csvName=1 packageName=2 channelName=3
//   B  csvJson=4 object=5 (when an object is the CSV itself, as for bundles made from olm.csv.metadata,
//      its copy is not stored: it is the csvJson field's bytes under the object field's tag)
//   C  bundlePath=6 .. properties=12
//   D  replaces=13 skips=14
//   E  deprecation=15
// The two forms the index serves are put together from them: "trimmed" (replaces and skips cleared:
// GetBundle and friends) and ListBundles' (csvJson and objects dropped when the bundle has an image).
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
const OBJECT_TAG = Buffer.from([TAG.object]);

// per record flags
const F_ERROR = 1;
/** one object is the csvJson text; its field is not stored (inserted at the B2/B3 split) */
const F_CSV_OBJECT = 2;
/** bundlePath is set (not ""): ListBundles drops csvJson and objects */
const F_HAS_PATH = 4;
/** D is exactly replaces="" without skips, so the trimmed form is the record itself */
const F_TRIMMED_D = 8;

// the segment boundaries kept per record (byte offsets into its chunk)
const START = 0;
const A_END = 1;
const B1_END = 2; // end of csvJson=4
const B2_END = 3; // end of the objects before the CSV's copy
const B_END = 4;
const C_END = 5;
const D_END = 6;
const E_END = 7;
const BOUNDS = 8;

const FIRST_CHUNK = 64 * 1024;
const MAX_CHUNK = 16 * 1024 * 1024;

function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** A message that cannot be served: the conversion error's text, given when it is asked for. */
export class PackedBundleError extends Error {
  override readonly name = 'PackedBundleError';
}

/** Appends api.Bundle records; `finish()` hands the packed bundles over. */
export class BundlePacker {
  private chunks: Buffer[] = [];
  private buf: Buffer = Buffer.allocUnsafeSlow(FIRST_CHUNK);
  private pos = 0;
  private count = 0;
  private bounds = new Uint32Array(BOUNDS * 256);
  private chunkOf = new Uint32Array(256);
  private flags = new Uint8Array(256);
  private readonly errors = new Map<number, string>();

  /** Adds a bundle (or the error that stops it being served) and returns its slot. */
  add(b: ApiBundle | PackedBundleError): number {
    const slot = this.count++;
    if (slot === this.flags.length) this.grow();
    if (b instanceof PackedBundleError) {
      this.flags[slot] = F_ERROR;
      this.errors.set(slot, b.message);
      return slot;
    }
    this.reserve(upperBound(b));
    this.chunkOf[slot] = this.chunks.length;
    const o = slot * BOUNDS;
    const bounds = this.bounds;
    let flags = 0;
    bounds[o + START] = this.pos;
    this.str(TAG.csvName, b.csvName);
    this.str(TAG.packageName, b.packageName);
    this.str(TAG.channelName, b.channelName);
    bounds[o + A_END] = this.pos;
    this.str(TAG.csvJson, b.csvJson);
    bounds[o + B1_END] = this.pos;
    const objects = b.object ?? [];
    // the first object that is the CSV's text is not stored again
    const csvAt = typeof b.csvJson === 'string' && b.csvJson !== '' ? objects.findIndex((x) => x === b.csvJson) : -1;
    if (csvAt >= 0) flags |= F_CSV_OBJECT;
    for (let i = 0; i < objects.length; i++) {
      if (i === csvAt) {
        bounds[o + B2_END] = this.pos;
        continue;
      }
      this.item(TAG.object, objects[i]);
    }
    if (csvAt < 0) bounds[o + B2_END] = this.pos;
    bounds[o + B_END] = this.pos;
    this.str(TAG.bundlePath, b.bundlePath);
    if (b.bundlePath !== '') flags |= F_HAS_PATH;
    for (const g of b.providedApis ?? []) this.gvk(TAG.providedApis, g);
    for (const g of b.requiredApis ?? []) this.gvk(TAG.requiredApis, g);
    this.str(TAG.version, b.version);
    this.str(TAG.skipRange, b.skipRange);
    for (const d of b.dependencies ?? []) this.typed(TAG.dependencies, d);
    for (const p of b.properties ?? []) this.typed(TAG.properties, p);
    bounds[o + C_END] = this.pos;
    this.str(TAG.replaces, b.replaces);
    for (const s of b.skips ?? []) this.item(TAG.skips, s);
    bounds[o + D_END] = this.pos;
    if (this.pos - bounds[o + C_END]! === 2 && this.buf[this.pos - 2] === TAG.replaces && this.buf[this.pos - 1] === 0) flags |= F_TRIMMED_D;
    if (b.deprecation != null) this.deprecation(b.deprecation);
    bounds[o + E_END] = this.pos;
    this.flags[slot] = flags;
    return slot;
  }

  /** The packed bundles; the packer is done with. */
  finish(): PackedBundles {
    // the last chunk is cut to its size when that frees much
    const last = this.pos < this.buf.length / 2 ? Buffer.from(this.buf.subarray(0, this.pos)) : this.buf.subarray(0, this.pos);
    const chunks = [...this.chunks, last];
    this.chunks = [];
    this.buf = Buffer.alloc(0);
    return new PackedBundles(
      chunks,
      this.bounds.slice(0, this.count * BOUNDS),
      this.chunkOf.slice(0, this.count),
      this.flags.slice(0, this.count),
      this.errors,
    );
  }

  private grow(): void {
    const n = this.flags.length * 2;
    const bounds = new Uint32Array(n * BOUNDS);
    bounds.set(this.bounds);
    this.bounds = bounds;
    const chunkOf = new Uint32Array(n);
    chunkOf.set(this.chunkOf);
    this.chunkOf = chunkOf;
    const flags = new Uint8Array(n);
    flags.set(this.flags);
    this.flags = flags;
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

  /** A string field as protobufjs writes a set one (left out only when null or undefined). */
  private str(tag: number, v: unknown): void {
    if (v == null) return;
    const s = typeof v === 'string' ? v : String(v);
    const len = Buffer.byteLength(s);
    this.buf[this.pos++] = tag;
    this.varint(len);
    this.utf8(s, len);
  }

  /** An element of a repeated string field: protobufjs writes every one (null as "null"). */
  private item(tag: number, v: unknown): void {
    this.str(tag, typeof v === 'string' ? v : String(v));
  }

  /** as protobufjs's BufferWriter writes: its own UTF-8 writer below 40 UTF-16 units, Node's above (they differ on lone surrogates) */
  private utf8(s: string, len: number): void {
    if (len === 0) return;
    if (s.length < 40) utf8Write(s, this.buf, this.pos);
    else (this.buf as NodeBuffer).utf8Write(s, this.pos, len);
    this.pos += len;
  }

  /** A nested message's string field: its size, or 0 when it is left out. */
  private static fieldSize(s: string | undefined, len: number): number {
    return s === undefined ? 0 : 1 + varintSize(len) + len;
  }

  private field(tag: number, s: string | undefined, len: number): void {
    if (s === undefined) return;
    this.buf[this.pos++] = tag;
    this.varint(len);
    this.utf8(s, len);
  }

  /** api.GroupVersionKind: group=1 version=2 kind=3 plural=4 */
  private gvk(tag: number, g: GroupVersionKind): void {
    const group = text(g.group);
    const version = text(g.version);
    const kind = text(g.kind);
    const plural = text(g.plural);
    const lg = byteLength(group);
    const lv = byteLength(version);
    const lk = byteLength(kind);
    const lp = byteLength(plural);
    const size = BundlePacker.fieldSize(group, lg) + BundlePacker.fieldSize(version, lv) + BundlePacker.fieldSize(kind, lk) + BundlePacker.fieldSize(plural, lp);
    this.buf[this.pos++] = tag;
    this.varint(size);
    this.field(0x0a, group, lg);
    this.field(0x12, version, lv);
    this.field(0x1a, kind, lk);
    this.field(0x22, plural, lp);
  }

  /** api.Dependency and api.Property: type=1 value=2 */
  private typed(tag: number, t: TypedValue): void {
    const type = text(t.type);
    const value = text(t.value);
    const lt = byteLength(type);
    const lv = byteLength(value);
    this.buf[this.pos++] = tag;
    this.varint(BundlePacker.fieldSize(type, lt) + BundlePacker.fieldSize(value, lv));
    this.field(0x0a, type, lt);
    this.field(0x12, value, lv);
  }

  /** api.Deprecation: message=1 */
  private deprecation(d: Deprecation): void {
    const message = text(d.message);
    const len = byteLength(message);
    this.buf[this.pos++] = TAG.deprecation;
    this.varint(BundlePacker.fieldSize(message, len));
    this.field(0x0a, message, len);
  }
}

/** Buffer's UTF-8 writer without the argument checks of Buffer#write (protobufjs uses it too). */
interface NodeBuffer extends Buffer {
  utf8Write(s: string, offset: number, length: number): number;
}

/** a field's text as protobufjs's fromObject makes it: String(v), or left out when null or undefined */
function text(v: unknown): string | undefined {
  return v == null ? undefined : typeof v === 'string' ? v : String(v);
}

function byteLength(s: string | undefined): number {
  return s === undefined ? 0 : Buffer.byteLength(s);
}

/** At most this many bytes for the record of b: 3 per UTF-16 unit, a tag and a length per field. */
function upperBound(b: ApiBundle): number {
  const str = (v: unknown): number => (v == null ? 0 : 6 + 3 * String(v).length);
  let n = str(b.csvName) + str(b.packageName) + str(b.channelName) + str(b.csvJson) + str(b.bundlePath) + str(b.version);
  n += str(b.skipRange) + str(b.replaces);
  for (const x of b.object ?? []) n += str(x);
  for (const x of b.skips ?? []) n += str(x);
  for (const g of b.providedApis ?? []) n += 6 + str(g.group) + str(g.version) + str(g.kind) + str(g.plural);
  for (const g of b.requiredApis ?? []) n += 6 + str(g.group) + str(g.version) + str(g.kind) + str(g.plural);
  for (const t of b.dependencies ?? []) n += 6 + str(t.type) + str(t.value);
  for (const t of b.properties ?? []) n += 6 + str(t.type) + str(t.value);
  if (b.deprecation != null) n += 6 + str(b.deprecation.message);
  return n;
}

/** The packed api.Bundle records, by slot. */
export class PackedBundles {
  constructor(
    private readonly chunks: Buffer[],
    private readonly bounds: Uint32Array,
    private readonly chunkOf: Uint32Array,
    private readonly flags: Uint8Array,
    private readonly errors: Map<number, string>,
  ) {}

  get size(): number {
    return this.flags.length;
  }

  /** The bundle with replaces and skips cleared (GetBundle, GetBundleForChannel, ...); a view when it can be. */
  trimmed(slot: number): Buffer {
    const f = this.flags[slot]!;
    if (f & F_ERROR) throw new PackedBundleError(this.errors.get(slot) ?? '');
    const c = this.chunks[this.chunkOf[slot]!]!;
    const o = slot * BOUNDS;
    const b = this.bounds;
    if (!(f & F_CSV_OBJECT)) {
      if (f & F_TRIMMED_D) return c.subarray(b[o + START], b[o + E_END]);
      return concat([c.subarray(b[o + START], b[o + C_END]), TRIMMED_D, c.subarray(b[o + D_END], b[o + E_END])]);
    }
    return concat([
      c.subarray(b[o + START], b[o + B2_END]),
      OBJECT_TAG,
      c.subarray(b[o + A_END]! + 1, b[o + B1_END]),
      c.subarray(b[o + B2_END], b[o + C_END]),
      TRIMMED_D,
      c.subarray(b[o + D_END], b[o + E_END]),
    ]);
  }

  /** The bundle as ListBundles sends it: replaces and skips kept; csvJson and objects dropped when it has an image. */
  listed(slot: number): Buffer {
    const f = this.flags[slot]!;
    if (f & F_ERROR) throw new PackedBundleError(this.errors.get(slot) ?? '');
    const c = this.chunks[this.chunkOf[slot]!]!;
    const o = slot * BOUNDS;
    const b = this.bounds;
    if (f & F_HAS_PATH) return concat([c.subarray(b[o + START], b[o + A_END]), LISTED_B, c.subarray(b[o + B_END], b[o + E_END])]);
    if (!(f & F_CSV_OBJECT)) return c.subarray(b[o + START], b[o + E_END]);
    return concat([
      c.subarray(b[o + START], b[o + B2_END]),
      OBJECT_TAG,
      c.subarray(b[o + A_END]! + 1, b[o + B1_END]),
      c.subarray(b[o + B2_END], b[o + E_END]),
    ]);
  }

  /** Bytes held: the records and their bounds. */
  byteLength(): number {
    let n = this.bounds.byteLength + this.chunkOf.byteLength + this.flags.byteLength;
    for (const c of this.chunks) n += c.length;
    return n;
  }
}

function concat(parts: Buffer[]): Buffer {
  let n = 0;
  for (const p of parts) n += p.length;
  return Buffer.concat(parts, n);
}
