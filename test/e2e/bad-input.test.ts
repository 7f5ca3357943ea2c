// Robustness: malformed, oversized, mistyped and invalid request bodies get a kube Status with the
// right code and reason, the server stays up, and stored data does not change.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeObject as encodeWith, PROTOBUF_MEDIA_TYPE } from '../../src/apimachinery/protobuf/index.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { builtinScheme } from '../../src/controlplane/modules.js';
import { adminCredentials, RawClient, type KubeStatus, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A client's kind table: the built-in kinds.
const scheme = builtinScheme();
const encodeObject = (o: KubeObject): Uint8Array => encodeWith(o, scheme);
const KEEP_NS = 'keep';
const CM_PATH = `/api/v1/namespaces/${KEEP_NS}/configmaps`;
const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };

function assertStatus(res: RawResponse, code: number, reason: string, message?: string | RegExp): KubeStatus {
  assert.equal(res.status, code, `HTTP ${res.status}: ${res.text().slice(0, 500)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const s = res.json<KubeStatus>();
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason, s.message);
  if (typeof message === 'string') assert.equal(s.message, message);
  else if (message) assert.match(s.message ?? '', message);
  return s;
}

function cm(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' }, ...extra };
}

describe('bad input', { timeout: 90_000 }, () => {
  let server: TestServer;
  let client: RawClient;
  let pristine: Buffer;
  let pristineRv: string;

  const post = (body: Buffer | string, headers: Record<string, string> = JSON_CT, path = CM_PATH): Promise<RawResponse> =>
    client.request({ method: 'POST', path, headers, body });

  before(async () => {
    server = await startTestServer();
    client = new RawClient(server.url, adminCredentials(server.dataDir));
    const ns = await post(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: KEEP_NS } }), JSON_CT, '/api/v1/namespaces');
    assert.equal(ns.status, 201, ns.text());
    const created = await post(JSON.stringify(cm('pristine')));
    assert.equal(created.status, 201, created.text());
    const got = await client.request({ path: `${CM_PATH}/pristine`, headers: { accept: 'application/json' } });
    assert.equal(got.status, 200);
    pristine = got.body;
    pristineRv = got.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('malformed JSON → 400 BadRequest', async () => {
    for (const body of [
      '{',
      '{"apiVersion":"v1",',
      'not json at all',
      '{"a":1}}',
      '[1,2',
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},}',
      '\u0000\u0001',
    ]) {
      assertStatus(await post(body), 400, 'BadRequest');
    }
    // Named as upstream's transformDecodeError does: the kind it must be and the data's start.
    assertStatus(
      await post('{'),
      400,
      'BadRequest',
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({)",
    );
    assertStatus(
      await post(''),
      400,
      'BadRequest',
      "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)",
    );
    assertStatus(
      await post('not json at all, and longer than thirty bytes'),
      400,
      'BadRequest',
      /\(6e6f74206a736f6e20617420616c6c2c20616e64206c6f6e676572207468 \.\.\.\)$/,
    );
    // A JSON value that is not an object.
    assertStatus(await post('"just a string"'), 400, 'BadRequest');
    assertStatus(await post('null'), 400, 'BadRequest');
  });

  it("metadata that is not an object → 400 BadRequest with Go's decode error (found by the fuzz test)", async () => {
    const yaml = { 'content-type': 'application/yaml', accept: 'application/json' };
    for (const [body, headers, type] of [
      ['apiVersion: v1\nkind: ConfigMap\nmetadata:\n  n', yaml, 'string'],
      ['{"apiVersion":"v1","kind":"ConfigMap","metadata":"n"}', undefined, 'string'],
      ['{"apiVersion":"v1","kind":"ConfigMap","metadata":[1]}', undefined, 'array'],
      ['{"apiVersion":"v1","kind":"ConfigMap","metadata":7}', undefined, 'number'],
    ] as const) {
      assertStatus(
        await post(body, headers),
        400,
        'BadRequest',
        `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ${type} into Go struct field ConfigMap.metadata of type v1.ObjectMeta`,
      );
    }
  });

  it("a metadata field of the wrong type in a ConfigMap or Secret → 400 in the decoder's words, nothing stored", async () => {
    assertStatus(
      await post('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed-labels","labels":{"a":5}}}'),
      400,
      'BadRequest',
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    );
    assert.equal((await client.request({ path: `${CM_PATH}/typed-labels` })).status, 404);
    const secrets = CM_PATH.replace('/configmaps', '/secrets');
    const r = await client.request({
      method: 'POST',
      path: secrets,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","generation":"2"}}',
    });
    assertStatus(
      r,
      400,
      'BadRequest',
      'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64',
    );
  });

  it('a patch that makes metadata a string → 400 BadRequest, not a 500 (the kept object unchanged)', async () => {
    for (const [ct, body] of [
      ['application/merge-patch+json', '{"metadata":"n"}'],
      ['application/strategic-merge-patch+json', '{"metadata":"n"}'],
      ['application/json-patch+json', '[{"op":"replace","path":"/metadata","value":"n"}]'],
    ] as const) {
      const r = await client.request({ method: 'PATCH', path: `${CM_PATH}/pristine`, headers: { 'content-type': ct, accept: 'application/json' }, body });
      assertStatus(
        r,
        400,
        'BadRequest',
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta',
      );
    }
  });

  it("a merge or strategic merge patch that is not an object → 400 in upstream's words (handlers/patch.go)", async () => {
    const patch = (ct: string, body: string, query = ''): Promise<RawResponse> =>
      client.request({ method: 'PATCH', path: `${CM_PATH}/pristine${query}`, headers: { 'content-type': ct, accept: 'application/json' }, body });
    const MERGE = 'application/merge-patch+json';
    const SMP = 'application/strategic-merge-patch+json';
    // Warn (the default) and Strict decode a merge patch into a map first (kjson.UnmarshalStrict).
    assertStatus(
      await patch(MERGE, '"x"'),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}',
    );
    assertStatus(
      await patch(MERGE, '[1]', '?fieldValidation=Strict'),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}',
    );
    assertStatus(await patch(MERGE, '{"data":'), 400, 'BadRequest', 'error decoding patch: unexpected end of JSON input');
    // null decodes into a map; jsonpatch.MergePatch refuses it, and with Ignore every bad patch, as ErrBadJSONPatch.
    assertStatus(await patch(MERGE, 'null'), 400, 'BadRequest', 'Invalid JSON Patch');
    assertStatus(await patch(MERGE, '1', '?fieldValidation=Ignore'), 400, 'BadRequest', 'Invalid JSON Patch');
    assertStatus(await patch(MERGE, '{"data":', '?fieldValidation=Ignore'), 400, 'BadRequest', 'Invalid JSON Patch');
    // strategicPatchObject answers with the decoder's error itself, in every mode.
    assertStatus(await patch(SMP, 'true'), 400, 'BadRequest', 'json: cannot unmarshal bool into Go value of type map[string]interface {}');
    assertStatus(
      await patch(SMP, '5', '?fieldValidation=Ignore'),
      400,
      'BadRequest',
      'json: cannot unmarshal number into Go value of type map[string]interface {}',
    );
    const kept = await client.request({ path: `${CM_PATH}/pristine`, headers: { accept: 'application/json' } });
    assert.equal(kept.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion, pristineRv);
    // A strategic null decodes to a nil map, which patches nothing (in another namespace: this one
    // must hold only the pristine configmap).
    const other = '/api/v1/namespaces/default/configmaps';
    assert.equal((await post(JSON.stringify(cm('smp-null')), JSON_CT, other)).status, 201);
    const r = await client.request({ method: 'PATCH', path: `${other}/smp-null`, headers: { 'content-type': SMP, accept: 'application/json' }, body: 'null' });
    assert.equal(r.status, 200, r.text());
    assert.deepEqual(r.json<{ data: unknown }>().data, { a: 'b' });
  });

  it('empty body → 400 BadRequest', async () => {
    assertStatus(await post(''), 400, 'BadRequest');
  });

  it('malformed YAML → 400 BadRequest', async () => {
    const h = { 'content-type': 'application/yaml', accept: 'application/json' };
    for (const body of ['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n', 'a: b: c', '\tkey: [unclosed', 'key: "unterminated', '- a\nb: c']) {
      assertStatus(await post(body, h), 400, 'BadRequest');
    }
    // Deep YAML nesting must not overflow the stack.
    assertStatus(await post('['.repeat(100_000), h), 400, 'BadRequest');
    assertStatus(await post('a: ' + '['.repeat(50_000) + ']'.repeat(50_000), h), 400, 'BadRequest');
  });

  it('malformed protobuf → 400 BadRequest', async () => {
    const h = { 'content-type': PROTOBUF_MEDIA_TYPE, accept: 'application/json' };
    const valid = Buffer.from(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'proto-never', namespace: KEEP_NS }, data: { a: 'b' } }));
    // Garbage without the k8s\0 magic.
    assertStatus(await post(Buffer.from('this is not protobuf'), h), 400, 'BadRequest');
    // Magic followed by garbage.
    assertStatus(await post(Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12])]), h), 400, 'BadRequest');
    // Truncated valid messages: every cut inside the envelope or object.
    for (const cut of [3, 4, 5, 8, valid.length - 20, valid.length - 3, valid.length - 1]) {
      const res = await post(valid.subarray(0, cut), h);
      assert.ok([400, 422].includes(res.status), `cut ${cut}: ${res.status} ${res.text()}`);
      assertStatus(res, res.status, res.status === 400 ? 'BadRequest' : 'Invalid');
    }
    // A valid protobuf of the wrong kind.
    const ns = Buffer.from(encodeObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'nope' } }));
    assertStatus(await post(ns, h), 400, 'BadRequest', /Namespace.*ConfigMap/);
  });

  it('body over the 3 MiB default → 413 RequestEntityTooLarge', async () => {
    const big = JSON.stringify(cm('too-big', { data: { a: 'x'.repeat(3 * 1024 * 1024) } }));
    assertStatus(await post(big), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    // Chunked (no content-length), growing past the limit: 64 KiB chunks up to 6 MiB.
    let sent = 0;
    async function* chunks(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"chunked"},"data":{"a":"');
      const piece = Buffer.alloc(64 * 1024, 'y');
      while (sent < 6 * 1024 * 1024) {
        sent += piece.length;
        yield piece;
      }
      yield Buffer.from('"}}');
    }
    const res = await client.request({ method: 'POST', path: CM_PATH, headers: { ...JSON_CT, 'transfer-encoding': 'chunked' }, body: chunks() });
    assertStatus(res, 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
  });

  it('a smaller maxRequestBodyBytes is enforced for declared and chunked bodies', async () => {
    // Above the largest object the server writes itself at start (the bootstrap RBAC policy goes
    // through the same handlers, and so under the same limit, as upstream's loopback writes).
    const small = await startTestServer({ storage: 'memory', maxRequestBodyBytes: 16_384 });
    const c = new RawClient(small.url, { ca: small.cp.pki.caCertPem, cert: small.cp.pki.adminCertPem, key: small.cp.pki.adminKeyPem });
    try {
      const p = '/api/v1/namespaces/default/configmaps';
      const ok = await c.request({ method: 'POST', path: p, headers: JSON_CT, body: JSON.stringify(cm('fits')) });
      assert.equal(ok.status, 201, ok.text());
      const over = await c.request({ method: 'POST', path: p, headers: JSON_CT, body: JSON.stringify(cm('over', { data: { a: 'x'.repeat(20_000) } })) });
      assertStatus(over, 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 16384');
      async function* grow(): AsyncGenerator<Buffer> {
        yield Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"grow"},"data":{"a":"');
        for (let i = 0; i < 128; i++) yield Buffer.alloc(256, 'z');
        yield Buffer.from('"}}');
      }
      const chunked = await c.request({ method: 'POST', path: p, headers: { ...JSON_CT, 'transfer-encoding': 'chunked' }, body: grow() });
      assertStatus(chunked, 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 16384');
      // Updates are limited too.
      const put = await c.request({
        method: 'PUT',
        path: `${p}/fits`,
        headers: JSON_CT,
        body: JSON.stringify(cm('fits', { data: { a: 'x'.repeat(40_000) } })),
      });
      assertStatus(put, 413, 'RequestEntityTooLarge');
      const still = await c.request({ path: `${p}/fits` });
      assert.equal(still.status, 200);
      assert.deepEqual(still.json<{ data: unknown }>().data, { a: 'b' });
      assert.equal((await c.request({ path: `${p}/over` })).status, 404);
      assert.equal((await c.request({ path: `${p}/grow` })).status, 404);
    } finally {
      c.close();
      await small.stop();
    }
  });

  it('deeply nested JSON (100k levels) → 400, no crash', async () => {
    const depth = 100_000;
    const objects = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    assertStatus(await post(objects), 400, 'BadRequest', /max depth/);
    const arrays = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    assertStatus(await post(arrays), 400, 'BadRequest', /max depth/);
    // Unterminated nesting as well.
    assertStatus(await post('['.repeat(depth)), 400, 'BadRequest');
  });

  it('invalid name → 422 Invalid with the DNS-1123 subdomain message', async () => {
    const s = assertStatus(
      await post(JSON.stringify(cm('Foo_Bar'))),
      422,
      'Invalid',
      `ConfigMap "Foo_Bar" is invalid: metadata.name: Invalid value: "Foo_Bar": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    assert.equal(s.details?.causes?.[0]?.field, 'metadata.name');
    assert.equal(s.details?.causes?.[0]?.reason, 'FieldValueInvalid');
    assert.equal((s.details as { name?: string; kind?: string }).name, 'Foo_Bar');
    assert.equal((s.details as { name?: string; kind?: string }).kind, 'ConfigMap');
    assertStatus(await post(JSON.stringify(cm('x'.repeat(254)))), 422, 'Invalid', /must be no more than 253 characters/);
    assertStatus(await post(JSON.stringify(cm(''))), 422, 'Invalid', /metadata.name: Required value: name or generateName is required/);
  });

  it('invalid label value → 422 Invalid', async () => {
    const s = assertStatus(
      await post(JSON.stringify(cm('bad-label', { metadata: { name: 'bad-label', labels: { app: 'bad value!' } } }))),
      422,
      'Invalid',
      `ConfigMap "bad-label" is invalid: metadata.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
    assert.equal(s.details?.causes?.[0]?.field, 'metadata.labels');
    assertStatus(
      await post(JSON.stringify(cm('bad-label-key', { metadata: { name: 'bad-label-key', labels: { 'a b': 'x' } } }))),
      422,
      'Invalid',
      /metadata.labels: Invalid value: "a b"/,
    );
  });

  it('wrong content types → 415 UnsupportedMediaType', async () => {
    const body = JSON.stringify(cm('wrong-ct'));
    assertStatus(
      await post(body, { 'content-type': 'text/plain', accept: 'application/json' }),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    // A Content-Type that does not parse, or a YAML alias without a serializer, is no JSON either.
    for (const ct of ['garbage', 'application/x-yaml', 'text/yaml']) {
      assertStatus(
        await post(body, { 'content-type': ct, accept: 'application/json' }),
        415,
        'UnsupportedMediaType',
        'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      );
    }
    // A built-in PATCH route consumes only the patch types: go-restful's own 415 (it runs before the handler).
    assertStatus(
      await client.request({ method: 'PATCH', path: `${CM_PATH}/pristine`, headers: JSON_CT, body: '{"data":{"a":"changed"}}' }),
      415,
      'UnsupportedMediaType',
      '415: Unsupported Media Type',
    );
    // A merge patch body that is not JSON is a 400, and changes nothing.
    assertStatus(
      await client.request({ method: 'PATCH', path: `${CM_PATH}/pristine`, headers: { 'content-type': 'application/merge-patch+json' }, body: '{"data":' }),
      400,
      'BadRequest',
    );
  });

  it('fieldValidation=Strict: unknown and duplicate fields → 400', async () => {
    // Reported in document order, like upstream's strict decoder.
    const unknown = '{"apiVersion":"v1","kind":"ConfigMap","foo":1,"metadata":{"name":"strict-unknown","labelz":{"a":"b"}},"data":{"a":"b"}}';
    assertStatus(
      await post(unknown, JSON_CT, `${CM_PATH}?fieldValidation=Strict`),
      400,
      'BadRequest',
      'strict decoding error: unknown field "foo", unknown field "metadata.labelz"',
    );
    // A YAML body is converted to JSON first, through a Go map, so its keys come sorted
    // (field_validation_test.go: "spec.template..." before "spec.unknown1").
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict-yaml\n  labelz: {a: b}\nfoo: 1\n';
    assertStatus(
      await post(yaml, { 'content-type': 'application/yaml' }, `${CM_PATH}?fieldValidation=Strict`),
      400,
      'BadRequest',
      'strict decoding error: unknown field "foo", unknown field "metadata.labelz"',
    );
    const dup = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"strict-dup"},"data":{"a":"1"},"data":{"b":"2"}}';
    assertStatus(await post(dup, JSON_CT, `${CM_PATH}?fieldValidation=Strict`), 400, 'BadRequest', 'strict decoding error: duplicate field "data"');
    // ValidateCreateOptions: a 422 on CreateOptions, as upstream.
    assertStatus(
      await post(JSON.stringify(cm('fv-bad')), JSON_CT, `${CM_PATH}?fieldValidation=Sometimes`),
      422,
      'Invalid',
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Sometimes": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });

  it('fieldValidation=Warn: 201 with a Warning header', async () => {
    const body = JSON.stringify({ ...cm('warned'), foo: 1 });
    const res = await post(body, JSON_CT, '/api/v1/namespaces/default/configmaps?fieldValidation=Warn');
    assert.equal(res.status, 201, res.text());
    assert.equal(res.headers.warning, '299 - "unknown field \\"foo\\""');
    assert.equal(res.json().foo, undefined, 'unknown fields are dropped');
    const stored = await client.request({ path: '/api/v1/namespaces/default/configmaps/warned' });
    assert.equal(stored.status, 200);
    assert.equal(stored.json().foo, undefined, 'unknown fields are not stored');
    // Ignore: no warning, and still not stored.
    const ignored = await post(
      JSON.stringify({ ...cm('ignored'), foo: 1, metadata: { name: 'ignored', labelz: {} } }),
      JSON_CT,
      '/api/v1/namespaces/default/configmaps?fieldValidation=Ignore',
    );
    assert.equal(ignored.status, 201, ignored.text());
    assert.equal(ignored.headers.warning, undefined);
    assert.equal(ignored.json().foo, undefined);
    assert.equal((ignored.json().metadata as Record<string, unknown>).labelz, undefined);
  });

  it('the server is alive and the stored configmap is byte-identical', async () => {
    const got = await client.request({ path: `${CM_PATH}/pristine`, headers: { accept: 'application/json' } });
    assert.equal(got.status, 200);
    assert.equal(got.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion, pristineRv);
    assert.ok(got.body.equals(pristine), 'stored configmap changed');
    const list = await client.request({ path: CM_PATH });
    assert.equal(list.status, 200);
    const names = list.json<{ items: { metadata: { name: string } }[] }>().items.map((i) => i.metadata.name);
    assert.deepEqual(names, ['pristine'], 'no bad request created anything');
  });

  it('fuzz: random bodies never get a 500 or a hang', { timeout: 60_000 }, async () => {
    const ns = 'default';
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    let n = 0;
    const baseJson = (name: string): string => JSON.stringify(cm(name, { metadata: { name, labels: { app: 'fuzz' } } }));
    const baseYaml = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    app: fuzz\ndata:\n  a: b\n`;
    const baseProto = (name: string): Buffer =>
      Buffer.from(encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'fuzz' } }, data: { a: 'b' } }));
    type Mut = { kind: 'delete' | 'insert' | 'replace' | 'truncate' | 'duplicate'; at: number; byte: number; len: number };
    const mutation = fc.record({
      kind: fc.constantFrom<Mut['kind']>('delete', 'insert', 'replace', 'truncate', 'duplicate'),
      at: fc.nat(),
      byte: fc.integer({ min: 0, max: 255 }),
      len: fc.integer({ min: 1, max: 16 }),
    });
    const mutate = (b: Buffer, muts: readonly Mut[]): Buffer => {
      let out = b;
      for (const m of muts) {
        const at = out.length ? m.at % out.length : 0;
        if (m.kind === 'delete') out = Buffer.concat([out.subarray(0, at), out.subarray(at + m.len)]);
        else if (m.kind === 'insert') out = Buffer.concat([out.subarray(0, at), Buffer.alloc(m.len, m.byte), out.subarray(at)]);
        else if (m.kind === 'replace') {
          out = Buffer.from(out);
          for (let i = at; i < Math.min(out.length, at + m.len); i++) out[i] = m.byte;
        } else if (m.kind === 'truncate') out = out.subarray(0, at);
        else out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + m.len), out.subarray(at)]);
      }
      return out;
    };
    const contentType = fc.constantFrom('application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE, 'text/plain', 'application/json; charset=utf-8', '');
    const randomObject = fc.record(
      {
        apiVersion: fc.oneof(fc.constant('v1'), fc.string()),
        kind: fc.oneof(fc.constant('ConfigMap'), fc.string()),
        metadata: fc.record(
          {
            name: fc.oneof(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/), fc.string()),
            labels: fc.dictionary(fc.string({ maxLength: 70 }), fc.string({ maxLength: 70 }), { maxKeys: 3 }),
          },
          { requiredKeys: [] },
        ),
        data: fc.oneof(fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }), fc.jsonValue({ maxDepth: 3 })),
      },
      { requiredKeys: [] },
    );
    const input = fc.oneof(
      fc.record({ source: fc.constant('bytes' as const), ct: contentType, bytes: fc.uint8Array({ maxLength: 512 }) }),
      fc.record({
        source: fc.constantFrom('json' as const, 'yaml' as const, 'proto' as const),
        ct: contentType,
        muts: fc.array(mutation, { minLength: 0, maxLength: 3 }),
      }),
      fc.record({ source: fc.constant('object' as const), ct: fc.constantFrom('application/json', 'application/yaml'), obj: randomObject }),
    );
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(input, async (inp) => {
        const name = `fz-${n++}`;
        let body: Buffer;
        let ct = inp.ct;
        if (inp.source === 'bytes') body = Buffer.from(inp.bytes);
        else if (inp.source === 'object') body = Buffer.from(ct === 'application/yaml' ? JSON.stringify(inp.obj) : JSON.stringify(inp.obj));
        else {
          const base = inp.source === 'json' ? Buffer.from(baseJson(name)) : inp.source === 'yaml' ? Buffer.from(baseYaml(name)) : baseProto(name);
          if (inp.muts.length === 0) ct = inp.source === 'json' ? 'application/json' : inp.source === 'yaml' ? 'application/yaml' : PROTOBUF_MEDIA_TYPE;
          body = mutate(base, inp.muts);
        }
        const headers: Record<string, string> = { accept: 'application/json' };
        if (ct) headers['content-type'] = ct;
        const res = await client.request({ method: 'POST', path, headers, body, timeoutMs: 10_000 });
        seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
        if (res.status === 201) {
          const o = res.json<{ kind?: string; metadata?: { resourceVersion?: string; uid?: string } }>();
          assert.equal(o.kind, 'ConfigMap');
          assert.ok(o.metadata?.resourceVersion && o.metadata.uid);
          return;
        }
        // 409: a mutation may land on a name an earlier run already created.
        assert.ok(
          [400, 409, 413, 415, 422].includes(res.status),
          `${res.status} for ${ct} ${JSON.stringify(body.subarray(0, 200).toString('latin1'))}: ${res.text().slice(0, 300)}`,
        );
        const s = res.json<KubeStatus>();
        assert.equal(s.kind, 'Status');
        assert.equal(s.status, 'Failure');
        assert.equal(s.code, res.status);
        // Unmutated valid bodies with a known content type must succeed.
        if (inp.source !== 'bytes' && inp.source !== 'object' && inp.muts.length === 0) assert.fail(`valid ${inp.source} body refused: ${res.text()}`);
      }),
      { numRuns: 600, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
    );
    assert.ok((seen.get(201) ?? 0) > 0, `some fuzz inputs succeed: ${JSON.stringify([...seen])}`);
    assert.ok((seen.get(400) ?? 0) > 0, `some fuzz inputs fail: ${JSON.stringify([...seen])}`);
    const alive = await client.request({ path: '/readyz' });
    assert.equal(alive.status, 200);
    const list = await client.request({ path: `${path}?labelSelector=app%3Dfuzz` });
    assert.equal(list.status, 200);
    for (const item of list.json<{ items: { metadata: { resourceVersion?: string } }[] }>().items) assert.ok(item.metadata.resourceVersion);
  });
});
