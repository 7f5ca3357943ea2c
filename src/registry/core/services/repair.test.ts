// The periodic cluster IP and node port repair loops (upstream's ipallocator/portallocator repair
// controllers) in a real control plane whose loop runs every 100 ms: a leaked item is flagged, kept
// for the grace rounds, then freed; an item a Service holds but the bitmap lost is taken again
// (Warning events ClusterIPNotAllocated / PortNotAllocated); a Service written around the registry
// with another's cluster IP and node port, or a port outside the range, is reported
// (…AlreadyAllocated, PortOutOfRange) and nothing is freed from under the first Service.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../apimachinery/types.js';
import { createHttpsClient } from '../../../client/https.js';
import type { GVR, KubeClient } from '../../../client/types.js';
import { cloud } from '../../../controlplane/cloud-module.js';
import { defaultModules } from '../../../controlplane/modules.js';
import { eventually } from '../../../../test/support/eventually.js';
import { startTestServer, type TestServer } from '../../../../test/support/server.js';
import { ServiceAllocators } from './alloc.js';
import type { Service } from './types.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };
const NS = 'default';

let server: TestServer;
let client: KubeClient;
const logs: string[] = [];
const ranges = () => new ServiceAllocators().ranges(server.cp.storage);

type Event = KubeObject & {
  reason?: string;
  message?: string;
  type?: string;
  source?: { component?: string };
  involvedObject?: { name?: string; kind?: string };
};

async function eventFor(name: string, reason: string): Promise<Event> {
  return eventually(10_000, `event ${reason} for ${name}`, async () => {
    const list = await client.list<Event>(EVENTS, NS);
    return list.items.find((e) => e.involvedObject?.name === name && e.reason === reason);
  });
}

const nodePort = (s: Service): number => s.spec?.ports?.[0]?.nodePort as number;

async function createNodePort(name: string, port?: number): Promise<Service> {
  return client.create<Service>(SERVICES, NS, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { type: 'NodePort', ports: [{ port: 80, ...(port ? { nodePort: port } : {}) }] },
  });
}

/** Writes a copy of Service `from` named `name` straight into storage (around the registry and its allocator). */
async function writeAround(from: string, name: string, change: (s: Service) => void): Promise<void> {
  const { items } = await server.cp.storage.list('/registry/services/');
  const kv = items.find((i) => i.key.endsWith(`/${NS}/${from}`));
  assert.ok(kv, `no stored Service ${from} under /registry/services/`);
  const obj = JSON.parse(Buffer.from(kv.value).toString('utf8')) as Service;
  obj.metadata = { ...obj.metadata, name, uid: `${obj.metadata?.uid ?? ''}-copy` };
  delete obj.metadata.resourceVersion;
  change(obj);
  await server.cp.storage.create(kv.key.replace(/[^/]+$/, name), Buffer.from(JSON.stringify(obj)));
}

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud({ repairIntervalMs: 100 })], log: (m) => logs.push(m) });
  client = createHttpsClient(server.kubeconfig);
});

after(async () => {
  await client?.close();
  await server?.stop();
});

describe('service allocation repair loops', () => {
  it('a leaked node port and cluster IP are flagged, kept for the grace rounds, then freed', async () => {
    const r = ranges();
    await r.ports.allocate(30700);
    await r.ips.allocate('127.1.200.7');
    await eventually(10_000, 'leaks freed', async () => (!(await r.ports.has(30700)) && !(await r.ips.has('127.1.200.7')) ? true : undefined));
    const portLines = logs.filter((l) => l.includes('node port 30700'));
    assert.deepEqual(portLines, [
      'repair: the node port 30700 may have leaked: flagging for later clean up',
      'repair: the node port 30700 appears to have leaked: cleaning up',
    ]);
    assert.ok(logs.includes('repair: the cluster IP [IPv4]:127.1.200.7 appears to have leaked: cleaning up'));
    // Free again: a Service may ask for it.
    assert.equal(nodePort(await createNodePort('reuse', 30700)), 30700);
    const m = await server.cp.metrics.registry.getSingleMetricAsString('apiserver_nodeport_repair_port_errors_total');
    assert.match(m, /apiserver_nodeport_repair_port_errors_total\{type="leak"\} [1-9]/);
  });

  it('an item a Service holds but the bitmap lost is taken again, with a Warning event', async () => {
    const svc = await createNodePort('lost');
    const r = ranges();
    await r.ports.release(nodePort(svc));
    await r.ips.release(svc.spec?.clusterIP as string);
    await eventually(10_000, 'retaken', async () =>
      (await r.ports.has(nodePort(svc))) && (await r.ips.has(svc.spec?.clusterIP as string)) ? true : undefined,
    );
    const e = await eventFor('lost', 'PortNotAllocated');
    assert.equal(e.message, `Port ${nodePort(svc)} is not allocated; repairing`);
    assert.equal(e.type, 'Warning');
    assert.equal(e.source?.component, 'portallocator-repair-controller');
    const ip = await eventFor('lost', 'ClusterIPNotAllocated');
    assert.equal(ip.message, `Cluster IP [IPv4]:${svc.spec?.clusterIP} is not allocated; repairing`);
    assert.equal(ip.source?.component, 'ipallocator-repair-controller');
    // Taken again: a second Service cannot have it.
    await assert.rejects(createNodePort('dup', nodePort(svc)), /provided port is already allocated/);
  });

  it('double allocations and a port out of range are reported; the first holder keeps its items', async () => {
    const first = await createNodePort('first');
    await writeAround('first', 'second', () => {});
    await writeAround('first', 'outside', (s) => {
      s.spec = { ...s.spec, clusterIP: '127.1.200.9', clusterIPs: ['127.1.200.9'], ports: [{ port: 80, protocol: 'TCP', targetPort: 80, nodePort: 29999 }] };
    });
    const dup = await eventFor('second', 'PortAlreadyAllocated');
    assert.equal(dup.message, `Port ${nodePort(first)} was assigned to multiple services; please recreate service`);
    const dupIP = await eventFor('second', 'ClusterIPAlreadyAllocated');
    assert.equal(dupIP.message, `Cluster IP [IPv4]:${first.spec?.clusterIP} was assigned to multiple services; please recreate service`);
    const out = await eventFor('outside', 'PortOutOfRange');
    assert.equal(out.message, 'Port 29999 is not within the port range 30000-32767; please recreate service');
    assert.ok(logs.includes(`repair: the node port ${nodePort(first)} for service ${NS}/second was assigned to multiple services; please recreate`));
    const r = ranges();
    assert.equal(await r.ports.has(nodePort(first)), true);
    assert.equal(await r.ips.has(first.spec?.clusterIP as string), true);
  });
});
