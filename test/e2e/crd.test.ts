// CustomResourceDefinitions end to end with kubectl 1.20 and 1.33 (one server per version): a CRD
// from YAML becomes Established and its resource is served (printer columns, explain, categories,
// merge patch, 415 for strategic merge patch, scale and status subresources, schema validation,
// pruning, defaulting, several versions, removal); raw HTTP for what kubectl does not expose.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { crdObject } from '../support/crd.js';
import { KUBECTLS } from '../support/kubectl.js';
import { ensureTools, run, type RunResult } from '../support/tools.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [allcron]
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Schedule, type: string, jsonPath: .spec.cronSpec, description: The schedule}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    selectableFields:
    - jsonPath: .spec.image
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
                description: The cron schedule the image runs on.
                pattern: '^(\\S+ ){4}\\S+$'
              image: {type: string, description: The image to run.}
              replicas: {type: integer, minimum: 0, default: 1}
              size: {type: string, enum: [small, large], default: small}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
`;

const CR = (name: string, spec: string) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
${spec}
`;

const NON_STRUCTURAL = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bads.stable.example.com
spec:
  group: stable.example.com
  scope: Cluster
  names: {plural: bads, kind: Bad}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            properties:
              a: {type: string}
`;

for (const k of KUBECTLS) {
  describe(`custom resources with kubectl ${k.name}`, { concurrency: false }, () => {
    let s: TestServer;
    let raw: RawClient;
    const kc = (args: string[], input?: string): Promise<RunResult> =>
      run(k.bin, ['--kubeconfig', s.kubeconfig, ...args], {
        env: { HOME: s.dataDir, KUBECACHEDIR: `${s.dataDir}/cache` },
        ...(input !== undefined ? { input } : {}),
      });
    const ok = async (args: string[], input?: string): Promise<string> => {
      const r = await kc(args, input);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    };
    const base = '/apis/stable.example.com/v1/namespaces/default/crontabs';

    before(async () => {
      s = await startTestServer({ storage: 'memory' });
      raw = new RawClient(s.url, adminCredentials(s.dataDir));
    });
    after(async () => {
      raw.close();
      await s.stop();
    });

    it('creates a CRD from YAML and it becomes Established', async () => {
      assert.match(await ok(['create', '-f', '-'], CRD), /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
      assert.match(await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/crontabs.stable.example.com']), /condition met/);
      const crd = JSON.parse(await ok(['get', 'crd', 'crontabs.stable.example.com', '-o', 'json'])) as {
        status: { acceptedNames: { plural: string }; storedVersions: string[]; conditions: { type: string; status: string; reason: string }[] };
      };
      assert.equal(crd.status.acceptedNames.plural, 'crontabs');
      assert.deepEqual(crd.status.storedVersions, ['v1']);
      assert.deepEqual(
        crd.status.conditions.map((c) => [c.type, c.status, c.reason]),
        [
          ['NamesAccepted', 'True', 'NoConflicts'],
          ['Established', 'True', 'InitialNamesAccepted'],
        ],
      );
    });

    it('creates a custom resource, with defaults, and get shows its printer columns', async () => {
      await ok(['create', '-f', '-'], CR('daily', '  cronSpec: "0 0 * * *"\n  image: backup:1'));
      const out = await ok(['get', 'crontabs']);
      const [head, row] = out.trim().split('\n');
      assert.match(head!, /^NAME\s+SCHEDULE\s+REPLICAS\s+READY\s+AGE$/);
      assert.match(row!, /^daily\s+0 0 \* \* \*\s+1\s+\d+s$/, 'a missing value is an empty cell');
      const obj = JSON.parse(await ok(['get', 'ct', 'daily', '-o', 'json'])) as { spec: Record<string, unknown>; metadata: { generation: number } };
      assert.deepEqual(obj.spec, { cronSpec: '0 0 * * *', image: 'backup:1', replicas: 1, size: 'small' });
      assert.equal(obj.metadata.generation, 1);
    });

    it('explain reads the schema from OpenAPI', async () => {
      const out = await ok(['explain', 'crontab.spec.cronSpec']);
      assert.match(out, /The cron schedule the image runs on\./);
      assert.match(await ok(['explain', 'crontabs']), /A CronTab runs an image on a schedule\./);
    });

    it('merge patch works; strategic merge patch is a 415', async () => {
      await ok(['patch', 'crontab', 'daily', '--type', 'merge', '-p', '{"spec":{"image":"backup:2"}}']);
      const obj = JSON.parse(await ok(['get', 'ct', 'daily', '-o', 'json'])) as { spec: { image: string }; metadata: { generation: number } };
      assert.equal(obj.spec.image, 'backup:2');
      assert.equal(obj.metadata.generation, 2);
      const r = await kc(['patch', 'crontab', 'daily', '--type', 'strategic', '-p', '{"spec":{"image":"x"}}']);
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /the body of the request was in an unknown format - accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml/,
      );
    });

    it('get <category> lists the custom resources of that category', async () => {
      const out = await ok(['get', 'allcron']);
      assert.match(out, /^NAME\s+SCHEDULE\s+REPLICAS\s+READY\s+AGE\n(daily|hourly)\s/);
      assert.match(out, /\ndaily\s+0 0 \* \* \*/);
    });

    it('field selectors work on selectableFields', async () => {
      await ok(['create', '-f', '-'], CR('hourly', '  cronSpec: "0 * * * *"\n  image: other:1'));
      const out = await ok(['get', 'ct', '--field-selector', 'spec.image=other:1', '-o', 'name']);
      assert.equal(out.trim(), 'crontab.stable.example.com/hourly');
      const r = await kc(['get', 'ct', '--field-selector', 'spec.cronSpec=x']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /field label not supported: spec.cronSpec/);
    });

    it('status subresource: the main resource ignores status, /status ignores everything else', async () => {
      const cur = (await raw.request({ path: `${base}/daily` })).json<{
        metadata: { resourceVersion: string; generation: number };
        spec: Record<string, unknown>;
      }>();
      const put = await raw.request({
        method: 'PUT',
        path: `${base}/daily/status`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'stable.example.com/v1',
          kind: 'CronTab',
          metadata: { name: 'daily', resourceVersion: cur.metadata.resourceVersion },
          spec: { image: 'ignored' },
          status: { replicas: 2, selector: 'app=daily', conditions: [{ type: 'Ready', status: 'True' }] },
        }),
      });
      assert.equal(put.status, 200, put.text());
      const after = put.json<{ spec: { image: string }; status: { replicas: number }; metadata: { generation: number } }>();
      assert.equal(after.spec.image, 'backup:2');
      assert.equal(after.status.replicas, 2);
      assert.equal(after.metadata.generation, cur.metadata.generation, 'status writes do not bump generation');
      const merge = await raw.request({
        method: 'PATCH',
        path: `${base}/daily`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"status":{"replicas":9}}',
      });
      assert.equal(merge.json<{ status: { replicas: number } }>().status.replicas, 2);
      assert.match(await ok(['get', 'ct', 'daily']), /daily\s+0 0 \* \* \*\s+1\s+True\s+/);
    });

    it('scale subresource reads and writes the mapped paths', async () => {
      const get = await raw.request({ path: `${base}/daily/scale` });
      assert.equal(get.status, 200, get.text());
      const scale = get.json<{ apiVersion: string; kind: string; spec: { replicas: number }; status: { replicas: number; selector: string } }>();
      assert.equal(scale.apiVersion, 'autoscaling/v1');
      assert.equal(scale.kind, 'Scale');
      assert.deepEqual(scale.spec, { replicas: 1 });
      assert.deepEqual(scale.status, { replicas: 2, selector: 'app=daily' });
      await ok(['scale', 'crontab', 'daily', '--replicas=4']);
      const obj = JSON.parse(await ok(['get', 'ct', 'daily', '-o', 'json'])) as { spec: { replicas: number }; metadata: { generation: number } };
      assert.equal(obj.spec.replicas, 4);
      assert.equal(obj.metadata.generation, 3);
      const bad = await raw.request({
        method: 'PATCH',
        path: `${base}/daily/scale`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"spec":{"replicas":-1}}',
      });
      assert.equal(bad.status, 422, bad.text());
      assert.match(bad.text(), /Scale.autoscaling \\"daily\\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0/);
    });

    it('an object violating the schema gets a 422 with one cause per field', async () => {
      const r = await kc(['create', '--validate=false', '-f', '-'], CR('bad', '  cronSpec: "nope"\n  replicas: -1\n  size: huge'));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /The CronTab "bad" is invalid/);
      assert.match(r.stderr, /spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0/);
      assert.match(r.stderr, /spec.size: Unsupported value: "huge": supported values: "small", "large"/);
      assert.match(r.stderr, /spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match/);
      const post = await raw.request({
        method: 'POST',
        path: base,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'bad' }, spec: { replicas: 'x', size: 'huge' } }),
      });
      assert.equal(post.status, 422);
      const st = post.json<{ reason: string; details: { kind: string; group: string; causes: { field: string; reason: string }[] } }>();
      assert.equal(st.reason, 'Invalid');
      assert.match(post.text(), /"message":"CronTab.stable.example.com \\"bad\\" is invalid: \[/);
      assert.equal(st.details.kind, 'CronTab');
      assert.equal(st.details.group, 'stable.example.com');
      assert.deepEqual(st.details.causes.map((c) => [c.field, c.reason]).sort(), [
        ['spec.replicas', 'FieldValueTypeInvalid'],
        ['spec.size', 'FieldValueNotSupported'],
      ]);
    });

    it('unknown fields are pruned with a warning, or refused with fieldValidation=Strict', async () => {
      const body = JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'pruned' }, spec: { image: 'a', extra: 1 } });
      const strict = await raw.request({ method: 'POST', path: `${base}?fieldValidation=Strict`, headers: { 'content-type': 'application/json' }, body });
      assert.equal(strict.status, 400);
      assert.match(strict.text(), /strict decoding error: unknown field \\"spec.extra\\"/);
      const warn = await raw.request({ method: 'POST', path: base, headers: { 'content-type': 'application/json' }, body });
      assert.equal(warn.status, 201, warn.text());
      assert.match(String(warn.headers['warning']), /unknown field \\"spec.extra\\"/);
      assert.equal(warn.json<{ spec: Record<string, unknown> }>().spec['extra'], undefined);
    });

    it("a finalizer name without a domain is accepted on a custom resource with upstream's warning", async () => {
      const body = JSON.stringify({
        apiVersion: 'stable.example.com/v1',
        kind: 'CronTab',
        metadata: { name: 'finalized', finalizers: ['foo'] },
        spec: { image: 'a' },
      });
      const made = await raw.request({ method: 'POST', path: base, headers: { 'content-type': 'application/json' }, body });
      assert.equal(made.status, 201, made.text());
      assert.equal(
        made.headers['warning'],
        '299 - "metadata.finalizers: \\"foo\\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"',
      );
      const patched = await raw.request({
        method: 'PATCH',
        path: `${base}/finalized`,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: '{"metadata":{"finalizers":null}}',
      });
      assert.equal(patched.status, 200, patched.text());
    });

    it('several versions: apiVersion rewritten, deprecated version warns', async () => {
      const r = await raw.request({ path: '/apis/stable.example.com/v1beta1/namespaces/default/crontabs/daily' });
      assert.equal(r.status, 200);
      assert.equal(r.json<{ apiVersion: string }>().apiVersion, 'stable.example.com/v1beta1');
      assert.equal(r.headers['warning'], '299 - "stable.example.com/v1beta1 CronTab is deprecated"');
      const created = await raw.request({
        method: 'POST',
        path: '/apis/stable.example.com/v1beta1/namespaces/default/crontabs',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'stable.example.com/v1beta1', kind: 'CronTab', metadata: { name: 'old' }, spec: { image: 'x' } }),
      });
      assert.equal(created.status, 201, created.text());
      const v1 = (await raw.request({ path: `${base}/old` })).json<{ apiVersion: string; spec: Record<string, unknown> }>();
      assert.equal(v1.apiVersion, 'stable.example.com/v1');
      assert.deepEqual(v1.spec, { image: 'x', replicas: 1, size: 'small' }, 'defaults of the served version apply on read');
      const list = (await raw.request({ path: '/apis/stable.example.com/v1beta1/crontabs' })).json<{ apiVersion: string; items: { apiVersion: string }[] }>();
      assert.equal(list.apiVersion, 'stable.example.com/v1beta1');
      assert.ok(list.items.every((i) => i.apiVersion === 'stable.example.com/v1beta1'));
      // A version that stops being served disappears from routing and discovery.
      await ok(['patch', 'crd', 'crontabs.stable.example.com', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/versions/0/served","value":false}]']);
      const deadline = Date.now() + 5000;
      let code = 0;
      while (Date.now() < deadline && (code = (await raw.request({ path: '/apis/stable.example.com/v1beta1/crontabs' })).status) !== 404)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal(code, 404);
      const group = (await raw.request({ path: '/apis/stable.example.com' })).json<{ versions: { version: string }[] }>();
      assert.deepEqual(
        group.versions.map((v) => v.version),
        ['v1'],
      );
      assert.equal((await raw.request({ path: `${base}/old` })).status, 200);
    });

    it('discovery and OpenAPI describe the custom resource', async () => {
      const rl = (await raw.request({ path: '/apis/stable.example.com/v1' })).json<{
        resources: { name: string; shortNames?: string[]; categories?: string[]; kind: string }[];
      }>();
      const main = rl.resources.find((r) => r.name === 'crontabs')!;
      assert.deepEqual(main.shortNames, ['ct']);
      assert.deepEqual(main.categories, ['allcron']);
      assert.deepEqual(rl.resources.map((r) => r.name).sort(), ['crontabs', 'crontabs/scale', 'crontabs/status']);
      const v3 = (await raw.request({ path: '/openapi/v3/apis/stable.example.com/v1' })).json<{
        components: { schemas: Record<string, { 'x-kubernetes-group-version-kind'?: unknown[] }> };
      }>();
      assert.deepEqual(v3.components.schemas['com.example.stable.v1.CronTab']?.['x-kubernetes-group-version-kind'], [
        { group: 'stable.example.com', version: 'v1', kind: 'CronTab' },
      ]);
      const v2 = (await raw.request({ path: '/openapi/v2', headers: { accept: 'application/json' } })).json<{
        paths: Record<string, { patch?: { consumes: string[] } }>;
      }>();
      const patch = v2.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}']?.patch;
      assert.ok(patch && !patch.consumes.includes('application/strategic-merge-patch+json'));
    });

    it('a non-structural schema is rejected with the upstream reasons', async () => {
      const r = await kc(['create', '-f', '-'], NON_STRUCTURAL);
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /The CustomResourceDefinition "bads.stable.example.com" is invalid: spec.validation.openAPIV3Schema.properties\[spec\].type: Required value: must not be empty for specified object fields/,
      );
    });

    it('x-kubernetes-validations (CEL) rules are compiled with the CRD and enforced on writes', async () => {
      const crd = (rule: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ranges.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: ranges, kind: Range}
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
            x-kubernetes-validations:
            - rule: '${rule}'
              message: min must not exceed max
            properties:
              min: {type: integer}
              max: {type: integer}
`;
      const bad = await kc(['create', '-f', '-'], crd('self.min <= self.nope'));
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /spec.validation.openAPIV3Schema.properties\[spec\].x-kubernetes-validations\[0\].rule: Invalid value: .*compilation failed/);
      await ok(['create', '-f', '-'], crd('self.min <= self.max'));
      await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/ranges.stable.example.com']);
      await ok(['create', '-f', '-'], 'apiVersion: stable.example.com/v1\nkind: Range\nmetadata: {name: good}\nspec: {min: 1, max: 2}\n');
      const r = await kc(['create', '-f', '-'], 'apiVersion: stable.example.com/v1\nkind: Range\nmetadata: {name: bad}\nspec: {min: 3, max: 2}\n');
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /The Range "bad" is invalid: spec: Invalid value: (?:"object": )?min must not exceed max/);
      await ok(['delete', 'crd', 'ranges.stable.example.com']);
    });

    it("rules use kube's newer CEL: two-variable comprehensions, optional entries and optMap", async () => {
      const budgets = (ownerRule: Record<string, string>): string =>
        JSON.stringify(
          crdObject({
            group: 'stable.example.com',
            plural: 'budgets',
            kind: 'Budget',
            spec: {
              type: 'object',
              'x-kubernetes-validations': [
                {
                  rule: 'self.limits.all(k, v, v <= self.max)',
                  messageExpression: '"over max: " + self.limits.transformList(k, v, v > self.max, k).join(", ")',
                },
                { rule: '[?self.?owner, ?self.?team.optMap(t, "team " + t)].size() >= 1', ...ownerRule },
              ],
              properties: {
                max: { type: 'integer' },
                owner: { type: 'string', maxLength: 63 },
                team: { type: 'string', maxLength: 63 },
                limits: { type: 'object', maxProperties: 16, additionalProperties: { type: 'integer' } },
              },
            },
          }),
        );
      const crd = budgets({ message: 'an owner or a team is required' });
      // A constant format string that does not fit its arguments is refused when written, as cel-go's validator does.
      const badFormat = await kc(['create', '-f', '-'], budgets({ messageExpression: '"%d is not an owner".format([self.owner])' }));
      assert.notEqual(badFormat.code, 0);
      assert.match(
        badFormat.stderr,
        /x-kubernetes-validations\[1\]\.messageExpression: Invalid value: .*compilation failed: ERROR: <input>:1:30: error during formatting: decimal clause can only be used on integers, was given string/,
      );
      await ok(['create', '-f', '-'], crd);
      await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/budgets.stable.example.com']);
      const budget = (name: string, spec: string): string => `apiVersion: stable.example.com/v1\nkind: Budget\nmetadata: {name: ${name}}\nspec: ${spec}\n`;
      await ok(['create', '-f', '-'], budget('fits', '{max: 5, team: db, limits: {cpu: 2, mem: 5}}'));
      const over = await kc(['create', '-f', '-'], budget('over', '{max: 5, owner: ana, limits: {cpu: 9, mem: 5, disk: 7}}'));
      assert.notEqual(over.code, 0);
      assert.match(over.stderr, /The Budget "over" is invalid: spec: Invalid value: (?:"object": )?over max: (?:cpu, disk|disk, cpu)/);
      const nobody = await kc(['create', '-f', '-'], budget('nobody', '{max: 5, limits: {cpu: 1}}'));
      assert.notEqual(nobody.code, 0);
      assert.match(nobody.stderr, /spec: Invalid value: (?:"object": )?an owner or a team is required/);
      await ok(['delete', 'crd', 'budgets.stable.example.com']);
    });

    it('deleting the CRD stops serving its resources', async () => {
      await ok(['delete', 'crd', 'crontabs.stable.example.com']);
      const deadline = Date.now() + 5000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await raw.request({ path: base })).status;
        if (status === 404) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(status, 404);
      const groups = (await raw.request({ path: '/apis' })).json<{ groups: { name: string }[] }>();
      assert.ok(!groups.groups.some((g) => g.name === 'stable.example.com'));
    });
  });
}
