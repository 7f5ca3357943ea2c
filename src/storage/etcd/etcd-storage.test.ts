import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd } from '../../../test/support/etcd.js';
import type { RunningEtcd } from '../../../test/support/etcd.js';
import { StorageUnavailableError } from '../storage.js';
import { dec, enc, storageConformance } from '../conformance/conformance.js';
import { openEtcdStorage } from './etcd-storage.js';

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

  it('ping answers, and fails with StorageUnavailableError when etcd is unreachable', async () => {
    const s = await openEtcdStorage({ endpoints: [etcd.endpoint] });
    await s.ping();
    await s.close();
    const dead = await openEtcdStorage({ endpoints: ['http://127.0.0.1:1'], pingTimeoutMs: 300 });
    const started = Date.now();
    await assert.rejects(dead.ping(), StorageUnavailableError);
    assert.ok(Date.now() - started < 2_000);
    await dead.close();
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
