import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startEtcd } from '../../../test/support/etcd.js';
import type { RunningEtcd } from '../../../test/support/etcd.js';
import { StorageUnavailableError } from '../storage.js';
import { dec, enc, storageConformance } from '../conformance/conformance.js';
import { openEtcdStorage, progressRequestsSafeIn } from './etcd-storage.js';

// One etcd for the file; each conformance case writes under its own random prefix.
let etcd: RunningEtcd;
before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

storageConformance('etcd', async () => {
  const storage = await openEtcdStorage({ endpoints: [etcd.endpoint] });
  return { storage, cleanup: () => storage.close() };
});

describe('etcd storage', () => {
  it('two clients on one etcd see each other (nothing is kept in process)', async () => {
    const a = await openEtcdStorage({ endpoints: [etcd.endpoint], prefix: '/shared' });
    const b = await openEtcdStorage({ endpoints: [etcd.endpoint], prefix: '/shared' });
    try {
      const kv = await a.create('/registry/x/one', enc('1'));
      assert.equal(dec(await b.get('/registry/x/one')), '1');
      await b.update('/registry/x/one', enc('2'), kv.modRevision);
      await assert.rejects(a.update('/registry/x/one', enc('3'), kv.modRevision), /conflict/);
      const other = await openEtcdStorage({ endpoints: [etcd.endpoint], prefix: '/other' });
      assert.equal(await other.get('/registry/x/one'), undefined);
      await other.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  // pingTimeoutMs bounds the failing ping; the test's timeout only keeps a hang from stalling the suite.
  it('ping answers, and fails with StorageUnavailableError when etcd is unreachable', { timeout: 15_000 }, async () => {
    const s = await openEtcdStorage({ endpoints: [etcd.endpoint] });
    await s.ping();
    await s.close();
    const dead = await openEtcdStorage({ endpoints: ['http://127.0.0.1:1'], pingTimeoutMs: 300 });
    await assert.rejects(dead.ping(), StorageUnavailableError);
    await dead.close();
  });

  it('tries the next endpoint when one refuses connections', async () => {
    const s = await openEtcdStorage({ endpoints: ['http://127.0.0.1:1', etcd.endpoint], prefix: '/endpoints' });
    try {
      const kv = await s.create('/registry/x/a', enc('1'));
      assert.equal(dec(await s.get('/registry/x/a')), '1');
      await s.update('/registry/x/a', enc('2'), kv.modRevision);
    } finally {
      await s.close();
    }
  });

  it('a dropped connection fails the watch with StorageUnavailableError; later calls reconnect', async () => {
    // A TCP proxy in front of etcd whose connections can be cut.
    const upstream = new URL(etcd.endpoint);
    const sockets = new Set<Socket>();
    const proxy: Server = createServer((down) => {
      const up = connect(Number(upstream.port), upstream.hostname);
      for (const sock of [down, up]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => undefined);
      }
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    const s = await openEtcdStorage({ endpoints: [`http://127.0.0.1:${port}`], prefix: '/dropped' });
    const stop = new AbortController();
    try {
      const first = await s.create('/registry/x/a', enc('1'));
      const events = s.watch('/registry/x/', { afterRevision: first.modRevision - 1, signal: stop.signal })[Symbol.asyncIterator]();
      const seen = await events.next();
      assert.equal(seen.done, false);
      for (const sock of sockets) sock.destroy();
      await assert.rejects(events.next(), StorageUnavailableError);
      const second = await s.create('/registry/x/b', enc('2'));
      assert.ok(second.modRevision > first.modRevision);
      assert.equal(dec(await s.get('/registry/x/b')), '2');
    } finally {
      stop.abort();
      await s.close();
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  // Without a deadline the get below waits for as long as the proxy stalls (here: until the test
  // ends it). Keepalive (a 5 s ping, 2 s for its answer) closes the stalled connection; the retry
  // on a new connection that never completes ends at the call's 8 s deadline, as unavailable.
  it('a member that stops answering (stalled connection) fails calls instead of hanging', { timeout: 60_000 }, async () => {
    const upstream = new URL(etcd.endpoint);
    const sockets = new Set<Socket>();
    let stalled = false;
    // A TCP proxy that, once stalled, keeps its connections open but forwards nothing more.
    const proxy: Server = createServer((down) => {
      const up = connect(Number(upstream.port), upstream.hostname);
      for (const [from, to] of [
        [down, up],
        [up, down],
      ] as const) {
        sockets.add(from);
        from.on('close', () => sockets.delete(from));
        from.on('error', () => undefined);
        from.on('data', (chunk: Buffer) => {
          if (!stalled) to.write(chunk);
        });
      }
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as { port: number }).port;
    const s = await openEtcdStorage({
      endpoints: [`http://127.0.0.1:${port}`],
      prefix: '/stalled',
      keepaliveTimeMs: 5_000,
      keepaliveTimeoutMs: 2_000,
      callTimeoutMs: 8_000,
    });
    const release = AbortSignal.timeout(25_000);
    try {
      await s.create('/registry/x/a', enc('1'));
      stalled = true;
      const outcome = await Promise.race([
        s.get('/registry/x/a').then(
          () => 'answered',
          (err: unknown) => (err instanceof StorageUnavailableError ? 'unavailable' : `other: ${String(err)}`),
        ),
        new Promise<string>((resolve) => release.addEventListener('abort', () => resolve('still waiting after 25 s'))),
      ]);
      assert.equal(outcome, 'unavailable');
    } finally {
      stalled = false;
      await s.close();
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  // A value that is a view into the gRPC message it came in keeps that whole message (or Node's
  // 8 KiB Buffer pool slab) alive for as long as the watch cache keeps the value: with 10,000 events
  // per resource in the cache's ring, each a Lease renewal on a slab of its own, a soak's RSS rose
  // for as long as the rings filled. Every value handed out must own exactly its own bytes.
  it('values own their bytes: never a view into the gRPC message they came in', async () => {
    const s = await openEtcdStorage({ endpoints: [etcd.endpoint], prefix: '/ownbytes' });
    const stop = new AbortController();
    const owns = (what: string, value: Uint8Array | undefined): void => {
      assert.ok(value !== undefined, `${what}: no value`);
      assert.equal(value.buffer.byteLength, value.byteLength, `${what}: a ${value.byteLength}-byte value holds a ${value.buffer.byteLength}-byte buffer`);
    };
    try {
      // 100 values of 60 bytes: one range response of about 10 KiB, each value a 60-byte window in
      // it (a get's response, under 4 KiB, is a slice of the pool).
      const first = await s.create('/registry/o/k000', enc('v'.repeat(60)));
      await Promise.all(Array.from({ length: 99 }, (_, i) => s.create(`/registry/o/k${String(i + 1).padStart(3, '0')}`, enc('v'.repeat(60)))));
      const listed = await s.list('/registry/o/');
      assert.equal(listed.items.length, 100);
      for (const kv of listed.items) owns(`list ${kv.key}`, kv.value);
      owns('get', (await s.get('/registry/o/k001'))?.value);
      const updated = await s.update('/registry/o/k000', enc('w'.repeat(60)), first.modRevision);
      await s.delete('/registry/o/k001');
      const events = s.watch('/registry/o/', { afterRevision: first.modRevision - 1, signal: stop.signal });
      let seen = 0;
      for await (const ev of events) {
        if (ev.type === 'progress') continue;
        owns(`${ev.type} event ${ev.kv.key}@${ev.revision}`, ev.kv.value);
        if (ev.prevKv !== undefined) owns(`previous value of ${ev.type} event ${ev.kv.key}@${ev.revision}`, ev.prevKv.value);
        if (++seen === 102) break;
      }
      assert.ok(updated.modRevision > first.modRevision);
    } finally {
      stop.abort();
      await s.close();
    }
  });

  it('coordinated compaction: of two servers only one compacts per round, one round behind', async () => {
    // Own etcd: compaction is global to an etcd and would disturb the other cases.
    const own = await startEtcd();
    const a = await openEtcdStorage({ endpoints: [own.endpoint] });
    const b = await openEtcdStorage({ endpoints: [own.endpoint] });
    try {
      for (let i = 0; i < 5; i++) await a.create(`/registry/c/k${i}`, enc(String(i)));
      await a.compactRound(); // bootstrap round: claims the key, remembers the revision, compacts nothing
      await b.compactRound(); // loses the race: learns the key's version only
      assert.equal(await a.oldestRevision(), 1);
      const seen = await a.currentRevision();
      for (let i = 5; i < 8; i++) await a.create(`/registry/c/k${i}`, enc(String(i)));
      await b.compactRound(); // b now holds the current version: it wins and compacts at what it saw last round
      const oldest = await a.oldestRevision();
      assert.ok(oldest > 1 && oldest <= seen + 2, `oldest ${oldest}, revision seen a round earlier ${seen}`);
      assert.equal(dec(await a.get('/registry/c/k7')), '7');
    } finally {
      await a.close();
      await b.close();
      await own.stop();
    }
  });
});

describe('watch progress requests (kube RequestWatchProgress feature check)', () => {
  it('are safe from etcd 3.4.31 and 3.5.13 on, as kube-apiserver decides', () => {
    const cases: [string, boolean][] = [
      ['3.4.23', false],
      ['3.4.30', false],
      ['3.4.31', true],
      ['3.5.0', false],
      ['3.5.12', false],
      ['3.5.13', true],
      ['3.6.0', true],
      ['4.0.0', true],
      ['3.3.27', false],
      ['not-a-version', false],
    ];
    for (const [version, safe] of cases) assert.equal(progressRequestsSafeIn(version), safe, version);
  });

  it('are not sent to the etcd the tests run (3.4.23), and a notice says why', async () => {
    const notices: string[] = [];
    const s = await openEtcdStorage({ endpoints: [etcd.endpoint], onNotice: (m) => notices.push(m) });
    try {
      for (let i = 0; i < 200 && notices.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      assert.match(notices[0] ?? '', /^etcd 3\.4\.\d+ at http:\/\/127\.0\.0\.1:\d+ may answer watch progress requests ahead of the events/);
      assert.equal(s.watchProgressRequestsSafe(), false);
    } finally {
      await s.close();
    }
  });
});
