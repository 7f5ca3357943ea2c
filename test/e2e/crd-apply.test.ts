// Server-side and client-side apply of custom resources with kubectl 1.20 and 1.33 (one server
// each): the field manager types a custom resource with its CRD version's schema (list-map and set
// lists, atomic maps, preserve-unknown-fields as deduced), conflicts and --force-conflicts, removal
// of fields a manager stops applying, client-side apply (JSON merge patch, 3-way) twice and with a
// field removed, migration client-side → server-side, and managedFields of /status and /scale.
import assert from 'node:assert/strict';
import { waitServed } from '../support/crd.js';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { ensureTools } from '../support/tools.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.apply.example.com
spec:
  group: apply.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              image: {type: string}
              replicas: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
              args:
                type: array
                items: {type: string}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                additionalProperties: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              replicas: {type: integer}
              phase: {type: string}
`;

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  subresource?: string;
  fieldsV1: Record<string, unknown>;
}
interface Widget {
  metadata: { name: string; resourceVersion: string; generation?: number; annotations?: Record<string, string>; managedFields?: Entry[] };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const widget = (name: string, spec: string): string => `apiVersion: apply.example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name} apply on custom resources`, { concurrency: false, timeout: 85_000 }, () => {
    const env = useKubectlServer(kubectl.bin, `kplane-crd-apply-${kubectl.name}-`);

    const { k, ok, file } = env;
    const get = async (name: string): Promise<Widget> => parseYaml(await ok(['get', 'widget', name, '-o', 'yaml', ...kubectl.showManagedFields])) as Widget;
    const owners = (o: Widget): Record<string, Record<string, unknown>> =>
      Object.fromEntries((o.metadata.managedFields ?? []).map((e) => [`${e.manager}/${e.operation}${e.subresource ? '/' + e.subresource : ''}`, e.fieldsV1]));

    it('the CRD is established', async () => {
      await ok(['apply', '--server-side', '-f', await file('crd.yaml', CRD)]);
      await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/widgets.apply.example.com']);
      // Discovery may lag the condition by a moment: wait until the resource answers.
      await waitServed(env.raw, '/apis/apply.example.com/v1/namespaces/default/widgets');
    });

    it('apply --server-side creates, records list-map/set/atomic fields by schema, re-applies without a write', async () => {
      const f = await file(
        'w1.yaml',
        widget(
          'w1',
          '  image: a:1\n  replicas: 2\n  ports:\n  - {name: http, port: 80}\n  - {name: https, port: 443}\n  tags: [x, w]\n  args: [--a]\n  selector: {app: w}\n  extra: {free: {form: 1}}\n',
        ),
      );
      assert.equal(await ok(['apply', '--server-side', '-f', f]), 'widget.apply.example.com/w1 serverside-applied\n');
      const first = await get('w1');
      assert.equal(first.metadata.managedFields?.length, 1);
      assert.equal(first.metadata.managedFields[0]!.apiVersion, 'apply.example.com/v1');
      assert.deepEqual(owners(first)['kubectl/Apply'], {
        'f:spec': {
          'f:args': {},
          // Keys the schema does not declare (preserve-unknown-fields) are owned with their parents ('.').
          'f:extra': { 'f:free': { '.': {}, 'f:form': {} } },
          'f:image': {},
          'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} }, 'k:{"name":"https"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
          'f:replicas': {},
          'f:selector': {},
          'f:tags': { 'v:"w"': {}, 'v:"x"': {} },
        },
      });
      assert.equal(await ok(['apply', '--server-side', '-f', f]), 'widget.apply.example.com/w1 serverside-applied\n');
      assert.equal((await get('w1')).metadata.resourceVersion, first.metadata.resourceVersion, 'an unchanged apply must not write');
    });

    it('list-map items and set members of two appliers merge; conflicts exit 1; --force-conflicts takes over', async () => {
      const other = await file('w1-other.yaml', widget('w1', '  ports:\n  - {name: metrics, port: 9090}\n  tags: [z]\n'));
      await ok(['apply', '--server-side', '--field-manager=other', '-f', other]);
      const merged = await get('w1');
      assert.deepEqual(
        (merged.spec!['ports'] as { name: string }[]).map((p) => p.name),
        ['http', 'https', 'metrics'],
      );
      assert.deepEqual(merged.spec!['tags'], ['x', 'w', 'z']);
      assert.deepEqual(owners(merged)['other/Apply'], {
        'f:spec': { 'f:ports': { 'k:{"name":"metrics"}': { '.': {}, 'f:name': {}, 'f:port': {} } }, 'f:tags': { 'v:"z"': {} } },
      });

      const clash = await file('w1-clash.yaml', widget('w1', '  ports:\n  - {name: http, port: 8080}\n  selector: {app: other}\n'));
      const r = await k(['apply', '--server-side', '--field-manager=other', '-f', clash]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.split('\n')[0], 'error: Apply failed with 2 conflicts: conflicts with "kubectl":');
      // Leaves of a node before its children, as structured-merge-diff iterates a set.
      assert.match(r.stderr, /\n- \.spec\.selector\n- \.spec\.ports\[name="http"\]\.port\n/);
      assert.match(r.stderr, /re-run the apply\n {2}command with the `--force-conflicts` flag/);

      assert.equal(
        await ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', clash]),
        'widget.apply.example.com/w1 serverside-applied\n',
      );
      const forced = await get('w1');
      assert.equal((forced.spec!['ports'] as { name: string; port: number }[]).find((p) => p.name === 'http')?.port, 8080);
      assert.deepEqual(forced.spec!['selector'], { app: 'other' }, 'an atomic map is replaced whole');
      const kubectlOwns = owners(forced)['kubectl/Apply']!['f:spec'] as Record<string, unknown>;
      assert.equal(kubectlOwns['f:selector'], undefined);
      assert.deepEqual(kubectlOwns['f:ports'], {
        'k:{"name":"http"}': { '.': {}, 'f:name': {} },
        'k:{"name":"https"}': { '.': {}, 'f:name': {}, 'f:port': {} },
      });
      // other stopped applying metrics and z: they go away.
      assert.deepEqual(
        (forced.spec!['ports'] as { name: string }[]).map((p) => p.name),
        ['http', 'https'],
      );
      assert.deepEqual(forced.spec!['tags'], ['x', 'w']);
    });

    it('removes what a manager stops applying (list-map item, set member, field, preserve-unknown key)', async () => {
      const f = await file(
        'w1-less.yaml',
        widget('w1', '  image: a:1\n  replicas: 2\n  ports:\n  - {name: http}\n  tags: [x]\n  args: [--a]\n  extra: {kept: 1}\n'),
      );
      await ok(['apply', '--server-side', '-f', f]);
      const o = await get('w1');
      assert.deepEqual(o.spec!['ports'], [{ name: 'http', port: 8080 }], 'other still owns http.port; https is gone');
      assert.deepEqual(o.spec!['tags'], ['x']);
      assert.deepEqual(o.spec!['extra'], { kept: 1 }, 'a key under preserve-unknown-fields the applier dropped is removed');
      assert.deepEqual(o.spec!['selector'], { app: 'other' });
    });

    it('status and scale writes record their managers; apply to /status ignores spec', async () => {
      const st = await env.raw.request({
        method: 'PATCH',
        path: '/apis/apply.example.com/v1/namespaces/default/widgets/w1/status?fieldManager=ctrl',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: 'apiVersion: apply.example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {image: ignored}\nstatus: {replicas: 2, phase: Ready}\n',
      });
      assert.equal(st.status, 200, st.text());
      const scale = await env.raw.request({
        method: 'PATCH',
        path: '/apis/apply.example.com/v1/namespaces/default/widgets/w1/scale?fieldManager=scaler',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"spec":{"replicas":5}}',
      });
      assert.equal(scale.status, 200, scale.text());
      const o = await get('w1');
      assert.equal(o.spec!['image'], 'a:1');
      assert.equal(o.spec!['replicas'], 5);
      assert.deepEqual(o.status, { replicas: 2, phase: 'Ready' });
      const own = owners(o);
      assert.deepEqual(own['ctrl/Apply/status'], { 'f:status': { 'f:phase': {}, 'f:replicas': {} } });
      assert.deepEqual(own['scaler/Update/scale'], { 'f:spec': { 'f:replicas': {} } });
      assert.equal((own['kubectl/Apply']!['f:spec'] as Record<string, unknown>)['f:replicas'], undefined, 'the scaler took replicas');
      // Apply to the main resource ignores status (a reset field) and so does not conflict on it.
      const main = await env.raw.request({
        method: 'PATCH',
        path: '/apis/apply.example.com/v1/namespaces/default/widgets/w1?fieldManager=ctrl',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: 'apiVersion: apply.example.com/v1\nkind: Widget\nmetadata: {name: w1}\nstatus: {phase: Lost}\n',
      });
      assert.equal(main.status, 200, main.text());
      assert.equal(main.json<Widget>().status!['phase'], 'Ready');
    });

    it('a changed CRD schema changes how apply merges (atomic list → set)', async () => {
      const path = '/apis/apply.example.com/v1/namespaces/default/widgets/lists';
      const applyArgs = (manager: string, args: string[]) =>
        env.raw.request({
          method: 'PATCH',
          path: `${path}?fieldManager=${manager}`,
          headers: { 'content-type': 'application/apply-patch+yaml' },
          body: JSON.stringify({ apiVersion: 'apply.example.com/v1', kind: 'Widget', metadata: { name: 'lists' }, spec: { args } }),
        });
      assert.equal((await applyArgs('a', ['--one'])).status, 201);
      const clash = await applyArgs('b', ['--two']);
      assert.equal(clash.status, 409, 'args is an atomic list: one owner');
      await ok([
        'patch',
        'crd',
        'widgets.apply.example.com',
        '--type',
        'json',
        '-p',
        '[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/args/x-kubernetes-list-type","value":"set"}]',
      ]);
      const deadline = Date.now() + 10_000;
      let r = await applyArgs('b', ['--two']);
      while (r.status === 409 && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 100));
        r = await applyArgs('b', ['--two']);
      }
      assert.equal(r.status, 200, r.text());
      assert.deepEqual(r.json<Widget>().spec!['args'], ['--one', '--two'], 'set members of two appliers merge');
    });

    it('client-side apply twice and with a field removed (JSON merge patch, 3-way)', async () => {
      const v1 = await file('csa1.yaml', widget('c1', '  image: b:1\n  replicas: 1\n  args: [--x]\n  tags: [t]\n'));
      const v2 = await file('csa2.yaml', widget('c1', '  image: b:2\n  tags: [t]\n'));
      assert.equal(await ok(['apply', '-f', v1]), 'widget.apply.example.com/c1 created\n');
      assert.equal(await ok(['apply', '-f', v1]), 'widget.apply.example.com/c1 unchanged\n');
      const before = await get('c1');
      assert.equal(await ok(['apply', '-f', v2]), 'widget.apply.example.com/c1 configured\n');
      const after = await get('c1');
      assert.deepEqual(after.spec, { image: 'b:2', tags: ['t'] });
      assert.ok(Number(after.metadata.resourceVersion) > Number(before.metadata.resourceVersion));
      assert.equal(after.metadata.generation, 2);
      assert.deepEqual(Object.keys(owners(after)), ['kubectl-client-side-apply/Update']);
      assert.deepEqual(owners(after)['kubectl-client-side-apply/Update']!['f:spec'], { '.': {}, 'f:image': {}, 'f:tags': { '.': {}, 'v:"t"': {} } });
    });

    it('migrates a custom resource from client-side to server-side apply', async () => {
      const v3 = await file('mig.yaml', widget('c1', '  image: b:3\n'));
      assert.equal(await ok(['apply', '--server-side', '-f', v3]), 'widget.apply.example.com/c1 serverside-applied\n');
      const o = await get('c1');
      assert.equal(o.spec!['image'], 'b:3');
      assert.deepEqual(owners(o)['kubectl/Apply'], { 'f:spec': { 'f:image': {} } });
      assert.deepEqual((JSON.parse(o.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}') as KubeObject).spec, { image: 'b:3' });
      if (kubectl.name === '1.33') {
        // csaupgrade moved client-side apply's fields to "kubectl": tags, no longer applied, goes.
        assert.deepEqual(o.spec, { image: 'b:3' });
        assert.equal(owners(o)['kubectl-client-side-apply/Update'], undefined);
      } else {
        assert.deepEqual(o.spec, { image: 'b:3', tags: ['t'] });
      }
      assert.equal(await ok(['apply', '--server-side', '-f', v3]), 'widget.apply.example.com/c1 serverside-applied\n');
      assert.equal((await get('c1')).metadata.resourceVersion, o.metadata.resourceVersion);
    });
  });
}
