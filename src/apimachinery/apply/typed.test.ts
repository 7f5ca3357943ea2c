// Field sets of objects read through schemas: small schemas shaped like structured-merge-diff's
// typed/toset_test.go fixtures, and the real built-in definitions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import type { Definitions, OpenAPISchema } from '../schema.js';
import type { JsonValue } from '../types.js';
import { TypedError, toFieldSet, validateListUniqueness, validateTyped } from './typed.js';
import { typeOf } from './atoms.js';

const ref = (name: string): OpenAPISchema => ({ $ref: '#/definitions/' + name });
const CM = ref('io.k8s.api.core.v1.ConfigMap');
const NS = ref('io.k8s.api.core.v1.Namespace');
const LEASE = ref('io.k8s.api.coordination.v1.Lease');
const EVENT = ref('io.k8s.api.core.v1.Event');
const defs = builtinDefinitions;

const fields = (obj: JsonValue, schema: OpenAPISchema | undefined, d: Definitions = defs): unknown => toFieldSet(obj, schema, d).toFieldsV1();

const small: Definitions = {
  elem: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'integer', default: 0 } } },
  root: {
    type: 'object',
    properties: {
      keyed: { type: 'array', items: { $ref: '#/definitions/elem' }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
      set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      atomicList: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
      plain: { type: 'array', items: { type: 'string' } },
      smpKeyed: { type: 'array', items: { $ref: '#/definitions/elem' }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' },
      smpSet: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
      retainKeys: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'retainKeys' },
      atomicMap: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
      atomicRef: { $ref: '#/definitions/elem', 'x-kubernetes-map-type': 'atomic' },
      strings: { type: 'object', additionalProperties: { type: 'string' } },
      free: { type: 'object' },
      struct: { $ref: '#/definitions/elem' },
    },
  },
};
const ROOT = ref('root');

test('ConfigMap: data entries are owned one by one; the data map itself only when it is {}', () => {
  assert.deepEqual(fields({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { app: 'a' } }, data: { k: 'v', j: 'w' } }, CM), {
    'f:apiVersion': {},
    'f:data': { 'f:j': {}, 'f:k': {} },
    'f:kind': {},
    'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:name': {} },
  });
  assert.deepEqual(fields({ data: {} }, CM), { 'f:data': {} });
});

test('ObjectMeta.ownerReferences is a list-map keyed by uid of atomic items; finalizers a set', () => {
  const obj = {
    metadata: {
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u-1', controller: true }],
      finalizers: ['a/b', 'c'],
    },
  };
  assert.deepEqual(fields(obj, CM), {
    'f:metadata': { 'f:finalizers': { 'v:"a/b"': {}, 'v:"c"': {} }, 'f:ownerReferences': { 'k:{"uid":"u-1"}': {} } },
  });
});

test('Namespace status conditions are keyed by type; spec.finalizers is atomic', () => {
  const ns = { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active', conditions: [{ type: 'Ready', status: 'True' }] } };
  assert.deepEqual(fields(ns, NS), {
    'f:spec': { 'f:finalizers': {} },
    'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } }, 'f:phase': {} },
  });
});

test('Lease and Event: times are scalars, an ObjectReference (map-type atomic) is one leaf', () => {
  assert.deepEqual(fields({ spec: { holderIdentity: 'me', renewTime: '2024-01-01T00:00:00.000000Z', leaseDurationSeconds: 15 } }, LEASE), {
    'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {}, 'f:renewTime': {} },
  });
  assert.deepEqual(fields({ involvedObject: { kind: 'Pod', name: 'p' }, source: { component: 'c' }, count: 1 }, EVENT), {
    'f:count': {},
    'f:involvedObject': {},
    'f:source': { 'f:component': {} },
  });
});

test('list types: map → k:, set → v:, atomic/plain/retainKeys → leaf; patch strategy merge acts as map or set', () => {
  const obj = {
    keyed: [{ name: 'a', value: 1 }],
    set: ['x'],
    atomicList: ['y'],
    plain: ['z'],
    smpKeyed: [{ name: 'b' }],
    smpSet: ['s'],
    retainKeys: ['r'],
  };
  assert.deepEqual(fields(obj, ROOT, small), {
    'f:atomicList': {},
    'f:keyed': { 'k:{"name":"a"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
    'f:plain': {},
    'f:retainKeys': {},
    'f:set': { 'v:"x"': {} },
    'f:smpKeyed': { 'k:{"name":"b"}': { '.': {}, 'f:name': {} } },
    'f:smpSet': { 'v:"s"': {} },
  });
});

test('maps: atomic (on the schema or at the $ref) are leaves; additionalProperties and free-form keys are owned with "."', () => {
  const obj = { atomicMap: { a: 'x' }, atomicRef: { name: 'n' }, strings: { k: 'v' }, free: { nested: { deep: 1 }, list: [1, 2] }, struct: { name: 'n' } };
  assert.deepEqual(fields(obj, ROOT, small), {
    'f:atomicMap': {},
    'f:atomicRef': {},
    'f:free': { 'f:list': {}, 'f:nested': { '.': {}, 'f:deep': {} } },
    'f:strings': { 'f:k': {} },
    'f:struct': { 'f:name': {} },
  });
});

test('no schema means deduced: every map key owned (with "."), lists atomic', () => {
  assert.deepEqual(fields({ spec: { a: { b: 1 }, l: [{ x: 1 }] } }, undefined), {
    'f:spec': { '.': {}, 'f:a': { '.': {}, 'f:b': {} }, 'f:l': {} },
  });
});

test('null and {} values are owned as nodes; a missing list-map key field takes its schema default', () => {
  assert.deepEqual(fields({ struct: null, strings: {} }, ROOT, small), { 'f:strings': {}, 'f:struct': {} });
  const withDefaultKey: Definitions = {
    ...small,
    r2: {
      type: 'object',
      properties: {
        l: { type: 'array', items: { $ref: '#/definitions/elem' }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name', 'value'] },
      },
    },
  };
  assert.deepEqual(fields({ l: [{ name: 'a' }] }, ref('r2'), withDefaultKey), { 'f:l': { 'k:{"name":"a","value":0}': { '.': {}, 'f:name': {} } } });
});

test('duplicates: owned once as a whole item; validateListUniqueness reports them as upstream', () => {
  assert.deepEqual(fields({ set: ['a', 'a', 'b'] }, ROOT, small), { 'f:set': { 'v:"a"': {}, 'v:"b"': {} } });
  assert.throws(
    () => validateListUniqueness({ keyed: [{ name: 'a' }, { name: 'a', value: 2 }], set: ['x', 'x'] }, ROOT, small),
    (e: unknown) =>
      e instanceof TypedError && e.message === 'errors:\n  .keyed: duplicate entries for key [name="a"]\n  .set: duplicate entries for key [="x"]',
  );
  assert.throws(
    () =>
      validateListUniqueness(
        {
          metadata: {
            ownerReferences: [
              { uid: '1', name: 'a' },
              { uid: '1', name: 'b' },
            ],
          },
        },
        CM,
        defs,
      ),
    /\.metadata\.ownerReferences: duplicate entries for key \[uid="1"\]/,
  );
  validateListUniqueness({ metadata: { finalizers: ['a', 'b'] } }, CM, defs);
});

test('validation: undeclared fields and list items without keys are reported with paths', () => {
  const type = typeOf(ROOT, small);
  assert.deepEqual(validateTyped({ bogus: 1 }, type), [{ path: '.bogus', message: 'field not declared in schema' }]);
  assert.deepEqual(validateTyped({ bogus: 1 }, type, { allowUnknownFields: true }), []);
  assert.deepEqual(validateTyped({ keyed: [{ value: 1 }] }, type), [
    {
      path: '.keyed',
      message: 'element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)',
    },
  ]);
  assert.deepEqual(validateTyped({ set: [{ a: 1 }] }, type), [
    { path: '.set', message: "element 0: associative list without keys has an element that's a map type" },
  ]);
});
