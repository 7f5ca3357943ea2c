// A custom resource's schema as /openapi/v2 and /openapi/v3 publish it, through the clients that
// read them: kubectl 1.33 explains from v3 (nullable fields keep their type there), kubectl 1.20
// validates objects client-side against v2 (which must not close what the schema leaves open:
// nullable fields, preserved unknown fields, a version whose root preserves unknown fields).
import assert from 'node:assert/strict';
import { waitServed } from '../support/crd.js';
import { describe, it } from 'node:test';
import { ensureTools } from '../support/tools.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.oapi.example.com
spec:
  group: oapi.example.com
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [opt]
            properties:
              nullableField: {type: string, nullable: true, description: A string that may be null.}
              opt: {type: string, nullable: true}
              color: {type: string, default: red}
              free:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;

interface Schema {
  type?: string;
  nullable?: boolean;
  default?: unknown;
  required?: string[];
  properties?: Record<string, Schema>;
  [k: string]: unknown;
}

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} and a custom resource's published schema`, { concurrency: false, timeout: 85_000 }, () => {
    const env = useKubectlServer(kubectl.bin, `kplane-crd-openapi-${kubectl.name}-`);
    const { ok, file } = env;

    it('sets up the CRD', async () => {
      await ok(['create', '-f', await file('crd.yaml', CRD)]);
      await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/things.oapi.example.com']);
      await waitServed(env.raw, '/apis/oapi.example.com/v1/things');
    });

    it('objects the schema allows pass client-side validation: null in a nullable required field, unknown fields where preserved, any field under a root that preserves them', async () => {
      // kubectl 1.33 drops null fields from what it sends (seen with -v=9: the server then answers
      // "spec.opt: Required value", as kube-apiserver would), so only kubectl 1.20, which validates
      // against v2 before sending, gets the null of the required nullable field.
      const opt = kubectl.name === '1.20' ? 'null' : 'x';
      const v1 = `apiVersion: oapi.example.com/v1\nkind: Thing\nmetadata: {name: t1, namespace: default}\nspec:\n  opt: ${opt}\n  nullableField: null\n  free: {known: a, extra: 1}\n`;
      await ok(['apply', '-f', await file('t1.yaml', v1)]);
      const v1beta1 = `apiVersion: oapi.example.com/v1beta1\nkind: Thing\nmetadata: {name: t2, namespace: default}\nspec:\n  opt: x\n  anything: {goes: here}\n`;
      await ok(['apply', '-f', await file('t2.yaml', v1beta1)]);
      const t1 = JSON.parse(await ok(['get', 'things.v1.oapi.example.com', 't1', '-o', 'json'])) as { spec: Record<string, unknown> };
      assert.deepEqual((t1.spec['free'] as Record<string, unknown>)['extra'], 1);
      assert.equal(t1.spec['color'], 'red', 'the default applies on the server');
    });

    it('explain shows the nullable field (with its type from v3; untyped in v2, as upstream publishes it there)', async () => {
      const out = await ok(['explain', 'things.spec', '--api-version=oapi.example.com/v1']);
      assert.match(out, kubectl.name === '1.20' ? /nullableField\t<>/ : /nullableField\s+<string>/);
      assert.match(out, /color\s+<string>/);
    });

    it("v2 is the structural v2 form, v3 keeps nullable and defaults; neither shows kplane's marker", async () => {
      const v2 = (await env.raw.request({ path: '/openapi/v2' })).json<{ definitions: Record<string, Schema> }>();
      const d1 = v2.definitions['com.example.oapi.v1.Thing']!;
      const spec = d1.properties!['spec']!;
      assert.deepEqual(spec.properties!['nullableField'], { description: 'A string that may be null.' });
      assert.equal(spec.required, undefined, 'a nullable property is not required in v2');
      assert.equal(spec.properties!['color']!.default, undefined, 'defaults are pruned from v2');
      assert.equal(spec.properties!['free']!.properties, undefined, 'preserved unknown fields: no properties in v2');
      assert.deepEqual(v2.definitions['com.example.oapi.v1beta1.Thing'], {
        type: 'object',
        'x-kubernetes-group-version-kind': [{ group: 'oapi.example.com', version: 'v1beta1', kind: 'Thing' }],
      });
      const v3 = (await env.raw.request({ path: '/openapi/v3/apis/oapi.example.com/v1' })).json<{ components: { schemas: Record<string, Schema> } }>();
      const s3 = v3.components.schemas['com.example.oapi.v1.Thing']!.properties!['spec']!;
      assert.equal(s3.properties!['nullableField']!.type, 'string');
      assert.equal(s3.properties!['nullableField']!.nullable, true);
      assert.equal(s3.properties!['color']!.default, 'red');
      assert.deepEqual(s3.required, ['opt']);
      const text = (await env.raw.request({ path: '/openapi/v2' })).text() + (await env.raw.request({ path: '/openapi/v3/apis/oapi.example.com/v1' })).text();
      assert.doesNotMatch(text, /x-kplane/);
    });
  });
}
