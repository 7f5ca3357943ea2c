// Namespaces and NamespaceLifecycle through the real HTTP API, as upstream's generic control plane
// answers: which system namespaces exist and which may not be deleted
// (pkg/controlplane/apiserver/options, plugin/namespace/lifecycle), the errors for content created
// in a missing or terminating namespace (admission.NewForbidden's name: generateName before a name
// is generated; the plugin runs before validation), and DELETE of a namespace
// (pkg/registry/core/namespace/storage: Terminating first, removed by a later DELETE once
// spec.finalizers are empty, a terminating namespace answered unchanged, preconditions).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { namespaceDeletion } from '../../src/controllers/index.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const APPLY_CT = { 'content-type': 'application/apply-patch+yaml', accept: 'application/json' };

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata?: { name?: string; resourceVersion?: string; uid?: string; deletionTimestamp?: string; deletionGracePeriodSeconds?: number; finalizers?: string[] };
  spec?: { finalizers?: string[] };
  status?: { phase?: string } | string;
  items?: Obj[];
  [k: string]: unknown;
}

let server: TestServer;
let client: RawClient;

before(async () => {
  // The namespace controller runs (it empties and finalizes terminating namespaces); no garbage
  // collector, so an orphan finalizer stays until a DELETE drops it. The API server still adds the
  // GC finalizers on DELETE.
  server = await startTestServer({ storage: 'memory', garbageCollection: true, controllers: [namespaceDeletion({ finalizerEstimateSeconds: 2 })] });
  client = new RawClient(server.url, adminCredentials(server.dataDir));
});
after(async () => {
  client?.close();
  await server?.stop();
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = JSON_CT): Promise<RawResponse> {
  return client.request({ method, path, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
}
function expect(res: RawResponse, code: number): Obj {
  assert.equal(res.status, code, res.text().slice(0, 600));
  return res.json<Obj>();
}
const nsObj = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const cm = (meta: Record<string, unknown>): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta });
const deleteOptions = (o: Record<string, unknown>): Obj => ({ apiVersion: 'v1', kind: 'DeleteOptions', ...o });
const phase = (o: Obj): string | undefined => (typeof o.status === 'object' ? o.status.phase : undefined);

/** A namespace held Terminating by a configmap with a finalizer of its own. */
async function terminating(name: string): Promise<void> {
  expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
  expect(await call('POST', `/api/v1/namespaces/${name}/configmaps`, cm({ name: 'held', finalizers: ['example.com/hold'] })), 201);
  const out = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
  assert.equal(phase(out), 'Terminating');
}

/** A namespace whose spec.finalizers were emptied through /finalize before any DELETE. */
async function unfinalized(name: string): Promise<Obj> {
  const created = expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
  return expect(await call('PUT', `/api/v1/namespaces/${name}/finalize`, { ...created, spec: { finalizers: [] } }), 200);
}

describe('system namespaces', () => {
  it('are kube-system, kube-public and default, created in that order; no kube-node-lease', async () => {
    const list = expect(await call('GET', '/api/v1/namespaces'), 200);
    const system = (list.items ?? []).filter((i) => ['default', 'kube-system', 'kube-public', 'kube-node-lease'].includes(i.metadata?.name ?? ''));
    const byRevision = [...system].sort((a, b) => Number(a.metadata?.resourceVersion) - Number(b.metadata?.resourceVersion)).map((i) => i.metadata?.name);
    assert.deepEqual(byRevision, ['kube-system', 'kube-public', 'default']);
    for (const i of system) assert.equal(phase(i), 'Active');
  });

  it('default, kube-system and kube-public may not be deleted (403, even with dryRun)', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      for (const q of ['', '?dryRun=All']) {
        const res = await call('DELETE', `/api/v1/namespaces/${name}${q}`);
        assert.deepEqual(expect(res, 403), {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
          reason: 'Forbidden',
          details: { name, kind: 'namespaces' },
          code: 403,
        });
      }
      assert.equal(phase(expect(await call('GET', `/api/v1/namespaces/${name}`), 200)), 'Active');
    }
  });

  it('kube-node-lease is an ordinary namespace: it may be created and deleted', async () => {
    expect(await call('POST', '/api/v1/namespaces', nsObj('kube-node-lease')), 201);
    assert.equal(phase(expect(await call('DELETE', '/api/v1/namespaces/kube-node-lease'), 200)), 'Terminating');
  });
});

describe('NamespaceLifecycle: content in a missing namespace', () => {
  const notFound = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'namespaces "nowhere" not found',
    reason: 'NotFound',
    details: { name: 'nowhere', kind: 'namespaces' },
    code: 404,
  };

  it('a create is 404 for the namespace, whatever the object: named, generateName, invalid, unnamed', async () => {
    for (const meta of [{ name: 'a' }, { generateName: 'gen-' }, { name: 'Not_A_Name' }, {}]) {
      assert.deepEqual(expect(await call('POST', '/api/v1/namespaces/nowhere/configmaps', cm(meta)), 404), notFound, JSON.stringify(meta));
    }
    // Cluster-scoped kinds have no namespace to miss.
    expect(await call('POST', '/api/v1/namespaces', nsObj('lifecycle-cluster-scoped')), 201);
  });

  it('a create through PUT (core/v1 events create on update) or server-side apply is 404 for the namespace too', async () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'ConfigMap', name: 'a', namespace: 'nowhere' } };
    assert.deepEqual(expect(await call('PUT', '/api/v1/namespaces/nowhere/events/e1', event), 404), notFound);
    const apply = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';
    assert.deepEqual(expect(await call('PATCH', '/api/v1/namespaces/nowhere/configmaps/a?fieldManager=t', apply, APPLY_CT), 404), notFound);
  });

  it('a PUT or patch of a missing object that may not be created on update is its own 404, read before admission', async () => {
    const own = (name: string): Obj => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `configmaps "${name}" not found`, reason: 'NotFound', details: { name, kind: 'configmaps' }, code: 404 });
    assert.deepEqual(expect(await call('PUT', '/api/v1/namespaces/nowhere/configmaps/y', cm({ name: 'y', namespace: 'nowhere' })), 404), own('y'));
    assert.deepEqual(expect(await call('PATCH', '/api/v1/namespaces/nowhere/configmaps/y', '{"data":{"a":"b"}}', { 'content-type': 'application/merge-patch+json', accept: 'application/json' }), 404), own('y'));
  });

  it('a namespace is usable right after its create answers', async () => {
    for (let i = 0; i < 5; i++) {
      const name = `lifecycle-fresh-${i}`;
      expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
      expect(await call('POST', `/api/v1/namespaces/${name}/configmaps`, cm({ name: 'a' })), 201);
    }
  });
});

describe('NamespaceLifecycle: content in a terminating namespace', () => {
  const NS = 'lifecycle-terminating';
  before(() => terminating(NS));

  const forbidden = (resource: string, name: string, group = '') => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${group ? `${resource}.${group}` : resource} "${name}" is forbidden: unable to create new content in namespace ${NS} because it is being terminated`,
    reason: 'Forbidden',
    details: { name, ...(group ? { group } : {}), kind: resource, causes: [{ reason: 'NamespaceTerminating', message: `namespace ${NS} is being terminated`, field: 'metadata.namespace' }] },
    code: 403,
  });

  it('a create is 403; the name is the object name, else its generateName (not a generated name), else "Unknown"', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'a' }, 'a'],
      [{ generateName: 'gen-' }, 'gen-'],
      [{ name: 'both', generateName: 'gen-' }, 'both'],
      [{ name: 'Not_A_Name' }, 'Not_A_Name'],
      [{}, 'Unknown'],
    ];
    for (const [meta, name] of cases) {
      assert.deepEqual(expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps`, cm(meta)), 403), forbidden('configmaps', name), JSON.stringify(meta));
      assert.deepEqual(expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps?dryRun=All`, cm(meta)), 403), forbidden('configmaps', name));
    }
  });

  it('the resource in the message is the group-qualified one (leases, events.k8s.io events)', async () => {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { generateName: 'l-' } };
    assert.deepEqual(expect(await call('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, lease), 403), forbidden('leases', 'l-', 'coordination.k8s.io'));
    const ev = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e' }, eventTime: '2024-01-01T00:00:00.000000Z', reportingController: 'x/y', reportingInstance: 'i', action: 'A', reason: 'R', type: 'Normal' };
    assert.deepEqual(expect(await call('POST', `/apis/events.k8s.io/v1/namespaces/${NS}/events`, ev), 403), forbidden('events', 'e', 'events.k8s.io'));
  });

  it('creates through PUT and apply are refused alike, with the name of the URL', async () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'ConfigMap', name: 'a', namespace: NS } };
    assert.deepEqual(expect(await call('PUT', `/api/v1/namespaces/${NS}/events/e1`, event), 403), forbidden('events', 'e1'));
    const apply = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n';
    assert.deepEqual(expect(await call('PATCH', `/api/v1/namespaces/${NS}/configmaps/applied?fieldManager=t`, apply, APPLY_CT), 403), forbidden('configmaps', 'applied'));
  });

  it("a PUT of a missing configmap is its own 404, not the namespace's 403", async () => {
    const res = expect(await call('PUT', `/api/v1/namespaces/${NS}/configmaps/absent`, cm({ name: 'absent', namespace: NS })), 404);
    assert.equal(res.message, 'configmaps "absent" not found');
  });

  it('updates and deletes of existing content are allowed', async () => {
    const held = expect(await call('GET', `/api/v1/namespaces/${NS}/configmaps/held`), 200);
    const updated = expect(await call('PUT', `/api/v1/namespaces/${NS}/configmaps/held`, { ...held, data: { x: '1' } }), 200);
    assert.deepEqual(updated.data, { x: '1' });
    const deleted = expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/held`), 200);
    assert.ok(deleted.metadata?.deletionTimestamp);
  });
});

describe('DELETE of a namespace (the namespace REST)', () => {
  it('the first DELETE of a namespace without finalizers only marks it Terminating; dryRun writes nothing; the next DELETE removes it', async () => {
    const name = 'del-unfinalized';
    const before = await unfinalized(name);
    const dry = expect(await call('DELETE', `/api/v1/namespaces/${name}?dryRun=All`), 200);
    assert.equal(phase(dry), 'Terminating');
    assert.ok(dry.metadata?.deletionTimestamp);
    assert.equal(expect(await call('GET', `/api/v1/namespaces/${name}`), 200).metadata?.resourceVersion, before.metadata?.resourceVersion);

    const first = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
    assert.equal(first.kind, 'Namespace');
    assert.equal(phase(first), 'Terminating');
    assert.ok(first.metadata?.deletionTimestamp);
    assert.equal(first.metadata?.deletionGracePeriodSeconds, undefined);
    assert.deepEqual(first.spec, { finalizers: [] });
    // Nothing finalizes it (the namespace controller has nothing to remove): it stays Terminating.
    await new Promise((r) => setTimeout(r, 500));
    const still = expect(await call('GET', `/api/v1/namespaces/${name}`), 200);
    assert.equal(phase(still), 'Terminating');
    assert.equal(still.metadata?.resourceVersion, first.metadata?.resourceVersion);

    expect(await call('DELETE', `/api/v1/namespaces/${name}?dryRun=All`), 200);
    expect(await call('GET', `/api/v1/namespaces/${name}`), 200);
    const second = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
    assert.equal(second.kind, 'Namespace');
    assert.equal(second.metadata?.uid, first.metadata?.uid);
    expect(await call('GET', `/api/v1/namespaces/${name}`), 404);
  });

  it('a DELETE of a namespace terminating with spec.finalizers answers it unchanged: 200, or 202 with orphanDependents=false', async () => {
    // A spec finalizer of its own: the namespace controller (which works for `kubernetes`) leaves it be.
    const name = 'del-terminating';
    const created = expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
    expect(await call('PUT', `/api/v1/namespaces/${name}/finalize`, { ...created, spec: { finalizers: ['example.com/mine'] } }), 200);
    assert.equal(phase(expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200)), 'Terminating');
    const current = expect(await call('GET', `/api/v1/namespaces/${name}`), 200);
    assert.deepEqual(current.spec, { finalizers: ['example.com/mine'] });
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200), current);
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ orphanDependents: false })), 202), current);
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ propagationPolicy: 'Background' })), 200), current);
    // Nor do the options change its finalizers while spec.finalizers are left.
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ propagationPolicy: 'Orphan' })), 200), current);
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}?propagationPolicy=Foreground`), 200), current); // 202 only for orphanDependents=false
  });

  it('orphanDependents=false on the first DELETE asks for foreground deletion (shouldHaveDeleteDependentsFinalizer)', async () => {
    const name = 'del-not-orphan';
    await unfinalized(name);
    const first = expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ orphanDependents: false })), 202);
    assert.equal(phase(first), 'Terminating');
    assert.deepEqual(first.metadata?.finalizers, ['foregroundDeletion']);
  });

  it('propagationPolicy=Orphan on the first DELETE adds the orphan finalizer, which holds the namespace until a DELETE drops it', async () => {
    const name = 'del-orphan';
    await unfinalized(name);
    const first = expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ propagationPolicy: 'Orphan' })), 200);
    assert.equal(phase(first), 'Terminating');
    assert.deepEqual(first.metadata?.finalizers, ['orphan']);
    // Terminating, spec.finalizers empty: an ordinary delete. Without options the finalizer stays.
    const held = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
    assert.deepEqual(held.metadata?.finalizers, ['orphan']);
    expect(await call('GET', `/api/v1/namespaces/${name}`), 200);
    // Background drops the orphan finalizer; nothing holds the namespace any more.
    const gone = expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ propagationPolicy: 'Background' })), 200);
    assert.equal(gone.metadata?.name, name);
    expect(await call('GET', `/api/v1/namespaces/${name}`), 404);
  });

  it('preconditions that do not match are 409 in the namespace REST words', async () => {
    const name = 'del-preconditions';
    const ns = expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
    const uid = ns.metadata?.uid ?? '';
    const rv = ns.metadata?.resourceVersion ?? '';
    const conflict = (why: string) => ({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Operation cannot be fulfilled on namespaces "${name}": ${why}`,
      reason: 'Conflict',
      details: { name, kind: 'namespaces' },
      code: 409,
    });
    assert.deepEqual(
      expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ preconditions: { uid: 'not-the-uid' } })), 409),
      conflict(`Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`),
    );
    assert.deepEqual(
      expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ preconditions: { resourceVersion: '1' } })), 409),
      conflict(`Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${rv}`),
    );
    const ok = expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ preconditions: { uid, resourceVersion: rv } })), 200);
    assert.equal(phase(ok), 'Terminating');
  });
});
