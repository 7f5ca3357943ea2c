// MutatingAdmissionPolicy end to end with kubectl 1.33: a policy and its binding applied
// (admissionregistration.k8s.io/v1beta1), a ConfigMap created afterwards carries the label an
// ApplyConfiguration adds and the field a JSONPatch sets; failurePolicy Fail refuses a write whose
// mutation fails with upstream's message (Ignore lets it through untouched); paramRef feeds the
// mutation; matchConditions skip it; bad policies are refused with 422 and their field paths; the
// same objects are served at v1alpha1.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { admissionAnswer, jsonPatch, startReviewServer } from '../support/review-server.js';
import { ensureTools, type RunResult } from '../support/tools.js';

ensureTools();

const AR = 'admissionregistration.k8s.io/v1beta1';

const configMap = (name: string, label: string, data: Record<string, string> = { a: '1' }): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { map: label } }, data });

/** A policy on ConfigMap creates of objects labelled `map: <label>` (through its binding). */
function policy(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: AR,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
      ...spec,
    },
  };
}

function binding(name: string, policyName: string, label: string, paramRef?: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: AR,
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName, matchResources: { objectSelector: { matchLabels: { map: label } } }, ...(paramRef ? { paramRef } : {}) },
  };
}

const kubectl = KUBECTLS[KUBECTLS.length - 1]!;

describe(`MutatingAdmissionPolicy with kubectl ${kubectl.name}`, () => {
  const ks = useKubectlServer(kubectl.bin, 'kplane-map-', { featureGates: { MutatingAdmissionPolicy: true } });

  /** Applies the documents, then waits until a server dry-run of `probe` shows `until` (the caches caught up). */
  async function install(label: string, docs: Record<string, unknown>[], probe: string, until: (out: RunResult) => boolean): Promise<void> {
    await ks.ok(['apply', '-f', await ks.file(`${label}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }))]);
    let last = '';
    await eventually(
      10_000,
      `policy ${label} active`,
      async () => {
        const r = await ks.k(['create', '--dry-run=server', '-o', 'json', '-f', await ks.file(`${label}-probe.json`, probe)]);
        last = r.stdout + r.stderr;
        return until(r) ? true : undefined;
      },
      { context: () => last },
    );
  }

  it('ApplyConfiguration adds a label, JSONPatch sets a field; a ConfigMap created afterwards has both', async () => {
    await install(
      'mutate',
      [
        policy('add-label', {
          mutations: [
            { patchType: 'ApplyConfiguration', applyConfiguration: { expression: "Object{metadata: Object.metadata{labels: {'mutated-by': 'map'}}}" } },
          ],
        }),
        binding('add-label-binding', 'add-label', 'mutate'),
        policy('set-field', {
          variables: [{ name: 'owner', expression: "'team-' + object.metadata.name" }],
          mutations: [
            {
              patchType: 'JSONPatch',
              jsonPatch: {
                expression:
                  "[JSONPatch{op: 'add', path: '/data/owner', value: variables.owner}, JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/owner'), value: 'blue'}]",
              },
            },
          ],
        }),
        binding('set-field-binding', 'set-field', 'mutate'),
      ],
      configMap('probe-mutate', 'mutate'),
      (r) => r.code === 0 && r.stdout.includes('"mutated-by"') && r.stdout.includes('"example.com/owner"'),
    );
    await ks.ok(['create', '-f', await ks.file('cm.json', configMap('cm', 'mutate'))]);
    const cm = JSON.parse(await ks.ok(['get', 'configmap', 'cm', '-o', 'json'])) as {
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    assert.deepEqual(cm.metadata.labels, { map: 'mutate', 'mutated-by': 'map', 'example.com/owner': 'blue' });
    assert.deepEqual(cm.data, { a: '1', owner: 'team-cm' });
    // Not selected by a binding: untouched.
    await ks.ok(['create', '-f', await ks.file('other.json', configMap('other', 'none'))]);
    const other = JSON.parse(await ks.ok(['get', 'configmap', 'other', '-o', 'json'])) as { metadata: { labels: Record<string, string> } };
    assert.deepEqual(other.metadata.labels, { map: 'none' });
    const table = await ks.ok(['get', 'mutatingadmissionpolicies']);
    assert.match(table, /NAME\s+MUTATIONS\s+PARAMKIND\s+AGE/);
    assert.match(table, /add-label\s+1\s+<unset>/);
    // Defaults as upstream's.
    const stored = JSON.parse(await ks.ok(['get', 'mutatingadmissionpolicy', 'add-label', '-o', 'json'])) as { spec: Record<string, unknown> };
    assert.equal(stored.spec.failurePolicy, 'Fail');
    assert.equal(stored.spec.reinvocationPolicy, 'Never');
    assert.equal((stored.spec.matchConstraints as Record<string, unknown>).matchPolicy, 'Equivalent');
    // The same object at v1alpha1.
    const alpha = JSON.parse(await ks.ok(['get', 'mutatingadmissionpolicies.v1alpha1.admissionregistration.k8s.io', 'add-label', '-o', 'json'])) as {
      apiVersion: string;
    };
    assert.equal(alpha.apiVersion, 'admissionregistration.k8s.io/v1alpha1');
  });

  it('failurePolicy Fail refuses a write whose mutation fails; Ignore lets it through', async () => {
    const failing = "Object{metadata: Object.metadata{labels: {'x': object.data.missing}}}";
    await install(
      'fail',
      [
        policy('fail-policy', { mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: failing } }] }),
        binding('fail-binding', 'fail-policy', 'fail'),
        policy('ignore-policy', { failurePolicy: 'Ignore', mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: failing } }] }),
        binding('ignore-binding', 'ignore-policy', 'ignore'),
      ],
      configMap('probe-fail', 'fail'),
      (r) => r.code !== 0,
    );
    const r = await ks.k(['create', '-f', await ks.file('f.json', configMap('f', 'fail'))]);
    assert.notEqual(r.code, 0);
    assert.ok(
      r.stderr.includes(`policy 'fail-policy' with binding 'fail-binding' denied request: expression '${failing}' resulted in error: no such key: missing`),
      r.stderr,
    );
    assert.equal((await ks.k(['get', 'configmap', 'f'])).code, 1);
    await ks.ok(['create', '-f', await ks.file('i.json', configMap('i', 'ignore'))]);
    const i = JSON.parse(await ks.ok(['get', 'configmap', 'i', '-o', 'json'])) as { metadata: { labels: Record<string, string> } };
    assert.deepEqual(i.metadata.labels, { map: 'ignore' });
  });

  it('paramRef feeds the mutation; matchConditions skip it', async () => {
    await ks.ok(['create', 'configmap', 'map-params', '--from-literal=tier=gold']);
    await install(
      'param',
      [
        policy('param-policy', {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConditions: [{ name: 'not-skipped', expression: "!object.metadata.name.startsWith('skip-')" }],
          mutations: [
            { patchType: 'ApplyConfiguration', applyConfiguration: { expression: "Object{metadata: Object.metadata{labels: {'tier': params.data.tier}}}" } },
          ],
        }),
        binding('param-binding', 'param-policy', 'param', { name: 'map-params', namespace: 'default', parameterNotFoundAction: 'Deny' }),
      ],
      configMap('probe-param', 'param'),
      (r) => r.code === 0 && r.stdout.includes('"tier": "gold"'),
    );
    await ks.ok(['create', '-f', await ks.file('p.json', configMap('p', 'param'))]);
    const p = JSON.parse(await ks.ok(['get', 'configmap', 'p', '-o', 'json'])) as { metadata: { labels: Record<string, string> } };
    assert.equal(p.metadata.labels.tier, 'gold');
    await ks.ok(['create', '-f', await ks.file('s.json', configMap('skip-me', 'param'))]);
    const s = JSON.parse(await ks.ok(['get', 'configmap', 'skip-me', '-o', 'json'])) as { metadata: { labels: Record<string, string> } };
    assert.deepEqual(s.metadata.labels, { map: 'param' });
  });

  it('a policy with reinvocationPolicy IfNeeded runs again after a mutating webhook changed the object (the chain reinvokes)', async () => {
    // The webhook labels every ConfigMap labelled `map: reinvoke` with `hooked: yes`.
    const hook = await startReviewServer<{ request: { uid: string; object?: { metadata?: { labels?: Record<string, string> } } } }>((review) =>
      admissionAnswer(
        review.request.uid,
        review.request.object?.metadata?.labels?.hooked
          ? { allowed: true }
          : { allowed: true, ...jsonPatch([{ op: 'add', path: '/metadata/labels/hooked', value: 'yes' }]) },
      ),
    );
    try {
      await ks.ok([
        'apply',
        '-f',
        await ks.file(
          'reinvoke-hook.json',
          JSON.stringify({
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'MutatingWebhookConfiguration',
            metadata: { name: 'reinvoke-hook' },
            webhooks: [
              {
                name: 'hook.reinvoke.example.com',
                admissionReviewVersions: ['v1'],
                sideEffects: 'None',
                clientConfig: { url: `${hook.url}/mutate`, caBundle: hook.caBundle },
                rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
                objectSelector: { matchLabels: { map: 'reinvoke' } },
              },
            ],
          }),
        ),
      ]);
      // The policy writes down whether it saw the webhook's label: only a second invocation can.
      const saw = (reinvocationPolicy: string) =>
        policy(`saw-${reinvocationPolicy.toLowerCase()}`, {
          reinvocationPolicy,
          mutations: [
            {
              patchType: 'ApplyConfiguration',
              applyConfiguration: {
                expression: `Object{metadata: Object.metadata{annotations: {'saw-hook-${reinvocationPolicy.toLowerCase()}': 'hooked' in object.metadata.labels ? 'yes' : 'no'}}}`,
              },
            },
          ],
        });
      await install(
        'reinvoke',
        [saw('IfNeeded'), binding('saw-ifneeded', 'saw-ifneeded', 'reinvoke'), saw('Never'), binding('saw-never', 'saw-never', 'reinvoke')],
        configMap('probe-reinvoke', 'reinvoke'),
        (r) => r.code === 0 && r.stdout.includes('"hooked": "yes"') && r.stdout.includes('saw-hook-never'),
      );
      await ks.ok(['create', '-f', await ks.file('r.json', configMap('r', 'reinvoke'))]);
      const r = JSON.parse(await ks.ok(['get', 'configmap', 'r', '-o', 'json'])) as {
        metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      };
      assert.equal(r.metadata.labels.hooked, 'yes');
      assert.equal(r.metadata.annotations['saw-hook-ifneeded'], 'yes', 'reinvoked after the webhook');
      assert.equal(r.metadata.annotations['saw-hook-never'], 'no', 'Never: run once, before the webhook');
    } finally {
      await ks.k(['delete', 'mutatingwebhookconfiguration', 'reinvoke-hook']);
      await hook.close();
    }
  });

  it('bad policies and bindings are refused with 422 and the field paths', async () => {
    const bad = policy('bad', {
      failurePolicy: 'Sometimes',
      reinvocationPolicy: 'Always',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['configmaps'] }] },
      mutations: [
        { patchType: 'Merge' },
        { patchType: 'JSONPatch', applyConfiguration: { expression: 'Object{}' } },
        { patchType: 'ApplyConfiguration', applyConfiguration: { expression: "[JSONPatch{op: 'add', path: '/a', value: 1}]" } },
        { patchType: 'JSONPatch', jsonPatch: { expression: 'object.metadata.name ==' } },
      ],
    });
    const r = await ks.k(['create', '--validate=false', '-f', await ks.file('bad.json', JSON.stringify(bad))]);
    assert.notEqual(r.code, 0);
    for (const text of [
      'The MutatingAdmissionPolicy "bad" is invalid',
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      'spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
      'spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"',
      'spec.mutations[0].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"',
      'spec.mutations[1].jsonPatch: Required value: must be specified when patchType is JSONPatch',
      'spec.mutations[1].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch',
      `spec.mutations[2].applyConfiguration.expression: Invalid value: "[JSONPatch{op: 'add', path: '/a', value: 1}]": must evaluate to Object`,
      'spec.mutations[3].jsonPatch.expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:',
    ]) {
      assert.ok(r.stderr.includes(text), `missing ${text}\n${r.stderr}`);
    }
    const empty = await ks.k(['create', '--validate=false', '-f', await ks.file('empty.json', JSON.stringify(policy('empty', {})))]);
    assert.match(empty.stderr, /spec.mutations: Required value: mutations must contain at least one item/);
    const b = await ks.k([
      'create',
      '--validate=false',
      '-f',
      await ks.file(
        'bad-binding.json',
        JSON.stringify({ apiVersion: AR, kind: 'MutatingAdmissionPolicyBinding', metadata: { name: 'bb' }, spec: { paramRef: { name: 'a', selector: {} } } }),
      ),
    ]);
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, /spec.policyName: Required value/);
    assert.match(b.stderr, /spec.paramRef.name: Forbidden: name and selector are mutually exclusive/);
    assert.match(b.stderr, /spec.paramRef.parameterNotFoundAction: Required value/);
  });
});

describe('MutatingAdmissionPolicy off by default (its feature gate, as upstream)', () => {
  const ks = useKubectlServer(kubectl.bin, 'kplane-map-off-');

  it('serves neither version nor lists the kinds in discovery; kubectl cannot create one', async () => {
    for (const v of ['v1beta1', 'v1alpha1']) {
      const r = await ks.raw.request({ path: `/apis/admissionregistration.k8s.io/${v}/mutatingadmissionpolicies` });
      assert.equal(r.status, 404, `${v}: ${r.text()}`);
    }
    const v1 = await ks.raw.request({ path: '/apis/admissionregistration.k8s.io/v1' });
    assert.equal(v1.status, 200);
    const group = (await ks.raw.request({ path: '/apis/admissionregistration.k8s.io' })).json<{ versions: { version: string }[] }>();
    assert.deepEqual(
      group.versions.map((x) => x.version),
      ['v1'],
    );
    const r = await ks.k([
      'create',
      '-f',
      await ks.file('off.json', JSON.stringify(policy('off', { mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: '[]' } }] }))),
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no matches for kind "MutatingAdmissionPolicy" in version "admissionregistration.k8s.io\/v1beta1"/);
  });
});
