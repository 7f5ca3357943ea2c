// Namespaces and NamespaceLifecycle through the real HTTP API, as upstream's generic control plane
// answers: which system namespaces exist and which may not be deleted
// (pkg/controlplane/apiserver/options, plugin/namespace/lifecycle), the errors for content created
// in a missing or terminating namespace (admission.NewForbidden's name: generateName before a name
// is generated; the plugin runs before validation), and DELETE of a namespace
// (pkg/registry/core/namespace/storage: Terminating first, removed by a later DELETE once
// spec.finalizers are empty, a terminating namespace answered unchanged, preconditions), what
// /status and /finalize write (namespaceStatusStrategy, namespaceFinalizeStrategy), where a DELETE
// is admitted (rest.AdmissionToValidateObjectDeleteFunc, called by the REST once the object is
// read) and the system namespaces controller.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forbidden } from '../../src/apimachinery/errors.js';
import { namespaceDeletion } from '../../src/controllers/index.js';
import { apiextensions, coordination, core, events } from '../../src/controlplane/modules.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../src/registry/registry.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const APPLY_CT = { 'content-type': 'application/apply-patch+yaml', accept: 'application/json' };

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata?: {
    name?: string;
    resourceVersion?: string;
    uid?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { finalizers?: string[] };
  status?: { phase?: string } | string;
  items?: Obj[];
  [k: string]: unknown;
}

let server: TestServer;
let client: RawClient;

/** The DELETEs admission saw, in order, for objects labelled probe=delete (both phases). */
const admitted: (AdmissionAttributes & { phase: 'admit' | 'validate' })[] = [];
/** An admission plugin that records DELETEs of probed objects and refuses those labelled deny-delete=yes. */
const probe: AdmissionPlugin = {
  name: 'DeleteProbe',
  admit(a) {
    if (a.operation === 'DELETE' && a.oldObject?.metadata?.labels?.['probe'] === 'delete') admitted.push({ ...a, phase: 'admit' });
  },
  validate(a) {
    if (a.operation !== 'DELETE' || a.oldObject?.metadata?.labels?.['probe'] !== 'delete') return;
    admitted.push({ ...a, phase: 'validate' });
    if (a.oldObject.metadata.labels['deny-delete'] === 'yes') throw forbidden(a.resource, a.name, 'denied by the probe');
  },
};

before(async () => {
  // The namespace controller runs (it empties and finalizes terminating namespaces); no garbage
  // collector, so an orphan finalizer stays until a DELETE drops it. The API server still adds the
  // GC finalizers on DELETE. The system namespaces controller's next round is an hour away, so a
  // system namespace removed from storage here stays missing.
  server = await startTestServer({
    storage: 'memory',
    garbageCollection: true,
    controllers: [namespaceDeletion({ finalizerEstimateSeconds: 2 })],
    apis: [core({ systemNamespacesIntervalMs: 3_600_000 }), events(), coordination(), apiextensions()],
    admission: [probe],
  });
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
    const own = (name: string): Obj => ({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `configmaps "${name}" not found`,
      reason: 'NotFound',
      details: { name, kind: 'configmaps' },
      code: 404,
    });
    assert.deepEqual(expect(await call('PUT', '/api/v1/namespaces/nowhere/configmaps/y', cm({ name: 'y', namespace: 'nowhere' })), 404), own('y'));
    assert.deepEqual(
      expect(
        await call('PATCH', '/api/v1/namespaces/nowhere/configmaps/y', '{"data":{"a":"b"}}', {
          'content-type': 'application/merge-patch+json',
          accept: 'application/json',
        }),
        404,
      ),
      own('y'),
    );
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
    details: {
      name,
      ...(group ? { group } : {}),
      kind: resource,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${NS} is being terminated`, field: 'metadata.namespace' }],
    },
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
    assert.deepEqual(
      expect(await call('POST', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`, lease), 403),
      forbidden('leases', 'l-', 'coordination.k8s.io'),
    );
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'x/y',
      reportingInstance: 'i',
      action: 'A',
      reason: 'R',
      type: 'Normal',
    };
    assert.deepEqual(expect(await call('POST', `/apis/events.k8s.io/v1/namespaces/${NS}/events`, ev), 403), forbidden('events', 'e', 'events.k8s.io'));
  });

  it('creates through PUT and apply are refused alike, with the name of the URL', async () => {
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'ConfigMap', name: 'a', namespace: NS } };
    assert.deepEqual(expect(await call('PUT', `/api/v1/namespaces/${NS}/events/e1`, event), 403), forbidden('events', 'e1'));
    const apply = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n';
    assert.deepEqual(
      expect(await call('PATCH', `/api/v1/namespaces/${NS}/configmaps/applied?fieldManager=t`, apply, APPLY_CT), 403),
      forbidden('configmaps', 'applied'),
    );
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

  it('a repeated DELETE of a terminating namespace held only by metadata.finalizers marks it as the generic store does: deletionGracePeriodSeconds 0, once', async () => {
    const name = 'del-held-by-metadata';
    await unfinalized(name);
    const first = expect(await call('DELETE', `/api/v1/namespaces/${name}`, deleteOptions({ propagationPolicy: 'Orphan' })), 200);
    assert.equal(first.metadata?.deletionGracePeriodSeconds, undefined);
    const held = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
    assert.equal(held.kind, 'Namespace');
    assert.deepEqual(held.metadata?.finalizers, ['orphan']);
    assert.equal(held.metadata?.deletionGracePeriodSeconds, 0);
    assert.equal(held.metadata?.deletionTimestamp, first.metadata?.deletionTimestamp);
    assert.notEqual(held.metadata?.resourceVersion, first.metadata?.resourceVersion);
    assert.deepEqual(expect(await call('GET', `/api/v1/namespaces/${name}`), 200), held);
    // Nothing left to change: no write.
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200), held);
  });

  it('an immortal namespace: preconditions are checked before admission (409), and one that does not exist is 404', async () => {
    const ns = expect(await call('GET', '/api/v1/namespaces/kube-public'), 200);
    assert.deepEqual(expect(await call('DELETE', '/api/v1/namespaces/kube-public', deleteOptions({ preconditions: { uid: 'not-the-uid' } })), 409), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Operation cannot be fulfilled on namespaces "kube-public": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${ns.metadata?.uid ?? ''}`,
      reason: 'Conflict',
      details: { name: 'kube-public', kind: 'namespaces' },
      code: 409,
    });
    expect(await call('DELETE', '/api/v1/namespaces/kube-public', deleteOptions({ preconditions: { uid: ns.metadata?.uid } })), 403);
    // The REST reads the namespace before admission runs: a missing immortal namespace is not found.
    await server.cp.storage.delete('/registry/namespaces/kube-public');
    assert.equal(expect(await call('DELETE', '/api/v1/namespaces/kube-public'), 404).message, 'namespaces "kube-public" not found');
    expect(await call('POST', '/api/v1/namespaces', nsObj('kube-public')), 201);
  });
});

describe('namespace /status and /finalize write the metadata too (namespaceStatusStrategy, namespaceFinalizeStrategy)', () => {
  const MERGE = { 'content-type': 'application/merge-patch+json', accept: 'application/json' };

  it('/status applies labels, annotations and finalizers with the status, and keeps the stored spec', async () => {
    const name = 'status-meta';
    const created = expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
    const written = {
      ...created,
      metadata: { ...created.metadata, labels: { ...created.metadata?.labels, team: 'a' }, annotations: { note: 'x' }, finalizers: ['example.com/f'] },
      spec: { finalizers: [] },
      status: { phase: 'Active', conditions: [{ type: 'Probe', status: 'True' }] },
    };
    const out = expect(await call('PUT', `/api/v1/namespaces/${name}/status`, written), 200);
    assert.deepEqual(out.metadata?.labels, { 'kubernetes.io/metadata.name': name, team: 'a' });
    assert.deepEqual(out.metadata?.annotations, { note: 'x' });
    assert.deepEqual(out.metadata?.finalizers, ['example.com/f']);
    assert.deepEqual(out.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(out.status, { phase: 'Active', conditions: [{ type: 'Probe', status: 'True' }] });
    const patched = expect(await call('PATCH', `/api/v1/namespaces/${name}/status`, { metadata: { labels: { team: 'b' }, annotations: null } }, MERGE), 200);
    assert.deepEqual(patched.metadata?.labels, { 'kubernetes.io/metadata.name': name, team: 'b' });
    assert.equal(patched.metadata?.annotations, undefined);
    assert.deepEqual(expect(await call('GET', `/api/v1/namespaces/${name}`), 200), patched);
    // The metadata is validated as on the namespace.
    const bad = expect(await call('PATCH', `/api/v1/namespaces/${name}/status`, { metadata: { labels: { 'not a key': 'x' } } }, MERGE), 422);
    assert.equal((bad.details as { causes?: { field?: string }[] }).causes?.[0]?.field, 'metadata.labels');
  });

  it('/finalize applies labels and annotations with spec.finalizers, and keeps the stored status', async () => {
    const name = 'finalize-meta';
    const created = expect(await call('POST', '/api/v1/namespaces', nsObj(name)), 201);
    const written = {
      ...created,
      metadata: { ...created.metadata, labels: { team: 'a' }, annotations: { note: 'y' } },
      spec: { finalizers: ['example.com/mine'] },
      status: { phase: 'Terminating' },
    };
    const out = expect(await call('PUT', `/api/v1/namespaces/${name}/finalize`, written), 200);
    // The name label is the defaulting's, whatever the write.
    assert.deepEqual(out.metadata?.labels, { team: 'a', 'kubernetes.io/metadata.name': name });
    assert.deepEqual(out.metadata?.annotations, { note: 'y' });
    assert.deepEqual(out.spec, { finalizers: ['example.com/mine'] });
    assert.equal(phase(out), 'Active');
  });
});

describe('DELETE and DELETECOLLECTION admission (rest.AdmissionToValidateObjectDeleteFunc)', () => {
  const NS = 'delete-admission';
  const probed = (name: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}): Obj =>
    cm({ name, labels: { probe: 'delete', ...labels }, ...extra });
  before(async () => {
    expect(await call('POST', '/api/v1/namespaces', nsObj(NS)), 201);
  });

  it('runs once the object is read and the preconditions hold: mutating then validating, no object, the stored one as the old object', async () => {
    const created = expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps`, probed('plain')), 201);
    admitted.length = 0;
    expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/absent`), 404);
    const conflict = expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/plain`, deleteOptions({ preconditions: { uid: 'not-the-uid' } })), 409);
    assert.match(String(conflict.message), /^Operation cannot be fulfilled on ConfigMap "plain": the UID in the precondition \(not-the-uid\) does not match/);
    assert.equal(admitted.length, 0, 'no admission before the object is found and its preconditions hold');
    expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/plain?dryRun=All`), 200);
    expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/plain`), 200);
    assert.deepEqual(
      admitted.map((a) => [a.phase, a.operation, a.namespace, a.name, a.object, a.oldObject?.metadata?.uid, a.oldObject?.metadata?.resourceVersion, a.dryRun]),
      [
        ['admit', 'DELETE', NS, 'plain', undefined, created.metadata?.uid, created.metadata?.resourceVersion, true],
        ['validate', 'DELETE', NS, 'plain', undefined, created.metadata?.uid, created.metadata?.resourceVersion, true],
        ['admit', 'DELETE', NS, 'plain', undefined, created.metadata?.uid, created.metadata?.resourceVersion, false],
        ['validate', 'DELETE', NS, 'plain', undefined, created.metadata?.uid, created.metadata?.resourceVersion, false],
      ],
    );
  });

  it('a refused DELETE whose preconditions fail is their 409, not the 403', async () => {
    const created = expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps`, probed('guarded', {}, { 'deny-delete': 'yes' })), 201);
    expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/guarded`, deleteOptions({ preconditions: { resourceVersion: '1' } })), 409);
    const denied = expect(
      await call('DELETE', `/api/v1/namespaces/${NS}/configmaps/guarded`, deleteOptions({ preconditions: { uid: created.metadata?.uid } })),
      403,
    );
    assert.equal(denied.message, 'configmaps "guarded" is forbidden: denied by the probe');
    expect(await call('GET', `/api/v1/namespaces/${NS}/configmaps/guarded`), 200);
  });

  it('DELETECOLLECTION admits each item as it deletes it (the request namespace, no name) and answers the items as they were listed', async () => {
    for (const name of ['dc-1', 'dc-2']) expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps`, probed(name, {}, { set: 'dc' })), 201);
    expect(await call('POST', `/api/v1/namespaces/${NS}/configmaps`, probed('dc-held', { finalizers: ['example.com/hold'] }, { set: 'dc' })), 201);
    admitted.length = 0;
    const out = expect(await call('DELETE', `/api/v1/namespaces/${NS}/configmaps?labelSelector=set%3Ddc`), 200);
    assert.equal(out.kind, 'ConfigMapList');
    assert.deepEqual(
      (out.items ?? []).map((i) => [i.metadata?.name, i.metadata?.deletionTimestamp]),
      [
        ['dc-1', undefined],
        ['dc-2', undefined],
        ['dc-held', undefined],
      ],
    );
    assert.deepEqual([...new Set(admitted.map((a) => `${a.namespace}/${a.name}`))], [`${NS}/`]);
    assert.deepEqual(admitted.map((a) => `${a.phase} ${a.oldObject?.metadata?.name ?? ''}`).sort(), [
      'admit dc-1',
      'admit dc-2',
      'admit dc-held',
      'validate dc-1',
      'validate dc-2',
      'validate dc-held',
    ]);
    assert.ok(expect(await call('GET', `/api/v1/namespaces/${NS}/configmaps/dc-held`), 200).metadata?.deletionTimestamp);
    expect(await call('GET', `/api/v1/namespaces/${NS}/configmaps/dc-1`), 404);
  });

  it('a namespace still finalizing is answered as it is, without admission; its first DELETE is admitted', async () => {
    const name = 'admission-finalizing';
    const created = expect(await call('POST', '/api/v1/namespaces', { ...nsObj(name), metadata: { name, labels: { probe: 'delete' } } }), 201);
    expect(await call('PUT', `/api/v1/namespaces/${name}/finalize`, { ...created, spec: { finalizers: ['example.com/mine'] } }), 200);
    admitted.length = 0;
    const first = expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200);
    assert.deepEqual(
      admitted.map((a) => [a.phase, a.name, phase(a.oldObject as Obj)]),
      [
        ['admit', name, 'Active'],
        ['validate', name, 'Active'],
      ],
    );
    admitted.length = 0;
    assert.deepEqual(expect(await call('DELETE', `/api/v1/namespaces/${name}`), 200), first);
    assert.deepEqual(admitted, []);
  });
});

describe('system namespaces controller', () => {
  let own: TestServer;
  let ownClient: RawClient;
  before(async () => {
    own = await startTestServer({ storage: 'memory', apis: [core({ systemNamespacesIntervalMs: 50 }), events(), coordination(), apiextensions()] });
    ownClient = new RawClient(own.url, adminCredentials(own.dataDir));
  });
  after(async () => {
    ownClient?.close();
    await own?.stop();
  });

  it("re-creates a system namespace removed behind the API's back", async () => {
    const get = (name: string): Promise<RawResponse> => ownClient.request({ method: 'GET', path: `/api/v1/namespaces/${name}`, headers: JSON_CT });
    const before = expect(await get('kube-system'), 200);
    await own.cp.storage.delete('/registry/namespaces/kube-system');
    const back = await eventually(20_000, 'kube-system re-created', async () => {
      const res = await get('kube-system');
      return res.status === 200 ? res.json<Obj>() : undefined;
    });
    assert.notEqual(back.metadata?.uid, before.metadata?.uid);
    assert.equal(phase(back), 'Active');
    assert.deepEqual(back.spec, { finalizers: ['kubernetes'] });
  });
});
