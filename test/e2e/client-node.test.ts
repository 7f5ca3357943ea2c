// @kubernetes/client-node (v1.x, promise API with object parameters) against a real kplane server:
// CRUD of the generic resources, conflicts, selectors, paging, Watch, and an informer that re-lists
// after a 410 Gone.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let coord: k8s.CoordinationV1Api;
let eventsV1: k8s.EventsV1Api;
const NS = 'e2e-client-node';

/** The parsed Status body of a failed call (client-node keeps it as a JSON string). */
function statusOf(e: unknown): { code: number; body: Record<string, unknown> } {
  assert.ok(e instanceof k8s.ApiException, `expected ApiException, got ${String(e)}`);
  // ApiException<T>.body is typed per call; on errors it is the raw response text.
  const raw: unknown = (e as k8s.ApiException<unknown>).body;
  const body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
  return { code: (e as k8s.ApiException<unknown>).code, body };
}

async function expectStatus(p: Promise<unknown>, code: number): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (e) {
    const s = statusOf(e);
    assert.equal(s.code, code, JSON.stringify(s.body));
    assert.equal(s.body.kind, 'Status');
    assert.equal(s.body.apiVersion, 'v1');
    assert.equal(s.body.status, 'Failure');
    assert.equal(s.body.code, code);
    return s.body;
  }
  assert.fail(`expected HTTP ${code}, the call succeeded`);
}

/** GET on the server with the admin credentials of the kubeconfig. */
async function rawGet(path: string): Promise<{ status: number; body: string }> {
  const opts: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const url = new URL(kc.getCurrentCluster()!.server + path);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ...opts, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sum of apiserver_request_total for one verb and resource over all codes and scopes. */
async function requestCount(verb: string, resource: string): Promise<number> {
  const m = await rawGet('/metrics');
  assert.equal(m.status, 200);
  let total = 0;
  for (const line of m.body.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!line.includes(`verb="${verb}"`) || !line.includes(`resource="${resource}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

before(async () => {
  server = await startTestServer();
  kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  coord = kc.makeApiClient(k8s.CoordinationV1Api);
  eventsV1 = kc.makeApiClient(k8s.EventsV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
});

after(async () => {
  await server?.stop();
});

describe('client-node CRUD', () => {
  test('configmaps: create, read, list, replace, patch, delete', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'cm1', labels: { app: 'a' } }, data: { k: 'v' } },
    });
    assert.equal(created.metadata?.name, 'cm1');
    assert.equal(created.metadata?.namespace, NS);
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);
    assert.deepEqual(created.data, { k: 'v' });

    const read = await core.readNamespacedConfigMap({ name: 'cm1', namespace: NS });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
    assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

    const list = await core.listNamespacedConfigMap({ namespace: NS });
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.items.some((c) => c.metadata?.name === 'cm1'));
    assert.ok(Number(list.metadata?.resourceVersion) >= Number(created.metadata?.resourceVersion));

    read.data = { k: 'v2', extra: 'x' };
    const replaced = await core.replaceNamespacedConfigMap({ name: 'cm1', namespace: NS, body: read });
    assert.deepEqual(replaced.data, { k: 'v2', extra: 'x' });
    assert.ok(Number(replaced.metadata?.resourceVersion) > Number(created.metadata?.resourceVersion));

    // client-node 1.x sends application/json-patch+json for patch calls by default.
    const patched = await core.patchNamespacedConfigMap({
      name: 'cm1',
      namespace: NS,
      body: [{ op: 'replace', path: '/data/k', value: 'v3' }],
    });
    assert.deepEqual(patched.data, { k: 'v3', extra: 'x' });
    // A merge patch with an explicit content type.
    const merged = await core.patchNamespacedConfigMap(
      { name: 'cm1', namespace: NS, body: { data: { extra: null, m: 'y' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.data, { k: 'v3', m: 'y' });

    const del = await core.deleteNamespacedConfigMap({ name: 'cm1', namespace: NS });
    // The generated client types the answer as V1Status; configmaps answer with a Success Status.
    const delBody = del as unknown as { kind?: string; status?: string; details?: { name?: string; kind?: string; uid?: string } };
    assert.equal(delBody.kind, 'Status');
    assert.equal(delBody.status, 'Success');
    assert.equal(delBody.details?.name, 'cm1');
    assert.equal(delBody.details?.kind, 'configmaps');
    assert.equal(delBody.details?.uid, created.metadata?.uid);

    const nf = await expectStatus(core.readNamespacedConfigMap({ name: 'cm1', namespace: NS }), 404);
    assert.equal(nf.reason, 'NotFound');
    assert.equal(nf.message, 'configmaps "cm1" not found');
    assert.deepEqual(nf.details, { name: 'cm1', kind: 'configmaps' });
  });

  test('create of an existing configmap is 409 AlreadyExists', async () => {
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'dup' } } });
    const s = await expectStatus(core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'dup' } } }), 409);
    assert.equal(s.reason, 'AlreadyExists');
    assert.equal(s.message, 'configmaps "dup" already exists');
    await core.deleteNamespacedConfigMap({ name: 'dup', namespace: NS });
  });

  test('replace with a stale resourceVersion is 409 Conflict', async () => {
    const v1 = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'stale' }, data: { a: '1' } } });
    const v2 = await core.replaceNamespacedConfigMap({ name: 'stale', namespace: NS, body: { ...v1, data: { a: '2' } } });
    assert.notEqual(v2.metadata?.resourceVersion, v1.metadata?.resourceVersion);
    const s = await expectStatus(core.replaceNamespacedConfigMap({ name: 'stale', namespace: NS, body: { ...v1, data: { a: '3' } } }), 409);
    assert.equal(s.reason, 'Conflict');
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(s.details, { name: 'stale', kind: 'configmaps' });
    const now = await core.readNamespacedConfigMap({ name: 'stale', namespace: NS });
    assert.deepEqual(now.data, { a: '2' });
    await core.deleteNamespacedConfigMap({ name: 'stale', namespace: NS });
  });

  test('secrets: stringData becomes base64 data; replace; delete', async () => {
    const created = await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 's1' }, type: 'Opaque', stringData: { password: 'hunter2' } },
    });
    assert.equal(created.type, 'Opaque');
    assert.equal(created.stringData, undefined);
    assert.deepEqual(created.data, { password: Buffer.from('hunter2').toString('base64') });
    const read = await core.readNamespacedSecret({ name: 's1', namespace: NS });
    read.data = { ...read.data, user: Buffer.from('admin').toString('base64') };
    const replaced = await core.replaceNamespacedSecret({ name: 's1', namespace: NS, body: read });
    assert.equal(Buffer.from(replaced.data?.user ?? '', 'base64').toString(), 'admin');
    const list = await core.listNamespacedSecret({ namespace: NS, fieldSelector: 'type=Opaque' });
    assert.deepEqual(
      list.items.map((s) => s.metadata?.name),
      ['s1'],
    );
    await core.deleteNamespacedSecret({ name: 's1', namespace: NS });
    await expectStatus(core.readNamespacedSecret({ name: 's1', namespace: NS }), 404);
  });

  test('namespaces: create, read, list, delete (Terminating), finalize', async () => {
    const ns = await core.createNamespace({ body: { metadata: { name: 'e2e-ns-crud', labels: { team: 'x' } } } });
    assert.equal(ns.status?.phase, 'Active');
    assert.deepEqual(ns.spec?.finalizers, ['kubernetes']);
    assert.equal(ns.metadata?.labels?.['kubernetes.io/metadata.name'], 'e2e-ns-crud');
    const read = await core.readNamespace({ name: 'e2e-ns-crud' });
    assert.equal(read.metadata?.uid, ns.metadata?.uid);
    const list = await core.listNamespace({ labelSelector: 'team=x' });
    assert.deepEqual(
      list.items.map((n) => n.metadata?.name),
      ['e2e-ns-crud'],
    );
    // Without a namespace controller the namespace waits in Terminating for its finalizer.
    const deleting = (await core.deleteNamespace({ name: 'e2e-ns-crud' })) as unknown as k8s.V1Namespace;
    assert.equal(deleting.kind, 'Namespace');
    assert.equal(deleting.status?.phase, 'Terminating');
    const terminating = await core.readNamespace({ name: 'e2e-ns-crud' });
    assert.equal(terminating.status?.phase, 'Terminating');
    assert.ok(terminating.metadata?.deletionTimestamp instanceof Date);
    assert.deepEqual(terminating.spec?.finalizers, ['kubernetes']);
    const s = await expectStatus(core.createNamespacedConfigMap({ namespace: 'e2e-ns-crud', body: { metadata: { name: 'x' } } }), 403);
    assert.equal(s.reason, 'Forbidden');
    assert.match(String(s.message), /because it is being terminated/);
    terminating.spec = { finalizers: [] };
    await core.replaceNamespaceFinalize({ name: 'e2e-ns-crud', body: terminating });
    await expectStatus(core.readNamespace({ name: 'e2e-ns-crud' }), 404);
  });

  test('leases (coordination.k8s.io/v1): create, read, replace with MicroTime, delete', async () => {
    // Lease times are MicroTime: kube-apiserver parses them with RFC3339Micro (exactly six fractional
    // digits) and rejects Date.toISOString()'s three (kubernetes-client/javascript#828), so callers
    // pass the string; client-node has no V1MicroTime (de)serializer and hands strings through.
    // The fields are typed Date: the casts carry the wire string.
    const micro = (s: string): Date => s as unknown as Date;
    const created = await coord.createNamespacedLease({
      namespace: NS,
      body: {
        metadata: { name: 'leader' },
        spec: {
          holderIdentity: 'a',
          leaseDurationSeconds: 15,
          renewTime: micro('2025-01-02T03:04:05.123456Z'),
          acquireTime: micro('2025-01-02T03:04:05.123456Z'),
        },
      },
    });
    assert.equal(created.apiVersion, 'coordination.k8s.io/v1');
    assert.equal(created.kind, 'Lease');
    assert.equal(created.spec?.holderIdentity, 'a');
    assert.equal(String(created.spec?.renewTime), '2025-01-02T03:04:05.123456Z');
    assert.equal(String(created.spec?.acquireTime), '2025-01-02T03:04:05.123456Z');
    const read = await coord.readNamespacedLease({ name: 'leader', namespace: NS });
    read.spec = { ...read.spec, holderIdentity: 'b', leaseTransitions: 1, renewTime: micro('2025-01-02T03:04:06.000001Z') };
    const replaced = await coord.replaceNamespacedLease({ name: 'leader', namespace: NS, body: read });
    assert.equal(replaced.spec?.holderIdentity, 'b');
    assert.equal(replaced.spec?.leaseTransitions, 1);
    assert.equal(String(replaced.spec?.renewTime), '2025-01-02T03:04:06.000001Z');
    // Leader election's optimistic lock: a second writer with the old version loses.
    const s = await expectStatus(coord.replaceNamespacedLease({ name: 'leader', namespace: NS, body: { ...created, spec: { holderIdentity: 'c' } } }), 409);
    assert.equal(s.reason, 'Conflict');
    assert.deepEqual(s.details, { name: 'leader', group: 'coordination.k8s.io', kind: 'leases' });
    const list = await coord.listNamespacedLease({ namespace: NS });
    assert.deepEqual(
      list.items.map((l) => l.spec?.holderIdentity),
      ['b'],
    );
    await coord.deleteNamespacedLease({ name: 'leader', namespace: NS });
    await expectStatus(coord.readNamespacedLease({ name: 'leader', namespace: NS }), 404);
  });

  test('events: core/v1 and events.k8s.io/v1 see the same objects', async () => {
    const coreEv = await core.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'ev-core' },
        involvedObject: { kind: 'ConfigMap', namespace: NS, name: 'cm1', apiVersion: 'v1' },
        reason: 'Tested',
        message: 'from core/v1',
        type: 'Normal',
        source: { component: 'e2e' },
        count: 1,
        // A Date goes out with milliseconds; metav1.Time keeps whole seconds.
        firstTimestamp: new Date('2025-03-04T05:06:07.891Z'),
      },
    });
    assert.equal(coreEv.reason, 'Tested');
    assert.equal(coreEv.firstTimestamp?.toISOString(), '2025-03-04T05:06:07.000Z');
    // eventTime is a MicroTime (see the lease test): the wire string, typed Date by client-node.
    const eventTime = '2025-03-04T05:06:07.123456Z' as unknown as Date;
    const newEv = await eventsV1.createNamespacedEvent({
      namespace: NS,
      body: {
        metadata: { name: 'ev-new' },
        eventTime,
        reportingController: 'example.com/e2e',
        reportingInstance: 'e2e-1',
        action: 'Test',
        reason: 'TestedNew',
        regarding: { kind: 'ConfigMap', namespace: NS, name: 'cm1', apiVersion: 'v1' },
        note: 'from events.k8s.io/v1',
        type: 'Warning',
      },
    });
    assert.equal(newEv.apiVersion, 'events.k8s.io/v1');
    assert.equal(newEv.note, 'from events.k8s.io/v1');
    // MicroTime comes back as kube formats it (client-node leaves it a string).
    assert.equal(String(newEv.eventTime), '2025-03-04T05:06:07.123456Z');
    // Seen through the other API version.
    const asCore = await core.readNamespacedEvent({ name: 'ev-new', namespace: NS });
    assert.equal(asCore.message, 'from events.k8s.io/v1');
    assert.equal(asCore.reason, 'TestedNew');
    assert.equal(asCore.involvedObject.name, 'cm1');
    assert.equal(asCore.reportingComponent, 'example.com/e2e');
    const asNew = await eventsV1.readNamespacedEvent({ name: 'ev-core', namespace: NS });
    assert.equal(asNew.note, 'from core/v1');
    assert.equal(asNew.regarding?.name, 'cm1');
    const list = await eventsV1.listNamespacedEvent({ namespace: NS });
    assert.deepEqual(list.items.map((e) => e.metadata?.name).sort(), ['ev-core', 'ev-new']);
    const byReason = await core.listNamespacedEvent({ namespace: NS, fieldSelector: 'reason=TestedNew' });
    assert.deepEqual(
      byReason.items.map((e) => e.metadata?.name),
      ['ev-new'],
    );
    // Update through events.k8s.io (a label; the note is immutable there, as upstream), delete through core.
    const noteChanged = { ...asNew, note: 'changed' };
    await assert.rejects(eventsV1.replaceNamespacedEvent({ name: 'ev-core', namespace: NS, body: noteChanged }), (e: unknown) => {
      const body = String((e as { body?: unknown }).body ?? e);
      assert.match(body, /message: Invalid value: \\?"changed\\?": field is immutable/);
      return true;
    });
    asNew.metadata = { ...asNew.metadata, labels: { ...(asNew.metadata?.labels ?? {}), updated: 'yes' } };
    const upd = await eventsV1.replaceNamespacedEvent({ name: 'ev-core', namespace: NS, body: asNew });
    assert.equal(upd.metadata?.labels?.['updated'], 'yes');
    assert.equal((await core.readNamespacedEvent({ name: 'ev-core', namespace: NS })).metadata?.labels?.['updated'], 'yes');
    await core.deleteNamespacedEvent({ name: 'ev-core', namespace: NS });
    await eventsV1.deleteNamespacedEvent({ name: 'ev-new', namespace: NS });
    assert.equal((await core.listNamespacedEvent({ namespace: NS })).items.length, 0);
  });
});

describe('client-node lists', () => {
  const LNS = 'e2e-lists';
  before(async () => {
    await core.createNamespace({ body: { metadata: { name: LNS } } });
    for (let i = 0; i < 25; i++) {
      const name = `item-${String(i).padStart(2, '0')}`;
      await core.createNamespacedConfigMap({
        namespace: LNS,
        body: { metadata: { name, labels: { parity: i % 2 ? 'odd' : 'even', tier: i < 5 ? 'low' : 'high' } } },
      });
    }
  });

  test('labelSelector (equality, set-based, negation) and fieldSelector', async () => {
    const odd = await core.listNamespacedConfigMap({ namespace: LNS, labelSelector: 'parity=odd' });
    assert.equal(odd.items.length, 12);
    assert.ok(odd.items.every((c) => c.metadata?.labels?.parity === 'odd'));
    const lowEven = await core.listNamespacedConfigMap({ namespace: LNS, labelSelector: 'tier in (low),parity!=odd' });
    assert.deepEqual(
      lowEven.items.map((c) => c.metadata?.name),
      ['item-00', 'item-02', 'item-04'],
    );
    const byName = await core.listNamespacedConfigMap({ namespace: LNS, fieldSelector: 'metadata.name=item-07' });
    assert.deepEqual(
      byName.items.map((c) => c.metadata?.name),
      ['item-07'],
    );
    const notName = await core.listNamespacedConfigMap({ namespace: LNS, fieldSelector: 'metadata.name!=item-07', labelSelector: 'tier=low' });
    assert.deepEqual(
      notName.items.map((c) => c.metadata?.name),
      ['item-00', 'item-01', 'item-02', 'item-03', 'item-04'],
    );
    const all = await core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.namespace=${LNS}` });
    assert.equal(all.items.length, 25);
    const bad = await expectStatus(core.listNamespacedConfigMap({ namespace: LNS, fieldSelector: 'data.k=v' }), 400);
    assert.equal(bad.reason, 'BadRequest');
    // ConfigMaps have no field-label conversion of their own: runtime.DefaultMetaV1FieldSelectorConversion's words.
    assert.equal(bad.message, '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });

  test('limit + continue pages through 25 items in 3 pages', async () => {
    const seen: string[] = [];
    const pages: { n: number; cont: string | undefined; remaining: number | undefined; rv: string | undefined }[] = [];
    let cont: string | undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: LNS, limit: 10, ...(cont ? { _continue: cont } : {}) });
      seen.push(...page.items.map((c) => c.metadata?.name ?? ''));
      cont = page.metadata?._continue || undefined;
      pages.push({ n: page.items.length, cont, remaining: page.metadata?.remainingItemCount, rv: page.metadata?.resourceVersion });
    } while (cont && pages.length < 10);
    assert.deepEqual(
      pages.map((p) => p.n),
      [10, 10, 5],
    );
    assert.deepEqual(
      pages.map((p) => p.remaining),
      [15, 5, undefined],
    );
    assert.equal(pages[2]!.cont, undefined);
    assert.equal(new Set(seen).size, 25);
    assert.deepEqual(seen, [...seen].sort());
    // Every page is served from the first page's snapshot.
    assert.equal(new Set(pages.map((p) => p.rv)).size, 1);
  });

  test('continue tokens are consistent snapshots; a compacted one is 410 Expired', async () => {
    const first = await core.listNamespacedConfigMap({ namespace: LNS, limit: 10 });
    const cont = first.metadata?._continue;
    assert.ok(cont);
    await core.deleteNamespacedConfigMap({ name: 'item-20', namespace: LNS });
    const second = await core.listNamespacedConfigMap({ namespace: LNS, limit: 10, _continue: cont });
    const third = await core.listNamespacedConfigMap({ namespace: LNS, limit: 10, _continue: second.metadata?._continue });
    assert.ok(
      third.items.some((c) => c.metadata?.name === 'item-20'),
      "a continued list reads at the first page's revision",
    );
    await core.createNamespacedConfigMap({ namespace: LNS, body: { metadata: { name: 'item-20' } } });
    const rev = await server.cp.storage.currentRevision();
    await server.cp.storage.compact(rev);
    const s = await expectStatus(core.listNamespacedConfigMap({ namespace: LNS, limit: 10, _continue: cont }), 410);
    assert.equal(s.reason, 'Expired');
    assert.match(
      String(s.message),
      /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results\. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list\.$/,
    );
  });
});

interface SeenEvent {
  type: string;
  name: string;
  rv: number;
  data: Record<string, string> | undefined;
}

describe('client-node Watch and informer', () => {
  const WNS = 'e2e-watch';
  before(async () => {
    await core.createNamespace({ body: { metadata: { name: WNS } } });
  });

  test('Watch sees ADDED, MODIFIED, DELETED in order with increasing resourceVersions', async () => {
    const start = await core.listNamespacedConfigMap({ namespace: WNS });
    const events: SeenEvent[] = [];
    let doneErr: unknown = 'not done';
    const watch = new k8s.Watch(kc);
    const ctrl = await watch.watch(
      `/api/v1/namespaces/${WNS}/configmaps`,
      { resourceVersion: start.metadata?.resourceVersion, allowWatchBookmarks: false },
      (type: string, obj: k8s.V1ConfigMap) => {
        events.push({ type, name: obj.metadata?.name ?? '', rv: Number(obj.metadata?.resourceVersion), data: obj.data });
      },
      (err: unknown) => (doneErr = err),
    );
    await core.createNamespacedConfigMap({ namespace: WNS, body: { metadata: { name: 'w1' }, data: { n: '1' } } });
    await core.patchNamespacedConfigMap(
      { name: 'w1', namespace: WNS, body: { data: { n: '2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ name: 'w1', namespace: WNS });
    await eventually('three watch events', () => events.length >= 3);
    ctrl.abort();
    assert.deepEqual(
      events.map((e) => [e.type, e.name]),
      [
        ['ADDED', 'w1'],
        ['MODIFIED', 'w1'],
        ['DELETED', 'w1'],
      ],
    );
    assert.deepEqual(
      events.map((e) => e.data?.n),
      ['1', '2', '2'],
    );
    assert.ok(events[0]!.rv > Number(start.metadata?.resourceVersion));
    assert.ok(events[0]!.rv < events[1]!.rv && events[1]!.rv < events[2]!.rv, JSON.stringify(events));
    assert.equal(doneErr === 'not done' || doneErr === null || (doneErr instanceof Error && doneErr.name === 'AbortError'), true, String(doneErr));
  });

  test('a watch from a compacted resourceVersion gets an ERROR event: 410 Expired', async () => {
    const cm = await core.createNamespacedConfigMap({ namespace: WNS, body: { metadata: { name: 'old' } } });
    const oldRv = cm.metadata!.resourceVersion!;
    await core.replaceNamespacedConfigMap({ name: 'old', namespace: WNS, body: { ...cm, data: { x: 'y' } } });
    const rev = await server.cp.storage.currentRevision();
    await server.cp.storage.compact(rev);
    const events: { type: string; obj: Record<string, unknown> }[] = [];
    const done = new Promise<unknown>((resolve) => {
      void new k8s.Watch(kc).watch(
        `/api/v1/namespaces/${WNS}/configmaps`,
        { resourceVersion: oldRv },
        (type: string, obj: Record<string, unknown>) => events.push({ type, obj }),
        resolve,
      );
    });
    const err = await done;
    assert.equal(err, null, 'the server ends the watch after the ERROR event');
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0]!.type, 'ERROR');
    const st = events[0]!.obj;
    assert.equal(st.kind, 'Status');
    assert.equal(st.apiVersion, 'v1');
    assert.equal(st.status, 'Failure');
    assert.equal(st.code, 410);
    assert.equal(st.reason, 'Expired');
    assert.match(String(st.message), /^too old resource version: \d+ \(\d+\)$/);
    await core.deleteNamespacedConfigMap({ name: 'old', namespace: WNS });
  });

  test('an informer sees adds, updates and deletes, and re-lists after a 410', async () => {
    const INS = 'e2e-informer';
    await core.createNamespace({ body: { metadata: { name: INS } } });
    for (const n of ['a', 'b', 'c']) await core.createNamespacedConfigMap({ namespace: INS, body: { metadata: { name: n }, data: { v: '0' } } });
    let listFnCalls = 0;
    const informer = k8s.makeInformer<k8s.V1ConfigMap>(kc, `/api/v1/namespaces/${INS}/configmaps`, () => {
      listFnCalls++;
      return core.listNamespacedConfigMap({ namespace: INS });
    });
    const log: string[] = [];
    const errors: unknown[] = [];
    let connects = 0;
    informer.on('add', (o) => log.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => log.push(`update ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o) => log.push(`delete ${o.metadata?.name}`));
    // stop() aborts the watch request, which client-node reports as an AbortError 'error' event.
    informer.on('error', (e) => {
      if (!(e instanceof Error && e.name === 'AbortError')) errors.push(e);
    });
    informer.on('connect', () => connects++);
    // makeInformer returns a ListWatch; its Informer type hides latestResourceVersion().
    const rvOf = (): string => (informer as unknown as k8s.ListWatch<k8s.V1ConfigMap>).latestResourceVersion();
    const cacheState = (): string =>
      informer
        .list(INS)
        .map((o) => `${o.metadata?.name}=${o.data?.v}@${o.metadata?.resourceVersion}`)
        .sort()
        .join(',');
    const trueState = async (): Promise<string> =>
      (await core.listNamespacedConfigMap({ namespace: INS })).items
        .map((o) => `${o.metadata?.name}=${o.data?.v}@${o.metadata?.resourceVersion}`)
        .sort()
        .join(',');
    try {
      await informer.start();
      assert.deepEqual(log.splice(0).sort(), ['add a', 'add b', 'add c']);
      assert.equal(connects, 1);

      // Live changes arrive through the watch.
      await core.createNamespacedConfigMap({ namespace: INS, body: { metadata: { name: 'd' }, data: { v: '0' } } });
      const b = await core.readNamespacedConfigMap({ name: 'b', namespace: INS });
      await core.replaceNamespacedConfigMap({ name: 'b', namespace: INS, body: { ...b, data: { v: '1' } } });
      await core.deleteNamespacedConfigMap({ name: 'c', namespace: INS });
      await eventually('live events', () => log.length >= 3);
      assert.deepEqual(log.splice(0), ['add d', 'update b 1', 'delete c']);
      await eventually('cache matches', async () => cacheState() === (await trueState()));

      // Stop, change the world, compact past the informer's resourceVersion, start again.
      await informer.stop();
      const staleRv = rvOf();
      assert.match(staleRv, /^\d+$/);
      await core.deleteNamespacedConfigMap({ name: 'a', namespace: INS });
      const d = await core.readNamespacedConfigMap({ name: 'd', namespace: INS });
      await core.replaceNamespacedConfigMap({ name: 'd', namespace: INS, body: { ...d, data: { v: '2' } } });
      await core.createNamespacedConfigMap({ namespace: INS, body: { metadata: { name: 'e' }, data: { v: '0' } } });
      const rev = await server.cp.storage.currentRevision();
      assert.ok(rev > Number(staleRv));
      await server.cp.storage.compact(rev);
      const expected = await trueState();
      const listsBefore = await requestCount('LIST', 'configmaps');
      const watchesBefore = await requestCount('WATCH', 'configmaps');
      const listFnCallsBefore = listFnCalls;

      await informer.start();
      // The watch from staleRv got 410, the informer cleared its resourceVersion and re-listed.
      await eventually('relist converges', () => cacheState() === expected);
      assert.deepEqual(log.splice(0).sort(), ['add e', 'delete a', 'update d 2']);
      assert.deepEqual(errors, []);
      assert.equal(connects, 3, 'start, then the reconnect after the 410');
      assert.equal(listFnCalls - listFnCallsBefore, 1);
      // The server saw exactly that one LIST, and the watch that ended with the 410.
      assert.equal((await requestCount('LIST', 'configmaps')) - listsBefore, 1);
      assert.ok((await requestCount('WATCH', 'configmaps')) - watchesBefore >= 1);
      assert.ok(Number(rvOf()) >= rev);

      // And the re-established watch keeps working.
      await core.createNamespacedConfigMap({ namespace: INS, body: { metadata: { name: 'f' }, data: { v: '0' } } });
      await eventually('post-relist add', () => log.includes('add f'));
      await eventually('cache matches after relist', async () => cacheState() === (await trueState()));
    } finally {
      await informer.stop();
    }
  });
});
