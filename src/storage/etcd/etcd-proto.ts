// Hand-written protobuf encoding of the few etcd v3 messages the etcd backend sends and receives
// (etcdserverpb in rpc.proto, mvccpb in kv.proto, as shipped with etcd 3.4+). Field numbers are
// etcd's wire contract. Compared with @grpc/proto-loader + protobufjs this skips building plain
// objects with every default filled in and converting each int64 through Long to a string: on a
// create that costs more CPU than the rest of the client call.
//
// int64 fields (revisions, counts, versions) are read as JS numbers: etcd revisions stay far below
// 2^53. Bytes fields decode to views into the received message (no copy), as protobufjs does.

/** mvccpb.KeyValue: the key as stored (prefix included) and its revisions. */
export interface RawKeyValue {
  readonly key: Buffer;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  readonly value: Buffer;
}

export interface RangeResponse {
  readonly revision: number;
  readonly kvs: RawKeyValue[];
  readonly more: boolean;
  readonly count: number;
}

export type ResponseOp =
  | { readonly kind: 'range'; readonly kvs: RawKeyValue[] }
  | { readonly kind: 'put'; readonly prevKv: RawKeyValue | undefined }
  | { readonly kind: 'delete'; readonly prevKvs: RawKeyValue[] }
  | { readonly kind: 'other' };

export interface TxnResponse {
  readonly revision: number;
  readonly succeeded: boolean;
  readonly responses: ResponseOp[];
}

export interface WatchEventMsg {
  /** 0 = PUT, 1 = DELETE. */
  readonly type: number;
  readonly kv: RawKeyValue | undefined;
  readonly prevKv: RawKeyValue | undefined;
}

export interface WatchResponse {
  readonly revision: number;
  readonly watchId: number;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compactRevision: number;
  readonly cancelReason: string;
  readonly fragment: boolean;
  readonly events: WatchEventMsg[];
}

// ---- requests ------------------------------------------------------------------------------------

export const CompareResult = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 } as const;
export const CompareTarget = { Version: 0, Create: 1, Mod: 2, Value: 3, Lease: 4 } as const;

/** Compare on `key`: `target` (Version, Create or Mod revision) `result` `value`. */
export interface Compare {
  readonly key: Buffer;
  readonly target: (typeof CompareTarget)['Version' | 'Create' | 'Mod'];
  readonly result: (typeof CompareResult)[keyof typeof CompareResult];
  readonly value: number;
}

export interface RangeRequest {
  readonly key: Buffer;
  readonly rangeEnd?: Buffer;
  readonly limit?: number;
  readonly revision?: number;
  /** Sorted ascending by key (etcd's SortOrder ASCEND, SortTarget KEY). */
  readonly sortByKey?: boolean;
  readonly countOnly?: boolean;
}

export type RequestOp =
  | { readonly range: RangeRequest }
  | { readonly put: { readonly key: Buffer; readonly value: Uint8Array; readonly prevKv?: boolean } }
  | { readonly deleteRange: { readonly key: Buffer; readonly prevKv?: boolean } };

export interface TxnRequest {
  readonly compare: readonly Compare[];
  readonly success: readonly RequestOp[];
  readonly failure: readonly RequestOp[];
}

export interface WatchCreateRequest {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly startRevision: number;
  readonly progressNotify: boolean;
  readonly prevKv: boolean;
}

/**
 * Encoding is two passes over a message: its size, then its bytes into one buffer of exactly that
 * size behind gRPC's 5-byte message prefix (uncompressed flag, length), so a 1 KiB value is copied
 * once on its way to the HTTP/2 stream. Every `encode*` returns such a framed message.
 */
class Writer {
  pos = GRPC_PREFIX;
  readonly buf: Buffer;
  constructor(private readonly size: number) {
    this.buf = Buffer.allocUnsafe(GRPC_PREFIX + size);
    this.buf[0] = 0;
    this.buf.writeUInt32BE(size, 1);
  }
  /** The framed message, after checking that the size pass and the write pass agree. */
  finish(): Buffer {
    if (this.pos !== GRPC_PREFIX + this.size) throw new Error(`etcd request encoding: wrote ${this.pos - GRPC_PREFIX} of ${this.size} bytes`);
    return this.buf;
  }
  varint(n: number): void {
    const buf = this.buf;
    while (n > 0x7f) {
      buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[this.pos++] = n;
  }
  /** Field `no` with wire type 0 (varint), omitted when 0 (proto3 default). */
  uint(no: number, n: number): void {
    if (n === 0) return;
    this.varint(no << 3);
    this.varint(n);
  }
  bool(no: number, b: boolean | undefined): void {
    if (b !== true) return;
    this.varint(no << 3);
    this.buf[this.pos++] = 1;
  }
  /** Field `no` with wire type 2 and the given length; the caller writes the body. */
  lenHeader(no: number, len: number): void {
    this.varint((no << 3) | 2);
    this.varint(len);
  }
  bytes(no: number, b: Uint8Array | undefined): void {
    if (b === undefined || b.length === 0) return;
    this.lenHeader(no, b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

/** gRPC's length prefix of each message on a stream. */
export const GRPC_PREFIX = 5;

function varintLen(n: number): number {
  let len = 1;
  while (n > 0x7f) {
    n = Math.floor(n / 0x80);
    len++;
  }
  return len;
}
/** Size of a varint field (0 when omitted). Field numbers here are < 16 except range_end (64). */
function uintLen(no: number, n: number): number {
  return n === 0 ? 0 : varintLen(no << 3) + varintLen(n);
}
function boolLen(no: number, b: boolean | undefined): number {
  return b === true ? varintLen(no << 3) + 1 : 0;
}
function lenLen(no: number, len: number): number {
  return varintLen((no << 3) | 2) + varintLen(len) + len;
}
function bytesLen(no: number, b: Uint8Array | undefined): number {
  return b === undefined || b.length === 0 ? 0 : lenLen(no, b.length);
}

function checkInt(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`etcd request: ${n} is not a non-negative integer`);
  return n;
}

function rangeSize(r: RangeRequest): number {
  return (
    bytesLen(1, r.key) +
    bytesLen(2, r.rangeEnd) +
    uintLen(3, checkInt(r.limit ?? 0)) +
    uintLen(4, checkInt(r.revision ?? 0)) +
    // sort_order = ASCEND (1); sort_target KEY is 0, the default.
    (r.sortByKey === true ? 2 : 0) +
    boolLen(9, r.countOnly)
  );
}
function writeRange(w: Writer, r: RangeRequest): void {
  w.bytes(1, r.key);
  w.bytes(2, r.rangeEnd);
  w.uint(3, r.limit ?? 0);
  w.uint(4, r.revision ?? 0);
  if (r.sortByKey === true) w.uint(5, 1);
  w.bool(9, r.countOnly);
}

function compareSize(c: Compare): number {
  // target_union: version = 4, create_revision = 5, mod_revision = 6. The oneof member is always
  // written, even when 0: etcd tells "create_revision == 0" from an unset union by presence.
  const unionNo = 4 + c.target;
  return uintLen(1, c.result) + uintLen(2, c.target) + bytesLen(3, c.key) + varintLen(unionNo << 3) + varintLen(checkInt(c.value));
}
function writeCompare(w: Writer, c: Compare): void {
  w.uint(1, c.result);
  w.uint(2, c.target);
  w.bytes(3, c.key);
  w.varint((4 + c.target) << 3);
  w.varint(c.value);
}

function opBodySize(op: RequestOp): number {
  if ('range' in op) return rangeSize(op.range);
  if ('put' in op) return bytesLen(1, op.put.key) + bytesLen(2, op.put.value) + boolLen(4, op.put.prevKv);
  return bytesLen(1, op.deleteRange.key) + boolLen(3, op.deleteRange.prevKv);
}
function writeOp(w: Writer, op: RequestOp, bodySize: number): void {
  if ('range' in op) {
    w.lenHeader(1, bodySize);
    writeRange(w, op.range);
  } else if ('put' in op) {
    w.lenHeader(2, bodySize);
    w.bytes(1, op.put.key);
    w.bytes(2, op.put.value);
    w.bool(4, op.put.prevKv);
  } else {
    w.lenHeader(3, bodySize);
    w.bytes(1, op.deleteRange.key);
    w.bool(3, op.deleteRange.prevKv);
  }
}

/** RequestOps as field `no` of a TxnRequest. (Module-level, not a closure: tsx's keepNames wraps named closures on every call.) */
function writeOps(w: Writer, no: number, list: readonly RequestOp[], sizes: number[]): void {
  for (let i = 0; i < list.length; i++) {
    const body = sizes[i] as number;
    w.lenHeader(no, lenLen(2, body));
    writeOp(w, list[i] as RequestOp, body);
  }
}

export function encodeRangeRequest(r: RangeRequest): Buffer {
  const w = new Writer(rangeSize(r));
  writeRange(w, r);
  return w.finish();
}

export function encodeTxnRequest(t: TxnRequest): Buffer {
  const cmpSizes = t.compare.map(compareSize);
  const successSizes = t.success.map(opBodySize);
  const failureSizes = t.failure.map(opBodySize);
  let size = 0;
  for (const s of cmpSizes) size += lenLen(1, s);
  // A RequestOp holds one op (field 1, 2 or 3: one tag byte, like 2 here).
  for (const s of successSizes) size += lenLen(2, lenLen(2, s));
  for (const s of failureSizes) size += lenLen(3, lenLen(2, s));
  const w = new Writer(size);
  for (let i = 0; i < t.compare.length; i++) {
    w.lenHeader(1, cmpSizes[i] as number);
    writeCompare(w, t.compare[i] as Compare);
  }
  writeOps(w, 2, t.success, successSizes);
  writeOps(w, 3, t.failure, failureSizes);
  return w.finish();
}

export function encodeCompactionRequest(revision: number, physical: boolean): Buffer {
  const w = new Writer(uintLen(1, checkInt(revision)) + boolLen(2, physical));
  w.uint(1, revision);
  w.bool(2, physical);
  return w.finish();
}

export function encodeWatchCreateRequest(c: WatchCreateRequest): Buffer {
  const body = bytesLen(1, c.key) + bytesLen(2, c.rangeEnd) + uintLen(3, checkInt(c.startRevision)) + boolLen(4, c.progressNotify) + boolLen(6, c.prevKv);
  const w = new Writer(lenLen(1, body));
  w.lenHeader(1, body);
  w.bytes(1, c.key);
  w.bytes(2, c.rangeEnd);
  w.uint(3, c.startRevision);
  w.bool(4, c.progressNotify);
  w.bool(6, c.prevKv);
  return w.finish();
}

/** WatchRequest{progress_request: {}}, framed. */
export const WATCH_PROGRESS_REQUEST: Buffer = Buffer.from([0, 0, 0, 0, 2, (3 << 3) | 2, 0]);
/** An empty message (StatusRequest), framed. */
export const EMPTY_REQUEST: Buffer = Buffer.from([0, 0, 0, 0, 0]);
const EMPTY_MESSAGE: Buffer = Buffer.alloc(0);

// ---- responses -----------------------------------------------------------------------------------

/** A cursor over one message (or a nested message: [pos, end) of the same buffer). */
class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}
  varint(): number {
    const buf = this.buf;
    if (this.pos >= this.end) throw new Error('etcd response: truncated message');
    let b = buf[this.pos++] as number;
    if (b < 0x80) return b;
    let n = b & 0x7f;
    let mul = 0x80;
    for (;;) {
      if (this.pos >= this.end) throw new Error('etcd response: truncated varint');
      b = buf[this.pos++] as number;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
      if (mul > 2 ** 63) throw new Error('etcd response: varint too long');
    }
  }
  /** Start and end of the next length-delimited field's body; moves past it. */
  span(): number {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('etcd response: truncated field');
    return start;
  }
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        return;
      case 2:
        this.span();
        return;
      case 5:
        this.pos += 4;
        return;
      default:
        throw new Error(`etcd response: unsupported wire type ${wireType}`);
    }
  }
}

/** ResponseHeader: only the revision (field 3) matters here. */
function readHeader(r: Reader, end: number): number {
  let revision = 0;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 3 << 3) revision = r.varint();
    else r.skip(tag & 7);
  }
  return revision;
}

function readKeyValue(r: Reader, end: number): RawKeyValue {
  const buf = r.buf;
  let key: Buffer = EMPTY_MESSAGE;
  let value: Buffer = EMPTY_MESSAGE;
  let createRevision = 0;
  let modRevision = 0;
  let version = 0;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2: {
        const s = r.span();
        key = buf.subarray(s, r.pos);
        break;
      }
      case 2 << 3:
        createRevision = r.varint();
        break;
      case 3 << 3:
        modRevision = r.varint();
        break;
      case 4 << 3:
        version = r.varint();
        break;
      case (5 << 3) | 2: {
        const s = r.span();
        value = buf.subarray(s, r.pos);
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return { key, createRevision, modRevision, version, value };
}

/** Reads the nested message whose body starts at the reader's position (after its length). */
function nested<T>(r: Reader, read: (r: Reader, end: number) => T): T {
  const len = r.varint();
  const end = r.pos + len;
  if (end > r.end) throw new Error('etcd response: truncated message');
  const v = read(r, end);
  r.pos = end;
  return v;
}

function readRangeBody(r: Reader, end: number): RangeResponse {
  let revision = 0;
  const kvs: RawKeyValue[] = [];
  let more = false;
  let count = 0;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2:
        revision = nested(r, readHeader);
        break;
      case (2 << 3) | 2:
        kvs.push(nested(r, readKeyValue));
        break;
      case 3 << 3:
        more = r.varint() !== 0;
        break;
      case 4 << 3:
        count = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, kvs, more, count };
}

function readResponseOp(r: Reader, end: number): ResponseOp {
  let op: ResponseOp = { kind: 'other' };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2:
        op = { kind: 'range', kvs: nested(r, readRangeBody).kvs };
        break;
      case (2 << 3) | 2:
        op = {
          kind: 'put',
          prevKv: nested(r, (rr, e) => {
            let prev: RawKeyValue | undefined;
            while (rr.pos < e) {
              const t = rr.varint();
              if (t === ((2 << 3) | 2)) prev = nested(rr, readKeyValue);
              else rr.skip(t & 7);
            }
            return prev;
          }),
        };
        break;
      case (3 << 3) | 2:
        op = {
          kind: 'delete',
          prevKvs: nested(r, (rr, e) => {
            const prev: RawKeyValue[] = [];
            while (rr.pos < e) {
              const t = rr.varint();
              if (t === ((3 << 3) | 2)) prev.push(nested(rr, readKeyValue));
              else rr.skip(t & 7);
            }
            return prev;
          }),
        };
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return op;
}

export function decodeRangeResponse(buf: Buffer): RangeResponse {
  return readRangeBody(new Reader(buf, 0, buf.length), buf.length);
}

export function decodeTxnResponse(buf: Buffer): TxnResponse {
  const r = new Reader(buf, 0, buf.length);
  let revision = 0;
  let succeeded = false;
  const responses: ResponseOp[] = [];
  while (r.pos < buf.length) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2:
        revision = nested(r, readHeader);
        break;
      case 2 << 3:
        succeeded = r.varint() !== 0;
        break;
      case (3 << 3) | 2:
        responses.push(nested(r, readResponseOp));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, succeeded, responses };
}

function readEvent(r: Reader, end: number): WatchEventMsg {
  let type = 0;
  let kv: RawKeyValue | undefined;
  let prevKv: RawKeyValue | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 1 << 3:
        type = r.varint();
        break;
      case (2 << 3) | 2:
        kv = nested(r, readKeyValue);
        break;
      case (3 << 3) | 2:
        prevKv = nested(r, readKeyValue);
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { type, kv, prevKv };
}

export function decodeWatchResponse(buf: Buffer): WatchResponse {
  const r = new Reader(buf, 0, buf.length);
  let revision = 0;
  let watchId = 0;
  let created = false;
  let canceled = false;
  let compactRevision = 0;
  let cancelReason = '';
  let fragment = false;
  const events: WatchEventMsg[] = [];
  while (r.pos < buf.length) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2:
        revision = nested(r, readHeader);
        break;
      case 2 << 3:
        watchId = r.varint();
        break;
      case 3 << 3:
        created = r.varint() !== 0;
        break;
      case 4 << 3:
        canceled = r.varint() !== 0;
        break;
      case 5 << 3:
        compactRevision = r.varint();
        break;
      case (6 << 3) | 2: {
        const s = r.span();
        cancelReason = buf.toString('utf8', s, r.pos);
        break;
      }
      case 7 << 3:
        fragment = r.varint() !== 0;
        break;
      case (11 << 3) | 2:
        events.push(nested(r, readEvent));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return { revision, watchId, created, canceled, compactRevision, cancelReason, fragment, events };
}
