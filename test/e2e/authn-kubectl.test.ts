// Authentication as kubectl 1.20 and 1.33 meet it: `kubectl auth whoami` (1.33) and a
// SelfSubjectReview created from a file (1.20, which has no `auth whoami`), static and bootstrap
// tokens in a kubeconfig, a client certificate from a `--client-ca-file` CA, TokenReview,
// impersonation (`--as`, `--as-group`, `--as-uid`), anonymous requests, and the metrics.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { kubeconfigToYaml, tokenKubeconfig } from '../../src/server/kubeconfig.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const STATIC_TOKEN = 'static-token-of-alice';
const BOOTSTRAP_ID = 'abcdef';
const BOOTSTRAP_SECRET = '0123456789abcdef';

/** kubectl's last line on a 401 (1.20: `(Unauthorized)`; 1.33 adds discovery errors before it). */
const LOGGED_OUT = /^error: You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)\n$/m;

interface UserInfoJson {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

describe('authentication through kubectl', { timeout: 240_000 }, () => {
  let server: TestServer;
  let dir: string;
  let admin: RawClient;
  const externalCA = createCertificateAuthority({ commonName: 'external-ca' });
  const strangerCA = createCertificateAuthority({ commonName: 'stranger-ca' });

  before(async () => {
    server = await startTestServer({
      storage: 'memory',
      tokens: new Map([[STATIC_TOKEN, { name: 'alice', uid: 'alice-uid', groups: ['devs'] }]]),
      bootstrapTokenAuth: true,
      clientCA: externalCA.certPem,
    });
    dir = await mkdtemp(join(tmpdir(), 'kplane-authn-'));
    admin = new RawClient(server.url, adminCredentials(server.dataDir));
    const expired = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    for (const [id, extra] of [
      [BOOTSTRAP_ID, {}],
      ['expire', { expiration: expired }],
    ] as const) {
      const data: Record<string, string> = {
        'token-id': id,
        'token-secret': BOOTSTRAP_SECRET,
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
        ...extra,
      };
      const r = await admin.request({
        method: 'POST',
        path: '/api/v1/namespaces/kube-system/secrets',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
          type: 'bootstrap.kubernetes.io/token',
          stringData: data,
        }),
      });
      assert.equal(r.status, 201, r.text());
    }
  });
  after(async () => {
    admin?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const tokenConfig = async (name: string, token: string): Promise<string> => {
    const p = join(dir, name);
    await writeFile(p, kubeconfigToYaml(tokenKubeconfig({ server: server.url, caCertPem: adminCredentials(server.dataDir).ca, token })));
    return p;
  };
  const certConfig = async (name: string, ca: { certPem: string; keyPem: string }, cn: string, orgs: string[]): Promise<string> => {
    const cert = issueCertificate(ca, { commonName: cn, organizations: orgs, usage: 'client' });
    const p = join(dir, name);
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    await writeFile(
      p,
      kubeconfigToYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: server.url, 'certificate-authority-data': b64(adminCredentials(server.dataDir).ca) } }],
        users: [{ name: 'u', user: { 'client-certificate-data': b64(cert.certPem), 'client-key-data': b64(cert.keyPem) } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
        preferences: {},
      } as unknown as Parameters<typeof kubeconfigToYaml>[0]),
    );
    return p;
  };

  for (const kubectl of KUBECTLS) {
    describe(`kubectl ${kubectl.name}`, () => {
      let kc: KubectlSession;
      before(async () => {
        kc = kubectlSession(kubectl.bin, server.kubeconfig, await mkdtemp(join(dir, `kc-${kubectl.name}-`)));
      });

      /** Who the server takes the caller to be: `auth whoami` (1.33) or a SelfSubjectReview created from a file. */
      const whoami = async (args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<UserInfoJson> => {
        if (kubectl.name === '1.33') {
          const out = await kc.ok(['auth', 'whoami', '-o', 'json', ...args], env);
          const review = JSON.parse(out) as { apiVersion: string; kind: string; status: { userInfo: UserInfoJson } };
          assert.equal(review.apiVersion, 'authentication.k8s.io/v1');
          assert.equal(review.kind, 'SelfSubjectReview');
          return review.status.userInfo;
        }
        const f = await kc.file('ssr.yaml', 'apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n');
        const out = await kc.ok(['create', '-f', f, '-o', 'json', ...args], env);
        return (JSON.parse(out) as { status: { userInfo: UserInfoJson } }).status.userInfo;
      };

      it('the admin certificate: kplane-admin in system:masters', async () => {
        const u = await whoami();
        assert.equal(u.username, 'kplane-admin');
        assert.deepEqual(u.groups, ['system:masters', 'system:authenticated']);
        if (kubectl.name === '1.33') {
          const table = await kc.ok(['auth', 'whoami']);
          assert.match(table, /^ATTRIBUTE\s+VALUE\nUsername\s+kplane-admin\nGroups\s+\[system:masters system:authenticated\]\n$/);
        }
      });

      it('a static token from the kubeconfig', async () => {
        const u = await whoami([], { KUBECONFIG: await tokenConfig('static.kubeconfig', STATIC_TOKEN) });
        assert.deepEqual(u, { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'] });
      });

      it('a bootstrap token: system:bootstrap:<id>; expired or unknown: 401', async () => {
        const u = await whoami([], { KUBECONFIG: await tokenConfig('bootstrap.kubeconfig', `${BOOTSTRAP_ID}.${BOOTSTRAP_SECRET}`) });
        assert.deepEqual(u, {
          username: `system:bootstrap:${BOOTSTRAP_ID}`,
          groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'],
        });
        for (const token of [`expire.${BOOTSTRAP_SECRET}`, `${BOOTSTRAP_ID}.ffffffffffffffff`, 'zzzzzz.0123456789abcdef']) {
          const r = await kc.k(['get', 'configmaps'], { KUBECONFIG: await tokenConfig('bad-bootstrap.kubeconfig', token) });
          assert.equal(r.code, 1);
          assert.match(r.stderr, LOGGED_OUT);
        }
      });

      it('a client certificate of the --client-ca-file CA; of another CA: 401', async () => {
        const u = await whoami([], { KUBECONFIG: await certConfig('external.kubeconfig', externalCA, 'carol', ['ops', 'oncall']) });
        assert.deepEqual(u, { username: 'carol', groups: ['ops', 'oncall', 'system:authenticated'] });
        const r = await kc.k(['get', 'configmaps'], { KUBECONFIG: await certConfig('stranger.kubeconfig', strangerCA, 'mallory', ['system:masters']) });
        assert.equal(r.code, 1);
        assert.match(r.stderr, LOGGED_OUT);
      });

      it('TokenReview: a good token, a bad one, and none', async () => {
        const review = async (spec: string): Promise<{ status: Record<string, unknown> }> => {
          const f = await kc.file('tr.yaml', `apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n${spec}`);
          return JSON.parse(await kc.ok(['create', '-f', f, '-o', 'json'])) as { status: Record<string, unknown> };
        };
        assert.deepEqual((await review(`  token: ${STATIC_TOKEN}\n`)).status, {
          authenticated: true,
          user: { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'] },
        });
        assert.deepEqual((await review(`  token: ${STATIC_TOKEN}\n  audiences: [kplane]\n`)).status, {
          authenticated: true,
          user: { username: 'alice', uid: 'alice-uid', groups: ['devs', 'system:authenticated'] },
          audiences: ['kplane'],
        });
        assert.deepEqual((await review('  token: nobodys-token\n')).status, { authenticated: false, user: {}, error: 'invalid bearer token' });
        const f = await kc.file('empty-tr.yaml', 'apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {}\n');
        const r = await kc.k(['create', '-f', f]);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /token is required for TokenReview in authentication/);
      });

      it('impersonation: --as, --as-group, a ServiceAccount, extras and uid', async () => {
        assert.deepEqual(await whoami(['--as', 'bob']), { username: 'bob', groups: ['system:authenticated'] });
        assert.deepEqual(await whoami(['--as', 'bob', '--as-group', 'devs', '--as-group', 'qa']), {
          username: 'bob',
          groups: ['devs', 'qa', 'system:authenticated'],
        });
        assert.deepEqual(await whoami(['--as', 'system:serviceaccount:team-a:ci']), {
          username: 'system:serviceaccount:team-a:ci',
          groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a', 'system:authenticated'],
        });
        assert.deepEqual(await whoami(['--as', 'system:anonymous']), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
        if (kubectl.name === '1.33') {
          assert.deepEqual(await whoami(['--as', 'bob', '--as-uid', 'u-1']), { username: 'bob', uid: 'u-1', groups: ['system:authenticated'] });
        }
        // Groups without a user: kubectl refuses them itself.
        const r = await kc.k(['get', 'configmaps', '--as-group', 'devs']);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /without impersonating a user/);
      });
    });
  }

  it('impersonation extras, raw: Impersonate-Extra-<key>, path-unescaped', async () => {
    const r = await admin.request({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      headers: {
        'content-type': 'application/json',
        'impersonate-user': 'bob',
        'impersonate-extra-scopes': ['view', 'edit'],
        'impersonate-extra-example.com%2fteam': 'a',
      },
      body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
    });
    assert.equal(r.status, 201, r.text());
    const u = r.json<{ status: { userInfo: UserInfoJson } }>().status.userInfo;
    assert.deepEqual(u, { username: 'bob', groups: ['system:authenticated'], extra: { scopes: ['view', 'edit'], 'example.com/team': ['a'] } });
  });

  it("impersonating groups without a user: upstream's 500, naming what was asked", async () => {
    const r = await admin.request({ path: '/api/v1/namespaces', headers: { 'impersonate-group': 'devs' } });
    assert.equal(r.status, 500);
    assert.equal(r.json<{ message: string }>().message, 'Internal error occurred: requested [{Group  devs    }] without impersonating a user');
  });

  it("Impersonate-* headers are found in any case (HTTP/1.1 keeps the sender's)", async () => {
    const r = await admin.request({ path: '/api/v1/namespaces', headers: { 'Impersonate-Group': 'devs' } });
    assert.equal(r.status, 500, r.text());
    assert.match(r.json<{ message: string }>().message, /without impersonating a user/);
  });

  it('tokenreviews and selfsubjectreviews are create-only and discovered', async () => {
    const list = (await admin.request({ path: '/apis/authentication.k8s.io/v1' })).json<{
      resources: Array<{ name: string; verbs: string[]; namespaced: boolean }>;
    }>();
    assert.deepEqual(
      list.resources.map((r) => [r.name, r.namespaced, r.verbs]),
      [
        ['tokenreviews', false, ['create']],
        ['selfsubjectreviews', false, ['create']],
      ],
    );
    const get = await admin.request({ path: '/apis/authentication.k8s.io/v1/tokenreviews' });
    assert.equal(get.status, 405);
  });

  it('metrics: authentication_attempts, authentication_duration_seconds, authenticated_user_requests', async () => {
    const text = (await admin.request({ path: '/metrics' })).text();
    assert.match(text, /^authentication_attempts\{result="success"\} \d+$/m);
    assert.match(text, /^authentication_attempts\{result="error"\} \d+$/m);
    assert.match(text, /^authentication_duration_seconds_bucket\{le="0.001",result="success"\} \d+$/m);
    assert.match(text, /^authenticated_user_requests\{username="other"\} \d+$/m);
  });

  it('no credentials: 401 while --anonymous-auth is off', async () => {
    const anon = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
    try {
      const r = await anon.request({ path: '/api/v1/namespaces' });
      assert.equal(r.status, 401);
      assert.deepEqual(r.json(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    } finally {
      anon.close();
    }
  });
});

describe('--anonymous-auth', { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ storage: 'memory', anonymousAuth: true });
  });
  after(async () => {
    await server?.stop();
  });

  it('a request without credentials is system:anonymous; a bad token is still a 401', async () => {
    const anon = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
    try {
      const r = await anon.request({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        headers: { 'content-type': 'application/json' },
        body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
      });
      assert.equal(r.status, 201, r.text());
      assert.deepEqual(r.json<{ status: unknown }>().status, { userInfo: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
      const bad = await anon.request({ path: '/api/v1/namespaces', headers: { authorization: 'Bearer nope' } });
      assert.equal(bad.status, 401);
    } finally {
      anon.close();
    }
  });
});
