// The in-process client of a running control plane goes through the whole request path.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StatusError } from '../../src/apimachinery/errors.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer({ storage: 'memory' });
});
after(async () => {
  await server?.stop();
});

const configmaps = { group: '', version: 'v1', resource: 'configmaps' };

test('cp.loopbackClient(): CRUD and watch without sockets, with admission and validation', async () => {
  const client = server.cp.loopbackClient();
  const created = await client.create<KubeObject>(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lb' }, data: { a: 'b' } });
  assert.equal(created.metadata?.name, 'lb');
  const got = await client.get<KubeObject>(configmaps, 'default', 'lb');
  assert.equal(got.metadata?.uid, created.metadata?.uid);
  // NamespaceLifecycle admission applies to the loopback client too.
  await assert.rejects(
    client.create(configmaps, 'missing', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
    (e: unknown) => e instanceof StatusError && e.code === 404 && /namespaces "missing" not found/.test(e.message),
  );
  // Validation too.
  await assert.rejects(
    client.create(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } }),
    (e: unknown) => e instanceof StatusError && e.code === 422,
  );
  const ctrl = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const ev of client.watch<KubeObject>(configmaps, 'default', { resourceVersion: got.metadata!.resourceVersion!, signal: ctrl.signal })) {
      seen.push(`${ev.type} ${ev.object.metadata?.name}`);
      if (seen.length === 2) ctrl.abort();
    }
  })();
  await client.patch(configmaps, 'default', 'lb', 'merge', { data: { a: 'c' } });
  await client.delete(configmaps, 'default', 'lb');
  await watching;
  assert.deepEqual(seen, ['MODIFIED lb', 'DELETED lb']);
  await client.close();
});
