// The API server's identity Lease (KEP-1965, gate APIServerIdentity) as an operator sees it:
// `kubectl -n kube-system get lease -l apiserver.kubernetes.io/identity=kube-apiserver` lists the
// server, its holderIdentity changes on restart, the lease is renewed, expired identity leases are
// collected, and the gate turns it off.
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { apiserverIdentityController, identityLeaseName } from '../../src/controllers/apiserveridentity.js';
import { APIServerIdentity, newKubeFeatureGate } from '../../src/featuregate/index.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tools } from '../support/tools.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Lease {
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

describe('apiserver identity lease', { timeout: 120_000 }, () => {
  let server: TestServer;
  let dir: string;

  before(async () => {
    server = await startTestServer({ featureGates: newKubeFeatureGate() });
    dir = await mkdtemp(join(tmpdir(), 'kplane-identity-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names the lease as upstream hashes an identity (length-prefixed, SHA-256, base32)', () => {
    // Computed independently (Python: struct.pack('>H', …), hashlib.sha256, base64.b32encode).
    assert.equal(identityLeaseName('my-host'), 'apiserver-ofqcglbvlh75fxjyngphe2qeam');
    assert.equal(identityLeaseName('127.0.0.1:6443'), 'apiserver-6tl37bermuwci2d3bhyxwc6rhi');
  });

  it('is listed by kubectl with its labels, duration and a holderIdentity of this start', async () => {
    const kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    const out = await kc.ok(['-n', 'kube-system', 'get', 'lease', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'json']);
    const items = (JSON.parse(out) as { items: Lease[] }).items;
    assert.equal(items.length, 1, out);
    const lease = items[0]!;
    assert.equal(lease.metadata.name, identityLeaseName(`${hostname()}:${new URL(server.url).port}`));
    assert.deepEqual(lease.metadata.labels, { 'apiserver.kubernetes.io/identity': 'kube-apiserver', 'kubernetes.io/hostname': hostname() });
    assert.equal(lease.spec.leaseDurationSeconds, 3600);
    assert.match(lease.spec.holderIdentity ?? '', new RegExp(`^${lease.metadata.name}_[0-9a-f-]{36}$`));
    assert.match(lease.spec.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('renews its lease and collects expired identity leases, and stops when stopped', async () => {
    const client = server.cp.loopbackClient();
    const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
    const twoHoursAgo = `${new Date(Date.now() - 7_200_000).toISOString().slice(0, 23)}000Z`;
    const lease = (name: string, renewTime: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, labels },
      spec: { holderIdentity: `${name}_x`, leaseDurationSeconds: 3600, renewTime },
    });
    await client.create(LEASES, 'kube-system', lease('apiserver-expired', twoHoursAgo, { 'apiserver.kubernetes.io/identity': 'kube-apiserver' }));
    await client.create(LEASES, 'kube-system', lease('someone-else-expired', twoHoursAgo, { app: 'other' }));
    const c = apiserverIdentityController(client, { id: 'test-identity', hostname: 'h', renewIntervalMs: 100, gcIntervalMs: 100 });
    await c.start();
    try {
      const first = (await client.get(LEASES, 'kube-system', c.leaseName)) as unknown as Lease;
      await eventually(10_000, 'the lease renewed', async () => {
        const now = (await client.get(LEASES, 'kube-system', c.leaseName)) as unknown as Lease;
        return now.spec.renewTime !== first.spec.renewTime ? true : undefined;
      });
      const names = await eventually(10_000, 'the expired identity lease collected', async () => {
        const names = (await client.list(LEASES, 'kube-system')).items.map((l) => l.metadata?.name);
        return names.includes('apiserver-expired') ? undefined : names;
      });
      assert.ok(names.includes('someone-else-expired'), 'only identity leases are collected');
    } finally {
      await c.stop();
    }
    const stopped = (await client.get(LEASES, 'kube-system', c.leaseName)) as unknown as Lease;
    await new Promise((r) => setTimeout(r, 400));
    const later = (await client.get(LEASES, 'kube-system', c.leaseName)) as unknown as Lease;
    assert.equal(later.metadata.resourceVersion, stopped.metadata.resourceVersion, 'no renewal after stop');
    await client.close();
  });

  it('is not kept with APIServerIdentity off', async () => {
    const gates = newKubeFeatureGate();
    gates.set(`${APIServerIdentity}=false`);
    const off = await startTestServer({ featureGates: gates });
    try {
      const client = off.cp.loopbackClient();
      const items = (await client.list({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases' }, 'kube-system')).items;
      assert.deepEqual(items, []);
      await client.close();
    } finally {
      await off.stop();
    }
  });
});
