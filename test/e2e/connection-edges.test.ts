// The server's connection edges through real sockets: idle and silent connections are closed as
// kube-apiserver closes them (IdleTimeout, ReadHeaderTimeout), never a connection with a watch in
// flight; HTTP/2 streams per connection are bounded; TLS offers Go's default suites, and
// --tls-cipher-suites / --tls-min-version restrict them (checked with openssl s_client).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect as netConnect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpsClient } from '../../src/client/https.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { adminCredentials } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Resolves when `emitter` closes, or rejects after `ms` (the test's bound, not a timing claim). */
function closedWithin(emitter: { once(ev: 'close', fn: () => void): unknown }, ms: number, what: string): Promise<void> {
  return new Promise((ok, fail) => {
    const t = setTimeout(() => fail(new Error(`${what}: still open after ${ms} ms`)), ms);
    emitter.once('close', () => {
      clearTimeout(t);
      ok();
    });
  });
}

describe('idle connections and slow headers', () => {
  let srv: TestServer;
  let creds: ReturnType<typeof adminCredentials>;
  const port = (): number => srv.cp.port;
  before(async () => {
    srv = await startTestServer({ storage: 'memory', idleTimeoutMs: 600, readHeaderTimeoutMs: 600 });
    creds = adminCredentials(srv.dataDir);
  });
  after(async () => {
    await srv?.stop();
  });

  const tlsOpen = (alpn: string[]): Promise<TLSSocket> =>
    new Promise((ok, fail) => {
      const s = tlsConnect({ host: '127.0.0.1', port: port(), ca: creds.ca, servername: 'localhost', ALPNProtocols: alpn }, () => ok(s));
      s.once('error', fail);
    });

  test('a TCP connection that never starts TLS is closed', async () => {
    const s = netConnect(port(), '127.0.0.1');
    s.on('error', () => {});
    await closedWithin(s, 10_000, 'silent TCP connection');
  });

  test('a TLS connection (HTTP/1.1) that sends nothing is closed, before authentication', async () => {
    const s = await tlsOpen(['http/1.1']);
    s.on('error', () => {});
    await closedWithin(s, 10_000, 'silent TLS connection');
  });

  test('a request whose headers never end is cut', async () => {
    const s = await tlsOpen(['http/1.1']);
    s.on('error', () => {});
    s.write('GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => s.writable && s.write('X-Slow: 1\r\n'), 100);
    try {
      await closedWithin(s, 10_000, 'slow-header connection');
    } finally {
      clearInterval(drip);
    }
  });

  test('an HTTP/1.1 keep-alive connection is closed once idle after a request', async () => {
    const s = await tlsOpen(['http/1.1']);
    s.on('error', () => {});
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString('latin1')));
    s.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
    await closedWithin(s, 10_000, 'idle keep-alive connection');
    assert.match(got, /^HTTP\/1\.1 200 /);
  });

  test('an HTTP/2 connection with no stream is sent GOAWAY and closed', async () => {
    const session = h2connect(srv.url, { ca: creds.ca, servername: 'localhost' });
    session.on('error', () => {});
    let goaway = false;
    session.on('goaway', () => (goaway = true));
    await closedWithin(session, 10_000, 'idle HTTP/2 session');
    assert.equal(goaway, true);
  });

  test('an HTTP/2 watch that sends nothing for several idle timeouts stays open and gets its event', async () => {
    const session: ClientHttp2Session = h2connect(srv.url, { ca: creds.ca, cert: creds.cert, key: creds.key, servername: 'localhost' });
    session.on('error', () => {});
    try {
      const stream = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=60' });
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (body += d));
      await new Promise((ok) => stream.once('response', ok));
      await sleep(2_000); // over three idle timeouts with the watch open and silent
      assert.equal(session.closed || session.destroyed, false, 'the session with a watch in flight was closed');
      const create = session.request({ ':method': 'POST', ':path': '/api/v1/namespaces/default/configmaps', 'content-type': 'application/json' });
      create.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-idle' } }));
      create.resume();
      const deadline = Date.now() + 10_000;
      while (!body.includes('"after-idle"') && Date.now() < deadline) await sleep(50);
      assert.match(body, /"type":"ADDED".*"after-idle"/s);
      stream.close();
    } finally {
      session.close();
    }
  });
});

describe('HTTP/2 streams per connection', () => {
  test('the server advertises 100 concurrent streams by default, and the option changes it', async () => {
    for (const [opt, want] of [
      [undefined, 100],
      [7, 7],
    ] as const) {
      const srv = await startTestServer({ storage: 'memory', ...(opt !== undefined ? { http2MaxStreamsPerConnection: opt } : {}) });
      try {
        const creds = adminCredentials(srv.dataDir);
        const session = h2connect(srv.url, { ca: creds.ca, servername: 'localhost' });
        session.on('error', () => {});
        const settings = await new Promise<{ maxConcurrentStreams?: number }>((ok) => session.once('remoteSettings', ok));
        session.close();
        assert.equal(settings.maxConcurrentStreams, want);
      } finally {
        await srv.stop();
      }
    }
  });
});

describe("kplane's own client past the streams a connection allows", () => {
  test('with more watches open than one connection takes, requests still get through (a second connection)', async () => {
    const srv = await startTestServer({ storage: 'memory', http2MaxStreamsPerConnection: 5 });
    const client = createHttpsClient(srv.kubeconfig);
    const stop = new AbortController();
    try {
      const gvr = { group: '', version: 'v1', resource: 'configmaps' };
      const watching: Promise<void>[] = [];
      for (let i = 0; i < 8; i++)
        watching.push(
          (async () => {
            for await (const _ of client.watch(gvr, 'default', { signal: stop.signal }));
          })().catch(() => {}),
        );
      await sleep(500);
      const listed = await Promise.race([client.list(gvr, 'default'), sleep(10_000).then(() => 'no answer within 10 s')]);
      assert.notEqual(listed, 'no answer within 10 s');
      stop.abort();
      await Promise.all(watching);
    } finally {
      stop.abort();
      await client.close();
      await srv.stop();
    }
  });
});

/**
 * openssl s_client against the server: whether the handshake succeeded, and the cipher it agreed.
 * Asynchronous: the server runs in this process.
 */
async function sClient(port: number, args: string[]): Promise<{ ok: boolean; cipher: string; out: string }> {
  const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const kill = setTimeout(() => child.kill(), 20_000);
  await new Promise((ok) => child.once('close', ok));
  clearTimeout(kill);
  const cipher = /Cipher is (\S+)/.exec(out)?.[1] ?? '';
  return { ok: cipher !== '' && cipher !== '(NONE)', cipher, out };
}

describe('TLS cipher suites and versions (openssl s_client)', { skip: spawnSync('openssl', ['version']).status !== 0 && 'no openssl' }, () => {
  test("defaults are Go's: ECDHE AEAD and ECDHE CBC-SHA; RSA key exchange, CBC-SHA256, CCM8 and ARIA are refused", async () => {
    const srv = await startTestServer({ storage: 'memory' });
    try {
      const tls12 = (cipher: string): Promise<{ ok: boolean; cipher: string }> => sClient(srv.cp.port, ['-tls1_2', '-cipher', cipher]);
      assert.equal((await tls12('ECDHE-RSA-AES128-GCM-SHA256')).cipher, 'ECDHE-RSA-AES128-GCM-SHA256');
      assert.equal((await tls12('ECDHE-RSA-CHACHA20-POLY1305')).cipher, 'ECDHE-RSA-CHACHA20-POLY1305');
      assert.equal((await tls12('ECDHE-RSA-AES256-SHA')).cipher, 'ECDHE-RSA-AES256-SHA');
      for (const refused of [
        'AES128-SHA',
        'AES256-GCM-SHA384',
        'ECDHE-RSA-AES128-SHA256',
        'AES128-CCM8',
        'DHE-RSA-AES128-GCM-SHA256',
        'ECDHE-ARIA128-GCM-SHA256',
      ])
        assert.equal((await tls12(refused)).ok, false, `${refused} was accepted`);
      // With no restriction the server's order decides: an AEAD before CBC.
      assert.equal((await tls12('ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256')).cipher, 'ECDHE-RSA-AES128-GCM-SHA256');
      assert.equal((await sClient(srv.cp.port, ['-tls1_3'])).ok, true);
      assert.equal((await sClient(srv.cp.port, ['-tls1_1'])).ok, false);
    } finally {
      await srv.stop();
    }
  });

  test('tlsCipherSuites and tlsMinVersion restrict what is offered', async () => {
    const srv = await startTestServer({ storage: 'memory', tlsCipherSuites: ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384'] });
    try {
      assert.equal((await sClient(srv.cp.port, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES256-GCM-SHA384'])).ok, true);
      assert.equal((await sClient(srv.cp.port, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-GCM-SHA256'])).ok, false);
    } finally {
      await srv.stop();
    }
    const srv13 = await startTestServer({ storage: 'memory', tlsMinVersion: 'VersionTLS13' });
    try {
      assert.equal((await sClient(srv13.cp.port, ['-tls1_2'])).ok, false);
      assert.equal((await sClient(srv13.cp.port, ['-tls1_3'])).ok, true);
    } finally {
      await srv13.stop();
    }
  });

  test('kplane serve --tls-cipher-suites / --tls-min-version / --http2-max-streams-per-connection', async () => {
    const procs = kplaneProcesses();
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-tls-flags-'));
    try {
      const p = await procs.start(
        [
          'serve',
          '--data-dir',
          dataDir,
          '--secure-port',
          '0',
          '--controllers=false',
          '--tls-cipher-suites',
          'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
          '--tls-min-version',
          'VersionTLS12',
          '--http2-max-streams-per-connection',
          '3',
        ],
        /serving on https:\/\/127\.0\.0\.1:(\d+)/,
      );
      const port = Number(/:(\d+)/.exec(p.firstLine)![1]);
      assert.equal((await sClient(port, ['-tls1_2', '-cipher', 'ECDHE-RSA-CHACHA20-POLY1305'])).cipher, 'ECDHE-RSA-CHACHA20-POLY1305');
      assert.equal((await sClient(port, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-GCM-SHA256'])).ok, false);
      const session = h2connect(`https://127.0.0.1:${port}`, { ca: adminCredentials(dataDir).ca, servername: 'localhost' });
      session.on('error', () => {});
      const settings = await new Promise<{ maxConcurrentStreams?: number }>((ok) => session.once('remoteSettings', ok));
      session.close();
      assert.equal(settings.maxConcurrentStreams, 3);
      await assert.rejects(procs.start(['serve', '--data-dir', dataDir, '--tls-cipher-suites', 'TLS_NOPE'], /never/), {
        message: /exited \(2\) before it was ready: kplane: Cipher suite TLS_NOPE not supported or doesn't exist/,
      });
    } finally {
      procs.killAll();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test("unknown names get component-base's errors", async () => {
    await assert.rejects(startTestServer({ storage: 'memory', tlsCipherSuites: ['TLS_RSA_WITH_FOO'] }), {
      message: "Cipher suite TLS_RSA_WITH_FOO not supported or doesn't exist",
    });
    await assert.rejects(startTestServer({ storage: 'memory', tlsMinVersion: 'TLS1.2' }), { message: 'unknown tls version "TLS1.2"' });
    await assert.rejects(startTestServer({ storage: 'memory', tlsCipherSuites: ['TLS_RSA_WITH_RC4_128_SHA'] }), {
      message: /^none of the TLS cipher suites TLS_RSA_WITH_RC4_128_SHA is available in this server's TLS library \(OpenSSL /,
    });
  });
});
