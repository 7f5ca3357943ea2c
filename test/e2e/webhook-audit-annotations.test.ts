// Admission webhooks in the audit log, end to end: kubectl 1.33 creates ConfigMaps on a server with
// an audit policy, a mutating webhook (a TypeScript server on loopback with its own CA) patches them
// and answers audit annotations, and a validating webhook that cannot be reached fails open. The
// log's events carry what kube-apiserver writes: the webhook's annotations under its name, the
// mutation and (at Request level and above only) its patch, the failed-open webhook; and
// /metrics counts the failing open in apiserver_admission_webhook_fail_open_count.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { admissionAnswer, jsonPatch, type ReviewServer, startReviewServer } from '../support/review-server.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: RequestResponse
    namespaces: ["hooks-rr"]
    resources: [{group: "", resources: ["configmaps"]}]
  - level: Metadata
    namespaces: ["hooks-md"]
    resources: [{group: "", resources: ["configmaps"]}]
  - level: None
`;

interface AuditEvent {
  stage: string;
  verb: string;
  level: string;
  objectRef?: { namespace?: string; name?: string; resource?: string };
  annotations?: Record<string, string>;
}

describe('admission webhooks in the audit log (kubectl 1.33)', () => {
  let dir = '';
  let srv: TestServer;
  let hook: ReviewServer | undefined;
  let logPath = '';
  let kube: (args: string[]) => ReturnType<typeof run>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-webhook-audit-'));
    hook = await startReviewServer<{ request: { uid: string } }>((review) =>
      admissionAnswer(review.request.uid, {
        allowed: true,
        ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { stamped: 'yes' } }]),
        // One key upstream records, one it refuses (a second slash).
        auditAnnotations: { 'stamped-by': 'the stamp webhook', 'not/recorded': 'x' },
      }),
    );
    const { url, caBundle } = hook;

    logPath = join(dir, 'audit.log');
    const policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, POLICY);
    srv = await startTestServer({ audit: { policyFile, log: { path: logPath } } });
    const env = { KUBECONFIG: srv.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    kube = (args) => run(tools.kubectl, args, { env });
    for (const ns of ['hooks-rr', 'hooks-md']) assert.equal((await kube(['create', 'namespace', ns])).code, 0);

    const rules = `  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [configmaps]
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [hooks-rr, hooks-md]}]
  admissionReviewVersions: [v1]
  sideEffects: None
  timeoutSeconds: 5`;
    const configs = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: stamp}
webhooks:
- name: stamp.example.com
  clientConfig: {url: "${url}/mutate", caBundle: ${caBundle}}
${rules}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: gone}
webhooks:
- name: gone.example.com
  failurePolicy: Ignore
  clientConfig: {url: "https://127.0.0.1:1/validate", caBundle: ${caBundle}}
${rules}
`;
    const file = join(dir, 'webhooks.yaml');
    await writeFile(file, configs);
    const applied = await kube(['apply', '-f', file]);
    assert.equal(applied.code, 0, applied.stderr);
    // Active once a create comes back stamped.
    await eventually(10_000, 'the webhooks active', async () => {
      const r = await kube(['create', 'configmap', 'probe', '-n', 'hooks-md', '--dry-run=server', '-o', 'jsonpath={.metadata.labels.stamped}']);
      return r.code === 0 && r.stdout === 'yes' ? true : undefined;
    });
  });
  after(async () => {
    await srv?.stop();
    await hook?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The ResponseComplete event of the create of `namespace/name`. */
  const created = (namespace: string, name: string): Promise<AuditEvent> =>
    eventually(5000, `the audit event of ${namespace}/${name}`, async () =>
      readFileSync(logPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEvent)
        .find((e) => e.verb === 'create' && e.stage === 'ResponseComplete' && e.objectRef?.namespace === namespace && e.objectRef.name === name),
    );

  it('RequestResponse: the webhook annotations, the mutation with its patch, the webhook that failed open', async () => {
    const r = await kube(['create', 'configmap', 'one', '-n', 'hooks-rr', '--from-literal=a=1', '-o', 'jsonpath={.metadata.labels.stamped}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'yes', 'the patch was applied');
    const e = await created('hooks-rr', 'one');
    assert.equal(e.level, 'RequestResponse');
    const mine = Object.fromEntries(Object.entries(e.annotations ?? {}).filter(([k]) => !k.startsWith('authorization.k8s.io/')));
    assert.deepEqual(mine, {
      'stamp.example.com/stamped-by': 'the stamp webhook',
      'mutation.webhook.admission.k8s.io/round_0_index_0': '{"configuration":"stamp","webhook":"stamp.example.com","mutated":true}',
      'patch.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"stamp","webhook":"stamp.example.com","patch":[{"op":"add","path":"/metadata/labels","value":{"stamped":"yes"}}],"patchType":"JSONPatch"}',
      'failed-open.validating.webhook.admission.k8s.io/round_0_index_0': 'gone.example.com',
    });
  });

  it('Metadata: the same, without the patch (kept for Request level and above)', async () => {
    assert.equal((await kube(['create', 'configmap', 'two', '-n', 'hooks-md', '--from-literal=a=1'])).code, 0);
    const e = await created('hooks-md', 'two');
    assert.equal(e.level, 'Metadata');
    const keys = Object.keys(e.annotations ?? {})
      .filter((k) => !k.startsWith('authorization.k8s.io/'))
      .sort();
    assert.deepEqual(keys, [
      'failed-open.validating.webhook.admission.k8s.io/round_0_index_0',
      'mutation.webhook.admission.k8s.io/round_0_index_0',
      'stamp.example.com/stamped-by',
    ]);
  });

  it('/metrics counts the webhook that failed open', async () => {
    const raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    try {
      const text = (await raw.request({ path: '/metrics' })).text();
      const line = text.split('\n').find((l) => l.startsWith('apiserver_admission_webhook_fail_open_count{name="gone.example.com",type="validating"}'));
      assert.ok(
        line,
        text
          .split('\n')
          .filter((l) => l.includes('fail_open'))
          .join('\n'),
      );
      // The probe's dry runs and the two creates: at least three.
      assert.ok(Number(line.split(' ').at(-1)) >= 3, line);
    } finally {
      raw.close();
    }
  });
});
