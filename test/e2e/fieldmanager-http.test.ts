// Server-side apply and managedFields over raw HTTP: the exact Status bodies kube-apiserver
// answers (409 with one cause per field and manager, 422 for a missing fieldManager, 400 for a
// body that is not an object or names another kind), create-if-missing, dry runs, force, removal
// of fields a manager stops applying, managedFields on create/update/patch/status writes, and
// managedFields a client sends (`[]` resets them).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const APPLY = 'application/apply-patch+yaml';
const JSON_CT = 'application/json';

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}
interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    managedFields?: Entry[];
    [k: string]: unknown;
  };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}
interface Status {
  kind: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: { name?: string; kind?: string; group?: string; causes?: Array<{ reason: string; message: string; field: string }> };
}

function body(res: RawResponse, code: number): Obj {
  assert.equal(res.status, code, res.text().slice(0, 800));
  return res.json<Obj>();
}

/** [manager, operation, subresource] in upstream's order: Apply before Update, then by time, then by name. */
function managers(o: Obj): Array<[string, string, string | undefined]> {
  return (o.metadata.managedFields ?? []).map((e) => [e.manager, e.operation, e.subresource]);
}

function entry(o: Obj, manager: string, operation = 'Apply'): Entry {
  const e = (o.metadata.managedFields ?? []).find((m) => m.manager === manager && m.operation === operation);
  assert.ok(e, `no ${operation} entry for ${manager} in ${JSON.stringify(o.metadata.managedFields)}`);
  return e;
}

describe('server-side apply over HTTP', { timeout: 90_000 }, () => {
  let server: TestServer;
  let client: RawClient;
  const cm = (ns: string, name: string): string => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const applyReq = (path: string, doc: unknown, query: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    client.request({
      method: 'PATCH',
      path: `${path}?${query}`,
      headers: { 'content-type': APPLY, accept: JSON_CT, ...headers },
      body: typeof doc === 'string' ? doc : JSON.stringify(doc),
    });
  const get = async (path: string): Promise<Obj> => body(await client.request({ path, headers: { accept: JSON_CT } }), 200);
  const cmDoc = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...extra },
    data,
  });

  before(async () => {
    server = await startTestServer();
    client = new RawClient(server.url, adminCredentials(server.dataDir));
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('creates when missing (201), is a no-op when unchanged (same resourceVersion), and accepts YAML', async () => {
    const created = body(await applyReq(cm('default', 'a1'), cmDoc('a1', { x: '1', y: '2' }), 'fieldManager=alice'), 201);
    assert.deepEqual(created.data, { x: '1', y: '2' });
    assert.deepEqual(managers(created), [['alice', 'Apply', undefined]]);
    const e = entry(created, 'alice');
    assert.equal(e.apiVersion, 'v1');
    assert.equal(e.fieldsType, 'FieldsV1');
    // An applier owns what its configuration names: the keys, not the data map itself (no ".").
    assert.deepEqual(e.fieldsV1, { 'f:data': { 'f:x': {}, 'f:y': {} } });
    assert.match(e.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const again = body(await applyReq(cm('default', 'a1'), cmDoc('a1', { x: '1', y: '2' }), 'fieldManager=alice'), 200);
    assert.equal(again.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.deepEqual(again.metadata.managedFields, created.metadata.managedFields);

    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n# a comment\ndata:\n  x: "1"\n  y: "2"\n';
    const viaYaml = body(await applyReq(cm('default', 'a1'), yaml, 'fieldManager=alice'), 200);
    assert.equal(viaYaml.metadata.resourceVersion, created.metadata.resourceVersion);
  });

  it('answers 409 with one cause per field and manager; force=true takes the fields', async () => {
    body(await applyReq(cm('default', 'c1'), cmDoc('c1', { a: '1', b: '2', c: '3' }), 'fieldManager=alice'), 201);
    const res = await applyReq(cm('default', 'c1'), cmDoc('c1', { a: 'x', b: 'y' }), 'fieldManager=bob');
    assert.equal(res.status, 409);
    const st = res.json<Status>();
    assert.deepEqual(st, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b',
      reason: 'Conflict',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' },
          { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.b' },
        ],
      },
      code: 409,
    });
    // One conflict: the single-line message kubectl prints.
    const one = await applyReq(cm('default', 'c1'), cmDoc('c1', { c: 'z' }), 'fieldManager=bob');
    assert.equal(one.status, 409);
    assert.equal(one.json<Status>().message, 'Apply failed with 1 conflict: conflict with "alice": .data.c');

    // The same value is shared ownership, not a conflict.
    const shared = body(await applyReq(cm('default', 'c1'), cmDoc('c1', { a: '1' }), 'fieldManager=carol'), 200);
    assert.deepEqual(entry(shared, 'carol').fieldsV1, { 'f:data': { 'f:a': {} } });

    const forced = body(await applyReq(cm('default', 'c1'), cmDoc('c1', { a: 'x', b: 'y' }), 'fieldManager=bob&force=true'), 200);
    assert.deepEqual(forced.data, { a: 'x', b: 'y', c: '3' });
    assert.deepEqual(entry(forced, 'alice').fieldsV1, { 'f:data': { 'f:c': {} } });
    assert.deepEqual(entry(forced, 'bob').fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} } });
    // carol lost .data.a when bob forced a different value.
    assert.ok(!(forced.metadata.managedFields ?? []).some((m) => m.manager === 'carol'));
  });

  it('a conflict with an Update manager names its apiVersion', async () => {
    body(await applyReq(cm('default', 'u1'), cmDoc('u1', { a: '1' }), 'fieldManager=alice'), 201);
    body(
      await client.request({
        method: 'PATCH',
        path: `${cm('default', 'u1')}?fieldManager=editor`,
        headers: { 'content-type': 'application/merge-patch+json', accept: JSON_CT },
        body: '{"data":{"a":"2"}}',
      }),
      200,
    );
    const res = await applyReq(cm('default', 'u1'), cmDoc('u1', { a: '1' }), 'fieldManager=alice');
    assert.equal(res.status, 409);
    const st = res.json<Status>();
    assert.equal(st.message, 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a');
    assert.deepEqual(st.details?.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.a' }]);
  });

  it('removes fields the manager stops applying, keeps those another manager owns', async () => {
    body(await applyReq(cm('default', 'r1'), cmDoc('r1', { a: '1', b: '2', c: '3' }, { labels: { l1: 'x', l2: 'y' } }), 'fieldManager=alice'), 201);
    body(await applyReq(cm('default', 'r1'), cmDoc('r1', { c: '3' }), 'fieldManager=bob'), 200);
    const after = body(await applyReq(cm('default', 'r1'), cmDoc('r1', { a: '1' }, { labels: { l1: 'x' } }), 'fieldManager=alice'), 200);
    assert.deepEqual(after.data, { a: '1', c: '3' });
    assert.deepEqual(after.metadata.labels, { l1: 'x' });
  });

  it('dryRun=All validates and answers without storing, for a create and for an update', async () => {
    const dry = body(await applyReq(cm('default', 'd1'), cmDoc('d1', { a: '1' }), 'fieldManager=alice&dryRun=All'), 201);
    assert.deepEqual(dry.data, { a: '1' });
    assert.deepEqual(managers(dry), [['alice', 'Apply', undefined]]);
    assert.equal((await client.request({ path: cm('default', 'd1') })).status, 404);

    const real = body(await applyReq(cm('default', 'd1'), cmDoc('d1', { a: '1' }), 'fieldManager=alice'), 201);
    const dryUpdate = body(await applyReq(cm('default', 'd1'), cmDoc('d1', { a: '2' }), 'fieldManager=alice&dryRun=All'), 200);
    assert.deepEqual(dryUpdate.data, { a: '2' });
    const stored = await get(cm('default', 'd1'));
    assert.deepEqual(stored.data, { a: '1' });
    assert.equal(stored.metadata.resourceVersion, real.metadata.resourceVersion);
    // A dry run still reports conflicts.
    assert.equal((await applyReq(cm('default', 'd1'), cmDoc('d1', { a: '3' }), 'fieldManager=bob&dryRun=All')).status, 409);
  });

  it('rejects bad requests with upstream messages', async () => {
    const noManager = await applyReq(cm('default', 'b1'), cmDoc('b1', { a: '1' }), '');
    assert.equal(noManager.status, 422);
    const st = noManager.json<Status>();
    assert.equal(st.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    assert.equal(st.reason, 'Invalid');
    assert.deepEqual(st.details?.causes, [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }]);

    const forceOnMerge = await client.request({
      method: 'PATCH',
      path: `${cm('default', 'b1')}?force=true`,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{}',
    });
    assert.equal(forceOnMerge.status, 422);
    assert.equal(forceOnMerge.json<Status>().message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');

    for (const [doc, type] of [
      ['[1,2]', 'array'],
      ['"text"', 'string'],
      ['42', 'number'],
      ['- a\n- b\n', 'array'],
    ] as const) {
      const res = await applyReq(cm('default', 'b1'), doc, 'fieldManager=alice');
      assert.equal(res.status, 400, doc);
      assert.equal(
        res.json<Status>().message,
        `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${type} into Go value of type map[string]interface {}`,
      );
    }
    const broken = await applyReq(cm('default', 'b1'), 'a: [1\n', 'fieldManager=alice');
    assert.equal(broken.status, 400);
    assert.match(broken.json<Status>().message, /^error decoding YAML: error converting YAML to JSON: yaml: /);

    const wrongKind = await applyReq(cm('default', 'b1'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b1' } }, 'fieldManager=alice');
    assert.equal(wrongKind.status, 400);
    assert.equal(wrongKind.json<Status>().message, 'invalid object type: /v1, Kind=Secret');
    const wrongVersion = await applyReq(cm('default', 'b1'), { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'b1' } }, 'fieldManager=alice');
    assert.equal(wrongVersion.status, 400);
    const empty = await applyReq(cm('default', 'b1'), '', 'fieldManager=alice');
    assert.equal(empty.status, 400);
    assert.equal(empty.json<Status>().message, 'invalid object type: /, Kind=');

    const withManaged = await applyReq(
      cm('default', 'b1'),
      { ...cmDoc('b1', {}), metadata: { name: 'b1', managedFields: [{ manager: 'x', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }] } },
      'fieldManager=alice',
    );
    assert.equal(withManaged.status, 400);
    assert.equal(withManaged.json<Status>().message, 'metadata.managedFields must be nil');

    const otherName = await applyReq(cm('default', 'b1'), cmDoc('b2', { a: '1' }), 'fieldManager=alice');
    assert.equal(otherName.status, 400);
    assert.equal(otherName.json<Status>().message, 'the name of the object (b2) does not match the name on the URL (b1)');

    // Unknown fields fail the typed conversion: upstream answers 500 with this message.
    const unknown = await applyReq(cm('default', 'b1'), { ...cmDoc('b1', {}), spec: { x: 1 } }, 'fieldManager=alice');
    assert.equal(unknown.status, 500);
    assert.equal(unknown.json<Status>().message, 'failed to create typed patch object (/b1; /v1, Kind=ConfigMap): .spec: field not declared in schema');

    const dup = await applyReq(
      cm('default', 'b1'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b1\ndata:\n  a: "1"\n  a: "2"\n',
      'fieldManager=alice&fieldValidation=Strict',
    );
    assert.equal(dup.status, 400);
    // sigs.k8s.io/yaml's strict YAMLToJSON: go-yaml's words, by line.
    assert.equal(
      dup.json<Status>().message,
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    );
    const warned = await applyReq(
      cm('default', 'b1'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b1\ndata:\n  a: "1"\n  a: "2"\n',
      'fieldManager=alice',
    );
    assert.equal(warned.status, 201, warned.text());
    assert.equal(String(warned.headers.warning), '299 - "line 7: key \\"a\\" already set in map"');

    const uid = await applyReq(cm('default', 'b3'), cmDoc('b3', {}, { uid: '6f1f2d4e-0000-4000-8000-000000000000' }), 'fieldManager=alice');
    assert.equal(uid.status, 409);
    assert.equal(
      uid.json<Status>().message,
      'Operation cannot be fulfilled on configmaps "b3": uid mismatch: the provided object specified uid 6f1f2d4e-0000-4000-8000-000000000000, and no existing object was found',
    );
  });

  it('creating in a missing namespace goes through NamespaceLifecycle', async () => {
    const res = await applyReq(cm('nowhere', 'n1'), cmDoc('n1', { a: '1' }), 'fieldManager=alice');
    assert.equal(res.status, 404);
    assert.equal(res.json<Status>().message, 'namespaces "nowhere" not found');
  });

  it('records Update managers on create, PUT and patches (fieldManager or User-Agent prefix)', async () => {
    const created = body(
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces/default/configmaps',
        headers: { 'content-type': JSON_CT, 'user-agent': 'my-tool/1.2 (linux)' },
        body: JSON.stringify(cmDoc('m1', { a: '1' })),
      }),
      201,
    );
    assert.deepEqual(managers(created), [['my-tool', 'Update', undefined]]);
    assert.deepEqual(entry(created, 'my-tool', 'Update').fieldsV1, { 'f:data': { '.': {}, 'f:a': {} } });
    assert.equal(entry(created, 'my-tool', 'Update').apiVersion, 'v1');

    const put = body(
      await client.request({
        method: 'PUT',
        path: `${cm('default', 'm1')}?fieldManager=replacer`,
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify({ ...created, data: { a: '1', b: '2' } }),
      }),
      200,
    );
    assert.deepEqual(
      managers(put)
        .map((m) => m[0])
        .sort(),
      ['my-tool', 'replacer'],
    );
    assert.deepEqual(entry(put, 'replacer', 'Update').fieldsV1, { 'f:data': { 'f:b': {} } });

    const patched = body(
      await client.request({
        method: 'PATCH',
        path: `${cm('default', 'm1')}?fieldManager=labeler`,
        headers: { 'content-type': 'application/strategic-merge-patch+json' },
        body: '{"metadata":{"labels":{"k":"v"}}}',
      }),
      200,
    );
    assert.deepEqual(entry(patched, 'labeler', 'Update').fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:k': {} } } });
    const jsonPatched = body(
      await client.request({
        method: 'PATCH',
        path: cm('default', 'm1'),
        headers: { 'content-type': 'application/json-patch+json', 'user-agent': 'jp/0' },
        body: '[{"op":"remove","path":"/data/a"}]',
      }),
      200,
    );
    // Removing a field takes it from its owner; the remover owns nothing and gets no entry.
    // my-tool keeps `.data` itself (the map it created), replacer keeps .data.b.
    assert.deepEqual(
      managers(jsonPatched)
        .map((m) => m[0])
        .sort(),
      ['labeler', 'my-tool', 'replacer'],
    );
    assert.deepEqual(entry(jsonPatched, 'my-tool', 'Update').fieldsV1, { 'f:data': {} });

    // An unchanged PUT does not touch managedFields or the resourceVersion.
    const same = body(
      await client.request({
        method: 'PUT',
        path: `${cm('default', 'm1')}?fieldManager=other`,
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify(jsonPatched),
      }),
      200,
    );
    assert.equal(same.metadata.resourceVersion, jsonPatched.metadata.resourceVersion);
  });

  it('keeps managedFields a client edits, resets them on [] and ignores them through a subresource', async () => {
    const created = body(await applyReq(cm('default', 'k1'), cmDoc('k1', { a: '1' }), 'fieldManager=alice'), 201);
    // A client that sends managedFields back unchanged keeps them.
    const put = body(
      await client.request({
        method: 'PUT',
        path: `${cm('default', 'k1')}?fieldManager=bob`,
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify({ ...created, data: { a: '1', b: '2' } }),
      }),
      200,
    );
    assert.deepEqual(managers(put), [
      ['alice', 'Apply', undefined],
      ['bob', 'Update', undefined],
    ]);
    // A client may rename a manager.
    const renamed = structuredClone(put);
    renamed.metadata.managedFields![0]!.manager = 'alice2';
    const afterRename = body(
      await client.request({
        method: 'PUT',
        path: `${cm('default', 'k1')}?fieldManager=bob`,
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify(renamed),
      }),
      200,
    );
    assert.deepEqual(managers(afterRename), [
      ['alice2', 'Apply', undefined],
      ['bob', 'Update', undefined],
    ]);
    // [] resets: the whole object is then owned by the writer.
    const reset = body(
      await client.request({
        method: 'PATCH',
        path: `${cm('default', 'k1')}?fieldManager=resetter`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"metadata":{"managedFields":[]}}',
      }),
      200,
    );
    assert.equal(reset.metadata.managedFields, undefined);
    // Untracked now: the next update does not start tracking ...
    const untracked = body(
      await client.request({
        method: 'PATCH',
        path: `${cm('default', 'k1')}?fieldManager=bob`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"data":{"c":"3"}}',
      }),
      200,
    );
    assert.equal(untracked.metadata.managedFields, undefined);
    // ... an apply does: what was there belongs to "before-first-apply", so changing it conflicts.
    const conflicting = await applyReq(cm('default', 'k1'), cmDoc('k1', { a: '9' }), 'fieldManager=alice');
    assert.equal(conflicting.json<Status>().message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a');
    const applied = body(await applyReq(cm('default', 'k1'), cmDoc('k1', { a: '1' }), 'fieldManager=alice'), 200);
    assert.deepEqual(managers(applied), [
      ['alice', 'Apply', undefined],
      ['before-first-apply', 'Update', undefined],
    ]);
    assert.deepEqual(entry(applied, 'before-first-apply', 'Update').fieldsV1, { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {}, 'f:c': {} } });
  });

  it('namespaces: status is reset on the main resource, spec through /status; apply to /status', async () => {
    const ns = body(
      await applyReq(
        '/api/v1/namespaces/ssa-ns',
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ssa-ns', labels: { team: 'a' } } },
        'fieldManager=alice',
      ),
      201,
    );
    assert.equal(ns.status?.phase, 'Active');
    assert.deepEqual(entry(ns, 'alice').fieldsV1, { 'f:metadata': { 'f:labels': { 'f:team': {} } } });
    // status in an apply to the main resource is dropped and not owned.
    const withStatus = body(
      await applyReq(
        '/api/v1/namespaces/ssa-ns',
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ssa-ns', labels: { team: 'a' } }, status: { phase: 'Terminating' } },
        'fieldManager=alice',
      ),
      200,
    );
    assert.equal(withStatus.status?.phase, 'Active');
    assert.deepEqual(entry(withStatus, 'alice').fieldsV1, { 'f:metadata': { 'f:labels': { 'f:team': {} } } });

    const viaStatus = body(
      await applyReq(
        '/api/v1/namespaces/ssa-ns/status',
        {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'ssa-ns' },
          status: { conditions: [{ type: 'X', status: 'True' }] },
          spec: { finalizers: ['a/b'] },
        },
        'fieldManager=ctrl',
      ),
      200,
    );
    assert.deepEqual(viaStatus.status?.conditions, [{ type: 'X', status: 'True' }]);
    assert.deepEqual(viaStatus.spec, { finalizers: ['kubernetes'] });
    const st = entry(viaStatus, 'ctrl');
    assert.equal(st.subresource, 'status');
    assert.deepEqual(st.fieldsV1, { 'f:status': { 'f:conditions': { 'k:{"type":"X"}': { '.': {}, 'f:status': {}, 'f:type': {} } } } });
    // The main resource's entry is untouched.
    assert.deepEqual(entry(viaStatus, 'alice').fieldsV1, { 'f:metadata': { 'f:labels': { 'f:team': {} } } });

    // A PUT through /status records an Update entry with the subresource; the namespace status
    // strategy keeps only the spec, so its label change applies and is the updater's (upstream).
    const cur = await get('/api/v1/namespaces/ssa-ns');
    const put = body(
      await client.request({
        method: 'PUT',
        path: '/api/v1/namespaces/ssa-ns/status?fieldManager=statuser',
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify({
          ...cur,
          metadata: { ...cur.metadata, labels: { team: 'b' } },
          status: {
            ...cur.status,
            conditions: [
              { type: 'X', status: 'True' },
              { type: 'Y', status: 'False' },
            ],
          },
        }),
      }),
      200,
    );
    const upd = entry(put, 'statuser', 'Update');
    assert.equal(upd.subresource, 'status');
    assert.deepEqual(upd.fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:team': {} } },
      'f:status': { 'f:conditions': { 'k:{"type":"Y"}': { '.': {}, 'f:status': {}, 'f:type': {} } } },
    });
    assert.deepEqual(put.metadata.labels?.team, 'b');

    // Another applier of the same status field conflicts with the /status applier.
    const clash = await applyReq(
      '/api/v1/namespaces/ssa-ns/status',
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ssa-ns' }, status: { conditions: [{ type: 'X', status: 'False' }] } },
      'fieldManager=other',
    );
    assert.equal(clash.status, 409);
    assert.equal(
      clash.json<Status>().message,
      'Apply failed with 1 conflict: conflict with "ctrl" with subresource "status": .status.conditions[type="X"].status',
    );
    // managedFields sent through a subresource are ignored (`[]` does not reset them there).
    const cur2 = await get('/api/v1/namespaces/ssa-ns');
    const ignored = body(
      await client.request({
        method: 'PUT',
        path: '/api/v1/namespaces/ssa-ns/status?fieldManager=statuser',
        headers: { 'content-type': JSON_CT },
        body: JSON.stringify({ ...cur2, metadata: { ...cur2.metadata, managedFields: [] } }),
      }),
      200,
    );
    assert.deepEqual(ignored.metadata.managedFields, cur2.metadata.managedFields);
    assert.equal(ignored.metadata.resourceVersion, cur2.metadata.resourceVersion);
  });
});
