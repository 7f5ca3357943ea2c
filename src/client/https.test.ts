import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../../test/support/server.js';
import { tokenKubeconfig } from '../server/kubeconfig.js';
import { StatusError } from '../apimachinery/errors.js';
import { ClientNetworkError } from './errors.js';
import { createHttpsClient, loadKubeconfig } from './https.js';
import { clientSuite, configmaps, within } from './suite.test-support.js';
import type { KubeClient } from './types.js';

const TOKEN = 'https-test-token-0123456789';
let server: TestServer;
let h2: KubeClient;
let h1: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'memory', tokens: new Map([[TOKEN, { name: 'tester', groups: ['system:masters'] }]]) });
  h2 = createHttpsClient(server.kubeconfig);
  h1 = createHttpsClient(server.kubeconfig, { http2: false });
});

after(async () => {
  await h2?.close();
  await h1?.close();
  await server?.stop();
});

clientSuite('https-h2', () => ({ server, client: h2 }));
clientSuite('https-h1', () => ({ server, client: h1 }));

test('loadKubeconfig reads the admin kubeconfig: server, CA and client certificate', () => {
  const cfg = loadKubeconfig(server.kubeconfig);
  assert.equal(cfg.server, server.url);
  assert.match(cfg.caPem ?? '', /BEGIN CERTIFICATE/);
  assert.match(cfg.certPem ?? '', /BEGIN CERTIFICATE/);
  assert.match(cfg.keyPem ?? '', /PRIVATE KEY/);
});

test('a bearer-token kubeconfig authenticates; a wrong token is a 401 StatusError', async () => {
  const ca = await readFile(`${server.dataDir}/pki/ca.crt`, 'utf8');
  const good = createHttpsClient(tokenKubeconfig({ server: server.url, caCertPem: ca, token: TOKEN }));
  const bad = createHttpsClient(tokenKubeconfig({ server: server.url, caCertPem: ca, token: 'nope' }));
  try {
    const list = await good.list(configmaps, 'default');
    assert.equal(list.kind, 'ConfigMapList');
    await assert.rejects(bad.list(configmaps, 'default'), (e: unknown) => e instanceof StatusError && e.code === 401 && e.reason === 'Unauthorized');
  } finally {
    await good.close();
    await bad.close();
  }
});

test('no server listening is a ClientNetworkError, not a StatusError', async () => {
  for (const http2 of [true, false]) {
    const c = createHttpsClient({ ...loadKubeconfig(server.kubeconfig), server: 'https://127.0.0.1:1' }, { http2 });
    try {
      await assert.rejects(
        within(5_000, 'refused', c.get(configmaps, 'default', 'x')),
        (e: unknown) => e instanceof ClientNetworkError && !(e instanceof StatusError),
      );
    } finally {
      await c.close();
    }
  }
});

test('HTTP/2: the session is re-opened after the server drops it', async () => {
  const c = createHttpsClient(server.kubeconfig);
  try {
    await c.list(configmaps, 'default');
    // Kill the live session under the client (as a server restart or idle cut would); the
    // cast reaches a private field because nothing public should expose the sessions.
    const transport = (c as unknown as { transport: { sessions: Map<{ destroy(): void; destroyed: boolean }, number> } }).transport;
    const [s] = transport.sessions.keys();
    assert.ok(s, 'a session after the first request');
    s.destroy();
    assert.ok(s.destroyed);
    const list = await c.list(configmaps, 'default');
    assert.equal(list.kind, 'ConfigMapList');
  } finally {
    await c.close();
  }
});

test('an aborted request rejects promptly with an AbortError', async () => {
  const abort = new AbortController();
  abort.abort();
  await assert.rejects(
    h2.get(configmaps, 'default', 'x', { signal: abort.signal }),
    (e: unknown) => e instanceof ClientNetworkError && e.name === 'AbortError',
  );
});

test('HTTP/2: answered requests are not reset, so 1,500 on one session stay under the server rapid-reset limit', async () => {
  // Each request used to end with RST_STREAM(CANCEL) after its answer was read; nghttp2 counts
  // those (CVE-2023-44487's limit, about 1,000) and ends the session with GOAWAY INTERNAL_ERROR.
  const client = createHttpsClient(server.kubeconfig);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = next++; i < 1500; i = next++) await client.get({ group: '', version: 'v1', resource: 'namespaces' }, undefined, 'default');
      }),
    );
  } finally {
    await client.close();
  }
});

test('close() keeps the process alive until it settles, also after leaving a watch with break', async () => {
  // Idle sessions are unreferenced so that they never hold a process open; a process whose server
  // is elsewhere used to end with exit code 13 (an unsettled top-level await) inside close().
  const httpsModule = fileURLToPath(new URL('./https.ts', import.meta.url));
  const script = `
    const { createHttpsClient } = await import(${JSON.stringify(httpsModule)});
    const c = createHttpsClient(${JSON.stringify(server.kubeconfig)});
    const gvr = { group: '', version: 'v1', resource: 'namespaces' };
    await c.list(gvr);
    for await (const _ of c.watch(gvr, undefined, { signal: new AbortController().signal })) break;
    await c.close();
    process.exitCode = 3;`;
  const code = await new Promise<number | null>((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 60_000 }, () => {});
    child.on('exit', (c) => resolve(c));
  });
  assert.equal(code, 3, 'the child ran past close() and set its exit code');
});
