import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import type { AdmissionAttributes } from '../../admission/index.js';
import { StatusError } from '../../apimachinery/errors.js';
import { createLoopbackClient } from '../../client/loopback.js';
import type { KubeClient } from '../../client/types.js';
import { versionInfo } from '../../controlplane/controlplane.js';
import { ApiServer } from '../apiserver.js';
import { createAuthenticator } from './authentication.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };

// The authorization and impersonation slots, filled: what a later RBAC or identity module supplies.
describe('handler chain slots', () => {
  let server: TestServer;
  let apiServer: ApiServer;
  let client: KubeClient;
  const admittedAs: string[] = [];

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    apiServer = new ApiServer({
      registry: server.cp.registry,
      admission: [{ name: 'Recorder', admit: (a: AdmissionAttributes) => void admittedAs.push(a.userInfo.name) }],
      authenticate: createAuthenticator({ tokens: new Map([['t', { name: 'alice', groups: [] }]]) }),
      // Acts as bob when asked; may not touch secrets.
      impersonator: {
        impersonate: (req, user) =>
          req.headers['impersonate-user'] ? { name: String(req.headers['impersonate-user']), groups: ['system:authenticated'] } : user,
      },
      authorizer: {
        authorize: async (user, info) => (info.resource === 'secrets' ? { decision: 'deny', reason: `${user.name} may not` } : { decision: 'allow' }),
      },
      maxRequestBodyBytes: 3 * 1024 * 1024,
      version: versionInfo(),
      serverAddress: () => '127.0.0.1:0',
    });
    client = createLoopbackClient(apiServer.handle, 't');
  });

  after(async () => {
    await client?.close();
    apiServer?.shutdown();
    await server?.stop();
  });

  it('an Authorizer that denies makes a 403 naming user, verb and resource; one that allows lets the request through', async () => {
    await assert.rejects(client.list({ group: '', version: 'v1', resource: 'secrets' }, 'default'), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.code, 403);
      assert.equal(e.message, 'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default": alice may not');
      return true;
    });
    const created = await client.create(CONFIGMAPS, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slots', namespace: 'default' } });
    assert.equal(created.metadata?.name, 'slots');
    assert.deepEqual(admittedAs, ['alice']);
  });

  it('the user an Impersonator returns is the one admission sees', async () => {
    const asBob = createLoopbackClient((req, res) => {
      req.headers['impersonate-user'] = 'bob';
      apiServer.handle(req, res);
    }, 't');
    try {
      await asBob.create(CONFIGMAPS, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'by-bob', namespace: 'default' } });
    } finally {
      await asBob.close();
    }
    assert.equal(admittedAs.at(-1), 'bob');
  });
});
