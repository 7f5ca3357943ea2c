// Two kplane servers on one etcd, a create load through A, and etcd killed with SIGKILL and started
// again, a few rounds. Afterwards each server's list holds exactly etcd's keys and revisions, and a
// watch through each server, resumed from its last resourceVersion whenever it ends, saw exactly
// etcd's history: no acknowledged write missing, none twice, in order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EtcdStorage } from '../../src/storage/etcd/etcd-storage.js';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient, type RawStream } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

const NS = 'default';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const ROUNDS = 4;

interface Item {
  metadata: { name: string; resourceVersion: string };
}

interface SeenEvent {
  readonly type: string;
  readonly name: string;
  readonly rv: number;
}

/**
 * A watch that, like a reflector, resumes from the last resourceVersion it saw (an event's or a
 * bookmark's) whenever the stream ends or cannot be opened; a 410 would be a test failure.
 */
function followWatch(client: RawClient, fromRv: string): { events: SeenEvent[]; errors: string[]; stop(): void } {
  const events: SeenEvent[] = [];
  const errors: string[] = [];
  let rv = fromRv;
  let stopped = false;
  let current: RawStream | undefined;
  void (async () => {
    while (!stopped) {
      try {
        current = await client.stream({ path: `${CMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=300`, timeoutMs: 5_000 });
      } catch {
        await sleep(100);
        continue;
      }
      if (current.status !== 200) {
        errors.push(`watch from ${rv}: HTTP ${current.status}`);
        current.close();
        await sleep(100);
        continue;
      }
      let parsed = 0;
      const drain = (final: boolean): void => {
        const text = current!.data().toString('utf8');
        const lines = text.split('\n');
        const complete = final ? lines : lines.slice(0, -1);
        for (; parsed < complete.length; parsed++) {
          const line = complete[parsed]!.trim();
          if (!line) continue;
          const ev = JSON.parse(line) as {
            type: string;
            object: { kind?: string; code?: number; message?: string; metadata?: { name?: string; resourceVersion?: string } };
          };
          if (ev.type === 'ERROR') {
            errors.push(`watch from ${rv}: ${ev.object.code} ${ev.object.message}`);
            continue;
          }
          const evRv = ev.object.metadata?.resourceVersion ?? rv;
          if (ev.type !== 'BOOKMARK') events.push({ type: ev.type, name: ev.object.metadata?.name ?? '', rv: Number(evRv) });
          rv = evRv;
        }
      };
      const poll = setInterval(() => drain(false), 50);
      await current.ended;
      clearInterval(poll);
      drain(true);
      if (!stopped) await sleep(100);
    }
  })();
  return {
    events,
    errors,
    stop() {
      stopped = true;
      current?.close();
    },
  };
}

describe('the watch cache through etcd outages', { timeout: 150_000 }, () => {
  let etcd: RunningEtcd;
  let a: TestServer;
  let b: TestServer;
  let ca: RawClient;
  let cb: RawClient;
  let direct: EtcdStorage;

  before(async () => {
    ensureTools();
    etcd = await startEtcd();
    a = await startTestServer({ storage: { etcd: etcd.endpoint } });
    b = await startTestServer({ storage: { etcd: etcd.endpoint } });
    ca = new RawClient(a.url, adminCredentials(a.dataDir));
    cb = new RawClient(b.url, adminCredentials(b.dataDir));
    direct = new EtcdStorage({ endpoints: [etcd.endpoint] });
  });
  after(async () => {
    ca?.close();
    cb?.close();
    await direct?.close();
    await Promise.all([a, b].filter(Boolean).map((s) => Promise.race([s.stop(), new Promise((r) => setTimeout(r, 5_000))])));
    await etcd?.stop();
  });

  /** name → resourceVersion as etcd holds the namespace's ConfigMaps now. */
  async function etcdContent(): Promise<Map<string, number>> {
    const listed = await direct.list(`/registry/configmaps/${NS}/`);
    assert.equal(listed.more, false);
    return new Map(listed.items.map((kv) => [kv.key.slice(`/registry/configmaps/${NS}/`.length), kv.modRevision]));
  }

  async function serverContent(client: RawClient): Promise<Map<string, number>> {
    const res = await client.request({ path: CMS, timeoutMs: 10_000 });
    assert.equal(res.status, 200, res.text().slice(0, 300));
    return new Map(res.json<{ items: Item[] }>().items.map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
  }

  it('kill -9 etcd during a create load, restart it: caches and resumed watches hold exactly what etcd holds', async (t) => {
    const start = await ca.request({ path: CMS });
    assert.equal(start.status, 200);
    const startRv = start.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
    const listA = new RawClient(a.url, adminCredentials(a.dataDir), { maxSockets: 32 });
    const listB = new RawClient(b.url, adminCredentials(b.dataDir), { maxSockets: 32 });
    t.after(() => {
      listA.close();
      listB.close();
    });
    const watchA = followWatch(ca, startRv);
    const watchB = followWatch(cb, startRv);
    t.after(() => {
      watchA.stop();
      watchB.stop();
    });

    // The load: creates (retried while etcd is down) and lists through both servers,
    // which is what makes a cache that lags ask etcd how far it has to catch up.
    const acknowledged = new Map<string, number>();
    let running = true;
    let next = 0;
    const writer = async (client: RawClient): Promise<void> => {
      while (running) {
        const name = `load-${next++}`;
        for (;;) {
          const res = await client
            .request({
              method: 'POST',
              path: CMS,
              headers: JSON_CT,
              body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: name } }),
              timeoutMs: 10_000,
            })
            .catch(() => undefined);
          if (res?.status === 201) {
            acknowledged.set(name, Number(res.json<Item>().metadata.resourceVersion));
            break;
          }
          // 409: an earlier try went through although its answer was lost.
          if (res?.status === 409 || !running) break;
          await sleep(50);
        }
      }
    };
    // Lists are fired without waiting for answers (a list waits while the cache catches up), so
    // some arrive in the moments after a cache's watch on etcd is re-established.
    const lister = async (client: RawClient): Promise<void> => {
      let inFlight = 0;
      while (running) {
        if (inFlight < 32) {
          inFlight++;
          void client
            .request({ path: `${CMS}?limit=1`, timeoutMs: 10_000 })
            .catch(() => undefined)
            .finally(() => inFlight--);
        }
        await sleep(15);
      }
    };
    const load = [writer(ca), writer(ca), writer(cb), lister(listA), lister(listB)];

    for (let round = 0; round < ROUNDS; round++) {
      await sleep(1_000);
      etcd.kill();
      await sleep(1_500);
      await etcd.restart();
      await sleep(2_500);
    }
    running = false;
    await Promise.all(load);
    assert.ok(acknowledged.size > 20, `the load got only ${acknowledged.size} creates through`);

    const inEtcd = await etcdContent();
    for (const [name, rv] of acknowledged) assert.equal(inEtcd.get(name), rv, `acknowledged ${name}@${rv} is in etcd`);
    const created = [...inEtcd].filter(([, rv]) => rv > Number(startRv)).sort((x, y) => x[1] - y[1]);

    for (const [server, client, watch] of [
      ['A', ca, watchA],
      ['B', cb, watchB],
    ] as const) {
      // Lists: exactly etcd's keys at etcd's revisions.
      await eventually(
        15_000,
        `server ${server}'s list holds etcd's content`,
        async () => {
          const got = await serverContent(client);
          const missing = [...inEtcd].filter(([n, rv]) => got.get(n) !== rv);
          const extra = [...got].filter(([n]) => !inEtcd.has(n));
          if (missing.length === 0 && extra.length === 0) return true;
          throw new Error(`missing or stale ${JSON.stringify(missing.slice(0, 10))} (${missing.length}), extra ${JSON.stringify(extra.slice(0, 10))}`);
        },
        200,
      );
      // Watch: etcd's history since the start, each create once, in order.
      await eventually(
        15_000,
        `the watch through ${server} saw etcd's history`,
        async () => {
          const seen = watch.events.map((e) => `${e.type} ${e.name}@${e.rv}`);
          const want = created.map(([n, rv]) => `ADDED ${n}@${rv}`);
          if (seen.length >= want.length) return seen;
          const got = new Set(seen);
          throw new Error(
            `${seen.length} of ${want.length} events; first missing: ${want
              .filter((w) => !got.has(w))
              .slice(0, 10)
              .join(', ')}`,
          );
        },
        200,
      );
      assert.deepEqual(
        watch.events.map((e) => `${e.type} ${e.name}@${e.rv}`),
        created.map(([n, rv]) => `ADDED ${n}@${rv}`),
        `the watch through ${server} saw exactly etcd's history`,
      );
      assert.deepEqual(watch.errors, [], `the watch through ${server} never had to start over`);
      // The self-check (every 2 s on test servers) agrees: a passed configmaps check since, none failed.
      const metrics = async (): Promise<string> => (await client.request({ path: '/metrics' })).text();
      const passed = (text: string): number =>
        Number(/apiserver_storage_consistency_checks_total\{group="",resource="configmaps",status="success"\} (\d+)/.exec(text)?.[1] ?? 0);
      const before = passed(await metrics());
      const text = await eventually(15_000, `a later self-check on ${server}`, async () => {
        const t = await metrics();
        return passed(t) > before ? t : undefined;
      });
      assert.doesNotMatch(text, /apiserver_storage_consistency_checks_total\{[^}]*status="failure"\}/);
      const ready = await client.request({ path: '/readyz?verbose' });
      assert.equal(ready.status, 200, ready.text());
      assert.match(ready.text(), /\[\+\]watch-cache-consistency ok/);
    }
  });
});
