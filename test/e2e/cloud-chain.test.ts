// The whole cloud chain on one machine (issue 25), in one process and on real sockets: a `cloud`
// module API server (with its EndpointSlice controller), the cloud controllers over the `loopback`
// provider, and node-sim with a kube-proxy per node. A LoadBalancer Service gets an ingress address
// from the loopback cloud and answers from node-sim's pods (netexec /hostname) through the load
// balancer and the nodes' NodePorts; upstream's e2e steps follow (test/e2e/network/loadbalancer.go):
// node-sim restarted under the live LB, scaled to 0 (no answer expected) and back to 1, the
// Service deleted (LB gone, port closed, finalizer gone); then the cloud node lifecycle controller:
// an instance shut down in the cloud gets the shutdown taint, a deleted one loses its Node.
// Addresses sit in .230.x sub-ranges, clear of the other tests on the machine.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { startCloudControllers, type RunningCloudControllers } from '../../src/controllers/cloud/index.js';
import { LoopbackCloud } from '../../src/controllers/cloud/loopback/index.js';
import { LB_CLEANUP_FINALIZER, TAINT_SHUTDOWN, type Node, type Service } from '../../src/controllers/cloud/provider.js';
import { endpointSliceController } from '../../src/controllers/endpointslice/index.js';
import { NodeSim } from '../../src/controllers/nodesim/index.js';
import { ProxyHost, startNodeProxy } from '../../src/controllers/proxy/index.js';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const PODS: GVR = { group: '', version: 'v1', resource: 'pods' };
const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
const SLICES: GVR = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };
const NS = 'default';
const PORT = 18230;

let server: TestServer;
let client: KubeClient;
let provider: LoopbackCloud;
let ccm: RunningCloudControllers;
let proxies: ProxyHost;
let sim: NodeSim;
let ingressIP: string;

const newSim = (): NodeSim =>
  new NodeSim({
    client,
    nodes: 2,
    namePrefix: 'chain-',
    nodeCIDR: '127.2.230.0/24',
    podCIDR: '127.3.230.0/23',
    cloudProviderExternal: true,
    heartbeatIntervalMs: 1000,
    onNodeReady: (n) => startNodeProxy({ client, host: proxies, nodeName: n.name, nodeIP: n.ip, clusterIPs: false }),
  });

/** One GET /hostname on a fresh connection: the pod's name, or a rejection (refused, reset, no answer). */
function hostname(ip: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: ip, port: PORT, path: '/hostname', agent: false, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve(body));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const answers = (ip: string): Promise<boolean> =>
  hostname(ip).then(
    () => true,
    () => false,
  );

/** Whether a TCP connection to ip:PORT is refused (nothing listens), rather than accepted and then dropped. */
const refused = (ip: string): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect({ host: ip, port: PORT });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });

async function createPod(name: string): Promise<void> {
  await client.create(PODS, NS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'chain' } },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [
        { name: 'agnhost', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: ['netexec', '--http-port=8080'], ports: [{ containerPort: 8080 }] },
      ],
    },
  });
}

const deletePod = (name: string): Promise<unknown> => client.delete(PODS, NS, name, { gracePeriodSeconds: 0 });

/** Hostnames seen through the LB in `n` requests. */
async function seen(n: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < n; i++) out.add(await hostname(ingressIP));
  return out;
}

const node = (name: string): Promise<Node> => client.get<Node>(NODES, undefined, name);

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()], controllers: [endpointSliceController()] });
  client = createHttpsClient(server.kubeconfig);
  provider = new LoopbackCloud({ ingressCIDR: '127.4.230.0/24', healthCheck: { intervalMs: 200, timeoutMs: 500 } });
  ccm = await startCloudControllers({ client, provider, nodeMonitorPeriodMs: 200, serviceRetryDelayMs: { min: 100, max: 1000 } });
  proxies = new ProxyHost({ client });
  sim = newSim();
  await sim.start();
  // The machine notices what happens to its instance: node-sim powers the Node off and on.
  provider.onInstanceChange((inst) => void (inst.state === 'running' ? sim.powerOn(inst.name) : sim.powerOff(inst.name)));
});

after(async () => {
  await sim?.stop();
  await proxies?.stop();
  await ccm?.stop();
  await provider?.close();
  await client?.close();
  await server?.stop();
});

describe('the cloud chain: LoadBalancer Service → loopback cloud → node proxy → node-sim pods', () => {
  it('the cloud node controller initializes node-sim’s Nodes (providerID, no uninitialized taint)', async () => {
    for (const name of ['chain-0', 'chain-1']) {
      const n = await eventually(20_000, `${name} initialized`, async () => {
        const got = await node(name);
        return got.spec?.providerID && !(got.spec.taints ?? []).length ? got : undefined;
      });
      assert.equal(n.spec?.providerID, `loopback://${name}`);
    }
  });

  it('a LoadBalancer Service gets an ingress address and answers from both pods through it', async () => {
    await Promise.all(['web-0', 'web-1'].map(createPod));
    await client.create(SERVICES, NS, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'chain' },
      spec: { type: 'LoadBalancer', selector: { app: 'chain' }, ports: [{ port: PORT, targetPort: 8080 }] },
    });
    const svc = await eventually(20_000, 'ingress in status', async () => {
      const s = await client.get<Service>(SERVICES, NS, 'chain');
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    ingressIP = svc.status?.loadBalancer?.ingress?.[0]?.ip as string;
    assert.match(ingressIP, /^127\.4\.230\.\d+$/);
    assert.deepEqual(svc.metadata?.finalizers, [LB_CLEANUP_FINALIZER]);
    const names = await eventually(20_000, 'both pods answer through the LB', async () => {
      const s = await seen(6).catch(() => undefined);
      return s?.size === 2 ? s : undefined;
    });
    assert.deepEqual([...names].sort(), ['web-0', 'web-1']);
  });

  it('node-sim restarted under the live LB: the pods are re-adopted (same IPs) and traffic resumes', async () => {
    const ips = async (): Promise<string[]> =>
      Promise.all(['web-0', 'web-1'].map(async (p) => (await client.get<KubeObject & { status?: { podIP?: string } }>(PODS, NS, p)).status?.podIP ?? ''));
    const before = await ips();
    await sim.stop();
    await eventually(5000, 'no answer while node-sim is down', async () => ((await answers(ingressIP)) ? undefined : true));
    sim = newSim();
    await sim.start();
    const names = await eventually(20_000, 'both pods answer again', async () => {
      const s = await seen(6).catch(() => undefined);
      return s?.size === 2 ? s : undefined;
    });
    assert.deepEqual([...names].sort(), ['web-0', 'web-1']);
    assert.deepEqual(await ips(), before);
  });

  it('scaled to 0 endpoints: no answer through the LB; scaled to 1: answers again', async () => {
    await Promise.all(['web-0', 'web-1'].map(deletePod));
    await eventually(20_000, 'no endpoints in the slice', async () => {
      const list = await client.list<KubeObject & { endpoints?: unknown[] | null }>(SLICES, NS, { labelSelector: 'kubernetes.io/service-name=chain' });
      return list.items.every((s) => !s.endpoints?.length) ? true : undefined;
    });
    await eventually(10_000, 'no answer expected', async () => ((await answers(ingressIP)) ? undefined : true));
    for (let i = 0; i < 5; i++) assert.equal(await answers(ingressIP), false, 'an answer with no backends');
    await createPod('web-2');
    assert.equal(await eventually(20_000, 'web-2 answers', () => hostname(ingressIP).catch(() => undefined)), 'web-2');
  });

  it('the Service deleted: load balancer gone, its port closed, the finalizer removed', async () => {
    await client.delete(SERVICES, NS, 'chain');
    await eventually(20_000, 'Service gone', async () =>
      client.get(SERVICES, NS, 'chain').then(
        () => undefined,
        (e: { code?: number }) => (e.code === 404 ? true : undefined),
      ),
    );
    assert.deepEqual(provider.listLoadBalancers(), []);
    assert.equal(await refused(ingressIP), true, 'the LB still listens');
    await deletePod('web-2');
  });

  it('an instance shut down in the cloud: its Node gets the shutdown taint, and loses it once started', async () => {
    provider.shutdownInstance('chain-1');
    const n = await eventually(20_000, 'shutdown taint', async () => {
      const got = await node('chain-1');
      return (got.spec?.taints ?? []).some((t) => t.key === TAINT_SHUTDOWN) ? got : undefined;
    });
    assert.deepEqual(n.spec?.taints, [{ key: TAINT_SHUTDOWN, effect: 'NoSchedule' }]);
    assert.equal(n.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'Unknown');
    provider.startInstance('chain-1');
    await eventually(20_000, 'taint removed when Ready again', async () => {
      const got = await node('chain-1');
      return !(got.spec?.taints ?? []).length && got.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? true : undefined;
    });
  });

  it('an instance deleted in the cloud: its Node is deleted', async () => {
    provider.deleteInstance('chain-1');
    await eventually(20_000, 'Node chain-1 deleted', async () =>
      node('chain-1').then(
        () => undefined,
        (e: { code?: number }) => (e.code === 404 ? true : undefined),
      ),
    );
    assert.equal((await node('chain-0')).metadata?.name, 'chain-0');
  });
});
