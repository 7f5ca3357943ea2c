// The create shortcut of update() (created.ts) against the general path (compareTyped against an
// empty old object, set operations, FieldSet.toFieldsV1): the managedFields must be identical,
// byte for byte, for any object — fitting its schema or not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { builtinDefinitions } from '../../registry/builtin.js';
import { resolveSchema, type Definitions, type OpenAPISchema } from '../schema.js';
import type { JsonValue, KubeObject, ManagedFieldsEntry } from '../types.js';
import { FieldSet, makePath } from './fieldpath.js';
import { update, type UpdateOptions } from './merge.js';

const T0 = '2024-01-01T00:00:00Z';
const ref = (name: string): OpenAPISchema => ({ $ref: '#/definitions/' + name });
const META = ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');

// A custom resource's schema as the CRD serving hands it to the field manager: list-maps (one and
// two keys, with a defaulted key), sets, atomic and plain lists, nested and atomic objects, maps of
// strings and of objects, preserve-unknown-fields, int-or-string, an embedded resource.
const WIDGET: OpenAPISchema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: META,
    spec: {
      type: 'object',
      properties: {
        image: { type: 'string' },
        replicas: { type: 'integer' },
        ratio: { type: 'number' },
        paused: { type: 'boolean' },
        command: { type: 'array', items: { type: 'string' } },
        atomicList: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'object', properties: { a: { type: 'string' } } } },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        numbers: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, port: { type: 'integer' }, extra: { type: 'object', additionalProperties: { type: 'string' } } },
          },
        },
        routes: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, host: { type: 'string' } } },
        },
        resources: {
          type: 'object',
          properties: {
            cpu: { type: 'string' },
            memory: { type: 'string' },
            nested: { type: 'object', properties: { deep: { type: 'object', properties: { x: { type: 'string' } } } } },
          },
        },
        atomicObj: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string' }, b: { type: 'string' } } },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        byName: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            properties: { v: { type: 'string' }, w: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } },
          },
        },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        port: { 'x-kubernetes-int-or-string': true },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { metadata: { type: 'object' } },
        },
        empty: { type: 'object' },
      },
    },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string' },
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } },
        },
      },
    },
  },
};

interface Kind {
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly schema: OpenAPISchema | undefined;
}

const KINDS: readonly Kind[] = [
  { name: 'Widget', apiVersion: 'example.com/v1', kind: 'Widget', schema: WIDGET },
  { name: 'ConfigMap', apiVersion: 'v1', kind: 'ConfigMap', schema: ref('io.k8s.api.core.v1.ConfigMap') },
  { name: 'Secret', apiVersion: 'v1', kind: 'Secret', schema: ref('io.k8s.api.core.v1.Secret') },
  { name: 'Namespace', apiVersion: 'v1', kind: 'Namespace', schema: ref('io.k8s.api.core.v1.Namespace') },
  { name: 'ServiceAccount', apiVersion: 'v1', kind: 'ServiceAccount', schema: ref('io.k8s.api.core.v1.ServiceAccount') },
  { name: 'Lease', apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', schema: ref('io.k8s.api.coordination.v1.Lease') },
  { name: 'Event', apiVersion: 'v1', kind: 'Event', schema: ref('io.k8s.api.core.v1.Event') },
  { name: 'events/v1 Event', apiVersion: 'events.k8s.io/v1', kind: 'Event', schema: ref('io.k8s.api.events.v1.Event') },
  { name: 'untyped', apiVersion: 'example.com/v1', kind: 'Anything', schema: undefined },
];

const defs: Definitions = { ...builtinDefinitions, 'com.example.v1.Widget': WIDGET };

// Short keys, so that list-map keys and set values collide (duplicates) now and then.
const key = fc.constantFrom('a', 'b', 'c', 'name', 'port', 'type', 'é', 'Z', '.', 'x:y', '');
const scalar: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constantFrom<JsonValue>(null, true, false, 0, 1, -1, 1.5, 'a', 'b', '', 'TCP', '80'),
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -3, max: 3 }),
);
const anyJson: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { maxKeys: 3 })),
})).v;

/** Values shaped by the schema most of the time, anything (wrong types, nulls) sometimes. */
function valueOf(schema: OpenAPISchema | undefined, depth: number): fc.Arbitrary<JsonValue> {
  const s = resolveSchema(defs, schema);
  if (!s || depth > 6) return anyJson;
  let fitting: fc.Arbitrary<JsonValue>;
  if (s.type === 'object' || s.properties || s.additionalProperties) {
    const props = s.properties ?? {};
    const names = Object.keys(props);
    const declared = fc.record(Object.fromEntries(names.map((n) => [n, valueOf(props[n], depth + 1)])), { requiredKeys: [] }) as fc.Arbitrary<
      Record<string, JsonValue>
    >;
    const ap = s.additionalProperties;
    const extraSchema = typeof ap === 'object' ? ap : undefined;
    const extra = fc.dictionary(fc.oneof(key, fc.string({ maxLength: 3 })), extraSchema ? valueOf(extraSchema, depth + 1) : anyJson, {
      maxKeys: names.length ? 1 : 3,
    });
    fitting = fc.tuple(declared, extra).map(([d, e]) => ({ ...e, ...d }));
  } else if (s.type === 'array') {
    fitting = fc.array(valueOf(s.items, depth + 1), { maxLength: 4 });
  } else if (s.type === 'string' || s.type === 'integer' || s.type === 'number' || s.type === 'boolean') {
    fitting = scalar;
  } else {
    fitting = anyJson;
  }
  return fc.oneof({ weight: 8, arbitrary: fitting }, { weight: 1, arbitrary: anyJson });
}

function objectsOf(k: Kind): fc.Arbitrary<KubeObject> {
  const body = k.schema ? valueOf(k.schema, 0) : fc.dictionary(key, anyJson, { maxKeys: 4 });
  const meta = fc.record(
    {
      name: fc.constantFrom('obj', ''),
      namespace: fc.constant('default'),
      uid: fc.constant('u-1'),
      resourceVersion: fc.constant('5'),
      generation: fc.constant(1),
      creationTimestamp: fc.constant(T0),
      labels: fc.dictionary(key, fc.string({ maxLength: 3 }), { maxKeys: 3 }),
      annotations: fc.dictionary(key, fc.string({ maxLength: 3 }), { maxKeys: 2 }),
      finalizers: fc.array(fc.constantFrom('a/b', 'c'), { maxLength: 3 }),
      ownerReferences: fc.array(
        fc.record(
          { apiVersion: fc.constant('v1'), kind: fc.constant('ConfigMap'), name: fc.constantFrom('o1', 'o2'), uid: fc.constantFrom('u1', 'u2') },
          { requiredKeys: ['uid'] },
        ),
        { maxLength: 3 },
      ),
      managedFields: fc.constantFrom<ManagedFieldsEntry[]>([], [{}]),
    },
    { requiredKeys: [] },
  );
  return fc.tuple(body, meta).map(([b, m]) => {
    const o = (b !== null && typeof b === 'object' && !Array.isArray(b) ? { ...b } : { junk: b }) as Record<string, unknown>;
    o['apiVersion'] = k.apiVersion;
    o['kind'] = k.kind;
    // The metadata the body brought (possibly of the wrong type) or a realistic one.
    if (o['metadata'] === undefined || m.name !== '') o['metadata'] = m;
    return o;
  });
}

const RESETS: readonly (FieldSet | undefined)[] = [
  undefined,
  FieldSet.of(makePath('status')),
  FieldSet.of(makePath('spec'), makePath('metadata', 'labels')),
  FieldSet.of(
    makePath('spec', 'ports'),
    makePath('spec', 'tags', { value: 'a' }),
    makePath('data', 'a'),
    makePath('metadata', 'ownerReferences', { key: { uid: 'u1' } }),
  ),
];

/** update() as a create (the shortcut) and as an update from an empty, uid-less object (the general path). */
function both(k: Kind, obj: KubeObject, opts: Partial<UpdateOptions>): { fast: string; general: string } {
  const base: UpdateOptions = { schema: k.schema, defs, apiVersion: k.apiVersion, new: obj, old: undefined, manager: 'tester', now: T0, ...opts };
  // Objects no decoder would let through (metadata not an object) make both throw alike.
  const outcome = (old: KubeObject | undefined): string => {
    try {
      return JSON.stringify(update({ ...base, old }));
    } catch (e) {
      return `threw ${String(e)}`;
    }
  };
  return { fast: outcome(undefined), general: outcome({}) };
}

for (const k of KINDS) {
  test(`create shortcut and general update path give identical managedFields: ${k.name}`, () => {
    fc.assert(
      fc.property(
        objectsOf(k),
        fc.constantFrom(...RESETS.keys()),
        fc.constantFrom('', 'status'),
        fc.constantFrom('tester', '', 'kubectl-create', 'a"b<c>'),
        (obj, reset, subresource, manager) => {
          const before = JSON.stringify(obj);
          const { fast, general } = both(k, obj, { resetFields: RESETS[reset], subresource: subresource || undefined, manager });
          assert.equal(fast, general);
          assert.equal(JSON.stringify(obj), before, 'the object is not modified');
        },
      ),
      { numRuns: 400 },
    );
  });
}

test('create shortcut: the bench custom resource, a ConfigMap with data and binaryData, an empty object', () => {
  const widget = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'default', labels: { app: 'x' } },
    spec: {
      image: 'img',
      replicas: 3,
      command: ['/app', '--serve'],
      tags: ['a', 'b', 'a'],
      ports: [{ name: 'http', port: 8080 }, { name: 'metrics', port: 9090 }, { port: 1 }],
      routes: [{ port: 80 }, { port: 80, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }],
      resources: { cpu: '100m', nested: {} },
      env: { MODE: 'bench', TAG: '' },
      free: { a: [1, 2], b: { c: {} } },
      empty: {},
    },
    status: { phase: 'Ready' },
  } as KubeObject;
  const cmObj = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'default' },
    data: { a: '1', b: '', c: undefined },
    binaryData: {},
    immutable: undefined,
  } as unknown as KubeObject;
  const cases: [Kind, KubeObject][] = [
    [KINDS[0]!, widget],
    [KINDS[1]!, cmObj],
    [KINDS[1]!, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }],
    [KINDS[8]!, {}],
  ];
  for (const [k, obj] of cases) {
    for (const resetFields of RESETS) {
      const { fast, general } = both(k, obj, { resetFields });
      assert.equal(fast, general);
    }
  }
  const { fast } = both(KINDS[0]!, widget, { resetFields: RESETS[1] });
  const entries = JSON.parse(fast) as ManagedFieldsEntry[];
  assert.equal(entries.length, 1);
  assert.deepEqual(Object.keys(entries[0]!), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
  assert.deepEqual(entries[0]!.fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': {
      '.': {},
      'f:command': {},
      'f:empty': {},
      'f:env': { '.': {}, 'f:MODE': {}, 'f:TAG': {} },
      'f:free': { '.': {}, 'f:a': {}, 'f:b': { '.': {}, 'f:c': {} } },
      'f:image': {},
      'f:ports': { '.': {}, 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} }, 'k:{"name":"metrics"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
      'f:replicas': {},
      'f:resources': { '.': {}, 'f:cpu': {}, 'f:nested': {} },
      'f:routes': {
        '.': {},
        'k:{"port":80,"protocol":"TCP"}': {},
        'k:{"port":80,"protocol":"UDP"}': { '.': {}, 'f:port': {}, 'f:protocol': {} },
      },
      'f:tags': { '.': {}, 'v:"a"': {}, 'v:"b"': {} },
    },
  });
});
