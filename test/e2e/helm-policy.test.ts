// helm 4 against a ValidatingAdmissionPolicy: a chart holding two ConfigMaps, one of which a policy
// refuses (a `tier: forbidden` label): `helm install` fails showing the policy's message, the
// refused object is not stored, and a chart the policy accepts installs.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

const CHART: Record<string, string> = {
  'Chart.yaml': 'apiVersion: v2\nname: tiers\ndescription: kplane e2e chart\ntype: application\nversion: 0.1.0\n',
  'values.yaml': 'tier: forbidden\n',
  'templates/configmaps.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-plain
data: {a: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-tiered
  labels: {tier: {{ .Values.tier | quote }}}
data: {a: "1"}
`,
};

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-forbidden-tier}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "!has(object.metadata.labels) || !('tier' in object.metadata.labels) || object.metadata.labels['tier'] != 'forbidden'"
    messageExpression: "'configmap ' + object.metadata.name + ' may not be in the forbidden tier'"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-forbidden-tier}
spec:
  policyName: no-forbidden-tier
  validationActions: [Deny]
`;

describe('helm 4 installing a chart a ValidatingAdmissionPolicy partly refuses', { concurrency: false, timeout: 90_000 }, () => {
  let server: TestServer;
  let dir = '';
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    dir = await mkdtemp(join(tmpdir(), 'kplane-helm-policy-'));
    for (const [name, text] of Object.entries(CHART)) {
      await mkdir(join(dir, 'tiers', name, '..'), { recursive: true });
      await writeFile(join(dir, 'tiers', name), text);
    }
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    env = {
      KUBECONFIG: server.kubeconfig,
      HOME: dir,
      KUBECACHEDIR: join(dir, 'kcache'),
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    };
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: readonly string[]) => run(tools.kubectl, args, { env, timeoutMs: 30_000 });
  const helm = (args: readonly string[]) => run(tools.helm, args, { env, timeoutMs: 40_000 });

  it('fails with the policy message; the refused ConfigMap is not stored', async () => {
    const applied = await kubectl(['apply', '-f', join(dir, 'policy.yaml')]);
    assert.equal(applied.code, 0, applied.stderr);
    // The policy is active once a probe (a server-side dry run) is refused.
    await eventually(10_000, 'the policy refuses a forbidden tier', async () => {
      const r = await run(tools.kubectl, ['create', '-f', '-', '--dry-run=server'], {
        env,
        timeoutMs: 30_000,
        input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: probe, labels: {tier: forbidden}}\n',
      });
      return r.code !== 0 ? true : undefined;
    });

    const r = await helm(['install', 'demo', join(dir, 'tiers'), '-n', 'default', '--timeout', '30s']);
    assert.notEqual(r.code, 0, `helm install succeeded:\n${r.stdout}`);
    assert.match(
      r.stderr,
      /INSTALLATION FAILED[\s\S]*ValidatingAdmissionPolicy 'no-forbidden-tier' with binding 'no-forbidden-tier' denied request: configmap demo-tiered may not be in the forbidden tier/,
    );
    const tiered = await kubectl(['get', 'configmap', 'demo-tiered']);
    assert.notEqual(tiered.code, 0, 'the refused ConfigMap is not stored');

    // The same chart in an allowed tier installs.
    const ok = await helm(['install', 'other', join(dir, 'tiers'), '-n', 'default', '--set', 'tier=gold', '--timeout', '30s']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await kubectl(['get', 'configmap', 'other-tiered', '-o', 'jsonpath={.metadata.labels.tier}'])).stdout, 'gold');
  });
});
