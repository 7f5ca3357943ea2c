import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import { startTestServer, type TestServer } from '../../test/support/server.js';
import { freePort } from '../../test/support/etcd.js';
import { ClientAbortError, ClientNetworkError } from './errors.js';
import { mayFailOver } from './failover.js';
import { createHttpsClient } from './https.js';
import { configmaps } from './suite.test-support.js';

let server: TestServer;
let dead: string;

before(async () => {
  server = await startTestServer({ storage: 'memory' });
  dead = `https://127.0.0.1:${await freePort()}`;
});

after(async () => {
  await server?.stop();
});

for (const http2 of [true, false]) {
  test(`servers: a refused server is skipped for reads and writes, and requests stay on the next (${http2 ? 'HTTP/2' : 'HTTP/1.1'})`, async () => {
    const moves: string[] = [];
    const client = createHttpsClient(server.kubeconfig, {
      http2,
      servers: [dead, server.url],
      onFailover: (from, to, reason) => moves.push(`${from} -> ${to}: ${reason}`),
    });
    try {
      const name = `failover-${http2 ? 'h2' : 'h1'}`;
      const created = await client.create<KubeObject>(configmaps, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
      assert.equal(created.metadata?.name, name);
      assert.equal(moves.length, 1, moves.join('\n'));
      assert.match(moves[0]!, new RegExp(`^${dead} -> ${server.url}: .*ECONNREFUSED`));
      const got = await client.get(configmaps, 'default', name);
      assert.equal(got.metadata?.uid, created.metadata?.uid);
      assert.equal(moves.length, 1, 'requests stay on the server that answered');
      await client.delete(configmaps, 'default', name);
    } finally {
      await client.close();
    }
  });
}

test('servers: when no server can be reached the last network error is thrown', async () => {
  const client = createHttpsClient(server.kubeconfig, { servers: [dead, dead.replace(/:\d+$/, ':1')] });
  try {
    await assert.rejects(client.list(configmaps, 'default'), (e: unknown) => e instanceof ClientNetworkError && /ECONNREFUSED/.test(e.message));
  } finally {
    await client.close();
  }
});

test('servers: only https URLs are taken', () => {
  assert.throws(() => createHttpsClient(server.kubeconfig, { servers: ['http://127.0.0.1:6443'] }), /not an https:\/\/ URL/);
});

test('mayFailOver: reads after any network error, writes only when nothing was sent', () => {
  const refused = new ClientNetworkError('POST /x: connect ECONNREFUSED', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
  const broken = new ClientNetworkError('POST /x: stream closed before a response (code 2)');
  assert.equal(mayFailOver('POST', refused), true);
  assert.equal(mayFailOver('POST', broken), false, 'a write that may have been applied is not sent twice');
  assert.equal(mayFailOver('GET', broken), true);
  assert.equal(mayFailOver('GET', new ClientAbortError()), false, 'an abort is the caller asking to stop');
  assert.equal(mayFailOver('GET', new Error('not a network error')), false);
});
