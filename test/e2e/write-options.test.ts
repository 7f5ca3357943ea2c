// Write and delete requests as kube-apiserver answers them: options validation (one 422 on the
// verb's options kind with every cause), DeleteOptions from the body or else the query, delete
// preconditions, the DELETE Status, the 405 of built-in resources, the name check of PUT, and
// a resourceVersion on create.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient, type KubeStatus, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NS = 'default';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };

type Status = KubeStatus & { details?: { name?: string; group?: string; kind?: string; causes?: { reason?: string; message?: string; field?: string }[] } };
interface Obj {
  metadata: { name?: string; uid?: string; resourceVersion?: string };
}

describe('write and delete options', { timeout: 60_000 }, () => {
  let server: TestServer;
  let client: RawClient;

  const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = JSON_CT): Promise<RawResponse> =>
    client.request({ method, path, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
  const status = (r: RawResponse, code: number): Status => {
    assert.equal(r.status, code, r.text().slice(0, 600));
    const st = r.json<Status>();
    assert.equal(st.kind, 'Status');
    return st;
  };
  const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...extra },
    data: { a: '1' },
  });
  const create = async (name: string): Promise<Obj> => {
    const r = await req('POST', CMS, cm(name));
    assert.equal(r.status, 201, r.text());
    return r.json<Obj>();
  };
  const causes = (st: Status): string[] => (st.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    client = new RawClient(server.url, adminCredentials(server.dataDir));
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it("options: every cause in one 422 on the verb's kind; an empty fieldValidation is the default; printable Unicode managers", async () => {
    await create('opts');
    const put = status(await req('PUT', `${CMS}/opts?fieldValidation=foo&dryRun=foo&fieldManager=%01x`, cm('opts')), 422);
    assert.equal(st(put).kind, 'UpdateOptions');
    assert.deepEqual(causes(put), [
      'fieldManager: Invalid value: "\\u0001x": invalid character U+0001 (at position 0)',
      'dryRun: Unsupported value: ["foo"]: supported values: "All"',
      'fieldValidation: Unsupported value: "foo": supported values: "", "Ignore", "Strict", "Warn"',
    ]);
    const patch = status(await req('PATCH', `${CMS}/opts?force=true&dryRun=All&dryRun=x`, '{}', { 'content-type': 'application/merge-patch+json' }), 422);
    assert.equal(st(patch).kind, 'PatchOptions');
    assert.deepEqual(causes(patch), [
      'force: Forbidden: may not be specified for non-apply patch',
      'dryRun: Unsupported value: ["All","x"]: supported values: "All"',
    ]);
    assert.equal(st(status(await req('POST', `${CMS}?fieldValidation=nope`, cm('x')), 422)).kind, 'CreateOptions');
    assert.equal((await req('POST', `${CMS}?fieldValidation=&fieldManager=${encodeURIComponent('été')}`, cm('empty-fv'))).status, 201);
  });

  it("DeleteOptions: from the body when there is one (the query is then ignored), else the query; upstream's order of causes", async () => {
    await create('body-wins');
    // The body says nothing about dryRun: the delete is real.
    assert.equal((await req('DELETE', `${CMS}/body-wins?dryRun=All`, {})).status, 200);
    assert.equal((await req('GET', `${CMS}/body-wins`)).status, 404);
    await create('query-dry');
    assert.equal((await req('DELETE', `${CMS}/query-dry?dryRun=All`)).status, 200);
    assert.equal((await req('GET', `${CMS}/query-dry`)).status, 200);
    const both = status(
      await req('DELETE', `${CMS}/query-dry`, {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        orphanDependents: true,
        propagationPolicy: 'Sideways',
        dryRun: ['x'],
      }),
      422,
    );
    assert.equal(st(both).kind, 'DeleteOptions');
    assert.deepEqual(causes(both), [
      'propagationPolicy: Invalid value: "Sideways": orphanDependents and deletionPropagation cannot be both set',
      'propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
      'dryRun: Unsupported value: ["x"]: supported values: "All"',
    ]);
    // A negative grace period is one second, not an error.
    assert.equal((await req('DELETE', `${CMS}/query-dry?gracePeriodSeconds=-5`)).status, 200);
    assert.equal((await req('GET', `${CMS}/query-dry`)).status, 404);
  });

  it('DELETE: gracePeriodSeconds is an int64 as Go decodes it (exact within int64, its error beyond)', async () => {
    await create('grace-max');
    const del = (name: string, body: string): Promise<RawResponse> => req('DELETE', `${CMS}/${name}`, body);
    for (const [literal, what] of [
      ['9223372036854775808', 'number 9223372036854775808'],
      ['-9223372036854775809', 'number -9223372036854775809'],
      ['1.5', 'number 1.5'],
      ['1e3', 'number 1e3'],
      ['"30"', 'string'],
    ]) {
      const st = status(await del('grace-max', `{"gracePeriodSeconds":${literal}}`), 500);
      // ErrorToAPIStatus of the decoder's error: no reason, its text.
      assert.equal(st.reason, undefined, literal);
      assert.equal(st.message, `json: cannot unmarshal ${what} into Go struct field DeleteOptions.gracePeriodSeconds of type int64`);
      assert.equal((await req('GET', `${CMS}/grace-max`)).status, 200, 'not deleted');
    }
    assert.equal((await del('grace-max', '{"gracePeriodSeconds":9223372036854775807}')).status, 200);
    assert.equal((await req('GET', `${CMS}/grace-max`)).status, 404);
    await create('grace-min');
    assert.equal((await del('grace-min', '{"gracePeriodSeconds":-9223372036854775808}')).status, 200);
  });

  it('DELETE: preconditions name the kind (rest.BeforeDelete); the Status of a deleted object has no code', async () => {
    const made = await create('pre');
    const uid = status(await req('DELETE', `${CMS}/pre`, { preconditions: { uid: 'x' } }), 409);
    assert.equal(uid.reason, 'Conflict');
    assert.equal(
      uid.message,
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (x) does not match the UID in record (${made.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.deepEqual(uid.details, { name: 'pre', kind: 'ConfigMap' });
    const rv = status(await req('DELETE', `${CMS}/pre`, { preconditions: { resourceVersion: '1' } }), 409);
    assert.equal(
      rv.message,
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${made.metadata.resourceVersion}). The object might have been modified`,
    );
    // An empty precondition is one (Go's *string is set), not none; null is none.
    const empty = status(await req('DELETE', `${CMS}/pre`, { preconditions: { uid: '', resourceVersion: null } }), 409);
    assert.equal(
      empty.message,
      `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition () does not match the UID in record (${made.metadata.uid}). The object might have been deleted and then recreated`,
    );
    assert.equal(status(await req('DELETE', `${CMS}/pre`, { preconditions: { resourceVersion: '' } }), 409).reason, 'Conflict');
    const lease = await req('POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: {} });
    assert.equal(lease.status, 201, lease.text());
    const leaseUid = status(await req('DELETE', `${LEASES}/l1`, { preconditions: { uid: 'x' } }), 409);
    assert.match(leaseUid.message ?? '', /^Operation cannot be fulfilled on Lease\.coordination\.k8s\.io "l1": the UID in the precondition \(x\)/);
    assert.deepEqual(leaseUid.details, { name: 'l1', group: 'coordination.k8s.io', kind: 'Lease' });
    const deleted = await req('DELETE', `${CMS}/pre`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: { name: 'pre', kind: 'configmaps', uid: made.metadata.uid },
    });
  });

  it("405 for a method a built-in resource does not serve is the router's", async () => {
    await create('m');
    for (const [method, path] of [
      ['POST', `${CMS}/m`],
      ['PUT', CMS],
      ['POST', '/api/v1/namespaces/default/finalize'],
      ['DELETE', '/api/v1/namespaces'],
    ] as const) {
      const r = status(await req(method, path, method === 'DELETE' ? undefined : cm('m')), 405);
      assert.equal(r.reason, 'MethodNotAllowed');
      assert.equal(r.message, 'the server does not allow this method on the requested resource', `${method} ${path}`);
      assert.deepEqual(r.details, {});
    }
  });

  it("PUT: the body must name the URL's object; a lease without resourceVersion names the resource", async () => {
    await create('named');
    assert.equal(
      status(await req('PUT', `${CMS}/named`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: {} }), 400).message,
      'the name of the object () does not match the name on the URL (named)',
    );
    const lease = (await req('GET', `${LEASES}/l1`)).json<Obj & Record<string, unknown>>();
    delete lease.metadata.resourceVersion;
    const noRv = status(await req('PUT', `${LEASES}/l1`, lease), 422);
    assert.equal(noRv.message, 'leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update');
    assert.deepEqual({ group: noRv.details?.group, kind: noRv.details?.kind }, { group: 'coordination.k8s.io', kind: 'leases' });
  });

  it('a resourceVersion on create: 500 as etcd3 store.Create (not on a dry run, nor when a PUT creates)', async () => {
    const r = await req('POST', CMS, cm('with-rv', { resourceVersion: '5' }));
    assert.equal(r.status, 500);
    assert.deepEqual(r.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'resourceVersion should not be set on objects to be created',
      code: 500,
    });
    assert.equal((await req('GET', `${CMS}/with-rv`)).status, 404);
    assert.equal((await req('POST', `${CMS}?dryRun=All`, cm('with-rv', { resourceVersion: '5' }))).status, 201);
    const putCreate = await req('PUT', `${LEASES}/l2`, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l2', resourceVersion: '12345' },
      spec: {},
    });
    assert.equal(putCreate.status, 201, putCreate.text());
    assert.notEqual(putCreate.json<Obj>().metadata.resourceVersion, '12345');
  });

  it('finalizer names: core kinds need a standard or domain-qualified one; leases take any qualified name', async () => {
    const bad = status(await req('POST', CMS, cm('fin', { finalizers: ['foo'] })), 422);
    assert.equal(
      bad.message,
      'ConfigMap "fin" is invalid: metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
    );
    assert.equal((await req('POST', CMS, cm('fin', { finalizers: ['example.com/foo', 'kubernetes'] }))).status, 201);
    const lease = await req('POST', LEASES, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'fin', finalizers: ['foo'] }, spec: {} });
    assert.equal(lease.status, 201, lease.text());
    assert.equal(lease.headers['warning'], undefined);
  });

  it("owner references: exact duplicates dropped with upstream's warning; system fields sent on create are not the client's", async () => {
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-1' };
    const warning = (after: boolean): string =>
      `299 - ".metadata.ownerReferences contains duplicate entries${after ? ' after mutating admission happens' : ''}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u-1"`;
    const made = await req(
      'POST',
      CMS,
      cm('owned', { ownerReferences: [owner, owner, { ...owner, name: 'other' }], deletionTimestamp: '2020-01-01T00:00:00Z', uid: 'mine' }),
    );
    assert.equal(made.status, 201, made.text());
    assert.equal(made.headers['warning'], warning(false));
    const obj = made.json<{
      metadata: { uid: string; deletionTimestamp?: string; ownerReferences: unknown[]; managedFields: { fieldsV1: Record<string, unknown> }[] };
    }>();
    // Same uid, different name: not a duplicate (only equal references are).
    assert.equal(obj.metadata.ownerReferences.length, 2);
    assert.notEqual(obj.metadata.uid, 'mine');
    assert.equal(obj.metadata.deletionTimestamp, undefined);
    assert.deepEqual(Object.keys(obj.metadata.managedFields[0]!.fieldsV1['f:metadata'] as object).sort(), ['f:ownerReferences']);
    const patched = await req('PATCH', `${CMS}/owned`, JSON.stringify({ metadata: { ownerReferences: [owner, owner] } }), {
      'content-type': 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text());
    assert.equal(patched.headers['warning'], warning(true));
    assert.equal(patched.json<{ metadata: { ownerReferences: unknown[] } }>().metadata.ownerReferences.length, 1);
  });

  it('PATCH: a patch that leaves no name is refused (checkName); JSON patch replace of a missing key sets it (json-patch v4)', async () => {
    await create('unnamed');
    const undeterminable = 'the name of the object (unnamed based on URL) was undeterminable: name must be provided';
    for (const [ct, body] of [
      ['application/merge-patch+json', '{"metadata":{"name":null}}'],
      ['application/strategic-merge-patch+json', '{"metadata":null}'],
      ['application/json-patch+json', '[{"op":"remove","path":"/metadata"}]'],
      ['application/json-patch+json', '[{"op":"replace","path":"/metadata/name","value":""}]'],
    ] as const) {
      assert.equal(status(await req('PATCH', `${CMS}/unnamed`, body, { 'content-type': ct }), 400).message, undeterminable, `${ct} ${body}`);
    }
    const replaced = await req(
      'PATCH',
      `${CMS}/unnamed`,
      '[{"op":"replace","path":"/metadata/labels","value":{"l":"1"}},{"op":"replace","path":"/data/new","value":"n"}]',
      { 'content-type': 'application/json-patch+json' },
    );
    assert.equal(replaced.status, 200, replaced.text());
    const obj = replaced.json<{ metadata: { labels?: Record<string, string> }; data: Record<string, string> }>();
    assert.deepEqual(obj.metadata.labels, { l: '1' });
    assert.deepEqual(obj.data, { a: '1', new: 'n' });
  });

  it("fields of the wrong type are refused as Go's decoder refuses them, never stored (create, update, patch, apply)", async () => {
    const lease = (spec: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'typed' },
      spec,
    });
    assert.equal(
      status(await req('POST', LEASES, lease({ holderIdentity: 5 })), 400).message,
      'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string',
    );
    assert.equal(
      status(await req('POST', LEASES, lease({ leaseDurationSeconds: 1.5 })), 400).message,
      'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    assert.equal(
      status(
        await req('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'sa-typed' },
          secrets: 'x',
        }),
        400,
      ).message,
      'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: json: cannot unmarshal string into Go struct field ServiceAccount.secrets of type []v1.ObjectReference',
    );
    const made = await req('POST', LEASES, lease({ holderIdentity: 'me', leaseDurationSeconds: 10 }));
    assert.equal(made.status, 201, made.text());
    const put = lease({ holderIdentity: true });
    assert.equal(
      status(await req('PUT', `${LEASES}/typed`, put), 400).message,
      'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal bool into Go struct field LeaseSpec.spec.holderIdentity of type string',
    );
    const patched = status(
      await req('PATCH', `${LEASES}/typed`, '{"spec":{"leaseDurationSeconds":"10"}}', { 'content-type': 'application/merge-patch+json' }),
      422,
    );
    assert.equal(patched.reason, 'Invalid');
    assert.deepEqual(
      causes(patched).map((c) => c.replace(/Invalid value: ".*": /, 'Invalid value: …: ')),
      ['patch: Invalid value: …: json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32'],
    );
    const applied = await req(
      'PATCH',
      `${LEASES}/typed?fieldManager=t`,
      'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: typed}\nspec: {leaseTransitions: abc}\n',
      { 'content-type': 'application/apply-patch+yaml' },
    );
    assert.equal(applied.status, 422, applied.text());
    const stored = (await req('GET', `${LEASES}/typed`)).json<{ spec: Record<string, unknown> }>();
    assert.deepEqual(stored.spec, { holderIdentity: 'me', leaseDurationSeconds: 10 });
  });

  it('creating over an object that is being deleted says so; a terminating namespace has no grace period', async () => {
    assert.equal((await req('POST', CMS, cm('held', { finalizers: ['example.com/hold'] }))).status, 201);
    assert.equal((await req('DELETE', `${CMS}/held`)).status, 200);
    const again = status(await req('POST', CMS, cm('held')), 409);
    assert.equal(again.reason, 'AlreadyExists');
    assert.equal(again.message, 'object is being deleted: configmaps "held" already exists');
    assert.equal(status(await req('POST', CMS, cm('opts')), 409).message, 'configmaps "opts" already exists');
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'going' } };
    assert.equal((await req('POST', '/api/v1/namespaces', ns)).status, 201);
    const deleted = (await req('DELETE', '/api/v1/namespaces/going')).json<{ metadata: Record<string, unknown>; status: { phase: string } }>();
    assert.equal(deleted.status.phase, 'Terminating');
    assert.ok(deleted.metadata['deletionTimestamp']);
    assert.equal(deleted.metadata['deletionGracePeriodSeconds'], undefined);
    assert.equal(status(await req('POST', '/api/v1/namespaces', ns), 409).message, 'object is being deleted: namespaces "going" already exists');
  });
});

function st(s: Status): { group?: string; kind?: string } {
  return { ...(s.details?.group !== undefined ? { group: s.details.group } : {}), ...(s.details?.kind !== undefined ? { kind: s.details.kind } : {}) };
}
