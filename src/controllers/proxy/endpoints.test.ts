// CategorizeEndpoints' cases (pkg/proxy/topology_test.go's, without topology hints).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { categorizeEndpoints, type Endpoint, type EndpointSlice, endpointsFor, localReadyEndpoints, type Service } from './endpoints.js';
import { Picker } from './forward.js';

const ep = (ip: string, local: boolean, state: 'ready' | 'terminating' | 'dead' = 'ready'): Endpoint => ({
  ip,
  port: 80,
  ready: state === 'ready',
  serving: state !== 'dead',
  terminating: state !== 'ready',
  local,
});
const ips = (eps: readonly Endpoint[]): string[] => eps.map((e) => e.ip);
const svc = (spec: Service['spec']): Service => ({ metadata: { name: 's', namespace: 'ns' }, spec });

describe('categorizeEndpoints', () => {
  const mixed = [ep('127.3.9.1', true), ep('127.3.9.2', false), ep('127.3.9.3', true, 'terminating'), ep('127.3.9.4', false, 'dead')];

  it('Cluster policies use every ready endpoint', () => {
    const c = categorizeEndpoints(mixed, svc({ type: 'NodePort', externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster' }));
    assert.deepEqual(ips(c.clusterEndpoints), ['127.3.9.1', '127.3.9.2']);
    assert.deepEqual(c.localEndpoints, []);
    assert.equal(c.hasAnyEndpoints, true);
  });

  it('falls back to serving terminating endpoints when none is ready', () => {
    const c = categorizeEndpoints([ep('a', false, 'terminating'), ep('b', true, 'dead')], svc({ type: 'ClusterIP' }));
    assert.deepEqual(ips(c.clusterEndpoints), ['a']);
    assert.equal(c.hasAnyEndpoints, true);
    assert.equal(categorizeEndpoints([ep('b', true, 'dead')], svc({ type: 'ClusterIP' })).hasAnyEndpoints, false);
  });

  it('ETP Local uses local ready endpoints, else local serving terminating ones, and still computes cluster ones for ITP Cluster', () => {
    const s = svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster' });
    const c = categorizeEndpoints(mixed, s);
    assert.deepEqual(ips(c.localEndpoints), ['127.3.9.1']);
    assert.deepEqual(ips(c.clusterEndpoints), ['127.3.9.1', '127.3.9.2']);
    const t = categorizeEndpoints([ep('x', true, 'terminating'), ep('y', false)], s);
    assert.deepEqual(ips(t.localEndpoints), ['x']);
    const none = categorizeEndpoints([ep('y', false)], s);
    assert.deepEqual(none.localEndpoints, []);
    assert.equal(none.hasAnyEndpoints, true);
  });

  it('ITP Local on a ClusterIP service computes no cluster endpoints', () => {
    const c = categorizeEndpoints(mixed, svc({ type: 'ClusterIP', internalTrafficPolicy: 'Local' }));
    assert.deepEqual(c.clusterEndpoints, []);
    assert.deepEqual(ips(c.localEndpoints), ['127.3.9.1']);
  });

  it('ETP is ignored where the service is not externally accessible', () => {
    const c = categorizeEndpoints(mixed, svc({ type: 'ClusterIP', externalTrafficPolicy: 'Local' }));
    assert.deepEqual(c.localEndpoints, []);
    assert.deepEqual(ips(c.clusterEndpoints), ['127.3.9.1', '127.3.9.2']);
  });
});

describe('endpointsFor', () => {
  it('matches slice ports by name and protocol, reads unset conditions as upstream, and de-duplicates', () => {
    const slices: EndpointSlice[] = [
      {
        metadata: { name: 'a' },
        addressType: 'IPv4',
        ports: [
          { name: 'http', port: 8080, protocol: 'TCP' },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
        endpoints: [
          { addresses: ['1.1.1.1'], nodeName: 'n1' },
          { addresses: ['1.1.1.2'], nodeName: 'n2', conditions: { ready: false, terminating: true } },
        ],
      },
      {
        metadata: { name: 'b' },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: ['1.1.1.1'], nodeName: 'n1' }],
      },
      { metadata: { name: 'c' }, addressType: 'IPv6', ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['::1'] }] },
    ];
    assert.deepEqual(endpointsFor(slices, { name: 'http', protocol: 'TCP', port: 80 }, 'n1'), [
      { ip: '1.1.1.1', port: 8080, ready: true, serving: true, terminating: false, local: true },
      { ip: '1.1.1.2', port: 8080, ready: false, serving: true, terminating: true, local: false },
    ]);
    assert.deepEqual(ips(endpointsFor(slices, { name: 'dns', protocol: 'UDP', port: 53 }, 'n1')), ['1.1.1.1', '1.1.1.2']);
    assert.deepEqual(endpointsFor(slices, { name: 'dns', protocol: 'TCP', port: 53 }, 'n1'), []);
    assert.equal(
      localReadyEndpoints([endpointsFor(slices, { name: 'http', port: 80 }, 'n1'), endpointsFor(slices, { name: 'dns', protocol: 'UDP', port: 53 }, 'n1')]),
      2,
    );
  });
});

describe('Picker', () => {
  it('round-robins, and keeps a client on its backend within the affinity timeout', () => {
    let now = 0;
    const p = new Picker(() => now);
    const b = [
      { ip: 'a', port: 1 },
      { ip: 'b', port: 1 },
    ];
    p.set(b, undefined);
    assert.deepEqual([p.pick('c')?.ip, p.pick('c')?.ip, p.pick('c')?.ip], ['a', 'b', 'a']);
    p.set(b, 1000);
    const first = p.pick('c')?.ip;
    now = 900;
    assert.equal(p.pick('c')?.ip, first);
    now = 1800; // refreshed at 900: still within
    assert.equal(p.pick('c')?.ip, first);
    now = 3000; // idle 1200 ms: a new pick (round-robin moves on)
    assert.notEqual(p.pick('c')?.ip, first);
    p.set([{ ip: 'z', port: 1 }], 1000);
    assert.equal(p.pick('c')?.ip, 'z');
    p.set([], 1000);
    assert.equal(p.pick('c'), undefined);
  });
});
