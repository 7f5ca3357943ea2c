// The order of groups and versions in discovery, as kube-apiserver's aggregator gives it (the order
// `kubectl api-resources` prints): /apis sorts APIServices by group priority, ties by APIService
// name (`<version>.<group>`), versions by version priority then kube-aware version order;
// aggregated discovery sorts groups by priority, ties by group name. Built-in groups carry
// upstream's priorities (events 17750, apiextensions 16700, coordination 16500); CRD groups 1000.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { crdObject, waitServed } from '../support/crd.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

describe('discovery order', () => {
  let srv: TestServer;
  let raw: RawClient;

  before(async () => {
    srv = await startTestServer();
    raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    const post = async (body: unknown): Promise<void> => {
      const res = await raw.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 201, res.text());
    };
    await post(crdObject({ group: 'b.example.com', plural: 'widgets', kind: 'Widget', spec: { type: 'object' } }));
    // Two versions, the beta one listed first and stored: discovery still prefers v2.
    const gadgets = crdObject({ group: 'a.example.com', plural: 'gadgets', kind: 'Gadget', spec: { type: 'object' } });
    const v = gadgets.spec.versions[0]!;
    gadgets.spec.versions = [
      { ...v, name: 'v1beta1', storage: true },
      { ...v, name: 'v2', storage: false },
    ];
    await post(gadgets);
    await waitServed(raw, '/apis/b.example.com/v1/widgets');
    await waitServed(raw, '/apis/a.example.com/v2/gadgets');
  });
  after(async () => {
    raw.agent.destroy();
    await srv.stop();
  });

  it('/apis: by group priority, then APIService name; versions by priority', async () => {
    const list = (await raw.request({ path: '/apis', headers: { accept: 'application/json' } })).json<{
      groups: { name: string; versions: { version: string }[]; preferredVersion: { version: string } }[];
    }>();
    // v1.b.example.com sorts before v1beta1.a.example.com ('.' < 'b'): b's group comes first here.
    assert.deepEqual(
      list.groups.map((g) => g.name),
      [
        'events.k8s.io',
        'authentication.k8s.io',
        'authorization.k8s.io',
        'rbac.authorization.k8s.io',
        'admissionregistration.k8s.io',
        'apiextensions.k8s.io',
        'coordination.k8s.io',
        'b.example.com',
        // kplane's own group has no upstream priority: a CRD's (v1alpha1.features.kplane.io sorts here).
        'features.kplane.io',
        'a.example.com',
      ],
    );
    const a = list.groups.find((g) => g.name === 'a.example.com')!;
    assert.deepEqual(
      a.versions.map((x) => x.version),
      ['v2', 'v1beta1'],
    );
    assert.equal(a.preferredVersion.version, 'v2');
    const group = (await raw.request({ path: '/apis/a.example.com' })).json<{ versions: { version: string }[]; preferredVersion: { version: string } }>();
    assert.deepEqual(
      group.versions.map((x) => x.version),
      ['v2', 'v1beta1'],
    );
    assert.equal(group.preferredVersion.version, 'v2');
  });

  it('aggregated discovery: by group priority, then group name', async () => {
    const res = await raw.request({ path: '/apis', headers: { accept: AGGREGATED } });
    assert.match(String(res.headers['content-type']), /as=APIGroupDiscoveryList/);
    const doc = res.json<{ items: { metadata: { name: string }; versions: { version: string }[] }[] }>();
    assert.deepEqual(
      doc.items.map((g) => g.metadata.name),
      [
        'events.k8s.io',
        'authentication.k8s.io',
        'authorization.k8s.io',
        'rbac.authorization.k8s.io',
        'admissionregistration.k8s.io',
        'apiextensions.k8s.io',
        'coordination.k8s.io',
        'a.example.com',
        'b.example.com',
        'features.kplane.io',
      ],
    );
    assert.deepEqual(
      doc.items.find((g) => g.metadata.name === 'a.example.com')!.versions.map((x) => x.version),
      ['v2', 'v1beta1'],
    );
  });
});
