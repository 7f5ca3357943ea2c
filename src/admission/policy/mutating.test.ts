// The MutatingAdmissionPolicy plugin on its own: what the e2e test (test/e2e/mutating-admission-policy)
// does not reach cheaply: the synchronous answer without policies, structured-merge of list-maps,
// atomic fields refused, a failed JSONPatch `test`, initializer type names, reinvocation, and the
// construction rewrite leaving strings alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { typeOf } from '../../apimachinery/apply/index.js';
import { StatusError } from '../../apimachinery/errors.js';
import type { OpenAPISchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { rewriteConstructions } from '../cel/construct.js';
import { compileExpression } from '../cel/compile.js';
import type { CheckAuthorizer } from '../cel/authz.js';
import { AdmissionChain } from '../chain.js';
import type { AdmissionAttributes } from '../interfaces.js';
import { compileMutatingPolicies, mutatingAdmissionPolicyPlugin, type MutationObserver } from './mutating.js';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, Mutation } from './mutating-types.js';

const schema: OpenAPISchema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
    spec: {
      type: 'object',
      properties: {
        args: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
        },
      },
    },
  },
};
const type = typeOf(schema, {});

const obj = (): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Thing',
  metadata: { name: 'x', labels: { app: 'a' } },
  spec: { args: ['one'], ports: [{ name: 'http', port: 80 }] },
});

function attrs(object: KubeObject): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: 'example.com', version: 'v1', resource: 'things' },
    subresource: '',
    kind: { group: 'example.com', version: 'v1', kind: 'Thing' },
    namespace: '',
    name: 'x',
    object,
    dryRun: false,
    userInfo: { name: 'alice', groups: [] },
  };
}

function policy(name: string, mutations: Mutation[], extra: Partial<MutatingAdmissionPolicy['spec']> = {}): MutatingAdmissionPolicy {
  return {
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      matchConstraints: { resourceRules: [{ apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['things'] }] },
      mutations,
      ...extra,
    },
  };
}

const apply = (expression: string): Mutation => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const patch = (expression: string): Mutation => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const bind = (p: string): MutatingAdmissionPolicyBinding => ({ metadata: { name: `${p}-binding` }, spec: { policyName: p } });

async function run(
  policies: MutatingAdmissionPolicy[],
  object = obj(),
  observe?: MutationObserver,
  authorizer?: CheckAuthorizer,
): Promise<{ object: KubeObject; error?: StatusError }> {
  const compiled = compileMutatingPolicies(
    policies,
    policies.map((p) => bind(p.metadata!.name!)),
  );
  const plugin = mutatingAdmissionPolicyPlugin({
    source: { policies: () => compiled },
    namespace: async () => undefined,
    params: async () => ({ namespaced: false, items: [] }),
    type: () => type,
    ...(observe ? { observe } : {}),
    ...(authorizer ? { authorizer } : {}),
  });
  try {
    // Through a chain: reinvocation is its second pass.
    await new AdmissionChain([plugin]).admit(attrs(object));
    return { object };
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return { object, error: e };
  }
}

describe('MutatingAdmissionPolicy plugin', () => {
  it('answers at once (no promise) when no policy is bound', () => {
    const plugin = mutatingAdmissionPolicyPlugin({
      source: { policies: () => [] },
      namespace: async () => undefined,
      params: async () => ({ namespaced: false, items: [] }),
      type: () => type,
    });
    assert.equal(plugin.admit!(attrs(obj())), undefined);
  });

  it('an apply configuration merges list-map items by key, as server-side apply', async () => {
    const r = await run([policy('p', [apply("Object{spec: Object.spec{ports: [Object.spec.ports{name: 'metrics', port: 9090}]}}")])]);
    assert.equal(r.error, undefined);
    assert.deepEqual((r.object.spec as { ports: unknown[] }).ports, [
      { name: 'http', port: 80 },
      { name: 'metrics', port: 9090 },
    ]);
  });

  it('an optional field (`?f: o`) is set only when the optional has a value; two-variable comprehensions build maps', async () => {
    const r = await run([
      policy('p', [
        apply(
          "Object{metadata: Object.metadata{?labels: object.metadata.?labels.optMap(l, l.transformMap(k, v, v + '-seen')), ?annotations: optional.none()}}",
        ),
      ]),
    ]);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.object.metadata, { name: 'x', labels: { app: 'a-seen' } });
  });

  it('an apply configuration that sets an atomic list is refused', async () => {
    const r = await run([policy('p', [apply("Object{spec: Object.spec{args: ['two']}}")])]);
    assert.equal(r.error?.code, 403);
    assert.equal(
      r.error?.message,
      "policy 'p' with binding 'p-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.args",
    );
  });

  it('a nested initializer must be named after its field', async () => {
    const r = await run([policy('p', [apply("Object{metadata: Object.spec{labels: {'a': 'b'}}}")])]);
    assert.match(r.error!.message, /denied request: type mismatch: expected type name Object.metadata for field metadata of Object, but got Object.spec/);
  });

  it('a JSONPatch whose test fails leaves the object as it was; the others apply in order', async () => {
    const r = await run([
      policy('a', [patch("[JSONPatch{op: 'test', path: '/metadata/name', value: 'y'}, JSONPatch{op: 'add', path: '/metadata/labels/no', value: 'no'}]")]),
      policy('b', [patch("[JSONPatch{op: 'replace', path: '/spec/args/0', value: 'three'}]")]),
    ]);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.object.metadata?.labels, { app: 'a' });
    assert.deepEqual((r.object.spec as { args: string[] }).args, ['three']);
  });

  it('a JSONPatch expression may give an empty list (no element type): nothing changes', async () => {
    const r = await run([policy('p', [patch("object.metadata.name == 'x' ? [] : [JSONPatch{op: 'remove', path: '/spec'}]"), patch('[]')])]);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.object, obj());
  });

  it('reinvocationPolicy IfNeeded runs a policy again after a later one changed the object', async () => {
    const seen = apply("Object{metadata: Object.metadata{labels: {'seen': 'b' in object.metadata.labels ? 'yes' : 'no'}}}");
    const later = policy('b', [apply("Object{metadata: Object.metadata{labels: {'b': 'set'}}}")]);
    const never = await run([policy('a', [seen]), later]);
    assert.equal(never.object.metadata?.labels?.seen, 'no');
    const ifNeeded = await run([policy('a', [seen], { reinvocationPolicy: 'IfNeeded' }), later]);
    assert.equal(ifNeeded.object.metadata?.labels?.seen, 'yes');
  });

  it('each mutation is observed for the check metrics with its error type', async () => {
    const seen: string[] = [];
    await run(
      [
        policy('a', [apply("Object{metadata: Object.metadata{labels: {'x': 'y'}}}"), apply('Object{metadata: object.nosuch}')], { failurePolicy: 'Ignore' }),
        policy('b', [apply('Object{')], { failurePolicy: 'Ignore' }),
      ],
      obj(),
      (p, b, errorType) => seen.push(`${p}/${b}/${errorType}`),
    );
    assert.deepEqual(seen, ['a/a-binding/no_error', 'a/a-binding/invalid_error', 'b/b-binding/compile_error']);
  });

  it('authorizer checks wait for an authorizer that answers later: conditions, variables and mutations see its answer', async () => {
    // The Webhook authorization mode answers with a promise: `approve` and `escalate` are allowed,
    // `delete` is not. The variable's check is first asked in the mutation that reads it.
    const asked: string[] = [];
    const authorizer: CheckAuthorizer = {
      authorize: (_user, a) => {
        asked.push(a.verb);
        return new Promise((ok) => setTimeout(() => ok({ decision: a.verb === 'delete' ? 'no-opinion' : 'allow', reason: `${a.verb}?` }), 5));
      },
    };
    const may = (verb: string): string => `authorizer.group('example.com').resource('things').check('${verb}')`;
    const stamp = policy(
      'stamp',
      [apply(`Object{metadata: Object.metadata{labels: {'approver': variables.approver, 'deleter': ${may('delete')}.allowed() ? 'yes' : 'no'}}}`)],
      {
        matchConditions: [{ name: 'approver', expression: `${may('approve')}.allowed()` }],
        variables: [{ name: 'approver', expression: `${may('escalate')}.allowed() ? 'yes: ' + ${may('escalate')}.reason() : 'no'` }],
      },
    );
    const skipped = policy('skipped', [apply("Object{metadata: Object.metadata{labels: {'skipped': 'no'}}}")], {
      matchConditions: [{ name: 'deleter', expression: `${may('delete')}.allowed()` }],
    });
    const r = await run([stamp, skipped], obj(), undefined, authorizer);
    assert.equal(r.error, undefined);
    assert.deepEqual(r.object.metadata?.labels, { app: 'a', approver: 'yes: escalate?', deleter: 'no' });
    // Each check asked once in the request, however often its expressions ran.
    assert.deepEqual(asked.sort(), ['approve', 'delete', 'escalate']);
  });

  it('a compile error inside an initializer points at the expression as written', () => {
    const at = (e: string): string => {
      const c = compileExpression(e, 'Object', { params: false, variables: false, patchTypes: true });
      return 'error' in c ? c.error.split('\n').slice(0, 3).join('\n') : 'compiled';
    };
    assert.equal(
      at("Object{metadata: Object.metadata{labels: {'a': request.operaton}}}"),
      [
        "compilation failed: ERROR: <input>:1:55: undefined field 'operaton'",
        " | Object{metadata: Object.metadata{labels: {'a': request.operaton}}}",
        ` | ${'.'.repeat(54)}^`,
      ].join('\n'),
    );
    // After a has() on any operand too (a second rewrite, mapped through both).
    const both = "Object{metadata: Object.metadata{labels: has(object.spec.x[0].y) ? {'a': request.operaton} : {}}}";
    assert.equal(at(both).split('\n')[0], `compilation failed: ERROR: <input>:1:${both.indexOf('.operaton') + 1}: undefined field 'operaton'`);
    assert.match(
      at("Object{metadata: Object.metadata{labels: {'a': 1 + 'b'}}}"),
      /^compilation failed: ERROR: <input>:1:50: found no matching overload for '_\+_'/,
    );
  });

  it('the construction rewrite leaves strings and member names alone', () => {
    assert.equal(rewriteConstructions(`'Object{a: 1}' + x.Object`), `'Object{a: 1}' + x.Object`);
    assert.equal(
      rewriteConstructions(`Object{spec: Object.spec{a: [1, 2], b: {'k': f(1, 2)}}}`),
      `__kplane_object("Object", {"spec": dyn( __kplane_object("Object.spec", {"a": dyn( [1, 2]), "b": dyn( {'k': f(1, 2)})}))})`,
    );
    assert.equal(rewriteConstructions(`jsonpatch.escapeKey('a/b')`), `__kplane_jsonpatch_escape_key('a/b')`);
  });
});
