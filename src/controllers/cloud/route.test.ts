// The route controller with the fake provider (routes for podCIDRs, stale and blackhole routes
// deleted, the NetworkUnavailable condition), and the --controllers selection of the cloud
// controllers (upstream's `*`, `-name` and aliases; the route controller only when routes are
// configured).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../client/https.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { cloud } from '../../controlplane/cloud-module.js';
import { defaultModules } from '../../controlplane/modules.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { eventually } from '../../../test/support/eventually.js';
import { cloudControllers, selectCloudControllers, startCloudControllers, type RunningCloudControllers } from './index.js';
import { FakeCloud } from './fake.js';
import type { Node } from './provider.js';
import { parseCIDR, parseClusterCIDRs } from './route.js';

const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };

describe('cloud controller selection', () => {
  it('--controllers: *, -name, aliases, unknown names', () => {
    assert.deepEqual(
      [...selectCloudControllers(['*'])],
      ['cloud-node-controller', 'cloud-node-lifecycle-controller', 'service-lb-controller', 'node-route-controller'],
    );
    assert.deepEqual([...selectCloudControllers(['*', '-route'])], ['cloud-node-controller', 'cloud-node-lifecycle-controller', 'service-lb-controller']);
    assert.deepEqual([...selectCloudControllers(['service', 'cloud-node-lifecycle-controller'])], ['cloud-node-lifecycle-controller', 'service-lb-controller']);
    assert.throws(
      () => selectCloudControllers(['*', 'nodeipam']),
      /"nodeipam" is not in the list of known controllers; known controllers: cloud-node, cloud-node-controller/,
    );
  });

  it('the route controller needs --allocate-node-cidrs, --cluster-cidr and a provider with routes', () => {
    const logs: string[] = [];
    const names = (o: object) => cloudControllers({ provider: new FakeCloud(), log: (m) => logs.push(m), ...o }).map((c) => c.controllerName);
    assert.equal(names({}).includes('node-route-controller'), false);
    assert.match(logs.at(-1)!, /Will not configure cloud provider routes for allocate-node-cidrs: false/);
    assert.equal(names({ allocateNodeCIDRs: true, clusterCIDR: '127.64.0.0/10' }).includes('node-route-controller'), true);
    assert.equal(names({ allocateNodeCIDRs: true, clusterCIDR: '127.64.0.0/10', configureCloudRoutes: false }).includes('node-route-controller'), false);
    const noRoutes = cloudControllers({
      provider: new FakeCloud({ routes: false }),
      allocateNodeCIDRs: true,
      clusterCIDR: '127.64.0.0/10',
      log: (m) => logs.push(m),
    });
    assert.equal(
      noRoutes.some((c) => c.controllerName === 'node-route-controller'),
      false,
    );
    assert.match(logs.at(-1)!, /cloud provider does not support routes/);
    assert.throws(() => parseClusterCIDRs('127.0.0.0/8,10.0.0.0/8'), /not configured as dual stack/);
    assert.throws(() => parseClusterCIDRs('nope'), /invalid CIDR address: nope/);
    assert.deepEqual(parseCIDR('127.64.1.7/24'), { family: 4, first: 0x7f400100n, last: 0x7f4001ffn });
    assert.equal(parseCIDR('fd00::/120')?.last, (0xfdn << 120n) | 0xffn);
  });
});

describe('route controller with the fake provider', () => {
  let server: TestServer;
  let client: KubeClient;
  let fake: FakeCloud;
  let running: RunningCloudControllers;

  before(async () => {
    server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
    client = createHttpsClient(server.kubeconfig);
    fake = new FakeCloud();
    // A stale route of this cluster (no node owns it), a blackhole, and one outside the cluster CIDR.
    fake.routeTable.set('stale', { name: 'stale', targetNode: 'gone', destinationCIDR: '127.64.9.0/24' });
    fake.routeTable.set('hole', { name: 'hole', targetNode: 'gone', destinationCIDR: '127.64.8.0/24', blackhole: true });
    fake.routeTable.set('other', { name: 'other', targetNode: 'x', destinationCIDR: '127.9.0.0/24' });
    running = await startCloudControllers({
      client,
      provider: fake,
      controllers: ['route'],
      allocateNodeCIDRs: true,
      clusterCIDR: '127.64.0.0/10',
      routeReconciliationPeriodMs: 100,
    });
  });
  after(async () => {
    await running?.stop();
    await client?.close();
    await server?.stop();
  });

  it('creates routes for podCIDRs, deletes stale ones, sets NetworkUnavailable', async () => {
    assert.deepEqual(running.names, ['node-route-controller']);
    const n = await client.create<Node>(NODES, undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'r1' },
      spec: { podCIDR: '127.64.1.0/24', podCIDRs: ['127.64.1.0/24'] },
    });
    await eventually(5000, 'route created, stale ones gone', async () =>
      [...fake.routeTable.keys()].sort().join() === `kubernetes-${n.metadata!.uid},other` ? true : undefined,
    );
    const cond = await eventually(5000, 'NetworkUnavailable=False', async () => {
      const c = (await client.get<Node>(NODES, undefined, 'r1')).status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
      return c?.status === 'False' ? c : undefined;
    });
    assert.equal(cond.reason, 'RouteCreated');
    assert.equal(cond.message, 'RouteController created a route');
    const route = fake.routeTable.get(`kubernetes-${n.metadata!.uid}`);
    assert.equal(route?.targetNode, 'r1');
    assert.equal(route?.destinationCIDR, '127.64.1.0/24');
  });

  it('a failing CreateRoute: NoRouteCreated and FailedToCreateRoute', async () => {
    fake.setError('createRoute', { message: 'route quota exceeded' });
    await client.create<Node>(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'r2' }, spec: { podCIDRs: ['127.64.2.0/24'] } });
    const cond = await eventually(5000, 'NetworkUnavailable=True', async () => {
      const c = (await client.get<Node>(NODES, undefined, 'r2')).status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
      return c?.status === 'True' ? c : undefined;
    });
    assert.equal(cond.reason, 'NoRouteCreated');
    const ev = await eventually(5000, 'FailedToCreateRoute', async () => {
      const list = await client.list<{ involvedObject: { name: string }; reason: string; message: string } & Node>(
        { group: '', version: 'v1', resource: 'events' },
        'default',
      );
      return list.items.find((e) => e.involvedObject.name === 'r2' && e.reason === 'FailedToCreateRoute');
    });
    assert.match(ev.message, /^Could not create route .* 127\.64\.2\.0\/24 for node r2: route quota exceeded$/);
    fake.setError('createRoute', undefined);
    await eventually(5000, 'RouteCreated after the error is gone', async () => {
      const c = (await client.get<Node>(NODES, undefined, 'r2')).status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
      return c?.reason === 'RouteCreated' ? c : undefined;
    });
  });
});
