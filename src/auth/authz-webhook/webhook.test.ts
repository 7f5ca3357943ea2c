import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../server/certs.js';
import type { AuthorizationAttributes } from '../authorizer.js';
import { loadWebhookKubeconfig } from './kubeconfig.js';
import {
  createWebhookAuthorizer,
  decodeSubjectAccessReviewStatus,
  subjectAccessReviewBody,
  subjectAccessReviewSpec,
  WebhookCallError,
  type WebhookPoster,
  type WebhookResponse,
} from './webhook.js';

const podsGet: AuthorizationAttributes = {
  isResourceRequest: true,
  path: '/api/v1/namespaces/team-a/pods/web',
  verb: 'get',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'team-a',
  resource: 'pods',
  subresource: 'log',
  name: 'web',
};
const healthz: AuthorizationAttributes = {
  isResourceRequest: false,
  path: '/healthz',
  verb: 'get',
  apiGroup: '',
  apiVersion: '',
  namespace: '',
  resource: '',
  subresource: '',
  name: '',
};
const jane = {
  name: 'jane',
  uid: 'u-1',
  groups: ['devs', 'system:authenticated'],
  extra: { scopes: ['b', 'a'], 'authentication.kubernetes.io/credential-id': ['x'] },
};

describe('the SubjectAccessReview sent', () => {
  it('carries the resource attributes, user, groups, extra and uid as upstream builds them (v1)', () => {
    const body = JSON.parse(subjectAccessReviewBody(subjectAccessReviewSpec(jane, podsGet), 'v1')) as { apiVersion: string; spec: unknown };
    assert.deepEqual(body, {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: {
        resourceAttributes: { namespace: 'team-a', verb: 'get', version: 'v1', resource: 'pods', subresource: 'log', name: 'web' },
        user: 'jane',
        groups: ['devs', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': ['x'], scopes: ['b', 'a'] },
        uid: 'u-1',
      },
      status: { allowed: false },
    });
  });

  it('names the groups `group` in v1beta1 and sends nonResourceAttributes for a path', () => {
    const text = subjectAccessReviewBody(subjectAccessReviewSpec({ name: 'bob', groups: ['g'] }, healthz), 'v1beta1');
    const body = JSON.parse(text) as { apiVersion: string; spec: unknown };
    assert.equal(body.apiVersion, 'authorization.k8s.io/v1beta1');
    assert.deepEqual(body.spec, { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'bob', group: ['g'] });
  });

  it('leaves empty fields out (Go omitempty)', () => {
    const spec = subjectAccessReviewSpec({ name: 'x', groups: [] }, { ...podsGet, namespace: '', subresource: '', name: '', verb: 'list' });
    assert.deepEqual(spec, { resourceAttributes: { verb: 'list', version: 'v1', resource: 'pods' }, user: 'x' });
  });
});

describe('the answer decoded', () => {
  it('reads allowed, denied, reason and evaluationError', () => {
    assert.deepEqual(
      decodeSubjectAccessReviewStatus(
        '{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false,"denied":true,"reason":"no"}}',
        'v1',
      ),
      { allowed: false, denied: true, reason: 'no' },
    );
    assert.deepEqual(decodeSubjectAccessReviewStatus('{"status":{"allowed":true}}', 'v1beta1'), { allowed: true });
  });

  it('refuses garbage, another kind or version, and wrong types', () => {
    assert.throws(() => decodeSubjectAccessReviewStatus('<html>', 'v1'), /couldn't get version\/kind; json parse error/);
    assert.throws(() => decodeSubjectAccessReviewStatus('{"apiVersion":"v1","kind":"Pod"}', 'v1'), /no kind "Pod" is registered for version "v1"/);
    assert.throws(() => decodeSubjectAccessReviewStatus('{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview"}', 'v1'), /no kind/);
    assert.throws(
      () => decodeSubjectAccessReviewStatus('{"status":{"allowed":"yes"}}', 'v1'),
      /cannot unmarshal string into Go struct field .*allowed of type bool/,
    );
  });
});

/** A fake webhook: answers in order, counting calls. */
function fakePoster(answers: (WebhookResponse | Error)[]): WebhookPoster & { calls: string[] } {
  const calls: string[] = [];
  const post: WebhookPoster = async (body) => {
    calls.push(body);
    const a = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    if (a instanceof Error) throw a;
    return a;
  };
  return Object.assign(post, { calls });
}
const ok = (status: object): WebhookResponse => ({
  status: 200,
  retryAfter: false,
  body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status }),
});

describe('the webhook authorizer', () => {
  it('allows, denies with the reason, or has no opinion', async () => {
    for (const [status, decision] of [
      [{ allowed: true }, 'allow'],
      [{ allowed: false, denied: true, reason: 'nope' }, 'deny'],
      [{ allowed: false, reason: 'ask RBAC' }, 'no-opinion'],
    ] as const) {
      const w = createWebhookAuthorizer({ connection: fakePoster([ok(status)]), version: 'v1' });
      const r = await w.authorize(jane, podsGet);
      assert.equal(r.decision, decision);
      assert.equal(r.reason, 'reason' in status ? status.reason : undefined);
    }
    const both = await createWebhookAuthorizer({ connection: fakePoster([ok({ allowed: true, denied: true })]), version: 'v1' }).authorize(jane, podsGet);
    assert.deepEqual(both, { decision: 'deny', error: 'webhook subject access review returned both allow and deny response' });
  });

  it('caches allowed answers for the authorized TTL and others for the unauthorized TTL', async () => {
    let now = 0;
    const allowPost = fakePoster([ok({ allowed: true })]);
    const w = createWebhookAuthorizer({ connection: allowPost, version: 'v1', authorizedTTLMs: 60_000, unauthorizedTTLMs: 1000, now: () => now });
    await w.authorize(jane, podsGet);
    now = 59_999;
    assert.equal((await w.authorize(jane, podsGet)).decision, 'allow');
    assert.equal(allowPost.calls.length, 1);
    await w.authorize({ ...jane, groups: ['other'] }, podsGet); // another spec: another key
    assert.equal(allowPost.calls.length, 2);
    now = 60_000;
    await w.authorize(jane, podsGet);
    assert.equal(allowPost.calls.length, 3);

    now = 0;
    const denyPost = fakePoster([ok({ allowed: false, denied: true })]);
    const d = createWebhookAuthorizer({ connection: denyPost, version: 'v1', authorizedTTLMs: 60_000, unauthorizedTTLMs: 1000, now: () => now });
    await d.authorize(jane, podsGet);
    await d.authorize(jane, podsGet);
    assert.equal(denyPost.calls.length, 1);
    now = 1000;
    await d.authorize(jane, podsGet);
    assert.equal(denyPost.calls.length, 2);
  });

  it('retries a reset connection, 429, 500 and 504 up to 5 attempts with growing waits', async () => {
    const waits: number[] = [];
    const post = fakePoster([{ status: 500, retryAfter: false, body: 'boom' }]);
    const w = createWebhookAuthorizer({ connection: post, version: 'v1', sleep: async (ms) => void waits.push(ms) });
    const r = await w.authorize(jane, podsGet);
    assert.equal(r.decision, 'no-opinion');
    assert.match(r.error!, /status code 500/);
    assert.equal(post.calls.length, 5);
    assert.equal(waits.length, 4);
    for (const [i, base] of [500, 750, 1125, 1687.5].entries()) assert.ok(waits[i]! >= base && waits[i]! <= base * 1.2, `wait ${i}: ${waits[i]}`);

    const reset = fakePoster([new WebhookCallError('Post "x": read ECONNRESET', 'reset'), ok({ allowed: true })]);
    assert.equal((await createWebhookAuthorizer({ connection: reset, version: 'v1', sleep: async () => {} }).authorize(jane, podsGet)).decision, 'allow');
    assert.equal(reset.calls.length, 2);
  });

  it('does not retry a refused connection, a timeout, a 403 or garbage, and caches no failure', async () => {
    for (const a of [
      new WebhookCallError('Post "x": connect ECONNREFUSED', 'other'),
      new WebhookCallError('Post "x": context deadline exceeded', 'timeout'),
      { status: 403, retryAfter: false, body: '{"kind":"Status","message":"go away"}' },
      { status: 200, retryAfter: false, body: 'garbage' },
    ]) {
      const post = fakePoster([a]);
      const w = createWebhookAuthorizer({ connection: post, sleep: async () => assert.fail('no retry expected') });
      const r = await w.authorize(jane, podsGet);
      assert.equal(r.decision, 'no-opinion');
      assert.ok(r.error);
      await w.authorize(jane, podsGet);
      assert.equal(post.calls.length, 2);
    }
  });

  it('refuses an unknown version and resolves no rules', () => {
    assert.throws(
      () => createWebhookAuthorizer({ connection: fakePoster([]), version: 'v2' as 'v1' }),
      /unsupported webhook authorizer version "v2", supported versions are "v1", "v1beta1"/,
    );
    const rules = createWebhookAuthorizer({ connection: fakePoster([]) }).rulesFor(jane, 'ns');
    assert.deepEqual(rules, { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'webhook authorizer does not support user rule resolution' });
  });
});

describe('the webhook kubeconfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kplane-authzwh-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const config = (cluster: string, user = '{}'): string =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: authz\n  cluster: ${cluster}\nusers:\n- name: kplane\n  user: ${user}\ncontexts:\n- name: webhook\n  context: {cluster: authz, user: kplane}\ncurrent-context: webhook\n`;

  it('reads the server, insecure-skip-tls-verify and the token', () => {
    const p = file('ok.yaml', config('{server: "https://127.0.0.1:9443/authorize", insecure-skip-tls-verify: true}', '{token: abc}'));
    assert.deepEqual(loadWebhookKubeconfig(p), { url: 'https://127.0.0.1:9443/authorize', token: 'abc', insecureSkipTLSVerify: true });
  });

  it('names the file and what is wrong', () => {
    const cases: [string, string, RegExp][] = [
      ['missing.yaml', '', /stat .*missing\.yaml: no such file or directory/],
      ['yaml.yaml', 'clusters: [', /error loading config file ".*yaml\.yaml": yaml: /],
      ['empty.yaml', '', /invalid configuration: no configuration has been provided/],
      [
        'ctx.yaml',
        config('{server: "https://x"}').replace('current-context: webhook', 'current-context: other'),
        /context was not found for specified context: other/,
      ],
      ['noserver.yaml', config('{}'), /invalid configuration: no server found for cluster "authz"/],
      ['ca.yaml', config('{server: "https://x", certificate-authority: nope.pem}'), /unable to read certificate-authority .*nope\.pem for authz due to open/],
      ['b64.yaml', config('{server: "https://x", certificate-authority-data: "!!"}'), /certificate-authority-data: illegal base64 data at input byte 0/],
      ['pem.yaml', config('{server: "https://x", certificate-authority-data: "aGVsbG8="}'), /unable to load root certificates/],
      ['key.yaml', config('{server: "https://x"}', '{client-certificate: c.pem}'), /client-key-data or client-key must be specified for kplane/],
    ];
    for (const [name, text, re] of cases) {
      const p = name === 'missing.yaml' ? join(dir, name) : file(name, text);
      assert.throws(
        () => loadWebhookKubeconfig(p),
        (e: Error) => {
          assert.ok(e.message.startsWith(`--authorization-webhook-config-file ${JSON.stringify(p)}: `), e.message);
          assert.match(e.message, re);
          return true;
        },
      );
    }
  });
});

describe('the webhook reached over mutual TLS', () => {
  it('presents the client certificate named in the kubeconfig (paths relative to it) and verifies the server with its CA', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kplane-authzwh-mtls-'));
    const serverCA = createCertificateAuthority({ commonName: 'webhook-ca' });
    const clientCA = createCertificateAuthority({ commonName: 'kplane-client-ca' });
    const serving = issueCertificate(serverCA, { commonName: '127.0.0.1', hosts: ['127.0.0.1'], usage: 'server' });
    const client = issueCertificate(clientCA, { commonName: 'kplane-apiserver', usage: 'client' });
    const seen: string[] = [];
    const server = createServer(
      { cert: serving.certPem, key: serving.keyPem, ca: clientCA.certPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        seen.push(String((req.socket as TLSSocket).getPeerCertificate().subject.CN));
        req.resume();
        req.on('end', () => res.end(JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed: true } })));
      },
    );
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
      writeFileSync(join(dir, 'ca.crt'), serverCA.certPem);
      writeFileSync(join(dir, 'client.crt'), client.certPem);
      writeFileSync(join(dir, 'client.key'), client.keyPem);
      const kubeconfig = (user: string): string =>
        `clusters:\n- name: authz\n  cluster: {server: "${url}", certificate-authority: ca.crt}\nusers:\n- name: kplane\n  user: ${user}\n` +
        'contexts:\n- name: webhook\n  context: {cluster: authz, user: kplane}\ncurrent-context: webhook\n';
      writeFileSync(join(dir, 'mtls.yaml'), kubeconfig('{client-certificate: client.crt, client-key: client.key}'));
      const w = createWebhookAuthorizer({ connection: loadWebhookKubeconfig(join(dir, 'mtls.yaml')), version: 'v1' });
      assert.deepEqual(await w.authorize(jane, podsGet), { decision: 'allow' });
      assert.deepEqual(seen, ['kplane-apiserver']);
      // Without the certificate the handshake fails: no opinion, with the error, no retry.
      writeFileSync(join(dir, 'none.yaml'), kubeconfig('{}'));
      const bare = await createWebhookAuthorizer({ connection: loadWebhookKubeconfig(join(dir, 'none.yaml')), version: 'v1' }).authorize(jane, podsGet);
      assert.equal(bare.decision, 'no-opinion');
      assert.match(bare.error!, new RegExp(`^Post "${url}": `));
    } finally {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
