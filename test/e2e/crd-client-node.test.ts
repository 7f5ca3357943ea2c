// @kubernetes/client-node against custom resources: ApiextensionsV1Api creates the CRD,
// CustomObjectsApi does CRUD, the status subresource and a watch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { crdObject, PHASE_STATUS } from '../support/crd.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let kc: k8s.KubeConfig;
let ext: k8s.ApiextensionsV1Api;
let custom: k8s.CustomObjectsApi;
const NS = 'default';
const G = { group: 'widgets.example.com', version: 'v1', plural: 'widgets' };

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string; generation?: number; labels?: Record<string, string> };
  spec?: { size?: number; color?: string };
  status?: { phase?: string };
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function codeOf(e: unknown): number {
  assert.ok(e instanceof k8s.ApiException, `expected ApiException, got ${String(e)}`);
  return (e as k8s.ApiException<unknown>).code;
}

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const crd = crdObject({
    group: G.group,
    plural: 'widgets',
    kind: 'Widget',
    subresources: { status: {} },
    // `_default`: client-node's name for the schema's `default` (its serializer writes `default`).
    spec: { type: 'object', properties: { size: { type: 'integer', maximum: 10 }, color: { type: 'string', _default: 'blue' } } },
    status: PHASE_STATUS,
  });
  await ext.createCustomResourceDefinition({ body: crd });
  await eventually('the CRD to be established', async () => {
    const crd = await ext.readCustomResourceDefinition({ name: 'widgets.widgets.example.com' });
    return !!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
});

after(async () => {
  await server?.stop();
});

describe('client-node CustomObjectsApi', () => {
  test('CRUD with defaulting, generation and validation', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...G,
      namespace: NS,
      body: { apiVersion: 'widgets.example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
    })) as Widget;
    assert.equal(created.spec?.color, 'blue');
    assert.equal(created.metadata.generation, 1);
    const read = (await custom.getNamespacedCustomObject({ ...G, namespace: NS, name: 'w1' })) as Widget;
    assert.equal(read.metadata.resourceVersion, created.metadata.resourceVersion);
    const list = (await custom.listNamespacedCustomObject({ ...G, namespace: NS })) as { kind: string; items: Widget[] };
    assert.equal(list.kind, 'WidgetList');
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['w1'],
    );
    read.spec = { size: 2, color: 'red' };
    const replaced = (await custom.replaceNamespacedCustomObject({ ...G, namespace: NS, name: 'w1', body: read })) as Widget;
    assert.equal(replaced.metadata.generation, 2);
    const patched = (await custom.patchNamespacedCustomObject(
      { ...G, namespace: NS, name: 'w1', body: { metadata: { labels: { a: 'b' } } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Widget;
    assert.deepEqual(patched.metadata.labels, { a: 'b' });
    assert.equal(patched.metadata.generation, 2, 'metadata changes do not bump generation');
    try {
      await custom.patchNamespacedCustomObject(
        { ...G, namespace: NS, name: 'w1', body: { spec: { size: 11 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      assert.fail('expected 422');
    } catch (e) {
      assert.equal(codeOf(e), 422);
    }
    try {
      await custom.patchNamespacedCustomObject(
        { ...G, namespace: NS, name: 'w1', body: { spec: { size: 3 } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
      );
      assert.fail('expected 415');
    } catch (e) {
      assert.equal(codeOf(e), 415);
    }
    await custom.deleteNamespacedCustomObject({ ...G, namespace: NS, name: 'w1' });
    try {
      await custom.getNamespacedCustomObject({ ...G, namespace: NS, name: 'w1' });
      assert.fail('expected 404');
    } catch (e) {
      assert.equal(codeOf(e), 404);
    }
  });

  test('status subresource', async () => {
    const w = (await custom.createNamespacedCustomObject({
      ...G,
      namespace: NS,
      body: { apiVersion: 'widgets.example.com/v1', kind: 'Widget', metadata: { name: 's1' }, spec: { size: 1 }, status: { phase: 'ignored' } },
    })) as Widget;
    assert.equal(w.status, undefined, 'create drops status');
    const st = (await custom.patchNamespacedCustomObjectStatus(
      { ...G, namespace: NS, name: 's1', body: { status: { phase: 'Ready' }, spec: { size: 9 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as Widget;
    assert.equal(st.status?.phase, 'Ready');
    assert.equal(st.spec?.size, 1);
    const got = (await custom.getNamespacedCustomObjectStatus({ ...G, namespace: NS, name: 's1' })) as Widget;
    assert.equal(got.status?.phase, 'Ready');
    const replaced = (await custom.replaceNamespacedCustomObjectStatus({
      ...G,
      namespace: NS,
      name: 's1',
      body: { ...got, status: { phase: 'Done' } },
    })) as Widget;
    assert.equal(replaced.status?.phase, 'Done');
    assert.equal(replaced.metadata.generation, 1);
  });

  test('watch sees ADDED, MODIFIED, DELETED', async () => {
    const start = (await custom.listNamespacedCustomObject({ ...G, namespace: NS })) as { metadata: { resourceVersion: string } };
    const events: [string, string, number | undefined][] = [];
    const ctrl = await new k8s.Watch(kc).watch(
      `/apis/${G.group}/${G.version}/namespaces/${NS}/${G.plural}`,
      { resourceVersion: start.metadata.resourceVersion },
      (type: string, obj: Widget) => events.push([type, obj.metadata.name, obj.spec?.size]),
      () => {},
    );
    await custom.createNamespacedCustomObject({
      ...G,
      namespace: NS,
      body: { apiVersion: 'widgets.example.com/v1', kind: 'Widget', metadata: { name: 'watched' }, spec: { size: 1 } },
    });
    await custom.patchNamespacedCustomObject(
      { ...G, namespace: NS, name: 'watched', body: { spec: { size: 2 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await custom.deleteNamespacedCustomObject({ ...G, namespace: NS, name: 'watched' });
    await eventually('three events', () => events.length >= 3);
    ctrl.abort();
    assert.deepEqual(events, [
      ['ADDED', 'watched', 1],
      ['MODIFIED', 'watched', 2],
      ['DELETED', 'watched', 2],
    ]);
  });
});
