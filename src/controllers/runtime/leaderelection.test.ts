import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../apimachinery/types.js';
import { ClientNetworkError } from '../../client/errors.js';
import { createHttpsClient } from '../../client/https.js';
import type { KubeClient } from '../../client/types.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { LEASES, LeaderElector, formatMicroTime, type LeaderElectionConfig } from './leaderelection.js';

let server: TestServer;
let client: KubeClient;
let seq = 0;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function eventually(ms: number, what: string, cond: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Candidate {
  readonly id: string;
  readonly elector: LeaderElector;
  readonly abort: AbortController;
  leading: boolean;
  startedAt?: number;
  stopped: number;
  readonly leaders: string[];
  readonly done: Promise<void>;
}

function candidate(id: string, lease: string, over: Partial<LeaderElectionConfig> = {}): Candidate {
  const abort = new AbortController();
  const c: Partial<Candidate> & { leading: boolean; stopped: number; leaders: string[] } = { id, abort, leading: false, stopped: 0, leaders: [] };
  const elector = new LeaderElector({
    client,
    namespace: 'kube-system',
    name: lease,
    identity: id,
    leaseDurationMs: 1000,
    renewDeadlineMs: 700,
    retryPeriodMs: 100,
    onStartedLeading: async (signal) => {
      c.leading = true;
      c.startedAt = Date.now();
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      c.leading = false;
    },
    onStoppedLeading: () => c.stopped++,
    onNewLeader: (who) => c.leaders.push(who),
    ...over,
  });
  Object.assign(c, { elector, done: elector.run(abort.signal) });
  return c as Candidate;
}

test('formatMicroTime writes six fractional digits in UTC', () => {
  assert.equal(formatMicroTime(Date.UTC(2006, 0, 2, 15, 4, 5, 7)), '2006-01-02T15:04:05.007000Z');
});

test('the durations are checked as client-go checks them', () => {
  const base = { client, namespace: 'kube-system', name: 'x', identity: 'a', onStartedLeading: () => {} };
  assert.throws(() => new LeaderElector({ ...base, leaseDurationMs: 1000, renewDeadlineMs: 1000 }), /leaseDuration/);
  assert.throws(() => new LeaderElector({ ...base, leaseDurationMs: 3000, renewDeadlineMs: 1000, retryPeriodMs: 900 }), /renewDeadline/);
});

test('two candidates: exactly one leads; when it crashes the other takes over once the lease expires', async () => {
  const lease = `crash-${process.pid}-${++seq}`;
  const a = candidate('a', lease, { releaseOnCancel: false });
  const b = candidate('b', lease, { releaseOnCancel: false });
  try {
    await eventually(5_000, 'someone leads', () => a.leading || b.leading);
    // Watch them for well over one lease duration: never two leaders.
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      assert.ok(!(a.leading && b.leading), 'two leaders at once');
      await new Promise((r) => setTimeout(r, 10));
    }
    const [leader, follower] = a.leading ? [a, b] : [b, a];
    assert.equal(follower.leading, false);
    const stored = await client.get<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'kube-system', lease);
    assert.equal(stored.spec.holderIdentity, leader.id);
    assert.equal(stored.spec.leaseDurationSeconds, 1);
    assert.match(String(stored.spec.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(String(stored.spec.acquireTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.deepEqual(follower.leaders, [leader.id]);

    // Crash: the leader's loop stops and nothing is released.
    const crashedAt = Date.now();
    leader.abort.abort();
    await leader.done;
    await eventually(5_000, 'the follower takes over', () => follower.leading);
    const took = follower.startedAt! - crashedAt;
    // It had to wait for the lease to expire (1 s from when it last saw a renewal ≤ ~0.3 s before
    // the crash): not before that (how soon after is bounded only by the 5 s wait above).
    assert.ok(took >= 500, `took over after ${took} ms: before the lease could have expired`);
    const after = await client.get<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'kube-system', lease);
    assert.equal(after.spec.holderIdentity, follower.id);
    assert.equal(after.spec.leaseTransitions, 1);
    assert.deepEqual(follower.leaders, [leader.id, follower.id]);
    assert.equal(leader.stopped, 1);
  } finally {
    a.abort.abort();
    b.abort.abort();
    await Promise.all([a.done, b.done]);
  }
});

test('a graceful stop releases the lease: the other candidate takes over without waiting for expiry', async () => {
  const lease = `release-${process.pid}-${++seq}`;
  // A 60 s lease: taking over within the 3 s wait below can only come from the release.
  const a = candidate('a', lease, { leaseDurationMs: 60_000, renewDeadlineMs: 3000, retryPeriodMs: 100 });
  await eventually(5_000, 'a leads', () => a.leading);
  const b = candidate('b', lease, { leaseDurationMs: 60_000, renewDeadlineMs: 3000, retryPeriodMs: 100 });
  try {
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(b.leading, false);
    a.abort.abort();
    await a.done;
    assert.equal(a.leading, false, 'the leader stopped its work before the lease was released');
    await eventually(3_000, 'b takes over', () => b.leading);
    const l = await client.get<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'kube-system', lease);
    assert.equal(l.spec.holderIdentity, 'b');
  } finally {
    b.abort.abort();
    await b.done;
  }
});

test('a leader that cannot renew within renewDeadline stops leading', async () => {
  const lease = `renew-${process.pid}-${++seq}`;
  let broken = false;
  const flaky = Object.create(client, {
    update: { value: (...args: Parameters<KubeClient['update']>) => (broken ? Promise.reject(new ClientNetworkError('partitioned')) : client.update(...args)) },
    get: { value: (...args: Parameters<KubeClient['get']>) => (broken ? Promise.reject(new ClientNetworkError('partitioned')) : client.get(...args)) },
  }) as KubeClient;
  const a = candidate('a', lease, { client: flaky });
  let b: Candidate | undefined;
  let aLeadingWhenBStarted: boolean | undefined;
  try {
    await eventually(5_000, 'a leads', () => a.leading);
    broken = true;
    // A second candidate with a working client acquires the lease once it expires (1 s after a's
    // last renewal); a gives up at renewDeadline (700 ms). The safety property, checked by order
    // and not by the clock: a has stopped its work before b starts its own.
    const other: Candidate = candidate('b', lease, {
      onStartedLeading: async (signal) => {
        aLeadingWhenBStarted = a.leading;
        other.leading = true;
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        other.leading = false;
      },
    });
    b = other;
    await eventually(5_000, 'b takes over', () => other.leading);
    assert.equal(aLeadingWhenBStarted, false, 'a still led when b acquired the lease');
    await a.done;
    assert.equal(a.stopped, 1);
  } finally {
    a.abort.abort();
    b?.abort.abort();
    await Promise.all([a.done, b?.done]);
  }
});

test('release still works when the last renewal was applied but its answer was lost', async () => {
  const lease = `lost-answer-${process.pid}-${++seq}`;
  let loseNext = false;
  const lossy = Object.create(client, {
    update: {
      value: async (...args: Parameters<KubeClient['update']>) => {
        const out = await client.update(...args);
        if (!loseNext) return out;
        loseNext = false;
        // The write happened; the caller never learns it, and is told to stop right now.
        a.abort.abort();
        throw new ClientNetworkError('connection reset');
      },
    },
  }) as KubeClient;
  const a = candidate('a', lease, { client: lossy, leaseDurationMs: 5000, renewDeadlineMs: 3000, retryPeriodMs: 100 });
  await eventually(5_000, 'a leads', () => a.leading);
  loseNext = true;
  await a.done;
  const l = await client.get<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'kube-system', lease);
  assert.equal(l.spec.holderIdentity, '', 'released despite the stale resourceVersion');
});
