// Two kplane servers on one real etcd: shared reads, cross-server watches in order, optimistic
// concurrency across servers; then etcd dies: /readyz goes red and requests fail fast with a Status.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane } from '../../src/controlplane/controlplane.js';
import { etcd as etcdStorage, memory } from '../../src/storage/factories.js';
import { freePort, startEtcd, type RunningEtcd } from '../support/etcd.js';
import { adminCredentials, RawClient, watchLines, type KubeStatus, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };

interface Obj {
  kind?: string;
  metadata: { name?: string; resourceVersion?: string; uid?: string };
  data?: Record<string, string>;
  items?: Obj[];
}

function ok(res: RawResponse, code = 200): Obj {
  assert.equal(res.status, code, res.text().slice(0, 500));
  return res.json<Obj>();
}

describe('two servers on one etcd', { timeout: 90_000 }, () => {
  let etcd: RunningEtcd;
  let a: TestServer;
  let b: TestServer;
  let ca: RawClient;
  let cb: RawClient;

  before(async () => {
    ensureTools();
    etcd = await startEtcd();
    a = await startTestServer({ storage: { etcd: etcd.endpoint } });
    b = await startTestServer({ storage: { etcd: etcd.endpoint } });
    ca = new RawClient(a.url, adminCredentials(a.dataDir));
    cb = new RawClient(b.url, adminCredentials(b.dataDir));
  });
  after(async () => {
    ca?.close();
    cb?.close();
    // Servers first (they hold etcd connections), each stop bounded.
    await Promise.all([a, b].filter(Boolean).map((s) => Promise.race([s.stop(), new Promise((r) => setTimeout(r, 5_000))])));
    await etcd?.stop();
  });

  it('an object created through A is readable through B', async () => {
    const created = ok(
      await ca.request({
        method: 'POST',
        path: CMS,
        headers: JSON_CT,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { from: 'a' } }),
      }),
      201,
    );
    const got = ok(await cb.request({ path: `${CMS}/shared` }));
    assert.equal(got.metadata.uid, created.metadata.uid);
    assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.deepEqual(got.data, { from: 'a' });
    // A consistent list on B sees it too (served from B's watch cache once it caught up).
    const list = ok(await cb.request({ path: CMS }));
    assert.ok(list.items?.some((i) => i.metadata.uid === created.metadata.uid));
  });

  it('a watch on B sees create, update and delete made through A, in order', async () => {
    const rv = ok(await cb.request({ path: CMS })).metadata.resourceVersion!;
    const w = await cb.stream({ path: `${CMS}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dw1`, timeoutMs: 5_000 });
    try {
      assert.equal(w.status, 200);
      const c = ok(
        await ca.request({
          method: 'POST',
          path: CMS,
          headers: JSON_CT,
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' }, data: { n: '1' } }),
        }),
        201,
      );
      const u = ok(await ca.request({ method: 'PUT', path: `${CMS}/w1`, headers: JSON_CT, body: JSON.stringify({ ...c, data: { n: '2' } }) }));
      ok(await ca.request({ method: 'DELETE', path: `${CMS}/w1` }));
      const events = await w.waitFor((d) => {
        const evs = watchLines(d);
        return evs.length >= 3 ? evs : undefined;
      });
      assert.deepEqual(
        events.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.equal(events[0]!.object.metadata?.resourceVersion, c.metadata.resourceVersion);
      assert.equal(events[1]!.object.metadata?.resourceVersion, u.metadata.resourceVersion);
      assert.deepEqual(events[1]!.object.data, { n: '2' });
      const rvs = events.map((e) => Number(e.object.metadata?.resourceVersion));
      assert.ok(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `increasing resourceVersions: ${rvs.join(', ')}`);
    } finally {
      w.close();
    }
  });

  it('optimistic concurrency across servers: a stale update through B after A updated → 409', async () => {
    const c = ok(
      await ca.request({
        method: 'POST',
        path: CMS,
        headers: JSON_CT,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'occ' }, data: { v: '0' } }),
      }),
      201,
    );
    const stale = ok(await cb.request({ path: `${CMS}/occ` }));
    assert.equal(stale.metadata.resourceVersion, c.metadata.resourceVersion);
    ok(await ca.request({ method: 'PUT', path: `${CMS}/occ`, headers: JSON_CT, body: JSON.stringify({ ...c, data: { v: 'a' } }) }));
    const res = await cb.request({ method: 'PUT', path: `${CMS}/occ`, headers: JSON_CT, body: JSON.stringify({ ...stale, data: { v: 'b' } }) });
    assert.equal(res.status, 409, res.text());
    const s = res.json<KubeStatus>();
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'Conflict');
    assert.equal(
      s.message,
      'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.deepEqual(ok(await cb.request({ path: `${CMS}/occ` })).data, { v: 'a' });
    // Creating the same name through B is AlreadyExists.
    const dup = await cb.request({
      method: 'POST',
      path: CMS,
      headers: JSON_CT,
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'occ' } }),
    });
    assert.equal(dup.status, 409);
    assert.equal(dup.json<KubeStatus>().reason, 'AlreadyExists');
  });

  it('when etcd dies, /readyz turns red and requests fail fast with a Status', async () => {
    const ready = await ca.request({ path: '/readyz?verbose' });
    assert.equal(ready.status, 200, ready.text());
    assert.match(ready.text(), /\[\+\]etcd ok/);
    etcd.kill();
    // Readiness: non-200 with the etcd check failing, within a few probe periods.
    const deadline = Date.now() + 15_000;
    let last: RawResponse | undefined;
    for (;;) {
      last = await ca.request({ path: '/readyz?verbose', timeoutMs: 10_000 });
      if (last.status !== 200) break;
      assert.ok(Date.now() < deadline, 'readyz stayed 200 after etcd was killed');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(last.status, 500, last.text());
    assert.match(last.text(), /\[-\]etcd failed/);
    assert.match(last.text(), /readyz check failed/);
    const healthz = await ca.request({ path: '/healthz', timeoutMs: 10_000 });
    assert.equal(healthz.status, 500);
    // A GET needs etcd (gets are not served from the watch cache): a 5xx Status in bounded time.
    for (const [client, what] of [
      [ca, 'A'],
      [cb, 'B'],
    ] as const) {
      // timeoutMs: an answer, not a hang (the client gives up after 30 s)
      const res = await client.request({ path: `${CMS}/shared`, timeoutMs: 30_000 });
      assert.equal(res.status, 503, `${what}: ${res.text()}`);
      const s = res.json<KubeStatus>();
      assert.equal(s.reason, 'ServiceUnavailable');
      assert.equal(s.kind, 'Status');
      assert.equal(s.status, 'Failure');
      assert.equal(s.code, res.status);
    }
    // A write fails the same way and is not acknowledged.
    const w = await ca.request({
      method: 'POST',
      path: CMS,
      headers: JSON_CT,
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during-outage' } }),
      timeoutMs: 30_000,
    });
    assert.ok(w.status >= 500 && w.status < 600, `${w.status} ${w.text()}`);
    assert.equal(w.json<KubeStatus>().kind, 'Status');
  });
});

describe('starting before etcd answers', { timeout: 90_000 }, () => {
  it('start() waits for an etcd that comes up late, saying so; without one it fails with what to do', async () => {
    ensureTools();
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-etcd-late-'));
    const logs: string[] = [];
    let etcd: RunningEtcd | undefined;
    try {
      // Nothing listens there: the start fails after the wait, naming the endpoint and the fix.
      const never = await createControlPlane({
        storage: etcdStorage({ endpoints: [endpoint] }),
        dataDir,
        port: 0,
        storageStartTimeoutMs: 1_500,
        log: (m) => logs.push(m),
      });
      await assert.rejects(never.start(), (e: Error) => {
        assert.match(
          e.message,
          new RegExp(
            `^storage does not answer after \\d+ s: etcd at ${endpoint.replace(/[.:/]/g, '\\$&')} is not answering: .+; start etcd, or point kplane at a running one \\(kplane serve --etcd-servers`,
          ),
        );
        return true;
      });
      assert.ok(
        logs.some((l) => l.startsWith('storage: waiting for etcd to answer (up to 2 s): etcd at ')),
        logs.join('\n'),
      );
      await never.stop();

      // etcd starts 2 s into the wait: the server comes up and serves.
      logs.length = 0;
      const late = await createControlPlane({
        storage: etcdStorage({ endpoints: [endpoint] }),
        dataDir,
        port: 0,
        storageStartTimeoutMs: 60_000,
        log: (m) => logs.push(m),
      });
      const starting = late.start();
      await new Promise((r) => setTimeout(r, 2_000));
      etcd = await startEtcd({ clientPort: port });
      await starting;
      try {
        assert.ok(
          logs.some((l) => l.startsWith('storage: waiting for etcd to answer (up to 60 s)')),
          logs.join('\n'),
        );
        assert.ok(
          logs.some((l) => /^storage: etcd answers after \d+\.\d s$/.test(l)),
          logs.join('\n'),
        );
        const client = new RawClient(late.url, adminCredentials(dataDir));
        try {
          assert.equal((await client.request({ path: '/api/v1/namespaces/default' })).status, 200);
        } finally {
          client.close();
        }
      } finally {
        await late.stop();
      }
    } finally {
      await etcd?.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('a port in use is said as such, with what to do, before anything is created', async () => {
    const a = await startTestServer({ storage: 'memory' });
    try {
      const parent = await mkdtemp(join(tmpdir(), 'kplane-port-'));
      const dataDir = join(parent, 'data');
      try {
        await assert.rejects(
          createControlPlane({ storage: memory(), dataDir, port: a.cp.port }),
          new RegExp(
            `^Error: cannot listen on 127\\.0\\.0\\.1:${a.cp.port}: the address is in use \\(another kplane server or another program\\); stop it, or choose another port \\(kplane serve --secure-port`,
          ),
        );
        assert.equal(existsSync(dataDir), false, 'a start that cannot serve leaves no data directory behind');
      } finally {
        await rm(parent, { recursive: true, force: true });
      }
    } finally {
      await a.stop();
    }
  });
});
