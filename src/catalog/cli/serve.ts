// `kplane catalog serve DIR`: the registry gRPC API over a file-based catalog, as `opm serve` serves it.
import { createWriteStream, openSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { goQuote, NumError, parseGoBool } from '../../golang/strconv.js';
import { JsonCache, goFSError } from '../serve/cache.js';
import { catalogFromDir, type ServedCatalog } from '../serve/catalog.js';
import { bufferedWriter, createLogger, type Logger } from '../serve/log.js';
import { createRegistryServer, listen, shutdown } from '../serve/server.js';

export const usage = `Usage: kplane catalog serve <source_path> [flags]

Serves a file-based catalog over the registry gRPC API (api.Registry, grpc.health.v1.Health and
server reflection), as "opm serve" does.

NOTE: The catalog directory is loaded at startup. Changes made to it after the command starts are
not reflected in the served content.

Flags:
  -p, --port PORT                   port number to serve on (default "50051")
      --host HOST                   address to bind (default "127.0.0.1"; "0.0.0.0" for every interface)
      --cache-dir DIR               if set, sync and persist the server cache directory (JSON per bundle,
                                    read on demand)
      --cache-only                  sync the serve cache and exit without serving
      --cache-enforce-integrity     exit with error if the cache is not present or has been invalidated
                                    (default: true when --cache-dir is set and --cache-only is not)
      --debug                       enable debug logging
      --log-calls=false             do not log each call's start and finish (logged by default, as opm does)
  -t, --termination-log FILE        path to a container termination log file (opm's default is
                                    /dev/termination-log; ours is none); the fatal error is written there
  -h, --help                        help for serve
`;

const SHUTDOWN_GRACE_MS = 10_000;

class FatalError extends Error {
  override readonly name = 'FatalError';
}

interface Flags {
  configDir: string;
  port: number;
  host: string;
  cacheDir: string;
  cacheOnly: boolean;
  cacheEnforceIntegrity: boolean;
  debug: boolean;
  logCalls: boolean;
  terminationLog: string;
}

function parseFlags(argv: string[]): Flags {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string', short: 'p', default: '50051' },
      host: { type: 'string', default: '127.0.0.1' },
      'cache-dir': { type: 'string', default: '' },
      'cache-only': { type: 'boolean', default: false },
      'cache-enforce-integrity': { type: 'boolean' },
      debug: { type: 'boolean', default: false },
      'log-calls': { type: 'string', default: 'true' },
      'termination-log': { type: 'string', short: 't', default: '' },
    },
  });
  if (positionals.length !== 1) throw new FatalError(`accepts 1 arg(s), received ${positionals.length}`);
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) throw new FatalError(`failed to listen: listen tcp: address ${values.port}: invalid port`);
  const cacheDir = values['cache-dir'];
  const cacheOnly = values['cache-only'];
  return {
    configDir: positionals[0]!,
    port,
    host: values.host,
    cacheDir,
    cacheOnly,
    // opm's default: enforce when a cache dir is given for serving (a pre-built cache must be intact)
    cacheEnforceIntegrity: values['cache-enforce-integrity'] ?? (cacheDir !== '' && !cacheOnly),
    debug: values.debug,
    logCalls: parseBool('--log-calls', values['log-calls']),
    terminationLog: values['termination-log'],
  };
}

function parseBool(flag: string, v: string): boolean {
  const b = parseGoBool(v);
  if (b instanceof NumError) throw new FatalError(`invalid argument ${goQuote(v)} for "${flag}" flag: ${b.message}`);
  return b;
}

async function loadServed(flags: Flags, logger: Logger): Promise<ServedCatalog> {
  if (flags.cacheDir === '' && flags.cacheEnforceIntegrity) throw new FatalError('--cache-dir must be specified with --cache-enforce-integrity');
  if (flags.cacheDir === '') {
    // Without a cache dir opm builds a throw-away cache; we index the catalog in memory instead.
    try {
      return await catalogFromDir(flags.configDir);
    } catch (err) {
      throw new FatalError(`failed to load or rebuild cache: failed to rebuild cache: ${message(err)}`);
    }
  }
  const cache = new JsonCache({ cacheDir: flags.cacheDir, configDir: flags.configDir, logger });
  await cache.checkUsable();
  if (flags.cacheEnforceIntegrity) {
    try {
      await cache.checkIntegrity();
    } catch (err) {
      throw new FatalError(`integrity check failed: ${message(err)}`);
    }
    try {
      return await cache.load();
    } catch (err) {
      throw new FatalError(`failed to load cache: ${message(err)}`);
    }
  }
  try {
    return await cache.loadOrRebuild();
  } catch (err) {
    throw new FatalError(`failed to load or rebuild cache: ${message(err)}`);
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export async function run(argv: string[]): Promise<number> {
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    process.stderr.write(`Error: ${message(err)}\n\n${usage}`);
    return 1;
  }
  // grpc-js would print its own error lines; every failure is reported once, as opm's log line
  grpc.setLogVerbosity(grpc.logVerbosity.NONE);
  // Until the server is up, lines go out synchronously (a fatal error must be written before exit).
  let sink = (chunk: Buffer): void => void process.stderr.write(chunk);
  // Lines reach stderr within 50 ms (or at 64 KiB): at 2,000 calls/s that is 20 writes a second
  // instead of one per turn of the event loop, each a wake-up of the thread pool and of this thread.
  const out = bufferedWriter((chunk) => sink(chunk), { maxDelayMs: 50 });
  const root = createLogger({ write: out.write, pieces: out, level: flags.debug ? 'debug' : 'info' });
  const logger = root.with({ configs: flags.configDir, ...(flags.cacheDir ? { cache: flags.cacheDir } : {}) });
  // Set up first, as opm does: a path that cannot be opened is only a warning.
  let terminationLog: number | undefined;
  if (flags.terminationLog) {
    try {
      terminationLog = openSync(flags.terminationLog, 'w', 0o644);
    } catch (err) {
      root.warn('unable to set termination log path', { error: goFSError(err) });
    }
  }
  const fatal = (err: unknown): number => {
    root.log('fatal', message(err)); // opm's logger.Fatal: the bare logger, no fields
    out.flush();
    // Kubernetes shows this file as the container's termination message
    if (terminationLog !== undefined) writeSync(terminationLog, message(err) + '\n');
    return 1;
  };

  let served: ServedCatalog;
  try {
    served = await loadServed(flags, logger);
  } catch (err) {
    return fatal(err);
  }
  out.flush();
  if (flags.cacheOnly) return 0;

  const server = createRegistryServer({ ...served, logger: root, logCalls: flags.logCalls });
  let port: number;
  try {
    port = await listen(server, flags.host, flags.port);
  } catch (err) {
    return fatal(new FatalError(`failed to listen: ${message(err)}`));
  }
  const address = flags.host.includes(':') ? `[${flags.host}]:${port}` : `${flags.host}:${port}`;
  const serving = logger.with({ port, address });
  serving.info('serving registry');
  out.flush();
  // From here on every call is logged: write through libuv's thread pool, so a log reader that falls
  // behind (a full pipe) holds up neither the event loop nor the answers.
  const callLog = createWriteStream('/dev/stderr', { fd: 2, autoClose: false });
  sink = (chunk) => void callLog.write(chunk);

  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      serving.info('shutting down server');
      void shutdown(server, SHUTDOWN_GRACE_MS).then(() => {
        out.flush();
        callLog.end(() => resolve());
      });
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  return 0;
}
