// List answers written into reused memory (src/server/body-buffers.ts) over real HTTP/1.1 and
// HTTP/2, large ones in chunks (src/server/stream-body.ts): every body is byte for byte what the store encodes, while others reuse buffers, while a
// stalled HTTP/2 reader holds its body in flight, and after an aborted one; the loopback client
// never gets reused memory.
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { BodyBuffers } from '../../src/server/body-buffers.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const path = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;

/** The items part of a list body (its own resourceVersion moves with any write elsewhere). */
function items(body: Buffer): Buffer {
  const at = body.indexOf('"items":[');
  assert.ok(at > 0, body.subarray(0, 200).toString());
  return body.subarray(at);
}

function h2Get(session: ClientHttp2Session, p: string): { done: Promise<Buffer>; pause(): void; resume(): void; abort(): void } {
  const st = session.request({ ':method': 'GET', ':path': p, accept: 'application/json' });
  st.end();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    st.on('response', (h) => {
      if (h[':status'] !== 200) reject(new Error(`HTTP/2 ${p}: ${h[':status']}`));
    });
    st.on('data', (c: Buffer) => chunks.push(c));
    st.on('end', () => resolve(Buffer.concat(chunks)));
    st.on('error', reject);
  });
  return { done, pause: () => st.pause(), resume: () => st.resume(), abort: () => st.close() };
}

describe('list bodies in reused memory', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: RawClient;
  let session: ClientHttp2Session;
  const expected = new Map<string, Buffer>();
  const counts = { take: 0, give: 0 };
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call(this) below, and put back
  const origTake = BodyBuffers.prototype.take;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- as origTake
  const origGive = BodyBuffers.prototype.give;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    const creds = adminCredentials(server.dataDir);
    client = new RawClient(server.url, creds, { maxSockets: 16 });
    // Room for many concurrent 800 KB answers in the client's session (default 10 MB).
    session = connect(server.url, { ca: creds.ca, cert: creds.cert, key: creds.key, maxSessionMemory: 200 });
    const nss = server.cp.registry.lookup('', 'v1', 'namespaces')!.store;
    const cms = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
    // Namespaces of different sizes and contents (multi-byte UTF-8 in some), all over 16 KiB.
    const layout: [string, number, string][] = [
      ['big', 400, 'é'],
      ['big2', 400, 'ö'],
      ['mid', 100, 'b'],
      ['small', 12, '日'],
    ];
    for (const [ns, n, ch] of layout) {
      await nss.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      for (let i = 0; i < n; i++) {
        await cms.create(ns, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}`, labels: { n: String(i) } },
          data: { payload: `${ns}-${i}-`.padEnd(700 + (i % 13) * 37, ch) },
        });
      }
      expected.set(ns, items(await cms.listJSON(ns)));
    }
    assert.ok(expected.get('big')!.length > 700_000);
    BodyBuffers.prototype.take = function (this: BodyBuffers, size: number) {
      counts.take++;
      return origTake.call(this, size);
    };
    BodyBuffers.prototype.give = function (this: BodyBuffers, buf: Buffer) {
      counts.give++;
      origGive.call(this, buf);
    };
  });
  after(async () => {
    BodyBuffers.prototype.take = origTake;
    BodyBuffers.prototype.give = origGive;
    if (session) {
      await new Promise<void>((r) => {
        session.close(() => r());
        setTimeout(() => {
          session.destroy();
          r();
        }, 2000).unref();
      });
    }
    client?.close();
    await server?.stop();
  });

  it('are exact under concurrent HTTP/1.1 and HTTP/2 lists of different namespaces', async () => {
    const before = { ...counts };
    const nss = ['big', 'big2', 'mid', 'small'];
    // 8 at a time, half over each protocol (many more 800 KB answers queued on one HTTP/2
    // connection exceed the server session's memory: ENHANCE_YOUR_CALM, with or without reuse).
    let next = 0;
    const jobs = Array.from({ length: 8 }, async (_, w) => {
      while (next < 60) {
        const ns = nss[next++ % nss.length]!;
        if (w % 2) {
          const r = await client.request({ path: path(ns), headers: { accept: 'application/json' } });
          assert.equal(r.status, 200);
          assert.ok(items(r.body).equals(expected.get(ns)!), `HTTP/1.1 ${ns}`);
        } else {
          assert.ok(items(await h2Get(session, path(ns)).done).equals(expected.get(ns)!), `HTTP/2 ${ns}`);
        }
      }
    });
    await Promise.all(jobs);
    // The 800 KB answers are written in chunks, each from the pool; the small ones in one.
    const taken = counts.take - before.take;
    const given = counts.give - before.give;
    assert.ok(taken > 60, `every list body came from the pool, the large ones in chunks (${taken})`);
    assert.ok(given >= taken * 0.9, `given back once sent (${given} of ${taken})`);
  });

  it('stay intact for a stalled HTTP/2 reader while other lists reuse buffers', async () => {
    // big2's answer takes a buffer of the size big's takes, with other bytes: it would be written
    // into big's while big's is still being sent, were that buffer handed back too early.
    const granules = (ns: string): number => Math.ceil(expected.get(ns)!.length / 65536);
    assert.equal(granules('big2'), granules('big'));
    const stalled = h2Get(session, path('big'));
    stalled.pause();
    // Let the server send what the flow-control window allows and stall on the rest.
    await new Promise((r) => setTimeout(r, 200));
    const givenBefore = counts.give;
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        ['big2', 'mid', 'big2', 'small'].map(async (ns, i) => {
          const body = i % 2 ? (await client.request({ path: path(ns), headers: { accept: 'application/json' } })).body : await h2Get(session, path(ns)).done;
          assert.ok(items(body).equals(expected.get(ns)!), ns);
        }),
      );
    }
    assert.ok(counts.give - givenBefore >= 15, 'the other lists reused buffers meanwhile');
    stalled.resume();
    assert.ok(items(await stalled.done).equals(expected.get('big')!), 'the stalled body');
  });

  it('stay intact after a reader went away mid-body', async () => {
    const gone = h2Get(session, path('big'));
    gone.done.catch(() => undefined);
    gone.pause();
    await new Promise((r) => setTimeout(r, 100));
    gone.abort();
    for (let i = 0; i < 10; i++) {
      const ns = i % 2 ? 'big2' : 'mid';
      assert.ok(items(await h2Get(session, path(ns)).done).equals(expected.get(ns)!), ns);
      assert.ok(items((await client.request({ path: path(ns), headers: { accept: 'application/json' } })).body).equals(expected.get(ns)!), ns);
    }
  });

  it('are never reused memory for the loopback client, and HEAD, selectors and paging stay as they were', async () => {
    const before = counts.take;
    const lb = server.cp.loopbackClient();
    const list = await lb.list({ group: '', version: 'v1', resource: 'configmaps' }, 'mid');
    assert.equal(list.items.length, 100);
    assert.equal(counts.take, before, 'no pooled memory for the in-process response');
    const cms = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
    for (const q of ['?labelSelector=n%3D7', '?limit=30', '?fieldSelector=metadata.name%3Dcm-3']) {
      const r = await client.request({ path: path('big') + q, headers: { accept: 'application/json' } });
      const h2 = await h2Get(session, path('big') + q).done;
      const opts = Object.fromEntries(new URLSearchParams(q.slice(1)));
      const want = items(await cms.listJSON('big', { ...opts, ...(opts['limit'] ? { limit: Number(opts['limit']) } : {}) }));
      assert.ok(items(r.body).equals(want), q);
      assert.ok(items(h2).equals(want), q);
    }
    const head = await client.request({ method: 'HEAD', path: path('big'), headers: { accept: 'application/json' } });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    const h2head = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const st = session.request({ ':method': 'HEAD', ':path': path('big'), accept: 'application/json' });
      let status = 0;
      let bytes = 0;
      st.on('response', (h) => (status = Number(h[':status'])));
      st.on('data', (c: Buffer) => (bytes += c.length));
      st.on('end', () => resolve({ status, bytes }));
      st.on('error', reject);
      st.end();
    });
    assert.deepEqual(h2head, { status: 200, bytes: 0 });
    assert.ok(items((await client.request({ path: path('big'), headers: { accept: 'application/json' } })).body).equals(expected.get('big')!));
  });
});
