// Namespace deletion end to end: kubectl 1.20 and 1.33 `delete namespace` against kplane with the
// namespace controller running in process (loopback client) returns once the namespace and its
// content are gone; an object with its own finalizer keeps the namespace Terminating with
// upstream's status conditions until the finalizer is removed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import { garbageCollector, namespaceDeletion } from '../../src/controllers/index.js';
import type { Namespace } from '../../src/controllers/namespace/index.js';
import { NS, CM, SECRETS, LEASES } from '../support/gvrs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';

ensureTools();

let server: TestServer;
let client: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'sqlite', controllers: [namespaceDeletion({ finalizerEstimateSeconds: 2 }), garbageCollector()] });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function fill(ns: string): Promise<void> {
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (let i = 0; i < 5; i++) {
    await client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } });
    await client.create(SECRETS, ns, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s-${i}` }, stringData: { i: String(i) } });
  }
  await client.create(LEASES, ns, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lock' }, spec: { holderIdentity: 'me' } });
}

async function gone(ns: string): Promise<boolean> {
  try {
    await client.get(NS, undefined, ns);
    return false;
  } catch (e) {
    return (e as { code?: number }).code === 404;
  }
}

for (const kubectl of [
  { name: '1.20', bin: tools.kubectl120 },
  { name: '1.33', bin: tools.kubectl },
]) {
  describe(`kubectl ${kubectl.name} delete namespace`, { timeout: 60_000 }, () => {
    it('returns once the namespace and everything in it are gone', async () => {
      const ns = `nsdel-${kubectl.name.replace('.', '-')}`;
      await fill(ns);
      // A configmap outside the namespace must survive.
      await client.create(CM, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `keep-${ns}` } });
      const r = await run(kubectl.bin, ['--kubeconfig', server.kubeconfig, 'delete', 'namespace', ns, '--timeout=30s'], { timeoutMs: 40_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`namespace "${ns}" deleted`));
      assert.ok(await gone(ns), 'the namespace is gone when kubectl returns');
      for (const gvr of [CM, SECRETS, LEASES]) assert.equal((await client.list(gvr, ns)).items.length, 0, `${gvr.resource} left in ${ns}`);
      await client.get(CM, 'default', `keep-${ns}`);
    });
  });
}

describe('an object with its own finalizer', { timeout: 60_000 }, () => {
  it('keeps the namespace Terminating with NamespaceFinalizersRemaining until the finalizer goes', async () => {
    const ns = 'nsdel-held';
    await fill(ns);
    await client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const r = await run(tools.kubectl, ['--kubeconfig', server.kubeconfig, 'delete', 'namespace', ns, '--wait=false'], { timeoutMs: 20_000 });
    assert.equal(r.code, 0, r.stderr);
    const cond = (n: Namespace, type: string) => n.status?.conditions?.find((c) => c.type === type);
    const terminating = await eventually(15_000, 'NamespaceFinalizersRemaining=True', async () => {
      const n = await client.get<Namespace>(NS, undefined, ns);
      return cond(n, 'NamespaceFinalizersRemaining')?.status === 'True' ? n : undefined;
    });
    assert.equal(terminating.status?.phase, 'Terminating');
    assert.deepEqual(
      (terminating.status?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'],
        ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
        ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
        ['NamespaceContentRemaining', 'True', 'SomeResourcesRemain', 'Some resources are remaining: configmaps. has 1 resource instances'],
        [
          'NamespaceFinalizersRemaining',
          'True',
          'SomeFinalizersRemain',
          'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
        ],
      ],
    );
    assert.ok(terminating.spec?.finalizers?.includes('kubernetes'));
    // Everything without a finalizer is gone already; the held configmap is terminating.
    assert.equal((await client.list(SECRETS, ns)).items.length, 0);
    const held = await client.get(CM, ns, 'held');
    assert.ok(held.metadata?.deletionTimestamp);
    // Still there a little later.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await gone(ns), false);
    await client.patch(CM, ns, 'held', 'merge', { metadata: { finalizers: null } });
    await eventually(15_000, 'namespace gone after the finalizer was removed', async () => ((await gone(ns)) ? true : undefined));
  });
});
