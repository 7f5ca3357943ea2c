import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Registry } from 'prom-client';
import type { KubeObject } from '../../apimachinery/types.js';
import { createHttpsClient } from '../../client/https.js';
import { createLoopbackClient } from '../../client/loopback.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { versionInfo } from '../../controlplane/controlplane.js';
import { namespaceLifecycle } from '../../registry/core/namespaces/lifecycle.js';
import { ApiServer } from '../../server/apiserver.js';
import { createAuthenticator } from '../../server/filters/authentication.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { splitKey } from './informer.js';
import { Manager } from './manager.js';

const configmaps: GVR = { group: '', version: 'v1', resource: 'configmaps' };
const namespaces: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const COPY = 'example.com/copy';
const COPIED = 'example.com/copied';
const BY = 'example.com/copied-by';
const TOKEN = 'manager-test-loopback';

let server: TestServer;
let https: KubeClient;
let loopback: KubeClient;
let apiServer: ApiServer;
let seq = 0;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  https = createHttpsClient(server.kubeconfig);
  apiServer = new ApiServer({
    registry: server.cp.registry,
    admission: [namespaceLifecycle(server.cp.registry)],
    authenticate: createAuthenticator({ tokens: new Map([[TOKEN, { name: 'system:apiserver', groups: ['system:masters'] }]]) }),
    maxRequestBodyBytes: 3 * 1024 * 1024,
    version: versionInfo(),
    serverAddress: () => '127.0.0.1:0',
  });
  loopback = createLoopbackClient(apiServer.handle, TOKEN);
});
after(async () => {
  await loopback?.close();
  apiServer?.shutdown();
  await https?.close();
  await server?.stop();
});

async function eventually(ms: number, what: string, cond: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function newNamespace(): Promise<string> {
  const name = `mgr-${process.pid}-${++seq}`;
  await https.create(namespaces, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

/** The example controller: copies label example.com/copy into annotation example.com/copied. */
function labelCopier(identity: string, client: KubeClient, ns: string, opts: { lease?: string; registry?: Registry } = {}) {
  const mgr = new Manager({
    client,
    ...(opts.registry ? { registry: opts.registry } : {}),
    ...(opts.lease
      ? { leaderElection: { namespace: 'kube-system', name: opts.lease, identity, leaseDurationMs: 1000, renewDeadlineMs: 700, retryPeriodMs: 100 } }
      : {}),
  });
  const cms = mgr.informer(configmaps, { namespace: ns });
  let reconciles = 0;
  mgr
    .controller({
      name: `label-copier-${identity}`,
      workers: 2,
      reconciler: async (key, signal) => {
        reconciles++;
        const cached = cms.store.get(key);
        if (!cached) return;
        const want = cached.metadata?.labels?.[COPY];
        if (want === undefined || cached.metadata?.annotations?.[COPIED] === want) return;
        const { namespace, name } = splitKey(key);
        // The resourceVersion makes this a conditional write: a stale cache is a 409 and a retry.
        await client.patch(
          configmaps,
          namespace,
          name,
          'merge',
          { metadata: { resourceVersion: cached.metadata?.resourceVersion, annotations: { [COPIED]: want, [BY]: identity } } },
          { signal },
        );
      },
    })
    .for(cms);
  const abort = new AbortController();
  const running = mgr.start(abort.signal);
  return { mgr, abort, running, reconciles: () => reconciles };
}

const annotations = async (ns: string, name: string): Promise<Record<string, string>> => (await https.get(configmaps, ns, name)).metadata?.annotations ?? {};

test('manager + controller end to end: a label is copied into an annotation, and kept in step', async () => {
  const ns = await newNamespace();
  await https.create(configmaps, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before', labels: { [COPY]: 'one' } } });
  const registry = new Registry();
  const m = labelCopier('solo', https, ns, { registry });
  try {
    await eventually(10_000, 'pre-existing object reconciled', async () => (await annotations(ns, 'before'))[COPIED] === 'one');
    await https.create(configmaps, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after', labels: { [COPY]: 'two' } } });
    await eventually(10_000, 'new object reconciled', async () => (await annotations(ns, 'after'))[COPIED] === 'two');
    await https.patch(configmaps, ns, 'after', 'merge', { metadata: { labels: { [COPY]: 'three' } } });
    await eventually(10_000, 'changed label followed', async () => (await annotations(ns, 'after'))[COPIED] === 'three');
    const text = await registry.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="label-copier-solo",result="success"\} [1-9]/);
    assert.match(text, /workqueue_adds_total\{name="label-copier-solo"\} [1-9]/);
  } finally {
    m.abort.abort();
    await m.running;
  }
});

test('two managers (loopback and HTTPS) with leader election: only the leader reconciles; the other takes over when it stops', async () => {
  const ns = await newNamespace();
  const lease = `copier-${process.pid}-${++seq}`;
  const a = labelCopier('in-process', loopback, ns, { lease });
  await eventually(5_000, 'in-process leads', () => a.mgr.isLeading());
  const b = labelCopier('remote', https, ns, { lease });
  try {
    await https.create(configmaps, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { [COPY]: 'a' } } });
    await eventually(10_000, 'x reconciled by the leader', async () => (await annotations(ns, 'x'))[COPIED] === 'a');
    assert.equal((await annotations(ns, 'x'))[BY], 'in-process');
    assert.equal(b.mgr.isLeading(), false);
    assert.equal(b.reconciles(), 0, 'the follower never reconciled');

    a.abort.abort();
    await a.running;
    await eventually(5_000, 'remote takes over', () => b.mgr.isLeading());
    await https.create(configmaps, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', labels: { [COPY]: 'b' } } });
    await eventually(10_000, 'y reconciled by the new leader', async () => (await annotations(ns, 'y'))[COPIED] === 'b');
    assert.equal((await annotations(ns, 'y'))[BY], 'remote');
  } finally {
    a.abort.abort();
    b.abort.abort();
    await Promise.all([a.running, b.running]);
  }
});

test('manager: informers are shared per resource and selection; misuse is an error', async () => {
  const mgr = new Manager({ client: https });
  const one = mgr.informer<KubeObject>(configmaps, { namespace: 'a' });
  assert.equal(mgr.informer(configmaps, { namespace: 'a' }), one);
  assert.notEqual(mgr.informer(configmaps, { namespace: 'b' }), one);
  assert.throws(() => mgr.informer(configmaps, { namespace: 'a', indexers: { byX: () => [] } }), /index/);
  const abort = new AbortController();
  abort.abort();
  await mgr.start(abort.signal);
  assert.throws(() => mgr.add({ start: async () => {} }), /before the manager starts/);
});

test('manager: a failing runnable stops everything and start() rejects with its error', async () => {
  const mgr = new Manager({ client: https });
  let otherStopped = false;
  mgr.add({ needLeaderElection: false, start: (s) => new Promise<void>((r) => s.addEventListener('abort', () => ((otherStopped = true), r()))) });
  mgr.add({ start: async () => Promise.reject(new Error('boom')) });
  await assert.rejects(mgr.start(new AbortController().signal), /boom/);
  assert.equal(otherStopped, true);
});
