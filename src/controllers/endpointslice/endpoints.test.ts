import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  desiredEndpoints,
  endpointPorts,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  planSlices,
  podToEndpoint,
  type EndpointSlice,
  type Pod,
  type Service,
} from './endpoints.js';

const svc = (over: Partial<NonNullable<Service['spec']>> = {}): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', labels: { team: 'a' } },
  spec: {
    selector: { app: 'web' },
    clusterIP: '127.1.0.10',
    ipFamilies: ['IPv4'],
    ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    ...over,
  },
});

const pod = (name: string, ip: string, opts: { ready?: boolean; deleting?: boolean; phase?: string; port?: number } = {}): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'web' }, ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: 'sim-0', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: opts.port ?? 8080, protocol: 'TCP' }] }] },
  status: { phase: opts.phase ?? 'Running', podIP: ip, conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
});

describe('podToEndpoint', () => {
  it('a ready pod is ready and serving', () => {
    const ep = podToEndpoint(pod('a', '127.3.0.2'), svc(), 'IPv4');
    assert.deepEqual(ep, {
      addresses: ['127.3.0.2'],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: 'a', uid: 'uid-a' },
      nodeName: 'sim-0',
    });
  });
  it('a terminating ready pod is serving and terminating but not ready', () => {
    assert.deepEqual(podToEndpoint(pod('a', '127.3.0.2', { deleting: true }), svc(), 'IPv4').conditions, { ready: false, serving: true, terminating: true });
  });
  it('an unready pod is neither ready nor serving', () => {
    assert.deepEqual(podToEndpoint(pod('a', '127.3.0.2', { ready: false }), svc(), 'IPv4').conditions, { ready: false, serving: false, terminating: false });
  });
  it('publishNotReadyAddresses makes every endpoint ready', () => {
    const s = svc({ publishNotReadyAddresses: true });
    assert.equal(podToEndpoint(pod('a', '127.3.0.2', { ready: false, deleting: true }), s, 'IPv4').conditions.ready, true);
  });
  it('a named targetPort resolves to the container port of that name and protocol; a number is taken as is', () => {
    assert.deepEqual(endpointPorts(svc(), pod('a', '127.3.0.2', { port: 9376 })), [{ name: 'http', port: 9376, protocol: 'TCP' }]);
    assert.deepEqual(endpointPorts(svc({ ports: [{ name: 'x', port: 80, targetPort: 8081, protocol: 'TCP' }] }), pod('a', '127.3.0.2')), [
      { name: 'x', port: 8081, protocol: 'TCP' },
    ]);
    assert.deepEqual(endpointPorts(svc({ ports: [{ name: 'u', port: 53, targetPort: 'http', protocol: 'UDP' }] }), pod('a', '127.3.0.2')), []);
  });
  it('pods without an IP, or finished, are not endpoints', () => {
    const d = desiredEndpoints(svc(), [pod('a', ''), pod('b', '127.3.0.3', { phase: 'Succeeded' }), pod('c', '127.3.0.4')]);
    const groups = [...d.get('IPv4')!.values()];
    assert.deepEqual(
      groups.flatMap((g) => g.endpoints.map((e) => e.targetRef?.name)),
      ['c'],
    );
  });
});

describe('planSlices', () => {
  const pods = (n: number, from = 0): Pod[] =>
    Array.from({ length: n }, (_, i) => pod(`p${String(i + from).padStart(4, '0')}`, `127.3.${Math.floor((i + from) / 250)}.${((i + from) % 250) + 1}`));
  let rv = 0;
  /** Applies a plan as the server would (names and resourceVersions given to created slices). */
  const apply = (existing: EndpointSlice[], plan: ReturnType<typeof planSlices>): EndpointSlice[] => {
    const gone = new Set(plan.delete.map((s) => s.metadata?.name));
    const updated = new Map(plan.update.map((s) => [s.metadata?.name, s]));
    const out = existing.filter((s) => !gone.has(s.metadata?.name)).map((s) => updated.get(s.metadata?.name) ?? s);
    for (const c of plan.create) out.push({ ...c, metadata: { ...c.metadata, name: `web-${++rv}`, resourceVersion: String(rv) } });
    return out;
  };

  it('packs 250 endpoints into slices of at most 100, labelled and owned by the Service', () => {
    const s = svc();
    const plan = planSlices(s, desiredEndpoints(s, pods(250)), []);
    assert.deepEqual(
      plan.create.map((x) => x.endpoints!.length),
      [100, 100, 50],
    );
    const first = plan.create[0]!;
    assert.equal(first.metadata?.generateName, 'web-');
    assert.equal(first.metadata?.labels?.[LABEL_SERVICE_NAME], 'web');
    assert.equal(first.metadata?.labels?.[LABEL_MANAGED_BY], 'endpointslice-controller.k8s.io');
    assert.equal(first.metadata?.labels?.['team'], 'a');
    assert.deepEqual(first.metadata?.ownerReferences, [
      { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true },
    ]);
    assert.deepEqual(first.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.equal(first.addressType, 'IPv4');
  });

  it('changes little: nothing to do when nothing changed; one new pod fills a slice with room; a gone pod updates its slice only', () => {
    const s = svc();
    let slices = apply([], planSlices(s, desiredEndpoints(s, pods(250)), []));
    const again = planSlices(s, desiredEndpoints(s, pods(250)), slices);
    assert.deepEqual([again.create.length, again.update.length, again.delete.length], [0, 0, 0]);
    const grown = planSlices(s, desiredEndpoints(s, pods(251)), slices);
    assert.deepEqual([grown.create.length, grown.update.length, grown.delete.length], [0, 1, 0]);
    assert.equal(grown.update[0]!.endpoints!.length, 51);
    slices = apply(slices, grown);
    const shrunk = planSlices(s, desiredEndpoints(s, pods(250, 1)), slices);
    assert.deepEqual([shrunk.create.length, shrunk.update.length, shrunk.delete.length], [0, 1, 0]);
    assert.equal(shrunk.update[0]!.endpoints!.length, 99);
  });

  it('a pod turning terminating updates its endpoint in place', () => {
    const s = svc();
    const slices = apply([], planSlices(s, desiredEndpoints(s, pods(3)), []));
    const next = pods(3);
    next[1] = pod(next[1]!.metadata!.name!, next[1]!.status!.podIP!, { deleting: true });
    const plan = planSlices(s, desiredEndpoints(s, next), slices);
    assert.equal(plan.update.length, 1);
    assert.deepEqual(
      plan.update[0]!.endpoints!.map((e) => e.conditions),
      [
        { ready: true, serving: true, terminating: false },
        { ready: false, serving: true, terminating: true },
        { ready: true, serving: true, terminating: false },
      ],
    );
  });

  it('no endpoints: one placeholder slice, kept as it is; replaced once endpoints come', () => {
    const s = svc();
    const plan = planSlices(s, desiredEndpoints(s, []), []);
    assert.equal(plan.create.length, 1);
    assert.deepEqual([plan.create[0]!.endpoints, plan.create[0]!.ports], [[], null]);
    const slices = apply([], plan);
    const again = planSlices(s, desiredEndpoints(s, []), slices);
    assert.deepEqual([again.create.length, again.update.length, again.delete.length], [0, 0, 0]);
    const filled = planSlices(s, desiredEndpoints(s, pods(2)), slices);
    assert.deepEqual([filled.create.length, filled.update.length, filled.delete.length], [1, 0, 1]);
  });

  it('a changed port mapping moves endpoints to a new slice and deletes the old', () => {
    const s = svc();
    const slices = apply([], planSlices(s, desiredEndpoints(s, pods(2)), []));
    const s2 = svc({ ports: [{ name: 'http', port: 80, targetPort: 9090, protocol: 'TCP' }] });
    const plan = planSlices(s2, desiredEndpoints(s2, pods(2)), slices);
    assert.deepEqual([plan.create.length, plan.update.length, plan.delete.length], [1, 0, 1]);
    assert.deepEqual(plan.create[0]!.ports, [{ name: 'http', port: 9090, protocol: 'TCP' }]);
  });
});
