// Two API servers on one etcd, both with in-process controllers: leader election on the Lease
// kube-system/kplane-controller-manager lets only one run the namespace and garbage-collector
// controllers; when it stops the other takes over.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { garbageCollector, namespaceDeletion } from '../../src/controllers/index.js';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';

ensureTools();

const NS: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const CM: GVR = { group: '', version: 'v1', resource: 'configmaps' };
const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

let etcd: RunningEtcd;
const servers: { srv: TestServer; client: KubeClient; log: string[] }[] = [];

async function server(): Promise<(typeof servers)[number]> {
  const log: string[] = [];
  const srv = await startTestServer({
    storage: { etcd: etcd.endpoint },
    controllers: [namespaceDeletion(), garbageCollector({ discoveryPeriodMs: 5000 })],
    // No controllerLeaderElection: true is the default on etcd; only the timings are shortened.
    controllerLeaderElection: { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 300 },
    log: (m) => log.push(m),
  });
  const s = { srv, client: createHttpsClient(srv.kubeconfig), log };
  servers.push(s);
  return s;
}

before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  for (const s of servers) {
    await s.client.close();
    await s.srv.stop().catch(() => {});
  }
  await etcd?.stop();
});

async function gone(client: KubeClient, gvr: GVR, ns: string | undefined, name: string): Promise<true | undefined> {
  try {
    await client.get(gvr, ns, name);
    return undefined;
  } catch (e) {
    return (e as { code?: number }).code === 404 ? true : undefined;
  }
}

const ran = (log: string[]): boolean => log.some((l) => /"Starting workers" controller="namespace"|Proceeding to collect garbage/.test(l));

it('two control planes on one etcd: only the Lease holder runs the controllers; the other takes over', { timeout: 80_000 }, async () => {
  const a = await server();
  const b = await server();
  const leader = await eventually(10_000, 'one leads', async () => {
    const l = servers.filter((s) => s.srv.cp.controllersLeading());
    return l.length === 1 ? l[0] : undefined;
  });
  const standby = leader === a ? b : a;
  await eventually(10_000, 'the leader runs both controllers', async () =>
    ran(leader.log) && leader.log.some((l) => /Proceeding to collect garbage/.test(l)) ? true : undefined,
  );
  const lease = await a.client.get<KubeObject & { spec?: { holderIdentity?: string } }>(LEASES, 'kube-system', 'kplane-controller-manager');
  assert.ok(lease.spec?.holderIdentity, 'the Lease names a holder');

  // Work submitted through the standby's API is done by the leader's controllers.
  const c = standby.client;
  await c.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
  for (let i = 0; i < 5; i++) await c.create(CM, 'doomed', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
  const owner = await c.create<KubeObject>(CM, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
  await c.create(CM, 'default', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }] },
  });
  await c.delete(NS, undefined, 'doomed');
  await c.delete(CM, 'default', 'owner');
  await eventually(20_000, 'namespace doomed gone', () => gone(c, NS, undefined, 'doomed'));
  await eventually(20_000, 'the dependent collected', () => gone(c, CM, 'default', 'dependent'));
  assert.equal(standby.srv.cp.controllersLeading(), false);
  assert.equal(ran(standby.log), false, 'the standby ran no controller');

  // The leader stops (gracefully: it releases the Lease); the standby takes over.
  await leader.client.close();
  await leader.srv.stop();
  servers.splice(servers.indexOf(leader), 1);
  await eventually(10_000, 'the standby leads', async () => (standby.srv.cp.controllersLeading() ? true : undefined));
  await c.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed-2' } });
  await c.create(CM, 'doomed-2', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  await c.delete(NS, undefined, 'doomed-2');
  await eventually(20_000, 'namespace doomed-2 gone (the new leader acted)', () => gone(c, NS, undefined, 'doomed-2'));
  assert.ok(ran(standby.log));
});
