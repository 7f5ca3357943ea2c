// status.typeChecking of ValidatingAdmissionPolicies, as kube-controller-manager's policy status
// controller writes it: expressions that do not type-check against the schema of a matched kind
// (a built-in ConfigMap, a CRD with a schema) get upstream's warning per expression, and
// status.observedGeneration follows the spec; kubectl 1.33 `get vap -o yaml` shows both.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { eventually } from '../support/eventually.js';
import { useKubectlServer } from '../support/kubectl.js';
import { ensureTools, tools } from '../support/tools.js';

ensureTools();

interface PolicyStatus {
  metadata: { generation: number };
  status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } };
}

function policy(name: string, rule: { group: string; version: string; resource: string }, validations: Record<string, string>[]): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [rule.group], apiVersions: [rule.version], operations: ['CREATE'], resources: [rule.resource] }] },
      validations,
    },
  });
}

const CRD = JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.tc.example.com' },
  spec: {
    group: 'tc.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      },
    ],
  },
});

describe('ValidatingAdmissionPolicy status.typeChecking with kubectl 1.33', { timeout: 90_000 }, () => {
  const ks = useKubectlServer(tools.kubectl, 'kplane-vap-tc-');

  const statusOf = async (name: string, generation: number): Promise<PolicyStatus> =>
    eventually(15_000, `${name} checked at generation ${generation}`, async () => {
      const p = parse(await ks.ok(['get', 'validatingadmissionpolicy', name, '-o', 'yaml'])) as PolicyStatus;
      return p.status?.observedGeneration === generation ? p : undefined;
    });

  it('warns about undefined fields of a ConfigMap, per expression', async () => {
    const doc = policy('cm-typos', { group: '', version: 'v1', resource: 'configmaps' }, [
      { expression: 'object.datta.size() < 3' },
      { expression: "has(object.data) && object.data.all(k, k != 'x')", messageExpression: "'name: ' + object.metadata.namee" },
    ]);
    await ks.ok(['apply', '-f', await ks.file('cm.json', doc)]);
    const p = await statusOf('cm-typos', 1);
    assert.deepEqual(p.status?.typeChecking?.expressionWarnings, [
      {
        fieldRef: 'spec.validations[0].expression',
        warning: "/v1, Kind=ConfigMap: ERROR: <input>:1:7: undefined field 'datta'\n | object.datta.size() < 3\n | ......^\n",
      },
      {
        fieldRef: 'spec.validations[1].messageExpression',
        warning: "/v1, Kind=ConfigMap: ERROR: <input>:1:27: undefined field 'namee'\n | 'name: ' + object.metadata.namee\n | ..........................^\n",
      },
    ]);
    // kubectl shows it as YAML.
    assert.match(await ks.ok(['get', 'validatingadmissionpolicy', 'cm-typos', '-o', 'yaml']), /fieldRef: spec\.validations\[0\]\.expression\n\s+warning: \|/);

    // Fixed: the next generation has no warnings (has() on a field of an indexed element type-checks, as in cel-go).
    const fixed = policy('cm-typos', { group: '', version: 'v1', resource: 'configmaps' }, [
      { expression: 'size(object.data) < 3' },
      { expression: '!has(object.metadata.ownerReferences) || has(object.metadata.ownerReferences[0].controller)' },
    ]);
    await ks.ok(['apply', '-f', await ks.file('cm2.json', fixed)]);
    const p2 = await statusOf('cm-typos', 2);
    assert.deepEqual(p2.status?.typeChecking, {});
  });

  it("type-checks inside two-variable comprehensions and optional entries (kube's newer CEL)", async () => {
    const doc = policy('cm-newcel', { group: '', version: 'v1', resource: 'configmaps' }, [
      { expression: "object.data.all(k, v, v.size() < 10 || k.startsWith('long-'))" },
      { expression: '[?object.metadata.?labels.?team, ?object.metadata.?annotations.?owner].size() > 0' },
      { expression: 'object.data.exists(k, v, object.metadata.nmae == k)' },
    ]);
    await ks.ok(['apply', '-f', await ks.file('cm-newcel.json', doc)]);
    const p = await statusOf('cm-newcel', 1);
    assert.deepEqual(p.status?.typeChecking?.expressionWarnings, [
      {
        fieldRef: 'spec.validations[2].expression',
        warning:
          "/v1, Kind=ConfigMap: ERROR: <input>:1:41: undefined field 'nmae'\n | object.data.exists(k, v, object.metadata.nmae == k)\n | ........................................^\n",
      },
    ]);
  });

  it('checks against a CRD schema; wildcard rules are not checked', async () => {
    await ks.ok(['apply', '-f', await ks.file('crd.json', CRD)]);
    await ks.ok(['wait', '--for=condition=Established', '--timeout=20s', 'crd/widgets.tc.example.com']);
    const doc = policy('widget-size', { group: 'tc.example.com', version: 'v1', resource: 'widgets' }, [
      { expression: 'object.spec.size < 10' },
      { expression: "object.spec.size < '10'" },
      { expression: 'object.spec.colour == "red"' },
    ]);
    await ks.ok(['apply', '-f', await ks.file('w.json', doc)]);
    const p = await statusOf('widget-size', 1);
    const warnings = p.status?.typeChecking?.expressionWarnings ?? [];
    assert.deepEqual(
      warnings.map((w) => w.fieldRef),
      ['spec.validations[1].expression', 'spec.validations[2].expression'],
    );
    assert.match(
      warnings[0]!.warning,
      /^tc\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:18: found no matching overload for '_<_' applied to '\(int, string\)'/,
    );
    assert.match(warnings[1]!.warning, /^tc\.example\.com\/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'colour'/);

    const wild = JSON.stringify({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'wild' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['CREATE'], resources: ['*'] }] },
        validations: [{ expression: 'object.anything == 1' }],
      },
    });
    await ks.ok(['apply', '-f', await ks.file('wild.json', wild)]);
    assert.deepEqual((await statusOf('wild', 1)).status?.typeChecking, {});
  });
});
