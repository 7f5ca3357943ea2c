// The controllers' ServiceAccount tokens (kplane controller-manager --use-service-account-credentials)
// are renewed when 20 % of their lifetime is left, as upstream's token source does. The first
// renewal of a 600 s token comes 480 s in: the timers are mocked, the server is real.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { startTestServer } from '../../test/support/server.js';
import { createHttpsClient, loadKubeconfig } from '../client/https.js';
import type { RestClient } from '../client/rest.js';
import type { ControllerFactory } from './types.js';
import { serviceAccountClients } from './credentials.js';

test('a controller token is renewed at 80 % of its lifetime, through TokenRequest', async () => {
  const server = await startTestServer({ storage: 'memory', controllers: [] });
  const config = loadKubeconfig(server.kubeconfig);
  const root = createHttpsClient(config) as RestClient;
  const asked: string[] = [];
  const request = root.request.bind(root);
  root.request = ((method: string, path: string, ...rest: unknown[]) => {
    if (method === 'POST' && path.endsWith('/token')) asked.push(path);
    return (request as (...a: unknown[]) => unknown)(method, path, ...rest);
  }) as typeof root.request;
  const controller = { name: 'demo-controller', serviceAccountName: 'demo-controller' } as unknown as ControllerFactory;
  // Mocked before the first token, so that its renewal timer is a mocked one.
  mock.timers.enable({ apis: ['setTimeout'] });
  let clients: Awaited<ReturnType<typeof serviceAccountClients>> | undefined;
  try {
    clients = await serviceAccountClients({ root, config, controllers: [controller], expirationSeconds: 600 });
    assert.deepEqual(asked, ['/api/v1/namespaces/kube-system/serviceaccounts/demo-controller/token']);
    try {
      mock.timers.tick(470_000);
      await new Promise((r) => setImmediate(r));
      assert.equal(asked.length, 1, 'not renewed before 80 % of the lifetime');
      mock.timers.tick(15_000);
    } finally {
      mock.timers.reset();
    }
    for (let i = 0; i < 200 && asked.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(asked.length, 2, 'renewed once past 80 % of the lifetime');
    const client = clients.clientFor(controller) as RestClient | undefined;
    assert.ok(client);
    // The client keeps working with the renewed token.
    const ns = await client.request<{ metadata?: { name?: string } }>('GET', '/api/v1/namespaces/kube-system').catch((e: unknown) => e);
    assert.ok(!(ns instanceof Error) || /forbidden/i.test(ns.message), String(ns));
  } finally {
    mock.timers.reset();
    await clients?.close();
    await root.close();
    await server.stop();
  }
});
