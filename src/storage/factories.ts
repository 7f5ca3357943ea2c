// Storage backends as values for createControlPlane({ storage }): opened when the server starts.
import { join } from 'node:path';
import type { StorageFactory } from './storage.js';
import { openEtcdStorage } from './etcd/etcd-storage.js';
import { openMemoryStorage } from './memory/memory-storage.js';
import { openSqliteStorage } from './sqlite/sqlite-storage.js';

/**
 * Embedded SQLite (the default): one file under `dir`. History is compacted every
 * `compactIntervalMs` (default 5 minutes, 0 = never) to the revision of one interval earlier, as
 * kube-apiserver compacts etcd; `retainRevisions` (default 0) keeps at least that many revisions
 * besides. Writes commit on a worker thread unless `inProcessWriter` (then the fsync runs on the
 * event loop).
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
        ...(ctx?.log ? { onNotice: ctx.log, onBackgroundError: logError(ctx.log) } : {}),
        compactIntervalMs: opts.compactIntervalMs ?? DEFAULT_COMPACT_INTERVAL_MS,
        retainRevisions: opts.retainRevisions ?? 0,
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
        compactIntervalMs: opts.compactIntervalMs ?? DEFAULT_COMPACT_INTERVAL_MS,
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
        ...(ctx?.log ? { onNotice: ctx.log } : {}),
      }),
  };
}

/** kube-apiserver's default `--etcd-compaction-interval` (storagebackend.DefaultCompactInterval). */
export const DEFAULT_COMPACT_INTERVAL_MS = 5 * 60_000;

function logError(log: (message: string) => void): (err: unknown) => void {
  return (err) => log(err instanceof Error ? err.message : String(err));
}

/** In-memory (tests and throwaway servers): everything is lost on stop. */
export function memory(): StorageFactory {
  return { name: 'memory', open: () => openMemoryStorage() };
}
