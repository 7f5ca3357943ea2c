// The HTTP surface: HTTP/2 and HTTP/1.1, /version, health, /metrics, authentication, the response
// transforms (PartialObjectMetadata, Table), YAML and protobuf, protobuf watch frames, exact-RV
// lists, expired continue tokens, bookmarks and watch timeouts.
import assert from 'node:assert/strict';
import { connect, constants as h2 } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { decodeObject as decodeWith, decodeWatchFrames as decodeFramesWith, PROTOBUF_MEDIA_TYPE } from '../../src/apimachinery/protobuf/index.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { builtinScheme } from '../../src/controlplane/modules.js';
import { adminCredentials, RawClient, watchLines, type KubeStatus, type RawResponse } from '../support/https.js';
import { eventually } from '../support/eventually.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run } from '../support/tools.js';

// A client's kind table: the built-in kinds.
const scheme = builtinScheme();
const decodeObject = (b: Uint8Array): KubeObject => decodeWith(b, scheme);
const decodeWatchFrames = (b: Uint8Array): ReturnType<typeof decodeFramesWith> => decodeFramesWith(b, scheme);
const NS = 'default';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: { name?: string; resourceVersion?: string; uid?: string; continue?: string; [k: string]: unknown };
  data?: Record<string, string>;
  items?: Obj[];
  [k: string]: unknown;
}

function ok(res: RawResponse, code = 200): Obj {
  assert.equal(res.status, code, res.text().slice(0, 500));
  return res.json<Obj>();
}

describe('HTTP surface', { timeout: 90_000 }, () => {
  let server: TestServer;
  let client: RawClient;
  const logged: string[] = [];

  const create = async (name: string, data: Record<string, string> = { a: '1' }, ns = NS): Promise<Obj> =>
    ok(
      await client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/configmaps`,
        headers: JSON_CT,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }),
      }),
      201,
    );
  const metrics = async (): Promise<string> => {
    const res = await client.request({ path: '/metrics' });
    assert.equal(res.status, 200);
    return res.text();
  };

  before(async () => {
    server = await startTestServer({ watchBookmarkIntervalMs: 300, log: (line) => logged.push(line) });
    client = new RawClient(server.url, adminCredentials(server.dataDir));
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('speaks HTTP/2 (ALPN h2) with the admin certificate', async () => {
    const creds = adminCredentials(server.dataDir);
    const session = connect(server.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    try {
      const get = (path: string): Promise<{ status: number; body: string; length: string | undefined }> =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('HTTP/2 GET timed out')), 10_000);
          const st = session.request({ ':method': 'GET', ':path': path, accept: 'application/json' });
          let status = 0;
          let length: string | undefined;
          let body = '';
          st.setEncoding('utf8');
          st.on('response', (h) => {
            status = Number(h[':status']);
            length = h['content-length'];
          });
          st.on('data', (d: string) => (body += d));
          st.on('end', () => {
            clearTimeout(t);
            resolve({ status, body, length });
          });
          st.on('error', reject);
          st.end();
        });
      const { status, body } = await get('/api/v1/namespaces');
      assert.equal(session.alpnProtocol, 'h2');
      assert.equal(status, 200, body);
      const list = JSON.parse(body) as Obj;
      assert.equal(list.kind, 'NamespaceList');
      assert.ok(list.items?.some((n) => n.metadata.name === 'default'));
      // A whole answer carries its Content-Length, as Go's server sends it: a proxy in front (the
      // aggregator) passes it on and need not frame the body chunked.
      const one = await get('/api/v1/namespaces/default');
      assert.equal(one.status, 200, one.body);
      assert.equal(one.length, String(Buffer.byteLength(one.body)));
    } finally {
      session.close();
    }
  });

  it('speaks HTTP/1.1', async () => {
    const res = await client.request({ path: '/api/v1/namespaces/default' });
    assert.equal(res.httpVersion, '1.1');
    assert.equal(ok(res).kind, 'Namespace');
  });

  it('/version, /healthz, /livez, /readyz', async () => {
    const version = await client.request({ path: '/version' });
    const v = ok(version);
    assert.equal(v.major, '1');
    assert.match(String(v.minor), /^\d+$/);
    assert.equal(v.emulationMinor, v.minor);
    assert.equal(Number(v.minCompatibilityMinor), Number(v.minor) - 1);
    assert.match(version.text(), /^\{\n  "major": "1",\n  "minor": "\d+",\n  "emulationMajor": "1",/);
    assert.equal((await client.request({ method: 'POST', path: '/version', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 405);
    assert.match(String(v.gitVersion), /^v1\.\d+\.\d+/);
    assert.match(String(v.platform), /^\w+\/\w+$/);
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const res = await client.request({ path: p });
      assert.equal(res.status, 200, `${p}: ${res.text()}`);
      assert.equal(res.text(), 'ok');
    }
    const verbose = await client.request({ path: '/readyz?verbose' });
    assert.equal(verbose.status, 200);
    assert.match(verbose.text(), /\[\+\]etcd ok/);
    assert.match(verbose.text(), /readyz check passed/);
  });

  it('a request without credentials gets a 401 Status; health and version stay public', async () => {
    const anon = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
    try {
      const res = await anon.request({ path: CMS });
      assert.equal(res.status, 401);
      const s = res.json<KubeStatus>();
      assert.deepEqual(
        { kind: s.kind, apiVersion: s.apiVersion, status: s.status, reason: s.reason, code: s.code, message: s.message },
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Unauthorized',
          code: 401,
          message: 'Unauthorized',
        },
      );
      assert.equal((await anon.request({ path: '/healthz' })).status, 200);
      assert.equal((await anon.request({ path: '/version' })).status, 200);
      // A token nobody issued is no better.
      assert.equal((await anon.request({ path: CMS, headers: { authorization: 'Bearer nope' } })).status, 401);
    } finally {
      anon.close();
    }
  });

  it('/metrics counts requests, storage latency and open watches', async () => {
    await create('metrics-cm');
    let text = await metrics();
    // Upstream reports the HTTP method for writes (POST, PUT, PATCH, DELETE), LIST/GET/WATCH for reads.
    const created = text
      .split('\n')
      .find((l) => l.startsWith('apiserver_request_total{') && l.includes('verb="POST"') && l.includes('resource="configmaps"') && l.includes('code="201"'));
    assert.ok(created, 'apiserver_request_total for the create');
    assert.match(created, /group="",version="v1",resource="configmaps",subresource="",scope="resource"/);
    assert.ok(Number(created.split(' ').pop()) >= 1);
    assert.match(text, /^kplane_storage_request_duration_seconds_bucket\{le="[^"]+",operation="create",backend="sqlite"\} [1-9]/m);
    assert.match(text, /^apiserver_request_duration_seconds_bucket\{le="[^"]+",verb="POST",[^}]*resource="configmaps"/m);

    const gauge = (t: string): number => {
      const line = t.split('\n').find((l) => l.startsWith('apiserver_registered_watchers{') && l.includes('kind="ConfigMap"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = gauge(text);
    const w = await client.stream({ path: `${CMS}?watch=true&resourceVersion=0` });
    assert.equal(w.status, 200);
    await w.waitFor((d) => watchLines(d).some((e) => e.object.metadata?.name === 'metrics-cm'));
    text = await metrics();
    assert.equal(gauge(text), before + 1, 'registered watchers went up');
    assert.match(text, /^apiserver_longrunning_requests\{verb="WATCH",group="",version="v1",resource="configmaps",[^}]*\} 1$/m);
    w.close();
    const deadline = Date.now() + 5_000;
    while (gauge(await metrics()) !== before) {
      assert.ok(Date.now() < deadline, 'registered watchers went back down');
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(await metrics(), /^apiserver_request_total\{verb="WATCH",[^}]*resource="configmaps"[^}]*code="200"\} [1-9]/m);
  });

  it("/metrics shows the watch cache ring's capacity and its growth as kube's watch_cache_capacity metrics", async () => {
    // Secrets: nothing else in this file writes them, so their ring is at its starting 100.
    const line = (t: string, name: string): string | undefined => t.split('\n').find((l) => l.startsWith(`${name}{group="",resource="secrets"} `));
    await client.request({ path: `/api/v1/namespaces/${NS}/secrets` });
    let text = await metrics();
    assert.equal(line(text, 'watch_cache_capacity'), 'watch_cache_capacity{group="",resource="secrets"} 100');
    assert.match(text, /^# HELP watch_cache_capacity Total capacity of watch cache broken by resource type\.$/m);
    assert.equal(line(text, 'watch_cache_capacity_increase_total'), undefined);
    // 110 writes within kube's 75 s window: the full ring of fresh events doubles. Straight into the
    // server's storage (below the cache), as the API's writes would reach it, without 110 requests.
    await Promise.all(
      Array.from({ length: 110 }, (_, i) => {
        const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: `ring-${i}`, namespace: NS, uid: `ring-${i}` } };
        return server.cp.storage.create(`/registry/secrets/${NS}/ring-${i}`, new TextEncoder().encode(JSON.stringify(secret)));
      }),
    );
    // A consistent list from the cache waits until it has applied every write.
    ok(await client.request({ path: `/api/v1/namespaces/${NS}/secrets` }));
    text = await metrics();
    assert.equal(line(text, 'watch_cache_capacity'), 'watch_cache_capacity{group="",resource="secrets"} 200');
    assert.equal(line(text, 'watch_cache_capacity_increase_total'), 'watch_cache_capacity_increase_total{group="",resource="secrets"} 1');
    assert.match(text, /^# TYPE watch_cache_capacity_decrease_total counter$/m);
  });

  it('/metrics answers as promhttp: Vary on Accept and Accept-Encoding, gzip when the scraper asks', async () => {
    // What Prometheus sends. The exposition is far below the 128 KiB API threshold: /metrics is not
    // an API response, promhttp compresses whatever its size.
    const zipped = await client.request({ path: '/metrics', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers['vary'], 'Accept, Accept-Encoding');
    assert.match(String(zipped.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(gunzipSync(zipped.body).toString(), /^apiserver_request_total\{/m);
    // Without gzip among the acceptable encodings, the text as it is (the same Vary).
    for (const ae of [undefined, 'identity', '*', 'gzip;q=0', 'br']) {
      const plain = await client.request({ path: '/metrics', headers: ae === undefined ? {} : { 'accept-encoding': ae } });
      assert.equal(plain.status, 200, String(ae));
      assert.equal(plain.headers['content-encoding'], undefined, String(ae));
      assert.equal(plain.headers['vary'], 'Accept, Accept-Encoding', String(ae));
      assert.match(plain.text(), /^apiserver_request_total\{/m, String(ae));
    }
  });

  it('PartialObjectMetadata and PartialObjectMetadataList', async () => {
    await create('pom', { secret: 'x' });
    const one = ok(await client.request({ path: `${CMS}/pom`, headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } }));
    assert.equal(one.kind, 'PartialObjectMetadata');
    assert.equal(one.apiVersion, 'meta.k8s.io/v1');
    assert.equal(one.metadata.name, 'pom');
    assert.ok(one.metadata.uid && one.metadata.resourceVersion);
    assert.equal(one.data, undefined);
    const list = ok(await client.request({ path: CMS, headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } }));
    assert.equal(list.kind, 'PartialObjectMetadataList');
    assert.equal(list.apiVersion, 'meta.k8s.io/v1');
    assert.ok(list.metadata.resourceVersion);
    const item = list.items?.find((i) => i.metadata.name === 'pom');
    assert.ok(item);
    assert.equal(item.data, undefined);
    // The list form on a single object is not acceptable (and vice versa): 406.
    const wrong = await client.request({ path: `${CMS}/pom`, headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    assert.equal(wrong.status, 406, wrong.text());
    assert.equal(wrong.json<KubeStatus>().reason, 'NotAcceptable');
  });

  it('Table with the configmap columns', async () => {
    await create('tbl', { a: '1', b: '2' });
    const t = ok(
      await client.request({ path: `${CMS}?fieldSelector=metadata.name%3Dtbl`, headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } }),
    );
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    const cols = (t.columnDefinitions as { name: string; type: string }[]).map((c) => c.name);
    assert.deepEqual(cols, ['Name', 'Data', 'Age']);
    const rows = t.rows as { cells: unknown[]; object: Obj }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.cells[0], 'tbl');
    assert.equal(rows[0]!.cells[1], 2);
    assert.match(String(rows[0]!.cells[2]), /^\d+s$/);
    assert.equal(rows[0]!.object.kind, 'PartialObjectMetadata');
    assert.equal(rows[0]!.object.metadata.name, 'tbl');
  });

  it('YAML and protobuf responses', async () => {
    await create('enc', { k: 'v' });
    const y = await client.request({ path: `${CMS}/enc`, headers: { accept: 'application/yaml' } });
    assert.equal(y.status, 200);
    assert.equal(y.headers['content-type'], 'application/yaml');
    const fromYaml = parseYaml(y.text()) as Obj;
    assert.equal(fromYaml.kind, 'ConfigMap');
    assert.deepEqual(fromYaml.data, { k: 'v' });
    const p = await client.request({ path: `${CMS}/enc`, headers: { accept: PROTOBUF_MEDIA_TYPE } });
    assert.equal(p.status, 200);
    assert.equal(p.headers['content-type'], PROTOBUF_MEDIA_TYPE);
    assert.deepEqual([...p.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'k8s\\0 magic');
    const fromProto = decodeObject(p.body) as Obj;
    assert.equal(fromProto.kind, 'ConfigMap');
    assert.equal(fromProto.apiVersion, 'v1');
    assert.equal(fromProto.metadata.name, 'enc');
    assert.deepEqual(fromProto.data, { k: 'v' });
    const list = decodeObject((await client.request({ path: CMS, headers: { accept: PROTOBUF_MEDIA_TYPE } })).body) as Obj;
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.items?.some((i) => i.metadata.name === 'enc'));
    // Errors to a protobuf client are protobuf Status objects.
    const missing = await client.request({ path: `${CMS}/nope`, headers: { accept: PROTOBUF_MEDIA_TYPE } });
    assert.equal(missing.status, 404);
    const s = decodeObject(missing.body) as unknown as KubeStatus;
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'NotFound');
  });

  it('a protobuf watch yields length-prefixed frames', async () => {
    const start = ok(await client.request({ path: CMS })).metadata.resourceVersion!;
    // An idle watch sends its headers at once (client-go's Watch() returns only then).
    const w = await client.stream({ path: `${CMS}?watch=true&resourceVersion=${start}`, headers: { accept: PROTOBUF_MEDIA_TYPE }, timeoutMs: 2_000 });
    try {
      assert.equal(w.status, 200);
      assert.equal(w.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');
      await create('pw-1', { n: '1' });
      await client.request({ method: 'PATCH', path: `${CMS}/pw-1`, headers: { 'content-type': 'application/merge-patch+json' }, body: '{"data":{"n":"2"}}' });
      await client.request({ method: 'DELETE', path: `${CMS}/pw-1` });
      const events = await w.waitFor((d) => {
        // Whole frames only: a 4-byte big-endian length, then that many bytes.
        let off = 0;
        while (off + 4 <= d.length && off + 4 + d.readUInt32BE(off) <= d.length) off += 4 + d.readUInt32BE(off);
        const evs = decodeWatchFrames(d.subarray(0, off));
        return evs.length >= 3 ? evs : undefined;
      });
      assert.deepEqual(
        events.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      const objs = events.map((e) => e.object as unknown as Obj);
      assert.deepEqual(
        objs.map((o) => o.metadata.name),
        ['pw-1', 'pw-1', 'pw-1'],
      );
      assert.deepEqual(objs[1]!.data, { n: '2' });
      assert.ok(objs.every((o) => o.kind === 'ConfigMap'));
    } finally {
      w.close();
    }
  });

  it('resourceVersionMatch=Exact lists the older state', async () => {
    const v1 = await create('exact', { v: 'old' });
    const v2 = ok(await client.request({ method: 'PUT', path: `${CMS}/exact`, headers: JSON_CT, body: JSON.stringify({ ...v1, data: { v: 'new' } }) }));
    assert.notEqual(v2.metadata.resourceVersion, v1.metadata.resourceVersion);
    const old = ok(await client.request({ path: `${CMS}?resourceVersion=${v1.metadata.resourceVersion}&resourceVersionMatch=Exact` }));
    assert.equal(old.metadata.resourceVersion, v1.metadata.resourceVersion);
    assert.deepEqual(old.items?.find((i) => i.metadata.name === 'exact')?.data, { v: 'old' });
    const now = ok(await client.request({ path: CMS }));
    assert.deepEqual(now.items?.find((i) => i.metadata.name === 'exact')?.data, { v: 'new' });
    // Exact with resourceVersion 0 or unset is refused like upstream.
    const bad = await client.request({ path: `${CMS}?resourceVersionMatch=Exact` });
    assert.equal(bad.status, 422, bad.text());
  });

  it('a read at a resourceVersion not reached yet waits for it, then 504 with the ResourceVersionTooLarge cause', async () => {
    const rv = Number(ok(await client.request({ path: CMS })).metadata.resourceVersion);
    // A write during the wait lets the read through (a read that gave up would be the 504 below).
    const waiting = client.request({ path: `${CMS}?resourceVersion=${rv + 1}&resourceVersionMatch=NotOlderThan` });
    await new Promise((r) => setTimeout(r, 300));
    await create('arrives-while-waiting');
    const list = ok(await waiting);
    assert.ok(Number(list.metadata.resourceVersion) >= rv + 1);
    assert.ok(list.items?.some((i) => i.metadata.name === 'arrives-while-waiting'));
    // None comes: after the wait (3 s, as kube's cacher), the Status client-go's reflector recognises.
    const far = Number(list.metadata.resourceVersion) + 1000;
    const [l, g] = await Promise.all([
      client.request({ path: `${CMS}?resourceVersion=${far}&resourceVersionMatch=NotOlderThan` }),
      client.request({ path: `${CMS}/arrives-while-waiting?resourceVersion=${far}` }),
    ]);
    for (const r of [l, g]) {
      assert.equal(r.status, 504, r.text());
      const st = r.json<KubeStatus & { details?: { causes?: unknown[]; retryAfterSeconds?: number } }>();
      assert.equal(st.reason, 'Timeout');
      assert.match(st.message ?? '', new RegExp(`^Timeout: Too large resource version: ${far}, current: \\d+$`));
      assert.deepEqual(st.details, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
      assert.equal(r.headers['retry-after'], '1');
    }
  });

  it('a continue token whose revision was compacted → 410 Expired', async () => {
    const ns = 'paging';
    ok(
      await client.request({
        method: 'POST',
        path: '/api/v1/namespaces',
        headers: JSON_CT,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      }),
      201,
    );
    for (const n of ['p1', 'p2', 'p3']) await create(n, { a: n }, ns);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const page1 = ok(await client.request({ path: `${path}?limit=1` }));
    assert.equal(page1.items?.length, 1);
    const token = page1.metadata.continue;
    assert.ok(token, 'a continue token');
    // The token works before compaction.
    const page2 = ok(await client.request({ path: `${path}?limit=1&continue=${encodeURIComponent(token)}` }));
    assert.equal(page2.items?.[0]?.metadata.name, 'p2');
    await create('after-token', { a: 'b' }, ns);
    await server.cp.storage.compact(await server.cp.storage.currentRevision());
    const res = await client.request({ path: `${path}?limit=1&continue=${encodeURIComponent(token)}` });
    assert.equal(res.status, 410, res.text());
    const s = res.json<KubeStatus>();
    assert.equal(s.kind, 'Status');
    assert.equal(s.reason, 'Expired');
    assert.equal(s.code, 410);
    assert.match(s.message ?? '', /^The provided continue parameter is too old to display a consistent list result\./);
  });

  it('a watch with allowWatchBookmarks=true gets a BOOKMARK within the bookmark interval', async () => {
    const rv = ok(await client.request({ path: CMS })).metadata.resourceVersion!;
    const w = await client.stream({ path: `${CMS}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}` });
    try {
      // The test server's bookmark interval is 300 ms; the 5 s bound only keeps a missing bookmark from hanging the test.
      const bm = await w.waitFor((d) => watchLines(d).find((e) => e.type === 'BOOKMARK'), 5_000);
      assert.equal(bm.object.kind, 'ConfigMap');
      assert.equal(bm.object.apiVersion, 'v1');
      assert.ok(Number(bm.object.metadata?.resourceVersion) >= Number(rv));
    } finally {
      w.close();
    }
    // Without allowWatchBookmarks: none.
    const plain = await client.stream({ path: `${CMS}?watch=true&resourceVersion=${rv}&timeoutSeconds=1` });
    await plain.ended;
    assert.equal(watchLines(plain.data()).filter((e) => e.type === 'BOOKMARK').length, 0);
  });

  it('watch timeoutSeconds=1 ends the stream', async () => {
    const started = Date.now();
    const w = await client.stream({ path: `${CMS}?watch=true&timeoutSeconds=1` });
    assert.equal(w.status, 200);
    await Promise.race([w.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('watch did not end within 5 s')), 5_000))]);
    // Not before the second is up (the 5 s race above only keeps a watch that never ends from hanging the test).
    const took = Date.now() - started;
    assert.ok(took >= 900, `ended after ${took} ms`);
    // It delivered the initial state before it ended.
    assert.ok(watchLines(w.data()).some((e) => e.type === 'ADDED'));
  });

  it('a client that goes away part-way through a body: one log line without a stack, nothing stored, the server serves on', async () => {
    const creds = adminCredentials(server.dataDir);
    const path = `${CMS}`;
    const partial = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"half-sent"},"data":{"a":"';
    const before = logged.length;
    // HTTP/1.1: Content-Length promises more than is sent, then the socket closes.
    await new Promise<void>((resolve, reject) => {
      const sock = tlsConnect(
        {
          host: '127.0.0.1',
          port: Number(new URL(server.url).port),
          ca: creds.ca,
          cert: creds.cert,
          key: creds.key,
          ALPNProtocols: ['http/1.1'],
          servername: 'localhost',
        },
        () => {
          sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n${partial}`);
          setTimeout(() => {
            sock.destroy();
            resolve();
          }, 200);
        },
      );
      sock.on('error', reject);
    });
    // HTTP/2: the stream is cancelled (RST_STREAM) after part of the body.
    const session = connect(server.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    try {
      await new Promise<void>((resolve) => {
        const st = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', 'content-length': '1000' }, { endStream: false });
        st.on('error', () => undefined);
        st.write(partial, () =>
          setTimeout(() => {
            st.close(h2.NGHTTP2_CANCEL);
            resolve();
          }, 200),
        );
      });
    } finally {
      session.close();
    }
    const deadline = Date.now() + 5_000;
    while (logged.length < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const lines = logged.slice(before);
    assert.equal(lines.length, 2, lines.join('\n'));
    for (const line of lines) {
      assert.match(line, /^POST \/api\/v1\/namespaces\/default\/configmaps: the client closed the request before its body was complete/);
      assert.doesNotMatch(line, /\n\s+at /, 'no stack trace for a client that went away');
    }
    assert.equal((await client.request({ path: `${CMS}/half-sent` })).status, 404);
    assert.equal(ok(await client.request({ path: CMS })).kind, 'ConfigMapList');
  });

  it("paths nobody serves get the not-found handler's text; unknown resources of a built-in group the router's Status", async () => {
    for (const path of ['/apis/nogroup/v1/foos', '/nothing', '/apis/nogroup']) {
      const r = await client.request({ path });
      assert.equal(r.status, 404, path);
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.text(), '404 page not found\n');
    }
    for (const path of ['/api/v1/foos', `${CMS}/a/foo`]) {
      const r = await client.request({ path });
      assert.equal(r.status, 404, path);
      assert.deepEqual(r.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server could not find the requested resource',
        reason: 'NotFound',
        details: {},
        code: 404,
      });
    }
  });

  it("415: a built-in PATCH with a body of another type is the router's; a create names the accepted types, without details", async () => {
    await create('patch-415');
    const patch = await client.request({
      method: 'PATCH',
      path: `${CMS}/patch-415`,
      headers: { 'content-type': 'application/json' },
      body: '{"data":{"a":"2"}}',
    });
    assert.equal(patch.status, 415);
    assert.deepEqual(patch.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: '415: Unsupported Media Type',
      reason: 'UnsupportedMediaType',
      details: {},
      code: 415,
    });
    const post = await client.request({ method: 'POST', path: CMS, headers: { 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(post.status, 415);
    assert.deepEqual(post.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      reason: 'UnsupportedMediaType',
      code: 415,
    });
  });

  it('?timeout= must be a Go duration (not checked for watches); pretty as upstream reads it, also by user agent', async () => {
    for (const [t, why] of [
      ['bogus', 'time: invalid duration "bogus"'],
      ['5', 'time: missing unit in duration "5"'],
      ['5x', 'time: unknown unit "x" in duration "5x"'],
    ] as const) {
      const r = await client.request({ path: `/api/v1/namespaces?timeout=${t}` });
      assert.equal(r.status, 400, t);
      assert.equal(r.json<KubeStatus>().message, `invalid timeout specified in the request URL - ${why}`);
    }
    for (const t of ['32s', '1m30s', '1.5h', '0', '-1s', '300ms'])
      assert.equal((await client.request({ path: `/api/v1/namespaces?timeout=${t}` })).status, 200, t);
    const w = await client.stream({ path: `${CMS}?watch=1&timeoutSeconds=1&timeout=bogus` });
    assert.equal(w.status, 200);
    await w.ended;
    const path = '/api/v1/namespaces/default';
    const pretty = (await client.request({ path: `${path}?pretty=true` })).text();
    assert.match(pretty, /^\{\n  "kind": "Namespace",/);
    assert.ok(!pretty.endsWith('\n'), 'json.MarshalIndent writes no newline after it');
    assert.match((await client.request({ path: `${path}?pretty=yes` })).text(), /^\{"kind":"Namespace"/, 'strconv.ParseBool("yes") is false');
    assert.match((await client.request({ path, headers: { 'user-agent': 'curl/8.5.0' } })).text(), /^\{\n  "kind": "Namespace",/);
    assert.match((await client.request({ path: '/api/v1/namespaces/nope', headers: { 'user-agent': 'curl/8.5.0' } })).text(), /^\{\n  "kind": "Status",/);
    assert.match((await client.request({ path, headers: { 'user-agent': 'curl/8.5.0' } })).text(), /"name": "default"/);
    assert.match((await client.request({ path: `${path}?pretty=0`, headers: { 'user-agent': 'curl/8.5.0' } })).text(), /^\{"kind":"Namespace"/);
  });

  it('aggregated discovery v2: its media type, a full SHA-512 ETag, Cache-Control public, 304 on If-None-Match', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    for (const path of ['/api', '/apis']) {
      const r = await client.request({ path, headers: { accept } });
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      assert.match(String(r.headers['etag']), /^"[0-9A-F]{128}"$/);
      assert.equal(r.headers['cache-control'], 'public');
      assert.equal(r.headers['vary'], 'Accept');
      const list = r.json<{ kind: string; items: { metadata: { name: string } }[] }>();
      assert.equal(list.kind, 'APIGroupDiscoveryList');
      if (path === '/apis') assert.ok(list.items.some((g) => g.metadata.name === 'coordination.k8s.io'));
      const again = await client.request({ path, headers: { accept, 'if-none-match': String(r.headers['etag']) } });
      assert.equal(again.status, 304);
      assert.equal(again.text(), '');
    }
    // Without the aggregated media type: the legacy documents.
    assert.equal((await client.request({ path: '/apis' })).json<{ kind: string }>().kind, 'APIGroupList');
  });
});

describe('max requests in flight', { timeout: 120_000 }, () => {
  it("two pools as upstream's filter keeps them: 429 as text with Retry-After past a full one, system:masters served anyway, credentials judged first", async () => {
    const server = await startTestServer({
      storage: 'memory',
      maxRequestsInFlight: 1,
      maxMutatingRequestsInFlight: 1,
      tokens: new Map([['alice-token', { name: 'alice', groups: ['developers'] }]]),
    });
    const creds = adminCredentials(server.dataDir);
    const admin = new RawClient(server.url, creds);
    const alice = new RawClient(server.url, { ca: creds.ca });
    const asAlice = { authorization: 'Bearer alice-token' };
    const cm = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const session = connect(server.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    try {
      // The admin holds the one mutating slot (a free slot is taken whoever asks): a create whose body never finishes.
      const held = session.request({ ':method': 'POST', ':path': CMS, 'content-type': 'application/json', 'content-length': '1000' }, { endStream: false });
      held.on('error', () => undefined);
      held.write('{"apiVersion":"v1"');
      // The pool's watermark, published each second: the held slot was taken in the second before
      // the next publication (nothing else takes a mutating slot below).
      const mutating = async (): Promise<number> =>
        Number(/^apiserver_current_inflight_requests\{request_kind="mutating"\} (\d+)/m.exec((await admin.request({ path: '/metrics' })).text())?.[1] ?? -1);
      await eventually(5_000, 'apiserver_current_inflight_requests{request_kind="mutating"} 1', async () => ((await mutating()) === 1 ? true : undefined));

      const r = await alice.request({ method: 'POST', path: CMS, headers: { ...asAlice, ...JSON_CT }, body: cm('by-alice') });
      assert.equal(r.status, 429, r.text());
      assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(r.text(), 'Too many requests, please try again later.\n');
      // Reads have their own pool, and a slot is given back with each answer (one kept-alive
      // connection, one slot, several requests in a row); a watch never takes a slot.
      for (let i = 0; i < 3; i++) assert.equal((await alice.request({ path: CMS, headers: asAlice })).status, 200);
      const w = await alice.stream({ path: `${CMS}?watch=true`, headers: asAlice });
      assert.equal(w.status, 200);
      assert.equal((await alice.request({ path: CMS, headers: asAlice })).status, 200, 'a read while the watch is open: the watch holds no slot');
      w.close();
      // Bad credentials are a 401 before any 429.
      assert.equal((await alice.request({ method: 'POST', path: CMS, headers: { authorization: 'Bearer nope', ...JSON_CT }, body: cm('x') })).status, 401);
      // system:masters is served past a full pool.
      assert.equal((await admin.request({ method: 'POST', path: CMS, headers: JSON_CT, body: cm('by-admin') })).status, 201);

      // What an operator sees: the 429 as a termination (not a served request), and the pools' watermark.
      const text = (await admin.request({ path: '/metrics' })).text();
      assert.match(
        text,
        /^apiserver_request_terminations_total\{verb="POST",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="429"\} 1$/m,
      );
      assert.doesNotMatch(text, /^apiserver_request_total\{[^}]*code="429"/m);

      held.close(h2.NGHTTP2_CANCEL);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal((await alice.request({ method: 'POST', path: CMS, headers: { ...asAlice, ...JSON_CT }, body: cm('by-alice') })).status, 201);
    } finally {
      session.close();
      admin.close();
      alice.close();
      await server.stop();
    }
  });

  it('kplane serve --max-requests-inflight and --max-mutating-requests-inflight', async () => {
    const procs = kplaneProcesses();
    const dir = await mkdtemp(join(tmpdir(), 'kplane-inflight-'));
    try {
      const tokens = join(dir, 'tokens.csv');
      await writeFile(tokens, 'alice-token,alice,alice-uid,"developers"\n');
      const p = await procs.start(
        [
          'serve',
          '--data-dir',
          join(dir, 'data'),
          '--secure-port',
          '0',
          '--controllers=false',
          '--token-auth-file',
          tokens,
          // alice is a plain token user: this test is about the in-flight pools, not RBAC.
          '--authorization-mode=AlwaysAllow',
          '--max-requests-inflight=0',
          '--max-mutating-requests-inflight=1',
        ],
        /kplane is serving on (https:\/\/\S+)/,
      );
      const url = /https:\/\/\S+/.exec(p.firstLine)![0];
      const creds = adminCredentials(join(dir, 'data'));
      const session = connect(url, { ca: creds.ca, cert: creds.cert, key: creds.key });
      const alice = new RawClient(url, { ca: creds.ca });
      const admin = new RawClient(url, creds);
      try {
        // The server's own writes take slots too (loopback, as upstream's: its Feature reporter and
        // identity Lease). A system:masters request that arrives while one holds the only slot is
        // served without one, and then nothing holds it for alice to meet: try again (a few times;
        // a server whose limit does not hold answers 201 every time).
        const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'by-alice' } });
        const statuses: number[] = [];
        let held: ReturnType<typeof session.request> | undefined;
        for (let attempt = 0; attempt < 5 && statuses.at(-1) !== 429; attempt++) {
          held?.close(h2.NGHTTP2_CANCEL);
          if (statuses.at(-1) === 201) await admin.request({ method: 'DELETE', path: '/api/v1/namespaces/default/configmaps/by-alice' });
          held = session.request(
            { ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', 'content-type': 'application/json', 'content-length': '1000' },
            { endStream: false },
          );
          held.on('error', () => undefined);
          held.write('{"apiVersion":"v1"');
          await new Promise((r) => setTimeout(r, 200));
          statuses.push(
            (
              await alice.request({
                method: 'POST',
                path: '/api/v1/namespaces/default/configmaps',
                headers: { authorization: 'Bearer alice-token', ...JSON_CT },
                body,
              })
            ).status,
          );
        }
        assert.equal(statuses.at(-1), 429, `alice's creates answered ${statuses.join(', ')}`);
        assert.equal(
          (await alice.request({ path: '/api/v1/namespaces/default/configmaps', headers: { authorization: 'Bearer alice-token' } })).status,
          200,
          'a read is served (its pool is not the full one)',
        );
        held!.close(h2.NGHTTP2_CANCEL);
      } finally {
        session.close();
        alice.close();
        admin.close();
      }
      for (const [arg, message] of [
        ['--max-requests-inflight=-1', /--max-requests-inflight can not be negative value/],
        ['--max-mutating-requests-inflight=ten', /invalid argument "ten" for "--max-mutating-requests-inflight" flag: not a whole number/],
      ] as const) {
        const bad = await run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', join(dir, 'data'), arg], {
          timeoutMs: 30_000,
        });
        assert.equal(bad.code, 2, arg);
        assert.match(bad.stderr, message);
      }
    } finally {
      procs.killAll();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
