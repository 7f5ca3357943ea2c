// Discovery against a server with more than ten group-versions must not pile abort listeners onto
// the caller's signal. Node warns "MaxListenersExceededWarning: Possible EventTarget memory leak
// detected. 11 abort listeners added to [AbortSignal]" once a signal holds more than ten; the
// client used to add one per request it ran in parallel (one per group-version in discovery), so
// every garbage-collector resync on a server with a dozen CRD groups printed it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import { garbageCollector } from '../../src/controllers/index.js';
import { crdObject, waitServed } from '../support/crd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const GROUPS = Array.from({ length: 12 }, (_, i) => `g${i}.listeners.example.com`);

describe('discovery with more than ten group-versions', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  let srv: TestServer;
  let raw: RawClient;
  let https: KubeClient;

  before(async () => {
    process.on('warning', onWarning);
    srv = await startTestServer({ controllers: [garbageCollector({ discoveryPeriodMs: 100 })] });
    raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    https = createHttpsClient(srv.kubeconfig);
    for (const group of GROUPS) {
      const res = await raw.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(crdObject({ group, plural: 'widgets', kind: 'Widget', spec: { type: 'object' } })),
      });
      assert.equal(res.status, 201, res.text());
    }
    for (const group of GROUPS) await waitServed(raw, `/apis/${group}/v1/widgets`);
  });
  after(async () => {
    process.off('warning', onWarning);
    raw?.agent.destroy();
    await https?.close();
    await srv?.stop();
  });

  const leakWarnings = (): string[] => warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message);

  it('client discovery over HTTPS and loopback shares one signal without a listener warning', async () => {
    const ctrl = new AbortController();
    for (const client of [https, srv.cp.loopbackClient()]) {
      for (let i = 0; i < 3; i++) {
        const lists = await client.discovery({ signal: ctrl.signal });
        assert.ok(lists.length > 10, `${lists.length} group-versions`);
        for (const g of GROUPS)
          assert.ok(
            lists.some((l) => l.groupVersion === `${g}/v1`),
            g,
          );
      }
    }
    // Node emits warnings on the next tick.
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(leakWarnings(), []);
  });

  it("the garbage collector's resync finds the new groups without a listener warning", async () => {
    // The collector can delete a dependent of a Widget only once a resync has discovered the
    // Widget's group: this proves resyncs ran against all the groups.
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(srv.kubeconfig);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const group = GROUPS.at(-1)!;
    const owner = (await custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'owner' }, spec: {} },
    })) as { metadata: { uid: string } };
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: {
        metadata: { name: 'dependent', ownerReferences: [{ apiVersion: `${group}/v1`, kind: 'Widget', name: 'owner', uid: owner.metadata.uid }] },
      },
    });
    await custom.deleteNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'widgets', name: 'owner' });
    await eventually(20_000, 'the dependent ConfigMap collected', async () => {
      try {
        await core.readNamespacedConfigMap({ namespace: 'default', name: 'dependent' });
        return undefined;
      } catch (e) {
        return (e as { code?: number }).code === 404 ? true : undefined;
      }
    });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(leakWarnings(), []);
  });
});
