// The official Python client (Debian's python3-kubernetes 22.6 unpacked under .tools/, run by /usr/bin/python3) against a real
// kplane server: its strict TLS verification of our PKI, ConfigMap CRUD, strategic/JSON/merge
// patches, label selectors, Status errors, and watch.Watch().stream. The scripts under
// test/e2e/python/ print JSON; this file asserts on it.
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run, tools } from '../support/tools.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});

after(async () => {
  await server?.stop();
});

async function python(script: string, ...args: string[]): Promise<Record<string, unknown>> {
  const r = await run(tools.python, [join(repoRoot, 'test', 'e2e', 'python', script), server.kubeconfig, ...args], {
    timeoutMs: 45_000,
    env: { PYTHONDONTWRITEBYTECODE: '1' },
  });
  assert.equal(r.code, 0, `${script} failed\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

type Json = Record<string, unknown>;
const at = (o: unknown, key: string): Json => (o as Json)[key] as Json;

test('python client: the kubernetes package is the one npm run tools unpacked under .tools/, not a system-wide one', async () => {
  const r = await run(tools.python, ['-c', 'import kubernetes, os; print(os.path.realpath(kubernetes.__file__))']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.startsWith(`${realpathSync(join(repoRoot, '.tools'))}/root/usr/lib/python3/dist-packages/kubernetes/`), r.stdout);
});

test('python client: CRUD, patches, selectors and Status errors on configmaps', async () => {
  const out = await python('crud.py', 'py-crud');
  assert.match(String(out.version), /^v1\.\d+\.\d+/);

  const created = at(out, 'created');
  assert.equal(created.name, 'py-cm');
  assert.equal(created.namespace, 'py-crud');
  assert.match(String(created.uid), /^[0-9a-f-]{36}$/);
  assert.equal(created.created_ts_type, 'datetime', 'creationTimestamp deserializes to a datetime');
  assert.deepEqual(created.data, { k: 'v', drop: 'me' });
  assert.deepEqual(at(out, 'read'), { uid: created.uid, rv: created.rv, data: { k: 'v', drop: 'me' } });

  const replaced = at(out, 'replaced');
  assert.deepEqual(replaced.data, { k: 'v2', drop: 'me' });
  assert.ok(Number(replaced.rv) > Number(created.rv));

  const conflict = at(out, 'conflict');
  assert.equal(conflict.http, 409);
  assert.deepEqual(conflict.body, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason: 'Conflict',
    code: 409,
    message: 'Operation cannot be fulfilled on configmaps "py-cm": the object has been modified; please apply your changes to the latest version and try again',
    details: { name: 'py-cm', kind: 'configmaps' },
  });

  // python-kubernetes 22.6 sends a dict body as a strategic merge patch.
  assert.deepEqual(at(out, 'strategic'), {
    content_type: 'application/strategic-merge-patch+json',
    data: { k: 'v2', drop: 'me', smp: '1' },
    labels: { app: 'py', tier: 'a', patched: 'smp' },
  });
  assert.deepEqual(at(out, 'jsonpatch'), { content_type: 'application/json-patch+json', data: { k: 'v3', drop: 'me', smp: '1' } });
  const merge = at(out, 'merge');
  assert.equal(merge.http, 200);
  assert.match(String(merge.content_type), /^application\/json/);
  assert.deepEqual(merge.data, { k: 'v3', smp: '1', merge: 'yes' });

  // upstream: NewGenericServerResponse(422, ...) for a JSON patch that does not apply.
  const failedTest = at(out, 'failed_test_op');
  assert.equal(failedTest.http, 422);
  assert.equal(at(failedTest, 'body').reason, 'Invalid');
  assert.equal(at(failedTest, 'body').message, 'the server rejected our request due to an error in our request');

  assert.deepEqual(out.list_app_py, ['py-b', 'py-cm']);
  assert.deepEqual(out.list_tier_notin, ['py-b']);
  assert.deepEqual(out.list_exists, ['py-b', 'py-cm']);
  assert.equal(out.list_kind, 'ConfigMapList');
  assert.match(String(out.list_rv), /^\d+$/);

  assert.deepEqual(at(out, 'deleted'), { kind: 'Status', status: 'Success' });
  const gone = at(out, 'after_delete');
  assert.equal(gone.http, 404);
  assert.equal(at(gone, 'body').reason, 'NotFound');
  assert.equal(at(gone, 'body').message, 'configmaps "py-cm" not found');

  const invalid = at(out, 'invalid');
  assert.equal(invalid.http, 422);
  assert.equal(at(invalid, 'body').reason, 'Invalid');
  assert.match(
    String(at(invalid, 'body').message),
    /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
  );
  const causes = at(at(invalid, 'body'), 'details').causes as Json[];
  assert.deepEqual(
    causes.map((c) => [c.reason, c.field]),
    [['FieldValueInvalid', 'metadata.name']],
  );

  // What the script did is what the server holds.
  const left = await server.cp.registry.lookup('', 'v1', 'configmaps')!.store.list('py-crud');
  const names = left.items.map((c) => c.metadata?.name);
  assert.ok(names.includes('py-b') && names.includes('py-other') && !names.includes('py-cm'), names.join(','));
});

test('python client: watch.Watch().stream sees ADDED, MODIFIED, DELETED and ends at timeout_seconds', async () => {
  const store = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
  const ns = server.cp.registry.lookup('', 'v1', 'namespaces')!.store;
  await ns.create(undefined, { metadata: { name: 'py-watch' } });
  await store.create('py-watch', { metadata: { name: 'pre' }, data: { p: '1' } });
  const out = await python('watch.py', 'py-watch');
  const events = out.events as { type: string; name: string; rv: string; data: Json | null; kind: string; api_version: string; class: string }[];
  assert.deepEqual(
    events.map((e) => [e.type, e.name]),
    [
      ['ADDED', 'pre'],
      ['ADDED', 'w'],
      ['MODIFIED', 'w'],
      ['DELETED', 'w'],
    ],
    JSON.stringify(events),
  );
  assert.deepEqual(
    events.map((e) => e.data?.n ?? null),
    [null, '1', '2', '2'],
  );
  assert.ok(events.every((e) => e.kind === 'ConfigMap' && e.api_version === 'v1' && e.class === 'V1ConfigMap'));
  const rvs = events.map((e) => Number(e.rv));
  assert.ok(rvs[1]! > rvs[0]! && rvs[2]! > rvs[1]! && rvs[3]! > rvs[2]!, `resourceVersions increase: ${rvs.join(',')}`);
  assert.equal(out.watch_resource_version, events[3]!.rv, "the client tracks the last event's resourceVersion");
  const elapsed = Number(out.elapsed);
  // Not before the 5 s are up; a watch the server never ended would leave the client waiting (a hang, not a figure checked here).
  assert.ok(elapsed >= 4.5, `the server ends the watch after timeoutSeconds=5 (took ${elapsed}s)`);
});

test('python client: a watch from a compacted resourceVersion raises ApiException 410 Expired', async () => {
  const store = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
  const ns = server.cp.registry.lookup('', 'v1', 'namespaces')!.store;
  await ns.create(undefined, { metadata: { name: 'py-expired' } });
  const cm = await store.create('py-expired', { metadata: { name: 'old' } });
  const oldRv = cm.object.metadata!.resourceVersion!;
  await store.update('py-expired', 'old', (cur) => ({ ...cur!, data: { changed: 'yes' } }));
  await server.cp.storage.compact(await server.cp.storage.currentRevision());
  const out = await python('watch_expired.py', 'py-expired', oldRv);
  assert.deepEqual(out.events, []);
  const err = at(out, 'error');
  assert.equal(err.status, 410);
  assert.match(String(err.reason), /^Expired: too old resource version: \d+ \(\d+\)$/);
});
