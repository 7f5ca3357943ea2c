// The cloud node controller and the node lifecycle controller against a real API server (cloud
// module) with the fake provider: initialization from InstanceMetadata (providerID, labels, the
// provided node IP, the taint removed, `Synced`), deletion of nodes whose instance is gone, and the
// shutdown taint coming and going.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../client/https.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { cloud } from '../../controlplane/cloud-module.js';
import { defaultModules } from '../../controlplane/modules.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { eventually } from '../../../test/support/eventually.js';
import { runControllers, type RunningControllers } from '../index.js';
import { FakeCloud } from './fake.js';
import { cloudNodeController, desiredNodeAddresses, initializedNode, nodeAddressesChanged, nodeAddressesFromNodeIP } from './node.js';
import { cloudNodeLifecycleController } from './nodelifecycle.js';
import { TAINT_SHUTDOWN, TAINT_UNINITIALIZED, type Node } from './provider.js';

const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };

describe('cloud node helpers', () => {
  const cloudAddrs = [
    { type: 'InternalIP', address: '127.0.10.1' },
    { type: 'InternalIP', address: '127.0.10.2' },
    { type: 'ExternalIP', address: '127.0.11.1' },
  ];

  it('nodeAddressesFromNodeIP: the provided IP wins its type, other types follow', () => {
    assert.deepEqual(nodeAddressesFromNodeIP('127.0.10.2', cloudAddrs), [
      { type: 'InternalIP', address: '127.0.10.2' },
      { type: 'ExternalIP', address: '127.0.11.1' },
    ]);
    assert.throws(() => nodeAddressesFromNodeIP('127.0.10.9', cloudAddrs), /failed to get node address from cloud provider that matches ip: 127.0.10.9/);
    assert.throws(() => nodeAddressesFromNodeIP('not-an-ip', cloudAddrs), /failed to parse node IP "not-an-ip"/);
  });

  it('desiredNodeAddresses keeps the kubelet Hostname when the cloud gives none, and skips empty answers', () => {
    const node: Node = { metadata: { name: 'n' }, status: { addresses: [{ type: 'Hostname', address: 'n.local' }] } };
    assert.deepEqual(desiredNodeAddresses(node, { nodeAddresses: [cloudAddrs[0]!] }), [cloudAddrs[0], { type: 'Hostname', address: 'n.local' }]);
    assert.equal(desiredNodeAddresses(node, { nodeAddresses: [] }), undefined);
    assert.equal(nodeAddressesChanged([cloudAddrs[0]!], [cloudAddrs[0]!]), false);
    assert.equal(nodeAddressesChanged([cloudAddrs[0]!], [cloudAddrs[1]!]), true);
  });

  it('initializedNode: providerID only when unset, GA and beta labels, no kubernetes.io additional labels, taint gone', () => {
    const node: Node = {
      metadata: { name: 'n', labels: { keep: 'me' } },
      spec: {
        taints: [
          { key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' },
          { key: 'other', effect: 'NoExecute' },
        ],
      },
    };
    const n = initializedNode(node, {
      providerID: 'fake://n',
      instanceType: 't1',
      zone: 'z1',
      region: 'r1',
      nodeAddresses: [],
      additionalLabels: { 'example.com/rack': '7', 'node.kubernetes.io/bad': 'x', keep: 'other' },
    });
    assert.equal(n.spec?.providerID, 'fake://n');
    assert.deepEqual(n.metadata?.labels, {
      keep: 'me',
      'beta.kubernetes.io/instance-type': 't1',
      'node.kubernetes.io/instance-type': 't1',
      'failure-domain.beta.kubernetes.io/zone': 'z1',
      'topology.kubernetes.io/zone': 'z1',
      'failure-domain.beta.kubernetes.io/region': 'r1',
      'topology.kubernetes.io/region': 'r1',
      'example.com/rack': '7',
    });
    assert.deepEqual(n.spec?.taints, [{ key: 'other', effect: 'NoExecute' }]);
    const kept = initializedNode({ ...node, spec: { ...node.spec, providerID: 'kubelet://n' } }, { providerID: 'fake://n', nodeAddresses: [] });
    assert.equal(kept.spec?.providerID, 'kubelet://n');
  });
});

describe('cloud node and node lifecycle controllers with the fake provider', () => {
  let server: TestServer;
  let client: KubeClient;
  let fake: FakeCloud;
  let running: RunningControllers;

  before(async () => {
    server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
    client = createHttpsClient(server.kubeconfig);
    fake = new FakeCloud({ zone: 'zone-b', region: 'region-2', instanceType: 'fake.large' });
    running = runControllers({
      client,
      controllers: [cloudNodeController({ provider: fake }), cloudNodeLifecycleController({ provider: fake, nodeMonitorPeriodMs: 100 })],
    });
  });
  after(async () => {
    await running?.stop();
    await client?.close();
    await server?.stop();
  });

  const getNode = (name: string) => client.get<Node>(NODES, undefined, name);
  const gone = async (name: string) => {
    try {
      await getNode(name);
      return undefined;
    } catch (e) {
      return (e as { code?: number }).code === 404 ? true : undefined;
    }
  };
  const setReady = (name: string, status: string) =>
    client.patch(
      NODES,
      undefined,
      name,
      'merge',
      { status: { conditions: [{ type: 'Ready', status, reason: 'Test', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] } },
      { subresource: 'status' },
    );

  it('initializes a tainted node: providerID, labels, addresses with the provided IP, taint gone, Synced', async () => {
    fake.setInstance('n1', {
      metadata: {
        nodeAddresses: [
          { type: 'InternalIP', address: '127.0.10.1' },
          { type: 'InternalIP', address: '127.0.10.2' },
        ],
        additionalLabels: { 'example.com/rack': '3' },
      },
    });
    await client.create(NODES, undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', annotations: { 'alpha.kubernetes.io/provided-node-ip': '127.0.10.2' } },
      spec: { taints: [{ key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] },
    });
    await setReady('n1', 'True');
    const n = await eventually(5000, 'initialized with addresses', async () => {
      const n = await getNode('n1');
      return n.status?.addresses?.length && !(n.spec?.taints ?? []).length ? n : undefined;
    });
    assert.equal(n.spec?.providerID, 'fake://n1');
    assert.equal(n.metadata?.labels?.['topology.kubernetes.io/zone'], 'zone-b');
    assert.equal(n.metadata?.labels?.['failure-domain.beta.kubernetes.io/region'], 'region-2');
    assert.equal(n.metadata?.labels?.['node.kubernetes.io/instance-type'], 'fake.large');
    assert.equal(n.metadata?.labels?.['example.com/rack'], '3');
    assert.deepEqual(n.status?.addresses, [{ type: 'InternalIP', address: '127.0.10.2' }]);
    await eventually(5000, 'Synced event', async () => {
      const ev = (await client.list<{ involvedObject: { name: string; kind: string }; reason: string } & Node>(EVENTS, 'default')).items;
      return ev.some((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === 'n1' && e.reason === 'Synced') ? true : undefined;
    });
  });

  it('a provider error keeps the taint until metadata can be read', async () => {
    fake.setError('instanceMetadata', { message: 'cloud API down', times: 1 });
    await client.create(NODES, undefined, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n2' },
      spec: { taints: [{ key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] },
    });
    await eventually(10000, 'initialized after the retry', async () => ((await getNode('n2')).spec?.providerID ? true : undefined));
    assert.ok(fake.callsOf('instanceMetadata').filter((c) => c.target === 'n2').length >= 2);
  });

  it('a Ready node whose instance is gone is kept; NotReady, it is deleted (DeletingNode)', async () => {
    await setReady('n2', 'True');
    fake.setInstance('n2', { exists: false });
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(await getNode('n2'));
    await setReady('n2', 'Unknown');
    await eventually(5000, 'n2 deleted', () => gone('n2'));
    const ev = (await client.list<{ involvedObject: { name: string }; reason: string; message: string } & Node>(EVENTS, 'default')).items;
    const del = ev.find((e) => e.involvedObject.name === 'n2' && e.reason === 'DeletingNode');
    assert.equal(del?.message, 'Deleting node n2 because it does not exist in the cloud provider');
  });

  it('a NotReady node whose instance is shut down gets the shutdown taint; Ready again, it loses it', async () => {
    fake.setInstance('n1', { shutdown: true });
    await setReady('n1', 'False');
    const n = await eventually(5000, 'shutdown taint', async () => {
      const n = await getNode('n1');
      return n.spec?.taints?.some((t) => t.key === TAINT_SHUTDOWN) ? n : undefined;
    });
    assert.deepEqual(n.spec?.taints, [{ key: TAINT_SHUTDOWN, effect: 'NoSchedule' }]);
    fake.setInstance('n1', { shutdown: false });
    await setReady('n1', 'True');
    await eventually(5000, 'taint removed', async () => ((await getNode('n1')).spec?.taints?.length ? undefined : true));
  });
});
