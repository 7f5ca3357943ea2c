// Garbage collection end to end: kubectl 1.20 and 1.33 `delete --cascade=background|foreground|orphan`
// on an owner configmap with dependent configmaps and secrets, foreground deletion observed step
// by step through watch events, and upstream's rules for owners that are gone, re-created,
// cluster-scoped or in another namespace; cycles and long chains finish.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject, OwnerReference } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { garbageCollector, namespaceDeletion } from '../../src/controllers/index.js';
import { NS, CM, SECRETS, EVENTS } from '../support/gvrs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';

ensureTools();

let server: TestServer;
let client: KubeClient;
let seq = 0;

before(async () => {
  server = await startTestServer({ storage: 'sqlite', controllers: [namespaceDeletion(), garbageCollector({ discoveryPeriodMs: 5000 })] });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function newNamespace(): Promise<string> {
  const name = `gc-${++seq}`;
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function ref(owner: KubeObject, extra: Partial<OwnerReference> = {}): OwnerReference {
  return { apiVersion: owner.apiVersion ?? 'v1', kind: owner.kind ?? 'ConfigMap', name: owner.metadata!.name!, uid: owner.metadata!.uid!, ...extra };
}

async function cm(ns: string | undefined, name: string, owners: OwnerReference[] = [], finalizers?: string[]): Promise<KubeObject> {
  return client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences: owners, ...(finalizers ? { finalizers } : {}) } });
}

async function secret(ns: string, name: string, owners: OwnerReference[] = []): Promise<KubeObject> {
  return client.create(SECRETS, ns, { apiVersion: 'v1', kind: 'Secret', metadata: { name, ownerReferences: owners } });
}

async function exists(gvr: GVR, ns: string | undefined, name: string): Promise<KubeObject | undefined> {
  try {
    return await client.get(gvr, ns, name);
  } catch (e) {
    if ((e as { code?: number }).code === 404) return undefined;
    throw e;
  }
}

const goneWithin = (ms: number, gvr: GVR, ns: string | undefined, name: string): Promise<true> =>
  eventually(ms, `${gvr.resource} ${ns ?? ''}/${name} gone`, async () => ((await exists(gvr, ns, name)) ? undefined : true));

for (const kubectl of [
  { name: '1.20', bin: tools.kubectl120 },
  { name: '1.33', bin: tools.kubectl },
]) {
  describe(`kubectl ${kubectl.name} delete --cascade`, { timeout: 60_000 }, () => {
    const kdelete = (ns: string, name: string, cascade: string) =>
      run(kubectl.bin, ['--kubeconfig', server.kubeconfig, '-n', ns, 'delete', 'configmap', name, `--cascade=${cascade}`, '--timeout=30s'], {
        timeoutMs: 40_000,
      });

    it('background: the owner goes at once, its dependents (and theirs) after it', async () => {
      const ns = await newNamespace();
      const owner = await cm(ns, 'owner');
      const d1 = await cm(ns, 'dep-cm', [ref(owner)]);
      await secret(ns, 'dep-secret', [ref(owner, { controller: true, blockOwnerDeletion: true })]);
      await cm(ns, 'grandchild', [ref(d1)]);
      const bystander = await cm(ns, 'bystander');
      const r = await kdelete(ns, 'owner', 'background');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(await exists(CM, ns, 'owner'), undefined);
      await goneWithin(10_000, CM, ns, 'dep-cm');
      await goneWithin(10_000, SECRETS, ns, 'dep-secret');
      await goneWithin(10_000, CM, ns, 'grandchild');
      assert.equal((await client.get(CM, ns, 'bystander')).metadata?.uid, bystander.metadata?.uid);
    });

    it('foreground: kubectl returns after the dependents and then the owner are gone', async () => {
      const ns = await newNamespace();
      const owner = await cm(ns, 'owner');
      await cm(ns, 'dep-cm', [ref(owner, { blockOwnerDeletion: true })]);
      await secret(ns, 'dep-secret', [ref(owner, { blockOwnerDeletion: true })]);
      const r = await kdelete(ns, 'owner', 'foreground');
      assert.equal(r.code, 0, r.stderr);
      await goneWithin(10_000, CM, ns, 'owner');
      assert.equal(await exists(CM, ns, 'dep-cm'), undefined, 'blocking dependents are gone before the owner');
      assert.equal(await exists(SECRETS, ns, 'dep-secret'), undefined);
    });

    it('orphan: the owner goes, its dependents stay without the ownerReference', async () => {
      const ns = await newNamespace();
      const owner = await cm(ns, 'owner');
      const other = await cm(ns, 'other-owner');
      await cm(ns, 'dep-cm', [ref(owner), ref(other)]);
      await secret(ns, 'dep-secret', [ref(owner, { controller: true, blockOwnerDeletion: true })]);
      const r = await kdelete(ns, 'owner', 'orphan');
      assert.equal(r.code, 0, r.stderr);
      await goneWithin(10_000, CM, ns, 'owner');
      const dep = await client.get(CM, ns, 'dep-cm');
      assert.deepEqual(
        dep.metadata?.ownerReferences?.map((o) => o.name),
        ['other-owner'],
      );
      const s = await client.get(SECRETS, ns, 'dep-secret');
      assert.equal(s.metadata?.ownerReferences, undefined);
      // Still there a moment later: nothing deletes orphans.
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(await exists(SECRETS, ns, 'dep-secret'));
      assert.ok(await exists(CM, ns, 'dep-cm'));
    });
  });
}

describe('foreground deletion, step by step through watch events', { timeout: 60_000 }, () => {
  it('owner gets foregroundDeletion, blocking dependents go, then the owner', async () => {
    const ns = await newNamespace();
    const events: string[] = [];
    const abort = new AbortController();
    const watching = (gvr: GVR) =>
      (async () => {
        const list = await client.list(gvr, ns);
        for await (const ev of client.watch(gvr, ns, { resourceVersion: list.metadata.resourceVersion!, signal: abort.signal })) {
          const m = ev.object.metadata ?? {};
          const state = m.deletionTimestamp ? `terminating[${(m.finalizers ?? []).join(',')}]` : 'live';
          events.push(`${ev.type} ${ev.object.kind}/${m.name} ${state}`);
        }
      })().catch(() => {});
    const w1 = watching(CM);
    const w2 = watching(SECRETS);
    await new Promise((r) => setTimeout(r, 200));
    const owner = await cm(ns, 'owner');
    // A dependent with its own finalizer holds the owner until that finalizer is removed.
    await cm(ns, 'held', [ref(owner, { blockOwnerDeletion: true })], ['example.com/hold']);
    await secret(ns, 'blocker', [ref(owner, { blockOwnerDeletion: true })]);
    await cm(ns, 'nonblocking', [ref(owner)]);
    await client.delete(CM, ns, 'owner', { propagationPolicy: 'Foreground' });
    await eventually(10_000, 'held dependent terminating, blocker gone', async () =>
      events.includes('DELETED Secret/blocker live') && events.some((e) => e.startsWith('MODIFIED ConfigMap/held terminating')) ? true : undefined,
    );
    const o = await client.get(CM, ns, 'owner');
    assert.ok(o.metadata?.deletionTimestamp, 'the owner waits with a deletionTimestamp');
    assert.deepEqual(o.metadata?.finalizers, ['foregroundDeletion']);
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(await exists(CM, ns, 'owner'), 'still waiting for the held dependent');
    await client.patch(CM, ns, 'held', 'merge', { metadata: { finalizers: null } });
    await goneWithin(10_000, CM, ns, 'owner');
    await goneWithin(10_000, CM, ns, 'nonblocking');
    await eventually(5_000, 'all DELETED events seen', async () => (events.filter((e) => e.startsWith('DELETED')).length >= 4 ? true : undefined));
    abort.abort();
    await Promise.all([w1, w2]);
    const at = (prefix: string) => events.findIndex((e) => e.startsWith(prefix));
    const ownerTerminating = at('MODIFIED ConfigMap/owner terminating[foregroundDeletion]');
    assert.ok(ownerTerminating >= 0, events.join('\n'));
    assert.ok(at('DELETED Secret/blocker') > ownerTerminating, events.join('\n'));
    assert.ok(at('DELETED ConfigMap/held') > ownerTerminating, events.join('\n'));
    assert.ok(at('DELETED ConfigMap/owner') > at('DELETED ConfigMap/held'), events.join('\n'));
    assert.ok(at('DELETED ConfigMap/owner') > at('DELETED Secret/blocker'), events.join('\n'));
  });
});

describe("upstream's rules for owners", { timeout: 60_000 }, () => {
  it('a dependent of an owner that never existed, or was re-created with another uid, is deleted', async () => {
    const ns = await newNamespace();
    await cm(ns, 'orphan-from-birth', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'nobody', uid: '00000000-0000-0000-0000-000000000001' }]);
    const owner = await cm(ns, 'owner');
    const staleRef = ref(owner);
    await client.delete(CM, ns, 'owner', { propagationPolicy: 'Orphan' });
    await goneWithin(10_000, CM, ns, 'owner');
    await cm(ns, 'owner'); // same name, new uid
    await cm(ns, 'stale-dep', [staleRef]);
    await goneWithin(10_000, CM, ns, 'orphan-from-birth');
    await goneWithin(10_000, CM, ns, 'stale-dep');
    assert.ok(await exists(CM, ns, 'owner'), 'the re-created owner is not touched');
  });

  it('a namespaced dependent of a cluster-scoped owner lives as long as the owner', async () => {
    const ownerNs = await newNamespace();
    const nsObj = await client.get(NS, undefined, ownerNs);
    const ns = await newNamespace();
    await cm(ns, 'of-namespace', [{ apiVersion: 'v1', kind: 'Namespace', name: ownerNs, uid: nsObj.metadata!.uid! }]);
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(await exists(CM, ns, 'of-namespace'));
    await client.delete(NS, undefined, ownerNs);
    await goneWithin(15_000, NS, undefined, ownerNs);
    await goneWithin(10_000, CM, ns, 'of-namespace');
  });

  it('a cross-namespace owner is invalid: OwnerRefInvalidNamespace, and the dependent is collected', async () => {
    const a = await newNamespace();
    const b = await newNamespace();
    const owner = await cm(a, 'owner');
    await new Promise((r) => setTimeout(r, 300)); // let the collector observe the owner
    const dep = await cm(b, 'cross', [ref(owner)]);
    const ev = await eventually(10_000, 'OwnerRefInvalidNamespace event', async () =>
      (await client.list(EVENTS, b)).items.find((e) => (e as unknown as { reason?: string }).reason === 'OwnerRefInvalidNamespace'),
    );
    const e = ev as unknown as { message: string; type: string; involvedObject: { name: string; uid: string } };
    assert.equal(e.type, 'Warning');
    assert.equal(e.involvedObject.uid, dep.metadata?.uid);
    assert.equal(e.message, `ownerRef [v1/ConfigMap, namespace: ${b}, name: owner, uid: ${owner.metadata?.uid}] does not exist in namespace "${b}"`);
    await goneWithin(10_000, CM, b, 'cross');
    assert.ok(await exists(CM, a, 'owner'), 'the owner is not touched');
  });

  it('a cluster-scoped dependent with a namespaced owner: event, the reference is ignored', async () => {
    const ns = await newNamespace();
    const owner = await cm(ns, 'owner');
    await new Promise((r) => setTimeout(r, 300));
    const name = `gc-cluster-dep-${seq}`;
    const dep = await client.create<KubeObject>(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ownerReferences: [ref(owner)] } });
    const ev = await eventually(10_000, 'OwnerRefInvalidNamespace event in default', async () =>
      (await client.list(EVENTS, 'default')).items.find(
        (e) => (e as unknown as { involvedObject?: { uid?: string } }).involvedObject?.uid === dep.metadata?.uid,
      ),
    );
    assert.equal((ev as unknown as { reason: string }).reason, 'OwnerRefInvalidNamespace');
    await client.delete(CM, ns, 'owner');
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(await exists(NS, undefined, name), 'a cluster-scoped object is not collected for a namespaced owner');
    await client.delete(NS, undefined, name);
  });

  it('cycles and long chains finish', async () => {
    const ns = await newNamespace();
    // a ⇄ b, both blocking, deleted in foreground.
    const a = await cm(ns, 'cycle-a');
    const b = await cm(ns, 'cycle-b', [ref(a, { blockOwnerDeletion: true })]);
    await client.patch(CM, ns, 'cycle-a', 'merge', { metadata: { ownerReferences: [ref(b, { blockOwnerDeletion: true })] } });
    await client.delete(CM, ns, 'cycle-a', { propagationPolicy: 'Foreground' });
    await goneWithin(15_000, CM, ns, 'cycle-a');
    await goneWithin(15_000, CM, ns, 'cycle-b');
    // A chain of 40 (configmaps and secrets alternating), the root deleted in background.
    let prev = await cm(ns, 'chain-0');
    for (let i = 1; i < 40; i++) prev = i % 2 ? await secret(ns, `chain-${i}`, [ref(prev)]) : await cm(ns, `chain-${i}`, [ref(prev)]);
    await client.delete(CM, ns, 'chain-0');
    await goneWithin(20_000, SECRETS, ns, 'chain-39');
    assert.equal((await client.list(CM, ns)).items.filter((o) => o.metadata?.name?.startsWith('chain-')).length, 0);
  });
});
