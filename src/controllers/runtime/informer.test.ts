import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../apimachinery/types.js';
import { createHttpsClient } from '../../client/https.js';
import type { GVR, KubeClient, WatchEvent, WatchOptions } from '../../client/types.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { FakeClock } from './clock.js';
import { Informer, keyOf, Store } from './informer.js';

const configmaps: GVR = { group: '', version: 'v1', resource: 'configmaps' };
const namespaces: GVR = { group: '', version: 'v1', resource: 'namespaces' };

let server: TestServer;
let client: KubeClient;
let seq = 0;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

async function newNamespace(): Promise<string> {
  const name = `inf-${process.pid}-${++seq}`;
  await client.create(namespaces, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

const cm = (ns: string, name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});

/** Polls `cond` every 20 ms until it holds or `ms` pass (then fails with `what`). */
async function eventually(ms: number, what: string, cond: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The real client, with a switch that cuts the informer off: open watches end and new ones wait
 * until reconnected (a network partition as the informer sees it).
 */
class PartitionableClient {
  private cut: Promise<void> | undefined;
  private heal: (() => void) | undefined;
  private readonly open = new Set<AbortController>();
  readonly watchRVs: (string | undefined)[] = [];
  readonly client: KubeClient;

  constructor(inner: KubeClient) {
    const self = this;
    this.client = Object.create(inner, {
      watch: {
        value<T extends KubeObject>(gvr: GVR, ns: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<T>> {
          return {
            async *[Symbol.asyncIterator]() {
              while (self.cut) await self.cut;
              self.watchRVs.push(opts.resourceVersion);
              const local = new AbortController();
              const onAbort = (): void => local.abort();
              opts.signal.addEventListener('abort', onAbort);
              self.open.add(local);
              try {
                yield* inner.watch<T>(gvr, ns, { ...opts, signal: local.signal });
              } finally {
                self.open.delete(local);
                opts.signal.removeEventListener('abort', onAbort);
              }
            },
          };
        },
      },
    }) as KubeClient;
  }

  disconnect(): void {
    this.cut = new Promise((r) => (this.heal = r));
    for (const c of this.open) c.abort();
  }

  reconnect(): void {
    const heal = this.heal;
    this.cut = undefined;
    heal?.();
  }
}

test('Store indexes by namespace and custom index functions, and keeps them in step with updates', () => {
  const s = new Store<KubeObject>({ byApp: (o) => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []) });
  const a = { metadata: { name: 'a', namespace: 'n1', labels: { app: 'x' } } };
  const b = { metadata: { name: 'b', namespace: 'n2', labels: { app: 'x' } } };
  s.upsert(keyOf(a), a);
  s.upsert(keyOf(b), b);
  assert.deepEqual(s.byIndex('namespace', 'n1').map(keyOf), ['n1/a']);
  assert.deepEqual(s.byIndex('byApp', 'x').map(keyOf).sort(), ['n1/a', 'n2/b']);
  s.upsert('n1/a', { metadata: { name: 'a', namespace: 'n1', labels: { app: 'y' } } });
  assert.deepEqual(s.byIndex('byApp', 'x').map(keyOf), ['n2/b']);
  s.remove('n2/b');
  assert.deepEqual(s.byIndex('byApp', 'x'), []);
  assert.throws(() => s.byIndex('nope', 'x'));
});

test('informer: paged initial list, then adds, updates and deletes reach the cache and the handlers', async () => {
  const ns = await newNamespace();
  for (let i = 0; i < 7; i++) await client.create(configmaps, ns, cm(ns, `pre-${i}`));
  const inf = new Informer({ client, gvr: configmaps, namespace: ns, pageSize: 3 });
  const log: string[] = [];
  inf.addEventHandler({
    onAdd: (o, initial) => log.push(`add ${o.metadata?.name}${initial ? ' (initial)' : ''}`),
    onUpdate: (old, o) => log.push(`update ${o.metadata?.name} ${(old.data as Record<string, string>).v ?? '-'}→${(o.data as Record<string, string>).v}`),
    onDelete: (o, unknown) => log.push(`delete ${o.metadata?.name}${unknown ? ' (unknown)' : ''}`),
  });
  const abort = new AbortController();
  const running = inf.run(abort.signal);
  try {
    assert.equal(await inf.waitForSync(AbortSignal.timeout(10_000)), true);
    assert.equal(inf.hasSynced(), true);
    assert.equal(inf.store.size, 7);
    assert.equal(log.filter((l) => l.endsWith('(initial)')).length, 7);
    log.length = 0;
    await client.create(configmaps, ns, cm(ns, 'new', { v: '1' }));
    await client.patch(configmaps, ns, 'new', 'merge', { data: { v: '2' } });
    await client.delete(configmaps, ns, 'pre-0');
    await eventually(10_000, 'events reach the cache', () => log.length === 3);
    assert.deepEqual(log, ['add new', 'update new 1→2', 'delete pre-0']);
    assert.equal((inf.store.get(`${ns}/new`)?.data as Record<string, string>).v, '2');
    assert.equal(inf.store.get(`${ns}/pre-0`), undefined);
    assert.equal(inf.store.byIndex('namespace', ns).length, 7);
    // A handler registered late is told about everything already cached.
    let late = 0;
    inf.addEventHandler({ onAdd: () => late++ });
    assert.equal(late, 7);
  } finally {
    abort.abort();
    await running;
  }
});

test('informer: after a disconnect it re-watches from the last resourceVersion it saw', async () => {
  const ns = await newNamespace();
  const pc = new PartitionableClient(client);
  const inf = new Informer({ client: pc.client, gvr: configmaps, namespace: ns, backoffInitialMs: 10 });
  const abort = new AbortController();
  const running = inf.run(abort.signal);
  try {
    await inf.waitForSync(AbortSignal.timeout(10_000));
    await client.create(configmaps, ns, cm(ns, 'a'));
    await eventually(10_000, 'a cached', () => inf.store.size === 1);
    const seenRV = inf.lastSyncResourceVersion;
    pc.disconnect();
    await client.create(configmaps, ns, cm(ns, 'b'));
    pc.reconnect();
    await eventually(10_000, 'b cached after the re-watch', () => inf.store.get(`${ns}/b`) !== undefined);
    assert.equal(inf.listCount, 1, 'no relist was needed');
    assert.equal(pc.watchRVs.at(-1), seenRV);
  } finally {
    abort.abort();
    await running;
  }
});

test('informer: a 410 after compaction while disconnected makes it relist and converge (deletes included)', async () => {
  const ns = await newNamespace();
  const pc = new PartitionableClient(client);
  const inf = new Informer({ client: pc.client, gvr: configmaps, namespace: ns, backoffInitialMs: 10 });
  const deletes: string[] = [];
  inf.addEventHandler({ onDelete: (o, unknown) => deletes.push(`${o.metadata?.name}${unknown ? ' (unknown)' : ''}`) });
  const abort = new AbortController();
  const running = inf.run(abort.signal);
  try {
    await inf.waitForSync(AbortSignal.timeout(10_000));
    await client.create(configmaps, ns, cm(ns, 'keep', { v: '1' }));
    await client.create(configmaps, ns, cm(ns, 'gone'));
    await eventually(10_000, 'both cached', () => inf.store.size === 2);
    pc.disconnect();
    await client.patch(configmaps, ns, 'keep', 'merge', { data: { v: '2' } });
    await client.delete(configmaps, ns, 'gone');
    await client.create(configmaps, ns, cm(ns, 'born'));
    await server.cp.storage.compact(await server.cp.storage.currentRevision());
    pc.reconnect();
    await eventually(10_000, 'cache converges after the relist', () => {
      const keep = inf.store.get(`${ns}/keep`);
      return inf.store.size === 2 && (keep?.data as Record<string, string> | undefined)?.v === '2' && inf.store.get(`${ns}/born`) !== undefined;
    });
    assert.equal(inf.listCount, 2, 'one relist after the 410');
    assert.deepEqual(deletes, ['gone (unknown)']);
    // And it is watching again: new changes still arrive.
    await client.create(configmaps, ns, cm(ns, 'after'));
    await eventually(10_000, 'watching after relist', () => inf.store.get(`${ns}/after`) !== undefined);
  } finally {
    abort.abort();
    await running;
  }
});

test('informer: resync re-delivers cached objects as updates on the (fake) clock', async () => {
  const ns = await newNamespace();
  await client.create(configmaps, ns, cm(ns, 'r'));
  const clock = new FakeClock();
  const inf = new Informer({ client, gvr: configmaps, namespace: ns, resyncPeriodMs: 60_000, clock });
  const updates: string[] = [];
  inf.addEventHandler({ onUpdate: (old, o) => updates.push(`${o.metadata?.name} same=${old === o}`) });
  const abort = new AbortController();
  const running = inf.run(abort.signal);
  try {
    await inf.waitForSync(AbortSignal.timeout(10_000));
    clock.step(59_999);
    assert.deepEqual(updates, []);
    clock.step(1);
    assert.deepEqual(updates, ['r same=true']);
    clock.step(60_000);
    assert.equal(updates.length, 2);
  } finally {
    abort.abort();
    await running;
  }
});

test('informer: waitForSync answers false when its signal aborts first', async () => {
  const inf = new Informer({ client, gvr: configmaps });
  const abort = new AbortController();
  const p = inf.waitForSync(abort.signal);
  abort.abort();
  assert.equal(await p, false);
});
