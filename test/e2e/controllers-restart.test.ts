// The API server restarted under a running controller-manager: `kplane serve --controllers=false`
// (SQLite) and `kplane controller-manager --kubeconfig` as child processes. Changes made right
// before the server stops (SIGTERM) and right after it is back on the same data dir and port are
// all acted on: informers resume (watch from their resourceVersion, or relist) and nothing is missed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { NS, CM, SECRETS } from '../support/gvrs.js';
import { eventually as pollUntil } from '../support/eventually.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';

type Proc = KplaneProcess;
const procs = kplaneProcesses();
const { children } = procs;
const kplane = procs.start;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** test/support/eventually.ts, polling every 100 ms and showing the controller-manager's log on failure. */
const eventually = <T>(ms: number, what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  pollUntil(ms, what, probe, { intervalMs: 100, context: () => `controller-manager log:\n${cm?.log().slice(-3000)}` });

let dataDir = '';
let port = 0;
let client: KubeClient;
let cm: Proc | undefined;

const serveArgs = (): string[] => ['serve', '--data-dir', dataDir, '--secure-port', String(port), '--controllers=false'];
const SERVING = /^kplane is serving on https:\/\/\S+/m;

async function count(gvr: GVR, ns: string, labelSelector?: string): Promise<number> {
  return (await client.list(gvr, ns, labelSelector ? { labelSelector } : {})).items.length;
}

async function gone(gvr: GVR, ns: string | undefined, name: string): Promise<true | undefined> {
  try {
    await client.get(gvr, ns, name);
    return undefined;
  } catch (e) {
    return (e as { code?: number }).code === 404 ? true : undefined;
  }
}

/** An owner ConfigMap in `default` with `n` dependents (half ConfigMaps, half Secrets) labelled `set`. */
async function ownerWithDependents(set: string, n: number): Promise<void> {
  const owner = await client.create<KubeObject>(CM, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${set}-owner` } });
  const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: `${set}-owner`, uid: owner.metadata!.uid! }];
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      client.create(i % 2 ? SECRETS : CM, 'default', {
        apiVersion: 'v1',
        kind: i % 2 ? 'Secret' : 'ConfigMap',
        metadata: { name: `${set}-dep-${i}`, labels: { set }, ownerReferences },
      }),
    ),
  );
}

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'kplane-restart-'));
  port = await freePort();
  await kplane(serveArgs(), SERVING);
  client = createHttpsClient(join(dataDir, 'admin.kubeconfig'));
});

after(async () => {
  await client?.close();
  procs.killAll();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

it('API server restarted under a running controller-manager: informers resume, nothing is missed', { timeout: 85_000 }, async () => {
  cm = await kplane(
    [
      'controller-manager',
      '--kubeconfig',
      join(dataDir, 'admin.kubeconfig'),
      '--leader-elect-lease-duration',
      '3s',
      '--leader-elect-renew-deadline',
      '2s',
      '--leader-elect-retry-period',
      '300ms',
    ],
    /identity \S+,/,
  );
  await eventually(20_000, 'the controller-manager leads and its caches are synced', async () =>
    /Proceeding to collect garbage/.test(cm!.log()) ? true : undefined,
  );

  // Before the stop: a namespace to delete after the restart, and an owner deleted right before it.
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'later' } });
  await Promise.all(Array.from({ length: 30 }, (_, i) => client.create(CM, 'later', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } })));
  await ownerWithDependents('before', 40);
  await client.delete(CM, 'default', 'before-owner');

  // Stop the server at once (SIGTERM: graceful, watches end), keep it down for a while.
  const stopped = children[0]!;
  const exited = new Promise<void>((ok) => (stopped.exitCode !== null || stopped.signalCode !== null ? ok() : stopped.once('exit', () => ok())));
  stopped.kill('SIGTERM');
  await exited;
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(cm.child.exitCode, null, 'the controller-manager keeps running while the server is down');

  // Restart on the same data dir and port.
  const restarted = await kplane(serveArgs(), SERVING);
  const server = restarted.child;
  // Right after the restart: delete the namespace, and another owner created and deleted now.
  await eventually(10_000, 'the restarted server answers', () => client.get(NS, undefined, 'later'));
  await client.delete(NS, undefined, 'later');
  await ownerWithDependents('after', 20);
  await client.delete(CM, 'default', 'after-owner');

  await eventually(40_000, 'dependents of the owner deleted before the stop are collected', async () =>
    (await count(CM, 'default', 'set=before')) + (await count(SECRETS, 'default', 'set=before')) === 0 ? true : undefined,
  );
  await eventually(30_000, 'dependents of the owner deleted after the restart are collected', async () =>
    (await count(CM, 'default', 'set=after')) + (await count(SECRETS, 'default', 'set=after')) === 0 ? true : undefined,
  );
  await eventually(30_000, 'namespace later emptied and removed', () => gone(NS, undefined, 'later'));
  assert.equal(cm.child.exitCode, null, 'the controller-manager never exited');
  assert.equal(server.exitCode, null);
  cm.child.kill('SIGTERM');
  await cm.exited;
});
