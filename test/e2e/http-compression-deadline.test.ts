// Two HTTP-layer behaviours of kube-apiserver, through real clients against real servers:
// - response compression (APIResponseCompression): API answers over 128 KiB are gzipped for
//   clients that send `Accept-Encoding: gzip`, as Go's HTTP client (kubectl, client-go) always does;
// - request deadlines (--request-timeout, `?timeout=`): a request still unanswered at its deadline
//   gets the timeout filter's 504, and what its handler does later is dropped.
// Slow requests come from a real component, not a test hook: an admission plugin (the library's
// `admission` option, the extension point webhooks would use) that holds objects labelled
// `test.kplane.io/hold` until the test lets them go, or a client that sends its body too slowly.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type ClientHttp2Session, type IncomingHttpHeaders as H2Headers } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AdmissionPlugin } from '../../src/registry/registry.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient, watchLines, type Credentials, type RawResponse } from '../support/https.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run, tools } from '../support/tools.js';

const NS = 'compress';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** What upstream's timeout filter writes (json.Encoder of the bare Status, then a newline). */
const FILTER_504 =
  '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';
const HOLD = 'test.kplane.io/hold';
const HOLD_DELETE = 'test.kplane.io/hold-delete';

/** An admission plugin that holds objects labelled HOLD until `release()`. */
function holdingAdmission(): { plugin: AdmissionPlugin; held: () => number; release: () => void } {
  const waiting: (() => void)[] = [];
  return {
    plugin: {
      name: 'TestHold',
      async admit(a) {
        // A write of an object labelled HOLD; a DELETE of an object labelled HOLD_DELETE.
        const labels = a.operation === 'DELETE' ? a.oldObject?.metadata?.labels : a.object?.metadata?.labels;
        if (labels?.[a.operation === 'DELETE' ? HOLD_DELETE : HOLD] === 'true') await new Promise<void>((ok) => waiting.push(ok));
      },
    },
    held: () => waiting.length,
    release: () => {
      for (const ok of waiting.splice(0)) ok();
    },
  };
}

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = { a: '1' }): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });
}

/** One HTTP/2 exchange: status, headers and body (the body written whole, or left open with `open`). */
async function h2(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
  open = false,
): Promise<{ status: number; headers: H2Headers; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`HTTP/2 ${headers[':path']}: no answer in 20 s`)), 20_000);
    const st = session.request(headers);
    let got: H2Headers = {};
    const chunks: Buffer[] = [];
    st.on('response', (h) => (got = h));
    st.on('data', (c: Buffer) => chunks.push(c));
    st.on('end', () => {
      clearTimeout(timer);
      resolve({ status: Number(got[':status']), headers: got, body: Buffer.concat(chunks) });
      // A body left open: the server answered without it; this side is done too.
      if (open && !st.closed) st.close();
    });
    st.on('error', (e: Error) => {
      clearTimeout(timer);
      reject(e);
    });
    if (open) st.write(body ?? '');
    else st.end(body);
  });
}

function h2connect(url: string, creds: Credentials): ClientHttp2Session {
  const session = connect(url, { ca: creds.ca, ...(creds.cert ? { cert: creds.cert } : {}), ...(creds.key ? { key: creds.key } : {}) });
  session.on('error', () => {});
  return session;
}

function assertFilter504(res: { status: number; headers: Record<string, unknown>; body: Buffer }, what: string): void {
  assert.equal(res.status, 504, `${what}: ${res.body.toString().slice(0, 300)}`);
  assert.equal(res.body.toString(), FILTER_504, what);
  assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8', what);
  assert.equal(res.headers['cache-control'], 'no-cache, private', what);
  assert.equal(res.headers['content-encoding'], undefined, what);
}

describe('response compression and request deadlines', { timeout: 180_000 }, () => {
  let server: TestServer;
  let client: RawClient;
  const hold = holdingAdmission();
  const logged: string[] = [];
  /** The same list, as identity bytes. */
  let identityList: Buffer;

  before(async () => {
    server = await startTestServer({ storage: 'memory', admission: [hold.plugin], log: (l) => logged.push(l) });
    client = new RawClient(server.url, adminCredentials(server.dataDir));
    const ns = await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      headers: JSON_CT,
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
    });
    assert.equal(ns.status, 201, ns.text());
    // 40 ConfigMaps of ~4 KiB: a list of ~180 KB, over the 128 KiB threshold.
    for (let i = 0; i < 40; i++) {
      const r = await client.request({ method: 'POST', path: CMS, headers: JSON_CT, body: configMap(`big-${i}`, {}, { v: `${i}-`.repeat(1400) }) });
      assert.equal(r.status, 201, r.text());
    }
  });
  after(async () => {
    hold.release();
    client?.close();
    await server?.stop();
  });

  const list = (headers: Record<string, string> = {}, path = CMS, method = 'GET'): Promise<RawResponse> =>
    client.request({ method, path, headers: { accept: 'application/json', ...headers } });

  it('gzips a list over 128 KiB for a client that sends Accept-Encoding: gzip (HTTP/1.1, HTTP/2, JSON, protobuf, HEAD); it decodes to the identity answer', async () => {
    const plain = await list();
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, undefined);
    assert.ok(plain.body.length > 128 * 1024, `${plain.body.length} bytes`);
    identityList = plain.body;

    for (const ae of ['gzip', 'deflate, gzip', ' gzip ,br']) {
      const gz = await list({ 'accept-encoding': ae });
      assert.equal(gz.status, 200, ae);
      assert.equal(gz.headers['content-encoding'], 'gzip', ae);
      assert.equal(gz.headers.vary, 'Accept-Encoding', ae);
      assert.equal(gz.headers['content-type'], 'application/json', ae);
      assert.ok(gz.headers['audit-id'], ae);
      assert.ok(gz.body.length < identityList.length / 4, `${ae}: ${gz.body.length} bytes compressed`);
      assert.deepEqual(gunzipSync(gz.body), identityList, ae);
    }

    const creds = adminCredentials(server.dataDir);
    const session = h2connect(server.url, creds);
    try {
      const gz = await h2(session, { ':path': CMS, accept: 'application/json', 'accept-encoding': 'gzip' });
      assert.equal(gz.status, 200);
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(gz.headers.vary, 'Accept-Encoding');
      assert.deepEqual(gunzipSync(gz.body), identityList, 'HTTP/2');
    } finally {
      session.close();
    }

    const pbPlain = await list({ accept: PROTOBUF });
    const pb = await list({ accept: PROTOBUF, 'accept-encoding': 'gzip' });
    assert.equal(pb.headers['content-type'], PROTOBUF);
    assert.equal(pb.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(pb.body), pbPlain.body, 'protobuf');

    // HEAD: the headers a GET would get, no body.
    const head = await list({ 'accept-encoding': 'gzip' }, CMS, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'gzip');
    assert.equal(head.body.length, 0);
  });

  it('leaves small answers, clients that do not ask for exactly gzip, and watch streams uncompressed', async () => {
    // The same large list, asked for differently: only the exact token gzip counts, as upstream compares it.
    assert.equal((await list({ 'accept-encoding': 'gzip' })).headers['content-encoding'], 'gzip', 'the baseline');
    for (const ae of ['gzip;q=1.0', 'GZIP', 'x-gzip', '*', 'br', 'identity', '']) {
      const r = await list({ 'accept-encoding': ae });
      assert.equal(r.headers['content-encoding'], undefined, ae);
      assert.equal(r.headers.vary, undefined, ae);
      assert.deepEqual(r.body, identityList, ae);
    }
    // Small answers: one object, a short page, a Status.
    for (const path of [`${CMS}/big-1`, `${CMS}?limit=5`, `${CMS}/nope`]) {
      const r = await client.request({ path, headers: { accept: 'application/json', 'accept-encoding': 'gzip' } });
      assert.equal(r.headers['content-encoding'], undefined, path);
      assert.ok(r.body.length > 0 && r.body.length < 128 * 1024, path);
      JSON.parse(r.text());
    }
    // A watch's initial events are well over 128 KiB: a stream is never compressed.
    const w = await client.request({
      path: `${CMS}?watch=1&resourceVersion=0&timeoutSeconds=1`,
      headers: { accept: 'application/json', 'accept-encoding': 'gzip' },
    });
    assert.equal(w.status, 200);
    assert.equal(w.headers['content-encoding'], undefined);
    assert.ok(w.body.length > 128 * 1024, `${w.body.length} bytes of events`);
    assert.equal(watchLines(w.body).filter((e) => e.type === 'ADDED').length, 40);
  });

  it('/openapi/v2 as kube-openapi serves it through gziphandler: gzip for q > 0 (level 6), Vary: Accept-Encoding always; /openapi/v3 never', async () => {
    const plain = await client.request({ path: '/openapi/v2', headers: { accept: 'application/json' } });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    for (const ae of ['gzip', 'GZIP', 'br, gzip;q=0.5', 'gzip;q=0;x=y']) {
      const r = await client.request({ path: '/openapi/v2', headers: { accept: 'application/json', 'accept-encoding': ae } });
      assert.equal(r.status, 200, ae);
      assert.equal(r.headers['content-encoding'], 'gzip', ae);
      assert.match(String(r.headers.vary), /Accept-Encoding/, ae);
      assert.deepEqual(gunzipSync(r.body), plain.body, ae);
      // Go's gzip default, level 6: the same bytes as zlib's level 6 of the document.
      assert.deepEqual(r.body, gzipSync(plain.body, { level: 6 }), ae);
    }
    for (const ae of ['gzip;q=0', 'gzip;q=x', 'x-gzip', 'identity']) {
      const r = await client.request({ path: '/openapi/v2', headers: { accept: 'application/json', 'accept-encoding': ae } });
      assert.equal(r.headers['content-encoding'], undefined, ae);
      assert.match(String(r.headers.vary), /Accept-Encoding/, ae);
      assert.deepEqual(r.body, plain.body, ae);
    }
    // A revalidation is a 304 without a body, compressed or not.
    const etag = String(plain.headers.etag);
    const nm = await client.request({ path: '/openapi/v2', headers: { accept: 'application/json', 'accept-encoding': 'gzip', 'if-none-match': etag } });
    assert.equal(nm.status, 304);
    assert.equal(nm.headers['content-encoding'], undefined);
    const v3 = await client.request({ path: '/openapi/v3/api/v1', headers: { accept: 'application/json', 'accept-encoding': 'gzip' } });
    assert.equal(v3.status, 200);
    assert.equal(v3.headers['content-encoding'], undefined);
  });

  it('kubectl gets large lists gzipped (Go undoes it; Vary shows it), and --disable-compression gets them plain', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kplane-gzip-kubectl-'));
    try {
      const env = { HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
      /** The response headers kubectl logs (-v=8) for its configmaps list, and the items it printed. */
      const get = async (bin: string, extra: string[]): Promise<{ headers: string; items: number }> => {
        const r = await run(bin, ['--kubeconfig', server.kubeconfig, '-n', NS, 'get', 'configmaps', '-o', 'json', '-v=8', ...extra], {
          env,
          timeoutMs: 60_000,
        });
        assert.equal(r.code, 0, r.stderr.slice(-2000));
        const lines = r.stderr.split('\n');
        const at = lines.findIndex((l) => l.includes(`/api/v1/namespaces/${NS}/configmaps?limit=500`));
        assert.ok(at >= 0, r.stderr.slice(-2000));
        const end = lines.findIndex((l, i) => i > at && /Response Body/.test(l));
        return { headers: lines.slice(at, end).join('\n'), items: (JSON.parse(r.stdout) as { items: unknown[] }).items.length };
      };
      const gz = await get(tools.kubectl, []);
      assert.equal(gz.items, 40);
      assert.match(gz.headers, /Vary: Accept-Encoding/, gz.headers);
      const plain = await get(tools.kubectl, ['--disable-compression=true']);
      assert.equal(plain.items, 40);
      assert.doesNotMatch(plain.headers, /Vary/, plain.headers);
      const old = await get(tools.kubectl120, []);
      assert.equal(old.items, 40);
      assert.match(old.headers, /Vary: Accept-Encoding/, old.headers);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers a write slower than ?timeout= with the timeout filter's 504 (HTTP/1.1 and HTTP/2); the late work is dropped and not stored", async () => {
    // One connection, so that the answer after the timeout is seen to leave it usable.
    const one = new RawClient(server.url, adminCredentials(server.dataDir), { maxSockets: 1 });
    const session = h2connect(server.url, adminCredentials(server.dataDir));
    try {
      const res = await one.request({
        method: 'POST',
        path: `${CMS}?timeout=1s&fieldManager=late-h1`,
        headers: { ...JSON_CT, 'audit-id': 'deadline-test-1' },
        body: configMap('late-h1', { [HOLD]: 'true' }),
      });
      assertFilter504(res, 'HTTP/1.1');
      assert.equal(res.headers['audit-id'], 'deadline-test-1', 'the audit ID comes from outside the timeout filter');
      assert.equal(hold.held(), 1, 'the handler is still waiting in admission');
      assert.equal((await one.request({ path: '/version' })).status, 200, 'the connection serves the next request');

      const h2res = await h2(
        session,
        { ':method': 'POST', ':path': `${CMS}?timeout=1s&fieldManager=late-h2`, ...JSON_CT },
        configMap('late-h2', { [HOLD]: 'true' }),
      );
      assertFilter504(h2res, 'HTTP/2');
      assert.equal((await h2(session, { ':path': `${CMS}/big-0`, accept: 'application/json' })).status, 200, 'the session serves the next request');

      // The handlers go on once admission lets them, and stop before storage: their context is done.
      hold.release();
      for (const name of ['late-h1', 'late-h2']) {
        await eventually(10_000, `the post-timeout activity of ${name} is logged`, async () =>
          logged.find((l) => l.includes('post-timeout activity') && l.includes(`fieldManager=${name}`)),
        );
        assert.equal((await one.request({ path: `${CMS}/${name}` })).status, 404, `${name} was not stored`);
      }
      // What an operator sees: the terminations and the handlers' activity after them, in upstream's metrics.
      const metrics = (await one.request({ path: '/metrics' })).text();
      assert.match(
        metrics,
        /^apiserver_request_terminations_total\{verb="POST",group="",version="v1",resource="configmaps",subresource="",scope="resource",component="apiserver",code="504"\} 2$/m,
      );
      assert.match(metrics, /^apiserver_request_post_timeout_total\{source="timeout-handler",status="ok"\} 2$/m);
      // A write in time is not affected.
      assert.equal((await one.request({ method: 'POST', path: `${CMS}?timeout=30s`, headers: JSON_CT, body: configMap('in-time') })).status, 201);
    } finally {
      hold.release();
      one.close();
      session.close();
    }
  });

  it('answers a DELETE slower than ?timeout= with the 504; the late delete stops before storage and the object stays', async () => {
    const one = new RawClient(server.url, adminCredentials(server.dataDir), { maxSockets: 1 });
    try {
      assert.equal((await one.request({ method: 'POST', path: CMS, headers: JSON_CT, body: configMap('late-delete', { [HOLD_DELETE]: 'true' }) })).status, 201);
      const res = await one.request({ method: 'DELETE', path: `${CMS}/late-delete?timeout=1s` });
      assertFilter504(res, 'DELETE');
      assert.equal(hold.held(), 1, 'the DELETE is still waiting in admission');
      hold.release();
      await eventually(10_000, 'the post-timeout activity of the DELETE is logged', async () =>
        logged.find((l) => l.includes('post-timeout activity') && l.includes('late-delete')),
      );
      assert.equal((await one.request({ path: `${CMS}/late-delete` })).status, 200, 'the timed-out DELETE did not remove the object');
    } finally {
      hold.release();
      one.close();
    }
  });

  it('answers a request whose client sends its body too slowly with the 504 at the deadline', async () => {
    const session = h2connect(server.url, adminCredentials(server.dataDir));
    try {
      const body = configMap('slow-body');
      // Half the body, then nothing: the handler waits for the rest until the deadline.
      const res = await h2(
        session,
        { ':method': 'POST', ':path': `${CMS}?timeout=500ms`, ...JSON_CT, 'content-length': String(body.length) },
        body.slice(0, body.length / 2),
        true,
      );
      assertFilter504(res, 'slow body');
      assert.equal((await h2(session, { ':path': '/version' })).status, 200);
      assert.equal((await client.request({ path: `${CMS}/slow-body` })).status, 404);
    } finally {
      session.close();
    }
  });

  describe('with requestTimeout and responseCompression set', () => {
    let tight: TestServer;
    let tightClient: RawClient;
    const tightHold = holdingAdmission();

    before(async () => {
      tight = await startTestServer({ storage: 'memory', admission: [tightHold.plugin], requestTimeout: '2s', responseCompression: false });
      tightClient = new RawClient(tight.url, adminCredentials(tight.dataDir));
    });
    after(async () => {
      tightHold.release();
      tightClient?.close();
      await tight?.stop();
    });

    it('times requests out at the server deadline without ?timeout=, with ?timeout=0 and with a longer one; watches have none', async () => {
      for (const [i, q] of ['', '?timeout=0', '?timeout=10m', '?timeout=-1s'].entries()) {
        const res = await tightClient.request({
          method: 'POST',
          path: `/api/v1/namespaces/default/configmaps${q}`,
          headers: JSON_CT,
          body: configMap(`held-${i}`, { [HOLD]: 'true' }),
        });
        assertFilter504(res, q || 'no ?timeout=');
      }
      tightHold.release();
      assert.equal(
        (await tightClient.request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps?timeout=10m', headers: JSON_CT, body: configMap('quick') }))
          .status,
        201,
      );
      // A watch is long-running: it outlives the 2 s deadline and ends at its own timeoutSeconds.
      const w = await tightClient.request({
        path: '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=3&timeout=1s',
        headers: { accept: 'application/json' },
      });
      assert.equal(w.status, 200);
      assert.ok(watchLines(w.body).some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'quick'));
    });

    it('responseCompression: false sends large lists uncompressed to clients that ask', async () => {
      for (let i = 0; i < 40; i++) {
        const r = await tightClient.request({
          method: 'POST',
          path: '/api/v1/namespaces/default/configmaps',
          headers: JSON_CT,
          body: configMap(`big-${i}`, {}, { v: 'y'.repeat(4000) }),
        });
        assert.equal(r.status, 201, r.text());
      }
      const r = await tightClient.request({
        path: '/api/v1/namespaces/default/configmaps',
        headers: { accept: 'application/json', 'accept-encoding': 'gzip' },
      });
      assert.equal(r.status, 200);
      assert.ok(r.body.length > 128 * 1024);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers.vary, undefined);
      // ... which the default server compresses.
      assert.equal((await list({ 'accept-encoding': 'gzip' })).headers['content-encoding'], 'gzip');
    });
  });

  it('kplane serve --request-timeout and --response-compression=false', async () => {
    const procs = kplaneProcesses();
    const dir = await mkdtemp(join(tmpdir(), 'kplane-flags-'));
    try {
      const p = await procs.start(
        ['serve', '--data-dir', dir, '--secure-port', '0', '--controllers=false', '--request-timeout=3s', '--response-compression=false'],
        /kplane is serving on (https:\/\/\S+)/,
      );
      const url = /https:\/\/\S+/.exec(p.firstLine)![0];
      const creds = adminCredentials(dir);
      const session = h2connect(url, creds);
      const raw = new RawClient(url, creds);
      try {
        const body = configMap('slow-body');
        const res = await h2(
          session,
          { ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', ...JSON_CT, 'content-length': String(body.length) },
          body.slice(0, 10),
          true,
        );
        assertFilter504(res, '--request-timeout');
        for (let i = 0; i < 30; i++) {
          const r = await raw.request({
            method: 'POST',
            path: '/api/v1/namespaces/default/configmaps',
            headers: JSON_CT,
            body: configMap(`big-${i}`, {}, { v: 'z'.repeat(5000) }),
          });
          assert.equal(r.status, 201, r.text());
        }
        const big = await raw.request({ path: '/api/v1/namespaces/default/configmaps', headers: { accept: 'application/json', 'accept-encoding': 'gzip' } });
        assert.ok(big.body.length > 128 * 1024);
        assert.equal(big.headers['content-encoding'], undefined, '--response-compression=false');
      } finally {
        session.close();
        raw.close();
      }
      const bad = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--data-dir', dir, '--request-timeout=5'], { timeoutMs: 30_000 });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /invalid argument "5" for "--request-timeout" flag: time: missing unit in duration "5"/);
    } finally {
      procs.killAll();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
