// The cloud module's nodes, pods, endpoints and endpoint slices through kubectl 1.20 and 1.33 and
// raw HTTP (issue 25): upstream's printer columns (printNode, printPod, printEndpoints,
// printEndpointSlice), `kubectl explain`, validation messages, /status, graceful pod deletion.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { KUBECTLS, kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const MERGE_CT = { 'content-type': 'application/merge-patch+json', accept: 'application/json' };

let server: TestServer;
let raw: RawClient;
let dir: string;

const post = (path: string, body: unknown): Promise<RawResponse> => raw.request({ method: 'POST', path, headers: JSON_CT, body: JSON.stringify(body) });
const message = (r: RawResponse): string => r.json<{ message: string }>().message;

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
  raw = new RawClient(server.url, adminCredentials(server.dataDir));
  dir = await mkdtemp(join(tmpdir(), 'kplane-cloud-resources-'));
  const node = await post('/api/v1/nodes', {
    metadata: { name: 'node-a', labels: { 'node-role.kubernetes.io/worker': '' } },
    spec: { podCIDR: '127.10.1.0/24', providerID: 'loopback://node-a' },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [
        { type: 'InternalIP', address: '127.0.1.1' },
        { type: 'Hostname', address: 'node-a' },
      ],
      nodeInfo: { kubeletVersion: 'v1.33.0-kplane', osImage: 'kplane node-sim', kernelVersion: '6.1', containerRuntimeVersion: 'kplane://0.1' },
      capacity: { cpu: '4', pods: '110' },
    },
  });
  assert.equal(node.status, 201, node.text());
  const slice = await post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [1, 2, 3, 4].map((i) => ({ addresses: [`127.10.1.${i}`], conditions: { ready: true }, nodeName: 'node-a' })),
  });
  assert.equal(slice.status, 201, slice.text());
  const ep = await post('/api/v1/namespaces/default/endpoints', {
    metadata: { name: 'web' },
    subsets: [{ addresses: [{ ip: '127.10.1.1' }, { ip: '127.10.1.2' }], ports: [{ port: 8080 }] }],
  });
  assert.equal(ep.status, 201, ep.text());
});
after(async () => {
  raw?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('nodes', () => {
  it('defaults podCIDRs and allocatable; keeps the status on create; provider ID and pod CIDRs are set once', async () => {
    const n = (await raw.request({ path: '/api/v1/nodes/node-a', headers: JSON_CT })).json<{
      spec: { podCIDRs: string[] };
      status: { allocatable: Record<string, string> };
    }>();
    assert.deepEqual(n.spec.podCIDRs, ['127.10.1.0/24']);
    assert.deepEqual(n.status.allocatable, { cpu: '4', pods: '110' });
    const r = await raw.request({
      method: 'PATCH',
      path: '/api/v1/nodes/node-a',
      headers: MERGE_CT,
      body: JSON.stringify({ spec: { providerID: 'other://x' } }),
    });
    assert.equal(r.status, 422);
    assert.equal(message(r), 'Node "node-a" is invalid: spec.providerID: Forbidden: node updates may not change providerID except from "" to valid');
  });

  it('taints: effect and uniqueness as upstream', async () => {
    const r = await post('/api/v1/nodes', {
      metadata: { name: 'tainted' },
      spec: {
        taints: [
          { key: 'a', effect: 'Sometimes' },
          { key: 'b', effect: 'NoSchedule' },
          { key: 'b', effect: 'NoSchedule' },
        ],
      },
    });
    assert.equal(r.status, 422);
    assert.equal(
      message(r),
      'Node "tainted" is invalid: [spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute", spec.taints[2]: Duplicate value: core.Taint{Key:"b", Value:"", Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair]',
    );
  });
});

describe('pods', () => {
  it('defaults and a Pending status on create; the spec is immutable but for images', async () => {
    const r = await post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'p1' },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'agnhost:2.47', ports: [{ containerPort: 8080 }] }] },
    });
    assert.equal(r.status, 201, r.text());
    const p = r.json<{ spec: Record<string, unknown> & { containers: Record<string, unknown>[] }; status: Record<string, unknown> }>();
    assert.equal(p.spec.restartPolicy, 'Always');
    assert.equal(p.spec.terminationGracePeriodSeconds, 30);
    assert.equal(p.spec.containers[0]!.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
    const bad = await raw.request({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/pods/p1',
      headers: MERGE_CT,
      body: JSON.stringify({ spec: { nodeName: 'node-b' } }),
    });
    assert.equal(bad.status, 422);
    assert.match(message(bad), /spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/);
    const st = await raw.request({
      method: 'PATCH',
      path: '/api/v1/namespaces/default/pods/p1/status',
      headers: MERGE_CT,
      body: JSON.stringify({ status: { phase: 'Running', podIP: '127.10.1.5', conditions: [{ type: 'Ready', status: 'True' }] } }),
    });
    assert.equal(st.status, 200, st.text());
  });

  it('a scheduled pod is deleted gracefully (deletionTimestamp, then removed with grace 0); an unscheduled one at once', async () => {
    await post('/api/v1/namespaces/default/pods', { metadata: { name: 'p2' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] } });
    const d = await raw.request({ method: 'DELETE', path: '/api/v1/namespaces/default/pods/p2', headers: JSON_CT });
    assert.equal(d.status, 200);
    const m = d.json<{ metadata: { deletionTimestamp?: string; deletionGracePeriodSeconds?: number } }>().metadata;
    assert.equal(m.deletionGracePeriodSeconds, 30);
    assert.ok(m.deletionTimestamp);
    const gone = await raw.request({
      method: 'DELETE',
      path: '/api/v1/namespaces/default/pods/p2',
      headers: JSON_CT,
      body: JSON.stringify({ gracePeriodSeconds: 0 }),
    });
    assert.equal(gone.status, 200);
    assert.equal((await raw.request({ path: '/api/v1/namespaces/default/pods/p2', headers: JSON_CT })).status, 404);
    await post('/api/v1/namespaces/default/pods', { metadata: { name: 'p3' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    assert.equal((await raw.request({ method: 'DELETE', path: '/api/v1/namespaces/default/pods/p3', headers: JSON_CT })).status, 200);
    assert.equal((await raw.request({ path: '/api/v1/namespaces/default/pods/p3', headers: JSON_CT })).status, 404);
  });

  it('validation: containers required, ports in range', async () => {
    const r = await post('/api/v1/namespaces/default/pods', { metadata: { name: 'bad' }, spec: { containers: [] } });
    assert.equal(r.status, 422);
    assert.equal(message(r), 'Pod "bad" is invalid: spec.containers: Required value');
    const r2 = await post('/api/v1/namespaces/default/pods', {
      metadata: { name: 'bad' },
      spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 0 }] }] },
    });
    assert.equal(message(r2), 'Pod "bad" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive');
  });
});

describe('endpoint slices', () => {
  it('addressType is required and immutable; loopback addresses are accepted', async () => {
    const r = await post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', { metadata: { name: 'bad' }, endpoints: [] });
    assert.equal(r.status, 422);
    assert.equal(message(r), 'EndpointSlice.discovery.k8s.io "bad" is invalid: addressType: Required value');
    const u = await raw.request({
      method: 'PATCH',
      path: '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-abc',
      headers: MERGE_CT,
      body: JSON.stringify({ addressType: 'FQDN' }),
    });
    assert.equal(u.status, 422);
    assert.match(message(u), /addressType: Invalid value: "FQDN": field is immutable/);
  });
});

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name}`, () => {
    it('get nodes -o wide, get pods -o wide, get endpoints and endpointslices, explain', async () => {
      const kc = kubectlSession(kubectl.bin, server.kubeconfig, dir);
      const nodes = (await kc.ok(['get', 'nodes', '-o', 'wide'])).trim().split('\n');
      assert.match(nodes[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/);
      const a = nodes.find((l) => l.startsWith('node-a '))!.split(/\s{2,}/);
      assert.deepEqual(
        [a[1], a[2], a[4], a[5], a[6], a[7], a[8], a[9]],
        ['Ready', 'worker', 'v1.33.0-kplane', '127.0.1.1', '<none>', 'kplane node-sim', '6.1', 'kplane://0.1'],
      );
      const pods = (await kc.ok(['get', 'pods', '-o', 'wide'])).trim().split('\n');
      assert.match(pods[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
      const p1 = pods.find((l) => l.startsWith('p1 '))!.split(/\s+/);
      assert.deepEqual([p1[1], p1[2], p1[3], p1[5], p1[6]], ['0/1', 'Running', '0', '127.10.1.5', 'node-a']);
      const eps = (await kc.ok(['get', 'endpoints', 'web'])).trim().split('\n');
      assert.match(eps[1]!, /^web\s+127\.10\.1\.1:8080,127\.10\.1\.2:8080\s+/);
      const slices = (await kc.ok(['get', 'endpointslices'])).trim().split('\n');
      assert.match(slices[0]!, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/);
      assert.match(slices[1]!, /^web-abc\s+IPv4\s+8080\s+127\.10\.1\.1,127\.10\.1\.2,127\.10\.1\.3 \+ 1 more\.\.\.\s+/);
      const explain = await kc.ok(['explain', 'service.spec.externalTrafficPolicy']);
      assert.match(explain, /FIELD:\s+externalTrafficPolicy/);
      assert.match(await kc.ok(['explain', 'node.spec.taints']), /effect/);
    });
  });
}
