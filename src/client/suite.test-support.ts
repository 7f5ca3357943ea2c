// One behaviour suite for every KubeClient implementation (HTTPS over HTTP/2 and HTTP/1.1,
// loopback): CRUD, Status errors, watch order, 410 on a compacted resourceVersion, discovery.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import type { Storage } from '../storage/storage.js';
import { StatusError } from '../apimachinery/errors.js';
import type { GVR, KubeClient, WatchEvent } from './types.js';

export const configmaps: GVR = { group: '', version: 'v1', resource: 'configmaps' };
export const namespaces: GVR = { group: '', version: 'v1', resource: 'namespaces' };
export const leases: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

/** Rejects with a clear message instead of letting a stuck await hang the test file. */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`timed out after ${ms} ms: ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function rejectsWithStatus(p: Promise<unknown>, code: number, reason: string): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected a StatusError, got ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.reason, reason);
    assert.equal(e.status.kind, 'Status');
    return e;
  }
  assert.fail(`expected a ${code} ${reason}`);
}

function cm(ns: string, name: string, data: Record<string, string>, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...(labels ? { labels } : {}) }, data };
}

/** What the suite needs of the server under test: its storage, to compact history (test/support's TestServer has it). */
interface ServerUnderTest {
  readonly cp: { readonly storage: Storage };
}

export function clientSuite(label: string, env: () => { server: ServerUnderTest; client: KubeClient }): void {
  let seq = 0;
  const newNamespace = async (client: KubeClient): Promise<string> => {
    const name = `${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${process.pid}-${++seq}`;
    await client.create(namespaces, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  };

  test(`${label}: create, get, list, update, patch, delete`, async () => {
    const { client } = env();
    const ns = await newNamespace(client);
    const created = await client.create(configmaps, ns, cm(ns, 'a', { k: 'v' }, { app: 'x' }));
    assert.ok(created.metadata?.uid);
    await client.create(configmaps, ns, cm(ns, 'b', { k: 'w' }));
    const got = await client.get(configmaps, ns, 'a');
    assert.deepEqual(got.data, { k: 'v' });
    const all = await client.list(configmaps, ns);
    assert.deepEqual(all.items.map((i) => i.metadata?.name).sort(), ['a', 'b']);
    assert.ok(all.metadata.resourceVersion);
    const selected = await client.list(configmaps, ns, { labelSelector: 'app=x' });
    assert.deepEqual(
      selected.items.map((i) => i.metadata?.name),
      ['a'],
    );
    const page1 = await client.list(configmaps, ns, { limit: 1 });
    assert.equal(page1.items.length, 1);
    assert.ok(page1.metadata.continue);
    const page2 = await client.list(configmaps, ns, { limit: 1, continue: page1.metadata.continue });
    assert.deepEqual([...page1.items, ...page2.items].map((i) => i.metadata?.name).sort(), ['a', 'b']);

    const updated = await client.update(configmaps, ns, { ...got, data: { k: 'v2' } });
    assert.deepEqual(updated.data, { k: 'v2' });
    assert.notEqual(updated.metadata?.resourceVersion, got.metadata?.resourceVersion);
    const merged = await client.patch(configmaps, ns, 'a', 'merge', { data: { m: '1' } });
    assert.deepEqual(merged.data, { k: 'v2', m: '1' });
    const jsonPatched = await client.patch(configmaps, ns, 'a', 'json', [{ op: 'remove', path: '/data/k' }]);
    assert.deepEqual(jsonPatched.data, { m: '1' });
    const strategic = await client.patch(configmaps, ns, 'a', 'strategic', { metadata: { labels: { s: 'y' } } });
    assert.deepEqual(strategic.metadata?.labels, { app: 'x', s: 'y' });
    // Server-side apply is not served yet (415); the client refuses an apply without a manager.
    assert.throws(() => client.patch(configmaps, ns, 'a', 'apply', {}), TypeError);

    const status = await client.delete(configmaps, ns, 'a');
    assert.equal(status.kind, 'Status');
    await rejectsWithStatus(client.get(configmaps, ns, 'a'), 404, 'NotFound');
    const removed = await client.deleteCollection(configmaps, ns, { labelSelector: '' });
    assert.equal(removed.items.length, 1);
    assert.equal((await client.list(configmaps, ns)).items.length, 0);
  });

  test(`${label}: StatusErrors carry the server's Status (404, 409 exists, 409 conflict, 422)`, async () => {
    const { client } = env();
    const ns = await newNamespace(client);
    const nf = await rejectsWithStatus(client.get(configmaps, ns, 'missing'), 404, 'NotFound');
    assert.match(nf.message, /configmaps "missing" not found/);
    assert.equal(nf.status.details?.name, 'missing');
    const first = await client.create(configmaps, ns, cm(ns, 'dup', {}));
    await rejectsWithStatus(client.create(configmaps, ns, cm(ns, 'dup', {})), 409, 'AlreadyExists');
    await client.update(configmaps, ns, { ...first, data: { x: '1' } });
    await rejectsWithStatus(client.update(configmaps, ns, { ...first, data: { x: '2' } }), 409, 'Conflict');
    await rejectsWithStatus(client.create(configmaps, ns, cm(ns, 'Not_Valid', {})), 422, 'Invalid');
    await rejectsWithStatus(client.delete(configmaps, ns, 'dup', { preconditions: { uid: 'not-the-uid' } }), 409, 'Conflict');
  });

  test(`${label}: watch delivers ADDED, MODIFIED, DELETED in order from a list's resourceVersion`, async () => {
    const { client } = env();
    const ns = await newNamespace(client);
    const list = await client.list(configmaps, ns);
    const abort = new AbortController();
    const seen: WatchEvent[] = [];
    const done = (async () => {
      for await (const ev of client.watch(configmaps, ns, {
        resourceVersion: list.metadata.resourceVersion!,
        allowWatchBookmarks: true,
        signal: abort.signal,
      })) {
        if (ev.type === 'BOOKMARK') continue;
        seen.push(ev);
        if (ev.type === 'DELETED') break;
      }
    })();
    const c = await client.create(configmaps, ns, cm(ns, 'w', { n: '1' }));
    await client.patch(configmaps, ns, 'w', 'merge', { data: { n: '2' } });
    await client.delete(configmaps, ns, 'w');
    await within(10_000, 'watch events', done);
    abort.abort();
    assert.deepEqual(
      seen.map((e) => [e.type, e.object.metadata?.name, (e.object.data as Record<string, string>).n]),
      [
        ['ADDED', 'w', '1'],
        ['MODIFIED', 'w', '2'],
        ['DELETED', 'w', '2'],
      ],
    );
    assert.equal(seen[0]!.object.metadata?.uid, c.metadata?.uid);
  });

  test(`${label}: aborting the signal ends a quiet watch without an error`, async () => {
    const { client } = env();
    const ns = await newNamespace(client);
    const abort = new AbortController();
    const it = (async () => {
      let n = 0;
      for await (const ev of client.watch(configmaps, ns, { signal: abort.signal })) if (ev.type !== 'BOOKMARK') n++;
      return n;
    })();
    setTimeout(() => abort.abort(), 200);
    assert.equal(await within(5_000, 'watch end on abort', it), 0);
  });

  test(`${label}: a watch from a compacted resourceVersion throws 410 Expired from the iterator`, async () => {
    const { client, server } = env();
    const ns = await newNamespace(client);
    const old = (await client.create(configmaps, ns, cm(ns, 'old', {}))).metadata!.resourceVersion!;
    await client.patch(configmaps, ns, 'old', 'merge', { data: { a: '1' } });
    await client.patch(configmaps, ns, 'old', 'merge', { data: { a: '2' } });
    await server.cp.storage.compact(await server.cp.storage.currentRevision());
    const abort = new AbortController();
    const iterate = async (): Promise<void> => {
      for await (const _ of client.watch(configmaps, ns, { resourceVersion: old, signal: abort.signal })) void _;
    };
    const err = await rejectsWithStatus(within(5_000, '410 watch', iterate()), 410, 'Expired');
    assert.match(err.message, /too old resource version/);
    abort.abort();
  });

  test(`${label}: discovery lists core and coordination.k8s.io resources`, async () => {
    const { client } = env();
    const lists = await client.discovery();
    const core = lists.find((l) => l.groupVersion === 'v1');
    assert.ok(core?.resources.some((r) => r.name === 'configmaps' && r.namespaced && r.kind === 'ConfigMap'));
    const coord = lists.find((l) => l.groupVersion === 'coordination.k8s.io/v1');
    assert.ok(coord?.resources.some((r) => r.name === 'leases'));
  });
}
