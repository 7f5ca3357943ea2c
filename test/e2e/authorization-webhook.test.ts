// The Webhook authorization mode end to end: a SubjectAccessReview webhook on 127.0.0.1 (HTTPS with
// its own CA, a bearer token from its kubeconfig), a server with `Webhook,RBAC`, and kubectl 1.33 as
// token users the webhook allows, denies (403 with its reason) or leaves to RBAC. Decisions are
// cached (the webhook counts its calls); a webhook that hangs, answers garbage or resets the
// connection leaves the decision to RBAC: allowed when RBAC allows, otherwise upstream's 500 with
// the webhook's error (an authorizer that could not be asked is no verdict); bad config files stop
// `kplane serve` with the file and the field named.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kplaneProcesses } from '../support/kplane-process.js';
import { kubectlSession, writeTokenKubeconfig, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run, tools, ensureTools } from '../support/tools.js';

ensureTools();

const USERS = {
  allowed: { token: 'allowed-token' },
  denied: { token: 'denied-token' },
  ruled: { token: 'ruled-token' },
};

type Mode = 'answer' | 'hang' | 'garbage' | 'reset';

interface TestWebhook {
  readonly url: string;
  readonly caPem: string;
  mode: Mode;
  /** Every review received (parsed), in order. */
  readonly reviews: { apiVersion: string; spec: Record<string, unknown> }[];
  close(): Promise<void>;
}

/**
 * The authorizer webhook: non-resource requests and the user `ruled` get no opinion (RBAC decides),
 * `allowed` is allowed, `denied` is denied with a reason; a request without the kubeconfig's token
 * gets 401.
 */
async function startWebhook(): Promise<TestWebhook> {
  const ca = createCertificateAuthority({ commonName: 'test-authz-webhook-ca' });
  const serving = issueCertificate(ca, { commonName: '127.0.0.1', hosts: ['127.0.0.1'], usage: 'server' });
  const hook = { mode: 'answer' as Mode, reviews: [] as TestWebhook['reviews'] };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers.authorization !== 'Bearer hook-token') {
        res.statusCode = 401;
        res.end('{}');
        return;
      }
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as TestWebhook['reviews'][number];
      hook.reviews.push(review);
      if (hook.mode === 'hang') return; // never answered; the authorizer's deadline ends it
      if (hook.mode === 'reset') return void req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      if (hook.mode === 'garbage') return void res.end('<html>not a review</html>');
      const spec = review.spec;
      const user = spec['user'];
      let status: Record<string, unknown> = { allowed: false, reason: 'the test webhook has no opinion' };
      if (spec['resourceAttributes'] && user === 'allowed') status = { allowed: true, reason: 'allowed by the test webhook' };
      if (spec['resourceAttributes'] && user === 'denied') status = { allowed: false, denied: true, reason: 'denied by the test webhook' };
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return Object.assign(hook, {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`,
    caPem: ca.certPem,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  });
}

function webhookKubeconfig(url: string, caPem: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: authz',
    `  cluster: {server: "${url}", certificate-authority-data: ${Buffer.from(caPem).toString('base64')}}`,
    'users:',
    '- name: kplane',
    '  user: {token: hook-token}',
    'contexts:',
    '- name: webhook',
    '  context: {cluster: authz, user: kplane}',
    'current-context: webhook',
    '',
  ].join('\n');
}

describe('--authorization-mode Webhook,RBAC with kubectl 1.33', () => {
  let hook: TestWebhook;
  let server: TestServer;
  let dir: string;
  let admin: KubectlSession;
  const as: Partial<Record<keyof typeof USERS, KubectlSession>> = {};
  const user = (u: keyof typeof USERS): KubectlSession => as[u]!;
  /** Reviews of requests for `u` on configmaps in `ns` (discovery and other resources are not counted). */
  const reviewsOf = (u: string, ns: string): number =>
    hook.reviews.filter((r) => {
      const ra = r.spec['resourceAttributes'] as { namespace?: string; resource?: string } | undefined;
      return r.spec['user'] === u && ra?.namespace === ns && ra.resource === 'configmaps';
    }).length;

  before(async () => {
    hook = await startWebhook();
    dir = await mkdtemp(join(tmpdir(), 'kplane-authzwh-'));
    const config = join(dir, 'webhook.kubeconfig');
    await writeFile(config, webhookKubeconfig(hook.url, hook.caPem));
    server = await startTestServer({
      storage: 'memory',
      authorizationModes: ['Webhook', 'RBAC'],
      authorizationWebhook: {
        configFile: config,
        version: 'v1',
        // A short deadline and quick retries keep the failure cases of this file short.
        timeoutMs: 1000,
        retryBackoff: { initialMs: 20, factor: 1.5, jitter: 0.2, steps: 3 },
      },
      tokens: new Map(Object.entries(USERS).map(([name, u]) => [u.token, { name, groups: ['system:authenticated'] }])),
    });
    admin = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    for (const u of Object.keys(USERS) as (keyof typeof USERS)[]) {
      as[u] = kubectlSession(tools.kubectl, await writeTokenKubeconfig(dir, server, u, USERS[u].token), join(dir, u));
    }
    for (const ns of ['team-a', 'team-b', 'team-c']) await admin.ok(['create', 'namespace', ns]);
    await admin.ok(['create', 'configmap', 'cm1', '-n', 'team-a', '--from-literal=k=v']);
    // RBAC lets `ruled` read ConfigMaps in team-a only.
    await admin.ok(['create', 'role', 'cm-reader', '-n', 'team-a', '--verb=get,list', '--resource=configmaps']);
    await admin.ok(['create', 'rolebinding', 'ruled-reads', '-n', 'team-a', '--role=cm-reader', '--user=ruled']);
  });
  after(async () => {
    await server?.stop();
    await hook?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('allows what the webhook allows, sending upstream SubjectAccessReview', async () => {
    const out = await user('allowed').ok(['get', 'configmap', 'cm1', '-n', 'team-a', '-o', 'name']);
    assert.equal(out.trim(), 'configmap/cm1');
    const review = hook.reviews.find((r) => r.spec['user'] === 'allowed' && (r.spec['resourceAttributes'] as { name?: string } | undefined)?.name === 'cm1');
    assert.ok(review, 'the webhook was asked');
    assert.equal(review.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(review.spec, {
      resourceAttributes: { namespace: 'team-a', verb: 'get', version: 'v1', resource: 'configmaps', name: 'cm1' },
      user: 'allowed',
      groups: ['system:authenticated'],
    });
    assert.equal((await user('allowed').k(['auth', 'can-i', 'delete', 'secrets', '-n', 'team-b'])).stdout.trim(), 'yes');
  });

  it('denies with 403 and the webhook reason, before RBAC is asked', async () => {
    // RBAC would allow `denied` nothing either; a deny from the webhook stops the chain with its reason.
    const r = await user('denied').k(['get', 'configmaps', '-n', 'team-a']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /Error from server \(Forbidden\): configmaps is forbidden: User "denied" cannot list resource "configmaps" in API group "" in the namespace "team-a": denied by the test webhook/,
    );
  });

  it('falls through to RBAC when the webhook has no opinion', async () => {
    assert.match(await user('ruled').ok(['get', 'configmaps', '-n', 'team-a', '-o', 'name']), /configmap\/cm1/);
    const r = await user('ruled').k(['get', 'configmaps', '-n', 'team-b']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /configmaps is forbidden: User "ruled" cannot list resource "configmaps" in API group "" in the namespace "team-b"/);
  });

  it('caches decisions: an identical request within the TTL is not sent again', async () => {
    await user('allowed').ok(['get', 'configmaps', '-n', 'team-b']);
    assert.equal(reviewsOf('allowed', 'team-b'), 1);
    await user('allowed').ok(['get', 'configmaps', '-n', 'team-b']);
    assert.equal(reviewsOf('allowed', 'team-b'), 1, 'the second list was decided from the cache');
    // A deny is cached too (for the unauthorized TTL). Asked right here, so that the second
    // request is within the 30 s TTL however long the tests before this one took.
    await user('denied').k(['get', 'configmaps', '-n', 'team-a']);
    const before = reviewsOf('denied', 'team-a');
    assert.ok(before >= 1, 'the webhook was asked about denied');
    await user('denied').k(['get', 'configmaps', '-n', 'team-a']);
    assert.equal(reviewsOf('denied', 'team-a'), before);
  });

  for (const mode of ['hang', 'garbage', 'reset'] as const) {
    it(`a webhook that ${mode === 'hang' ? 'hangs' : mode === 'garbage' ? 'answers garbage' : 'resets the connection'}: RBAC still allows; otherwise upstream's 500, not a 403`, async () => {
      hook.mode = mode;
      try {
        // Requests the cache has not seen: team-c for `allowed`, a named get for `ruled`.
        const denied = await user('allowed').k(['get', 'configmaps', '-n', 'team-c', '--request-timeout=30s']);
        assert.equal(denied.code, 1);
        // WithAuthorization: not allowed and an error → responsewriters.InternalError.
        assert.match(denied.stderr, /Error from server \(InternalError\): Internal error occurred: /);
        assert.doesNotMatch(denied.stderr, /Forbidden/);
        const name = `cm-${mode}`;
        await admin.ok(['create', 'configmap', name, '-n', 'team-a']);
        assert.equal((await user('ruled').ok(['get', 'configmap', name, '-n', 'team-a', '-o', 'name', '--request-timeout=30s'])).trim(), `configmap/${name}`);
      } finally {
        hook.mode = 'answer';
      }
    });
  }

  it('retries a reset connection (3 attempts here) and then gives up', () => {
    const resets = hook.reviews.filter(
      (r) => r.spec['user'] === 'allowed' && (r.spec['resourceAttributes'] as { namespace?: string } | undefined)?.namespace === 'team-c',
    );
    // hang: 1 call (a timeout is not retried), garbage: 1, reset: 3 attempts.
    assert.equal(resets.length, 5);
  });

  it("a ValidatingAdmissionPolicy's `authorizer` checks wait for the webhook's answer", async () => {
    // Only users who may list Secrets in team-d may create ConfigMaps there: `allowed` may (the
    // webhook says so, asked during the admission), `ruled` may not (no opinion, and RBAC lets it
    // create ConfigMaps there but not list Secrets).
    await admin.ok(['create', 'namespace', 'team-d']);
    await admin.ok(['label', 'namespace', 'team-d', 'cel-authz=yes']);
    await admin.ok(['create', 'role', 'cm-creator', '-n', 'team-d', '--verb=create', '--resource=configmaps']);
    await admin.ok(['create', 'rolebinding', 'ruled-creates', '-n', 'team-d', '--role=cm-creator', '--user=ruled']);
    const check = "authorizer.group('').resource('secrets').namespace(request.namespace).check('list')";
    const policy = await admin.file(
      'secret-listers.yaml',
      [
        'apiVersion: admissionregistration.k8s.io/v1',
        'kind: ValidatingAdmissionPolicy',
        'metadata: {name: secret-listers-only}',
        'spec:',
        '  failurePolicy: Fail',
        '  matchConstraints:',
        '    namespaceSelector: {matchLabels: {cel-authz: "yes"}}',
        '    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]',
        '  validations:',
        `  - expression: "${check}.allowed()"`,
        `    messageExpression: "'only users who may list secrets create configmaps here (' + string(${check}.errored()) + ')'"`,
        '---',
        'apiVersion: admissionregistration.k8s.io/v1',
        'kind: ValidatingAdmissionPolicyBinding',
        'metadata: {name: secret-listers-only}',
        'spec: {policyName: secret-listers-only, validationActions: [Deny]}',
        '',
      ].join('\n'),
    );
    await admin.ok(['apply', '-f', policy]);
    // The policy is in force once the server has seen it: `ruled` is refused.
    let refused = '';
    for (let i = 0; i < 100 && !refused; i++) {
      const r = await user('ruled').k(['create', 'configmap', `ruled-${i}`, '-n', 'team-d']);
      if (r.code !== 0) refused = r.stderr;
      else await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.match(
      refused,
      /ValidatingAdmissionPolicy 'secret-listers-only' with binding 'secret-listers-only' denied request: only users who may list secrets create configmaps here \(false\)/,
    );
    const asked = (u: string): number =>
      hook.reviews.filter((r) => {
        const ra = r.spec['resourceAttributes'] as { namespace?: string; resource?: string; verb?: string } | undefined;
        return r.spec['user'] === u && ra?.namespace === 'team-d' && ra.resource === 'secrets' && ra.verb === 'list';
      }).length;
    assert.equal(asked('allowed'), 0);
    // `allowed`'s check is not in the webhook's cache: the policy waits for the answer, which allows.
    assert.equal((await user('allowed').ok(['create', 'configmap', 'by-allowed', '-n', 'team-d', '-o', 'name'])).trim(), 'configmap/by-allowed');
    assert.equal(asked('allowed'), 1, 'the check was sent to the webhook once');
    // A second create is decided from the webhook authorizer's cache.
    await user('allowed').ok(['create', 'configmap', 'by-allowed-2', '-n', 'team-d']);
    assert.equal(asked('allowed'), 1);
  });

  it('counts webhook calls and decisions in /metrics', async () => {
    const raw = new RawClient(server.url, adminCredentials(server.dataDir));
    try {
      const text = (await raw.request({ path: '/metrics' })).text();
      assert.match(text, /apiserver_authorization_webhook_evaluations_total\{name="default",result="success"\} [1-9]/);
      assert.match(text, /apiserver_authorization_webhook_evaluations_total\{name="default",result="timeout"\} [1-9]/);
      assert.match(text, /apiserver_authorization_webhook_evaluations_total\{name="default",result="error"\} [1-9]/);
      assert.match(text, /apiserver_authorization_webhook_evaluations_fail_open_total\{name="default",result="error"\} [1-9]/);
      assert.match(text, /apiserver_authorization_webhook_duration_seconds_count\{name="default",result="success"\} [1-9]/);
      assert.match(text, /apiserver_authorization_decisions_total\{type="Webhook",name="default",decision="allowed"\} [1-9]/);
      assert.match(text, /apiserver_authorization_decisions_total\{type="Webhook",name="default",decision="denied"\} [1-9]/);
    } finally {
      raw.agent.destroy();
    }
  });
});

describe('kplane serve refuses a bad webhook configuration, naming the file and the field', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-authzwh-cli-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const serve = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', join(dir, 'data'), '--secure-port', '0', ...args], {
      timeoutMs: 60_000,
    });

  it('Webhook without a config file, a config file without Webhook, an unknown version', async () => {
    let r = await serve(['--authorization-mode', 'Webhook,RBAC']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), "kplane: --authorization-mode: authorization-mode Webhook's authorization config file not passed");
    const config = join(dir, 'ok.kubeconfig');
    await writeFile(config, webhookKubeconfig('https://127.0.0.1:1/authorize', createCertificateAuthority().certPem));
    r = await serve(['--authorization-webhook-config-file', config]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), 'kplane: cannot specify --authorization-webhook-config-file without mode Webhook');
    r = await serve(['--authorization-mode', 'Webhook', '--authorization-webhook-config-file', config, '--authorization-webhook-version', 'v2']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.trim(),
      'kplane: --authorization-webhook-version: unsupported webhook authorizer version "v2", supported versions are "v1", "v1beta1"',
    );
  });

  it('a good file: kplane serve starts with the Webhook mode', async () => {
    const config = join(dir, 'good.kubeconfig');
    await writeFile(config, webhookKubeconfig('https://127.0.0.1:1/authorize', createCertificateAuthority().certPem));
    const procs = kplaneProcesses({ startTimeoutMs: 60_000 });
    try {
      const p = await procs.start(
        [
          'serve',
          '--data-dir',
          join(dir, 'good-data'),
          '--secure-port',
          '0',
          '--authorization-mode',
          'Webhook,RBAC',
          '--authorization-webhook-config-file',
          config,
        ],
        /^kplane is serving on https:\/\/\S+/m,
      );
      assert.match(p.firstLine, /^kplane is serving on https:/);
    } finally {
      procs.killAll();
    }
  });

  it('a missing file and a cluster without a server', async () => {
    const missing = join(dir, 'missing.kubeconfig');
    let r = await serve(['--authorization-mode', 'Webhook,RBAC', '--authorization-webhook-config-file', missing]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), `kplane: --authorization-webhook-config-file ${JSON.stringify(missing)}: stat ${missing}: no such file or directory`);
    const noServer = join(dir, 'no-server.kubeconfig');
    await writeFile(noServer, webhookKubeconfig('', 'x').replace(/cluster: \{[^}]*\}/, 'cluster: {insecure-skip-tls-verify: true}'));
    r = await serve(['--authorization-mode', 'Webhook,RBAC', '--authorization-webhook-config-file', noServer]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr.trim(),
      `kplane: --authorization-webhook-config-file ${JSON.stringify(noServer)}: invalid configuration: no server found for cluster "authz"`,
    );
  });
});
