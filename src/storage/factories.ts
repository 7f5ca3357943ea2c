// Storage backends as values for createControlPlane({ storage }): opened when the server starts.
import { join } from 'node:path';
import type { StorageFactory } from './storage.js';
import { openEtcdStorage } from './etcd/etcd-storage.js';
import { openMemoryStorage } from './memory/memory-storage.js';
import { openSqliteStorage } from './sqlite/sqlite-storage.js';

/**
 * Embedded SQLite (the default): one file under `dir`; history compacted every minute. Writes
 * commit on a worker thread unless `inProcessWriter` (then the fsync runs on the event loop).
 */
export function sqlite(opts: {
  dir: string;
  retainRevisions?: number;
  compactIntervalMs?: number;
  inProcessWriter?: boolean;
  /** See SqliteStorageOptions.walAutoCheckpointPages (default 500). */
  walAutoCheckpointPages?: number;
}): StorageFactory {
  return {
    name: 'sqlite',
    open: (ctx) =>
      openSqliteStorage({
        path: join(opts.dir, 'kplane.db'),
        ...(ctx?.log ? { onNotice: ctx.log } : {}),
        compactIntervalMs: opts.compactIntervalMs ?? 60_000,
        retainRevisions: opts.retainRevisions ?? 10_000,
        ...(opts.inProcessWriter ? { inProcessWriter: true } : {}),
        ...(opts.walAutoCheckpointPages !== undefined ? { walAutoCheckpointPages: opts.walAutoCheckpointPages } : {}),
      }),
  };
}

/** etcd 3.4+: several kplane servers may share it. History is compacted every 5 minutes, as kube-apiserver does. */
export function etcd(opts: { endpoints: string[]; prefix?: string; compactIntervalMs?: number }): StorageFactory {
  return {
    name: 'etcd',
    open: (ctx) =>
      openEtcdStorage({
        endpoints: opts.endpoints,
        compactIntervalMs: opts.compactIntervalMs ?? 5 * 60_000,
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
        ...(ctx?.log ? { onNotice: ctx.log } : {}),
      }),
  };
}

/** In-memory (tests and throwaway servers): everything is lost on stop. */
export function memory(): StorageFactory {
  return { name: 'memory', open: () => openMemoryStorage() };
}
