// matchPolicy end to end: a CRD served in v1 (stored) and v2, webhooks whose rules name v1 only.
// With `matchPolicy: Equivalent` (the default) a write through v2 is sent to them as kube-apiserver
// sends it: the AdmissionReview's kind and resource in v1 with the object converted to v1, the
// request's own version in requestKind/requestResource; a mutating webhook's patch, made to the v1
// object, is in what kubectl gets back through v2; a validating webhook's refusal holds through v2.
// With `matchPolicy: Exact` a write through v2 is not sent. A ValidatingAdmissionPolicy (and its
// binding) for v1 refuses a v2 write the same way: its CEL sees the object in v1 and `request.kind`
// v1, `request.requestKind` v2; with Exact it lets the v2 write through. kubectl 1.33 makes the writes.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitServed } from '../support/crd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { admissionAnswer, jsonPatch, type ReviewServer, startReviewServer } from '../support/review-server.js';
import { quietFeatureGates, startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

interface Review {
  request: {
    uid: string;
    kind: { version: string; kind: string };
    resource: { version: string; resource: string };
    requestKind: { version: string };
    requestResource: { version: string };
    object: { apiVersion: string; metadata: { name: string } };
  };
}

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.match.example.com' },
  spec: {
    group: 'match.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: ['v1', 'v2'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
    })),
  },
};

describe('webhooks and matchPolicy (kubectl 1.33)', () => {
  let dir = '';
  let srv: TestServer;
  let hook: ReviewServer | undefined;
  let raw: RawClient;
  const seen: { path: string; review: Review }[] = [];
  let kube: (args: string[]) => ReturnType<typeof run>;
  let url = '';
  let caBundle = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-match-policy-'));
    hook = await startReviewServer<Review>((review, { path }) => {
      seen.push({ path, review });
      const name = review.request.object.metadata.name;
      if (path === '/mutate')
        return admissionAnswer(review.request.uid, {
          allowed: true,
          ...jsonPatch([{ op: 'add', path: '/metadata/labels', value: { 'seen-as': review.request.object.apiVersion.replace('/', '_') } }]),
        });
      if (path === '/validate' && name.startsWith('bad'))
        return admissionAnswer(review.request.uid, { allowed: false, status: { code: 403, message: `no ${name}` } });
      return admissionAnswer(review.request.uid, { allowed: true });
    });
    ({ url, caBundle } = hook);

    const featureGates = quietFeatureGates();
    featureGates.setFromMap({ MutatingAdmissionPolicy: true });
    srv = await startTestServer({ storage: 'memory', featureGates });
    raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    const env = { KUBECONFIG: srv.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    kube = (args) => run(tools.kubectl, args, { env });
    const created = await raw.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(CRD),
    });
    assert.equal(created.status, 201, created.text());
    await waitServed(raw, '/apis/match.example.com/v2/widgets');
    await waitServed(raw, '/apis/match.example.com/v1/widgets');
  });
  after(async () => {
    raw?.close();
    await srv?.stop();
    await hook?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * Both configurations for v1 widgets, with `matchPolicy` (absent: the default, Equivalent). The
   * validating webhook's matchConditions ask for the object in v1: they are evaluated on the object
   * in the version the webhook is called with, as upstream's dispatchers do.
   */
  async function install(matchPolicy: 'Equivalent' | 'Exact' | undefined): Promise<void> {
    const policy = matchPolicy ? `\n  matchPolicy: ${matchPolicy}` : '';
    const conditions = (kind: string): string =>
      kind === 'Validating'
        ? `\n  matchConditions: [{name: in-v1, expression: "object.apiVersion == 'match.example.com/v1' && request.kind.version == 'v1'"}]`
        : '';
    const one = (kind: string, name: string, path: string): string => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: ${name}}
webhooks:
- name: ${name}.match.example.com
  clientConfig: {url: "${url}${path}", caBundle: ${caBundle}}
  rules: [{operations: [CREATE], apiGroups: [match.example.com], apiVersions: [v1], resources: [widgets]}]
  admissionReviewVersions: [v1]
  sideEffects: None${policy}${conditions(kind)}
`;
    await apply(`hooks-${matchPolicy ?? 'default'}`, `${one('Mutating', 'stamp', '/mutate')}---\n${one('Validating', 'check', '/validate')}`);
  }

  /** A widget's manifest in a file, for `kubectl create -f`. */
  const widget = async (version: string, name: string, size = 1): Promise<string> => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, `apiVersion: match.example.com/${version}\nkind: Widget\nmetadata: {name: ${name}, namespace: default}\nspec: {size: ${size}}\n`);
    return file;
  };

  /** `kubectl apply` of the YAML, written to `<name>.yaml`. */
  const apply = async (name: string, yaml: string): Promise<void> => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, yaml);
    const r = await kube(['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
  };

  it('Equivalent (the default): a write through v2 reaches the v1 webhooks with the object in v1', async () => {
    await install(undefined);
    const cfg = JSON.parse((await kube(['get', 'validatingwebhookconfiguration', 'check', '-o', 'json'])).stdout) as { webhooks: { matchPolicy: string }[] };
    assert.equal(cfg.webhooks[0]!.matchPolicy, 'Equivalent');
    // Once the configurations are in effect, a v2 create comes back labelled by the mutating webhook.
    const label = await eventually(10_000, 'the webhooks in effect', async () => {
      seen.length = 0;
      const r = await kube(['create', '-f', await widget('v2', 'w-probe'), '--dry-run=server', '-o', 'jsonpath={.metadata.labels.seen-as}']);
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    });
    assert.equal(label, 'match.example.com_v1', 'the webhook saw the object in v1');
    seen.length = 0;
    const r = await kube(['create', '-f', await widget('v2', 'w-two'), '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { apiVersion: string; metadata: { labels?: Record<string, string> } };
    assert.equal(out.apiVersion, 'match.example.com/v2', 'answered in the version asked');
    assert.deepEqual(out.metadata.labels, { 'seen-as': 'match.example.com_v1' }, 'the patch made to the v1 object, in the v2 answer');
    const mutate = seen.find((s) => s.path === '/mutate')!.review.request;
    assert.deepEqual([mutate.kind.version, mutate.resource.version, mutate.requestKind.version, mutate.requestResource.version], ['v1', 'v1', 'v2', 'v2']);
    assert.equal(mutate.kind.kind, 'Widget');
    assert.equal(mutate.object.apiVersion, 'match.example.com/v1');
    const validate = seen.find((s) => s.path === '/validate')!.review.request;
    assert.equal(validate.object.apiVersion, 'match.example.com/v1');
    assert.equal(validate.requestKind.version, 'v2');
    // The refusal holds through v2; nothing stored.
    const refused = await kube(['create', '-f', await widget('v2', 'bad-two')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /admission webhook "check\.match\.example\.com" denied the request: no bad-two/);
    assert.notEqual((await kube(['get', 'widgets.v2.match.example.com', 'bad-two'])).code, 0);
    // A write through v1 is sent as it is.
    seen.length = 0;
    assert.equal((await kube(['create', '-f', await widget('v1', 'w-one')])).code, 0);
    assert.deepEqual(
      seen.map((s) => [s.path, s.review.request.kind.version, s.review.request.requestKind.version]),
      [
        ['/mutate', 'v1', 'v1'],
        ['/validate', 'v1', 'v1'],
      ],
    );
  });

  it('Exact: a write through v2 is not sent to webhooks for v1', async () => {
    await install('Exact');
    await eventually(10_000, 'Exact in effect', async () => {
      seen.length = 0;
      const r = await kube(['create', '-f', await widget('v2', 'bad-probe'), '--dry-run=server']);
      return r.code === 0 ? true : undefined;
    });
    seen.length = 0;
    const r = await kube(['create', '-f', await widget('v2', 'bad-exact'), '-o', 'jsonpath={.metadata.labels}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '', 'not mutated');
    assert.deepEqual(seen, [], 'no webhook called');
  });

  /** A policy for v1 widgets (binding matchResources v1 too) refusing a size over 4, saying which version it saw. */
  async function installPolicy(matchPolicy: 'Exact' | undefined): Promise<void> {
    const policy = matchPolicy ? `\n    matchPolicy: ${matchPolicy}` : '';
    const rules = '[{operations: [CREATE], apiGroups: [match.example.com], apiVersions: [v1], resources: [widgets]}]';
    await apply(
      `policy-${matchPolicy ?? 'default'}`,
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: small-widgets}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: ${rules}${policy}
  validations:
  - expression: object.spec.size < 5
    messageExpression: "'too big, seen as ' + object.apiVersion + ' (' + request.kind.version + '/' + request.resource.version + ', asked as ' + request.requestKind.version + '/' + request.requestResource.version + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: small-widgets}
spec:
  policyName: small-widgets
  validationActions: [Deny]
  matchResources:
    resourceRules: ${rules}${policy}
`,
    );
  }

  it('a ValidatingAdmissionPolicy for v1 (Equivalent, the default) refuses a v2 write, seeing it in v1; Exact lets it through', async () => {
    for (const c of ['mutatingwebhookconfiguration/stamp', 'validatingwebhookconfiguration/check']) await kube(['delete', c, '--ignore-not-found']);
    await installPolicy(undefined);
    const refused = await eventually(10_000, 'the policy in effect', async () => {
      const r = await kube(['create', '-f', await widget('v1', 'big-probe', 9), '--dry-run=server']);
      return r.code !== 0 ? r : undefined;
    });
    assert.match(refused.stderr, /denied request: too big, seen as match\.example\.com\/v1 \(v1\/v1, asked as v1\/v1\)/);
    const v2 = await kube(['create', '-f', await widget('v2', 'big-two', 9)]);
    assert.notEqual(v2.code, 0, 'refused through v2');
    assert.match(
      v2.stderr,
      /ValidatingAdmissionPolicy 'small-widgets' with binding 'small-widgets' denied request: too big, seen as match\.example\.com\/v1 \(v1\/v1, asked as v2\/v2\)/,
    );
    assert.notEqual((await kube(['get', 'widgets.v2.match.example.com', 'big-two'])).code, 0, 'nothing stored');
    assert.equal((await kube(['create', '-f', await widget('v2', 'small-two')])).code, 0, 'a small one passes through v2');

    await installPolicy('Exact');
    await eventually(10_000, 'Exact in effect', async () => {
      const r = await kube(['create', '-f', await widget('v2', 'big-probe', 9), '--dry-run=server']);
      return r.code === 0 ? true : undefined;
    });
    assert.equal((await kube(['create', '-f', await widget('v2', 'big-exact', 9)])).code, 0, 'Exact: not matched through v2');
    const v1 = await kube(['create', '-f', await widget('v1', 'big-one', 9)]);
    assert.notEqual(v1.code, 0, 'Exact: still refused through v1');
  });

  it('a MutatingAdmissionPolicy for v1 (Equivalent) mutates a v2 write in v1, the change in the v2 answer; Exact leaves it', async () => {
    await kube(['delete', 'validatingadmissionpolicybinding/small-widgets', 'validatingadmissionpolicy/small-widgets', '--ignore-not-found']);
    const install = async (matchPolicy: 'Exact' | undefined): Promise<void> => {
      const policy = matchPolicy ? `\n    matchPolicy: ${matchPolicy}` : '';
      await apply(
        `map-${matchPolicy ?? 'default'}`,
        `apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: stamp-version}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{operations: [CREATE], apiGroups: [match.example.com], apiVersions: [v1], resources: [widgets]}]${policy}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'mutated-as': object.apiVersion.replace('/', '_') + '.' + request.kind.version + '.' + request.requestKind.version}}]"
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicyBinding
metadata: {name: stamp-version}
spec:
  policyName: stamp-version
`,
      );
    };
    const label = (name: string, version: string, dryRun: boolean): Promise<string> =>
      widget(version, name).then(async (file) => {
        const r = await kube(['create', '-f', file, '-o', 'jsonpath={.apiVersion} {.metadata.labels.mutated-as}', ...(dryRun ? ['--dry-run=server'] : [])]);
        assert.equal(r.code, 0, r.stderr);
        return r.stdout;
      });
    await install(undefined);
    await eventually(10_000, 'the mutating policy in effect', async () => ((await label('m-probe', 'v1', true)).endsWith('.v1.v1') ? true : undefined));
    assert.equal(await label('m-two', 'v2', false), 'match.example.com/v2 match.example.com_v1.v1.v2', 'mutated in v1, answered in v2');
    const stored = await kube(['get', 'widgets.v1.match.example.com', 'm-two', '-o', 'jsonpath={.metadata.labels.mutated-as}']);
    assert.equal(stored.stdout, 'match.example.com_v1.v1.v2', 'the change stored');

    await install('Exact');
    await eventually(10_000, 'Exact in effect', async () => ((await label('m-probe', 'v2', true)) === 'match.example.com/v2 ' ? true : undefined));
    assert.equal(await label('m-one', 'v1', false), 'match.example.com/v1 match.example.com_v1.v1.v1', 'Exact: still mutated through v1');
  });
});
