import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../test/support/server.js';
import { ApiServer } from '../server/apiserver.js';
import { createAuthenticator } from '../server/filters/authentication.js';
import { namespaceLifecycle } from '../registry/core/namespaces/lifecycle.js';
import { versionInfo } from '../controlplane/controlplane.js';
import { StatusError } from '../apimachinery/errors.js';
import { ClientNetworkError } from './errors.js';
import { createHttpsClient } from './https.js';
import { createLoopbackClient } from './loopback.js';
import { clientSuite, configmaps, within } from './suite.test-support.js';
import type { KubeClient } from './types.js';

const TOKEN = 'loopback-test-token';
let server: TestServer;
let apiServer: ApiServer;
let loopback: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  // A second ApiServer over the same registry, as createControlPlane builds its own: what the
  // loopback client reaches is the real request path (authentication, admission, handlers).
  const registry = server.cp.registry;
  apiServer = new ApiServer({
    registry,
    admission: [namespaceLifecycle(registry)],
    authenticate: createAuthenticator({ tokens: new Map([[TOKEN, { name: 'system:apiserver', groups: ['system:masters'] }]]) }),
    maxRequestBodyBytes: 3 * 1024 * 1024,
    version: versionInfo(),
    serverAddress: () => '127.0.0.1:0',
  });
  loopback = createLoopbackClient(apiServer.handle, TOKEN);
});

after(async () => {
  await loopback?.close();
  apiServer?.shutdown();
  await server?.stop();
});

clientSuite('loopback', () => ({ server, client: loopback }));

test('loopback: requests are authenticated; a wrong token is 401', async () => {
  const bad = createLoopbackClient(apiServer.handle, 'wrong');
  await assert.rejects(bad.list(configmaps, 'default'), (e: unknown) => e instanceof StatusError && e.code === 401);
  await bad.close();
});

test('loopback: writes are visible to an HTTPS client of the same server, and admission runs', async () => {
  const https = createHttpsClient(server.kubeconfig);
  try {
    await loopback.create(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-loopback' }, data: { a: '1' } });
    const got = await https.get(configmaps, 'default', 'from-loopback');
    assert.deepEqual(got.data, { a: '1' });
    // NamespaceLifecycle: creating in a namespace that does not exist is refused.
    await assert.rejects(
      loopback.create(configmaps, 'no-such-namespace', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }),
      (e: unknown) => e instanceof StatusError && e.code === 404,
    );
  } finally {
    await https.close();
  }
});

test('loopback: closing the client ends open watches on the server side', async () => {
  const c = createLoopbackClient(apiServer.handle, TOKEN);
  const abort = new AbortController();
  const it = (async () => {
    try {
      for await (const _ of c.watch(configmaps, 'default', { signal: abort.signal })) void _;
      return 'ended';
    } catch (e) {
      return e instanceof ClientNetworkError ? 'network-error' : String(e);
    }
  })();
  await new Promise((r) => setTimeout(r, 50));
  await c.close();
  assert.match(await within(5_000, 'watch end on close', it), /ended|network-error/);
});

// ---- the transport against small fake handlers -----------------------------------------------

test('loopback transport: backpressure pauses the handler until the client reads (drain)', async () => {
  let drains = 0;
  let closed = false;
  const chunk = 'x'.repeat(16 * 1024) + '\n';
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    req.on('close', () => (closed = true));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    let i = 0;
    const pump = (): void => {
      while (i < 64) {
        i++;
        if (!res.write(i === 64 ? '{"n":64}\n' : chunk)) {
          res.once('drain', () => {
            drains++;
            pump();
          });
          return;
        }
      }
      res.end();
    };
    pump();
  };
  const c = createLoopbackClient(handler, 't', { requestTimeoutMs: 5_000 });
  // The body is not one JSON document, so reading it as one must fail after the whole body came.
  await assert.rejects(c.get(configmaps, 'default', 'x'), (e: unknown) => e instanceof ClientNetworkError && /not JSON/.test(e.message));
  assert.ok(drains > 0, 'the handler had to wait for drain at least once');
  assert.ok(closed, "req 'close' fires when the exchange is over");
});

test('loopback transport: a handler that resets mid-body is a ClientNetworkError; headersSent is synchronous', async () => {
  let headersSentAfterWrite: boolean | undefined;
  const handler = (_req: IncomingMessage, res: ServerResponse): void => {
    res.statusCode = 200;
    res.write('{"partial":');
    headersSentAfterWrite = res.headersSent;
    setTimeout(() => res.destroy(), 10);
  };
  const c = createLoopbackClient(handler, 't');
  await assert.rejects(c.get(configmaps, 'default', 'x'), (e: unknown) => e instanceof ClientNetworkError && !(e instanceof StatusError));
  assert.equal(headersSentAfterWrite, true);
});

test("loopback transport: aborting a watch emits 'close' on both request and response", async () => {
  const events: string[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    assert.equal(req.headers.authorization, 'Bearer tok');
    assert.equal(req.method, 'GET');
    assert.match(req.url ?? '', /watch=true/);
    req.on('close', () => events.push('req-close'));
    res.on('close', () => events.push('res-close'));
    res.statusCode = 200;
    res.flushHeaders();
    res.write('{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a"}}}\n');
  };
  const c = createLoopbackClient(handler, 'tok');
  const abort = new AbortController();
  const seen: string[] = [];
  for await (const ev of c.watch(configmaps, 'default', { signal: abort.signal })) {
    seen.push(`${ev.type} ${ev.object.metadata?.name}`);
    abort.abort();
  }
  assert.deepEqual(seen, ['ADDED a']);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(events.sort(), ['req-close', 'res-close']);
});

test('loopback transport: an ERROR event with a Status is thrown from the iterator', async () => {
  const handler = (_req: IncomingMessage, res: ServerResponse): void => {
    res.statusCode = 200;
    res.end(
      '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}\n',
    );
  };
  const c = createLoopbackClient(handler, 't');
  const abort = new AbortController();
  await assert.rejects(
    (async () => {
      for await (const _ of c.watch(configmaps, 'default', { signal: abort.signal, resourceVersion: '1' })) void _;
    })(),
    (e: unknown) => e instanceof StatusError && e.code === 410 && e.reason === 'Expired',
  );
});
