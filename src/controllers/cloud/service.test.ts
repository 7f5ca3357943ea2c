// The service controller against a real API server (cloud module) and the fake provider: upstream's
// needsUpdate/needsCleanup tables, the finalizer and status written through services/status,
// deletion, loadBalancerClass, node-set changes, provider errors and RetryError.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createHttpsClient } from '../../client/https.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { cloud } from '../../controlplane/cloud-module.js';
import { defaultModules } from '../../controlplane/modules.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { eventually } from '../../../test/support/eventually.js';
import { runControllers, type RunningControllers } from '../index.js';
import { FakeCloud } from './fake.js';
import { LB_CLEANUP_FINALIZER, type Node, type Service } from './provider.js';
import { loadBalancerNode, needsCleanup, needsUpdate, serviceLBController, shouldSyncUpdatedNode, wantsLoadBalancer } from './service.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };

const lb = (spec: Service['spec'] = {}, meta: Service['metadata'] = {}): Service => ({
  metadata: { name: 's', namespace: 'default', uid: 'u1', ...meta },
  spec: { type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP', nodePort: 30080, targetPort: 80 }], ...spec },
});

describe('service controller predicates (upstream tables)', () => {
  it('needsUpdate', () => {
    const cases: [string, Service, Service, boolean][] = [
      ['neither wants an LB', lb({ type: 'ClusterIP' }), lb({ type: 'NodePort' }), false],
      ['type to LoadBalancer', lb({ type: 'ClusterIP' }), lb(), true],
      ['nothing changed', lb(), lb(), false],
      ['source ranges', lb(), lb({ loadBalancerSourceRanges: ['10.0.0.0/8'] }), true],
      ['port added', lb(), lb({ ports: [{ port: 80 }, { port: 81 }] }), true],
      ['nodePort changed', lb(), lb({ ports: [{ port: 80, protocol: 'TCP', nodePort: 30081, targetPort: 80 }] }), true],
      ['targetPort changed', lb(), lb({ ports: [{ port: 80, protocol: 'TCP', nodePort: 30080, targetPort: 'http' }] }), true],
      ['session affinity', lb(), lb({ sessionAffinity: 'ClientIP' }), true],
      ['loadBalancerIP', lb(), lb({ loadBalancerIP: '127.0.200.9' }), true],
      ['externalIPs', lb({ externalIPs: ['127.1.0.1'] }), lb({ externalIPs: ['127.1.0.2'] }), true],
      ['annotations', lb(), lb({}, { annotations: { a: 'b' } }), true],
      ['UID', lb(), lb({}, { uid: 'u2' }), true],
      ['externalTrafficPolicy', lb(), lb({ externalTrafficPolicy: 'Local' }), true],
      ['healthCheckNodePort', lb(), lb({ healthCheckNodePort: 31000 }), true],
      ['ipFamilies count', lb({ ipFamilies: ['IPv4'] }), lb({ ipFamilies: ['IPv4', 'IPv6'] }), true],
      ['labels do not matter', lb(), lb({}, { labels: { a: 'b' } }), false],
      ['selector does not matter', lb(), lb({ selector: { app: 'x' } }), false],
      ['loadBalancerClass set: no longer wanted', lb(), lb({ loadBalancerClass: 'example.com/lb' }), true],
    ];
    for (const [name, a, b, want] of cases) assert.equal(needsUpdate(a, b), want, name);
  });

  it('needsCleanup and wantsLoadBalancer', () => {
    const fin = { finalizers: [LB_CLEANUP_FINALIZER] };
    assert.equal(needsCleanup(lb()), false);
    assert.equal(needsCleanup(lb({}, fin)), false);
    assert.equal(needsCleanup(lb({}, { ...fin, deletionTimestamp: '2026-01-01T00:00:00Z' })), true);
    assert.equal(needsCleanup(lb({ type: 'ClusterIP' }, fin)), true);
    assert.equal(needsCleanup(lb({ type: 'ClusterIP' })), false);
    assert.equal(wantsLoadBalancer(lb()), true);
    assert.equal(wantsLoadBalancer(lb({ loadBalancerClass: 'x/y' })), false);
    assert.equal(wantsLoadBalancer(lb({ type: 'NodePort' })), false);
  });

  it('node predicates: deleted, excluded, autoscaler taint; readiness is not one', () => {
    const n = (labels: Record<string, string> = {}, extra: Partial<Node> = {}): Node => ({ metadata: { name: 'n', labels }, ...extra });
    const ex = 'node.kubernetes.io/exclude-from-external-load-balancers';
    assert.equal(loadBalancerNode(n()), true);
    assert.equal(loadBalancerNode(n({}, { status: { conditions: [{ type: 'Ready', status: 'False' }] } })), true);
    assert.equal(loadBalancerNode(n({ [ex]: 'true' })), false);
    assert.equal(loadBalancerNode(n({ [ex]: 'false' })), true);
    assert.equal(loadBalancerNode(n({ [ex]: '' })), false, 'a value that does not parse excludes');
    assert.equal(loadBalancerNode(n({}, { spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] } })), false);
    assert.equal(loadBalancerNode({ metadata: { name: 'n', deletionTimestamp: '2026-01-01T00:00:00Z' } }), false);
    assert.equal(shouldSyncUpdatedNode(n(), n({ [ex]: 'true' })), true);
    assert.equal(shouldSyncUpdatedNode(n(), n({ other: 'x' })), false);
    assert.equal(shouldSyncUpdatedNode(n(), n({}, { spec: { providerID: 'fake://n' } })), true);
  });
});

describe('service controller with the fake provider', () => {
  let server: TestServer;
  let client: KubeClient;
  let fake: FakeCloud;
  let running: RunningControllers;
  const registry = new Registry();

  before(async () => {
    server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
    client = createHttpsClient(server.kubeconfig);
    fake = new FakeCloud();
    running = runControllers({
      client,
      metrics: registry,
      controllers: [serviceLBController({ provider: fake, minRetryDelayMs: 100, maxRetryDelayMs: 400, providerCallTimeoutMs: 300 })],
    });
  });
  after(async () => {
    await running?.stop();
    await client?.close();
    await server?.stop();
  });

  const get = (name: string) => client.get<Service>(SERVICES, 'default', name);
  const create = (name: string, spec: Service['spec'] = {}) =>
    client.create<Service>(SERVICES, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }], ...spec },
    });
  const reasons = async (name: string): Promise<string[]> => {
    const list = await client.list<{ involvedObject: { name: string }; reason: string } & Service>(EVENTS, 'default');
    return list.items.filter((e) => e.involvedObject.name === name).map((e) => e.reason);
  };

  it('ensures a load balancer: finalizer first, then the ingress in status, with events', async () => {
    await client.create(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    await create('web');
    const s = await eventually(5000, 'ingress', async () => {
      const s = await get('web');
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    assert.deepEqual(s.metadata?.finalizers, [LB_CLEANUP_FINALIZER]);
    assert.match(s.status!.loadBalancer!.ingress![0]!.ip!, /^127\.0\.200\.\d+$/);
    assert.deepEqual(fake.callsOf('ensureLoadBalancer').at(-1)?.nodes, ['n1']);
    await eventually(5000, 'events', async () => {
      const r = await reasons('web');
      return r.includes('EnsuringLoadBalancer') && r.includes('EnsuredLoadBalancer') ? r : undefined;
    });
  });

  it('a new node updates the load balancer hosts (UpdatedLoadBalancer)', async () => {
    await client.create(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
    await eventually(5000, 'update with both nodes', async () => (fake.balancers.get('default/web')?.nodes.sort().join() === 'n1,n2' ? true : undefined));
    assert.ok(fake.callsOf('updateLoadBalancer').length >= 1);
    await eventually(5000, 'UpdatedLoadBalancer', async () => ((await reasons('web')).includes('UpdatedLoadBalancer') ? true : undefined));
    const text = await registry.metrics();
    assert.match(text, /^service_controller_loadbalancer_sync_total [1-9]/m);
    assert.match(text, /^service_controller_nodesync_latency_seconds_count [1-9]/m);
    assert.match(text, /^workqueue_adds_total\{name="service"\} [1-9]/m);
    // Excluding a node takes it out.
    await client.patch(NODES, undefined, 'n2', 'merge', { metadata: { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } } });
    await eventually(5000, 'n2 excluded', async () => (fake.balancers.get('default/web')?.nodes.join() === 'n1' ? true : undefined));
  });

  it('delete: the load balancer is deleted, the finalizer removed, the Service gone', async () => {
    await client.delete(SERVICES, 'default', 'web');
    await eventually(5000, 'service gone', async () => {
      try {
        await get('web');
        return undefined;
      } catch (e) {
        return (e as { code?: number }).code === 404 ? true : undefined;
      }
    });
    assert.ok(fake.callsOf('ensureLoadBalancerDeleted').some((c) => c.target === 'default/web'));
    assert.equal(fake.balancers.has('default/web'), false);
  });

  it('type LoadBalancer → ClusterIP deletes the load balancer and the finalizer', async () => {
    await create('flip');
    await eventually(5000, 'ingress', async () => ((await get('flip')).status?.loadBalancer?.ingress?.length ? true : undefined));
    await client.patch(SERVICES, 'default', 'flip', 'merge', { spec: { type: 'ClusterIP', ports: [{ port: 80, nodePort: null }] } });
    const s = await eventually(5000, 'finalizer removed', async () => {
      const s = await get('flip');
      return s.metadata?.finalizers?.length ? undefined : s;
    });
    assert.deepEqual(s.status?.loadBalancer ?? {}, {});
    assert.equal(fake.balancers.has('default/flip'), false);
  });

  it('a loadBalancerClass Service is left alone', async () => {
    await create('classy', { loadBalancerClass: 'example.com/other' });
    await new Promise((r) => setTimeout(r, 300));
    const s = await get('classy');
    assert.equal(s.metadata?.finalizers, undefined);
    assert.equal(
      fake.callsOf('ensureLoadBalancer').some((c) => c.target === 'default/classy'),
      false,
    );
  });

  it('a provider error: SyncLoadBalancerFailed, retried until it works', async () => {
    fake.setError('ensureLoadBalancer', { message: 'quota exceeded', times: 2 });
    await create('flaky');
    const s = await eventually(10000, 'ingress after retries', async () => {
      const s = await get('flaky');
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    assert.ok(s.metadata?.finalizers?.includes(LB_CLEANUP_FINALIZER));
    assert.ok(fake.callsOf('ensureLoadBalancer').filter((c) => c.target === 'default/flaky').length >= 3);
    const list = await client.list<{ involvedObject: { name: string }; reason: string; message: string; type: string; count: number } & Service>(
      EVENTS,
      'default',
    );
    const failed = list.items.find((e) => e.involvedObject.name === 'flaky' && e.reason === 'SyncLoadBalancerFailed');
    assert.equal(failed?.type, 'Warning');
    assert.equal(failed?.message, 'Error syncing load balancer: failed to ensure load balancer: quota exceeded');
    assert.equal(failed?.count, 2);
  });

  it('a RetryError is retried after the delay it names', async () => {
    fake.setError('ensureLoadBalancer', { message: 'not yet', retryAfterMs: 200, times: 1 });
    await create('later');
    await eventually(10000, 'ingress after the retry', async () => ((await get('later')).status?.loadBalancer?.ingress?.length ? true : undefined));
    assert.equal(fake.callsOf('ensureLoadBalancer').filter((c) => c.target === 'default/later').length, 2);
  });

  it('a provider call that hangs is bounded: SyncLoadBalancerFailed, retried with backoff, then ensured', async () => {
    fake.setHang('ensureLoadBalancer', true);
    try {
      await create('stuck');
      const failed = await eventually(10_000, 'two timed-out syncs', async () => {
        const list = await client.list<{ involvedObject: { name: string }; reason: string; message: string; count: number } & Service>(EVENTS, 'default');
        const e = list.items.find((x) => x.involvedObject.name === 'stuck' && x.reason === 'SyncLoadBalancerFailed');
        return e && e.count >= 2 ? e : undefined;
      });
      assert.equal(failed.message, 'Error syncing load balancer: failed to ensure load balancer: EnsureLoadBalancer did not return within 0.3s');
      assert.ok(fake.callsOf('ensureLoadBalancer').filter((c) => c.target === 'default/stuck').length >= 2);
      assert.match(await registry.metrics(), /^workqueue_retries_total\{name="service"\} [1-9]/m);
    } finally {
      fake.setHang('ensureLoadBalancer', false);
    }
    await eventually(10_000, 'ingress once the cloud answers', async () => ((await get('stuck')).status?.loadBalancer?.ingress?.length ? true : undefined));
  });
});

describe('the cloud controllers inside a control plane (createControlPlane controllers)', () => {
  it('a LoadBalancer Service gets its ingress from controllers run by the control plane itself', async () => {
    const { defaultControllers } = await import('../index.js');
    const { cloudControllers } = await import('./index.js');
    const fake = new FakeCloud({ ingressPrefix: '127.0.201' });
    const server = await startTestServer({
      storage: 'memory',
      apis: [...defaultModules(), cloud()],
      controllers: [...defaultControllers(), ...cloudControllers({ provider: fake, controllers: ['service'] })],
    });
    const client = createHttpsClient(server.kubeconfig);
    try {
      await client.create(SERVICES, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'inproc' },
        spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
      });
      const s = await eventually(10000, 'ingress', async () => {
        const s = await client.get<Service>(SERVICES, 'default', 'inproc');
        return s.status?.loadBalancer?.ingress?.length ? s : undefined;
      });
      assert.match(s.status!.loadBalancer!.ingress![0]!.ip!, /^127\.0\.201\.\d+$/);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
