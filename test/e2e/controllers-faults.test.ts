// Faults for the out-of-process layout: `kplane serve --controllers=false` plus `kplane
// controller-manager` child processes. A controller-manager killed with kill -9 in the middle of a
// namespace deletion and started again finishes it without touching anything outside the
// namespace; with two controller-managers only the Lease holder acts, and the other takes over
// once the holder is killed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { NS, CM, SECRETS, LEASES } from '../support/gvrs.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';
import { eventually } from '../support/eventually.js';

const LEASE_DURATION_MS = 3000;

type Proc = KplaneProcess;
const procs = kplaneProcesses();
const kplane = procs.start;

let dataDir = '';
let kubeconfig = '';
let client: KubeClient;

async function controllerManager(): Promise<Proc & { identity: string }> {
  const p = await kplane(
    [
      'controller-manager',
      '--kubeconfig',
      kubeconfig,
      // The controllers these faults are about; the ServiceAccount and root CA controllers would
      // add `default` and kube-root-ca.crt to the bystanders' namespaces.
      '--controllers',
      'namespace,garbagecollector',
      '--leader-elect-lease-duration',
      `${LEASE_DURATION_MS}ms`,
      '--leader-elect-renew-deadline',
      '2s',
      '--leader-elect-retry-period',
      '300ms',
    ],
    /identity (\S+),/,
  );
  return { ...p, identity: /identity (\S+),/.exec(p.firstLine)![1]! };
}

async function kill9(p: Proc): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exited;
}

async function holder(): Promise<string | undefined> {
  try {
    const l = await client.get<KubeObject & { spec?: { holderIdentity?: string } }>(LEASES, 'kube-system', 'kplane-controller-manager');
    return l.spec?.holderIdentity || undefined;
  } catch {
    return undefined;
  }
}

async function gone(gvr: GVR, ns: string | undefined, name: string): Promise<boolean> {
  try {
    await client.get(gvr, ns, name);
    return false;
  } catch (e) {
    return (e as { code?: number }).code === 404;
  }
}

/** uid@resourceVersion of every configmap, secret and namespace outside `except`. */
async function outside(except: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const gvr of [CM, SECRETS, NS]) {
    for (const o of (await client.list(gvr)).items) {
      const m = o.metadata ?? {};
      if (m.namespace === except || (gvr === NS && m.name === except)) continue;
      out.set(`${gvr.resource}/${m.namespace ?? ''}/${m.name}`, `${m.uid}@${m.resourceVersion}`);
    }
  }
  return out;
}

async function fill(ns: string, n: number): Promise<void> {
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
      await client.create(SECRETS, ns, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s-${i}` } });
    }),
  );
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'kplane-cm-faults-'));
  await kplane(['serve', '--data-dir', dataDir, '--secure-port', '0', '--controllers=false'], /^kplane is serving on https:\/\/\S+/m);
  kubeconfig = join(dataDir, 'admin.kubeconfig');
  client = createHttpsClient(kubeconfig);
  // Bystanders outside the namespaces that get deleted, some with owners, one owner in foreground-free use.
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bystanders' } });
  const owner = await client.create<KubeObject>(CM, 'bystanders', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
  for (let i = 0; i < 5; i++) {
    await client.create(CM, 'bystanders', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `dep-${i}`,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, blockOwnerDeletion: true }],
      },
    });
  }
  await client.create(CM, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bystander' } });
});

after(async () => {
  await client?.close();
  procs.killAll();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('controller-manager faults', { timeout: 85_000 }, () => {
  it('kill -9 in the middle of a namespace deletion, restart: the deletion completes, nothing outside is touched', async () => {
    const ns = 'victim';
    await fill(ns, 150);
    // A finalizer that only this test removes keeps the namespace Terminating across the crash.
    await client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const before = await outside(ns);
    const first = await controllerManager();
    await eventually(10_000, 'the first controller-manager leads', async () => ((await holder()) === first.identity ? true : undefined));
    await client.delete(NS, undefined, ns);
    // Mid-deletion: the namespace controller has started emptying it.
    await eventually(15_000, 'content deletion under way', async () =>
      (await client.list(SECRETS, ns, { limit: 1 })).items.length < 1 || (await client.list(CM, ns)).items.length < 151 ? true : undefined,
    );
    await kill9(first);
    const nsNow = await client.get<KubeObject & { status?: { phase?: string }; spec?: { finalizers?: string[] } }>(NS, undefined, ns);
    assert.equal(nsNow.status?.phase, 'Terminating');
    assert.deepEqual(nsNow.spec?.finalizers, ['kubernetes']);
    await client.patch(CM, ns, 'held', 'merge', { metadata: { finalizers: null } });
    const second = await controllerManager();
    await eventually(LEASE_DURATION_MS + 10_000, 'the restarted controller-manager takes the Lease', async () =>
      (await holder()) === second.identity ? true : undefined,
    );
    await eventually(20_000, 'the namespace is gone', async () => ((await gone(NS, undefined, ns)) ? true : undefined));
    assert.deepEqual(await outside(ns), before, 'nothing outside the namespace changed');
    second.child.kill('SIGTERM'); // graceful: releases the Lease
    await second.exited;
    await eventually(5_000, 'lease released', async () => ((await holder()) === undefined ? true : undefined));
  });

  it('two controller-managers: only the Lease holder acts; the other takes over when it is killed', async () => {
    const a = await controllerManager();
    const b = await controllerManager();
    const lead = await eventually(10_000, 'a leader', async () => {
      const h = await holder();
      return h === a.identity || h === b.identity ? h : undefined;
    });
    const [leader, standby] = lead === a.identity ? [a, b] : [b, a];
    await eventually(10_000, 'the leader runs its controllers', async () =>
      /"Starting workers" controller="namespace"/.test(leader.log()) ? true : undefined,
    );
    await fill('first', 10);
    await client.delete(NS, undefined, 'first');
    await eventually(15_000, 'namespace first gone (the leader acted)', async () => ((await gone(NS, undefined, 'first')) ? true : undefined));
    assert.doesNotMatch(standby.log(), /"Starting workers" controller="namespace"|Proceeding to collect garbage/, 'the standby runs no controller');
    assert.equal(await holder(), leader.identity);

    const before = await outside('second');
    await fill('second', 20);
    await kill9(leader);
    await client.delete(NS, undefined, 'second');
    await eventually(LEASE_DURATION_MS + 10_000, 'the standby takes the Lease', async () => ((await holder()) === standby.identity ? true : undefined));
    await eventually(20_000, 'namespace second gone (the new leader acted)', async () => ((await gone(NS, undefined, 'second')) ? true : undefined));
    assert.match(standby.log(), /"Starting workers" controller="namespace"/);
    assert.deepEqual(await outside('second'), before, 'nothing outside the namespace changed');
    standby.child.kill('SIGTERM');
    await standby.exited;
  });
});
