// The registry API's messages as TypeScript, and the loaded protos: one protobufjs Root for encoding
// responses ahead of time, and proto-loader's package definition for grpc-js services and reflection.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';
import * as protoLoader from '@grpc/proto-loader';

const here = dirname(fileURLToPath(import.meta.url));
export const REGISTRY_PROTO = join(here, 'registry.proto');
export const HEALTH_PROTO = join(here, 'health.proto');

/** api.GroupVersionKind */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
  plural?: string;
}

/** api.Dependency and api.Property share one shape: a type and a JSON value as text. */
export interface TypedValue {
  type: string;
  value: string;
}

export interface Deprecation {
  message: string;
}

/** api.Bundle; optional fields are left out of the encoding when empty, as proto3 does. */
export interface ApiBundle {
  csvName: string;
  packageName: string;
  channelName: string;
  csvJson: string;
  object: string[];
  bundlePath: string;
  providedApis: GroupVersionKind[];
  requiredApis: GroupVersionKind[];
  version: string;
  skipRange: string;
  dependencies: TypedValue[];
  properties: TypedValue[];
  replaces: string;
  skips: string[];
  deprecation?: Deprecation;
}

export interface ApiChannel {
  name: string;
  csvName: string;
  deprecation?: Deprecation;
}

export interface ApiPackage {
  name: string;
  channels: ApiChannel[];
  defaultChannelName: string;
  deprecation?: Deprecation;
}

export interface ApiChannelEntry {
  packageName: string;
  channelName: string;
  bundleName: string;
  replaces: string;
}

export const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** proto-loader's definitions of api.Registry, api.ExperimentalRegistry and grpc.health.v1.Health. */
export function loadPackageDefinition(): protoLoader.PackageDefinition {
  return protoLoader.loadSync([REGISTRY_PROTO, HEALTH_PROTO], LOADER_OPTIONS);
}

/** Plain functions, not methods: callers pass them to map(). */
export interface Encoders {
  readonly bundle: (b: ApiBundle) => Buffer;
  readonly package: (p: ApiPackage) => Buffer;
  readonly packageName: (name: string) => Buffer;
  readonly channelEntry: (e: ApiChannelEntry) => Buffer;
  /** a JSON object as google.protobuf.Struct */
  readonly struct: (obj: Record<string, unknown>) => Buffer;
}

let encoders: Encoders | undefined;

/** Encoders for the response messages, so hot answers can be encoded once and sent as bytes. */
export function getEncoders(): Encoders {
  if (encoders) return encoders;
  const root = new protobuf.Root();
  root.loadSync(REGISTRY_PROTO, { keepCase: true });
  root.resolveAll();
  const enc = (name: string) => {
    const t = root.lookupType(name);
    return (msg: object): Buffer => {
      const bytes = t.encode(t.fromObject(msg)).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    };
  };
  const bundle = enc('api.Bundle');
  const pkg = enc('api.Package');
  const packageName = enc('api.PackageName');
  const channelEntry = enc('api.ChannelEntry');
  const struct = enc('google.protobuf.Struct');
  encoders = {
    bundle,
    package: pkg,
    packageName: (name) => packageName({ name }),
    channelEntry,
    struct: (obj) => struct(toStruct(obj)),
  };
  return encoders;
}

interface StructValue {
  nullValue?: 0;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields: Record<string, StructValue> };
  listValue?: { values: StructValue[] };
}

function toStruct(obj: Record<string, unknown>): { fields: Record<string, StructValue> } {
  const fields: Record<string, StructValue> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = toValue(v);
  return { fields };
}

function toValue(v: unknown): StructValue {
  if (v === null || v === undefined) return { nullValue: 0 };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  if (typeof v === 'object') return { structValue: toStruct(v as Record<string, unknown>) };
  return { stringValue: String(v) };
}
