// Service defaulting (SetDefaults_Service) and type transitions (dropTypeDependentFields), table
// driven from upstream's rules (research ccm.md §6): a field the old type needed and the new one
// does not is wiped only when the client sent it unchanged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultService, dropTypeDependentFields } from './strategy.js';
import type { Service, ServiceSpec } from './types.js';

const svc = (spec: ServiceSpec, status?: Service['status']): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 's' },
  spec,
  ...(status ? { status } : {}),
});

describe('defaultService', () => {
  const cases: [string, ServiceSpec, ServiceSpec][] = [
    [
      'ClusterIP',
      { ports: [{ port: 80 }] },
      { ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }], sessionAffinity: 'None', type: 'ClusterIP', internalTrafficPolicy: 'Cluster' },
    ],
    [
      'NodePort gets ETP Cluster',
      { type: 'NodePort', ports: [{ port: 80, targetPort: 'http' }] },
      {
        type: 'NodePort',
        ports: [{ port: 80, protocol: 'TCP', targetPort: 'http' }],
        sessionAffinity: 'None',
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
      },
    ],
    [
      'LoadBalancer gets allocateLoadBalancerNodePorts',
      { type: 'LoadBalancer', ports: [] },
      {
        type: 'LoadBalancer',
        ports: [],
        sessionAffinity: 'None',
        externalTrafficPolicy: 'Cluster',
        internalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
      },
    ],
    [
      'ClusterIP with externalIPs is externally accessible',
      { externalIPs: ['1.2.3.4'] },
      { externalIPs: ['1.2.3.4'], sessionAffinity: 'None', type: 'ClusterIP', externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster' },
    ],
    ['ExternalName gets no traffic policies', { type: 'ExternalName' }, { type: 'ExternalName', sessionAffinity: 'None' }],
    [
      'ClientIP affinity gets 10800 s',
      { sessionAffinity: 'ClientIP', type: 'ExternalName' },
      { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } }, type: 'ExternalName' },
    ],
  ];
  for (const [name, input, want] of cases) {
    it(name, () => {
      const s = svc(input);
      defaultService(s);
      assert.deepEqual(s.spec, want);
    });
  }

  it('an ingress IP without ipMode gets VIP on a LoadBalancer', () => {
    const s = svc({ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '127.2.0.1' }, { hostname: 'lb.example.com' }] } });
    defaultService(s);
    assert.deepEqual(s.status?.loadBalancer?.ingress, [{ ip: '127.2.0.1', ipMode: 'VIP' }, { hostname: 'lb.example.com' }]);
  });
});

describe('dropTypeDependentFields', () => {
  const lbLocal: ServiceSpec = {
    type: 'LoadBalancer',
    clusterIP: '127.1.0.5',
    clusterIPs: ['127.1.0.5'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }],
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 30999,
    allocateLoadBalancerNodePorts: true,
    loadBalancerClass: 'example.com/lb',
  };
  const cases: [string, ServiceSpec, Partial<ServiceSpec>, (keyof ServiceSpec)[], (keyof ServiceSpec)[]][] = [
    [
      'LB → ClusterIP wipes node ports, HC port, ALBNP, class, ETP; keeps cluster IPs',
      lbLocal,
      { type: 'ClusterIP' },
      ['healthCheckNodePort', 'allocateLoadBalancerNodePorts', 'loadBalancerClass', 'externalTrafficPolicy'],
      ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'],
    ],
    [
      'LB → ExternalName wipes the cluster IPs and families too',
      lbLocal,
      { type: 'ExternalName', externalName: 'x.example.com' },
      ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'healthCheckNodePort', 'externalTrafficPolicy'],
      [],
    ],
    [
      'LB Local → NodePort keeps ETP (still externally accessible), wipes the HC port',
      lbLocal,
      { type: 'NodePort' },
      ['healthCheckNodePort'],
      ['externalTrafficPolicy', 'clusterIP'],
    ],
    [
      'a value the client changed itself is kept (ETP set to Cluster on the way to ClusterIP)',
      lbLocal,
      { type: 'ClusterIP', externalTrafficPolicy: 'Cluster' },
      [],
      ['externalTrafficPolicy'],
    ],
  ];
  for (const [name, oldSpec, change, wiped, kept] of cases) {
    it(name, () => {
      const old = svc(structuredClone(oldSpec));
      const s = svc({ ...structuredClone(oldSpec), ...change });
      dropTypeDependentFields(s, old);
      for (const f of wiped) assert.equal(s.spec?.[f], undefined, `${f} wiped`);
      for (const f of kept) assert.notEqual(s.spec?.[f], undefined, `${f} kept`);
      if (change.type !== 'NodePort') assert.equal(s.spec?.ports?.[0]?.nodePort, undefined, 'nodePort wiped');
      else assert.equal(s.spec?.ports?.[0]?.nodePort, 30080, 'nodePort kept');
    });
  }

  it('a nodePort the client changed on the way to ClusterIP is kept (validation then refuses it)', () => {
    const old = svc(structuredClone(lbLocal));
    const s = svc({ ...structuredClone(lbLocal), type: 'ClusterIP', ports: [{ port: 80, nodePort: 30081, protocol: 'TCP' }] });
    dropTypeDependentFields(s, old);
    assert.equal(s.spec?.ports?.[0]?.nodePort, 30081);
  });

  it('leaving LoadBalancer empties the load balancer status', () => {
    const old = svc(structuredClone(lbLocal), { loadBalancer: { ingress: [{ ip: '127.2.0.1', ipMode: 'VIP' }] } });
    const s = svc({ ...structuredClone(lbLocal), type: 'NodePort' }, structuredClone(old.status));
    dropTypeDependentFields(s, old);
    assert.deepEqual(s.status, { loadBalancer: {} });
  });
});
