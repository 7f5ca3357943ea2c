// /openapi/v2 and /openapi/v3 as kube-apiserver publishes them, checked through the clients that
// read them and directly. Custom resources follow apiextensions-apiserver's CRD OpenAPI builder
// (controller/openapi/builder: routes, media types, responses; ToStructuralOpenAPIV2 for v2;
// Unfold + ToKubeOpenAPI + addEmbeddedProperties for v3); built-in operations follow
// k8s.io/apiserver's installer and kube-openapi (requestBody `required` in v3).
//
// kubectl 1.20 validates objects client-side against v2 and explains from v2; kubectl 1.33
// explains from v3 and finds server-side field validation through the `fieldValidation`
// parameter of the kind's PATCH operation in v3.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient } from '../support/https.js';
import { waitServed } from '../support/crd.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const GROUP = 'fid.example.com';
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['maybe', 'size'],
                properties: {
                  replicas: { type: 'integer', format: 'int32' },
                  port: { 'x-kubernetes-int-or-string': true, description: 'A port, by number or name.' },
                  template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
                  embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { data: { type: 'string' } } },
                  free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  choice: { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] },
                  maybe: { type: 'string', nullable: true },
                  size: { type: 'integer', maximum: 10, default: 1 },
                  labels: { type: 'object', required: ['app'], additionalProperties: { type: 'string', nullable: true } },
                },
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

const WIDGET_YAML = (name: string) => `apiVersion: ${GROUP}/v1
kind: Widget
metadata: {name: ${name}, namespace: default}
spec:
  size: 3
  maybe: x
  port: http
  choice: abc
  labels: {app: web}
  embedded: {apiVersion: v1, kind: Thing, metadata: {name: inner}, data: d}
  template: {apiVersion: v1, kind: Anything, metadata: {name: t}, spec: {whatever: 1}}
  free: {a: null, b: {c: [1, "two"]}}
`;

type Json = Record<string, unknown>;
interface Schema {
  type?: string;
  required?: string[];
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
  [k: string]: unknown;
}
interface Op {
  operationId: string;
  consumes?: string[];
  produces?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { required?: boolean; content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  'x-kubernetes-action'?: string;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}
type PathItem = Partial<Record<'get' | 'put' | 'post' | 'delete' | 'patch', Op>> & { parameters?: { name: string }[] };

async function createCRD(raw: RawClient): Promise<void> {
  const res = await raw.request({
    method: 'POST',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(CRD),
  });
  assert.equal(res.status, 201, res.text());
  await waitServed(raw, `/apis/${GROUP}/v1/widgets`);
}

const paramNames = (item: PathItem | undefined, op: Op | undefined) => [...(item?.parameters ?? []), ...(op?.parameters ?? [])].map((p) => p.name).sort();

describe('published documents: custom resource routes and schemas, request bodies', { concurrency: false, timeout: 60_000 }, () => {
  let server: TestServer;
  let raw: RawClient;
  let v2: { paths: Record<string, PathItem>; definitions: Record<string, Schema> };
  let v3: { paths: Record<string, PathItem>; components: { schemas: Record<string, Schema> } };
  const ns = `/apis/${GROUP}/v1/namespaces/{namespace}/widgets`;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    await createCRD(raw);
    v2 = (await raw.request({ path: '/openapi/v2' })).json();
    v3 = (await raw.request({ path: `/openapi/v3/apis/${GROUP}/v1` })).json();
  });
  after(async () => {
    raw?.close();
    await server?.stop();
  });

  it('v2: the paths, operations and actions the CRD builder publishes (no watch paths)', () => {
    const paths = Object.keys(v2.paths)
      .filter((p) => p.startsWith(`/apis/${GROUP}/`))
      .sort();
    assert.deepEqual(paths, [ns, `${ns}/{name}`, `${ns}/{name}/scale`, `${ns}/{name}/status`, `/apis/${GROUP}/v1/widgets`]);
    const ops = (p: string) =>
      Object.fromEntries(
        Object.entries(v2.paths[p]!)
          .filter(([m]) => m !== 'parameters')
          .map(([m, o]) => [m, [(o as Op).operationId, (o as Op)['x-kubernetes-action']]]),
      );
    assert.deepEqual(ops(ns), {
      delete: ['deleteFidExampleComV1CollectionNamespacedWidget', 'deletecollection'],
      get: ['listFidExampleComV1NamespacedWidget', 'list'],
      post: ['createFidExampleComV1NamespacedWidget', 'post'],
    });
    assert.deepEqual(ops(`${ns}/{name}/scale`), {
      get: ['readFidExampleComV1NamespacedWidgetScale', 'get'],
      patch: ['patchFidExampleComV1NamespacedWidgetScale', 'patch'],
      put: ['replaceFidExampleComV1NamespacedWidgetScale', 'put'],
    });
    assert.deepEqual(ops(`/apis/${GROUP}/v1/widgets`), { get: ['listFidExampleComV1WidgetForAllNamespaces', 'list'] });
    // Every operation, subresources included, names the custom resource's kind.
    for (const p of paths) {
      for (const [m, o] of Object.entries(v2.paths[p]!)) {
        if (m !== 'parameters') assert.deepEqual((o as Op)['x-kubernetes-group-version-kind'], { group: GROUP, kind: 'Widget', version: 'v1' }, `${m} ${p}`);
      }
    }
  });

  it('v2: media types, parameters and responses of custom resource operations', () => {
    const item = v2.paths[`${ns}/{name}`]!;
    for (const m of ['get', 'put', 'delete', 'patch'] as const) assert.deepEqual(item[m]?.produces, ['application/json', 'application/yaml'], m);
    assert.deepEqual(item.put?.consumes, ['application/json', 'application/yaml']);
    assert.deepEqual(item.patch?.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    assert.deepEqual(v2.paths[ns]?.get?.produces, ['application/json', 'application/yaml']);
    assert.deepEqual(Object.keys(item.patch.responses), ['200', '401']);
    assert.deepEqual(Object.keys(item.put.responses), ['200', '201', '401']);
    assert.deepEqual(Object.keys(item.delete!.responses), ['200', '202', '401']);
    assert.deepEqual(paramNames(item, item.get), ['name', 'namespace', 'pretty', 'resourceVersion']);
    assert.deepEqual(paramNames(item, item.patch), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force', 'name', 'namespace', 'pretty']);
    const coll = v2.paths[ns];
    assert.deepEqual(paramNames(coll, coll.delete), [
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
    const scale = v2.paths[`${ns}/{name}/scale`]!;
    assert.deepEqual(
      scale.put?.parameters?.find((p) => p.name === 'body'),
      { in: 'body', name: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.api.autoscaling.v1.Scale' } },
    );
  });

  it('v2: the kind as ToStructuralOpenAPIV2 leaves it, with embedded resources given apiVersion, kind and metadata', () => {
    const spec = v2.definitions[`com.example.fid.v1.Widget`]!.properties!['spec']!;
    const p = spec.properties!;
    assert.deepEqual(Object.keys(p['embedded']!.properties!).sort(), ['apiVersion', 'data', 'kind', 'metadata']);
    assert.deepEqual(p['embedded']!.required, ['kind', 'apiVersion']);
    assert.equal(p['embedded']!.properties!['metadata']!['$ref'], '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    assert.deepEqual(
      p['template'],
      { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      'preserved unknown fields: no type, no properties',
    );
    assert.deepEqual(p['free'], { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p['choice'], { type: 'string' }, 'junctors are dropped');
    assert.deepEqual(p['port'], { description: 'A port, by number or name.', 'x-kubernetes-int-or-string': true });
    assert.deepEqual(p['maybe'], {});
    assert.deepEqual(p['size'], { type: 'integer', maximum: 10 }, 'defaults are pruned');
    assert.deepEqual(spec.required, ['size'], 'a nullable property is not required');
    assert.deepEqual(p['labels'], { type: 'object', additionalProperties: {} }, 'nothing is required of a map with nullable values, which lose their type');
  });

  it("v3: the index lists the custom resource's group-version, whose document has only its routes (no discovery)", async () => {
    const index = (await raw.request({ path: '/openapi/v3' })).json<{ paths: Record<string, unknown> }>();
    assert.ok(index.paths[`apis/${GROUP}/v1`]);
    assert.equal(index.paths[`apis/${GROUP}`], undefined);
    assert.ok(index.paths['apis/coordination.k8s.io'], 'built-in groups keep their group document');
    assert.equal(v3.paths[`/apis/${GROUP}/v1/`], undefined);
    assert.equal(v3.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList'], undefined);
  });

  it('v3: the kind as Unfold and ToKubeOpenAPI publish it: junctors, int-or-string as anyOf, embedded resources', () => {
    const spec = v3.components.schemas[`com.example.fid.v1.Widget`]!.properties!['spec']!;
    const p = spec.properties!;
    assert.deepEqual(p['port']!.anyOf, [{ type: 'integer' }, { type: 'string' }]);
    assert.deepEqual(p['choice']!.anyOf, [{ pattern: '^a' }, { pattern: '^b' }]);
    assert.deepEqual(Object.keys(p['template']!.properties!).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual(p['template']!.required, ['kind', 'apiVersion']);
    assert.equal(p['template']!.type, 'object');
    assert.deepEqual(p['embedded']!.required, ['kind', 'apiVersion']);
    assert.deepEqual(p['embedded']!.properties!['metadata']!.allOf, [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }]);
    assert.deepEqual(p['free'], { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(p['maybe'], { type: 'string', nullable: true });
    assert.equal(p['size']!.default, 1);
    assert.deepEqual(spec.required, ['maybe', 'size']);
    const list = v3.components.schemas[`com.example.fid.v1.WidgetList`]!.properties!['items']!;
    assert.match(String(list['description']), /^List of widgets\./);
  });

  it('v3: request bodies are required for create, replace and patch (not delete); custom resources take JSON or YAML', async () => {
    const item = v3.paths[`${ns}/{name}`]!;
    assert.equal(item.put?.requestBody?.required, true);
    assert.equal(item.patch?.requestBody?.required, true);
    assert.equal(v3.paths[ns]?.post?.requestBody?.required, true);
    assert.equal(item.delete?.requestBody?.required, undefined);
    assert.equal(v3.paths[ns]?.delete?.requestBody, undefined, 'deletecollection of a custom resource has no body');
    assert.deepEqual(Object.keys(item.put.requestBody.content), ['application/json', 'application/yaml']);
    assert.deepEqual(Object.keys(item.get!.responses['200']!.content!), ['application/json', 'application/yaml']);
    assert.deepEqual(Object.keys(v3.paths[ns].get!.responses['200']!.content!), ['application/json', 'application/yaml']);
    const leases = (await raw.request({ path: '/openapi/v3/apis/coordination.k8s.io/v1' })).json<typeof v3>();
    const lease = leases.paths['/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}']!;
    assert.equal(lease.patch?.requestBody?.required, true);
    assert.equal(lease.put?.requestBody?.required, true);
    assert.deepEqual(Object.keys(lease.put.requestBody.content), ['*/*']);
    assert.equal(lease.delete?.requestBody?.required, undefined);
    const core = (await raw.request({ path: '/openapi/v3/api/v1' })).json<typeof v3>();
    assert.equal(core.paths['/api/v1/namespaces/{namespace}/configmaps']?.post?.requestBody?.required, true);
    assert.equal(core.paths['/api/v1/namespaces/{name}/finalize']?.put?.requestBody?.required, true);
  });
});

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} and a custom resource's published OpenAPI`, { concurrency: false, timeout: 90_000 }, () => {
    const env = useKubectlServer(kubectl.bin, `kplane-oapi-fid-${kubectl.name}-`);
    const { ok, k, file } = env;

    it('sets up the CRD', async () => {
      await createCRD(env.raw);
    });

    it('applies an object with embedded resources, int-or-string and nulls under preserved fields (client-side validation passes)', async () => {
      await ok(['apply', '-f', await file('w1.yaml', WIDGET_YAML('w1'))]);
      const w = JSON.parse(await ok(['get', 'widgets', 'w1', '-o', 'json'])) as { spec: Json };
      assert.deepEqual(w.spec['embedded'], { apiVersion: 'v1', kind: 'Thing', metadata: { name: 'inner' }, data: 'd' });
      assert.deepEqual((w.spec['free'] as Json)['b'], { c: [1, 'two'] });
    });

    it('server-side dry run of a custom resource is detected and used', async () => {
      const out = await ok(['apply', '--dry-run=server', '-f', await file('w2.yaml', WIDGET_YAML('w2'))]);
      assert.match(out, /widget\.fid\.example\.com\/w2 created \(server dry run\)/);
      assert.notEqual((await k(['get', 'widgets', 'w2'])).code, 0, 'nothing was persisted');
    });

    it('an unknown field is refused, by the server where kubectl detects field validation (1.33), client-side otherwise (1.20)', async () => {
      const bad = WIDGET_YAML('w3').replace('  size: 3\n', '  size: 3\n  bogus: 1\n');
      const r = await k(['apply', '-f', await file('w3.yaml', bad)]);
      assert.notEqual(r.code, 0);
      if (kubectl.name === '1.20') assert.match(r.stderr, /unknown field "bogus"/);
      else assert.match(r.stderr, /strict decoding error: unknown field "spec\.bogus"/);
    });

    it('explain shows the fields of an embedded resource', async () => {
      const out = await ok(['explain', 'widgets.spec.embedded', `--api-version=${GROUP}/v1`]);
      for (const f of ['apiVersion', 'kind', 'metadata', 'data']) assert.match(out, new RegExp(`^\\s+${f}\\s+<`, 'm'), f);
      assert.match(out, /kind\s+<string>\s+-required-/);
      const tmpl = await ok(['explain', 'widgets.spec.template', `--api-version=${GROUP}/v1`]);
      // v3 lists apiVersion/kind/metadata of a preserving embedded resource; v2 publishes it bare.
      if (kubectl.name === '1.33') assert.match(tmpl, /metadata\s+<ObjectMeta>/);
      else assert.doesNotMatch(tmpl, /metadata/);
    });
  });
}
