import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { builtinDefinitions } from '../../registry/builtin.js';
import { builtinResources } from '../../registry/builtin.js';
import { encodeGnosticV2, gnosticDocumentType } from './gnostic.js';
import { buildOpenAPIV2 } from './v2.js';

// Decoded messages are walked as plain objects (protobufjs toObject output with snake_case keys).
// any: a decoded protobuf tree; its shape is what the assertions check, so the type rules about any
// are off for the rest of this file.
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return -- see above */
type Obj = Record<string, any>;

const doc = buildOpenAPIV2({ resources: builtinResources, definitions: builtinDefinitions, version: { gitVersion: 'v1.34.0-kplane' } });
const bytes = encodeGnosticV2(doc);
const type = gnosticDocumentType();
const decoded = type.toObject(type.decode(bytes), { defaults: false });

const path = (name: string): Obj => decoded.paths.path.find((p: Obj) => p.name === name)?.value;
const ext = (list: Obj[] | undefined, name: string): unknown => {
  const e = list?.find((x) => x.name === name);
  return e === undefined ? undefined : parseYaml(e.value.yaml);
};

test('document header', () => {
  assert.equal(decoded.swagger, '2.0');
  assert.deepEqual(decoded.info, { title: 'Kubernetes', version: 'v1.34.0-kplane' });
  assert.equal(decoded.paths.path.length, Object.keys(doc.paths).length);
  assert.equal(decoded.definitions.additional_properties.length, Object.keys(doc.definitions).length);
});

test('PATCH carries the GVK extension and an inline dryRun query parameter (kubectl 1.20 dry-run detection)', () => {
  const patch = path('/api/v1/namespaces/{namespace}/configmaps/{name}').patch;
  assert.equal(patch.operation_id, 'patchCoreV1NamespacedConfigMap');
  assert.deepEqual(ext(patch.vendor_extension, 'x-kubernetes-group-version-kind'), { group: '', kind: 'ConfigMap', version: 'v1' });
  assert.equal(ext(patch.vendor_extension, 'x-kubernetes-action'), 'patch');
  const names = patch.parameters.map((p: Obj) => p.parameter?.non_body_parameter?.query_parameter_sub_schema?.name).filter(Boolean);
  assert.ok(names.includes('dryRun'));
  assert.ok(names.includes('fieldValidation'));
  const body = patch.parameters.find((p: Obj) => p.parameter?.body_parameter)?.parameter.body_parameter;
  assert.equal(body.schema._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
  assert.equal(body.required, true);
});

test('definitions keep types, refs and extensions', () => {
  const def = (n: string): Obj => decoded.definitions.additional_properties.find((d: Obj) => d.name === n)?.value;
  const cm = def('io.k8s.api.core.v1.ConfigMap');
  assert.deepEqual(ext(cm.vendor_extension, 'x-kubernetes-group-version-kind'), [{ group: '', kind: 'ConfigMap', version: 'v1' }]);
  const prop = (s: Obj, n: string): Obj => s.properties.additional_properties.find((p: Obj) => p.name === n)?.value;
  assert.equal(prop(cm, 'metadata')._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.deepEqual(prop(cm, 'binaryData').additional_properties.schema, { format: 'byte', type: { value: ['string'] } });
  const owners = prop(def('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'), 'ownerReferences');
  assert.deepEqual(owners.type.value, ['array']);
  assert.equal(owners.items.schema[0]._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference');
  assert.equal(ext(owners.vendor_extension, 'x-kubernetes-patch-merge-key'), 'uid');
  assert.deepEqual(ext(owners.vendor_extension, 'x-kubernetes-list-map-keys'), ['uid']);
  assert.deepEqual(def('io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference').required, ['apiVersion', 'kind', 'name', 'uid']);
  assert.equal(prop(def('io.k8s.api.core.v1.Event'), 'count').format, 'int32');
});

test('path-level parameters and security', () => {
  const item = path('/api/v1/namespaces/{namespace}/configmaps');
  const pathParam = item.parameters.find((p: Obj) => p.parameter?.non_body_parameter?.path_parameter_sub_schema)?.parameter.non_body_parameter
    .path_parameter_sub_schema;
  assert.deepEqual(pathParam.name, 'namespace');
  assert.equal(pathParam.required, true);
  assert.equal(decoded.security[0].additional_properties[0].name, 'BearerToken');
  assert.equal(decoded.security_definitions.additional_properties[0].value.api_key_security.in, 'header');
});
