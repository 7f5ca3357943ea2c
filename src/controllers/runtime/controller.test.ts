import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { FakeClock } from './clock.js';
import { Controller, TerminalError } from './controller.js';
import { ItemExponentialFailureRateLimiter } from './workqueue.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await tick();
}

function setup(reconcile: (key: string, signal: AbortSignal) => Promise<{ requeueAfterMs?: number; requeue?: boolean } | void>, workers = 1) {
  const clock = new FakeClock();
  const registry = new Registry();
  const c = new Controller({ name: 'test', reconciler: reconcile, workers, clock, registry, rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000_000) });
  const abort = new AbortController();
  const running = c.start(abort.signal);
  return { clock, registry, c, abort, running };
}

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  const v = m.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val) && !('le' in x.labels));
  return v?.value ?? NaN;
}

test('an error is retried with per-key backoff (5, 10, 20 ms); success resets it', async () => {
  const calls: number[] = [];
  let fail = 3;
  const { clock, c, abort, running, registry } = setup(async () => {
    calls.push(clock.now());
    if (fail-- > 0) throw new Error('not yet');
  });
  const t0 = clock.now();
  c.enqueue('ns/a');
  await settle();
  for (const step of [4, 1, 9, 1, 19, 1]) {
    clock.step(step);
    await settle();
  }
  assert.deepEqual(
    calls.map((t) => t - t0),
    [0, 5, 15, 35],
  );
  assert.equal(await metric(registry, 'controller_runtime_reconcile_errors_total', { controller: 'test' }), 3);
  assert.equal(await metric(registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'success' }), 1);
  assert.equal(await metric(registry, 'workqueue_retries_total', { name: 'test' }), 3);
  clock.step(10_000);
  await settle();
  assert.equal(calls.length, 4, 'no more calls after success');
  abort.abort();
  await running;
});

test('a terminal error is not retried', async () => {
  let calls = 0;
  const { clock, c, abort, running, registry } = setup(async () => {
    calls++;
    throw new TerminalError('bad spec');
  });
  c.enqueue('k');
  await settle();
  clock.step(60_000);
  await settle();
  assert.equal(calls, 1);
  assert.equal(await metric(registry, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'test' }), 1);
  abort.abort();
  await running;
});

test('requeueAfterMs reconciles again after that delay (no backoff growth)', async () => {
  const calls: number[] = [];
  const { clock, c, abort, running } = setup(async () => {
    calls.push(clock.now());
    return { requeueAfterMs: 1000 };
  });
  const t0 = clock.now();
  c.enqueue('k');
  await settle();
  for (let i = 0; i < 3; i++) {
    clock.step(1000);
    await settle();
  }
  assert.deepEqual(
    calls.map((t) => t - t0),
    [0, 1000, 2000, 3000],
  );
  abort.abort();
  await running;
});

test('N workers run different keys concurrently, never one key twice at once', async () => {
  let active = 0;
  let maxActive = 0;
  const perKey = new Map<string, number>();
  let overlap = false;
  const gates: (() => void)[] = [];
  const { c, abort, running } = setup(async (key) => {
    active++;
    maxActive = Math.max(maxActive, active);
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
    if (perKey.get(key)! > 1) overlap = true;
    await new Promise<void>((r) => gates.push(r));
    perKey.set(key, perKey.get(key)! - 1);
    active--;
  }, 3);
  for (const k of ['a', 'b', 'c', 'd', 'a', 'a']) c.enqueue(k);
  await settle();
  assert.equal(active, 3);
  c.enqueue('a'); // while a is in flight
  while (gates.length) {
    gates.shift()!();
    await settle();
  }
  assert.equal(maxActive, 3);
  assert.equal(overlap, false);
  abort.abort();
  await running;
});

test('stopping aborts the signal given to reconcile and returns once workers are done', async () => {
  let sawAbort = false;
  const { c, abort, running } = setup(
    (_key, signal) =>
      new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          sawAbort = true;
          resolve();
        });
      }),
  );
  c.enqueue('k');
  await settle();
  abort.abort();
  await running;
  assert.equal(sawAbort, true);
});

test('options are checked when the controller is built', () => {
  assert.throws(() => new Controller({ name: '', reconciler: async () => {} }), /name/);
  assert.throws(() => new Controller({ name: 'x', reconciler: async () => {}, workers: 0 }), /workers/);
});
