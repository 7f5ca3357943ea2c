import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from './clock.js';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, WorkQueue, defaultControllerRateLimiter } from './workqueue.js';

/** Takes whatever get() answers within one macrotask; 'pending' if it is still waiting. */
async function poll<K>(p: Promise<K | undefined>): Promise<K | undefined | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

test('add de-duplicates keys that are waiting', async () => {
  const q = new WorkQueue<string>({ clock: new FakeClock() });
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.len(), 0);
});

test('a key re-added while processing is not handed out twice, and is queued again on done', async () => {
  const q = new WorkQueue<string>({ clock: new FakeClock() });
  q.add('a');
  const k = await q.get();
  assert.equal(k, 'a');
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'a is being processed: not ready for another worker');
  const second = q.get();
  assert.equal(await poll(second), 'pending');
  q.done('a');
  assert.equal(await second, 'a');
  q.done('a');
  assert.equal(q.len(), 0, 'the two re-adds collapsed into one');
});

test('get waits for an add; waiters are served in order', async () => {
  const q = new WorkQueue<string>({ clock: new FakeClock() });
  const w1 = q.get();
  const w2 = q.get();
  q.add('x');
  q.add('y');
  assert.deepEqual(await Promise.all([w1, w2]), ['x', 'y']);
});

test('addAfter fires on the clock; an earlier pending add for the key wins', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue<string>({ clock });
  q.addAfter('a', 100);
  q.addAfter('a', 500);
  q.addAfter('b', 50);
  clock.step(49);
  assert.equal(q.len(), 0);
  clock.step(1);
  assert.equal(q.len(), 1);
  assert.equal(await q.get(), 'b');
  clock.step(50);
  assert.equal(await q.get(), 'a');
  clock.step(1000);
  assert.equal(q.len(), 0, 'the later addAfter for a was superseded');
});

test('addRateLimited backs off 5 ms, 10 ms, 20 ms ... per key; forget resets it', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000_000) });
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    q.addRateLimited('k');
    const start = clock.now();
    while (q.len() === 0) clock.step(1);
    delays.push(clock.now() - start);
    assert.equal(await q.get(), 'k');
    q.done('k');
  }
  assert.deepEqual(delays, [5, 10, 20, 40, 80]);
  assert.equal(q.numRequeues('k'), 5);
  q.forget('k');
  assert.equal(q.numRequeues('k'), 0);
  q.addRateLimited('k');
  clock.step(5);
  assert.equal(q.len(), 1);
});

test('the per-item backoff caps at 1000 s', () => {
  const l = new ItemExponentialFailureRateLimiter<string>(5, 1000_000);
  let last = 0;
  for (let i = 0; i < 40; i++) last = l.whenMs('k');
  assert.equal(last, 1000_000);
});

test('the default limiter spreads a storm: after a burst of 100, 10 per second', () => {
  const clock = new FakeClock();
  const l = defaultControllerRateLimiter<string>(clock);
  const delays = Array.from({ length: 110 }, (_, i) => l.whenMs(`key-${i}`));
  assert.ok(
    delays.slice(0, 100).every((d) => d === 5),
    'first failure of each key: 5 ms while the bucket has tokens',
  );
  assert.equal(Math.round(delays[100]!), 100);
  assert.equal(Math.round(delays[109]!), 1000);
  const bucket = new BucketRateLimiter<string>(10, 1, clock);
  assert.equal(bucket.whenMs('a'), 0);
  assert.equal(Math.round(bucket.whenMs('a')), 100);
  clock.step(1000);
  assert.equal(bucket.whenMs('a'), 0, 'tokens refill with time');
});

test('shutDown: waiters get undefined, queued keys still drain, adds are ignored, delayed adds dropped', async () => {
  const clock = new FakeClock();
  const q = new WorkQueue<string>({ clock });
  const waiter = q.get();
  q.shutDown();
  assert.equal(await waiter, undefined);
  const q2 = new WorkQueue<string>({ clock });
  q2.add('a');
  q2.addAfter('later', 10);
  q2.shutDown();
  q2.add('b');
  clock.step(100);
  assert.equal(await q2.get(), 'a');
  assert.equal(await q2.get(), undefined);
  assert.equal(clock.pendingTimers, 0);
});

test('shutDownWithDrain waits for keys in flight', async () => {
  const q = new WorkQueue<string>({ clock: new FakeClock() });
  q.add('a');
  await q.get();
  let drained = false;
  const p = q.shutDownWithDrain().then(() => (drained = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(drained, false);
  q.done('a');
  await p;
  assert.equal(drained, true);
});

test('metrics hooks see depth, adds, latency, work duration and retries', async () => {
  const clock = new FakeClock();
  const seen = { depth: [] as number[], adds: 0, latency: [] as number[], work: [] as number[], retries: 0 };
  const q = new WorkQueue<string>({
    clock,
    metrics: {
      depth: (n) => seen.depth.push(n),
      added: () => seen.adds++,
      queueLatencySeconds: (s) => seen.latency.push(s),
      workDurationSeconds: (s) => seen.work.push(s),
      retried: () => seen.retries++,
    },
  });
  q.add('a');
  q.add('b');
  clock.step(250);
  await q.get();
  clock.step(1500);
  q.done('a');
  q.addRateLimited('a');
  assert.equal(seen.adds, 2);
  assert.deepEqual(seen.depth, [1, 2, 1]);
  assert.deepEqual(seen.latency, [0.25]);
  assert.deepEqual(seen.work, [1.5]);
  assert.equal(seen.retries, 1);
});
