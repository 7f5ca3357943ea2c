// Compiles the shipped .proto files (parsed once by protobufjs) into flat descriptors that the
// codec walks. protobufjs is used for parsing only: its generated codecs cannot express Go's
// zero-value and pointer rules, and decoding needs Go's error texts.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { WIRE_LEN, WIRE_VARINT } from './wire.js';

/**
 * How a field's value is represented. Kube types with a JSON form of their own (Time, FieldsV1,
 * IntOrString, ...) are leaves here, recognised by their message's full name.
 */
export type FieldKind =
  | 'string'
  | 'bool'
  | 'int32'
  | 'int64'
  | 'bytes'
  | 'message'
  | 'map'
  | 'time'
  | 'microtime'
  | 'fieldsv1'
  | 'rawext'
  | 'intorstr'
  | 'quantity';

/** JSON presence, see proto/README.md. */
export type JsonMode = 'omitempty' | 'always' | 'omitzero';

export interface FieldDesc {
  readonly index: number;
  readonly id: number;
  readonly name: string;
  readonly kind: FieldKind;
  readonly repeated: boolean;
  /** Go pointer: on the wire and in JSON exactly when set. */
  readonly ptr: boolean;
  readonly json: JsonMode;
  /** Wire type of one value (of one element for repeated fields). */
  readonly wire: number;
  /** The tag varint's value, precomputed. */
  readonly tag: number;
  /** For kind 'message'. Filled after all messages exist (messages may refer to each other). */
  msg: MessageDesc | undefined;
  /** For kind 'map': keys are always strings; values strings, bytes or Quantities (a ResourceList). */
  readonly mapValue: 'string' | 'bytes' | 'quantity' | undefined;
}

export interface MessageDesc {
  readonly name: string;
  /** Declaration (= Go struct = JSON) order. */
  readonly fields: readonly FieldDesc[];
  /** Field number order, the order gogo marshallers write in. */
  readonly encodeOrder: readonly FieldDesc[];
  readonly byNumber: ReadonlyMap<number, FieldDesc>;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const leafTypes: Record<string, FieldKind> = {
  [`${META}.Time`]: 'time',
  [`${META}.MicroTime`]: 'microtime',
  [`${META}.FieldsV1`]: 'fieldsv1',
  'k8s.io.apimachinery.pkg.runtime.RawExtension': 'rawext',
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'intorstr',
  'k8s.io.apimachinery.pkg.api.resource.Quantity': 'quantity',
};

const scalarKinds: Record<string, FieldKind> = { string: 'string', bool: 'bool', int32: 'int32', int64: 'int64', bytes: 'bytes' };

const protoDir = fileURLToPath(new URL('./proto/', import.meta.url));

let root: protobuf.Root | undefined;
const compiled = new Map<string, MessageDesc>();

/** Every .proto file in ./proto, so a new API group only needs its file dropped in. */
function loadRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  for (const file of readdirSync(protoDir)
    .filter((f) => f.endsWith('.proto'))
    .sort()) {
    protobuf.parse(readFileSync(protoDir + file, 'utf8'), r, { keepCase: true });
  }
  r.resolveAll();
  root = r;
  return r;
}

function optionOf(f: protobuf.Field, name: string): string | undefined {
  const v: unknown = f.options?.[`(${name})`];
  return typeof v === 'string' ? v : undefined;
}

function compile(fullName: string): MessageDesc {
  const done = compiled.get(fullName);
  if (done) return done;
  const type = loadRoot().lookupType(fullName);
  const fields: FieldDesc[] = [];
  const desc: MessageDesc = { name: fullName, fields, encodeOrder: [], byNumber: new Map() };
  // Registered before the fields are compiled so that self-referencing messages terminate.
  compiled.set(fullName, desc);
  const pending: Array<[FieldDesc, string]> = [];
  for (const f of type.fieldsArray) {
    const where = `${fullName}.${f.name}`;
    const go = optionOf(f, 'go');
    const json = optionOf(f, 'json') ?? 'omitempty';
    if (go !== undefined && go !== 'ptr') throw new Error(`${where}: unknown (go) option ${go}`);
    if (json !== 'omitempty' && json !== 'always' && json !== 'omitzero') throw new Error(`${where}: unknown (json) option ${json}`);
    let kind: FieldKind;
    let mapValue: 'string' | 'bytes' | 'quantity' | undefined;
    let msgName: string | undefined;
    if (f instanceof protobuf.MapField) {
      const quantity = f.resolvedType instanceof protobuf.Type && leafTypes[f.resolvedType.fullName.slice(1)] === 'quantity';
      if (f.keyType !== 'string' || (f.type !== 'string' && f.type !== 'bytes' && !quantity)) {
        throw new Error(`${where}: only map<string, string|bytes|Quantity> is supported`);
      }
      kind = 'map';
      mapValue = quantity ? 'quantity' : (f.type as 'string' | 'bytes');
    } else if (f.resolvedType instanceof protobuf.Type) {
      const name = f.resolvedType.fullName.slice(1);
      kind = leafTypes[name] ?? 'message';
      if (kind === 'message') msgName = name;
    } else {
      const k = scalarKinds[f.type];
      if (!k) throw new Error(`${where}: field type ${f.type} is not supported by the kube codec`);
      kind = k;
    }
    const wire = kind === 'bool' || kind === 'int32' || kind === 'int64' ? WIRE_VARINT : WIRE_LEN;
    const fd: FieldDesc = {
      index: fields.length,
      id: f.id,
      name: f.name,
      kind,
      repeated: f.repeated && kind !== 'map',
      ptr: go === 'ptr',
      json,
      wire,
      tag: ((f.id << 3) | (kind === 'map' ? WIRE_LEN : wire)) >>> 0,
      msg: undefined,
      mapValue,
    };
    fields.push(fd);
    if (msgName) pending.push([fd, msgName]);
  }
  (desc.encodeOrder as FieldDesc[]).push(...[...fields].sort((a, b) => a.id - b.id));
  for (const fd of fields) (desc.byNumber as Map<number, FieldDesc>).set(fd.id, fd);
  for (const [fd, name] of pending) fd.msg = compile(name);
  return desc;
}

/** The descriptor of a message, by full proto name (without the leading dot). */
export function messageDesc(fullName: string): MessageDesc {
  return compile(fullName);
}
