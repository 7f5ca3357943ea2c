// The namespace deleter's failure conditions, with a client that fails on purpose: discovery
// failing, a resource whose deletecollection fails, and a groupVersion that does not parse.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../client/https.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { NamespacedResourcesDeleter, ResourcesRemainingError, type Namespace } from './deleter.js';

const NS: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const CM: GVR = { group: '', version: 'v1', resource: 'configmaps' };

let server: TestServer;
let client: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function terminating(name: string, finalizers?: string[]): Promise<void> {
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await client.create(CM, name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', ...(finalizers ? { finalizers } : {}) } });
  await client.create({ group: '', version: 'v1', resource: 'secrets' }, name, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } });
  await client.delete(NS, undefined, name);
}

const conditions = async (name: string) =>
  Object.fromEntries(((await client.get<Namespace>(NS, undefined, name)).status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason, c.message]]));

describe('NamespacedResourcesDeleter', () => {
  it('discovery failing: NamespaceDeletionDiscoveryFailure, the namespace stays', async () => {
    await terminating('d-fail');
    const failing = Object.create(client) as KubeClient;
    failing.discovery = () => Promise.reject(new Error('the server is currently unable to handle the request'));
    const d = new NamespacedResourcesDeleter({ client: failing });
    await assert.rejects(d.delete('d-fail'), /unable to handle the request/);
    const c = await conditions('d-fail');
    assert.deepEqual(c.NamespaceDeletionDiscoveryFailure, ['True', 'DiscoveryFailed', 'the server is currently unable to handle the request']);
    assert.deepEqual(c.NamespaceDeletionContentFailure, ['False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization']);
    assert.deepEqual(c.NamespaceFinalizersRemaining, ['False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished']);
    // A working client then finishes the job and the conditions turn back.
    await new NamespacedResourcesDeleter({ client }).delete('d-fail');
    await assert.rejects(client.get(NS, undefined, 'd-fail'), { code: 404 });
  });

  it('deletecollection failing for one resource: NamespaceDeletionContentFailure, the rest is deleted', async () => {
    await terminating('c-fail');
    const failing = Object.create(client) as KubeClient;
    failing.deleteCollection = (gvr, ns, opts) =>
      gvr.resource === 'configmaps' ? Promise.reject(new Error('configmaps is forbidden')) : client.deleteCollection(gvr, ns, opts);
    const d = new NamespacedResourcesDeleter({ client: failing });
    await assert.rejects(d.delete('c-fail'), /configmaps is forbidden/);
    const c = await conditions('c-fail');
    assert.deepEqual(c.NamespaceDeletionContentFailure, [
      'True',
      'ContentDeletionFailed',
      'Failed to delete all resource types, 1 remaining: configmaps is forbidden',
    ]);
    assert.equal((await client.list({ group: '', version: 'v1', resource: 'secrets' }, 'c-fail')).items.length, 0);
    assert.equal((await client.list(CM, 'c-fail')).items.length, 1);
    await new NamespacedResourcesDeleter({ client }).delete('c-fail');
    await assert.rejects(client.get(NS, undefined, 'c-fail'), { code: 404 });
  });

  it('a groupVersion that does not parse: NamespaceDeletionGroupVersionParsingFailure', async () => {
    await terminating('gv-fail');
    const odd = Object.create(client) as KubeClient;
    odd.discovery = async (o) => [...(await client.discovery(o)), { kind: 'APIResourceList', groupVersion: 'a/b/c', resources: [] }];
    await assert.rejects(new NamespacedResourcesDeleter({ client: odd }).delete('gv-fail'), /unexpected GroupVersion string: a\/b\/c/);
    const c = await conditions('gv-fail');
    assert.deepEqual(c.NamespaceDeletionGroupVersionParsingFailure, ['True', 'GroupVersionParsingFailed', 'unexpected GroupVersion string: a/b/c']);
  });

  it('objects held by finalizers: ResourcesRemainingError with the upstream estimate', async () => {
    await terminating('held', ['example.com/x']);
    const d = new NamespacedResourcesDeleter({ client });
    await assert.rejects(d.delete('held'), (e: unknown) => e instanceof ResourcesRemainingError && e.estimateSeconds === 15);
    await client.patch(CM, 'held', 'a', 'merge', { metadata: { finalizers: null } });
    await d.delete('held');
    await assert.rejects(client.get(NS, undefined, 'held'), { code: 404 });
  });
});
