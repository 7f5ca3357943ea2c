import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createApiMetrics } from '../server/metrics.js';
import { storageConformance } from './conformance/conformance.js';
import { instrumentStorage } from './instrumented.js';
import { MemoryStorage } from './memory/memory-storage.js';
import { ExpiredError, isProgressRequestable } from './storage.js';
import type { Storage, WatchEvent, WatchOptions } from './storage.js';

storageConformance('instrumented memory', async () => {
  const inner = new MemoryStorage();
  const storage = instrumentStorage(inner, createApiMetrics({ processMetrics: false }), 'memory');
  return { storage, cleanup: () => storage.close() };
});

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** One sample's value; `name` may be a histogram's `_sum`/`_count` series. */
async function sample(metrics: ReturnType<typeof createApiMetrics>, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const family = name.replace(/_(sum|count)$/, '');
  const metric = await metrics.registry.getSingleMetric(family)?.get();
  const match = metric?.values.find(
    (v) => (family === name || (v as { metricName?: string }).metricName === name) && Object.entries(labels).every(([k, val]) => v.labels[k] === val),
  );
  return match?.value;
}

describe('instrumentStorage', () => {
  it('times successful calls and counts failed ones per operation and backend', async () => {
    const metrics = createApiMetrics({ processMetrics: false });
    const s = instrumentStorage(new MemoryStorage(), metrics, 'memory');
    await s.create('/registry/a', enc('1'));
    await assert.rejects(s.create('/registry/a', enc('2')));
    await s.get('/registry/a');
    await s.list('/registry/');

    const count = (operation: string) => sample(metrics, 'kplane_storage_request_duration_seconds', { operation, backend: 'memory', le: '+Inf' });
    assert.equal(await count('create'), 2);
    assert.equal(await count('get'), 1);
    assert.equal(await count('list'), 1);
    assert.equal(await sample(metrics, 'kplane_storage_request_errors_total', { operation: 'create', backend: 'memory' }), 1);
    assert.equal(await sample(metrics, 'kplane_storage_request_errors_total', { operation: 'get', backend: 'memory' }), undefined);
  });

  it('passes results and errors through unchanged', async () => {
    const inner = new MemoryStorage();
    const s = instrumentStorage(inner, createApiMetrics({ processMetrics: false }), 'memory');
    const kv = await s.create('/registry/a', enc('1'));
    assert.deepEqual(await inner.get('/registry/a'), kv);
    const updated = await s.update('/registry/a', enc('2'), kv.modRevision);
    await s.compact(updated.modRevision);
    await assert.rejects(s.list('/registry/', { revision: kv.modRevision }), ExpiredError);
  });

  it('counts watch opens, not their duration, and a stream that fails', async () => {
    const metrics = createApiMetrics({ processMetrics: false });
    const inner = new MemoryStorage();
    const s = instrumentStorage(inner, metrics, 'memory');
    const first = await s.create('/registry/a', enc('1'));
    await s.update('/registry/a', enc('2'), first.modRevision);
    await s.compact(first.modRevision + 1);

    const abort = new AbortController();
    const events: WatchEvent[] = [];
    const live = s.watch('/registry/', { afterRevision: 0, signal: abort.signal });
    const consumed = (async () => {
      for await (const e of live) events.push(e);
    })();
    await s.create('/registry/b', enc('x'));
    await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    await consumed;
    assert.equal(events.length, 1);

    const expired = s.watch('/registry/', { afterRevision: 1, signal: new AbortController().signal });
    await assert.rejects(async () => {
      for await (const _ of expired) void _;
    }, ExpiredError);

    assert.equal(await sample(metrics, 'kplane_storage_request_duration_seconds', { operation: 'watch', backend: 'memory', le: '+Inf' }), 2);
    assert.equal(await sample(metrics, 'kplane_storage_request_duration_seconds_sum', { operation: 'watch', backend: 'memory' }), 0);
    assert.equal(await sample(metrics, 'kplane_storage_request_errors_total', { operation: 'watch', backend: 'memory' }), 1);
  });

  it('keeps the stream able to request progress when the backend offers it', async () => {
    const s = instrumentStorage(new MemoryStorage(), createApiMetrics({ processMetrics: false }), 'memory');
    const abort = new AbortController();
    const stream = s.watch('/registry/', { afterRevision: 0, signal: abort.signal });
    assert.ok(isProgressRequestable(stream));
    stream.requestProgress();
    for await (const event of stream) {
      assert.equal(event.type, 'progress');
      break;
    }
    abort.abort();
  });

  it('does not invent the capability for a backend without it', () => {
    const inner = new MemoryStorage();
    const plain: Storage = Object.assign(Object.create(inner) as Storage, {
      watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
        const stream = inner.watch(prefix, opts);
        return { [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator]() };
      },
    });
    const s = instrumentStorage(plain, createApiMetrics({ processMetrics: false }), 'plain');
    assert.equal(isProgressRequestable(s.watch('/', { afterRevision: 0, signal: AbortSignal.abort() })), false);
  });
});
