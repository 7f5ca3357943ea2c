// @kubernetes/client-node (v1.x) against the admission extension points: webhook configurations
// and ValidatingAdmissionPolicies created through AdmissionregistrationV1Api; a ConfigMap create
// mutated by a webhook (the label in the returned object), refused by a webhook and by a policy
// (ApiException with the Status: code, reason and message), and the policy's status.typeChecking
// read back as the typed model.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';

function statusOf(e: unknown): { code: number; body: { reason?: string; message?: string; code?: number } } {
  assert.ok(e instanceof k8s.ApiException, `expected ApiException, got ${String(e)}`);
  const raw: unknown = (e as k8s.ApiException<unknown>).body;
  return { code: (e as k8s.ApiException<unknown>).code, body: (typeof raw === 'string' ? JSON.parse(raw) : raw) as { reason?: string; message?: string } };
}

async function refused(p: Promise<unknown>): Promise<{ code: number; body: { reason?: string; message?: string; code?: number } }> {
  try {
    await p;
  } catch (e) {
    return statusOf(e);
  }
  assert.fail('expected the call to be refused');
}

const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] };

describe('client-node against admission webhooks and ValidatingAdmissionPolicy', { concurrency: false, timeout: 90_000 }, () => {
  let server: TestServer;
  let hook: Server;
  let hookURL = '';
  let core: k8s.CoreV1Api;
  let admission: k8s.AdmissionregistrationV1Api;
  const ca = createCertificateAuthority({ commonName: 'client-node-hooks' });
  const caBundle = Buffer.from(ca.certPem).toString('base64');

  before(async () => {
    const cert = issueCertificate(ca, { commonName: 'hook', hosts: ['127.0.0.1'], usage: 'server' });
    hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string; object?: { metadata?: { name?: string } } } };
        const name = review.request.object?.metadata?.name ?? '';
        const response = req.url?.startsWith('/mutate')
          ? {
              uid: review.request.uid,
              allowed: true,
              patchType: 'JSONPatch',
              patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels/mutated', value: 'by-webhook' }])).toString('base64'),
            }
          : name.startsWith('hooked-bad')
            ? { uid: review.request.uid, allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no bad names' } }
            : { uid: review.request.uid, allowed: true };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookURL = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    server = await startTestServer({ storage: 'memory' });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  });
  after(async () => {
    await server?.stop();
    hook?.closeAllConnections();
    await new Promise((r) => hook?.close(r));
  });

  const cm = (name: string, labels: Record<string, string>): k8s.V1ConfigMap => ({ metadata: { name, labels }, data: { a: '1' } });

  it('webhook configurations: a create is mutated, and refused with the webhook message', async () => {
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'cn-mutate' },
        webhooks: [
          {
            name: 'mutate.cn.example.com',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: `${hookURL}/mutate`, caBundle },
            rules: [rule],
            objectSelector: { matchLabels: { hook: 'cn' } },
          },
        ],
      },
    });
    const created = await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'cn-validate' },
        webhooks: [
          {
            name: 'validate.cn.example.com',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url: `${hookURL}/validate`, caBundle },
            rules: [rule],
            objectSelector: { matchLabels: { hook: 'cn' } },
          },
        ],
      },
    });
    assert.equal(created.webhooks?.[0]?.failurePolicy, 'Fail');
    assert.equal(created.webhooks?.[0]?.timeoutSeconds, 10);

    const out = await eventually(10_000, 'the mutating webhook active', async () => {
      const o = await core.createNamespacedConfigMap({ namespace: 'default', body: cm(`hooked-${Date.now()}`, { hook: 'cn' }) });
      return o.metadata?.labels?.mutated === 'by-webhook' ? o : undefined;
    });
    assert.equal(out.metadata?.labels?.hook, 'cn');

    const r = await eventually(10_000, 'the validating webhook refuses', async () => {
      const s = await refused(core.createNamespacedConfigMap({ namespace: 'default', body: cm('hooked-bad', { hook: 'cn' }) })).catch(() => undefined);
      return s;
    });
    assert.equal(r.code, 403);
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(r.body.message, 'admission webhook "validate.cn.example.com" denied the request: no bad names');
  });

  it('a ValidatingAdmissionPolicy: a create refused with its message; status.typeChecking in the typed model', async () => {
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: 'cn-policy' },
        spec: {
          matchConstraints: { resourceRules: [rule] },
          validations: [
            { expression: "!object.metadata.name.startsWith('policy-bad')", messageExpression: "'name ' + object.metadata.name + ' is not allowed'" },
            { expression: 'object.dat == null' },
          ],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: 'cn-policy' },
        spec: { policyName: 'cn-policy', validationActions: ['Deny'], matchResources: { objectSelector: { matchLabels: { policy: 'cn' } } } },
      },
    });
    const r = await eventually(10_000, 'the policy refuses', async () =>
      refused(core.createNamespacedConfigMap({ namespace: 'default', body: cm('policy-bad', { policy: 'cn' }) })).catch(() => undefined),
    );
    assert.equal(r.code, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.match(r.body.message ?? '', /ValidatingAdmissionPolicy 'cn-policy' with binding 'cn-policy' denied request: name policy-bad is not allowed/);

    const checked = await eventually(10_000, 'the policy type-checked', async () => {
      const p = await admission.readValidatingAdmissionPolicyStatus({ name: 'cn-policy' });
      return p.status?.observedGeneration === 1 ? p : undefined;
    });
    assert.deepEqual(
      checked.status?.typeChecking?.expressionWarnings?.map((w) => [w.fieldRef, w.warning.split('\n')[0]]),
      [['spec.validations[1].expression', "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'dat'"]],
    );
  });
});
