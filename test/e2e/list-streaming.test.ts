// Large lists are written as the client reads them (src/server/stream-body.ts), and an answer the
// client does not take by the request's deadline is reset (the timeout filter), as are watches
// whose client reads nothing for a request timeout:
// - the streamed bytes are the store's list, identity and gzipped, over HTTP/1.1 and HTTP/2, and
//   kubectl reads them (it asks for gzip);
// - a client that stops reading a large list (HTTP/1.1 and HTTP/2) finds the answer cut short once
//   the request timeout (3 s here) has passed, instead of getting it whole whenever it reads again;
// - a watch whose client stops reading while events keep coming is reset.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent } from 'node:https';
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient, type Credentials } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run, tools } from '../support/tools.js';

const NS = 'stream';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const REQUEST_TIMEOUT_MS = 3_000;
/** ConfigMaps of ~24 KB of incompressible text: a list of ~19 MB, more than loopback's socket buffers hold. */
const COUNT = 800;
const PART_COUNT = 60;
const PART = `${CMS}?labelSelector=part%3Da`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Stalled {
  /** Resolves with the status once the headers are in; the body is then left unread. */
  readonly headers: Promise<number>;
  /** Reads on; resolves with how the body ended: complete, or cut short (and the bytes read). */
  resume(): Promise<{ complete: boolean; bytes: number }>;
  close(): void;
}

/** An HTTP/1.1 GET whose body is not read once the headers are in. */
function stalledH1(url: string, creds: Credentials, path: string): Stalled {
  const base = new URL(url);
  const agent = new Agent({ keepAlive: false, ca: creds.ca, cert: creds.cert!, key: creds.key! });
  const req = httpsRequest({ agent, host: base.hostname, port: base.port, path, headers: { accept: 'application/json' } });
  req.on('error', () => {});
  let bytes = 0;
  let response: IncomingMessage | undefined;
  const ended = new Promise<{ complete: boolean; bytes: number }>((resolve) => {
    req.on('response', (res) => {
      response = res;
      res.pause();
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ complete: res.complete, bytes }));
      res.on('aborted', () => resolve({ complete: false, bytes }));
      res.on('error', () => resolve({ complete: false, bytes }));
      res.on('close', () => resolve({ complete: res.complete, bytes }));
    });
    req.on('close', () => resolve({ complete: false, bytes }));
  });
  const headers = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => resolve(res.statusCode ?? 0));
    req.on('error', reject);
  });
  req.end();
  return {
    headers,
    resume: () => {
      response?.resume();
      return ended;
    },
    close: () => {
      req.destroy();
      agent.destroy();
    },
  };
}

/** An HTTP/2 GET (or watch) whose stream is paused once the headers are in: flow control stops the server. */
function stalledH2(session: ClientHttp2Session, path: string): Stalled & { readonly stream: ClientHttp2Stream } {
  const stream = session.request({ ':path': path, accept: 'application/json' });
  stream.end();
  stream.on('error', () => {});
  let bytes = 0;
  let status = 0;
  const ended = new Promise<{ complete: boolean; bytes: number }>((resolve) => {
    let complete = false;
    stream.on('end', () => (complete = true));
    // A reset stream closes with an error code; an answer sent whole, with NGHTTP2_NO_ERROR.
    stream.on('close', () => resolve({ complete: complete && stream.rstCode === 0, bytes }));
  });
  const headers = new Promise<number>((resolve, reject) => {
    stream.on('response', (h) => {
      status = Number(h[':status']);
      stream.pause();
      resolve(status);
    });
    stream.on('error', reject);
  });
  stream.on('data', (c: Buffer) => (bytes += c.length));
  return {
    stream,
    headers,
    resume: () => {
      stream.resume();
      return ended;
    },
    close: () => stream.close(),
  };
}

describe('streamed lists and stalled readers', { timeout: 240_000 }, () => {
  let server: TestServer;
  let creds: Required<Credentials>;
  let client: RawClient;
  let session: ClientHttp2Session;

  before(async () => {
    server = await startTestServer({ storage: 'memory', requestTimeout: REQUEST_TIMEOUT_MS });
    creds = adminCredentials(server.dataDir);
    client = new RawClient(server.url, creds);
    session = connect(server.url, { ca: creds.ca, cert: creds.cert, key: creds.key });
    session.on('error', () => {});
    const nss = server.cp.registry.lookup('', 'v1', 'namespaces')!.store;
    const cms = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
    await nss.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (let i = 0; i < COUNT; i++) {
      await cms.create(NS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        // The first PART_COUNT (~1.4 MB, several chunks) read whole well within the short request timeout.
        metadata: { name: `cm-${i}`, labels: { part: i < PART_COUNT ? 'a' : 'b' } },
        // Multi-byte text in some, so chunk boundaries fall between UTF-8 items of any length.
        data: { payload: randomBytes(18_000 + (i % 7) * 11).toString('base64') + (i % 3 ? '' : 'é日') },
      });
    }
  });
  after(async () => {
    session?.destroy();
    client?.close();
    await server?.stop();
  });

  it('are the store’s bytes, identity and gzipped, over HTTP/1.1 and HTTP/2, and kubectl reads them', async () => {
    const cms = server.cp.registry.lookup('', 'v1', 'configmaps')!.store;
    const want = await cms.listJSON(NS, { labelSelector: 'part=a' });
    assert.ok(want.length > 1e6, `a list of ${want.length} bytes`);
    const plain = await client.request({ path: PART, headers: { accept: 'application/json' }, timeoutMs: 60_000 });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'application/json');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.body.equals(want), 'HTTP/1.1 identity');
    const gz = await client.request({ path: PART, headers: { accept: 'application/json', 'accept-encoding': 'gzip' }, timeoutMs: 60_000 });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers['vary'], 'Accept-Encoding');
    assert.ok(gunzipSync(gz.body).equals(want), 'HTTP/1.1 gzip');
    for (const ae of [undefined, 'gzip']) {
      const body = await new Promise<Buffer>((resolve, reject) => {
        const st = session.request({ ':path': PART, accept: 'application/json', ...(ae ? { 'accept-encoding': ae } : {}) });
        const chunks: Buffer[] = [];
        st.on('data', (c: Buffer) => chunks.push(c));
        st.on('end', () => resolve(Buffer.concat(chunks)));
        st.on('error', reject);
        st.end();
      });
      assert.ok((ae ? gunzipSync(body) : body).equals(want), `HTTP/2 ${ae ?? 'identity'}`);
    }
    // kubectl (Go's transport asks for gzip and decodes it): the raw body as served.
    const r = await run(tools.kubectl, ['--kubeconfig', server.kubeconfig, 'get', '--raw', PART], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as { items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } };
    assert.equal(got.items.length, PART_COUNT);
    assert.deepEqual(JSON.parse(r.stdout), JSON.parse(want.toString('utf8')));
    const names = await run(tools.kubectl, ['--kubeconfig', server.kubeconfig, '-n', NS, 'get', 'configmaps', '-l', 'part=a', '-o', 'name'], {
      timeoutMs: 120_000,
    });
    assert.equal(names.code, 0, names.stderr);
    assert.equal(names.stdout.trim().split('\n').length, PART_COUNT);
  });

  for (const proto of ['HTTP/1.1', 'HTTP/2'] as const) {
    it(`cut a list short for an ${proto} client that stopped reading, once the request timeout passed`, async () => {
      const stalled = proto === 'HTTP/1.1' ? stalledH1(server.url, creds, CMS) : stalledH2(session, CMS);
      try {
        assert.equal(await stalled.headers, 200);
        // Not a timing assertion: the deadline has certainly passed by then.
        await sleep(REQUEST_TIMEOUT_MS + 2_000);
        const end = await stalled.resume();
        assert.equal(end.complete, false, `the answer was reset (${end.bytes} bytes read)`);
      } finally {
        stalled.close();
      }
      // The server answers on.
      assert.equal((await client.request({ path: `${CMS}?limit=1`, headers: { accept: 'application/json' } })).status, 200);
    });
  }

  it('reset a watch whose HTTP/2 client stopped reading while events kept coming', async () => {
    const watch = stalledH2(
      session,
      `${CMS}?watch=1&resourceVersion=${(await client.request({ path: `${CMS}?limit=1` })).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion}`,
    );
    assert.equal(await watch.headers, 200);
    // Events of ~100 KB each: more than the stream's flow-control window and the server's buffer.
    for (let i = 0; i < 6; i++) {
      const r = await client.request({
        method: 'POST',
        path: CMS,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `watched-${i}` },
          data: { payload: randomBytes(75_000).toString('base64') },
        }),
      });
      assert.equal(r.status, 201, r.text());
    }
    await eventually(REQUEST_TIMEOUT_MS + 15_000, 'the stalled watch is reset', async () => (watch.stream.closed ? true : undefined), 200);
    assert.notEqual(watch.stream.rstCode, 0, 'reset, not ended');
  });
});
