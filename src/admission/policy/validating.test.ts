// The ValidatingAdmissionPolicy plugin on its own: decisions, validation actions (Audit annotation,
// Warn), failure policies, params by selector and parameterNotFoundAction, cost limits, variables.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { AdmissionAttributes, EquivalentResources } from '../interfaces.js';
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './types.js';
import { compilePolicies, validatingAdmissionPolicyPlugin, type ParamLookup } from './validating.js';

function attrs(object: KubeObject, sinks: { warnings: string[]; annotations: Map<string, string> }): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace: 'default',
    name: object.metadata?.name ?? '',
    object,
    dryRun: false,
    userInfo: { name: 'alice', groups: [] },
    warnings: { addWarning: (t) => sinks.warnings.push(t) },
    annotations: { addAnnotation: (k, v) => sinks.annotations.set(k, v) },
  };
}

const rules = { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] };

function policy(name: string, spec: ValidatingAdmissionPolicy['spec']): ValidatingAdmissionPolicy {
  return { metadata: { name }, spec: { failurePolicy: 'Fail', matchConstraints: rules, ...spec } };
}

function binding(name: string, policyName: string, actions: string[], paramRef?: Record<string, unknown>): ValidatingAdmissionPolicyBinding {
  return { metadata: { name }, spec: { policyName, validationActions: actions, ...(paramRef ? { paramRef } : {}) } };
}

async function run(
  policies: ValidatingAdmissionPolicy[],
  bindings: ValidatingAdmissionPolicyBinding[],
  object: KubeObject,
  params: ParamLookup = async () => ({ namespaced: true, items: [] }),
  equivalents?: EquivalentResources,
): Promise<{ error?: StatusError; warnings: string[]; annotations: Map<string, string> }> {
  const compiled = compilePolicies(policies, bindings);
  const plugin = validatingAdmissionPolicyPlugin({
    source: { policies: () => compiled },
    namespace: async () => ({ metadata: { name: 'default' } }),
    params,
    ...(equivalents ? { equivalents } : {}),
  });
  const sinks = { warnings: [] as string[], annotations: new Map<string, string>() };
  try {
    await plugin.validate!(attrs(object, sinks));
    return sinks;
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return { error: e, ...sinks };
  }
}

const cm = (name: string, data: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('ValidatingAdmissionPolicy plugin', () => {
  it('Audit adds the validation_failure annotation; the request passes', async () => {
    const r = await run([policy('p', { validations: [{ expression: 'false', message: 'never' }] })], [binding('b', 'p', ['Audit'])], cm('a'));
    assert.equal(r.error, undefined);
    assert.deepEqual(JSON.parse(r.annotations.get('validation.policy.admission.k8s.io/validation_failure')!), [
      { message: 'never', policy: 'p', binding: 'b', expressionIndex: 0, validationActions: ['Audit'] },
    ]);
  });

  it('auditAnnotations publish their value under the policy name', async () => {
    const r = await run(
      [policy('p', { auditAnnotations: [{ key: 'who', valueExpression: "'by ' + request.userInfo.username" }] })],
      [binding('b', 'p', ['Deny'])],
      cm('a'),
    );
    assert.equal(r.error, undefined);
    assert.equal(r.annotations.get('p/who'), 'by alice');
  });

  it('a policy without a binding does nothing; a deny without message names the expression', async () => {
    assert.equal((await run([policy('p', { validations: [{ expression: 'false' }] })], [], cm('a'))).error, undefined);
    const r = await run([policy('p', { validations: [{ expression: ' 1 > 2 ' }] })], [binding('b', 'p', ['Deny'])], cm('a'));
    assert.equal(r.error?.code, 422);
    assert.equal(r.error?.reason, 'Invalid');
    assert.equal(r.error?.message, `configmaps "a" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression: 1 > 2`);
  });

  it('an evaluation error follows the failure policy', async () => {
    const spec = { validations: [{ expression: "object.data.missing == 'x'" }] };
    const fail = await run([policy('p', spec)], [binding('b', 'p', ['Deny'])], cm('a'));
    assert.match(fail.error!.message, /denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing/);
    const ignore = await run([policy('p', { ...spec, failurePolicy: 'Ignore' })], [binding('b', 'p', ['Deny'])], cm('a'));
    assert.equal(ignore.error, undefined);
  });

  it('params by selector: every object is checked; none found with Allow lets the request through', async () => {
    const spec = {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'object.metadata.name != params.data.forbidden', messageExpression: "'name ' + params.data.forbidden + ' is taken'" }],
    };
    const lookup: ParamLookup = async (_k, ns, ref) => {
      assert.equal(ns, 'default');
      assert.ok(ref.selector);
      return { namespaced: true, items: [cm('p1', { forbidden: 'x' }), cm('p2', { forbidden: 'y' })] };
    };
    const r = await run(
      [policy('p', spec)],
      [binding('b', 'p', ['Deny'], { selector: { matchLabels: { a: 'b' } }, parameterNotFoundAction: 'Allow' })],
      cm('y'),
      lookup,
    );
    assert.match(r.error!.message, /denied request: name y is taken/);
    const none = await run([policy('p', spec)], [binding('b', 'p', ['Deny'], { name: 'gone', parameterNotFoundAction: 'Allow' })], cm('y'));
    assert.equal(none.error, undefined);
    const deny = await run([policy('p', spec)], [binding('b', 'p', ['Deny'], { name: 'gone', parameterNotFoundAction: 'Deny' })], cm('y'));
    assert.match(deny.error!.message, /failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction/);
  });

  it('variables are evaluated lazily, once; matchConditions gate the policy', async () => {
    const spec = {
      variables: [
        { name: 'n', expression: 'object.metadata.name' },
        { name: 'broken', expression: 'object.nosuch' },
      ],
      matchConditions: [{ name: 'only-a', expression: "object.metadata.name.startsWith('a')" }],
      validations: [{ expression: "variables.n != 'ab'", reason: 'Forbidden' }],
    };
    const r = await run([policy('p', spec)], [binding('b', 'p', ['Deny'])], cm('ab'));
    assert.equal(r.error?.code, 403);
    assert.equal((await run([policy('p', spec)], [binding('b', 'p', ['Deny'])], cm('bb'))).error, undefined, 'matchCondition false');
  });

  it('objects read as CEL values: numbers as ints at any depth, string-only parts as maps and lists', async () => {
    // The object is used as it is where it holds no numbers and copied where it does (toCEL): both
    // forms must read, compare, iterate and size alike.
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'mixed',
        labels: { app: 'web', tier: 'front' },
        annotations: { app: 'web', tier: 'front' },
        managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }],
      },
      data: { a: 'x', b: 'y' },
      spec: { replicas: 3, ratio: 0.5, ports: [{ name: 'http', port: 80 }, { name: 'dns' }], names: ['a', 'b'], empty: {} },
    } as unknown as KubeObject;
    const expressions = [
      'object.spec.replicas == 3 && type(object.spec.replicas) == int',
      'object.spec.ratio == 0.5 && type(object.spec.ratio) == double',
      'object.spec.ports[0].port + 1 == 81 && object.spec.ports[1].name == "dns" && !("port" in object.spec.ports[1])',
      'object.spec.ports.exists(p, "port" in p && p.port == 80) && object.spec.names.all(n, n in ["a", "b"])',
      "size(object.data) == 2 && 'a' in object.data && !('c' in object.data) && object.data.all(k, k in ['a', 'b'])",
      'object.metadata.labels == object.metadata.annotations && object.metadata.labels == {"app": "web", "tier": "front"}',
      'object.spec == object.spec && object.spec.empty == {} && size(object.spec.empty) == 0 && type(object.data) == map',
      "object.metadata.managedFields[0].manager == 'm' && 'fieldsV1' in object.metadata.managedFields[0]",
      "request.userInfo.username == 'alice' && request.operation == 'CREATE' && object.metadata.name == request.name",
    ];
    const r = await run([policy('p', { validations: expressions.map((expression) => ({ expression })) })], [binding('b', 'p', ['Warn'])], obj);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.warnings, []);
    // The object is not changed by being read.
    assert.equal((obj as unknown as { spec: { replicas: unknown } }).spec.replicas, 3);
  });

  it('has() on a field of an indexed element, as cel-go takes it', async () => {
    const p = policy('owner', {
      validations: [
        {
          expression: '!has(object.metadata.ownerReferences) || has(object.metadata.ownerReferences[0].controller)',
          message: 'the first owner says whether it is the controller',
        },
      ],
    });
    const owner = (ref: Record<string, unknown>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u', ...ref }] as never },
    });
    const b = binding('owner', 'owner', ['Deny']);
    assert.equal((await run([p], [b], owner({ controller: true }))).error, undefined);
    assert.match((await run([p], [b], owner({}))).error?.message ?? '', /denied request: the first owner says whether it is the controller/);
  });

  it('a comprehension past the per-call cost limit fails, not hangs', async () => {
    const spec = {
      validations: [
        {
          expression:
            '[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, true))))))',
        },
      ],
    };
    const r = await run([policy('p', spec)], [binding('b', 'p', ['Deny'])], cm('a'));
    assert.match(r.error!.message, /operation cancelled: actual cost limit exceeded|running out of cost budget/);
  });

  it('matchPolicy Equivalent: a policy for another version sees the object converted; a failed conversion is its configuration error', async () => {
    // ConfigMaps served in v1 and (here) v2; the policy names v2 only.
    const v2Rules = { matchPolicy: 'Equivalent', resourceRules: [{ apiGroups: [''], apiVersions: ['v2'], operations: ['CREATE'], resources: ['configmaps'] }] };
    let failing = false;
    const equivalents: EquivalentResources = {
      versionsOf: () => [
        { version: 'v1', kind: 'ConfigMap' },
        { version: 'v2', kind: 'ConfigMap' },
      ],
      convert: async (obj, _g, _r, _from, to) => {
        if (failing) throw new Error('the converter is down');
        return { ...obj, apiVersion: to };
      },
    };
    const seen = (failurePolicy: string): ValidatingAdmissionPolicy =>
      policy('v2-only', {
        failurePolicy,
        matchConstraints: v2Rules,
        validations: [
          { expression: 'false', messageExpression: "'saw ' + object.apiVersion + ' as ' + request.kind.version + ' of ' + request.requestKind.version" },
        ],
      });
    const r = await run([seen('Fail')], [binding('b', 'v2-only', ['Deny'])], cm('a'), undefined, equivalents);
    assert.match(r.error?.message ?? '', /denied request: saw v2 as v2 of v1$/);
    failing = true;
    const failed = await run([seen('Fail')], [binding('b', 'v2-only', ['Deny'])], cm('a'), undefined, equivalents);
    assert.equal(
      failed.error?.message,
      'configmaps "a" is forbidden: ValidatingAdmissionPolicy \'v2-only\' denied request: failed to configure policy: failed to convert object version: the converter is down',
    );
    assert.equal((await run([seen('Ignore')], [binding('b', 'v2-only', ['Deny'])], cm('a'), undefined, equivalents)).error, undefined);
    // Exact: not matched through v1 at all.
    const exact = { ...seen('Fail'), spec: { ...seen('Fail').spec, matchConstraints: { ...v2Rules, matchPolicy: 'Exact' } } };
    assert.equal((await run([exact], [binding('b', 'v2-only', ['Deny'])], cm('a'), undefined, equivalents)).error, undefined);
  });
});
