// JSON-shaped kube objects <-> kube protobuf bytes (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
//
// Encoding reproduces what kube-apiserver's gogo marshallers write for the same Go struct: fields
// by number, every non-pointer field (zero values too), map keys sorted. Decoding produces what
// the Go struct's encoding/json output would be: omitempty zeros dropped, non-omitempty fields
// and value structs present. See proto/README.md for the per-field rules.
import { badRequest, internalError, notAcceptable, StatusError } from '../errors.js';
import type { JsonObject, JsonValue, KubeObject } from '../types.js';
import type { ProtobufKinds } from './kinds.js';
import { type FieldDesc, type MessageDesc, messageDesc } from './schema.js';
import { formatMicroTime, formatTime, GO_ZERO_TIME_SECONDS, parseRfc3339 } from './time.js';
import { Reader, WIRE_END_GROUP, WIRE_LEN, WIRE_VARINT, WireError, Writer } from './wire.js';
import { parseJSONExact, stringifyJSON } from '../../golang/json-int64.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
export const PROTOBUF_WATCH_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** `k8s\0`, the prefix of every enveloped object (protoEncodingPrefix upstream). */
export const PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/**
 * kube-apiserver's 406 when a client accepts only protobuf for a resource that has none (custom
 * resources; `as=Table`): negotiation.errNotAcceptable over the media types it does serve.
 */
export const NOT_ACCEPTABLE_MESSAGE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

/** Envelopes nested inside RawExtensions (watch events of watch events...) deeper than this are refused. */
const MAX_ENVELOPE_NESTING = 16;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

type Vals = unknown[];

interface BaseDescs {
  unknown: MessageDesc;
  typeMeta: MessageDesc;
  timestamp: MessageDesc;
  watchEvent: MessageDesc;
  intOrString: MessageDesc;
  quantity: MessageDesc;
  fieldsV1: MessageDesc;
  rawExtension: MessageDesc;
}
let descs: BaseDescs | undefined;
function base(): BaseDescs {
  descs ??= {
    unknown: messageDesc('k8s.io.apimachinery.pkg.runtime.Unknown'),
    typeMeta: messageDesc('k8s.io.apimachinery.pkg.runtime.TypeMeta'),
    timestamp: messageDesc(`${META}.Time`),
    watchEvent: messageDesc(`${META}.WatchEvent`),
    intOrString: messageDesc('k8s.io.apimachinery.pkg.util.intstr.IntOrString'),
    quantity: messageDesc('k8s.io.apimachinery.pkg.api.resource.Quantity'),
    fieldsV1: messageDesc(`${META}.FieldsV1`),
    rawExtension: messageDesc('k8s.io.apimachinery.pkg.runtime.RawExtension'),
  };
  return descs;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function describeType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

// ---------------------------------------------------------------------------------------------
// Encoding

function wrongType(expected: string, v: unknown): WireError {
  return new WireError(`expected ${expected}, got ${describeType(v)}`);
}

function encodeMessage(w: Writer, desc: MessageDesc, obj: Record<string, unknown>, depth: number, kinds: ProtobufKinds): void {
  let cur: FieldDesc | undefined;
  try {
    for (const f of desc.encodeOrder) {
      cur = f;
      const v = obj[f.name];
      if (v === undefined || v === null) {
        if (!f.ptr && !f.repeated && f.kind !== 'map' && f.kind !== 'bytes' && f.kind !== 'fieldsv1') writeZero(w, f, depth, kinds);
      } else if (f.repeated) {
        if (!Array.isArray(v)) throw wrongType('array', v);
        for (const el of v) {
          if (el === null || el === undefined) throw new WireError('null list element');
          writeOne(w, f, el, depth, kinds);
        }
      } else if (f.kind === 'map') {
        writeMap(w, f, v);
      } else {
        writeOne(w, f, v, depth, kinds);
      }
    }
  } catch (e) {
    if (e instanceof WireError && cur) e.at(cur.name);
    throw e;
  }
}

const EMPTY: Record<string, unknown> = Object.freeze({});

/** Go writes non-pointer fields even when they hold the zero value. */
function writeZero(w: Writer, f: FieldDesc, depth: number, kinds: ProtobufKinds): void {
  switch (f.kind) {
    case 'message':
      w.tag(f.id, WIRE_LEN);
      {
        const s = w.open();
        encodeMessage(w, f.msg!, EMPTY, depth, kinds);
        w.close(s);
      }
      return;
    case 'intorstr':
      writeOne(w, f, 0, depth, kinds);
      return;
    case 'quantity':
      writeOne(w, f, '0', depth, kinds);
      return;
    default:
      // strings, numbers, bools, and Time/MicroTime/RawExtension (whose zero marshals to nothing)
      w.tag(f.id, f.wire);
      w.uint32(0);
  }
}

function writeOne(w: Writer, f: FieldDesc, v: unknown, depth: number, kinds: ProtobufKinds): void {
  switch (f.kind) {
    case 'string':
      if (typeof v !== 'string') throw wrongType('string', v);
      w.tag(f.id, WIRE_LEN);
      w.string(v);
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw wrongType('boolean', v);
      w.tag(f.id, WIRE_VARINT);
      w.uint32(v ? 1 : 0);
      return;
    case 'int32':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw wrongType('int32', v);
      w.tag(f.id, WIRE_VARINT);
      w.int(v);
      return;
    case 'int64':
      if (typeof v === 'bigint' && v >= -(2n ** 63n) && v < 2n ** 63n) {
        w.tag(f.id, WIRE_VARINT);
        w.bigint64(v);
        return;
      }
      if (typeof v !== 'number' || !Number.isInteger(v)) throw wrongType('integer', v);
      w.tag(f.id, WIRE_VARINT);
      w.int(v);
      return;
    case 'bytes':
      w.tag(f.id, WIRE_LEN);
      w.bytes(toBytes(v));
      return;
    case 'message': {
      if (!isPlainObject(v)) throw wrongType('object', v);
      w.tag(f.id, WIRE_LEN);
      const s = w.open();
      encodeMessage(w, f.msg!, v, depth, kinds);
      w.close(s);
      return;
    }
    case 'time':
    case 'microtime': {
      if (typeof v !== 'string') throw wrongType('RFC3339 time string', v);
      const t = parseRfc3339(v);
      if (!t) throw new WireError(`invalid time ${JSON.stringify(v)}`);
      const micro = f.kind === 'microtime';
      const nanos = micro ? t.nanos - (t.nanos % 1000) : 0;
      w.tag(f.id, WIRE_LEN);
      const s = w.open();
      if (t.seconds !== GO_ZERO_TIME_SECONDS || nanos !== 0) {
        w.tag(1, WIRE_VARINT);
        w.int(t.seconds);
        w.tag(2, WIRE_VARINT);
        w.int(nanos);
      }
      w.close(s);
      return;
    }
    case 'fieldsv1': {
      w.tag(f.id, WIRE_LEN);
      const s = w.open();
      w.tag(1, WIRE_LEN);
      w.string(stringifyJSON(v));
      w.close(s);
      return;
    }
    case 'rawext': {
      w.tag(f.id, WIRE_LEN);
      const s = w.open();
      w.tag(1, WIRE_LEN);
      const s2 = w.open();
      writeRaw(w, v, depth, kinds);
      w.close(s2);
      w.close(s);
      return;
    }
    case 'intorstr': {
      const isInt = typeof v === 'number';
      if (!(isInt && Number.isInteger(v)) && typeof v !== 'string') throw wrongType('integer or string', v);
      w.tag(f.id, WIRE_LEN);
      const s = w.open();
      w.tag(1, WIRE_VARINT);
      w.uint32(isInt ? 0 : 1);
      w.tag(2, WIRE_VARINT);
      w.int(isInt ? v : 0);
      w.tag(3, WIRE_LEN);
      w.string(isInt ? '' : v);
      w.close(s);
      return;
    }
    case 'quantity':
      if (typeof v !== 'string' && typeof v !== 'number') throw wrongType('quantity string', v);
      writeQuantity(w, f.id, String(v));
      return;
    case 'map':
      throw new WireError('map value in a list');
  }
}

/** A Quantity message (a field, or a map entry's value): its string as field 1. */
function writeQuantity(w: Writer, id: number, s: string): void {
  w.tag(id, WIRE_LEN);
  const q = w.open();
  w.tag(1, WIRE_LEN);
  w.string(s);
  w.close(q);
}

function toBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') return Buffer.from(v, 'base64');
  throw wrongType('base64 string', v);
}

function writeMap(w: Writer, f: FieldDesc, v: unknown): void {
  if (!isPlainObject(v)) throw wrongType('object', v);
  // Go's generated marshallers sort map keys, which keeps the bytes deterministic. JS sorts by
  // UTF-16 unit and Go by byte; they differ only for keys mixing astral and U+E000+ characters,
  // which kube's key validation rules out.
  const keys = Object.keys(v).sort();
  const bytesValue = f.mapValue === 'bytes';
  for (const k of keys) {
    const val = v[k];
    if (val === undefined) continue;
    w.tag(f.id, WIRE_LEN);
    const s = w.open();
    w.tag(1, WIRE_LEN);
    w.string(k);
    if (f.mapValue === 'quantity') {
      if (typeof val !== 'string' && typeof val !== 'number') throw wrongType('quantity string', val).at(k);
      writeQuantity(w, 2, String(val));
    } else if (bytesValue) {
      // nil []byte (JSON null) is left out of the entry, as gogo does
      if (val !== null) {
        w.tag(2, WIRE_LEN);
        w.bytes(toBytes(val));
      }
    } else {
      if (val !== null && typeof val !== 'string') throw wrongType('string', val).at(k);
      w.tag(2, WIRE_LEN);
      w.string(val ?? '');
    }
    w.close(s);
  }
}

/** RawExtension.raw: an enveloped object when its kind has protobuf, JSON otherwise. */
function writeRaw(w: Writer, v: unknown, depth: number, kinds: ProtobufKinds): void {
  if (v instanceof Uint8Array) {
    w.ensure(v.length);
    w.buf.set(v, w.pos);
    w.pos += v.length;
    return;
  }
  if (isPlainObject(v) && typeof v.apiVersion === 'string' && typeof v.kind === 'string' && kinds.messageFor(v.apiVersion, v.kind)) {
    writeEnvelope(w, v, depth + 1, kinds);
    return;
  }
  const json = stringifyJSON(v);
  w.ensure(Buffer.byteLength(json));
  w.pos += w.buf.write(json, w.pos, 'utf8');
}

function writeEnvelope(w: Writer, obj: KubeObject, depth: number, kinds: ProtobufKinds): void {
  if (depth > MAX_ENVELOPE_NESTING) throw new WireError('objects nested too deeply');
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion || !kind) {
    throw new WireError('object has no apiVersion/kind');
  }
  const message = kinds.messageFor(apiVersion, kind);
  if (!message) throw notAcceptable(NOT_ACCEPTABLE_MESSAGE);
  const desc = messageDesc(message);
  w.ensure(4);
  w.buf.set(PROTOBUF_MAGIC, w.pos);
  w.pos += 4;
  w.tag(1, WIRE_LEN);
  let s = w.open();
  w.tag(1, WIRE_LEN);
  w.string(apiVersion);
  w.tag(2, WIRE_LEN);
  w.string(kind);
  w.close(s);
  w.tag(2, WIRE_LEN);
  s = w.open();
  encodeMessage(w, desc, obj, depth, kinds);
  w.close(s);
  // contentEncoding and contentType: empty, but written (they are Go value fields)
  w.tag(3, WIRE_LEN);
  w.uint32(0);
  w.tag(4, WIRE_LEN);
  w.uint32(0);
}

// One writer serves every call: encoding is synchronous and nested envelopes are written in place.
let shared: Writer | undefined;
let sharedBusy = false;

function withWriter<T>(fn: (w: Writer) => T): T {
  if (sharedBusy) return fn(new Writer(256));
  shared ??= new Writer(64 * 1024);
  sharedBusy = true;
  shared.reset();
  try {
    return fn(shared);
  } finally {
    sharedBusy = false;
    // don't pin the memory of one huge list forever
    if (shared.buf.length > 4 * 1024 * 1024) shared = undefined;
  }
}

function encodeFailure(obj: unknown, e: unknown): StatusError {
  if (e instanceof StatusError) return e;
  const o = isPlainObject(obj) ? obj : {};
  const what = `${String(o.apiVersion ?? '')} ${String(o.kind ?? '')}`.trim() || 'object';
  const detail = e instanceof WireError ? (e.path ? `${e.path}: ${e.base}` : e.base) : e instanceof Error ? e.message : String(e);
  return internalError(new Error(`unable to encode ${what} as protobuf: ${detail}`));
}

/**
 * The object as kube protobuf: `k8s\0` + runtime.Unknown{typeMeta, raw, "", ""}, with the message
 * `kinds` (the serving control plane's Scheme) has for its apiVersion/kind. Throws a 406
 * NotAcceptable StatusError for kinds without protobuf, and a 500 for objects that no Go struct
 * could hold (a field of the wrong JSON type, an unparseable time).
 */
export function encodeObject(obj: KubeObject, kinds: ProtobufKinds): Uint8Array {
  try {
    return withWriter((w) => {
      writeEnvelope(w, obj, 0, kinds);
      return w.finish();
    });
  } catch (e) {
    throw encodeFailure(obj, e);
  }
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One frame of a protobuf watch stream, as kube-apiserver writes it: a 4-byte big-endian length,
 * then a metav1.WatchEvent message without envelope (the stream serializer is the raw one) whose
 * object.raw is the enveloped object (the embedded encoder is the normal one).
 */
export function encodeWatchEvent(type: WatchEventType, obj: KubeObject, kinds: ProtobufKinds): Uint8Array {
  try {
    return withWriter((w) => {
      w.ensure(4);
      w.pos = 4;
      w.tag(1, WIRE_LEN);
      w.string(type);
      w.tag(2, WIRE_LEN);
      const s = w.open();
      w.tag(1, WIRE_LEN);
      const s2 = w.open();
      writeEnvelope(w, obj, 0, kinds);
      w.close(s2);
      w.close(s);
      w.buf.writeUInt32BE(w.pos - 4, 0);
      return w.finish();
    });
  } catch (e) {
    throw encodeFailure(obj, e);
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

function readMessage(r: Reader, end: number, desc: MessageDesc, vals: Vals, depth: number, kinds: ProtobufKinds): Vals {
  const outerEnd = r.end;
  r.end = end;
  let cur: FieldDesc | undefined;
  try {
    while (r.pos < end) {
      cur = undefined;
      r.varint64();
      const wire = r.lo & 7;
      const num = (r.lo >>> 3) | (r.hi << 29) | 0;
      if (wire === WIRE_END_GROUP) throw new WireError(`proto: ${shortName(desc)}: wiretype end group for non-group`);
      if (num <= 0) throw new WireError(`proto: ${shortName(desc)}: illegal tag ${num} (wire type ${wire})`);
      const f = desc.byNumber.get(num);
      if (!f) {
        r.skip(wire);
        continue;
      }
      cur = f;
      if (f.repeated && wire === WIRE_LEN && f.wire === WIRE_VARINT) {
        // packed encoding of a repeated number: accepted as Go's generated code does
        const e = r.lengthEnd();
        const list = (vals[f.index] ??= []) as unknown[];
        while (r.pos < e) list.push(readScalar(r, f));
        continue;
      }
      const want = f.kind === 'map' ? WIRE_LEN : f.wire;
      if (wire !== want) throw new WireError(`proto: wrong wireType = ${wire} for field ${f.name}`);
      if (f.kind === 'message') {
        const e = r.lengthEnd();
        // a repeated singular message merges into the first, as in Go
        const into = f.repeated ? [] : ((vals[f.index] as Vals | undefined) ?? []);
        readMessage(r, e, f.msg!, into, depth, kinds);
        r.pos = e;
        if (f.repeated) ((vals[f.index] ??= []) as unknown[]).push(into);
        else vals[f.index] = into;
      } else if (f.kind === 'map') {
        readMapEntry(r, f, vals, depth, kinds);
      } else {
        const v = readValue(r, f, depth, kinds);
        if (f.repeated) ((vals[f.index] ??= []) as unknown[]).push(v);
        else vals[f.index] = v;
      }
    }
  } catch (e) {
    if (e instanceof WireError && cur) e.at(cur.name);
    throw e;
  } finally {
    r.end = outerEnd;
  }
  return vals;
}

function shortName(desc: MessageDesc): string {
  return desc.name.slice(desc.name.lastIndexOf('.') + 1);
}

function readScalar(r: Reader, f: FieldDesc): unknown {
  switch (f.kind) {
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    default:
      return r.int64();
  }
}

function readValue(r: Reader, f: FieldDesc, depth: number, kinds: ProtobufKinds): unknown {
  switch (f.kind) {
    case 'string':
      return r.string();
    case 'bool':
    case 'int32':
    case 'int64':
      return readScalar(r, f);
    case 'bytes':
      return r.bytes();
    case 'time':
    case 'microtime': {
      const e = r.lengthEnd();
      // Time.Unmarshal: no bytes at all is the zero time (JSON null)
      if (e === r.pos) return null;
      const t = readMessage(r, e, base().timestamp, [], depth, kinds);
      r.pos = e;
      const seconds = (t[0] as number | undefined) ?? 0;
      const nanos = (t[1] as number | undefined) ?? 0;
      try {
        if (f.kind === 'time') return seconds === GO_ZERO_TIME_SECONDS ? null : formatTime(seconds);
        const s = formatMicroTime(seconds, nanos);
        return s === '0001-01-01T00:00:00.000000Z' ? null : s;
      } catch (err) {
        throw new WireError(err instanceof Error ? err.message : String(err));
      }
    }
    case 'fieldsv1': {
      const raw = readRawField(r, base().fieldsV1, depth, kinds);
      if (raw === undefined) return null;
      return parseJson(raw, 'FieldsV1');
    }
    case 'rawext': {
      const raw = readRawField(r, base().rawExtension, depth, kinds);
      if (raw === undefined) return null;
      if (hasMagic(raw)) return decodeEnvelope(raw, undefined, depth + 1, kinds);
      return parseJson(raw, 'RawExtension');
    }
    case 'intorstr': {
      const e = r.lengthEnd();
      const t = readMessage(r, e, base().intOrString, [], depth, kinds);
      r.pos = e;
      const type = (t[0] as number | undefined) ?? 0;
      if (type === 0) return t[1] ?? 0;
      if (type === 1) return t[2] ?? '';
      throw new WireError('impossible IntOrString.Type');
    }
    case 'quantity':
      return readQuantity(r, depth, kinds);
    default:
      throw new WireError(`unexpected field kind ${f.kind}`);
  }
}

/** Field 1 (bytes) of a one-field wrapper message (FieldsV1, RawExtension); undefined when nil. */
function readRawField(r: Reader, desc: MessageDesc, depth: number, kinds: ProtobufKinds): Uint8Array | undefined {
  const e = r.lengthEnd();
  const v = readMessage(r, e, desc, [], depth, kinds);
  r.pos = e;
  return v[0] as Uint8Array | undefined;
}

const utf8 = new TextDecoder();

function parseJson(raw: Uint8Array, what: string): JsonValue {
  try {
    return parseJSONExact(utf8.decode(raw)) as JsonValue;
  } catch (e) {
    throw new WireError(`invalid ${what} JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function readMapEntry(r: Reader, f: FieldDesc, vals: Vals, depth: number, kinds: ProtobufKinds): void {
  const e = r.lengthEnd();
  const outerEnd = r.end;
  r.end = e;
  let key = '';
  let value: string | undefined;
  try {
    while (r.pos < e) {
      r.varint64();
      const wire = r.lo & 7;
      const num = (r.lo >>> 3) | (r.hi << 29) | 0;
      if (num <= 0) throw new WireError(`proto: illegal tag ${num} (wire type ${wire})`);
      if (num === 1 || num === 2) {
        if (wire !== WIRE_LEN) throw new WireError(`proto: wrong wireType = ${wire} for field ${num === 1 ? 'key' : 'value'}`);
        if (num === 1) key = r.string();
        else if (f.mapValue === 'quantity') value = readQuantity(r, depth, kinds);
        else if (f.mapValue === 'bytes') {
          const b = r.bytes();
          value = Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');
        } else value = r.string();
      } else r.skip(wire);
    }
  } finally {
    r.end = outerEnd;
  }
  const map = (vals[f.index] ??= {}) as Record<string, string>;
  if (f.mapValue === 'quantity') value ??= '0';
  // "__proto__" is a valid ConfigMap key; plain assignment would set the prototype instead
  if (key === '__proto__') Object.defineProperty(map, key, { value: value ?? '', enumerable: true, writable: true, configurable: true });
  else map[key] = value ?? '';
}

/** A Quantity message's string (field 1), read from its length-delimited bytes; '0' when absent. */
function readQuantity(r: Reader, depth: number, kinds: ProtobufKinds): string {
  const e = r.lengthEnd();
  const q = readMessage(r, e, base().quantity, [], depth, kinds);
  r.pos = e;
  return (q[0] as string | undefined) ?? '0';
}

function isZeroScalar(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function b64(v: unknown): string {
  const b = v as Uint8Array;
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64');
}

/** Turns decoded field values into the JSON the Go struct would marshal to. */
function toJson(desc: MessageDesc, vals: Vals, out: JsonObject): JsonObject {
  for (const f of desc.fields) {
    const v = vals[f.index];
    const name = f.name;
    if (f.repeated) {
      if (v === undefined) {
        // Go would say null for a nil list; kplane (like the apiserver's own lists) says []
        if (f.json === 'always') out[name] = [];
      } else if (f.kind === 'message') out[name] = (v as Vals[]).map((x) => toJson(f.msg!, x, {}));
      else if (f.kind === 'bytes') out[name] = (v as unknown[]).map(b64);
      else out[name] = v as JsonValue[];
      continue;
    }
    if (f.kind === 'map') {
      if (v !== undefined) out[name] = v as JsonObject;
      continue;
    }
    if (v === undefined) {
      if (f.ptr) continue;
      switch (f.kind) {
        case 'message':
          out[name] = toJson(f.msg!, [], {});
          break;
        case 'time':
        case 'microtime':
          if (f.json !== 'omitzero') out[name] = null;
          break;
        case 'rawext':
          out[name] = null;
          break;
        case 'intorstr':
          out[name] = 0;
          break;
        case 'quantity':
          out[name] = '0';
          break;
        case 'string':
          if (f.json === 'always') out[name] = '';
          break;
        case 'bool':
          if (f.json === 'always') out[name] = false;
          break;
        case 'int32':
        case 'int64':
          if (f.json === 'always') out[name] = 0;
          break;
        default:
          break;
      }
      continue;
    }
    switch (f.kind) {
      case 'message':
        out[name] = toJson(f.msg!, v as Vals, {});
        break;
      case 'bytes':
        if (f.ptr || (v as Uint8Array).length > 0) out[name] = b64(v);
        break;
      case 'time':
      case 'microtime':
        if (v !== null || f.json !== 'omitzero' || f.ptr) out[name] = v as string | null;
        break;
      default:
        if (f.ptr || f.json === 'always' || !isZeroScalar(v)) out[name] = v as JsonValue;
    }
  }
  return out;
}

function hasMagic(b: Uint8Array): boolean {
  return b.length >= 4 && b[0] === 0x6b && b[1] === 0x38 && b[2] === 0x73 && b[3] === 0x00;
}

function decodeEnvelope(bytes: Uint8Array, defaults: { apiVersion?: string; kind?: string } | undefined, depth: number, kinds: ProtobufKinds): KubeObject {
  if (depth > MAX_ENVELOPE_NESTING) throw new WireError('objects nested too deeply');
  // Same checks and texts as protobuf.Serializer.Decode.
  if (bytes.length === 0) throw new WireError('empty data');
  if (!hasMagic(bytes)) throw new WireError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  if (bytes.length === 4) throw new WireError('empty body');
  const { unknown, typeMeta } = base();
  const r = new Reader(bytes, 4, bytes.length);
  const unk = readMessage(r, bytes.length, unknown, [], depth, kinds);
  const tm = (unk[0] as Vals | undefined) ?? [];
  let apiVersion = (tm[typeMeta.byNumber.get(1)!.index] as string | undefined) ?? '';
  let kind = (tm[typeMeta.byNumber.get(2)!.index] as string | undefined) ?? '';
  // copyKindDefaults: the request's expected kind fills what the envelope leaves out
  if (!kind && defaults?.kind) kind = defaults.kind;
  if (!apiVersion && defaults?.apiVersion) apiVersion = defaults.apiVersion;
  if (!kind) throw new WireError(`Object 'Kind' is missing in protobuf envelope (apiVersion ${JSON.stringify(apiVersion)})`);
  if (!apiVersion) throw new WireError(`Object 'apiVersion' is missing in protobuf envelope (kind ${JSON.stringify(kind)})`);
  const message = kinds.messageFor(apiVersion, kind);
  if (!message) throw new WireError(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
  const desc = messageDesc(message);
  const raw = (unk[1] as Uint8Array | undefined) ?? new Uint8Array(0);
  let vals: Vals;
  try {
    vals = readMessage(new Reader(raw, 0, raw.length), raw.length, desc, [], depth, kinds);
  } catch (e) {
    if (e instanceof WireError) {
      const slash = apiVersion.indexOf('/');
      const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
      // transformDecodeError's wording, with the envelope's kind as the target
      throw new WireError(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${e.describe()}`);
    }
    throw e;
  }
  return toJson(desc, vals, { kind, apiVersion });
}

function decodeFailure(e: unknown): StatusError {
  if (e instanceof StatusError) return e;
  if (e instanceof WireError) return badRequest(e.describe());
  // Only a bug (or an engine limit) lands here; the input was still unusable.
  return badRequest(`unable to decode protobuf body: ${e instanceof Error ? e.message : String(e)}`);
}

/**
 * Decodes `k8s\0` + runtime.Unknown into a JSON-shaped object (kind and apiVersion first).
 * `defaults` plays the part of the request's GroupVersionKind when the envelope omits them.
 * Any malformed input yields a 400 BadRequest StatusError.
 */
export function decodeObject(bytes: Uint8Array, kinds: ProtobufKinds, defaults?: { apiVersion?: string; kind?: string }): KubeObject {
  try {
    if (!(bytes instanceof Uint8Array)) throw new WireError('empty data');
    return decodeEnvelope(bytes, defaults, 0, kinds);
  } catch (e) {
    throw decodeFailure(e);
  }
}

export interface DecodedWatchEvent {
  type: string;
  object: KubeObject;
}

/**
 * Splits a protobuf watch stream into complete frames; `rest` is the start of an unfinished
 * frame (keep it and prepend the next chunk).
 */
export function splitWatchFrames(bytes: Uint8Array): { frames: Uint8Array[]; rest: Uint8Array } {
  const frames: Uint8Array[] = [];
  let p = 0;
  while (bytes.length - p >= 4) {
    const len = ((bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!) >>> 0;
    if (bytes.length - p - 4 < len) break;
    frames.push(bytes.subarray(p + 4, p + 4 + len));
    p += 4 + len;
  }
  return { frames, rest: bytes.subarray(p) };
}

/** Decodes one frame body (without its length prefix): a metav1.WatchEvent. */
export function decodeWatchEvent(frame: Uint8Array, kinds: ProtobufKinds): DecodedWatchEvent {
  try {
    const desc = base().watchEvent;
    const vals = readMessage(new Reader(frame, 0, frame.length), frame.length, desc, [], 0, kinds);
    const ev = toJson(desc, vals, {});
    const object = ev.object;
    if (!isPlainObject(object)) throw new WireError('watch event without an object');
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- WatchEvent.type is a proto string field: a string, or absent
    return { type: String(ev.type), object };
  } catch (e) {
    throw decodeFailure(e);
  }
}

/** Decodes a whole protobuf watch stream body; a truncated last frame is an error. */
export function decodeWatchFrames(bytes: Uint8Array, kinds: ProtobufKinds): DecodedWatchEvent[] {
  const { frames, rest } = splitWatchFrames(bytes);
  if (rest.length > 0) throw badRequest(`unexpected EOF: ${rest.length} bytes of an incomplete watch frame`);
  return frames.map((f) => decodeWatchEvent(f, kinds));
}
