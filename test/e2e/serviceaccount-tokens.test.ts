// ServiceAccount tokens end to end: kubectl creates ServiceAccounts and tokens (TokenRequest), the
// tokens authenticate kubectl and raw clients, and stop doing so when the ServiceAccount or the
// bound Secret goes; expired, foreign, tampered and unsigned tokens are 401s; the OIDC discovery
// documents verify a token with jose. The server gets its signing key and a second (rotated-out)
// verification key from files, as --service-account-signing-key-file / --service-account-key-file.
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, jwtVerify, SignJWT } from 'jose';
import { adminCredentials, RawClient } from '../support/https.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { keyIdOf } from '../../src/auth/serviceaccount/keys.js';
import { tools } from '../support/tools.js';

const ISSUER = 'https://kplane.example';
const OLD_ISSUER = 'https://old.example';

describe('ServiceAccount tokens', () => {
  let server: TestServer;
  let dir: string;
  let admin: RawClient;
  let anon: RawClient;
  let kc: KubectlSession;
  let kc120: KubectlSession;
  let signingKey: KeyObject;
  let oldKey: KeyObject;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-sa-'));
    const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
    signingKey = signing.privateKey;
    const old = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    oldKey = old.privateKey;
    const signingFile = join(dir, 'sa.key');
    await writeFile(signingFile, signing.privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const oldPub = join(dir, 'old.pub');
    await writeFile(oldPub, old.publicKey.export({ type: 'spki', format: 'pem' }));
    server = await startTestServer({
      storage: 'memory',
      serviceAccounts: {
        signingKeyFile: signingFile,
        keyFiles: [signingFile, oldPub],
        issuers: [ISSUER, OLD_ISSUER],
        apiAudiences: [ISSUER, 'kplane'],
        maxTokenExpirationSeconds: 2 * 3600,
      },
    });
    const creds = adminCredentials(server.dataDir);
    admin = new RawClient(server.url, creds);
    anon = new RawClient(server.url, { ca: creds.ca });
    kc = kubectlSession(tools.kubectl, server.kubeconfig, join(dir, 'k133'));
    kc120 = kubectlSession(tools.kubectl120, server.kubeconfig, join(dir, 'k120'));
    await kc.ok(['create', 'namespace', 'team-a']);
    await kc.ok(['create', 'serviceaccount', 'ci', '-n', 'team-a']);
  });
  after(async () => {
    admin?.close();
    anon?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (token: string, path = '/api/v1/namespaces/team-a/configmaps') => anon.request({ path, headers: { authorization: `Bearer ${token}` } });
  const sign = (claims: Record<string, unknown>, key: KeyObject = signingKey, alg = 'RS256'): Promise<string> =>
    new SignJWT(claims).setProtectedHeader({ alg, kid: keyIdOf(createPublicKey(key)) }).sign(key);
  const saUid = async (name: string): Promise<string> => {
    const r = await admin.request({ path: `/api/v1/namespaces/team-a/serviceaccounts/${name}` });
    return r.json<{ metadata: { uid: string } }>().metadata.uid;
  };
  const claimsFor = async (name: string, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> => {
    const now = Math.floor(Date.now() / 1000);
    return {
      aud: [ISSUER],
      exp: now + 600,
      iat: now,
      iss: ISSUER,
      jti: 'test-jti',
      'kubernetes.io': { namespace: 'team-a', serviceaccount: { name, uid: await saUid(name) } },
      nbf: now,
      sub: `system:serviceaccount:team-a:${name}`,
      ...extra,
    };
  };
  /** A kubeconfig with the server's CA and only this bearer token. */
  const tokenKubeconfig = async (name: string, token: string): Promise<string> => {
    const p = join(dir, `${name}.kubeconfig`);
    const ca = Buffer.from(adminCredentials(server.dataDir).ca).toString('base64');
    await writeFile(
      p,
      `apiVersion: v1
kind: Config
clusters: [{name: k, cluster: {server: "${server.url}", certificate-authority-data: ${ca}}}]
users: [{name: u, user: {token: "${token}"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
current-context: c
`,
    );
    return p;
  };

  it('kubectl 1.33 create token: the claims, and the token works with kubectl', async () => {
    const token = (await kc.ok(['create', 'token', 'ci', '-n', 'team-a', '--duration', '1h', '--audience', 'kplane'])).trim();
    const c = decodeJwt(token);
    assert.equal(c.iss, ISSUER);
    assert.equal(c.sub, 'system:serviceaccount:team-a:ci');
    assert.deepEqual(c.aud, ['kplane']);
    assert.equal(c.exp! - c.iat!, 3600);
    assert.equal(c.nbf, c.iat);
    assert.match(String(c.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(c['kubernetes.io'], { namespace: 'team-a', serviceaccount: { name: 'ci', uid: await saUid('ci') } });
    const kubeconfig = await tokenKubeconfig('ci', token);
    await kc.ok(['--kubeconfig', kubeconfig, 'create', 'configmap', 'from-ci', '-n', 'team-a', '--from-literal', 'a=b']);
    const out = await kc.ok(['--kubeconfig', kubeconfig, 'get', 'configmap', 'from-ci', '-n', 'team-a', '-o', 'jsonpath={.metadata.managedFields[0].manager}']);
    assert.equal(out, 'kubectl-create');
  });

  it('TokenRequest bounds: under 10 minutes is 422, over the max is shortened with a warning', async () => {
    const r = await kc.k(['create', 'token', 'ci', '-n', 'team-a', '--duration', '5m']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/,
    );
    const long = await kc.k(['create', 'token', 'ci', '-n', 'team-a', '--duration', '10h']);
    assert.equal(long.code, 0, long.stderr);
    assert.match(long.stderr, /requested expiration of 36000 seconds shortened to 7200 seconds/);
    const c = decodeJwt(long.stdout.trim());
    assert.equal(c.exp! - c.iat!, 7200);
    const missing = await kc.k(['create', 'token', 'nobody', '-n', 'team-a']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  });

  it('a token bound to a Secret stops working when the Secret is deleted', async () => {
    await kc.ok(['create', 'secret', 'generic', 'bound', '-n', 'team-a', '--from-literal', 'x=y']);
    const token = (await kc.ok(['create', 'token', 'ci', '-n', 'team-a', '--bound-object-kind', 'Secret', '--bound-object-name', 'bound'])).trim();
    const k8s = decodeJwt(token)['kubernetes.io'] as { secret?: { name: string; uid: string } };
    assert.equal(k8s.secret?.name, 'bound');
    assert.equal((await get(token)).status, 200);
    await kc.ok(['delete', 'secret', 'bound', '-n', 'team-a']);
    // Up to 10 s: a success is cached that long, as kube-apiserver's token cache does (TokenSuccessCacheTTL).
    await eventually(20_000, 'the bound token is refused', async () => ((await get(token)).status === 401 ? true : undefined));
    const r = await kc.k(['create', 'token', 'ci', '-n', 'team-a', '--bound-object-kind', 'Pod', '--bound-object-name', 'p']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pods "p" not found/);
  });

  it('TokenRequest bad input: an unbindable kind is 400, a wrongly typed field 400, a UID mismatch 409', async () => {
    const post = (body: unknown) =>
      admin.request({
        method: 'POST',
        path: '/api/v1/namespaces/team-a/serviceaccounts/ci/token',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const kinds = await post({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { boundObjectRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } },
    });
    assert.equal(kinds.status, 400);
    assert.equal(kinds.json().message, 'cannot bind token to object of type apps/v1, Kind=Deployment');
    const typed = await post({ spec: { expirationSeconds: 'long' } });
    assert.equal(typed.status, 400, typed.text());
    assert.match(
      String(typed.json().message),
      /^TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal string into Go struct field/,
    );
    await kc.ok(['create', 'secret', 'generic', 'other', '-n', 'team-a']);
    const uid = await post({ spec: { boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'other', uid: 'not-the-uid' } } });
    assert.equal(uid.status, 409);
    assert.match(String(uid.json().message), /the UID in the bound object reference \(not-the-uid\) does not match the UID in record/);
    // Another incarnation of the ServiceAccount (TokenRequestServiceAccountUIDValidation): 409.
    const stale = await post({ metadata: { uid: 'stale-uid' }, spec: {} });
    assert.equal(stale.status, 409);
    assert.equal(
      stale.json().message,
      `Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "ci": the UID in the token request (stale-uid) does not match the UID of the service account (${await saUid('ci')})`,
    );
    assert.equal((await post({ metadata: { uid: await saUid('ci') }, spec: {} })).status, 201);
    const ok = await post({ metadata: { name: 'ci' }, spec: {} });
    assert.equal(ok.status, 201);
    const tr = ok.json<{
      kind: string;
      apiVersion: string;
      metadata: { uid?: string };
      spec: { audiences: string[]; expirationSeconds: number };
      status: { token: string };
    }>();
    // Without a UID, the request gets the account's.
    assert.equal(tr.metadata.uid, await saUid('ci'));
    assert.equal(tr.kind, 'TokenRequest');
    assert.equal(tr.apiVersion, 'authentication.k8s.io/v1');
    assert.deepEqual(tr.spec.audiences, [ISSUER, 'kplane']);
    assert.equal(tr.spec.expirationSeconds, 3600);
    const name = await post({ metadata: { name: 'other' }, spec: {} });
    assert.equal(name.status, 422);
    assert.match(String(name.json().message), /metadata\.name: Invalid value: "other": must match the service account name if specified/);
  });

  it('tokens signed with the key file: valid works; expired, foreign issuer or audience, tampered and alg none are 401', async () => {
    await kc.ok(['create', 'serviceaccount', 'signer', '-n', 'team-a']);
    assert.equal((await get(await sign(await claimsFor('signer')))).status, 200);
    const now = Math.floor(Date.now() / 1000);
    const expired = await sign(await claimsFor('signer', { iat: now - 7200, nbf: now - 7200, exp: now - 3600 }));
    const otherIssuer = await sign(await claimsFor('signer', { iss: 'https://elsewhere.example' }));
    const otherAudience = await sign(await claimsFor('signer', { aud: ['someone-else'] }));
    const good = await sign(await claimsFor('signer'));
    const [h, p, sig] = good.split('.') as [string, string, string];
    const tampered = `${h}.${p}.${sig.slice(0, -4)}${sig.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const forgedPayload = `${h}.${Buffer.from(JSON.stringify({ ...(await claimsFor('ci')), sub: 'system:serviceaccount:team-a:ci' })).toString('base64url')}.${sig}`;
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`;
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const unknownKey = await sign(await claimsFor('signer'), otherKey);
    for (const [what, t] of Object.entries({
      expired,
      otherIssuer,
      otherAudience,
      tampered,
      forgedPayload,
      none,
      unknownKey,
      garbage: 'a.b.c',
      truncated: good.slice(0, 40),
    })) {
      const r = await get(t);
      assert.equal(r.status, 401, `${what}: ${r.text()}`);
      assert.equal(r.json().reason, 'Unauthorized', what);
    }
    // The rotated-out key (ECDSA, in --service-account-key-file only) still verifies its tokens, for any configured issuer.
    assert.equal((await get(await sign(await claimsFor('signer', { iss: OLD_ISSUER }), oldKey, 'ES256'))).status, 200);
  });

  it('a token stops working when its ServiceAccount is deleted, and stays refused when one of that name is made again', async () => {
    await kc.ok(['create', 'serviceaccount', 'short', '-n', 'team-a']);
    const token = (await kc.ok(['create', 'token', 'short', '-n', 'team-a'])).trim();
    const kubeconfig = await tokenKubeconfig('short', token);
    await kc.ok(['--kubeconfig', kubeconfig, 'get', 'configmaps', '-n', 'team-a']);
    await kc.ok(['delete', 'serviceaccount', 'short', '-n', 'team-a']);
    // Up to 10 s: a success is cached that long, as kube-apiserver's token cache does.
    await eventually(20_000, 'the token is refused', async () => ((await get(token)).status === 401 ? true : undefined));
    const r = await kc.k(['--kubeconfig', kubeconfig, 'get', 'configmaps', '-n', 'team-a']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Unauthorized|You must be logged in/);
    await kc.ok(['create', 'serviceaccount', 'short', '-n', 'team-a']);
    assert.equal((await get(token)).status, 401);
  });

  it('OIDC discovery: the configuration and the JWKS, which verifies a token with jose', async () => {
    const token = (await kc.ok(['create', 'token', 'ci', '-n', 'team-a'])).trim();
    const conf = await get(token, '/.well-known/openid-configuration');
    assert.equal(conf.status, 200);
    assert.equal(conf.headers['content-type'], 'application/json');
    assert.equal(conf.headers['cache-control'], 'public, max-age=3600');
    assert.deepEqual(conf.json(), {
      issuer: ISSUER,
      jwks_uri: `https://127.0.0.1:${server.cp.port}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256', 'RS256'],
    });
    const jwks = await get(token, '/openid/v1/jwks');
    assert.equal(jwks.status, 200);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const set = jwks.json<{ keys: { kid: string; use: string; alg: string }[] }>();
    assert.deepEqual(
      set.keys.map((k) => [k.alg, k.use, k.kid]),
      [
        ['RS256', 'sig', keyIdOf(createPublicKey(signingKey))],
        ['ES256', 'sig', keyIdOf(createPublicKey(oldKey))],
      ],
    );
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(set as never), { issuer: ISSUER, audience: [ISSUER, 'kplane'] });
    assert.equal(payload.sub, 'system:serviceaccount:team-a:ci');
    assert.equal(protectedHeader.kid, keyIdOf(createPublicKey(signingKey)));
  });

  it('kubectl 1.20: create serviceaccount, and its tokens work (create token came with kubectl 1.24)', async () => {
    await kc120.ok(['create', 'serviceaccount', 'old-ci', '-n', 'team-a']);
    const r = await kc120.k(['create', 'token', 'old-ci', '-n', 'team-a']);
    assert.notEqual(r.code, 0);
    const token = (await kc.ok(['create', 'token', 'old-ci', '-n', 'team-a'])).trim();
    const kubeconfig = await tokenKubeconfig('old-ci', token);
    await kc120.ok(['--kubeconfig', kubeconfig, 'get', 'configmaps', '-n', 'team-a']);
  });
});
