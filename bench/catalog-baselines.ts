// Baseline servers for the serve benchmark (bench/catalog.ts), each run as a process of its own
// that prints its port on stdout:
//   node --import tsx bench/catalog-baselines.ts --bare-server   grpc-js, no logic: every
//       GetBundleForChannel answered with one pre-encoded bundle (the ceiling of grpc-js here)
//   node --import tsx bench/catalog-baselines.ts --http2-floor   node:http2, no gRPC library:
//       every POST answered with the same pre-framed gRPC message and `grpc-status: 0` trailers
//       (the ceiling of Node's HTTP/2 here)
import { createServer as createH2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { getEncoders, loadPackageDefinition } from '../src/catalog/api/api.js';

/** One bundle of about the size of the benchmark catalog's (a 2 KB CSV), encoded once. */
function cannedBundle(): Buffer {
  return getEncoders().bundle({
    csvName: 'x',
    packageName: 'x',
    channelName: 'x',
    csvJson: 'x'.repeat(2000),
    object: [],
    bundlePath: 'x',
    providedApis: [],
    requiredApis: [],
    version: '1.0.0',
    skipRange: '',
    dependencies: [],
    properties: [],
    replaces: '',
    skips: [],
  });
}

export interface BaselineServer {
  readonly port: number;
  readonly stop: () => void;
}

/** grpc-js with no logic, answering GetBundleForChannel with one pre-encoded bundle. */
export async function startBareServer(): Promise<BaselineServer> {
  const canned = cannedBundle();
  const svc = loadPackageDefinition()['api.Registry'] as grpc.ServiceDefinition;
  const raw = Object.fromEntries(Object.entries(svc).map(([k, m]) => [k, { ...m, responseSerialize: (v: Buffer) => v }]));
  const server = new grpc.Server();
  server.addService(raw, { GetBundleForChannel: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, canned) });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  return { port, stop: () => server.forceShutdown() };
}

/** node:http2 answering every request with one gRPC-framed bundle and OK trailers. */
export async function startHttp2Floor(): Promise<BaselineServer> {
  const msg = cannedBundle();
  const framed = Buffer.alloc(5 + msg.length);
  framed.writeUInt32BE(msg.length, 1);
  msg.copy(framed, 5);
  const server = createH2Server();
  server.on('stream', (stream: ServerHttp2Stream) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' }));
      stream.end(framed);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { port: (server.address() as AddressInfo).port, stop: () => server.close() };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const { values } = parseArgs({ options: { 'bare-server': { type: 'boolean', default: false }, 'http2-floor': { type: 'boolean', default: false } } });
  if (values['bare-server'] === values['http2-floor']) {
    process.stderr.write('usage: catalog-baselines.ts --bare-server | --http2-floor\n');
    process.exit(2);
  }
  const { port, stop } = await (values['bare-server'] ? startBareServer() : startHttp2Floor());
  process.stdout.write(`${port}\n`);
  process.on('SIGTERM', () => {
    stop();
    process.exit(0);
  });
}
