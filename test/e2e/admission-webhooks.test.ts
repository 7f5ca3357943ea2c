// Admission webhooks end to end: a TypeScript webhook server on loopback with its own CA, webhook
// configurations applied with kubectl 1.20 and 1.33, and kubectl's writes denied (with the webhook's
// message), allowed with warnings, mutated by a JSONPatch; faults (a webhook that hangs, closes
// the connection, answers 500 or garbage, or presents a certificate its caBundle does not sign)
// answered as the failure policy says, with nothing stored that should not be and unrelated
// writes unaffected; bad configurations refused with upstream's 422 and field paths.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority } from '../../src/server/certs.js';
import { eventually } from '../support/eventually.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { admissionAnswer, jsonPatch, type ReviewServer, startReviewServer } from '../support/review-server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

interface Review {
  apiVersion: string;
  kind: string;
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    name?: string;
    namespace?: string;
    operation: string;
    userInfo: { username: string; groups?: string[] };
    object?: { metadata?: { name?: string; labels?: Record<string, string> } } | null;
    oldObject?: unknown;
    dryRun: boolean;
    options?: Record<string, unknown>;
  };
}

/** The value of the series of `name` whose labels include `labels`, or undefined. */
function metric(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

/** A webhook server: its answer depends on the path. Every review it receives is kept. */
async function startWebhookServer(ca: { certPem: string; keyPem: string }): Promise<ReviewServer & { seen: Review[] }> {
  const seen: Review[] = [];
  const server = await startReviewServer<Review>(
    (review, { path, req, res }) => {
      seen.push(review);
      const answer = (response: Record<string, unknown>): unknown => admissionAnswer(review.request.uid, response);
      const name = review.request.object?.metadata?.name ?? review.request.name ?? '';
      switch (path) {
        case '/validate':
          if (name.startsWith('bad')) return answer({ allowed: false, status: { code: 403, message: `configmaps named ${name} are not allowed` } });
          return answer({ allowed: true, warnings: [`checked ${name}`] });
        case '/mutate':
          return answer({ allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }]) });
        case '/deny-all':
          return answer({ allowed: false, status: { message: 'nothing passes' } });
        case '/hang':
          return undefined; // never answers
        case '/close':
          req.socket.destroy();
          return undefined;
        case '/500':
          res.statusCode = 500;
          res.end('boom');
          return undefined;
        case '/garbage':
          res.setHeader('content-type', 'application/json');
          res.end('garbage, not JSON');
          return undefined;
        default:
          res.statusCode = 404;
          res.end();
          return undefined;
      }
    },
    { ca },
  );
  return { ...server, seen };
}

function configYaml(
  kind: 'Validating' | 'Mutating',
  name: string,
  hooks: { name: string; url: string; caBundle: string; label: string; failurePolicy?: string; timeoutSeconds?: number; operations?: string }[],
): string {
  return [
    'apiVersion: admissionregistration.k8s.io/v1',
    `kind: ${kind}WebhookConfiguration`,
    'metadata:',
    `  name: ${name}`,
    'webhooks:',
    ...hooks.flatMap((h) => [
      `- name: ${h.name}`,
      '  admissionReviewVersions: [v1]',
      '  sideEffects: None',
      `  failurePolicy: ${h.failurePolicy ?? 'Fail'}`,
      ...(h.timeoutSeconds ? [`  timeoutSeconds: ${h.timeoutSeconds}`] : []),
      '  clientConfig:',
      `    url: ${h.url}`,
      `    caBundle: ${h.caBundle}`,
      '  rules:',
      `  - operations: [${h.operations ?? 'CREATE, UPDATE'}]`,
      '    apiGroups: [""]',
      '    apiVersions: [v1]',
      '    resources: [configmaps]',
      '  objectSelector:',
      `    matchLabels: {hook: ${h.label}}`,
    ]),
    '',
  ].join('\n');
}

function configMapYaml(name: string, label?: string): string {
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${name}`,
    ...(label ? ['  labels:', `    hook: ${label}`] : []),
    'data: {a: "1"}',
    '',
  ].join('\n');
}

for (const kubectl of KUBECTLS)
  describe(`admission webhooks with kubectl ${kubectl.name}`, () => {
    const ks = useKubectlServer(kubectl.bin, 'kplane-webhooks-');
    const ca = createCertificateAuthority({ commonName: 'webhook-ca' });
    const otherCa = createCertificateAuthority({ commonName: 'other-ca' });
    const caBundle = Buffer.from(ca.certPem).toString('base64');
    let hooks: Awaited<ReturnType<typeof startWebhookServer>>;
    let strangers: Awaited<ReturnType<typeof startWebhookServer>>;

    before(async () => {
      hooks = await startWebhookServer(ca);
      // Signed by a CA the configuration does not name.
      strangers = await startWebhookServer(otherCa);
    });
    after(async () => {
      await Promise.all([hooks.close(), strangers.close()]);
    });

    /** Applies a configuration, then waits until the webhook with `label` is called (a dry-run create). */
    async function install(yaml: string, label: string, server = hooks): Promise<void> {
      await ks.ok(['apply', '-f', await ks.file(`cfg-${label}.yaml`, yaml)]);
      const probe = configMapYaml(`probe-${label}`, label);
      await eventually(10_000, `webhook ${label} active`, async () => {
        const before = server.seen.length;
        await ks.k(['create', '--dry-run=server', '-f', await ks.file(`probe-${label}.yaml`, probe)]);
        return server.seen.slice(before).some((r) => r.request.object?.metadata?.labels?.hook === label) ? true : undefined;
      });
    }

    it('refuses bad configurations with 422 and the field paths', async () => {
      const bad = [
        'apiVersion: admissionregistration.k8s.io/v1',
        'kind: ValidatingWebhookConfiguration',
        'metadata: {name: bad-config}',
        'webhooks:',
        '- name: short',
        '  admissionReviewVersions: [v9]',
        '  timeoutSeconds: 31',
        '  clientConfig: {url: "http://127.0.0.1/x?y=1"}',
        '  rules: [{operations: [CREATE, "*"], apiGroups: [""], apiVersions: [v1], resources: [configmaps], scope: Everywhere}]',
        '',
      ].join('\n');
      // kubectl 1.20 would refuse it itself from the OpenAPI (sideEffects is required there too).
      const r = await ks.k(['create', '--validate=false', '-f', await ks.file('bad.yaml', bad)]);
      assert.notEqual(r.code, 0);
      for (const text of [
        'The ValidatingWebhookConfiguration "bad-config" is invalid',
        'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
        'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
        'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
        `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
        'webhooks[0].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
        `webhooks[0].rules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`,
        'webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
        'webhooks[0].admissionReviewVersions: Invalid value: ["v9"]: must include at least one of v1, v1beta1',
      ]) {
        assert.ok(r.stderr.includes(text), `missing ${text}\n${r.stderr}`);
      }
      const missing = await ks.k(['get', 'validatingwebhookconfiguration', 'bad-config']);
      assert.notEqual(missing.code, 0);
    });

    it('a validating webhook denies with its message, allows with warnings; the configuration is defaulted', async () => {
      await install(configYaml('Validating', 'checks', [{ name: 'check.kplane.test', url: `${hooks.url}/validate`, caBundle, label: 'check' }]), 'check');
      const cfg = JSON.parse(await ks.ok(['get', 'validatingwebhookconfiguration', 'checks', '-o', 'json'])) as { webhooks: Record<string, unknown>[] };
      assert.equal(cfg.webhooks[0]!.timeoutSeconds, 10);
      assert.equal(cfg.webhooks[0]!.matchPolicy, 'Equivalent');
      assert.deepEqual(cfg.webhooks[0]!.namespaceSelector, {});

      const denied = await ks.k(['create', '-f', await ks.file('bad.yaml', configMapYaml('bad-one', 'check'))]);
      assert.notEqual(denied.code, 0);
      assert.match(denied.stderr, /admission webhook "check\.kplane\.test" denied the request: configmaps named bad-one are not allowed/);
      assert.notEqual((await ks.k(['get', 'configmap', 'bad-one'])).code, 0, 'a denied object is not stored');

      const allowed = await ks.k(['create', '-f', await ks.file('good.yaml', configMapYaml('good-one', 'check'))]);
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.match(allowed.stderr, /Warning: checked good-one/);
      const review = hooks.seen.findLast((r) => r.request.object?.metadata?.name === 'good-one')!;
      assert.equal(review.apiVersion, 'admission.k8s.io/v1');
      assert.equal(review.kind, 'AdmissionReview');
      assert.deepEqual(review.request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
      assert.deepEqual(review.request.resource, { group: '', version: 'v1', resource: 'configmaps' });
      assert.equal(review.request.operation, 'CREATE');
      assert.equal(review.request.namespace, 'default');
      assert.equal(review.request.dryRun, false);
      assert.equal(review.request.options?.kind, 'CreateOptions');
      assert.ok(review.request.userInfo.groups?.includes('system:masters'));

      // An update through apply is checked too, with the old object.
      const upd = await ks.k(['label', 'configmap', 'good-one', 'extra=1']);
      assert.equal(upd.code, 0, upd.stderr);
      const u = hooks.seen.findLast((r) => r.request.name === 'good-one' && r.request.operation === 'UPDATE');
      assert.ok(u?.request.oldObject, 'UPDATE carries the old object');

      const metrics = (await ks.raw.request({ path: '/metrics' })).text();
      assert.match(
        metrics,
        /apiserver_admission_webhook_admission_duration_seconds_count\{name="check\.kplane\.test",type="validating",operation="CREATE",rejected="true"\} [1-9]/,
      );
      // Upstream's request and rejection counters: the refusal with the webhook's code, the allowed create with 200.
      const check = { name: 'check.kplane.test', type: 'validating', operation: 'CREATE' };
      assert.ok(
        (metric(metrics, 'apiserver_admission_webhook_request_total', { ...check, code: '403', rejected: 'true' }) ?? 0) >= 1,
        'request_total, refused',
      );
      assert.ok(
        (metric(metrics, 'apiserver_admission_webhook_request_total', { ...check, code: '200', rejected: 'false' }) ?? 0) >= 1,
        'request_total, allowed',
      );
      assert.ok(
        (metric(metrics, 'apiserver_admission_webhook_rejection_count', { ...check, error_type: 'no_error', rejection_code: '403' }) ?? 0) >= 1,
        'rejection_count, the webhook refused',
      );
    });

    it("the review's options are the request's, as upstream's handlers pass them (a patch's as UpdateOptions)", async () => {
      await install(
        configYaml('Validating', 'options', [
          { name: 'options.kplane.test', url: `${hooks.url}/validate`, caBundle, label: 'opts', operations: 'CREATE, UPDATE, DELETE' },
        ]),
        'opts',
      );
      const optionsOf = (operation: string): Record<string, unknown> | undefined =>
        hooks.seen.findLast((r) => r.request.operation === operation && (r.request.name ?? r.request.object?.metadata?.name) === 'opt-one')?.request.options;
      const meta = { apiVersion: 'meta.k8s.io/v1' };
      // kubectl 1.33 asks for strict field validation; 1.20 knows no fieldValidation.
      const strict = kubectl.name === '1.20' ? {} : { fieldValidation: 'Strict' };
      const created = await ks.k(['create', '-f', await ks.file('opt.yaml', configMapYaml('opt-one', 'opts'))]);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual(optionsOf('CREATE'), { kind: 'CreateOptions', ...meta, fieldManager: 'kubectl-create', ...strict });
      // A server-side apply is a patch: its PatchOptions reach admission as UpdateOptions, without force.
      const applied = await ks.k([
        'apply',
        '--server-side',
        '--force-conflicts',
        '--dry-run=server',
        '-f',
        await ks.file('opt2.yaml', configMapYaml('opt-one', 'opts')),
      ]);
      assert.equal(applied.code, 0, applied.stderr);
      assert.deepEqual(optionsOf('UPDATE'), { kind: 'UpdateOptions', ...meta, dryRun: ['All'], fieldManager: 'kubectl', ...strict });
      // DeleteOptions from kubectl's body: the grace period and the propagation policy.
      const deleted = await ks.k(['delete', 'configmap', 'opt-one', '--cascade=foreground', '--grace-period=7']);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.deepEqual(optionsOf('DELETE'), { kind: 'DeleteOptions', ...meta, gracePeriodSeconds: 7, propagationPolicy: 'Foreground' });
    });

    it('a create the webhook denies is not charged to a ResourceQuota (quota runs after the webhooks)', async () => {
      // The 'check' webhook of the test above denies ConfigMaps named bad-*.
      await ks.ok(['create', 'namespace', 'quota-order']);
      const count = async (): Promise<number> => (await ks.ok(['get', 'configmaps', '-n', 'quota-order', '-o', 'name'])).split('\n').filter(Boolean).length;
      const limit = (await count()) + 1;
      await ks.ok(['create', 'quota', 'one-more', '-n', 'quota-order', `--hard=count/configmaps=${limit}`]);
      // No quota controller runs here: the status it would write, written by hand.
      const st = await ks.raw.request({
        method: 'PATCH',
        path: '/api/v1/namespaces/quota-order/resourcequotas/one-more/status',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ status: { hard: { 'count/configmaps': String(limit) }, used: { 'count/configmaps': String(limit - 1) } } }),
      });
      assert.equal(st.status, 200, st.text());
      for (const i of [1, 2, 3]) {
        const denied = await ks.k(['create', '-n', 'quota-order', '-f', await ks.file(`bad-q${i}.yaml`, configMapYaml(`bad-q${i}`, 'check'))]);
        assert.match(denied.stderr, /denied the request/);
      }
      const allowed = await ks.k(['create', '-n', 'quota-order', '-f', await ks.file('good-q.yaml', configMapYaml('good-q', 'check'))]);
      assert.equal(allowed.code, 0, allowed.stderr);
    });

    it('a mutating webhook adds a label by JSONPatch, visible in kubectl get', async () => {
      await install(configYaml('Mutating', 'labels', [{ name: 'label.kplane.test', url: `${hooks.url}/mutate`, caBundle, label: 'mutate' }]), 'mutate');
      await ks.ok(['apply', '-f', await ks.file('m.yaml', configMapYaml('mutated-one', 'mutate'))]);
      const labels = await ks.ok(['get', 'configmap', 'mutated-one', '-o', 'jsonpath={.metadata.labels}']);
      assert.deepEqual(JSON.parse(labels), { hook: 'mutate', mutated: 'yes' });
    });

    it('webhooks are never called for webhook configurations', async () => {
      // The webhook selects its own configuration (labelled like the ConfigMaps it is called for) by a
      // second rule; install() waits until it is in effect, so the writes below would reach it if
      // configurations were not exempt.
      const yaml = configYaml('Validating', 'deny-config', [{ name: 'deny.kplane.test', url: `${hooks.url}/deny-all`, caBundle, label: 'deny-config' }])
        .replace('  name: deny-config\n', '  name: deny-config\n  labels: {hook: deny-config}\n')
        .replace(
          '    resources: [configmaps]\n',
          '    resources: [configmaps]\n  - operations: ["*"]\n    apiGroups: ["admissionregistration.k8s.io"]\n    apiVersions: ["*"]\n    resources: ["*"]\n',
        );
      await install(yaml, 'deny-config');
      await ks.ok(['label', 'validatingwebhookconfiguration', 'deny-config', 'changed=yes']);
      await ks.ok(['delete', 'validatingwebhookconfiguration', 'deny-config']);
      assert.ok(
        hooks.seen.some((r) => r.request.object?.metadata?.labels?.hook === 'deny-config'),
        'the webhook was in effect',
      );
      assert.ok(!hooks.seen.some((r) => r.request.resource.group === 'admissionregistration.k8s.io'));
    });

    const faults = [
      { label: 'hang', path: '/hang', timeoutSeconds: 1, text: 'context deadline exceeded' },
      { label: 'close', path: '/close', text: 'failed to call webhook: Post "' },
      { label: 'fivehundred', path: '/500', text: 'an error on the server (\\"boom\\") has prevented the request from succeeding' },
      { label: 'garbage', path: '/garbage', text: "couldn't get version/kind; json parse error: invalid character 'g' looking for beginning of value" },
      { label: 'stranger', path: '/validate', server: 'strangers', text: 'tls: failed to verify certificate: x509: certificate signed by unknown authority' },
    ] as const;

    for (const f of faults) {
      it(`a webhook that ${f.label === 'stranger' ? 'presents a certificate not signed by its caBundle' : `fails (${f.label})`}: Fail refuses with 500, Ignore lets the write through`, async () => {
        const server = 'server' in f ? strangers : hooks;
        await ks.ok([
          'apply',
          '-f',
          await ks.file(
            `fault-${f.label}.yaml`,
            configYaml('Validating', `fault-${f.label}`, [
              {
                name: `fail.${f.label}.kplane.test`,
                url: `${server.url}${f.path}`,
                caBundle,
                label: `fail-${f.label}`,
                failurePolicy: 'Fail',
                ...('timeoutSeconds' in f ? { timeoutSeconds: f.timeoutSeconds } : {}),
              },
              {
                name: `ignore.${f.label}.kplane.test`,
                url: `${server.url}${f.path}`,
                caBundle,
                label: `ignore-${f.label}`,
                failurePolicy: 'Ignore',
                ...('timeoutSeconds' in f ? { timeoutSeconds: f.timeoutSeconds } : {}),
              },
            ]),
          ),
        ]);
        // Fail: refused once the configuration is seen; nothing stored.
        const refused = await eventually(10_000, `fault ${f.label} in effect`, async () => {
          const r = await ks.k(['create', '-f', await ks.file(`f-${f.label}.yaml`, configMapYaml(`fail-${f.label}`, `fail-${f.label}`))]);
          return r.code !== 0 ? r : (await ks.k(['delete', 'configmap', `fail-${f.label}`]), undefined);
        });
        assert.match(
          refused.stderr,
          new RegExp(`Internal error occurred: failed calling webhook "fail\\.${f.label}\\.kplane\\.test": failed to call webhook: `),
        );
        assert.ok(refused.stderr.includes(f.text.replaceAll('\\"', '"')) || refused.stderr.includes(f.text), refused.stderr);
        assert.notEqual((await ks.k(['get', 'configmap', `fail-${f.label}`])).code, 0, 'nothing stored');
        // Ignore: the write goes through.
        const ignored = await ks.k(['create', '-f', await ks.file(`i-${f.label}.yaml`, configMapYaml(`ignore-${f.label}`, `ignore-${f.label}`))]);
        assert.equal(ignored.code, 0, ignored.stderr);
        // The metrics: a failure to call the webhook is a calling_webhook_error refusal with upstream's
        // code for it (the answer's 500, else the validating dispatcher's 400); under Ignore it is
        // counted as not refused, and as failing open.
        const metrics = (await ks.raw.request({ path: '/metrics' })).text();
        const code = f.label === 'fivehundred' ? '500' : '400';
        const failed = { name: `fail.${f.label}.kplane.test`, type: 'validating', operation: 'CREATE' };
        const ignoring = { name: `ignore.${f.label}.kplane.test`, type: 'validating' };
        assert.ok(
          (metric(metrics, 'apiserver_admission_webhook_rejection_count', { ...failed, error_type: 'calling_webhook_error', rejection_code: code }) ?? 0) >= 1,
          metrics,
        );
        assert.ok((metric(metrics, 'apiserver_admission_webhook_request_total', { ...failed, code, rejected: 'true' }) ?? 0) >= 1);
        assert.ok((metric(metrics, 'apiserver_admission_webhook_request_total', { ...ignoring, code, rejected: 'false' }) ?? 0) >= 1);
        assert.equal(metric(metrics, 'apiserver_admission_webhook_rejection_count', ignoring), undefined, 'failing open is no rejection');
        assert.ok((metric(metrics, 'apiserver_admission_webhook_fail_open_count', ignoring) ?? 0) >= 1);
        // Unrelated writes are unaffected.
        await ks.ok(['create', 'configmap', `unrelated-${f.label}`, '--from-literal=a=1']);
        await ks.ok(['delete', 'validatingwebhookconfiguration', `fault-${f.label}`]);
      });
    }
  });
