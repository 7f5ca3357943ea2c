// The official Python client (Debian's python3-kubernetes under .tools/, /usr/bin/python3) on custom resources:
// CustomObjectsApi create/get/list/merge patch/status subresource/delete, a schema violation as a
// 422 ApiException, and watch.Watch().stream(custom.list_namespaced_custom_object, ...).
// test/e2e/python/custom_objects.py prints JSON; this file asserts on it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { crdObject, PHASE_STATUS, waitServed } from '../support/crd.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, repoRoot, run, tools } from '../support/tools.js';

ensureTools();

let server: TestServer;
let raw: RawClient;

const CRD = crdObject({
  group: 'py.example.com',
  plural: 'widgets',
  singular: 'widget',
  kind: 'Widget',
  subresources: { status: {} },
  spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0 }, color: { type: 'string' } } },
  status: PHASE_STATUS,
});

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  raw = new RawClient(server.url, adminCredentials(server.dataDir));
  const json = { 'content-type': 'application/json' };
  assert.equal(
    (await raw.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', headers: json, body: JSON.stringify(CRD) })).status,
    201,
  );
  assert.equal(
    (await raw.request({ method: 'POST', path: '/api/v1/namespaces', headers: json, body: JSON.stringify({ metadata: { name: 'py-custom' } }) })).status,
    201,
  );
  await waitServed(raw, '/apis/py.example.com/v1/widgets');
});

after(async () => {
  raw?.close();
  await server?.stop();
});

type Json = Record<string, unknown>;
const at = (o: unknown, key: string): Json => (o as Json)[key] as Json;

test('python client: CustomObjectsApi CRUD, status subresource, errors and watch', async () => {
  const r = await run(tools.python, [join(repoRoot, 'test', 'e2e', 'python', 'custom_objects.py'), server.kubeconfig, 'py-custom'], {
    timeoutMs: 45_000,
    env: { PYTHONDONTWRITEBYTECODE: '1' },
  });
  assert.equal(r.code, 0, `custom_objects.py failed\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as Json;

  const created = at(out, 'created');
  assert.equal(created.name, 'one');
  assert.equal(created.generation, 1);
  assert.deepEqual(created.spec, { size: 1, color: 'red' });
  assert.deepEqual(created.managers, ['OpenAPI-Generator'], 'the manager is the User-Agent up to its first "/"');
  assert.deepEqual(at(out, 'got'), { spec: { size: 1, color: 'red' }, kind: 'Widget', api_version: 'py.example.com/v1' });
  assert.deepEqual(at(out, 'listed'), { kind: 'WidgetList', names: ['one', 'two'] });
  assert.deepEqual(out.selected, ['two']);
  assert.deepEqual(out.cluster_names, ['one', 'two']);

  // Merge patch: size changes, color (null) goes; spec changed so generation moves.
  assert.deepEqual(at(out, 'patched'), { spec: { size: 5 }, generation: 2 });
  // /status takes status and ignores spec; generation stays.
  assert.deepEqual(at(out, 'status_patched'), { status: { phase: 'Ready' }, spec: { size: 5 }, generation: 2 });
  assert.deepEqual(out.got_status, { phase: 'Ready' });

  const invalid = at(out, 'invalid');
  assert.equal(invalid.http, 422);
  assert.equal(invalid.reason, 'Invalid');
  assert.equal(invalid.message, 'Widget.py.example.com "bad" is invalid: spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0');
  assert.deepEqual(invalid.causes, [
    { reason: 'FieldValueInvalid', message: 'Invalid value: -1: spec.size in body should be greater than or equal to 0', field: 'spec.size' },
  ]);
  assert.deepEqual(at(out, 'missing'), { http: 404, reason: 'NotFound' });
  // Deleting a custom resource answers with a Success Status naming it, as upstream's CR store does.
  assert.deepEqual(at(out, 'deleted'), { kind: 'Status', status: 'Success', details: { name: 'two', group: 'py.example.com', kind: 'widgets' } });

  const events = out.events as { type: string; name: string; size: number; class: string }[];
  assert.deepEqual(
    events.map((e) => [e.type, e.name, e.size]),
    [
      ['ADDED', 'w', 1],
      ['MODIFIED', 'w', 2],
      ['DELETED', 'w', 2],
    ],
  );
  assert.ok(
    events.every((e) => e.class === 'dict'),
    'custom objects are plain dicts',
  );
});
