// The core module's system namespaces controller (pkg/controlplane/controller/systemnamespaces):
// created at bootstrap, re-created when missing on every round, failures logged and retried, the
// rounds stopped by shutdown. It writes through a loopback client into a real ApiServer over the
// storage under test, as inside a control plane.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import { StorageUnavailableError, type KV } from '../storage/storage.js';
import { createLoopbackClient } from '../client/loopback.js';
import type { KubeClient } from '../client/types.js';
import { core } from '../controlplane/modules.js';
import { versionInfo } from '../controlplane/controlplane.js';
import { ApiRegistry, type ApiModule } from '../registry/registry.js';
import { ApiServer } from '../server/apiserver.js';
import { createAuthenticator } from '../server/filters/authentication.js';

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

const TOKEN = 'system-namespaces-test';

/** The module's kinds served from `storage`, and a loopback client to that server. */
function serve(storage: MemoryStorage, module: ApiModule): { registry: ApiRegistry; client: KubeClient } {
  const registry = new ApiRegistry(storage);
  for (const r of module.resources) registry.add(r);
  const apiServer = new ApiServer({
    registry,
    admission: [],
    authenticate: createAuthenticator({ tokens: new Map([[TOKEN, { name: 'system:apiserver', groups: ['system:masters'] }]]) }),
    maxRequestBodyBytes: 3 * 1024 * 1024,
    version: versionInfo(),
    serverAddress: () => '127.0.0.1:0',
  });
  return { registry, client: createLoopbackClient(apiServer.handle, TOKEN) };
}

const names = async (storage: MemoryStorage): Promise<string[]> =>
  (await storage.list('/registry/namespaces/')).items.map((kv) => kv.key.slice('/registry/namespaces/'.length));

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
    const module = core({ systemNamespacesIntervalMs: 60_000 });
    await module.bootstrap!(serve(storage, module));
    const kvs = (await storage.list('/registry/namespaces/')).items.sort((a, b) => a.modRevision - b.modRevision);
    assert.deepEqual(
      kvs.map((kv) => kv.key),
      ['/registry/namespaces/kube-system', '/registry/namespaces/kube-public', '/registry/namespaces/default'],
    );
    await module.shutdown!();
  });

  it('re-creates a missing one on a later round; storage down is logged, not thrown, and retried; shutdown ends the rounds', { timeout: 30_000 }, async () => {
    const storage = new FlakyStorage();
    const logged: string[] = [];
    const module = core({ systemNamespacesIntervalMs: 10, log: (m) => logged.push(m) });
    const ctx = serve(storage, module);
    // Storage down at start: bootstrap still resolves, each namespace's failure is logged.
    storage.down = true;
    await module.bootstrap!(ctx);
    assert.deepEqual(await names(storage), []);
    assert.ok(logged.length >= 3, logged.join('\n'));
    assert.equal(logged[0], '"Unable to create a required namespace" err="storage is unavailable: connection refused" namespace="kube-system"');
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
    const logged: string[] = [];
    const module = core();
    const ctx = serve(storage, module);
    storage.down = true;
    await module.bootstrap!({ ...ctx, log: (m) => logged.push(m) });
    await module.shutdown!();
    assert.equal(logged.length, 3);
  });
});
