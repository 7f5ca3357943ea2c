// The Accept header as kube-apiserver negotiates it (apiserver's NegotiateMediaTypeOptions over
// munnerz/goautoneg's ParseAccept): media types and parameters compared as sent (case kept), q=0
// clauses kept but sorted last, goautoneg's ordering (a concrete type before `*/*` even at a lower
// q), the serializers tried in the order JSON, YAML, protobuf, and the parameters an endpoint may
// refuse (`stream` without a stream serializer, `sv`, conversions it does not allow).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeObject as decodeWith } from '../../src/apimachinery/protobuf/index.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { builtinScheme } from '../../src/controlplane/modules.js';
import { waitServed } from '../support/crd.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
// A client's kind table: the built-in kinds.
const scheme = builtinScheme();
const decodeObject = (b: Uint8Array): KubeObject => decodeWith(b, scheme);

describe('Accept negotiation as kube-apiserver does it', () => {
  let srv: TestServer;
  let raw: RawClient;
  const get = (accept: string, path = `${CM}/neg`): Promise<RawResponse> => raw.request({ path, headers: { accept } });
  const contentType = (r: RawResponse): string => String(r.headers['content-type'] ?? '');

  before(async () => {
    srv = await startTestServer();
    raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    const res = await raw.request({
      method: 'POST',
      path: CM,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'neg' }, data: { a: 'b' } }),
    });
    assert.equal(res.status, 201, res.text());
  });
  after(async () => {
    raw.agent.destroy();
    await srv.stop();
  });

  it('compares media types as sent: Application/JSON names no serializer (406)', async () => {
    const res = await get('Application/JSON');
    assert.equal(res.status, 406, res.text());
    assert.equal(res.json<{ reason: string }>().reason, 'NotAcceptable');
    assert.equal((await get('application/json')).status, 200);
  });

  it("reads the first Accept header only, as Go's Header.Get does", async () => {
    // Two header lines: upstream sees `text/html` alone (406); joined, JSON would have been chosen.
    const two = await raw.request({ path: `${CM}/neg`, headers: { accept: ['text/html', 'application/json'] } });
    assert.equal(two.status, 406, two.text());
    assert.equal(two.json<{ reason: string }>().reason, 'NotAcceptable');
    const first = await raw.request({ path: `${CM}/neg`, headers: { accept: ['application/yaml', 'application/json'] } });
    assert.equal(first.status, 200, first.text());
    assert.match(contentType(first), /^application\/yaml/);
  });

  it('keeps a clause with q=0 (sorted last, still chosen when nothing else matches)', async () => {
    const res = await get('application/json;q=0');
    assert.equal(res.status, 200, res.text());
    assert.match(contentType(res), /^application\/json/);
    const yaml = await get('text/html, application/yaml;q=0');
    assert.equal(yaml.status, 200, yaml.text());
    assert.match(contentType(yaml), /^application\/yaml/);
  });

  it('orders as goautoneg does: a concrete type before */* even at a lower q', async () => {
    // Less(yaml;q=0.1, */*) holds (concrete before *), so YAML comes first.
    const res = await get('*/*, application/yaml;q=0.1');
    assert.equal(res.status, 200, res.text());
    assert.match(contentType(res), /^application\/yaml/);
    // With the higher q first, */* (JSON, the first serializer) wins.
    assert.match(contentType(await get('application/yaml;q=0.1, */*;q=1')), /^application\/json/);
    assert.match(contentType(await get('application/yaml;q=0.5, application/json')), /^application\/json/);
  });

  it('reads q as strconv.ParseFloat does: a value with spaces is 0', async () => {
    // "q= 0.9" does not parse (0), so the JSON clause (q=0.5) goes first.
    assert.match(contentType(await get('application/yaml;q= 0.9, application/json;q=0.5')), /^application\/json/);
    assert.match(contentType(await get('application/yaml;q=0.9, application/json;q=0.5')), /^application\/yaml/);
  });

  it('skips a clause whose parameters the endpoint refuses, and ignores unknown ones', async () => {
    // YAML has no stream serializer; stream=watch on JSON is allowed on a GET.
    assert.match(contentType(await get('application/yaml;stream=watch, application/json')), /^application\/json/);
    assert.equal((await get('application/json;stream=watch')).status, 200);
    assert.equal((await get('application/json;stream=other')).status, 406);
    assert.equal((await get('application/json;sv=v2')).status, 406);
    assert.equal((await get('application/json;sv=v1')).status, 200);
    assert.equal((await get('application/json;charset=utf-8;foo=bar')).status, 200);
    // Parameter values keep their quotes: as="Table" is no conversion kube knows.
    assert.equal((await get('application/json;as="Table";g=meta.k8s.io;v=v1')).status, 406);
    // Spaces around names and values are trimmed.
    const table = await get('application/json; as=Table ; g=meta.k8s.io ; v=v1');
    assert.equal(table.status, 200, table.text());
    assert.equal(table.json<{ kind: string }>().kind, 'Table');
  });

  it('pretty-prints for the pretty=1 media-type parameter', async () => {
    const res = await get('application/json;pretty=1');
    assert.equal(res.status, 200);
    assert.ok(res.text().startsWith('{\n  "kind": "ConfigMap"'), res.text().slice(0, 60));
    assert.ok(!(await get('application/json;pretty=0')).text().includes('\n  '));
  });

  it('serves PartialObjectMetadata(List) as protobuf', async () => {
    const one = await get('application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json');
    assert.equal(one.status, 200, one.text());
    assert.match(contentType(one), /^application\/vnd\.kubernetes\.protobuf/);
    const obj = decodeObject(one.body);
    assert.equal(obj.kind, 'PartialObjectMetadata');
    assert.equal(obj.apiVersion, 'meta.k8s.io/v1');
    assert.equal(obj.metadata?.name, 'neg');
    const list = await get('application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json', CM);
    assert.equal(list.status, 200, list.text());
    const l = decodeObject(list.body) as { kind?: string; items?: { metadata?: { name?: string } }[] };
    assert.equal(l.kind, 'PartialObjectMetadataList');
    assert.ok(l.items?.some((i) => i.metadata?.name === 'neg'));
  });

  it('a PartialObjectMetadata transform that does not fit the answer is a 406 naming the Go type, not the next clause', async () => {
    const one = await get('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json');
    assert.equal(one.status, 406, one.text());
    assert.equal(one.json<{ message: string }>().message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)');
    const list = await get('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json', CM);
    assert.equal(list.status, 406, list.text());
    assert.equal(list.json<{ message: string }>().message, 'you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)');
  });

  it('a custom resource asked for as protobuf first gets the next clause (no protobuf form without a transform)', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'negs.neg.example.com' },
      spec: {
        group: 'neg.example.com',
        scope: 'Namespaced',
        names: { plural: 'negs', kind: 'Neg' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    assert.equal(
      (
        await raw.request({
          method: 'POST',
          path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(crd),
        })
      ).status,
      201,
    );
    await waitServed(raw, '/apis/neg.example.com/v1/negs');
    const cr = await raw.request({
      method: 'POST',
      path: '/apis/neg.example.com/v1/namespaces/default/negs',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'neg.example.com/v1', kind: 'Neg', metadata: { name: 'n' } }),
    });
    assert.equal(cr.status, 201, cr.text());
    const res = await get('application/vnd.kubernetes.protobuf, application/json', '/apis/neg.example.com/v1/namespaces/default/negs/n');
    assert.equal(res.status, 200, res.text());
    assert.match(contentType(res), /^application\/json/);
    // Asked for protobuf only: no clause is left, upstream's 406 (not a JSON answer); the Status
    // itself has a protobuf form and is sent in it.
    const only = await get('application/vnd.kubernetes.protobuf', '/apis/neg.example.com/v1/namespaces/default/negs/n');
    assert.equal(only.status, 406);
    assert.equal(
      (decodeObject(only.body) as { message?: string }).message,
      'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    const pom = await get(
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
      '/apis/neg.example.com/v1/namespaces/default/negs/n',
    );
    assert.equal(pom.status, 200, pom.text());
    assert.equal(decodeObject(pom.body).kind, 'PartialObjectMetadata');
    const miss = await get('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', '/apis/neg.example.com/v1/namespaces/default/negs');
    assert.equal(
      miss.json<{ message: string }>().message,
      'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
    );
  });
});
