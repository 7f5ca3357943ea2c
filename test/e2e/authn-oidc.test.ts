// JWT/OIDC authentication from `--authentication-config` against a test issuer on 127.0.0.1
// (HTTPS with its own CA, discovery and JWKS), tokens signed with jose: kubectl 1.20 and 1.33 with
// the token in a kubeconfig, TokenReview, every kind of bad token answered 401 (never 500), config
// errors naming the file and the field, and a fast-check fuzz over the token parsing.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { parseAuthenticationConfiguration } from '../../src/auth/authn/jwt-config.js';
import { createJWTAuthenticators } from '../../src/auth/authn/jwt.js';
import { claimExpressions } from '../../src/controlplane/claim-expressions.js';
import { createControlPlane } from '../../src/controlplane/controlplane.js';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { kubeconfigToYaml, tokenKubeconfig } from '../../src/server/kubeconfig.js';
import { memory } from '../../src/storage/factories.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

interface TestIssuer {
  readonly url: string;
  readonly caPem: string;
  sign(claims: Record<string, unknown>, opts?: { key?: CryptoKey; kid?: string; expiresIn?: string | number; alg?: string }): Promise<string>;
  close(): Promise<void>;
}

/** An OIDC issuer: discovery at /.well-known/openid-configuration, keys at /keys, RS256. */
async function startIssuer(): Promise<TestIssuer> {
  const ca = createCertificateAuthority({ commonName: 'test-oidc-ca' });
  const serving = issueCertificate(ca, { commonName: '127.0.0.1', hosts: ['127.0.0.1'], usage: 'server' });
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let url = '';
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') {
      res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/keys`, id_token_signing_alg_values_supported: ['RS256'] }));
    } else if (req.url === '/keys') res.end(JSON.stringify({ keys: [jwk] }));
    else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    caPem: ca.certPem,
    async sign(claims, opts = {}) {
      const jwt = new SignJWT({ iss: url, aud: 'kplane', ...claims }).setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? 'k1' }).setIssuedAt();
      if (opts.expiresIn !== undefined) jwt.setExpirationTime(opts.expiresIn);
      else jwt.setExpirationTime('1h');
      return jwt.sign(opts.key ?? privateKey);
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

function configYaml(issuer: TestIssuer): string {
  const ca = issuer.caPem
    .trim()
    .split('\n')
    .map((l) => `        ${l}`)
    .join('\n');
  return `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
  - issuer:
      url: ${issuer.url}
      audiences: [kplane]
      certificateAuthority: |
${ca}
    claimValidationRules:
      - expression: "claims.hd == 'example.com'"
        message: the hosted domain must be example.com
    claimMappings:
      username:
        claim: sub
        prefix: "oidc:"
      groups:
        claim: groups
        prefix: "oidc:"
      uid:
        expression: "'uid-' + claims.sub"
      extra:
        - key: example.com/team
          valueExpression: "has(claims.team) ? claims.team : ''"
    userValidationRules:
      - expression: "!user.username.startsWith('oidc:system:')"
        message: no system users
`;
}

describe('JWT/OIDC authentication', { timeout: 240_000 }, () => {
  let issuer: TestIssuer;
  let server: TestServer;
  let dir: string;
  let admin: RawClient;
  let anon: RawClient;

  const review = async (token: string): Promise<{ authenticated?: boolean; user?: Record<string, unknown>; error?: string }> => {
    const r = await admin.request({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });
    assert.equal(r.status, 201, r.text());
    return r.json<{ status: { authenticated?: boolean; user?: Record<string, unknown>; error?: string } }>().status;
  };

  before(async () => {
    issuer = await startIssuer();
    dir = await mkdtemp(join(tmpdir(), 'kplane-oidc-'));
    const file = join(dir, 'authn.yaml');
    await writeFile(file, configYaml(issuer));
    server = await startTestServer({ storage: 'memory', authenticationConfig: parseAuthenticationConfiguration(configYaml(issuer), file) });
    admin = new RawClient(server.url, adminCredentials(server.dataDir));
    anon = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
    // The issuer's keys are fetched in the background after start.
    const good = await issuer.sign({ sub: 'probe', hd: 'example.com' });
    await eventually(10_000, 'the issuer keys fetched', async () => ((await review(good)).authenticated ? true : undefined), 100);
  });
  after(async () => {
    admin?.close();
    anon?.close();
    await server?.stop();
    await issuer?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const kubectl of KUBECTLS) {
    it(`kubectl ${kubectl.name} with an issuer's token in its kubeconfig`, async () => {
      const kdir = await mkdtemp(join(dir, `kc-${kubectl.name}-`));
      const token = await issuer.sign({ sub: 'alice', hd: 'example.com', groups: ['devs', 'qa'], team: 'payments' });
      const kubeconfig = join(kdir, 'oidc.kubeconfig');
      await writeFile(kubeconfig, kubeconfigToYaml(tokenKubeconfig({ server: server.url, caCertPem: adminCredentials(server.dataDir).ca, token })));
      const kc = kubectlSession(kubectl.bin, kubeconfig, kdir);
      let user: Record<string, unknown>;
      if (kubectl.name === '1.33') {
        user = (JSON.parse(await kc.ok(['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: Record<string, unknown> } }).status.userInfo;
      } else {
        const f = await kc.file('ssr.yaml', 'apiVersion: authentication.k8s.io/v1\nkind: SelfSubjectReview\n');
        user = (JSON.parse(await kc.ok(['create', '-f', f, '-o', 'json'])) as { status: { userInfo: Record<string, unknown> } }).status.userInfo;
      }
      assert.deepEqual(user, {
        username: 'oidc:alice',
        uid: 'uid-alice',
        groups: ['oidc:devs', 'oidc:qa', 'system:authenticated'],
        extra: { 'example.com/team': ['payments'] },
      });
      await kc.ok(['get', 'configmaps', '-n', 'default']);
    });
  }

  it('TokenReview names why a token is refused', async () => {
    assert.match(
      (await review(await issuer.sign({ sub: 'bob', hd: 'example.com' }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }))).error ?? '',
      /^oidc: verify token: .*"exp"/,
    );
    assert.equal(
      (await review(await issuer.sign({ sub: 'bob', hd: 'other.org' }))).error,
      "oidc: error evaluating claim validation expression: validation expression 'claims.hd == 'example.com'' failed: the hosted domain must be example.com",
    );
    assert.equal(
      (await review(await issuer.sign({ sub: 'system:admin', hd: 'example.com' }))).error,
      "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('oidc:system:')' failed: no system users",
    );
    assert.equal((await review('not-a-jwt')).error, 'invalid bearer token');
  });

  it('bad tokens: 401 Unauthorized, never a 500', async () => {
    const good = await issuer.sign({ sub: 'alice', hd: 'example.com' });
    const [h, p, s] = good.split('.') as [string, string, string];
    const other = await generateKeyPair('RS256');
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const bad: Record<string, string> = {
      garbage: 'garbage',
      truncated: `${h}.${p}.${s.slice(0, 20)}`,
      'no signature': `${h}.${p}.`,
      'wrong signature': await issuer.sign({ sub: 'alice', hd: 'example.com' }, { key: other.privateKey }),
      'another issuer': `${h}.${b64({ iss: 'https://elsewhere.example', aud: 'kplane', sub: 'alice', exp: now + 600 })}.${s}`,
      'another audience': await issuer.sign({ sub: 'alice', hd: 'example.com', aud: 'someone-else' }),
      expired: await issuer.sign({ sub: 'alice', hd: 'example.com' }, { expiresIn: now - 60 }),
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: issuer.url, aud: 'kplane', sub: 'root', hd: 'example.com', exp: now + 600 })}.`,
      'payload swapped': `${h}.${b64({ iss: issuer.url, aud: 'kplane', sub: 'root', hd: 'example.com', exp: now + 600 })}.${s}`,
      'not JSON': `${h}.${Buffer.from('{"iss":').toString('base64url')}.${s}`,
      oversized: `${h}.${p}.${'A'.repeat(12_000)}`,
    };
    for (const [what, token] of Object.entries(bad)) {
      const r = await anon.request({ path: '/api/v1/namespaces/default/configmaps', headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 401, `${what}: ${r.text()}`);
      assert.equal(r.json<{ reason: string }>().reason, 'Unauthorized', what);
    }
    const ok = await anon.request({ path: '/api/v1/namespaces/default/configmaps', headers: { authorization: `Bearer ${good}` } });
    assert.equal(ok.status, 200, ok.text());
  });

  it('fuzz: whatever the token, the authenticator answers none or rejected, never throws', async () => {
    const jwt = createJWTAuthenticators(parseAuthenticationConfiguration(configYaml(issuer), 'fuzz.yaml'), { cel: claimExpressions });
    try {
      await jwt.ready();
      const a = jwt.authenticators[0]!;
      const good = await issuer.sign({ sub: 'alice', hd: 'example.com' });
      const [h, , s] = good.split('.') as [string, string, string];
      const segment = fc.oneof(
        fc.string(),
        fc.base64String(),
        fc.json().map((j) => Buffer.from(j).toString('base64url')),
      );
      const token = fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.tuple(segment, segment, segment).map((parts) => parts.join('.')),
        // Payloads that name the issuer, so that verification itself is exercised.
        fc
          .tuple(fc.oneof(fc.constant(h), segment), fc.object({ maxDepth: 2 }), fc.oneof(fc.constant(s), segment))
          .map(([hh, claims, ss]) => `${hh}.${Buffer.from(JSON.stringify({ ...claims, iss: issuer.url })).toString('base64url')}.${ss}`),
      );
      await fc.assert(
        fc.asyncProperty(token, async (t) => {
          const out = await a.authenticateToken(t);
          assert.ok(out.kind === 'none' || out.kind === 'rejected', `${t} → ${JSON.stringify(out)}`);
        }),
        { numRuns: 300 },
      );
    } finally {
      jwt.stop();
    }
  });
});

describe('--authentication-config errors name the file and the field', () => {
  it('validation', () => {
    const bad = (text: string): string => {
      try {
        parseAuthenticationConfiguration(text, '/etc/kplane/authn.yaml');
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    const head = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n';
    assert.equal(
      bad(`${head}jwt:\n- issuer: {url: "http://issuer.example", audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ""}}\n`),
      'invalid authentication configuration in file "/etc/kplane/authn.yaml": jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https',
    );
    assert.equal(
      bad(`${head}jwt:\n- issuer: {url: "https://issuer.example", audiences: [a, b]}\n  claimMappings: {username: {claim: sub}}\n`),
      'invalid authentication configuration in file "/etc/kplane/authn.yaml": [jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences, jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]',
    );
    assert.equal(
      bad(`${head}jwt:\n- issuer: {url: "https://issuer.example"}\n  claimMappings: {}\n`),
      'invalid authentication configuration in file "/etc/kplane/authn.yaml": [jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, jwt[0].claimMappings.username: Required value: claim or expression is required]',
    );
    assert.match(
      bad('apiVersion: v1\nkind: ConfigMap\n'),
      /^failed to load authentication configuration from file "\/etc\/kplane\/authn.yaml": no kind "ConfigMap"/,
    );
  });

  it('a CEL expression that does not compile: createControlPlane refuses to start', async () => {
    const config = parseAuthenticationConfiguration(
      'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: "https://issuer.example", audiences: [a]}\n  claimMappings: {username: {expression: "claims.sub +"}}\n',
      '/etc/kplane/authn.yaml',
    );
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-oidc-bad-'));
    try {
      await assert.rejects(
        createControlPlane({ storage: memory(), dataDir, port: 0, authenticationConfig: config }),
        /^Error: invalid authentication configuration in file "\/etc\/kplane\/authn.yaml": jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.sub \+": compilation failed: /,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
