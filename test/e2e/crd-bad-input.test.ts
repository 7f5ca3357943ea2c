// Bad input for CustomResourceDefinitions and custom resources over raw HTTP: a non-structural
// schema, a CEL rule that does not compile, a CEL rule over the cost budget, an object violating
// the schema (create, merge patch and server-side apply), and apply bodies that are not objects.
// Each gets a precise 400/422 Status, and the server keeps serving afterwards.
import assert from 'node:assert/strict';
import { waitServed } from '../support/crd.js';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Status {
  kind: string;
  status: string;
  reason: string;
  code: number;
  message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field?: string }[] };
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const P = 'spec.validation.openAPIV3Schema';

const crd = (name: string, openAPIV3Schema: unknown): string =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}s.bad.example.com` },
    spec: {
      group: 'bad.example.com',
      scope: 'Namespaced',
      names: { plural: `${name}s`, singular: name, kind: name[0]!.toUpperCase() + name.slice(1) },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema } }],
    },
  });

describe('bad input for CRDs and custom resources', { concurrency: false, timeout: 60_000 }, () => {
  let server: TestServer;
  let raw: RawClient;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
  });
  after(async () => {
    raw?.close();
    await server?.stop();
  });

  const post = (path: string, body: string): Promise<RawResponse> =>
    raw.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
  const status = (r: RawResponse, code: number): Status => {
    assert.equal(r.status, code, r.text());
    const st = r.json<Status>();
    assert.equal(st.kind, 'Status');
    assert.equal(st.status, 'Failure');
    assert.equal(st.code, code);
    return st;
  };
  const causes = (st: Status): string[] => (st.details?.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message}`);

  it('a non-structural schema → 422 with upstream reasons, one cause each', async () => {
    const st = status(
      await post(
        CRDS,
        crd('nonstruct', {
          type: 'object',
          properties: { spec: { properties: { a: { type: 'string' } } }, extra: { type: 'object', anyOf: [{ properties: { b: { type: 'string' } } }] } },
        }),
      ),
      422,
    );
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details?.kind, 'CustomResourceDefinition');
    assert.equal(st.details?.group, 'apiextensions.k8s.io');
    assert.match(st.message, /^CustomResourceDefinition\.apiextensions\.k8s\.io "nonstructs\.bad\.example\.com" is invalid: /);
    const c = causes(st);
    assert.ok(c.includes(`${P}.properties[spec].type: Required value: must not be empty for specified object fields`), c.join('\n'));
    assert.ok(
      c.includes(
        `${P}.properties[extra].anyOf[0].properties[b]: Forbidden: must not specify anything other than nullable or description inside anyOf, allOf, oneOf, or not`,
      ) || c.some((x) => x.startsWith(`${P}.properties[extra].anyOf[0].properties[b]`)),
      c.join('\n'),
    );
  });

  it('a CEL rule that does not compile → 422 naming the rule', async () => {
    const st = status(
      await post(
        CRDS,
        crd('nocompile', {
          type: 'object',
          properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.min <= self.nope' }], properties: { min: { type: 'integer' } } } },
        }),
      ),
      422,
    );
    assert.equal(st.reason, 'Invalid');
    const c = causes(st);
    assert.equal(c.length, 1, c.join('\n'));
    // Upstream prints the rule struct with %#v, and cel-go's caret under the column.
    assert.equal(
      c[0],
      `${P}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.min <= self.nope", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:17: undefined field 'nope'\n | self.min <= self.nope\n | ................^`,
    );
  });

  it('a CEL rule over the cost budget → 422 Forbidden with the estimate', async () => {
    const st = status(
      await post(
        CRDS,
        crd('costly', {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              properties: {
                tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }] },
              },
            },
          },
        }),
      ),
      422,
    );
    assert.deepEqual(causes(st), [
      `${P}.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      `${P}.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule & messageExpression cost total exceeding cost limit`,
      `${P}: Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
    ]);
    assert.equal(st.details?.causes?.[0]?.reason, 'FieldValueForbidden');
  });

  const base = '/apis/bad.example.com/v1/namespaces/default/things';

  it('a good CRD is served', async () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }],
          properties: { min: { type: 'integer' }, max: { type: 'integer', maximum: 100 }, name: { type: 'string', maxLength: 5 } },
        },
      },
    };
    assert.equal((await post(CRDS, crd('thing', schema))).status, 201);
    await waitServed(raw, base);
    assert.equal((await raw.request({ path: base })).status, 200);
    assert.equal(
      (await post(base, JSON.stringify({ apiVersion: 'bad.example.com/v1', kind: 'Thing', metadata: { name: 'ok' }, spec: { min: 1, max: 2 } }))).status,
      201,
    );
  });

  it('objects violating the schema → 422 with one cause per field (create, merge patch, apply)', async () => {
    const st = status(
      await post(
        base,
        JSON.stringify({ apiVersion: 'bad.example.com/v1', kind: 'Thing', metadata: { name: 'bad' }, spec: { min: 'x', max: 200, name: 'toolong' } }),
      ),
      422,
    );
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details?.kind, 'Thing');
    assert.equal(st.details?.group, 'bad.example.com');
    assert.deepEqual(
      causes(st).sort(),
      [
        'spec.max: Invalid value: 200: spec.max in body should be less than or equal to 100',
        'spec.min: Invalid value: "string": spec.min in body must be of type integer: "string"',
        'spec.name: Too long: may not be more than 5 bytes',
        // A type error blocks the CEL rules (upstream's hasBlockingErr).
        '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ].sort(),
    );
    // A CEL rule failing on a merge patch.
    const patched = status(
      await raw.request({ method: 'PATCH', path: `${base}/ok`, headers: { 'content-type': 'application/merge-patch+json' }, body: '{"spec":{"min":50}}' }),
      422,
    );
    assert.match(patched.message, /^Thing\.bad\.example\.com "ok" is invalid: spec: Invalid value: (?:"object": )?min must not exceed max$/);
    // And through server-side apply.
    const applied = status(
      await raw.request({
        method: 'PATCH',
        path: `${base}/ok?fieldManager=t&force=true`,
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: 'apiVersion: bad.example.com/v1\nkind: Thing\nmetadata: {name: ok}\nspec: {max: 101}\n',
      }),
      422,
    );
    assert.equal(applied.message, 'Thing.bad.example.com "ok" is invalid: spec.max: Invalid value: 101: spec.max in body should be less than or equal to 100');
  });

  it('apply bodies that are not objects → 400 with the decoder message', async () => {
    for (const [body, type] of [
      ['[1, 2]', 'array'],
      ['"text"', 'string'],
      ['42', 'number'],
      ['true', 'bool'],
    ] as const) {
      const st = status(
        await raw.request({ method: 'PATCH', path: `${base}/ok?fieldManager=t`, headers: { 'content-type': 'application/apply-patch+yaml' }, body }),
        400,
      );
      assert.equal(st.reason, 'BadRequest');
      assert.equal(
        st.message,
        `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${type} into Go value of type map[string]interface {}`,
      );
    }
    const yaml = status(
      await raw.request({
        method: 'PATCH',
        path: `${base}/ok?fieldManager=t`,
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: 'spec: [unclosed',
      }),
      400,
    );
    assert.match(yaml.message, /^error decoding YAML: /);
    // An apply without a fieldManager is a 422 on PatchOptions.
    const noManager = status(
      await raw.request({ method: 'PATCH', path: `${base}/ok`, headers: { 'content-type': 'application/apply-patch+yaml' }, body: '{}' }),
      422,
    );
    assert.match(noManager.message, /PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch/);
    // Another kind in the body.
    const otherKind = status(
      await raw.request({
        method: 'PATCH',
        path: `${base}/ok?fieldManager=t`,
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n',
      }),
      400,
    );
    assert.equal(otherKind.reason, 'BadRequest');
  });

  it('int64s past 2^53 are kept exactly (create, update, merge and JSON patch, apply of YAML hex); past int64 they are float64s', async () => {
    // The CRD itself is a built-in kind, whose maximum is a float64 in kube too: it is accepted.
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            n: { type: 'integer' },
            f: { type: 'number' },
            g: { type: 'number', maximum: 9223372036854776000 },
            list: { type: 'array', items: { type: 'integer' } },
          },
        },
      },
    };
    const made0 = await post(CRDS, crd('big', schema).replace('"maximum":9223372036854776000', '"maximum":9223372036854775807'));
    assert.equal(made0.status, 201, made0.text());
    assert.match((await raw.request({ path: `${CRDS}/bigs.bad.example.com` })).text(), /"g":\{"type":"number","maximum":9223372036854776000\}/);
    const bigs = '/apis/bad.example.com/v1/namespaces/default/bigs';
    await waitServed(raw, bigs);
    const obj = (spec: string): string => `{"apiVersion":"bad.example.com/v1","kind":"Big","metadata":{"name":"b"},"spec":${spec}}`;
    const path = `${bigs}/b`;
    const spec = async (): Promise<string> => /"spec":(\{[^}]*\})/.exec((await raw.request({ path })).text())![1]!;
    const made = await post(bigs, obj('{"n":9007199254740993,"list":[1,-12345678901234567]}'));
    assert.equal(made.status, 201, made.text());
    assert.match(made.text(), /"spec":\{"n":9007199254740993,"list":\[1,-12345678901234567\]\}/);
    assert.equal(await spec(), '{"n":9007199254740993,"list":[1,-12345678901234567]}');
    const rv = (JSON.parse(made.text()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const put = await raw.request({
      method: 'PUT',
      path,
      headers: { 'content-type': 'application/json' },
      body: obj('{"n":9223372036854775807,"f":10000000000000000000}').replace('"name":"b"', `"name":"b","resourceVersion":"${rv}"`),
    });
    assert.equal(put.status, 200, put.text());
    assert.equal(await spec(), '{"n":9223372036854775807,"f":10000000000000000000}');
    const merged = await raw.request({
      method: 'PATCH',
      path,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"spec":{"list":[12345678901234567]}}',
    });
    assert.equal(merged.status, 200, merged.text());
    assert.equal(await spec(), '{"n":9223372036854775807,"f":10000000000000000000,"list":[12345678901234567]}');
    const patched = await raw.request({
      method: 'PATCH',
      path,
      headers: { 'content-type': 'application/json-patch+json' },
      body: '[{"op":"test","path":"/spec/n","value":9223372036854775807},{"op":"replace","path":"/spec/n","value":-9007199254740993}]',
    });
    assert.equal(patched.status, 200, patched.text());
    assert.match(await spec(), /^\{"n":-9007199254740993,/);
    const applied = await raw.request({
      method: 'PATCH',
      path: `${path}?fieldManager=t&force=true`,
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: 'apiVersion: bad.example.com/v1\nkind: Big\nmetadata: {name: b}\nspec:\n  list:\n  - 0x20000000000001\n',
    });
    assert.equal(applied.status, 200, applied.text());
    assert.match(await spec(), /"list":\[9007199254740993\]/);
    // Past int64, Go's unstructured decoder makes a float64 (written back as its shortest digits).
    const past = await raw.request({
      method: 'PATCH',
      path,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"spec":{"f":18446744073709551615}}',
    });
    assert.equal(past.status, 200, past.text());
    assert.match(await spec(), /"f":18446744073709552000/);
    // A string holding the digits is a string.
    assert.equal(
      (
        await raw.request({
          method: 'PATCH',
          path,
          headers: { 'content-type': 'application/merge-patch+json' },
          body: '{"metadata":{"annotations":{"id":"9007199254740993"}}}',
        })
      ).status,
      200,
    );
    assert.match((await raw.request({ path })).text(), /"id":"9007199254740993"/);
  });

  it('nesting deeper than the server processes → 400 BadRequest, not a 500; nothing stored', async () => {
    // A CRD schema nested 2,000 levels (each level two JSON levels: under Go's 10,000).
    let schema = '{"type":"string"}';
    for (let i = 0; i < 2_000; i++) schema = `{"type":"object","properties":{"a":${schema}}}`;
    const deepCrd = crd('deepschema', { type: 'object' }).replace('"openAPIV3Schema":{"type":"object"}', `"openAPIV3Schema":${schema}`);
    let st = status(await post(CRDS, deepCrd), 400);
    assert.equal(st.reason, 'BadRequest');
    assert.match(st.message, /nested too deeply/);
    assert.equal((await raw.request({ path: `${CRDS}/deepschemas.bad.example.com` })).status, 404);
    // A custom resource whose schema keeps unknown fields, 6,000 levels deep.
    assert.equal((await post(CRDS, crd('anydepth', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }))).status, 201);
    await waitServed(raw, '/apis/bad.example.com/v1/anydepths');
    const deep = `{"apiVersion":"bad.example.com/v1","kind":"Anydepth","metadata":{"name":"d"},"spec":${'{"a":'.repeat(6_000)}1${'}'.repeat(6_000)}}`;
    st = status(await post('/apis/bad.example.com/v1/namespaces/default/anydepths', deep), 400);
    assert.match(st.message, /nested too deeply/);
    assert.equal((await raw.request({ path: '/apis/bad.example.com/v1/namespaces/default/anydepths/d' })).status, 404);
    // Shallower ones are served as before.
    const ok = `{"apiVersion":"bad.example.com/v1","kind":"Anydepth","metadata":{"name":"ok"},"spec":${'{"a":'.repeat(500)}1${'}'.repeat(500)}}`;
    assert.equal((await post('/apis/bad.example.com/v1/namespaces/default/anydepths', ok)).status, 201);
  });

  it('the server is still up and the stored object unchanged', async () => {
    const r = await raw.request({ path: `${base}/ok` });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json<{ spec: unknown }>().spec, { min: 1, max: 2 });
    assert.equal((await raw.request({ path: '/healthz' })).status, 200);
    for (const n of ['nonstructs', 'nocompiles', 'costlys']) assert.equal((await raw.request({ path: `${CRDS}/${n}.bad.example.com` })).status, 404);
  });
});
