// The core module's system namespaces controller (pkg/controlplane/controller/systemnamespaces):
// created at bootstrap, re-created when missing on every round, failures logged and retried, the
// rounds stopped by shutdown.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { StorageUnavailableError, type KV } from '../../../storage/storage.js';
import { core } from '../../modules.js';
import { ApiRegistry } from '../../registry.js';

/** Memory storage that can be taken down: every read and write then fails as an unreachable etcd does. */
class FlakyStorage extends MemoryStorage {
  down = false;
  reads = 0;
  override async get(key: string): Promise<KV | undefined> {
    this.reads++;
    if (this.down) throw new StorageUnavailableError('connection refused');
    return super.get(key);
  }
  override async create(key: string, value: Uint8Array): Promise<KV> {
    if (this.down) throw new StorageUnavailableError('connection refused');
    return super.create(key, value);
  }
}

const names = async (storage: MemoryStorage): Promise<string[]> => (await storage.list('/registry/namespaces/')).items.map((kv) => kv.key.slice('/registry/namespaces/'.length));

/** Resolves once `probe` holds, checking after every round would have run (no deadline of its own: the test's timeout is the limit). */
async function until(probe: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await probe())) await new Promise((r) => setTimeout(r, 5));
}

describe('system namespaces controller (core module)', () => {
  const rejections: unknown[] = [];
  const onRejection = (e: unknown): void => void rejections.push(e);
  before(() => process.on('unhandledRejection', onRejection));
  after(() => process.off('unhandledRejection', onRejection));

  it('bootstrap creates kube-system, kube-public and default, in that order', async () => {
    const storage = new FlakyStorage();
    const registry = new ApiRegistry(storage);
    const module = core({ systemNamespacesIntervalMs: 60_000 });
    for (const r of module.resources) registry.add(r);
    await module.bootstrap!({ registry });
    const kvs = (await storage.list('/registry/namespaces/')).items.sort((a, b) => a.modRevision - b.modRevision);
    assert.deepEqual(kvs.map((kv) => kv.key), ['/registry/namespaces/kube-system', '/registry/namespaces/kube-public', '/registry/namespaces/default']);
    await module.shutdown!();
  });

  it('re-creates a missing one on a later round; storage down is logged, not thrown, and retried; shutdown ends the rounds', { timeout: 30_000 }, async () => {
    const storage = new FlakyStorage();
    const registry = new ApiRegistry(storage);
    const logged: string[] = [];
    const module = core({ systemNamespacesIntervalMs: 10, log: (m) => logged.push(m) });
    for (const r of module.resources) registry.add(r);
    // Storage down at start: bootstrap still resolves, each namespace's failure is logged.
    storage.down = true;
    await module.bootstrap!({ registry });
    assert.deepEqual(await names(storage), []);
    assert.ok(logged.length >= 3, logged.join('\n'));
    assert.equal(logged[0], 'system namespaces: unable to create required namespace kube-system: storage is unavailable: connection refused');
    // Storage back: a later round creates them.
    storage.down = false;
    await until(async () => (await names(storage)).length === 3);
    // One removed behind the API's back comes back, with a new uid.
    const before = (await storage.get('/registry/namespaces/kube-public'))!;
    await storage.delete('/registry/namespaces/kube-public');
    await until(async () => (await storage.get('/registry/namespaces/kube-public')) !== undefined);
    const again = (await storage.get('/registry/namespaces/kube-public'))!;
    const uid = (kv: KV): unknown => (JSON.parse(Buffer.from(kv.value).toString()) as KubeObject).metadata?.uid;
    assert.notEqual(uid(again), uid(before));

    await module.shutdown!();
    const reads = storage.reads;
    await storage.delete('/registry/namespaces/default');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(storage.reads, reads, 'no round after shutdown');
    assert.deepEqual((await names(storage)).sort(), ['kube-public', 'kube-system']);
    assert.deepEqual(rejections, []);
  });

  it('the control plane log is used when the module has none of its own', async () => {
    const storage = new FlakyStorage();
    const registry = new ApiRegistry(storage);
    const logged: string[] = [];
    const module = core();
    for (const r of module.resources) registry.add(r);
    storage.down = true;
    await module.bootstrap!({ registry, log: (m) => logged.push(m) });
    await module.shutdown!();
    assert.equal(logged.length, 3);
  });
});
