import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import { builtinResources } from '../../registry/builtin.js';
import { buildOpenAPIV3Service, toV3Schema, v3DocumentKey } from './v3.js';

const input = { resources: builtinResources, definitions: builtinDefinitions, version: { gitVersion: 'v1.34.0-kplane' } };
const svc = buildOpenAPIV3Service(input);
const core = svc.documents.get('api/v1')!.document;

test('index lists every document with a hash URL', () => {
  assert.deepEqual(Object.keys(svc.index.paths), [
    'api',
    'api/v1',
    'apis',
    'apis/coordination.k8s.io',
    'apis/coordination.k8s.io/v1',
    'apis/events.k8s.io',
    'apis/events.k8s.io/v1',
  ]);
  for (const [key, d] of svc.documents) {
    const expected = createHash('sha512').update(d.json).digest('hex').toUpperCase();
    assert.equal(d.hash, expected);
    assert.equal(svc.index.paths[key]?.serverRelativeURL, `/openapi/v3/${key}?hash=${expected}`);
    assert.deepEqual(JSON.parse(d.json.toString()), d.document);
  }
  assert.deepEqual(JSON.parse(svc.indexJson.toString()), svc.index);
});

test('hashes are stable across builds and change with content', () => {
  const again = buildOpenAPIV3Service(input);
  assert.equal(again.documents.get('api/v1')?.hash, svc.documents.get('api/v1')?.hash);
  const other = buildOpenAPIV3Service({ ...input, version: { gitVersion: 'v9' } });
  assert.notEqual(other.documents.get('api/v1')?.hash, svc.documents.get('api/v1')?.hash);
});

test('document keys', () => {
  assert.equal(v3DocumentKey('/api/'), 'api');
  assert.equal(v3DocumentKey('/api/v1/namespaces/{namespace}/configmaps'), 'api/v1');
  assert.equal(v3DocumentKey('/apis/'), 'apis');
  assert.equal(v3DocumentKey('/apis/events.k8s.io/'), 'apis/events.k8s.io');
  assert.equal(v3DocumentKey('/apis/events.k8s.io/v1/watch/events'), 'apis/events.k8s.io/v1');
});

test('configmap operations in api/v1', () => {
  assert.ok(Object.keys(core.paths).every((p) => p.startsWith('/api/v1/')));
  const item = core.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'];
  assert.deepEqual(
    item?.parameters?.map((p) => p.name),
    ['name', 'namespace', 'pretty'],
  );
  assert.deepEqual(item?.parameters?.[0], {
    name: 'name',
    in: 'path',
    description: 'Name of the ConfigMap.',
    required: true,
    schema: { type: 'string', uniqueItems: true },
  });
  const patch = item?.patch;
  assert.equal(patch?.operationId, 'patchCoreV1NamespacedConfigMap');
  assert.equal(patch?.['x-kubernetes-action'], 'patch');
  assert.deepEqual(patch?.['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'ConfigMap' });
  assert.deepEqual(
    patch?.parameters?.map((p) => p.name),
    ['dryRun', 'fieldManager', 'fieldValidation', 'force'],
  );
  assert.deepEqual(Object.keys(patch?.requestBody?.content ?? {}), [
    'application/apply-patch+yaml',
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
  ]);
  assert.deepEqual(patch?.requestBody?.content['application/apply-patch+yaml']?.schema, {
    $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  });
  assert.deepEqual(Object.keys(patch?.responses['200']?.content ?? {}), ['application/json', 'application/vnd.kubernetes.protobuf', 'application/yaml']);
  assert.deepEqual(item?.put?.requestBody, { content: { '*/*': { schema: { $ref: '#/components/schemas/io.k8s.api.core.v1.ConfigMap' } } }, required: true });
  assert.equal(item?.delete?.requestBody?.required, undefined, 'the DeleteOptions body is optional');
  const list = core.paths['/api/v1/namespaces/{namespace}/configmaps']?.get;
  assert.equal(list?.operationId, 'listCoreV1NamespacedConfigMap');
  assert.ok(Object.keys(list?.responses['200']?.content ?? {}).includes('application/json;stream=watch'));
  assert.equal(core.paths['/api/v1/configmaps']?.get?.operationId, 'listCoreV1ConfigMapForAllNamespaces');
  assert.equal(core.paths['/api/v1/']?.get?.operationId, 'getCoreV1APIResources');
});

test('schemas: refs to components, allOf for described refs, only what the document uses', () => {
  const schemas = core.components.schemas;
  assert.ok(schemas['io.k8s.api.core.v1.ConfigMap']);
  assert.equal(schemas['io.k8s.api.coordination.v1.Lease'], undefined);
  assert.deepEqual(schemas['io.k8s.api.core.v1.ConfigMap']?.properties?.metadata?.allOf, [
    { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
  ]);
  assert.deepEqual(schemas['io.k8s.api.core.v1.ConfigMapList']?.properties?.items?.items, { $ref: '#/components/schemas/io.k8s.api.core.v1.ConfigMap' });
  const text = JSON.stringify(svc.documents.get('apis/coordination.k8s.io/v1')!.document);
  assert.ok(!text.includes('#/definitions/'));
  for (const m of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
    assert.ok(m[1]! in svc.documents.get('apis/coordination.k8s.io/v1')!.document.components.schemas, m[1]);
  }
  assert.deepEqual(toV3Schema({ $ref: '#/definitions/x' }), { $ref: '#/components/schemas/x' });
});

test('junctors of custom resource schemas are carried to v3', () => {
  assert.deepEqual(
    toV3Schema({
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      allOf: [{ anyOf: [{ format: 'a' }] }],
      not: { enum: ['x'] },
    }),
    {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      allOf: [{ anyOf: [{ format: 'a' }] }],
      not: { enum: ['x'] },
    },
  );
});
