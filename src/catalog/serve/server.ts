// The gRPC server of `kplane catalog serve`: api.Registry and api.ExperimentalRegistry over a
// RegistryIndex, grpc.health.v1.Health (always SERVING, as opm's), and server reflection v1 and v1alpha.
//
// Answers are protobuf bytes the index encoded (and, for channel heads, keeps), so the response
// serializers pass Buffers through untouched and the hot path does no per-request encoding.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { createRequire } from 'node:module';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { types } from 'node:util';
import { dirname, join } from 'node:path';
import type { ApiChannelEntry } from '../api/api.js';
import { HEALTH_PROTO, LOADER_OPTIONS, REGISTRY_PROTO, getEncoders, loadPackageDefinition } from '../api/api.js';
import { formatFloat32 } from '../../golang/strconv.js';
import { keepStreamTablesYoung } from '../../runtime/http2-stream-tables.js';
import { rfc3339 } from '../../apimachinery/times.js';
import { newEntry, putEntry, quote, type Entry, type Level, type Logger } from './log.js';
import { MetaKeyError, type MetaStore } from './metas.js';
import { RegistryQueryError, type RegistryIndex } from './registry-index.js';

/** The experimental endpoints answer only callers that send this header with "true". */
export const HEADER_ACKNOWLEDGE_EXPERIMENTAL = 'x-acknowledge-experimental';

type Serialize = (value: unknown) => Buffer;

/** The service with every response serializer accepting already-encoded bytes. */
function passThroughResponses(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, m] of Object.entries(def)) {
    const encode = m.responseSerialize as Serialize;
    out[name] = { ...m, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : encode(v)) };
  }
  return out;
}

function statusError(code: grpc.status, details: string): Partial<grpc.StatusObject> {
  return { code, details, metadata: new grpc.Metadata() };
}

/** A query error becomes what grpc-go makes of a plain Go error: UNKNOWN with the error's text. */
function toStatus(err: unknown): Partial<grpc.StatusObject> {
  if (err instanceof RegistryQueryError) return statusError(grpc.status.UNKNOWN, err.message);
  if (err instanceof MetaKeyError) return statusError(grpc.status.INVALID_ARGUMENT, err.message);
  return statusError(grpc.status.UNKNOWN, err instanceof Error ? err.message : String(err));
}

type Unary<Req> = grpc.handleUnaryCall<Req, Buffer>;
type Stream<Req> = grpc.handleServerStreamingCall<Req, Buffer>;

function unary<Req>(fn: (req: Req) => Buffer | Promise<Buffer>): Unary<Req> {
  return (call, callback) => {
    let out: Buffer | Promise<Buffer>;
    try {
      out = fn(call.request);
    } catch (err) {
      callback(toStatus(err));
      return;
    }
    if (Buffer.isBuffer(out)) callback(null, out);
    else
      out.then(
        (b) => callback(null, b),
        (err: unknown) => callback(toStatus(err)),
      );
  };
}

/** A long stream (ListBundles over 30,000 bundles) gives the event loop back this often, so unary calls keep their latency. */
const STREAM_SLICE_MS = 1;

async function writeAll(call: grpc.ServerWritableStream<unknown, Buffer>, items: Iterable<Buffer> | AsyncIterable<Buffer>): Promise<void> {
  let sliceStart = performance.now();
  for await (const item of items) {
    if (call.cancelled) return;
    if (!call.write(item)) {
      await new Promise<void>((resolve) => call.once('drain', resolve));
      sliceStart = performance.now();
    } else if (performance.now() - sliceStart > STREAM_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

function streaming<Req>(fn: (req: Req, call: grpc.ServerWritableStream<Req, Buffer>) => Iterable<Buffer> | AsyncIterable<Buffer>): Stream<Req> {
  return (call) => {
    let items: Iterable<Buffer> | AsyncIterable<Buffer>;
    try {
      items = fn(call.request, call);
    } catch (err) {
      call.emit('error', toStatus(err));
      return;
    }
    writeAll(call as grpc.ServerWritableStream<unknown, Buffer>, items).then(
      () => call.end(),
      (err: unknown) => call.emit('error', toStatus(err)),
    );
  };
}

interface NameRequest {
  name: string;
}
interface BundleRequest {
  pkgName: string;
  channelName: string;
  csvName: string;
}
interface GVKRequest {
  group: string;
  version: string;
  kind: string;
}
interface CustomSchemasRequest {
  schema: string;
  packageName: string;
}

export interface RegistryServerOptions {
  index: RegistryIndex;
  metas: MetaStore;
  /** request logs go here (opm logs every call's start and finish) */
  logger: Logger;
  /** log every call, as opm does (default true) */
  logCalls?: boolean;
}

const UNIMPLEMENTED = (method: string) => statusError(grpc.status.UNIMPLEMENTED, `method ${method} not implemented`);

export function createRegistryServer(opts: RegistryServerOptions): grpc.Server {
  const { index, metas } = opts;
  const enc = getEncoders();
  const def = loadPackageDefinition();
  const entries = (list: ApiChannelEntry[]): Buffer[] => list.map(enc.channelEntry);

  const registry: grpc.UntypedServiceImplementation = {
    ListPackages: streaming<object>(() => index.listPackages().map(enc.packageName)),
    GetPackage: unary<NameRequest>((req) => index.getPackage(req.name)),
    GetBundle: unary<BundleRequest>((req) => index.getBundle(req.pkgName, req.channelName, req.csvName)),
    GetBundleForChannel: unary<BundleRequest>(
      (req) => index.cachedBundleForChannel(req.pkgName, req.channelName) ?? index.getBundleForChannel(req.pkgName, req.channelName),
    ),
    GetChannelEntriesThatReplace: streaming<{ csvName: string }>((req) => entries(index.getChannelEntriesThatReplace(req.csvName))),
    GetBundleThatReplaces: unary<BundleRequest>((req) => index.getBundleThatReplaces(req.csvName, req.pkgName, req.channelName)),
    GetChannelEntriesThatProvide: streaming<GVKRequest>((req) => entries(index.getChannelEntriesThatProvide(req.group, req.version, req.kind))),
    GetLatestChannelEntriesThatProvide: streaming<GVKRequest>((req) => entries(index.getLatestChannelEntriesThatProvide(req.group, req.version, req.kind))),
    GetDefaultBundleThatProvides: unary<GVKRequest>((req) => index.getDefaultBundleThatProvides(req.group, req.version, req.kind)),
    ListBundles: streaming<object>(() => index.listBundles()),
  };

  const experimental: grpc.UntypedServiceImplementation = {
    ExperimentalListPackageCustomSchemas: streaming<CustomSchemasRequest>((req, call) => {
      // Callers that did not acknowledge the endpoint get an empty stream, so unaware clients see no change.
      if (call.metadata.get(HEADER_ACKNOWLEDGE_EXPERIMENTAL)[0] !== 'true') return [];
      if (req.schema === '') throw new MetaKeyError('schema is required');
      return metas.list(req.schema, req.packageName).map(enc.struct);
    }),
  };

  const health: grpc.UntypedServiceImplementation = {
    Check: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => callback(null, { status: 'SERVING' }),
    List: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => callback(UNIMPLEMENTED('List')),
    Watch: (call: grpc.ServerWritableStream<unknown, unknown>) => call.emit('error', UNIMPLEMENTED('Watch')),
  };

  // Channelz (grpc-js's per-call and per-socket bookkeeping for its debug service) is off: kplane
  // does not serve that service, as opm does not, and it costs every call.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0, interceptors: opts.logCalls === false ? [] : [callLogger(opts.logger)] });
  server.addService(passThroughResponses(def['api.Registry'] as grpc.ServiceDefinition), registry);
  server.addService(passThroughResponses(def['api.ExperimentalRegistry'] as grpc.ServiceDefinition), experimental);
  server.addService(def['grpc.health.v1.Health'] as grpc.ServiceDefinition, health);
  new ReflectionService(reflectionDefinition()).addToServer(server);
  return server;
}

/** Reflection describes our services and, as grpc-go's does, the reflection services themselves. */
function reflectionDefinition(): protoLoader.PackageDefinition {
  const require = createRequire(import.meta.url);
  const root = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  return protoLoader.loadSync(
    [REGISTRY_PROTO, HEALTH_PROTO, join(root, 'grpc/reflection/v1/reflection.proto'), join(root, 'grpc/reflection/v1alpha/reflection.proto')],
    { ...LOADER_OPTIONS, includeDirs: [root] },
  );
}

/** go-grpc-middleware's DefaultServerCodeToLevel, which opm serve's request logging uses. */
function levelOf(code: grpc.status): Level {
  switch (code) {
    case grpc.status.OK:
    case grpc.status.NOT_FOUND:
    case grpc.status.CANCELLED:
    case grpc.status.ALREADY_EXISTS:
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.UNAUTHENTICATED:
      return 'info';
    case grpc.status.DEADLINE_EXCEEDED:
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.FAILED_PRECONDITION:
    case grpc.status.ABORTED:
    case grpc.status.OUT_OF_RANGE:
      return 'warning';
    default:
      return 'error';
  }
}

/** grpc-go's names of status codes (codes.Code.String()). */
const CODE_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

/**
 * opm serve logs every call twice, "started call" and "finished call", with go-grpc-middleware's
 * fields (service, method, peer, start time, deadline, request metadata; then code, time and error).
 * Under load this runs twice per request, so the fields are kept as entries sorted by key with their
 * printed values: the per-method ones are made once, and a call adds only its own.
 */
function callLogger(logger: Logger): grpc.ServerInterceptor {
  const perMethod = new Map<string, Entry[]>();
  const methodEntries = (d: grpc.ServerMethodDefinition<unknown, unknown>): Entry[] => {
    let list = perMethod.get(d.path);
    if (list === undefined) {
      const [, service = '', method = ''] = /^\/([^/]+)\/(.+)$/.exec(d.path) ?? [];
      list = [];
      for (const [k, v] of [
        ['protocol', 'grpc'],
        ['grpc.component', 'server'],
        ['grpc.service', service],
        ['grpc.method', method],
        ['grpc.method_type', methodType(d)],
      ] as const) {
        putEntry(list, newEntry(k, quote(v)));
      }
      perMethod.set(d.path, list);
    }
    return list;
  };
  // Field values repeat from call to call (the client's address and headers, the start time within
  // a second, the status code): their printed entries are kept, so a call makes only its own.
  const known = new Map<string, Map<string, Entry>>();
  /** The entry of key=value, made once; with `bracket`, the value printed as `[value]` (a metadata value). */
  const entryOf = (key: string, value: string, bracket = false): Entry => {
    let byValue = known.get(bracket ? `md:${key}` : key);
    if (byValue === undefined) known.set(bracket ? `md:${key}` : key, (byValue = new Map<string, Entry>()));
    let e = byValue.get(value);
    if (e === undefined) {
      if (byValue.size >= 256) byValue.clear();
      e = newEntry(key, quote(bracket ? `[${value}]` : value));
      byValue.set(value, e);
    }
    return e;
  };
  return (methodDescriptor, call) => {
    const t0 = performance.now();
    const entries = methodEntries(methodDescriptor).slice();
    putEntry(entries, entryOf('peer.address', peerAddress(call.getPeer())));
    putEntry(entries, entryOf('grpc.start_time', rfc3339(Date.now())));
    const deadline = call.getDeadline();
    const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
    if (Number.isFinite(deadlineMs)) putEntry(entries, entryOf('grpc.request.deadline', rfc3339(deadlineMs)));
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (md, nextMd) => {
            const map = md.getMap();
            for (const k in map) {
              const v = map[k];
              putEntry(entries, entryOf(k, typeof v === 'string' ? v : String(v), true));
            }
            logger.logEntries('info', 'started call', entries);
            nextMd(md);
          },
        }),
      sendStatus: (status, next) => {
        const code = status.code ?? grpc.status.OK;
        const time = newEntry('grpc.time_ms', quote(goMilliseconds(performance.now() - t0)));
        const codeEntry = entryOf('grpc.code', CODE_NAMES[code] ?? String(code));
        // sorted by key: grpc.code < grpc.error < grpc.time_ms
        const more =
          code === grpc.status.OK
            ? [codeEntry, time]
            : [codeEntry, newEntry('grpc.error', quote(`rpc error: code = ${CODE_NAMES[code] ?? code} desc = ${status.details ?? ''}`)), time];
        logger.logEntries(levelOf(code), 'finished call', entries, more);
        next(status);
      },
    });
  };
}

/** grpc-js's peer ("ipv4:127.0.0.1:5000") as Go's net.Addr.String() ("127.0.0.1:5000"). */
function peerAddress(peer: string): string {
  return peer.startsWith('ipv4:') || peer.startsWith('ipv6:') ? peer.slice(5) : peer;
}

/**
 * go-grpc-middleware's grpc.time_ms: fmt's %v of float32(duration.Nanoseconds()/1000) / 1000, i.e.
 * whole microseconds as milliseconds in a float32's shortest digits.
 */
export function goMilliseconds(ms: number): string {
  const us = Math.trunc(ms * 1000);
  // Below 10 s the value has at most 7 significant digits, which a float32 tells apart: its shortest
  // form is the decimal itself, as JavaScript prints it.
  if (us >= 0 && us < 10_000_000) return String(us / 1000);
  return formatFloat32(Math.fround(Math.fround(us) / 1000));
}

function methodType(d: grpc.ServerMethodDefinition<unknown, unknown>): string {
  if (d.requestStream && d.responseStream) return 'bidi_stream';
  if (d.responseStream) return 'server_stream';
  if (d.requestStream) return 'client_stream';
  return 'unary';
}

const BIND_ERRORS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied',
  EADDRNOTAVAIL: 'cannot assign requested address',
};

/** Whether host:port can be bound, with Go's words when not ("listen tcp H:P: bind: address already in use"). */
function probeListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const why = err.code && BIND_ERRORS[err.code] ? `bind: ${BIND_ERRORS[err.code]}` : err.message;
      reject(new Error(`listen tcp ${addr}: ${why}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** Binds host:port (port 0 picks one) and resolves to the bound port. */
export async function listen(server: grpc.Server, host: string, port: number): Promise<number> {
  if (port !== 0) await probeListen(host, port);
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  keepGrpcStreamTablesYoung(server);
  return bound;
}

/**
 * grpc-js answers through node:http2 servers that it keeps in a private Map; they get the same
 * stream-table workaround as the API server (see runtime/http2-stream-tables.ts). A grpc-js without
 * that Map is left as it is.
 */
function keepGrpcStreamTablesYoung(server: grpc.Server): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!types.isMap(servers)) return;
  for (const s of servers.keys()) if (s instanceof EventEmitter) keepStreamTablesYoung(s as EventEmitter);
}

/** Stops taking calls and waits for the ones in flight, then forces whatever is left after graceMs. */
export function shutdown(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    timer.unref();
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
