// A Storage decorator that times every backend call into kplane_storage_request_duration_seconds
// and counts failures in kplane_storage_request_errors_total. Results and errors pass through
// untouched, so the wrapper is invisible to the conformance suite.
import { isProgressRequestable } from './storage.js';
import type { ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from './storage.js';

/** The slice of ApiMetrics the wrapper needs; kept structural so storage does not import the server layer. */
export interface StorageMetricsSink {
  /** `durationSeconds` undefined: count the failure only, observe no latency. */
  observeStorage(o: { readonly operation: string; readonly backend: string; readonly durationSeconds?: number; readonly failed: boolean }): void;
}

/**
 * Wraps `inner`. Expected failures (a lost compare-and-swap, create on an existing key) count as
 * errors too: a rising conflict rate is exactly what an operator wants to see.
 */
export function instrumentStorage(inner: Storage, metrics: StorageMetricsSink, backend: string): Storage {
  async function timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const startedNs = process.hrtime.bigint();
    let failed = true;
    try {
      const result = await call();
      failed = false;
      return result;
    } finally {
      const durationSeconds = Number(process.hrtime.bigint() - startedNs) / 1e9;
      metrics.observeStorage({ operation, backend, durationSeconds, failed });
    }
  }

  return {
    ...(inner.revisionIsLocal ? { revisionIsLocal: true } : {}),
    ...(inner.watchProgressRequestsSafe ? { watchProgressRequestsSafe: () => inner.watchProgressRequestsSafe?.() ?? true } : {}),
    get: (key: string) => timed('get', () => inner.get(key)),
    list: (prefix: string, opts?: ListOptions): Promise<ListResult> => timed('list', () => inner.list(prefix, opts)),
    count: (prefix: string) => timed('count', () => inner.count(prefix)),
    create: (key: string, value: Uint8Array) => timed('create', () => inner.create(key, value)),
    update: (key: string, value: Uint8Array, expectedModRevision: number) => timed('update', () => inner.update(key, value, expectedModRevision)),
    delete: (key: string, expectedModRevision?: number) => timed('delete', () => inner.delete(key, expectedModRevision)),
    watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
      // A watch lives for minutes; its duration says nothing about the backend. The histogram's
      // count records opens (at 0 s); a stream that ends in an error (e.g. Expired) counts once as failed.
      const stream = inner.watch(prefix, opts);
      metrics.observeStorage({ operation: 'watch', backend, durationSeconds: 0, failed: false });
      const counted: AsyncIterable<WatchEvent> = {
        [Symbol.asyncIterator]: async function* () {
          try {
            yield* stream;
          } catch (e) {
            metrics.observeStorage({ operation: 'watch', backend, failed: true });
            throw e;
          }
        },
      };
      // The cacher asks the stream itself for progress events; hiding that capability would
      // silently turn its consistent reads into waits for the idle progress interval.
      return isProgressRequestable(stream) ? Object.assign(counted, { requestProgress: () => stream.requestProgress() }) : counted;
    },
    currentRevision: () => timed('currentRevision', () => inner.currentRevision()),
    oldestRevision: () => timed('oldestRevision', () => inner.oldestRevision()),
    compact: (revision: number) => timed('compact', () => inner.compact(revision)),
    ...(inner.onCompacted ? { onCompacted: inner.onCompacted.bind(inner) } : {}),
    ping: () => timed('ping', () => inner.ping()),
    close: () => inner.close(),
  };
}
