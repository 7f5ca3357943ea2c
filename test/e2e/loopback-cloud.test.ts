// The loopback cloud's data plane with real sockets (issue 25): per-node kube-proxies
// (src/controllers/proxy) and the `loopback` provider's load balancers
// (src/controllers/cloud/loopback), against a `cloud`-module API server. The test writes Nodes,
// Services and EndpointSlices itself and runs its own backends on 127.3.250.x, so nothing here
// depends on node-sim or the EndpointSlice controller. Addresses sit in .250.x sub-ranges to stay
// clear of other tests on the machine.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import type { LoopbackCloud } from '../../src/controllers/cloud/loopback/index.js';
import { cloudProviderNames, InstanceNotFoundError, newCloudProvider, type Node } from '../../src/controllers/cloud/provider.js';
import { ProxyHost, startNodeProxy } from '../../src/controllers/proxy/index.js';
import '../../src/controllers/cloud/loopback/index.js';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SERVICES = { group: '', version: 'v1', resource: 'services' };
const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };
const NS = 'default';

const NODE_A = { name: 'lb-node-a', ip: '127.2.250.1' };
const NODE_B = { name: 'lb-node-b', ip: '127.2.250.2' };
const POD_A1 = '127.3.250.1'; // on node A
const POD_A2 = '127.3.250.2'; // on node A
const POD_B1 = '127.3.250.3'; // on node B
const BACKEND_PORT = 18080;
const UDP_PORT = 18081;

type Svc = KubeObject & {
  spec: {
    type?: string;
    clusterIP?: string;
    ports?: { name?: string; port: number; protocol?: string; nodePort?: number; targetPort?: number }[];
    externalTrafficPolicy?: string;
    healthCheckNodePort?: number;
    sessionAffinity?: string;
    loadBalancerSourceRanges?: string[];
  };
};

let server: TestServer;
let client: KubeClient;
let host: ProxyHost;
const closers: (() => Promise<void>)[] = [];

/** An HTTP backend answering `<name> <client ip>`, as netexec's /hostname and /clientip together. */
async function httpBackend(ip: string, name = ip): Promise<void> {
  const s = http.createServer((req, res) => res.end(`${name} ${req.socket.remoteAddress}`));
  await new Promise<void>((r) => s.listen(BACKEND_PORT, ip, r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        s.close(() => r());
        s.closeAllConnections();
      }),
  );
}

/** A UDP echo backend answering `<ip>:<payload>`. */
async function udpBackend(ip: string): Promise<void> {
  const s = dgram.createSocket('udp4');
  s.on('message', (m, r) => s.send(`${ip}:${m.toString()}`, r.port, r.address));
  await new Promise<void>((r) => s.bind(UDP_PORT, ip, r));
  closers.push(() => new Promise<void>((r) => s.close(() => r())));
}

/** One GET on a fresh connection; rejects when the connection is refused or reset. */
function get(ip: string, port: number, localAddress?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: ip, port, path: '/', agent: false, ...(localAddress ? { localAddress } : {}), timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve(`${res.statusCode === 200 ? '' : `${res.statusCode} `}${body}`));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const backendOf = async (ip: string, port: number, localAddress?: string): Promise<string> => (await get(ip, port, localAddress)).split(' ')[0] as string;

async function fails(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch {
    return true;
  }
}

function udpAsk(ip: string, port: number, payload: string, localAddress?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const t = setTimeout(() => {
      s.close();
      reject(new Error('no UDP answer'));
    }, 1000);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(m.toString());
    });
    s.bind({ address: localAddress ?? '127.0.0.1', port: 0 }, () => s.send(payload, port, ip));
  });
}

type EndpointSpec = { ip: string; node: string; ready?: boolean; serving?: boolean; terminating?: boolean };

async function writeSlice(svc: string, eps: EndpointSpec[], ports = [{ name: 'http', port: BACKEND_PORT, protocol: 'TCP' }]): Promise<void> {
  const body = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-1`, namespace: NS, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports,
    endpoints: eps.map((e) => ({
      addresses: [e.ip],
      nodeName: e.node,
      conditions: { ready: e.ready ?? true, serving: e.serving ?? e.ready ?? true, terminating: e.terminating ?? false },
    })),
  } as unknown as KubeObject;
  try {
    const cur = await client.get(SLICES, NS, `${svc}-1`);
    await client.update(SLICES, NS, { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata?.resourceVersion } });
  } catch {
    await client.create(SLICES, NS, body);
  }
}

async function createService(name: string, spec: Svc['spec']): Promise<Svc> {
  return client.create<Svc>(SERVICES, NS, { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
}

const nodePortOf = (s: Svc, i = 0): number => s.spec.ports?.[i]?.nodePort as number;

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
  client = createHttpsClient(server.kubeconfig);
  for (const n of [NODE_A, NODE_B]) {
    const node = await client.create(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: n.name } });
    await client.updateStatus(NODES, undefined, { ...node, status: { addresses: [{ type: 'InternalIP', address: n.ip }] } });
  }
  for (const ip of [POD_A1, POD_A2, POD_B1]) {
    await httpBackend(ip);
    await udpBackend(ip);
  }
  host = new ProxyHost({ client });
  for (const n of [NODE_A, NODE_B]) {
    const p = await host.addNode({ nodeName: n.name, nodeIP: n.ip, clusterIPs: n === NODE_A });
    closers.push(() => p.stop());
  }
});

after(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  await host?.stop();
  await client?.close();
  await server?.stop();
});

describe('node proxy', () => {
  it('serves /healthz and /livez on nodeIP:10256 with kube-proxy JSON', async () => {
    const res = await fetch(`http://${NODE_A.ip}:10256/healthz`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = (await res.json()) as { lastUpdated: string; currentTime: string; nodeEligible: boolean };
    assert.equal(body.nodeEligible, true);
    assert.match(body.currentTime, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC$/);
    const live = await fetch(`http://${NODE_B.ip}:10256/livez`);
    assert.equal(live.status, 200);
    assert.deepEqual(Object.keys((await live.json()) as object), ['lastUpdated', 'currentTime']);
    assert.equal((await fetch(`http://${NODE_B.ip}:10256/nope`)).status, 404);
  });

  it('a NodePort on every node reaches the endpoints, round-robin, from the node address', async () => {
    const svc = await createService('np', { type: 'NodePort', ports: [{ name: 'http', port: 8080, targetPort: BACKEND_PORT }] });
    await writeSlice('np', [
      { ip: POD_A1, node: NODE_A.name },
      { ip: POD_B1, node: NODE_B.name },
    ]);
    const port = nodePortOf(svc);
    for (const n of [NODE_A, NODE_B]) {
      const seen = await eventually(5000, `both backends through ${n.ip}:${port}`, async () => {
        const s = new Set([await backendOf(n.ip, port), await backendOf(n.ip, port), await backendOf(n.ip, port), await backendOf(n.ip, port)]);
        return s.size === 2 ? s : undefined;
      });
      assert.deepEqual([...seen].sort(), [POD_A1, POD_B1]);
    }
    // ETP Cluster masquerades: the backend sees the node's address.
    assert.equal((await get(NODE_A.ip, port)).split(' ')[1], NODE_A.ip);
  });

  it('the owner of cluster IPs answers on clusterIP:port and externalIP:port', async () => {
    const svc = await createService('cip', { externalIPs: ['127.5.250.1'], ports: [{ name: 'http', port: 18090, targetPort: BACKEND_PORT }] } as Svc['spec']);
    await writeSlice('cip', [{ ip: POD_A2, node: NODE_A.name }]);
    const ip = svc.spec.clusterIP as string;
    assert.match(ip, /^127\.1\./);
    assert.equal(await eventually(5000, 'cluster IP answers', () => backendOf(ip, 18090)), POD_A2);
    assert.equal(await backendOf('127.5.250.1', 18090), POD_A2);
  });

  it('ETP Local reaches only local endpoints, keeps the client IP, and healthCheckNodePort says 200/503', async () => {
    const svc = await createService('local', {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 8081, targetPort: BACKEND_PORT }],
    });
    await writeSlice('local', [
      { ip: POD_A1, node: NODE_A.name },
      { ip: POD_A2, node: NODE_A.name },
    ]);
    const port = nodePortOf(svc);
    const hc = svc.spec.healthCheckNodePort as number;
    assert.ok(hc > 0);
    await eventually(5000, 'local endpoints on node A', async () => ((await backendOf(NODE_A.ip, port)) ? true : undefined));
    for (let i = 0; i < 4; i++) assert.ok([POD_A1, POD_A2].includes(await backendOf(NODE_A.ip, port)));
    assert.equal((await get(NODE_A.ip, port, '127.9.0.7')).split(' ')[1], '127.9.0.7');
    // Node B has no local endpoint: kube-proxy drops the traffic, so connections fail.
    assert.equal(await fails(get(NODE_B.ip, port)), true);

    const a = await eventually(5000, 'health check on node A', async () => {
      const r = await fetch(`http://${NODE_A.ip}:${hc}/healthz`);
      return r.status === 200 ? r : undefined;
    });
    assert.equal(a.headers.get('x-load-balancing-endpoint-weight'), '2');
    assert.deepEqual(await a.json(), { service: { namespace: NS, name: 'local' }, localEndpoints: 2, serviceProxyHealthy: true });
    const b = await fetch(`http://${NODE_B.ip}:${hc}/anything`);
    assert.equal(b.status, 503);
    assert.deepEqual(await b.json(), { service: { namespace: NS, name: 'local' }, localEndpoints: 0, serviceProxyHealthy: true });

    // Only terminating endpoints left on A: still 503 (no local *ready* endpoint), traffic still served.
    await writeSlice('local', [{ ip: POD_A1, node: NODE_A.name, ready: false, serving: true, terminating: true }]);
    await eventually(5000, 'health check 503 with only terminating endpoints', async () =>
      (await fetch(`http://${NODE_A.ip}:${hc}/healthz`)).status === 503 ? true : undefined,
    );
    assert.equal(await backendOf(NODE_A.ip, port), POD_A1);
  });

  it('ClientIP affinity keeps one backend per client address', async () => {
    const svc = await createService('sticky', {
      type: 'NodePort',
      sessionAffinity: 'ClientIP',
      ports: [{ name: 'http', port: 8082, targetPort: BACKEND_PORT }],
    });
    await writeSlice('sticky', [
      { ip: POD_A1, node: NODE_A.name },
      { ip: POD_A2, node: NODE_A.name },
      { ip: POD_B1, node: NODE_B.name },
    ]);
    const port = nodePortOf(svc);
    await eventually(5000, 'sticky service reachable', async () => ((await backendOf(NODE_B.ip, port, '127.9.1.1')) ? true : undefined));
    for (const src of ['127.9.1.1', '127.9.1.2', '127.9.1.3']) {
      const first = await backendOf(NODE_B.ip, port, src);
      for (let i = 0; i < 15; i++) assert.equal(await backendOf(NODE_B.ip, port, src), first, `client ${src} moved`);
    }
  });

  it('with no ready endpoint, serving terminating ones take the traffic; not-serving ones never do', async () => {
    const svc = await createService('term', { type: 'NodePort', ports: [{ name: 'http', port: 8083, targetPort: BACKEND_PORT }] });
    await writeSlice('term', [
      { ip: POD_A1, node: NODE_A.name, ready: false, serving: true, terminating: true },
      { ip: POD_B1, node: NODE_B.name, ready: false, serving: false, terminating: true },
    ]);
    const port = nodePortOf(svc);
    await eventually(5000, 'terminating fallback', async () => ((await backendOf(NODE_B.ip, port)) === POD_A1 ? true : undefined));
    for (let i = 0; i < 4; i++) assert.equal(await backendOf(NODE_B.ip, port), POD_A1);
    // A ready endpoint appears: only it is used.
    await writeSlice('term', [
      { ip: POD_A1, node: NODE_A.name, ready: false, serving: true, terminating: true },
      { ip: POD_A2, node: NODE_A.name },
    ]);
    await eventually(5000, 'ready endpoint preferred', async () => ((await backendOf(NODE_B.ip, port)) === POD_A2 ? true : undefined));
    for (let i = 0; i < 4; i++) assert.equal(await backendOf(NODE_B.ip, port), POD_A2);
    // None at all: refused.
    await writeSlice('term', []);
    await eventually(5000, 'refused without endpoints', async () => ((await fails(get(NODE_B.ip, port))) ? true : undefined));
  });

  it('UDP echo through a NodePort', async () => {
    const svc = await createService('udp', { type: 'NodePort', ports: [{ name: 'dns', port: 8053, protocol: 'UDP', targetPort: UDP_PORT }] });
    await writeSlice('udp', [{ ip: POD_B1, node: NODE_B.name }], [{ name: 'dns', port: UDP_PORT, protocol: 'UDP' }]);
    const port = nodePortOf(svc);
    assert.equal(await eventually(5000, 'UDP echo', () => udpAsk(NODE_A.ip, port, 'hello')), `${POD_B1}:hello`);
  });

  it('keeps established connections across endpoint and port updates; closes removed ports', async () => {
    const svc = await createService('upd', {
      type: 'NodePort',
      ports: [
        { name: 'http', port: 8084, targetPort: BACKEND_PORT },
        { name: 'other', port: 8085, targetPort: BACKEND_PORT },
      ],
    });
    await writeSlice(
      'upd',
      [{ ip: POD_A1, node: NODE_A.name }],
      [
        { name: 'http', port: BACKEND_PORT, protocol: 'TCP' },
        { name: 'other', port: BACKEND_PORT, protocol: 'TCP' },
      ],
    );
    const [p0, p1] = [nodePortOf(svc, 0), nodePortOf(svc, 1)];
    await eventually(5000, 'upd reachable', async () => ((await backendOf(NODE_A.ip, p0)) === POD_A1 ? true : undefined));
    // A keep-alive connection, opened before the changes.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const viaAgent = (): Promise<string> =>
      new Promise((resolve, reject) => {
        http
          .get({ host: NODE_A.ip, port: p0, agent }, (res) => {
            let b = '';
            res.on('data', (c: Buffer) => {
              b += c.toString();
            });
            res.on('end', () => resolve(b));
          })
          .on('error', reject);
      });
    const sockets: net.Socket[] = [];
    agent.on('free', (s: net.Socket) => sockets.push(s));
    assert.equal((await viaAgent()).split(' ')[0], POD_A1);
    const first = sockets[0];
    // Endpoints move to B and the second port goes away.
    await writeSlice('upd', [{ ip: POD_B1, node: NODE_B.name }], [{ name: 'http', port: BACKEND_PORT, protocol: 'TCP' }]);
    const cur = await client.get<Svc>(SERVICES, NS, 'upd');
    await client.update(SERVICES, NS, { ...cur, spec: { ...cur.spec, ports: [cur.spec.ports?.[0] as NonNullable<Svc['spec']['ports']>[number]] } });
    await eventually(5000, 'new connections go to B', async () => ((await backendOf(NODE_A.ip, p0)) === POD_B1 ? true : undefined));
    await eventually(5000, 'removed port closed', async () => ((await fails(get(NODE_A.ip, p1))) ? true : undefined));
    // The old connection still runs, to its old backend.
    assert.equal((await viaAgent()).split(' ')[0], POD_A1);
    assert.equal(sockets.at(-1), first);
    agent.destroy();
  });

  it('a NodePort that cannot be opened is tried again', async () => {
    const nodeIP = '127.2.250.4';
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(30080, nodeIP, r));
    await createService('busy', { type: 'NodePort', ports: [{ name: 'http', port: 8087, nodePort: 30080, targetPort: BACKEND_PORT }] });
    await writeSlice('busy', [{ ip: POD_A1, node: NODE_A.name }]);
    const p = await startNodeProxy({ client, nodeName: 'lb-node-d', nodeIP, healthzPort: 0, host });
    try {
      await eventually(5000, 'the failure is recorded', async () => (p.proxy.failures.has(`TCP/${nodeIP}:30080`) ? true : undefined));
      await new Promise<void>((r) => blocker.close(() => r()));
      assert.equal(await eventually(15_000, 'opened on retry', () => backendOf(nodeIP, 30080), 200), POD_A1);
      assert.equal(p.proxy.failures.size, 0);
    } finally {
      await p.stop();
      blocker.close();
    }
  });

  it('/healthz says 503 with nodeEligible false while the Node is to be deleted', async () => {
    const taint = (taints: unknown[]) => client.patch(NODES, undefined, NODE_B.name, 'merge', { spec: { taints } });
    await taint([{ key: 'ToBeDeletedByClusterAutoscaler', value: '1', effect: 'NoSchedule' }]);
    const r = await eventually(5000, '503', async () => {
      const res = await fetch(`http://${NODE_B.ip}:10256/healthz`);
      return res.status === 503 ? res : undefined;
    });
    assert.equal(((await r.json()) as { nodeEligible: boolean }).nodeEligible, false);
    assert.equal((await fetch(`http://${NODE_B.ip}:10256/livez`)).status, 200);
    await taint([]);
    await eventually(5000, '200 again', async () => ((await fetch(`http://${NODE_B.ip}:10256/healthz`)).status === 200 ? true : undefined));
  });

  it('startNodeProxy runs a proxy with its own host and stops it', async () => {
    const svc = await createService('own', { type: 'NodePort', ports: [{ name: 'http', port: 8086, targetPort: BACKEND_PORT }] });
    await writeSlice('own', [{ ip: POD_B1, node: NODE_B.name }]);
    const p = await startNodeProxy({ client, nodeName: 'lb-node-c', nodeIP: '127.2.250.3' });
    try {
      assert.equal(await eventually(5000, 'own host proxy', () => backendOf('127.2.250.3', nodePortOf(svc))), POD_B1);
    } finally {
      await p.stop();
    }
    assert.equal(await fails(get('127.2.250.3', nodePortOf(svc))), true);
    assert.equal(await fails(fetch('http://127.2.250.3:10256/healthz')), true);
    // A second proxy for an address whose /healthz is taken fails to start, and leaves no port open.
    await assert.rejects(startNodeProxy({ client, nodeName: 'dup', nodeIP: NODE_A.ip, host }), /EADDRINUSE/);
    await assert.rejects(startNodeProxy({ client, nodeName: 'dup', nodeIP: NODE_A.ip }), /EADDRINUSE/);
  });
});

describe('loopback cloud', () => {
  let cloud: LoopbackCloud;
  const stop = new AbortController();
  const ctx = { signal: stop.signal };
  const nodes = async (): Promise<Node[]> => Promise.all([NODE_A, NODE_B].map((n) => client.get<Node>(NODES, undefined, n.name)));
  const admin = (method: string, path: string, body?: string): Promise<Response> => fetch(`${cloud.adminUrl}${path}`, { method, ...(body ? { body } : {}) });

  before(async () => {
    const config = JSON.stringify({ ingressCIDR: '127.4.250.0/24', healthCheck: { intervalMs: 100, timeoutMs: 500 }, adminAddress: '127.0.0.1:0' });
    cloud = (await newCloudProvider('loopback', config)) as LoopbackCloud;
    await cloud.initialize({ client: () => client }, stop.signal);
  });
  after(async () => {
    stop.abort();
    await cloud?.close();
  });

  it('is registered as `loopback`, with instances for Nodes', async () => {
    assert.ok(cloudProviderNames().includes('loopback'));
    assert.equal(cloud.providerName(), 'loopback');
    const [a] = await nodes();
    const inst = cloud.instancesV2();
    assert.equal(await inst.instanceExists(ctx, a as Node), true);
    assert.equal(await inst.instanceShutdown(ctx, a as Node), false);
    assert.deepEqual(await inst.instanceMetadata(ctx, a as Node), {
      providerID: 'loopback://lb-node-a',
      instanceType: 'loopback-node',
      nodeAddresses: [
        { type: 'InternalIP', address: NODE_A.ip },
        { type: 'Hostname', address: NODE_A.name },
      ],
      zone: 'loopback-a',
      region: 'loopback',
    });
  });

  it('a load balancer answers on its ingress address, stable across EnsureLoadBalancer calls', async () => {
    const svc = await createService('lb', { type: 'LoadBalancer', ports: [{ name: 'http', port: 18100, targetPort: BACKEND_PORT }] });
    await writeSlice('lb', [
      { ip: POD_A1, node: NODE_A.name },
      { ip: POD_B1, node: NODE_B.name },
    ]);
    const lbApi = cloud.loadBalancer();
    assert.deepEqual(await lbApi.getLoadBalancer(ctx, 'kubernetes', svc), { exists: false });
    const status = await lbApi.ensureLoadBalancer(ctx, 'kubernetes', svc, await nodes());
    const ip = status.ingress?.[0]?.ip as string;
    assert.match(ip, /^127\.4\.250\.\d+$/);
    assert.deepEqual(status.ingress, [{ ip, ipMode: 'Proxy', ports: [{ port: 18100, protocol: 'TCP' }] }]);
    assert.deepEqual(await lbApi.ensureLoadBalancer(ctx, 'kubernetes', svc, await nodes()), status);
    assert.deepEqual(await lbApi.getLoadBalancer(ctx, 'kubernetes', svc), { exists: true, status });
    assert.equal(lbApi.getLoadBalancerName(ctx, 'kubernetes', svc), `a${(svc.metadata?.uid ?? '').replaceAll('-', '')}`.slice(0, 32));
    const seen = await eventually(5000, 'both nodes behind the LB', async () => {
      const s = new Set<string>();
      for (let i = 0; i < 6; i++) s.add((await get(ip, 18100)).split(' ')[1] as string);
      return s.size === 2 ? s : undefined;
    });
    // ETP Cluster: backends see the nodes' addresses (the node proxies masquerade; the LB sent to both NodePorts).
    assert.deepEqual([...seen].sort(), [NODE_A.ip, NODE_B.ip]);

    // An instance shut down through the admin interface leaves the backend set at once.
    const r = await admin('POST', `/instances/${NODE_A.name}/shutdown`);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { state: string }).state, 'shutdown');
    assert.equal(await cloud.instancesV2().instanceShutdown(ctx, (await nodes())[0] as Node), true);
    for (let i = 0; i < 6; i++) assert.equal((await get(ip, 18100)).split(' ')[1], NODE_B.ip);
    assert.equal((await admin('POST', `/instances/${NODE_A.name}/start`)).status, 200);
    await eventually(5000, 'node A back', async () => {
      const s = new Set<string>();
      for (let i = 0; i < 4; i++) s.add((await get(ip, 18100)).split(' ')[1] as string);
      return s.has(NODE_A.ip) ? true : undefined;
    });

    // UpdateLoadBalancer with node B only.
    await lbApi.updateLoadBalancer(ctx, 'kubernetes', svc, [(await nodes())[1] as Node]);
    for (let i = 0; i < 4; i++) assert.equal((await get(ip, 18100)).split(' ')[1], NODE_B.ip);

    // Deleted: the address stops answering and is free again.
    await lbApi.ensureLoadBalancerDeleted(ctx, 'kubernetes', svc);
    await lbApi.ensureLoadBalancerDeleted(ctx, 'kubernetes', svc);
    assert.equal(await fails(get(ip, 18100)), true);
    assert.deepEqual(await lbApi.getLoadBalancer(ctx, 'kubernetes', svc), { exists: false });
    assert.equal(
      cloud.listLoadBalancers().some((l) => l.ip === ip),
      false,
    );
  });

  it('skips a node whose healthCheckNodePort fails (ETP Local)', async () => {
    const svc = await createService('lb-local', {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 18101, targetPort: BACKEND_PORT }],
    });
    await writeSlice('lb-local', [{ ip: POD_A2, node: NODE_A.name }]);
    await eventually(5000, 'node A health check 200', async () =>
      (await fetch(`http://${NODE_A.ip}:${svc.spec.healthCheckNodePort}/`)).status === 200 ? true : undefined,
    );
    const status = await cloud.loadBalancer().ensureLoadBalancer(ctx, 'kubernetes', svc, await nodes());
    const ip = status.ingress?.[0]?.ip as string;
    const lb = cloud.listLoadBalancers().find((l) => l.ip === ip);
    assert.deepEqual(lb?.nodes, [
      { name: NODE_A.name, address: NODE_A.ip, healthy: true },
      { name: NODE_B.name, address: NODE_B.ip, healthy: false },
    ]);
    // Every request succeeds: node B (no local endpoint, so its NodePort drops traffic) gets none.
    for (let i = 0; i < 8; i++) assert.equal(await backendOf(ip, 18101), POD_A2);
    // The client IP is the client's own (the LB connects onward from it), kept by ETP Local up to the pod.
    assert.equal((await get(ip, 18101, '127.9.8.7')).split(' ')[1], '127.9.8.7');
    await cloud.loadBalancer().ensureLoadBalancerDeleted(ctx, 'kubernetes', svc);
  });

  it('refuses sources outside loadBalancerSourceRanges and keeps ClientIP affinity', async () => {
    const svc = await createService('lb-ranges', {
      type: 'LoadBalancer',
      sessionAffinity: 'ClientIP',
      loadBalancerSourceRanges: ['127.9.9.0/24'],
      ports: [{ name: 'http', port: 18102, targetPort: BACKEND_PORT }],
    });
    await writeSlice('lb-ranges', [
      { ip: POD_A1, node: NODE_A.name },
      { ip: POD_A2, node: NODE_A.name },
      { ip: POD_B1, node: NODE_B.name },
    ]);
    const status = await cloud.loadBalancer().ensureLoadBalancer(ctx, 'kubernetes', svc, await nodes());
    const ip = status.ingress?.[0]?.ip as string;
    const first = await eventually(5000, 'allowed source answered', () => get(ip, 18102, '127.9.9.5'));
    for (let i = 0; i < 15; i++) assert.equal(await get(ip, 18102, '127.9.9.5'), first);
    assert.equal(await fails(get(ip, 18102, '127.9.8.5')), true);
    assert.equal(await fails(get(ip, 18102, '127.0.0.1')), true);
    await cloud.loadBalancer().ensureLoadBalancerDeleted(ctx, 'kubernetes', svc);
  });

  it('honours spec.loadBalancerIP and balances UDP', async () => {
    const svc = await createService('lb-udp', {
      type: 'LoadBalancer',
      loadBalancerIP: '127.4.250.200',
      ports: [{ name: 'dns', port: 18153, protocol: 'UDP', targetPort: UDP_PORT }],
    } as Svc['spec']);
    await writeSlice('lb-udp', [{ ip: POD_A1, node: NODE_A.name }], [{ name: 'dns', port: UDP_PORT, protocol: 'UDP' }]);
    const status = await cloud.loadBalancer().ensureLoadBalancer(ctx, 'kubernetes', svc, await nodes());
    assert.equal(status.ingress?.[0]?.ip, '127.4.250.200');
    assert.equal(await eventually(5000, 'UDP echo through the LB', () => udpAsk('127.4.250.200', 18153, 'ping')), `${POD_A1}:ping`);
    const outside = { ...svc, metadata: { ...svc.metadata, uid: 'other' }, spec: { ...svc.spec, loadBalancerIP: '127.5.0.1' } };
    await assert.rejects(cloud.loadBalancer().ensureLoadBalancer(ctx, 'kubernetes', outside, []), /not in the loopback cloud's ingress range/);
    const taken = { ...svc, metadata: { ...svc.metadata, uid: 'other' } };
    await assert.rejects(cloud.loadBalancer().ensureLoadBalancer(ctx, 'kubernetes', taken, []), /in use by another load balancer/);
    await cloud.loadBalancer().ensureLoadBalancerDeleted(ctx, 'kubernetes', svc);
    assert.equal(await fails(udpAsk('127.4.250.200', 18153, 'ping')), true);
  });

  it('a restarted cloud gives a Service back the ingress address in its status, when free', async () => {
    // What a CCM restart looks like to the cloud: a Service with an ingress it has no load balancer for.
    const svc = await createService('lb-back', { type: 'LoadBalancer', ports: [{ name: 'http', port: 18104, targetPort: BACKEND_PORT }] });
    const had = { ...svc, status: { loadBalancer: { ingress: [{ ip: '127.4.250.77' }] } } };
    const lbApi = cloud.loadBalancer();
    assert.equal((await lbApi.ensureLoadBalancer(ctx, 'kubernetes', had, []))?.ingress?.[0]?.ip, '127.4.250.77');
    // Taken by then (another Service's), or outside the range: the next free address.
    const other = { ...had, metadata: { ...had.metadata, uid: 'other-back' } };
    assert.notEqual((await lbApi.ensureLoadBalancer(ctx, 'kubernetes', other, []))?.ingress?.[0]?.ip, '127.4.250.77');
    const outside = { ...had, metadata: { ...had.metadata, uid: 'outside-back' }, status: { loadBalancer: { ingress: [{ ip: '127.9.0.77' }] } } };
    assert.match((await lbApi.ensureLoadBalancer(ctx, 'kubernetes', outside, []))?.ingress?.[0]?.ip ?? '', /^127\.4\.250\.\d+$/);
    for (const s of [had, other, outside]) await lbApi.ensureLoadBalancerDeleted(ctx, 'kubernetes', s);
  });

  it('the admin interface lists, deletes and brings back instances, with JSON errors', async () => {
    const list = (await (await admin('GET', '/instances')).json()) as { instances: { name: string; state: string }[] };
    assert.ok(list.instances.some((i) => i.name === NODE_A.name && i.state === 'running'));
    assert.equal((await admin('DELETE', `/instances/${NODE_B.name}`)).status, 200);
    const [, b] = await nodes();
    assert.equal(await cloud.instancesV2().instanceExists(ctx, b as Node), false);
    await assert.rejects(cloud.instancesV2().instanceMetadata(ctx, b as Node), InstanceNotFoundError);
    const again = await admin('POST', `/instances/${NODE_B.name}/start`);
    assert.equal(again.status, 404);
    assert.deepEqual(await again.json(), { error: `instance "${NODE_B.name}" not found` });
    assert.equal((await admin('PUT', `/instances/${NODE_B.name}`, '{"address": "127.2.250.2"}')).status, 200);
    assert.equal(await cloud.instancesV2().instanceExists(ctx, b as Node), true);
    const bad = await admin('PUT', '/instances/x', '{nope');
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: 'request body is not JSON' });
    assert.equal((await admin('PUT', '/instances/x', '{"address": "10.0.0.1"}')).status, 400);
    assert.equal((await admin('PATCH', '/instances')).status, 405);
    assert.equal((await admin('GET', '/nothing')).status, 404);
    assert.equal((await admin('GET', '/loadbalancers')).status, 200);
  });
});
