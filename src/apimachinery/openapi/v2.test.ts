import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import { builtinResources } from '../../registry/builtin.js';
import type { OpenAPISchema } from '../schema.js';
import type { SwaggerDocument, SwaggerOperation, SwaggerParameter } from './v2.js';
import { buildOpenAPIV2, structuralToV2 } from './v2.js';

const doc = buildOpenAPIV2({ resources: builtinResources, definitions: builtinDefinitions, version: { gitVersion: 'v1.34.0-kplane' } });

function paramNames(doc: SwaggerDocument, path: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete'): string[] {
  const item = doc.paths[path];
  assert.ok(item, `missing path ${path}`);
  const op = item[method];
  assert.ok(op, `missing ${method} ${path}`);
  return [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: SwaggerParameter) => p.name);
}

test('configmap paths and operation IDs match upstream', () => {
  const expected: Record<string, Record<string, [string, string]>> = {
    '/api/v1/namespaces/{namespace}/configmaps': {
      get: ['listCoreV1NamespacedConfigMap', 'list'],
      post: ['createCoreV1NamespacedConfigMap', 'post'],
      delete: ['deleteCoreV1CollectionNamespacedConfigMap', 'deletecollection'],
    },
    '/api/v1/namespaces/{namespace}/configmaps/{name}': {
      get: ['readCoreV1NamespacedConfigMap', 'get'],
      put: ['replaceCoreV1NamespacedConfigMap', 'put'],
      patch: ['patchCoreV1NamespacedConfigMap', 'patch'],
      delete: ['deleteCoreV1NamespacedConfigMap', 'delete'],
    },
    '/api/v1/configmaps': { get: ['listCoreV1ConfigMapForAllNamespaces', 'list'] },
    '/api/v1/watch/configmaps': { get: ['watchCoreV1ConfigMapListForAllNamespaces', 'watchlist'] },
    '/api/v1/watch/namespaces/{namespace}/configmaps': { get: ['watchCoreV1NamespacedConfigMapList', 'watchlist'] },
    '/api/v1/watch/namespaces/{namespace}/configmaps/{name}': { get: ['watchCoreV1NamespacedConfigMap', 'watch'] },
  };
  for (const [path, ops] of Object.entries(expected)) {
    const item = doc.paths[path];
    assert.ok(item, path);
    for (const [method, [id, action]] of Object.entries(ops)) {
      const op: SwaggerOperation | undefined = item[method as 'get'];
      assert.equal(op?.operationId, id, `${method} ${path}`);
      assert.equal(op?.['x-kubernetes-action'], action);
      assert.deepEqual(op?.['x-kubernetes-group-version-kind'], { group: '', kind: 'ConfigMap', version: 'v1' });
    }
  }
});

test('parameters on configmap operations', () => {
  const coll = '/api/v1/namespaces/{namespace}/configmaps';
  const item = coll + '/{name}';
  assert.deepEqual(
    doc.paths[coll]?.parameters?.map((p) => p.name),
    ['namespace', 'pretty'],
  );
  assert.deepEqual(paramNames(doc, coll, 'get').sort(), [
    'allowWatchBookmarks',
    'continue',
    'fieldSelector',
    'labelSelector',
    'limit',
    'namespace',
    'pretty',
    'resourceVersion',
    'resourceVersionMatch',
    'sendInitialEvents',
    'timeoutSeconds',
    'watch',
  ]);
  assert.deepEqual(paramNames(doc, coll, 'post').sort(), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'namespace', 'pretty']);
  assert.deepEqual(paramNames(doc, item, 'patch').sort(), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force', 'name', 'namespace', 'pretty']);
  // kubectl 1.20 finds dryRun support through an inline (not $ref) query parameter on PATCH.
  const dryRun = doc.paths[item]?.patch?.parameters?.find((p) => p.name === 'dryRun');
  assert.deepEqual({ in: dryRun?.in, type: dryRun?.type }, { in: 'query', type: 'string' });
  const patch = doc.paths[item]?.patch;
  assert.ok(patch?.consumes.includes('application/strategic-merge-patch+json'));
  assert.ok(patch?.consumes.includes('application/apply-patch+yaml'));
  const body = patch?.parameters?.find((p) => p.in === 'body');
  assert.deepEqual(body?.schema, { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' });
  assert.deepEqual(doc.paths[coll]?.post?.responses['201'], { description: 'Created', schema: { $ref: '#/definitions/io.k8s.api.core.v1.ConfigMap' } });
  assert.ok(doc.paths[coll]?.get?.produces.includes('application/json;stream=watch'));
});

test('cluster-scoped namespaces with status and finalize subresources', () => {
  assert.equal(doc.paths['/api/v1/namespaces']?.get?.operationId, 'listCoreV1Namespace');
  assert.equal(doc.paths['/api/v1/namespaces']?.delete, undefined, 'namespaces have no deletecollection');
  assert.equal(doc.paths['/api/v1/namespaces/{name}']?.patch?.operationId, 'patchCoreV1Namespace');
  assert.equal(doc.paths['/api/v1/namespaces/{name}/status']?.get?.operationId, 'readCoreV1NamespaceStatus');
  assert.equal(doc.paths['/api/v1/namespaces/{name}/status']?.patch?.operationId, 'patchCoreV1NamespaceStatus');
  assert.equal(doc.paths['/api/v1/namespaces/{name}/finalize']?.put?.operationId, 'replaceCoreV1NamespaceFinalize');
  // Single-operation paths hoist their query parameters, body stays on the operation (as upstream).
  assert.deepEqual(
    doc.paths['/api/v1/namespaces/{name}/finalize']?.parameters?.map((p) => p.name),
    ['dryRun', 'fieldManager', 'fieldValidation', 'name', 'pretty'],
  );
  assert.deepEqual(
    doc.paths['/api/v1/namespaces/{name}/finalize']?.put?.parameters?.map((p) => p.name),
    ['body'],
  );
  assert.equal(doc.paths['/api/v1/watch/namespaces']?.get?.operationId, 'watchCoreV1NamespaceList');
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/namespaces'], undefined);
});

test('named groups, discovery paths and tags', () => {
  assert.equal(doc.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}']?.patch?.operationId, 'patchCoordinationV1NamespacedLease');
  assert.deepEqual(doc.paths['/apis/coordination.k8s.io/v1/leases']?.get?.tags, ['coordination_v1']);
  assert.equal(doc.paths['/apis/events.k8s.io/v1/events']?.get?.operationId, 'listEventsV1EventForAllNamespaces');
  assert.equal(doc.paths['/api/']?.get?.operationId, 'getCoreAPIVersions');
  assert.equal(doc.paths['/api/v1/']?.get?.operationId, 'getCoreV1APIResources');
  assert.equal(doc.paths['/apis/']?.get?.operationId, 'getAPIVersions');
  assert.equal(doc.paths['/apis/coordination.k8s.io/']?.get?.operationId, 'getCoordinationAPIGroup');
  assert.equal(doc.paths['/apis/events.k8s.io/v1/']?.get?.operationId, 'getEventsV1APIResources');
});

test('definitions are exactly those referenced, and every ref resolves', () => {
  const names = Object.keys(doc.definitions);
  assert.ok(names.includes('io.k8s.api.core.v1.ConfigMap'));
  assert.ok(names.includes('io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList'));
  const refs = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && typeof x === 'string') refs.add(x);
        else walk(x);
      }
    }
  };
  walk(doc);
  for (const r of refs) assert.ok(r.slice('#/definitions/'.length) in doc.definitions, r);
  const d = buildOpenAPIV2({
    resources: builtinResources.filter((r) => r.kind === 'ConfigMap'),
    definitions: builtinDefinitions,
    version: { gitVersion: 'x' },
  });
  assert.equal(d.definitions['io.k8s.api.coordination.v1.Lease'], undefined);
  assert.ok(d.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent']);
});

test('shared kinds list every served group-version; input untouched', () => {
  const extra = {
    ...builtinResources[0]!,
    group: 'example.com',
    version: 'v1alpha1',
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    definitionName: 'com.example.v1alpha1.Widget',
  };
  const widget: OpenAPISchema = {
    type: 'object',
    properties: {},
    'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1alpha1', kind: 'Widget' }],
  };
  const d = buildOpenAPIV2({
    resources: [...builtinResources, extra],
    definitions: { ...builtinDefinitions, 'com.example.v1alpha1.Widget': widget, 'com.example.v1alpha1.WidgetList': widget },
    version: { gitVersion: 'x' },
    supportsStrategicMergePatch: (r) => r.group !== 'example.com',
  });
  const gvks = d.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions']?.['x-kubernetes-group-version-kind'] ?? [];
  assert.ok(gvks.some((g) => g.group === 'example.com' && g.version === 'v1alpha1'));
  assert.equal(builtinDefinitions['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions']?.['x-kubernetes-group-version-kind']?.length, 3);
  const patch = d.paths['/apis/example.com/v1alpha1/namespaces/{namespace}/widgets/{name}']?.patch;
  assert.equal(patch?.operationId, 'patchExampleComV1alpha1NamespacedWidget');
  assert.ok(!patch?.consumes.includes('application/strategic-merge-patch+json'));
});

test('document is deterministic', () => {
  const again = buildOpenAPIV2({ resources: builtinResources, definitions: builtinDefinitions, version: { gitVersion: 'v1.34.0-kplane' } });
  assert.equal(JSON.stringify(again), JSON.stringify(doc));
});

test("custom resources get the CRD builder's routes: no watch paths, JSON and YAML only, GVK of the kind on subresources", () => {
  const widget = {
    ...builtinResources[0]!,
    group: 'example.com',
    version: 'v1',
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    namespaced: true,
    definitionName: 'com.example.v1.Widget',
    subresources: [
      { name: 'status', kind: 'Widget', verbs: ['get', 'patch', 'update'] },
      { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] },
    ],
  };
  const schema: OpenAPISchema = {
    type: 'object',
    properties: {},
    'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Widget' }],
  };
  const d = buildOpenAPIV2({
    resources: [...builtinResources, widget],
    definitions: {
      ...builtinDefinitions,
      'com.example.v1.Widget': schema,
      'com.example.v1.WidgetList': schema,
      'io.k8s.api.autoscaling.v1.Scale': { type: 'object' },
    },
    version: { gitVersion: 'x' },
    customResource: (r) => r.group === 'example.com',
  });
  const paths = Object.keys(d.paths).filter((p) => p.startsWith('/apis/example.com/v1/') && p !== '/apis/example.com/v1/');
  assert.deepEqual(paths, [
    '/apis/example.com/v1/namespaces/{namespace}/widgets',
    '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}',
    '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale',
    '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status',
    '/apis/example.com/v1/widgets',
  ]);
  const item = d.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']!;
  assert.deepEqual(item.get?.produces, ['application/json', 'application/yaml']);
  assert.deepEqual(item.put?.consumes, ['application/json', 'application/yaml']);
  assert.deepEqual(item.patch?.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
  assert.deepEqual(Object.keys(item.patch.responses), ['200', '401']);
  assert.equal(item.get?.description, 'read the specified Widget');
  const scale = d.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale']!;
  assert.equal(scale.patch?.operationId, 'patchExampleComV1NamespacedWidgetScale');
  assert.equal(scale.patch?.description, 'partially update scale of the specified Widget');
  assert.deepEqual(scale.patch?.['x-kubernetes-group-version-kind'], { group: 'example.com', kind: 'Widget', version: 'v1' });
  assert.deepEqual(scale.get?.responses['200']?.schema, { $ref: '#/definitions/io.k8s.api.autoscaling.v1.Scale' });
  // kubectl finds dry-run and field validation through the PATCH operation's own parameters.
  assert.deepEqual(
    item.patch?.parameters?.map((p) => p.name),
    ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force'],
  );
  assert.equal(
    d.paths['/apis/example.com/v1/namespaces/{namespace}/widgets']?.delete?.parameters?.some((p) => p.in === 'body'),
    false,
  );
  // Built-in resources keep the installer's routes.
  assert.ok(d.paths['/api/v1/watch/namespaces/{namespace}/configmaps']);
});

test('structuralToV2: what ToStructuralOpenAPIV2 and addEmbeddedProperties leave of a published custom resource schema', () => {
  const meta = { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', description: 'm' };
  const embeddedProps = { apiVersion: { type: 'string' as const }, kind: { type: 'string' as const }, metadata: meta };
  const v2 = structuralToV2({
    type: 'object',
    properties: {
      obj: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
      arr: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
      ios: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      str: { type: 'string', allOf: [{ enum: ['a'] }], oneOf: [{ enum: ['b'] }], not: { enum: ['c'] }, default: 'x' },
      map: { type: 'object', required: ['k'], additionalProperties: { type: 'string', nullable: true } },
      emb: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        nullable: true,
        required: ['kind', 'apiVersion'],
        properties: { d: { type: 'string' }, ...embeddedProps },
      },
      embp: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
        required: ['kind', 'apiVersion'],
        properties: embeddedProps,
      },
    },
  });
  assert.deepEqual(v2.properties, {
    obj: { 'x-kubernetes-preserve-unknown-fields': true },
    arr: { 'x-kubernetes-preserve-unknown-fields': true },
    ios: { 'x-kubernetes-int-or-string': true },
    str: { type: 'string' },
    map: { type: 'object', additionalProperties: {} },
    emb: { 'x-kubernetes-embedded-resource': true, required: ['kind', 'apiVersion'], properties: embeddedProps },
    embp: { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
  });
});
