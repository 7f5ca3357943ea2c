// Two control planes in one process serve different kinds at the same time: everything about a
// kind (discovery, OpenAPI, protobuf mapping, Go field types) is registered on the control plane
// that serves it, never process-wide. One serves core + a test group (a Widget with a protobuf
// mapping and Go field types), the other core + coordination.k8s.io.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiVersionField, kind, kindField, listKind, objectMetaField, stringMap } from '../../src/apimachinery/definitions/util.js';
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE } from '../../src/apimachinery/protobuf/index.js';
import { ALL_VERBS } from '../../src/apimachinery/resource.js';
import { Scheme } from '../../src/apimachinery/scheme.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { coordination, core } from '../../src/controlplane/modules.js';
import { addToScheme, type ApiModule, type ResourceRegistration } from '../../src/registry/registry.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const WIDGET_DEF = 'io.kplane.test.v1.Widget';
const GV = { group: 'test.kplane.io', version: 'v1' };

// The Widget travels as a ConfigMap message (same fields), under its own apiVersion/kind.
const widgets: ResourceRegistration = {
  descriptor: {
    ...GV,
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    shortNames: ['wd'],
    categories: [],
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: [],
    definitionName: WIDGET_DEF,
  },
  strategy: {
    namespaced: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate() {},
    prepareForUpdate() {},
    validate: () => [],
    validateUpdate: () => [],
  },
  definitions: {
    [WIDGET_DEF]: kind({ ...GV, kind: 'Widget' }, 'A test kind.', {
      apiVersion: apiVersionField,
      data: stringMap('Values.'),
      kind: kindField,
      metadata: objectMetaField(),
    }),
    [WIDGET_DEF + 'List']: listKind(GV, WIDGET_DEF, 'Widget', 'The widgets.'),
  },
  protobuf: { kind: 'k8s.io.api.core.v1.ConfigMap', list: 'k8s.io.api.core.v1.ConfigMapList' },
  goFieldTypes: { [WIDGET_DEF]: { data: 'map[string]v1.WidgetValue' } },
  goTypedBody: true,
};

const widgetModule = (): ApiModule => ({ name: 'test.kplane.io', resources: [widgets] });

// What a client that knows both kinds decodes with; the servers each know only their own.
const clientScheme = new Scheme();
for (const m of [core(), coordination(), widgetModule()]) for (const r of m.resources) addToScheme(clientScheme, r);

const WIDGETS = '/apis/test.kplane.io/v1/namespaces/default/widgets';
const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const PB = { 'content-type': PROTOBUF_MEDIA_TYPE, accept: PROTOBUF_MEDIA_TYPE };

describe('two control planes in one process serving different kinds', () => {
  let a: TestServer;
  let b: TestServer;
  let ca: RawClient;
  let cb: RawClient;
  before(async () => {
    [a, b] = await Promise.all([
      startTestServer({ storage: 'memory', apis: [core(), widgetModule()] }),
      startTestServer({ storage: 'memory', apis: [core(), coordination()] }),
    ]);
    ca = new RawClient(a.url, adminCredentials(a.dataDir));
    cb = new RawClient(b.url, adminCredentials(b.dataDir));
  });
  after(async () => {
    ca?.agent.destroy();
    cb?.agent.destroy();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const pbBody = (o: KubeObject): Buffer => Buffer.from(encodeObject(o, clientScheme));
  const decoded = (r: RawResponse): KubeObject => decodeObject(r.body, clientScheme);

  it('each scheme holds its own kinds and the meta kinds', () => {
    for (const s of [a.cp.registry.scheme, b.cp.registry.scheme]) {
      assert.ok(s.isProtobufKind('v1', 'Status'));
      assert.ok(s.isProtobufKind('meta.k8s.io/v1', 'PartialObjectMetadataList'));
      assert.ok(s.isProtobufKind('apps/v1', 'DeleteOptions'));
      assert.ok(s.isProtobufKind('v1', 'ConfigMap'));
    }
    assert.ok(a.cp.registry.scheme.isProtobufKind('test.kplane.io/v1', 'Widget'));
    assert.ok(!a.cp.registry.scheme.isProtobufKind('coordination.k8s.io/v1', 'Lease'));
    assert.ok(b.cp.registry.scheme.isProtobufKind('coordination.k8s.io/v1', 'Lease'));
    assert.ok(!b.cp.registry.scheme.isProtobufKind('test.kplane.io/v1', 'Widget'));
    assert.ok(a.cp.registry.scheme.goFieldTypes.has(WIDGET_DEF));
    assert.ok(!b.cp.registry.scheme.goFieldTypes.has(WIDGET_DEF));
    assert.ok(b.cp.registry.scheme.goFieldTypes.has('io.k8s.api.coordination.v1.LeaseSpec'));
    assert.ok(!a.cp.registry.scheme.goFieldTypes.has('io.k8s.api.coordination.v1.LeaseSpec'));
  });

  it('discovery lists only the served groups', async () => {
    const [ga, gb] = await Promise.all([ca.request({ path: '/apis' }), cb.request({ path: '/apis' })]);
    const names = (r: RawResponse): string[] => r.json<{ groups: { name: string }[] }>().groups.map((g) => g.name);
    // authentication.k8s.io (TokenReview, SelfSubjectReview) is served by every control plane.
    assert.deepEqual(names(ga), ['authentication.k8s.io', 'test.kplane.io']);
    assert.deepEqual(names(gb), ['authentication.k8s.io', 'coordination.k8s.io']);
    const [wa, wb, la, lb] = await Promise.all([
      ca.request({ path: '/apis/test.kplane.io/v1' }),
      cb.request({ path: '/apis/test.kplane.io/v1' }),
      ca.request({ path: '/apis/coordination.k8s.io/v1' }),
      cb.request({ path: '/apis/coordination.k8s.io/v1' }),
    ]);
    assert.equal(wa.status, 200);
    assert.deepEqual(
      wa.json<{ resources: { name: string; shortNames?: string[] }[] }>().resources.map((r) => [r.name, r.shortNames]),
      [['widgets', ['wd']]],
    );
    assert.equal(wb.status, 404);
    assert.equal(la.status, 404);
    assert.equal(lb.status, 200);
  });

  it('each negotiates protobuf for its own kinds, at the same time', async () => {
    const widget = { apiVersion: 'test.kplane.io/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, data: { a: 'b' } };
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l1', namespace: 'default' }, spec: { holderIdentity: 'me' } };
    const [cw, cl] = await Promise.all([
      ca.request({ method: 'POST', path: WIDGETS, headers: PB, body: pbBody(widget) }),
      cb.request({ method: 'POST', path: LEASES, headers: PB, body: pbBody(lease) }),
    ]);
    assert.equal(cw.status, 201, cw.text());
    assert.equal(cl.status, 201, cl.text());
    assert.equal(cw.headers['content-type'], PROTOBUF_MEDIA_TYPE);
    const w = decoded(cw);
    assert.equal(w.kind, 'Widget');
    assert.equal(w.apiVersion, 'test.kplane.io/v1');
    assert.deepEqual(w.data, { a: 'b' });
    assert.equal(decoded(cl).kind, 'Lease');

    const [lw, ll] = await Promise.all([
      ca.request({ path: WIDGETS, headers: { accept: PROTOBUF_MEDIA_TYPE } }),
      cb.request({ path: LEASES, headers: { accept: PROTOBUF_MEDIA_TYPE } }),
    ]);
    assert.equal(lw.headers['content-type'], PROTOBUF_MEDIA_TYPE);
    const list = decoded(lw) as KubeObject & { items: KubeObject[] };
    assert.equal(list.kind, 'WidgetList');
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ['w1'],
    );
    assert.equal((decoded(ll) as KubeObject & { items: KubeObject[] }).items[0]?.metadata?.name, 'l1');

    // A protobuf envelope naming a kind the server does not serve is not registered there.
    const [foreignA, foreignB] = await Promise.all([
      ca.request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'content-type': PROTOBUF_MEDIA_TYPE }, body: pbBody(lease) }),
      cb.request({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', headers: { 'content-type': PROTOBUF_MEDIA_TYPE }, body: pbBody(widget) }),
    ]);
    assert.equal(foreignA.status, 400);
    assert.match(foreignA.json<{ message: string }>().message, /no kind "Lease" is registered for version "coordination.k8s.io\/v1"/);
    assert.equal(foreignB.status, 400);
    assert.match(foreignB.json<{ message: string }>().message, /no kind "Widget" is registered for version "test.kplane.io\/v1"/);
  });

  it('each checks bodies with its own Go field types', async () => {
    const [bw, bl] = await Promise.all([
      ca.request({
        method: 'POST',
        path: WIDGETS,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'test.kplane.io/v1', kind: 'Widget', metadata: { name: 'bad' }, data: { a: 1 } }),
      }),
      cb.request({
        method: 'POST',
        path: LEASES,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'bad' }, spec: { strategy: 1 } }),
      }),
    ]);
    assert.equal(bw.status, 400);
    assert.match(bw.json<{ message: string }>().message, /cannot unmarshal number into Go struct field Widget\.data of type v1\.WidgetValue/);
    assert.equal(bl.status, 400);
    assert.match(
      bl.json<{ message: string }>().message,
      /cannot unmarshal number into Go struct field LeaseSpec\.spec\.strategy of type v1\.CoordinatedLeaseStrategy/,
    );
  });

  it('each publishes only its own kinds in OpenAPI v2 and v3', async () => {
    const [va, vb] = await Promise.all([ca.request({ path: '/openapi/v2' }), cb.request({ path: '/openapi/v2' })]);
    const defs = (r: RawResponse): string[] => Object.keys(r.json<{ definitions: Record<string, unknown> }>().definitions);
    assert.ok(defs(va).includes(WIDGET_DEF));
    assert.ok(!defs(va).includes('io.k8s.api.coordination.v1.Lease'));
    assert.ok(defs(vb).includes('io.k8s.api.coordination.v1.Lease'));
    assert.ok(!defs(vb).includes(WIDGET_DEF));
    const [v3a, v3b] = await Promise.all([ca.request({ path: '/openapi/v3' }), cb.request({ path: '/openapi/v3' })]);
    const paths = (r: RawResponse): string[] => Object.keys(r.json<{ paths: Record<string, unknown> }>().paths);
    assert.ok(paths(v3a).includes('apis/test.kplane.io/v1'));
    assert.ok(!paths(v3a).includes('apis/coordination.k8s.io/v1'));
    assert.ok(paths(v3b).includes('apis/coordination.k8s.io/v1'));
    assert.ok(!paths(v3b).includes('apis/test.kplane.io/v1'));
  });
});
