// The cloud module's Services through real clients (issue 25): kubectl 1.20 and 1.33 (`create
// service`, `get -o wide`, `describe`), @kubernetes/client-node and raw HTTP, against upstream's
// registry semantics (pkg/registry/core/service/storage: allocation, release, type transitions;
// pkg/apis/core/validation: ValidateService's messages).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { KUBECTLS, kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run } from '../support/tools.js';

const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const MERGE_CT = { 'content-type': 'application/merge-patch+json', accept: 'application/json' };

interface Svc {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec: {
    type?: string;
    clusterIP?: string;
    clusterIPs?: string[];
    ipFamilies?: string[];
    ipFamilyPolicy?: string;
    ports?: { name?: string; port: number; nodePort?: number; protocol?: string; targetPort?: number | string }[];
    externalTrafficPolicy?: string;
    internalTrafficPolicy?: string;
    healthCheckNodePort?: number;
    allocateLoadBalancerNodePorts?: boolean;
    sessionAffinity?: string;
    externalName?: string;
    selector?: Record<string, string>;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; ipMode?: string }[] } };
}

let server: TestServer;
let raw: RawClient;
let dir: string;

const svcPath = (name = '') => `/api/v1/namespaces/default/services${name ? `/${name}` : ''}`;
const create = (body: unknown): Promise<RawResponse> => raw.request({ method: 'POST', path: svcPath(), headers: JSON_CT, body: JSON.stringify(body) });
const patch = (name: string, body: unknown): Promise<RawResponse> =>
  raw.request({ method: 'PATCH', path: svcPath(name), headers: MERGE_CT, body: JSON.stringify(body) });
const del = (name: string): Promise<RawResponse> => raw.request({ method: 'DELETE', path: svcPath(name), headers: JSON_CT });
const svc = (name: string, spec: Record<string, unknown>): Svc => ({ metadata: { name }, spec });
const created = async (body: unknown): Promise<Svc> => {
  const r = await create(body);
  assert.equal(r.status, 201, r.text());
  return r.json<Svc>();
};
const message = (r: RawResponse): string => r.json<{ message: string }>().message;

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
  raw = new RawClient(server.url, adminCredentials(server.dataDir), { maxSockets: 64 });
  dir = await mkdtemp(join(tmpdir(), 'kplane-cloud-services-'));
});
after(async () => {
  raw?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('Service defaults and allocation', () => {
  it('a ClusterIP service gets upstream defaults and a cluster IP from 127.1.0.0/16', async () => {
    const s = await created(svc('plain', { ports: [{ port: 80 }], selector: { app: 'a' } }));
    assert.equal(s.spec.type, 'ClusterIP');
    assert.equal(s.spec.sessionAffinity, 'None');
    assert.equal(s.spec.internalTrafficPolicy, 'Cluster');
    assert.equal(s.spec.externalTrafficPolicy, undefined);
    assert.equal(s.spec.ipFamilyPolicy, 'SingleStack');
    assert.deepEqual(s.spec.ipFamilies, ['IPv4']);
    assert.match(s.spec.clusterIP ?? '', /^127\.1\.\d+\.\d+$/);
    assert.deepEqual(s.spec.clusterIPs, [s.spec.clusterIP]);
    assert.deepEqual(s.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
  });

  it('NodePort and LoadBalancer services get node ports from 30000-32767, ETP Cluster, allocateLoadBalancerNodePorts true', async () => {
    const np = await created(svc('np', { type: 'NodePort', ports: [{ port: 80 }] }));
    const port = np.spec.ports![0]!.nodePort!;
    assert.ok(port >= 30000 && port <= 32767, String(port));
    assert.equal(np.spec.externalTrafficPolicy, 'Cluster');
    const lb = await created(svc('lb', { type: 'LoadBalancer', ports: [{ port: 80 }] }));
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
    assert.ok(lb.spec.ports![0]!.nodePort! >= 30000);
    assert.notEqual(lb.spec.ports![0]!.nodePort, port);
  });

  it('a LoadBalancer with externalTrafficPolicy Local gets a healthCheckNodePort; allocateLoadBalancerNodePorts false gets no node ports', async () => {
    const s = await created(
      svc('local', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }] }),
    );
    assert.ok((s.spec.healthCheckNodePort ?? 0) >= 30000, JSON.stringify(s.spec));
    assert.equal(s.spec.ports![0]!.nodePort, undefined);
  });

  it('TCP and UDP on one port share the nodePort the user gives', async () => {
    const s = await created(
      svc('dns', {
        type: 'NodePort',
        ports: [
          { name: 'tcp', port: 53, protocol: 'TCP', nodePort: 30053 },
          { name: 'udp', port: 53, protocol: 'UDP', nodePort: 30053 },
        ],
      }),
    );
    assert.deepEqual(
      s.spec.ports!.map((p) => p.nodePort),
      [30053, 30053],
    );
  });

  it('50 NodePort services created at once get 50 distinct node ports and cluster IPs', async () => {
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => created(svc(`par-${i}`, { type: 'NodePort', ports: [{ port: 80 }] }))));
    const ports = new Set(all.map((s) => s.spec.ports![0]!.nodePort));
    const ips = new Set(all.map((s) => s.spec.clusterIP));
    assert.equal(ports.size, 50);
    assert.equal(ips.size, 50);
  });
});

describe('Requested values', () => {
  it('an allocated nodePort is refused with 422 provided port is already allocated', async () => {
    await created(svc('owner', { type: 'NodePort', ports: [{ port: 80, nodePort: 30060 }] }));
    const r = await create(svc('thief', { type: 'NodePort', ports: [{ port: 80, nodePort: 30060 }] }));
    assert.equal(r.status, 422);
    assert.equal(message(r), 'Service "thief" is invalid: spec.ports[0].nodePort: Invalid value: 30060: provided port is already allocated');
  });

  it('a nodePort out of the range is refused with the range in the message', async () => {
    const r = await create(svc('far', { type: 'NodePort', ports: [{ port: 80, nodePort: 40000 }] }));
    assert.equal(r.status, 422);
    assert.equal(
      message(r),
      'Service "far" is invalid: spec.ports[0].nodePort: Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );
  });

  it('an allocated clusterIP is refused; a free one is honoured', async () => {
    const s = await created(svc('ip-owner', { clusterIP: '127.1.0.10', ports: [{ port: 80 }] }));
    assert.deepEqual(s.spec.clusterIPs, ['127.1.0.10']);
    const r = await create(svc('ip-thief', { clusterIP: '127.1.0.10', ports: [{ port: 80 }] }));
    assert.equal(r.status, 422);
    assert.equal(
      message(r),
      'Service "ip-thief" is invalid: spec.clusterIPs: Invalid value: ["127.1.0.10"]: failed to allocate IP 127.1.0.10: provided IP is already allocated',
    );
    const out = await create(svc('ip-out', { clusterIP: '10.0.0.1', ports: [{ port: 80 }] }));
    assert.equal(out.status, 422);
    assert.match(message(out), /the provided IP \(10\.0\.0\.1\) is not in the valid range\. The range of valid IPs is 127\.1\.0\.0\/16/);
  });

  it('a failed create gives back what it took; a delete releases node ports and cluster IPs for the next create', async () => {
    // The nodePort is taken first, then validation fails (a bad session affinity): the port is free again.
    const bad = await create(svc('bad', { type: 'NodePort', sessionAffinity: 'Sticky', ports: [{ port: 80, nodePort: 30062 }] }));
    assert.equal(bad.status, 422);
    await created(svc('good', { type: 'NodePort', clusterIP: '127.1.0.20', ports: [{ port: 80, nodePort: 30062 }] }));
    assert.equal((await del('good')).status, 200);
    await created(svc('again', { type: 'NodePort', clusterIP: '127.1.0.20', ports: [{ port: 80, nodePort: 30062 }] }));
  });
});

describe('Type transitions (dropTypeDependentFields and the allocator)', () => {
  it('NodePort → ClusterIP wipes and releases the nodePort; ClusterIP → NodePort allocates one', async () => {
    await created(svc('t1', { type: 'NodePort', ports: [{ port: 80, nodePort: 30300 }] }));
    const r = await patch('t1', { spec: { type: 'ClusterIP', externalTrafficPolicy: null } });
    assert.equal(r.status, 200, r.text());
    const s = r.json<Svc>();
    assert.equal(s.spec.ports![0]!.nodePort, undefined);
    assert.equal(s.spec.externalTrafficPolicy, undefined);
    await created(svc('t1-reuse', { type: 'NodePort', ports: [{ port: 80, nodePort: 30300 }] }));
    const back = (await patch('t1', { spec: { type: 'NodePort' } })).json<Svc>();
    assert.ok(back.spec.ports![0]!.nodePort! >= 30000);
    assert.equal(back.spec.externalTrafficPolicy, 'Cluster');
  });

  it('ClusterIP → ExternalName wipes and releases the cluster IP; ExternalName → ClusterIP allocates one', async () => {
    await created(svc('t2', { clusterIP: '127.1.0.30', ports: [{ port: 80 }] }));
    const r = await patch('t2', { spec: { type: 'ExternalName', externalName: 'example.com' } });
    assert.equal(r.status, 200, r.text());
    const s = r.json<Svc>();
    assert.equal(s.spec.clusterIP, undefined);
    assert.equal(s.spec.clusterIPs, undefined);
    assert.equal(s.spec.ipFamilies, undefined);
    assert.equal(s.spec.ipFamilyPolicy, undefined);
    await created(svc('t2-reuse', { clusterIP: '127.1.0.30', ports: [{ port: 80 }] }));
    const back = await patch('t2', { spec: { type: 'ClusterIP', externalName: null } });
    assert.equal(back.status, 200, back.text());
    assert.match(back.json<Svc>().spec.clusterIP ?? '', /^127\.1\./);
  });

  it('LoadBalancer → ClusterIP drops allocateLoadBalancerNodePorts, ETP, the health check port and the load balancer status', async () => {
    const lb = await created(svc('t3', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] }));
    const hc = lb.spec.healthCheckNodePort!;
    const st = await raw.request({
      method: 'PATCH',
      path: `${svcPath('t3')}/status`,
      headers: MERGE_CT,
      body: JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: '127.2.0.1' }] } } }),
    });
    assert.equal(st.status, 200, st.text());
    assert.deepEqual(st.json<Svc>().status?.loadBalancer?.ingress, [{ ip: '127.2.0.1', ipMode: 'VIP' }]);
    const r = await patch('t3', { spec: { type: 'ClusterIP' } });
    assert.equal(r.status, 200, r.text());
    const s = r.json<Svc>();
    assert.equal(s.spec.allocateLoadBalancerNodePorts, undefined);
    assert.equal(s.spec.externalTrafficPolicy, undefined);
    assert.equal(s.spec.healthCheckNodePort, undefined);
    assert.equal(s.spec.ports![0]!.nodePort, undefined);
    assert.deepEqual(s.status, { loadBalancer: {} });
    // The health check port is free again.
    await created(svc('t3-hc', { type: 'NodePort', ports: [{ port: 80, nodePort: hc }] }));
  });

  it('ETP Local → Cluster releases the health check port; the cluster IP cannot change', async () => {
    const lb = await created(svc('t4', { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] }));
    const r = await patch('t4', { spec: { externalTrafficPolicy: 'Cluster' } });
    assert.equal(r.status, 200, r.text());
    assert.equal(r.json<Svc>().spec.healthCheckNodePort, undefined);
    const ip = await patch('t4', { spec: { clusterIP: '127.1.0.99', clusterIPs: ['127.1.0.99'] } });
    assert.equal(ip.status, 422);
    assert.equal(
      message(ip),
      `Service "t4" is invalid: spec.clusterIPs[0]: Invalid value: ["127.1.0.99"]: may not change once set`,
      JSON.stringify(lb.spec.clusterIPs),
    );
  });
});

describe('Validation (upstream messages)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['no-ports', {}, 'spec.ports: Required value'],
    ['bad-proto', { ports: [{ port: 80, protocol: 'HTTP' }] }, 'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    [
      'bad-port',
      { ports: [{ port: 70000 }] },
      // targetPort defaults to port, so it is out of range too
      '[spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    ],
    ['two-unnamed', { ports: [{ port: 80 }, { port: 81 }] }, '[spec.ports[0].name: Required value, spec.ports[1].name: Required value]'],
    [
      'bad-type',
      { type: 'Magic', ports: [{ port: 80 }] },
      'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ],
    [
      'bad-ext',
      { type: 'ExternalName', externalName: 'Not_A_Host' },
      `spec.externalName: Invalid value: "Not_A_Host": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
    [
      'headless-np',
      { type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] },
      `spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services`,
    ],
    ['np-on-cip', { ports: [{ port: 80, nodePort: 30999 }] }, "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    [
      'dup-port',
      {
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 80 },
        ],
      },
      'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    ],
    [
      'src-ranges',
      { type: 'LoadBalancer', loadBalancerSourceRanges: ['10.0.0.0/33'], ports: [{ port: 80 }] },
      'spec.LoadBalancerSourceRanges[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ],
    // Upstream also refuses loopback external IPs; kplane's loopback cloud needs them (KEP-0008).
    ['ext-ip', { externalIPs: ['0.0.0.0'], ports: [{ port: 80 }] }, 'spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'],
    [
      'etp-cip',
      { externalTrafficPolicy: 'Local', ports: [{ port: 80 }] },
      'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
    ],
    [
      'dual',
      { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80 }] },
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    ],
    [
      'affinity',
      { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 90000 } }, ports: [{ port: 80 }] },
      'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 90000: must be greater than 0 and less than 86400',
    ],
  ];
  for (const [name, spec, want] of cases) {
    it(`${name}: ${want.slice(0, 60)}`, async () => {
      const r = await create(svc(name, spec));
      assert.equal(r.status, 422, r.text());
      assert.equal(message(r), `Service "${name}" is invalid: ${want}`);
    });
  }

  it('names are DNS-1035 labels', async () => {
    const r = await create(svc('1abc', { ports: [{ port: 80 }] }));
    assert.equal(r.status, 422);
    assert.match(message(r), /a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character/);
  });

  it('a body of the wrong type is a 400, not a crash', async () => {
    const r = await create({ metadata: { name: 'typed' }, spec: { ports: 'eighty' } });
    assert.equal(r.status, 400, r.text());
  });
});

describe('client-node', () => {
  it('creates, reads and deletes a LoadBalancer service', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const api = kc.makeApiClient(k8s.CoreV1Api);
    const made = await api.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'cn' }, spec: { type: 'LoadBalancer', ports: [{ port: 443, targetPort: 8443 }] } },
    });
    assert.equal(made.spec?.allocateLoadBalancerNodePorts, true);
    assert.ok((made.spec?.ports?.[0]?.nodePort ?? 0) >= 30000);
    const list = await api.listNamespacedService({ namespace: 'default' });
    assert.ok(list.items.some((s) => s.metadata?.name === 'cn'));
    await api.deleteNamespacedService({ namespace: 'default', name: 'cn' });
  });
});

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name}`, { concurrency: false }, () => {
    let kc: KubectlSession;
    const ns = `k${kubectl.name.replace('.', '')}`;
    // Node ports are cluster-wide: each kubectl asks for its own, in the static band (30000-30085)
    // that random allocation takes last, as upstream's, so the other tests' services cannot hold it.
    const nodePort = kubectl.name === '1.20' ? '30070' : '30071';
    before(async () => {
      kc = kubectlSession(kubectl.bin, server.kubeconfig, dir);
      await kc.ok(['create', 'namespace', ns]);
    });

    it('create service clusterip|nodeport|loadbalancer|externalname, get -o wide, describe', async () => {
      await kc.ok(['-n', ns, 'create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
      await kc.ok(['-n', ns, 'create', 'service', 'nodeport', 'np', '--tcp=80:8080', `--node-port=${nodePort}`]);
      await kc.ok(['-n', ns, 'create', 'service', 'loadbalancer', 'lb', '--tcp=443:8443']);
      await kc.ok(['-n', ns, 'create', 'service', 'externalname', 'ext', '--external-name=example.com']);
      const wide = await kc.ok(['-n', ns, 'get', 'svc', '-o', 'wide']);
      const lines = wide.trim().split('\n');
      assert.match(lines[0]!, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$/);
      const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!.split(/\s+/);
      assert.deepEqual(row('web').slice(0, 2), ['web', 'ClusterIP']);
      assert.match(row('web')[2]!, /^127\.1\./);
      assert.deepEqual([row('web')[3], row('web')[4], row('web')[6]], ['<none>', '80/TCP', 'app=web']);
      assert.deepEqual([row('np')[1], row('np')[4]], ['NodePort', `80:${nodePort}/TCP`]);
      assert.deepEqual([row('lb')[1], row('lb')[3]], ['LoadBalancer', '<pending>']);
      assert.match(row('lb')[4]!, /^443:3\d{4}\/TCP$/);
      assert.deepEqual(row('ext').slice(1, 5), ['ExternalName', '<none>', 'example.com', '<none>']);
      const taken = await kc.k(['-n', ns, 'create', 'service', 'nodeport', 'np2', '--tcp=80:8080', `--node-port=${nodePort}`]);
      assert.notEqual(taken.code, 0);
      assert.match(taken.stderr, new RegExp(`spec\\.ports\\[0\\]\\.nodePort: Invalid value: ${nodePort}: provided port is already allocated`));
      const described = await kc.ok(['-n', ns, 'describe', 'svc', 'np']);
      assert.match(described, /Type:\s+NodePort/);
      assert.match(described, new RegExp(`NodePort:\\s+80-8080\\s+${nodePort}/TCP`));
      assert.match(described, /External Traffic Policy:\s+Cluster/);
      assert.match(described, /IP Families:\s+IPv4/);
    });
  });
}

describe('kplane serve --modules=cloud flags', () => {
  it('a bad --service-node-port-range or --service-cluster-ip-range is refused before anything starts', async () => {
    const kplane = (args: string[]) =>
      run(
        process.execPath,
        ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', join(dir, 'flags'), '--secure-port', '0', '--modules=cloud', ...args],
        {
          env: { npm_lifecycle_event: '', npm_command: '' },
          timeoutMs: 60_000,
        },
      );
    const ports = await kplane(['--service-node-port-range=32767-30000']);
    assert.equal(ports.code, 2, ports.stderr);
    assert.match(ports.stderr, /invalid port range "32767-30000": end port is less than start port/);
    const cidr = await kplane(['--service-cluster-ip-range=127.1.0.0/40']);
    assert.equal(cidr.code, 2, cidr.stderr);
    assert.match(cidr.stderr, /invalid CIDR address: 127\.1\.0\.0\/40/);
  });
});

describe('allocator state across restarts (repair at start)', () => {
  it('a port held by a Service stays taken after a restart; a leaked one is free again', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-cloud-repair-'));
    try {
      const first = await startTestServer({ storage: 'sqlite', dataDir, apis: [...defaultModules(), cloud()] });
      const c1 = new RawClient(first.url, adminCredentials(dataDir));
      const r = await c1.request({
        method: 'POST',
        path: svcPath(),
        headers: JSON_CT,
        body: JSON.stringify(svc('keep', { type: 'NodePort', ports: [{ port: 80, nodePort: 30500 }] })),
      });
      assert.equal(r.status, 201, r.text());
      // A leak: the port taken in the stored bitmap with no Service holding it (a crash between allocation and write).
      const { ServiceAllocators } = await import('../../src/registry/core/services/alloc.js');
      await new ServiceAllocators().ranges(first.cp.registry.storage).ports.allocate(30600);
      c1.close();
      await first.stop();
      const second = await startTestServer({ storage: 'sqlite', dataDir, apis: [...defaultModules(), cloud()] });
      const c2 = new RawClient(second.url, adminCredentials(dataDir));
      try {
        const taken = await c2.request({
          method: 'POST',
          path: svcPath(),
          headers: JSON_CT,
          body: JSON.stringify(svc('dup', { type: 'NodePort', ports: [{ port: 80, nodePort: 30500 }] })),
        });
        assert.equal(taken.status, 422);
        assert.match(message(taken), /provided port is already allocated/);
        const leaked = await c2.request({
          method: 'POST',
          path: svcPath(),
          headers: JSON_CT,
          body: JSON.stringify(svc('leak', { type: 'NodePort', ports: [{ port: 80, nodePort: 30600 }] })),
        });
        assert.equal(leaked.status, 201, leaked.text());
      } finally {
        c2.close();
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
