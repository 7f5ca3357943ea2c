// examples/aggregated-server: a server built with kplane's library, serving
// wardle.example.com/v1alpha1 flunders behind a kplane aggregator with delegated authentication
// (the front's extension-apiserver-authentication ConfigMap) and authorization
// (SubjectAccessReviews back to the front).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:net';
import type { ControlPlane } from '../../src/controlplane/controlplane.js';
import { apiRegistration, defaultModules } from '../../src/controlplane/modules.js';
import { startWardleServer } from '../../examples/aggregated-server/server.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession, writeTokenKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

describe('examples/aggregated-server behind a kplane aggregator', { concurrency: false, timeout: 120_000 }, () => {
  let front: TestServer | undefined;
  let wardle: ControlPlane | undefined;
  let dir = '';
  let wardleDir = '';
  let raw: RawClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-wardle-'));
    wardleDir = await mkdtemp(join(tmpdir(), 'kplane-wardle-data-'));
    const port = await freePort();
    front = await startTestServer({
      storage: 'memory',
      apis: [...defaultModules(), apiRegistration()],
      authorizationModes: ['RBAC'],
      tokens: new Map([['jane-token', { name: 'jane', groups: [] }]]),
      aggregation: { serviceAddresses: [`wardle/api=127.0.0.1:${port}`], availabilityCheckIntervalMs: 500 },
    });
    raw = new RawClient(front.url, adminCredentials(front.dataDir));
    wardle = await startWardleServer({ frontKubeconfig: front.kubeconfig, port, dataDir: wardleDir });
  });

  after(async () => {
    raw?.close();
    await wardle?.stop();
    await front?.stop();
    for (const d of [dir, wardleDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('serves flunders through the front with the users the front authenticated and authorizes', async () => {
    const kc = kubectlSession(KUBECTLS[1].bin, front!.kubeconfig, join(dir, 'admin'));
    await kc.ok(['apply', '-f', 'examples/aggregated-server/apiservice.yaml']);
    await eventually(15_000, 'the APIService Available', async () => {
      const out = await kc.ok(['get', 'apiservice', 'v1alpha1.wardle.example.com', '-o', 'jsonpath={.status.conditions[0].status}']);
      return out === 'True' ? out : undefined;
    });
    const f = await kc.file(
      'f.yaml',
      'apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: first\n  namespace: default\nspec:\n  reference: second\n',
    );
    assert.match(await kc.ok(['apply', '-f', f]), /flunder\.wardle\.example\.com\/first created/);
    assert.equal(await kc.ok(['get', 'flunder', 'first', '-o', 'jsonpath={.spec.reference}']), 'second');
    assert.match(await kc.ok(['explain', 'flunders.spec.reference']), /The name of another flunder\./);

    // jane is authenticated by the front; the wardle server asks the front (RBAC) whether she may.
    const janeConfig = await writeTokenKubeconfig(dir, front!, 'jane', 'jane-token');
    const jane = kubectlSession(KUBECTLS[1].bin, janeConfig, join(dir, 'jane'));
    const denied = await jane.k(['get', 'flunders']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /forbidden: User "jane" cannot list resource "flunders" in API group "wardle\.example\.com"/);
    await kc.ok(['create', 'role', 'flunder-reader', '--verb=get,list', '--resource=flunders.wardle.example.com']);
    await kc.ok(['create', 'rolebinding', 'jane-reads', '--role=flunder-reader', '--user=jane']);
    // The wardle server remembers the list denial for 30 s (the Webhook mode's cache); a get is a new question.
    const allowed = await eventually(
      60_000,
      'jane may get first',
      async () => {
        const r = await jane.k(['get', 'flunder', 'first', '-o', 'name']);
        return r.code === 0 ? r.stdout : undefined;
      },
      500,
    );
    assert.equal(allowed, 'flunder.wardle.example.com/first\n');
  });

  it('authenticates a bearer token sent straight to it by a TokenReview at the front', async () => {
    const kc = kubectlSession(KUBECTLS[1].bin, front!.kubeconfig, join(dir, 'admin'));
    await kc.ok(['create', 'serviceaccount', 'reader']);
    await kc.ok(['create', 'role', 'sa-flunder-reader', '--verb=get,list', '--resource=flunders.wardle.example.com']);
    await kc.ok(['create', 'rolebinding', 'sa-reads', '--role=sa-flunder-reader', '--serviceaccount=default:reader']);
    const token = (await kc.ok(['create', 'token', 'reader'])).trim();
    const ca = await readFile(join(wardleDir, 'pki', 'ca.crt'), 'utf8');
    const get = (bearer: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${wardle!.url}/apis/wardle.example.com/v1alpha1/namespaces/default/flunders`,
          { ca, headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' } },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    const ok = await get(token);
    assert.equal(ok.status, 200, ok.body);
    assert.deepEqual(
      (JSON.parse(ok.body) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name),
      ['first'],
    );
    // Cached: the same token again is answered without a new review, still the same user.
    assert.equal((await get(token)).status, 200);
    const bad = await get(`${token.slice(0, -4)}AAAA`);
    assert.equal(bad.status, 401, bad.body);
    assert.equal((JSON.parse(bad.body) as { reason: string }).reason, 'Unauthorized');
    // A token of a user the front does not know at all.
    assert.equal((await get('not-a-token')).status, 401);
  });
});
