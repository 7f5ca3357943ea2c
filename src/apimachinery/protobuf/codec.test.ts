import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { StatusError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { parseJSONExact, stringifyJSON } from '../../golang/json-int64.js';
import { builtinScheme } from '../../controlplane/modules.js';
import {
  decodeObject as decodeWith,
  decodeWatchEvent as decodeWatchEventWith,
  decodeWatchFrames as decodeWatchFramesWith,
  encodeObject as encodeWith,
  encodeWatchEvent as encodeWatchEventWith,
  NOT_ACCEPTABLE_MESSAGE,
  PROTOBUF_MAGIC,
  splitWatchFrames,
  type WatchEventType,
} from './index.js';

// The codec takes a control plane's kind table; these tests use one with every built-in kind.
const scheme = builtinScheme();
const encodeObject = (o: KubeObject): Uint8Array => encodeWith(o, scheme);
const decodeObject = (b: Uint8Array, defaults?: { apiVersion?: string; kind?: string }): KubeObject => decodeWith(b, scheme, defaults);
const encodeWatchEvent = (type: WatchEventType, o: KubeObject): Uint8Array => encodeWatchEventWith(type, o, scheme);
const decodeWatchEvent = (frame: Uint8Array): ReturnType<typeof decodeWatchEventWith> => decodeWatchEventWith(frame, scheme);
const decodeWatchFrames = (b: Uint8Array): ReturnType<typeof decodeWatchFramesWith> => decodeWatchFramesWith(b, scheme);
const isProtobufKind = (apiVersion: string, kind: string): boolean => scheme.isProtobufKind(apiVersion, kind);
const protobufKinds = (): ReturnType<typeof scheme.protobufKinds> => scheme.protobufKinds();

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const ascii = (s: string): string => Buffer.from(s).toString('hex');
// Fixtures are loose JSON (e.g. ListMeta fields in `metadata`), as objects on the wire are.
type Obj = Record<string, unknown>;
const enc = (o: Obj): Uint8Array => encodeObject(o);
const rt = (o: Obj): KubeObject => decodeObject(enc(o));

function assertBadRequest(fn: () => unknown, includes?: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    if (typeof includes === 'string') assert.ok(e.message.includes(includes), `message ${JSON.stringify(e.message)} lacks ${JSON.stringify(includes)}`);
    else if (includes) assert.match(e.message, includes);
    return;
  }
  assert.fail('expected a BadRequest StatusError');
}

const meta = {
  name: 'n1',
  generateName: 'n',
  namespace: 'ns1',
  selfLink: '/api/v1/x',
  uid: '3f1e2b8c-0000-4000-8000-000000000001',
  resourceVersion: '42',
  generation: 3,
  creationTimestamp: '2024-02-29T23:59:59Z',
  deletionTimestamp: '2024-03-01T00:00:30Z',
  deletionGracePeriodSeconds: 30,
  labels: { app: 'web', 'example.com/tier': 'front' },
  annotations: { note: 'ünïcødé ✓ 🚀', empty: '' },
  ownerReferences: [
    { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-1', controller: true, blockOwnerDeletion: false },
    { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u-2' },
  ],
  finalizers: ['a/b', 'kubernetes'],
  managedFields: [
    {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:data': { 'k:{"name":"x"}': { '.': {} } } },
      subresource: 'status',
    },
  ],
};

const full: Record<string, Obj> = {
  Namespace: {
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { ...meta, namespace: undefined },
    spec: { finalizers: ['kubernetes'] },
    status: {
      phase: 'Terminating',
      conditions: [
        { type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'ContentDeleted', message: 'ok' },
        { type: 'NamespaceContentRemaining', status: 'Unknown', lastTransitionTime: null },
      ],
    },
  },
  ConfigMap: {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: meta,
    immutable: false,
    data: { 'a.txt': 'hello', __proto__x: 'y', '': 'empty key' },
    binaryData: { 'b.bin': Buffer.from([0, 1, 2, 255]).toString('base64'), 'empty.bin': '' },
  },
  Secret: {
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: meta,
    immutable: true,
    data: { password: Buffer.from('s3cr3t\0\xff').toString('base64') },
    stringData: { user: 'admin' },
    type: 'kubernetes.io/basic-auth',
  },
  ServiceAccount: {
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    metadata: meta,
    secrets: [{ kind: 'Secret', namespace: 'ns1', name: 'tok', uid: 'u', apiVersion: 'v1', resourceVersion: '1', fieldPath: 'data' }, { name: 'other' }],
    imagePullSecrets: [{ name: 'regcred' }, {}],
    automountServiceAccountToken: false,
  },
  Event: {
    kind: 'Event',
    apiVersion: 'v1',
    metadata: meta,
    involvedObject: { kind: 'Pod', namespace: 'ns1', name: 'p', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{c}' },
    reason: 'Started',
    message: 'Started container c',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2024-01-01T00:00:01Z',
    lastTimestamp: '2024-01-01T00:00:09Z',
    count: 5,
    type: 'Normal',
    eventTime: '2024-01-01T00:00:01.123456Z',
    series: { count: 4, lastObservedTime: '2024-01-01T00:00:09.000001Z' },
    action: 'Start',
    related: { kind: 'Node', name: 'node-1', apiVersion: 'v1' },
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  },
  EventsV1: {
    kind: 'Event',
    apiVersion: 'events.k8s.io/v1',
    metadata: meta,
    eventTime: '2024-05-06T07:08:09.999999Z',
    series: { count: 2, lastObservedTime: '2024-05-06T07:08:10.000000Z' },
    reportingController: 'example.com/ctrl',
    reportingInstance: 'ctrl-0',
    action: 'Reconcile',
    reason: 'Synced',
    regarding: { kind: 'ConfigMap', namespace: 'ns1', name: 'cm' },
    related: { kind: 'Secret', name: 's' },
    note: 'all good',
    type: 'Warning',
    deprecatedSource: { component: 'c', host: 'h' },
    deprecatedFirstTimestamp: '2024-05-06T07:08:09Z',
    deprecatedLastTimestamp: '2024-05-06T07:08:10Z',
    deprecatedCount: 2,
  },
  Lease: {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: meta,
    spec: {
      holderIdentity: 'node-1_abc',
      leaseDurationSeconds: 15,
      acquireTime: '2024-01-01T00:00:00.000000Z',
      renewTime: '2024-01-01T00:00:10.500000Z',
      leaseTransitions: 0,
      strategy: 'OldestEmulationVersion',
      preferredHolder: 'node-2',
    },
  },
  Status: {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', continue: 'tok', remainingItemCount: 0, selfLink: '/x' },
    status: 'Failure',
    message: 'ConfigMap "x" is invalid: data: Invalid value',
    reason: 'Invalid',
    details: {
      name: 'x',
      group: 'apps',
      kind: 'ConfigMap',
      uid: 'u',
      causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'data' }, {}],
      retryAfterSeconds: 3,
    },
    code: 422,
  },
  DeleteOptions: {
    kind: 'DeleteOptions',
    apiVersion: 'meta.k8s.io/v1',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u', resourceVersion: '' },
    orphanDependents: false,
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
    ignoreStoreReadErrorWithClusterBreakingPotential: true,
  },
  PartialObjectMetadata: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta },
};

// List items carry no apiVersion/kind in protobuf (nor in kube's JSON lists).
function itemOf(o: Obj): Obj {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}
const listMeta = { resourceVersion: '100', continue: 'c', remainingItemCount: 12 };
const lists: Obj[] = [
  ['v1', 'NamespaceList', full.Namespace],
  ['v1', 'ConfigMapList', full.ConfigMap],
  ['v1', 'SecretList', full.Secret],
  ['v1', 'ServiceAccountList', full.ServiceAccount],
  ['v1', 'EventList', full.Event],
  ['events.k8s.io/v1', 'EventList', full.EventsV1],
  ['coordination.k8s.io/v1', 'LeaseList', full.Lease],
  ['meta.k8s.io/v1', 'PartialObjectMetadataList', full.PartialObjectMetadata],
  ['meta.k8s.io/v1beta1', 'PartialObjectMetadataList', full.PartialObjectMetadata],
].map(([apiVersion, kind, item]) => ({
  kind: kind as string,
  apiVersion: apiVersion as string,
  metadata: listMeta,
  items: [itemOf(item as Obj), itemOf(item as Obj)],
}));

describe('protobuf codec: round trips', () => {
  for (const [name, obj] of Object.entries(full)) {
    it(`${name} with every field set`, () => {
      const expected = structuredClone(obj);
      // undefined values are absent in JSON
      if (name === 'Namespace') delete (expected.metadata as Record<string, unknown>).namespace;
      assert.deepEqual(rt(obj), JSON.parse(JSON.stringify(expected)));
    });
  }
  for (const list of lists) {
    it(`${String(list.apiVersion)} ${String(list.kind)} with two items`, () => {
      assert.deepEqual(rt(list), JSON.parse(JSON.stringify(list)));
    });
  }
  it('empty lists decode with items: [] and metadata: {}', () => {
    assert.deepEqual(rt({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: {}, items: [] }), {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: {},
      items: [],
    });
  });
  it('every registered kind survives a minimal object', () => {
    for (const { apiVersion, kind } of protobufKinds()) {
      if (kind === 'WatchEvent') continue;
      const out = rt({ apiVersion, kind, metadata: { name: 'x' } });
      assert.equal(out.kind, kind);
      assert.equal(out.apiVersion, apiVersion);
    }
  });
  it('DeleteOptions is accepted in any group version, as upstream registers it everywhere', () => {
    const o = { kind: 'DeleteOptions', apiVersion: 'apps/v1', propagationPolicy: 'Background', dryRun: [] };
    assert.ok(isProtobufKind('apps/v1', 'DeleteOptions'));
    assert.deepEqual(rt(o), { kind: 'DeleteOptions', apiVersion: 'apps/v1', propagationPolicy: 'Background' });
  });
  it('long strings and values over 128 bytes (multi-byte length prefixes) survive', () => {
    const big = 'x'.repeat(70000);
    const o = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'big', annotations: { a: 'é'.repeat(300) } }, data: { big, small: 'y'.repeat(200) } };
    assert.deepEqual(rt(o), o);
  });
  it('property: random ConfigMaps round-trip', () => {
    const key = fc.stringMatching(/^[-._a-zA-Z0-9]{1,20}$/);
    fc.assert(
      fc.property(
        fc.record(
          {
            name: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/),
            labels: fc.dictionary(key, fc.string({ maxLength: 30 }), { minKeys: 1, noNullPrototype: true }),
            data: fc.dictionary(key, fc.string({ unit: 'grapheme', maxLength: 200 }), { minKeys: 1, noNullPrototype: true }),
            binaryData: fc.dictionary(
              key,
              fc.uint8Array({ maxLength: 50 }).map((b) => Buffer.from(b).toString('base64')),
              { minKeys: 1, noNullPrototype: true },
            ),
            immutable: fc.boolean(),
            generation: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          },
          { requiredKeys: ['name'] },
        ),
        (r) => {
          const o: Obj = {
            kind: 'ConfigMap',
            apiVersion: 'v1',
            metadata: { name: r.name, ...(r.labels && { labels: r.labels }), ...(r.generation && { generation: r.generation }) },
            ...(r.immutable !== undefined && { immutable: r.immutable }),
            ...(r.data && { data: r.data }),
            ...(r.binaryData && { binaryData: r.binaryData }),
          };
          assert.deepEqual(rt(o), o);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('protobuf codec: Go struct semantics', () => {
  it('omitempty zeros vanish, non-omitempty fields and value structs appear, pointers keep zeros', () => {
    const ev = rt({ kind: 'Event', apiVersion: 'v1', metadata: { name: 'e', generation: 0, uid: '' }, count: 0, reason: '' });
    assert.deepEqual(ev, {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e' },
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    });
    const lease = rt({ kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { name: 'l' }, spec: { leaseDurationSeconds: 0, holderIdentity: '' } });
    assert.deepEqual(lease.spec, { leaseDurationSeconds: 0, holderIdentity: '' });
    const ev2 = rt({ kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: { name: 'e' }, series: { count: 0 } });
    assert.deepEqual(ev2.series, { count: 0, lastObservedTime: null });
    assert.deepEqual(ev2.eventTime, null);
    assert.deepEqual(ev2.regarding, {});
    const ref = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', ownerReferences: [{ name: 'o' }] } });
    assert.deepEqual((ref.metadata as Record<string, unknown>).ownerReferences, [{ apiVersion: '', kind: '', name: 'o', uid: '' }]);
  });
  it('empty maps are absent after a round trip (Go decodes them to nil)', () => {
    const o = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', labels: {} }, data: {} });
    assert.deepEqual(o, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' } });
  });
  it('creationTimestamp: a null/zero time is omitted (omitzero), deletionTimestamp null kept (pointer)', () => {
    const o = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: null } });
    assert.deepEqual(o.metadata, { name: 'c' });
    const z = rt({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', creationTimestamp: '0001-01-01T00:00:00Z', deletionTimestamp: '0001-01-01T00:00:00Z' },
    });
    assert.deepEqual(z.metadata, { name: 'c', deletionTimestamp: null });
  });
  it('Time keeps seconds only; MicroTime keeps microseconds; offsets normalise to UTC', () => {
    const o = rt({
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e' },
      firstTimestamp: '2024-01-01T10:00:00.987654321+02:00',
      eventTime: '2024-01-01T10:00:00.987654321+02:00',
      lastTimestamp: '1970-01-01T00:00:00Z',
    });
    assert.equal(o.firstTimestamp, '2024-01-01T08:00:00Z');
    assert.equal(o.eventTime, '2024-01-01T08:00:00.987654Z');
    assert.equal(o.lastTimestamp, '1970-01-01T00:00:00Z');
    const early = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: '0099-12-31T23:59:59Z' } });
    assert.equal((early.metadata as Record<string, unknown>).creationTimestamp, '0099-12-31T23:59:59Z');
  });
  it('FieldsV1 travels as raw JSON bytes', () => {
    const bytes = enc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { managedFields: [{ fieldsV1: { 'f:data': {} } }] } });
    assert.ok(hex(bytes).includes('3a0f0a0d' + ascii('{"f:data":{}}')));
  });
  it('"__proto__" map keys stay data, not prototypes', () => {
    const data = JSON.parse('{"__proto__":"x","a":"b"}') as Record<string, string>;
    const o = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c' }, data });
    assert.deepEqual(Object.keys(o.data as object), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(o.data), Object.prototype);
  });
});

describe('protobuf codec: golden bytes', () => {
  it('a small ConfigMap, derived by hand from the field tags', () => {
    const bytes = enc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } });
    const objectMeta =
      '0a01' +
      ascii('a') + // name = 1
      '1200' + // generateName = 2 (Go writes value fields even when empty)
      '1a02' +
      ascii('ns') + // namespace = 3
      '2200' +
      '2a00' +
      '3200' + // selfLink, uid, resourceVersion
      '3800' + // generation = 7 (varint 0)
      '4200'; // creationTimestamp = 8, zero Time marshals to nothing
    const configMap =
      '0a13' +
      objectMeta + // metadata = 1, 19 bytes
      '1206' +
      '0a01' +
      ascii('k') +
      '1201' +
      ascii('v'); // data = 2, one map entry {key=1, value=2}
    const expected =
      '6b387300' + // k8s\0
      '0a0f' +
      '0a02' +
      ascii('v1') +
      '1209' +
      ascii('ConfigMap') + // typeMeta = 1 {apiVersion = 1, kind = 2}
      '121d' +
      configMap + // raw = 2, 29 bytes
      '1a00' +
      '2200'; // contentEncoding = 3, contentType = 4
    assert.equal(hex(bytes), expected);
    assert.deepEqual(decodeObject(Buffer.from(expected, 'hex')), {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'a', namespace: 'ns' },
      data: { k: 'v' },
    });
  });
  it("negative int64 is a 10-byte two's complement varint", () => {
    const b = enc({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: -1 });
    assert.ok(hex(b).includes('08ffffffffffffffffff01'));
    assert.equal(rt({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: -1 }).gracePeriodSeconds, -1);
  });
  it('int64s past 2^53 (bigints) travel exactly, in fields and in raw JSON', () => {
    for (const g of [9223372036854775807n, -9223372036854775808n, 9007199254740993n, -9007199254740993n]) {
      const b = enc({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: g });
      assert.equal(rt({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: g }).gracePeriodSeconds, g);
      assert.ok(b.length > 0);
    }
    // 2^63-1: field 1 varint 0x7fffffffffffffff (nine bytes)
    assert.ok(hex(enc({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 9223372036854775807n })).includes('08ffffffffffffffff7f'));
    // A safe integer stays a number.
    assert.equal(rt({ kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 2 ** 53 - 1 }).gracePeriodSeconds, 2 ** 53 - 1);
    const managed = rt({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', managedFields: [{ fieldsV1: { 'f:data': {} } }] } });
    assert.deepEqual(managed.metadata?.managedFields?.[0]?.fieldsV1, { 'f:data': {} });
  });

  // kubernetes/api testdata/HEAD: protobuf and JSON of the same object, written by Go. Read from a
  // local mirror of github.com/kubernetes/api when one is present (KPLANE_K8S_API_REPO or the
  // default path); not vendored here.
  const repo = process.env.KPLANE_K8S_API_REPO ?? '/work/.mirror/kubernetes+api/repo';
  const fixtures = [
    'core.v1.ConfigMap',
    'core.v1.Secret',
    'core.v1.Namespace',
    'core.v1.ServiceAccount',
    'core.v1.Event',
    'events.k8s.io.v1.Event',
    'coordination.k8s.io.v1.Lease',
  ];
  const show = (p: string): Buffer => execFileSync('git', ['-C', repo, 'show', `HEAD:testdata/HEAD/${p}`], { maxBuffer: 1 << 24 });
  for (const f of fixtures) {
    it(`upstream fixture ${f}: identical bytes and identical JSON`, { skip: existsSync(repo) ? false : `no kubernetes/api checkout at ${repo}` }, () => {
      const json = parseJSONExact(show(`${f}.json`).toString('utf8')) as KubeObject;
      const pb = show(`${f}.pb`);
      assert.equal(hex(enc(json)), hex(pb));
      const decoded = decodeObject(pb);
      assert.deepEqual(decoded, json);
      // same key order as Go's encoding/json too
      assert.equal(stringifyJSON(decoded), stringifyJSON(json));
    });
  }
});

describe('protobuf codec: watch', () => {
  const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '5' }, data: { k: 'v' } };
  it('a frame is a big-endian length and a bare WatchEvent whose object.raw is an enveloped object', () => {
    const frame = Buffer.from(encodeWatchEvent('ADDED', cm));
    assert.equal(frame.readUInt32BE(0), frame.length - 4);
    const body = frame.subarray(4);
    const env = Buffer.from(enc(cm));
    // WatchEvent{type = 1: "ADDED", object = 2: RawExtension{raw = 1: env}} — no magic in front
    const raw = Buffer.concat([Buffer.from([0x0a, env.length]), env]);
    const expected = Buffer.concat([Buffer.from('0a05' + ascii('ADDED'), 'hex'), Buffer.from([0x12, raw.length]), raw]);
    assert.equal(hex(body), hex(expected));
    assert.deepEqual(decodeWatchEvent(body), { type: 'ADDED', object: decodeObject(env) });
  });
  it('streams of frames decode, including BOOKMARK and ERROR(Status)', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old resource version: 1 (5)',
      reason: 'Expired',
      code: 410,
    };
    const bookmark = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    const stream = Buffer.concat([
      encodeWatchEvent('ADDED', cm),
      encodeWatchEvent('DELETED', cm),
      encodeWatchEvent('BOOKMARK', bookmark),
      encodeWatchEvent('ERROR', status),
    ]);
    const events = decodeWatchFrames(stream);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'DELETED', 'BOOKMARK', 'ERROR'],
    );
    assert.deepEqual(events[0]!.object, cm);
    assert.deepEqual(events[2]!.object, bookmark);
    assert.deepEqual(events[3]!.object, status);
    const { frames, rest } = splitWatchFrames(stream.subarray(0, stream.length - 3));
    assert.equal(frames.length, 3);
    assert.ok(rest.length > 0);
    assertBadRequest(() => decodeWatchFrames(stream.subarray(0, stream.length - 3)), 'incomplete watch frame');
  });
  it('large objects in watch frames (multi-byte lengths at three levels)', () => {
    const big = { ...cm, data: { k: 'v'.repeat(300000) } };
    assert.deepEqual(decodeWatchFrames(encodeWatchEvent('MODIFIED', big))[0]!.object, big);
  });
  it('WatchEvent is also a registered kind (any group version)', () => {
    const we = { kind: 'WatchEvent', apiVersion: 'apps/v1', type: 'ADDED', object: cm };
    assert.deepEqual(rt(we), we);
    assert.deepEqual(rt({ kind: 'WatchEvent', apiVersion: 'meta.k8s.io/v1', type: 'ADDED', object: { some: 'json' } }).object, { some: 'json' });
  });
});

describe('protobuf codec: kinds without protobuf', () => {
  it('custom resources and Table answer 406 like kube-apiserver', () => {
    for (const o of [
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      { apiVersion: 'meta.k8s.io/v1', kind: 'Table', columnDefinitions: [], rows: [] },
    ]) {
      assert.equal(isProtobufKind(o.apiVersion, o.kind), false);
      assert.throws(
        () => enc(o),
        (e: unknown) => e instanceof StatusError && e.code === 406 && e.reason === 'NotAcceptable' && e.message === NOT_ACCEPTABLE_MESSAGE,
      );
      assert.throws(
        () => encodeWatchEvent('ADDED', o),
        (e: unknown) => e instanceof StatusError && e.code === 406,
      );
    }
  });
  it('objects no Go struct could hold are internal errors naming the field', () => {
    assert.throws(
      () => enc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 7 as unknown as string } }),
      (e: unknown) => e instanceof StatusError && e.code === 500 && /metadata\.name: expected string, got number/.test(e.message),
    );
    assert.throws(
      () => enc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { creationTimestamp: 'yesterday' } }),
      (e: unknown) => e instanceof StatusError && e.code === 500 && e.message.includes('metadata.creationTimestamp: invalid time "yesterday"'),
    );
  });
});

describe('protobuf codec: malformed input', () => {
  const good = Buffer.from(enc(full.ConfigMap!));
  it('envelope checks with upstream messages', () => {
    assertBadRequest(() => decodeObject(new Uint8Array(0)), 'empty data');
    assertBadRequest(
      () => decodeObject(Buffer.from('{"kind":"ConfigMap"}')),
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
    assertBadRequest(() => decodeObject(PROTOBUF_MAGIC), 'empty body');
    assertBadRequest(
      () => decodeObject(Buffer.from('6b387300' + '0a07' + '0a02' + ascii('v1') + '1201' + ascii('X'), 'hex')),
      'no kind "X" is registered for version "v1"',
    );
    assertBadRequest(() => decodeObject(Buffer.from('6b387300' + '0a04' + '0a02' + ascii('v1'), 'hex')), "Object 'Kind' is missing");
  });
  it('the request kind fills a missing envelope kind (copyKindDefaults)', () => {
    const noTypeMeta = Buffer.from('6b387300' + '1200', 'hex');
    assert.deepEqual(decodeObject(noTypeMeta, { apiVersion: 'v1', kind: 'ConfigMap' }), { kind: 'ConfigMap', apiVersion: 'v1', metadata: {} });
  });
  it('truncation at every byte inside typeMeta or raw is a BadRequest', () => {
    // cuts at the envelope's own field boundaries leave a valid (shorter) message, as in Go
    const typeMetaEnd = 4 + 2 + 15;
    const rawEnd = good.length - 4;
    for (let i = 1; i < rawEnd; i++) if (i !== typeMetaEnd) assertBadRequest(() => decodeObject(good.subarray(0, i)));
    assert.deepEqual(decodeObject(good.subarray(0, rawEnd)), decodeObject(good));
  });
  it('truncated inner message names the field', () => {
    // raw announces 29 bytes but metadata inside says 0x7f
    const bad = Buffer.from('6b387300' + '0a0f0a02' + ascii('v1') + '1209' + ascii('ConfigMap') + '1203' + '0a7f00', 'hex');
    assertBadRequest(() => decodeObject(bad), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: unexpected EOF (field metadata)');
  });
  it('wrong wire type names the field', () => {
    const bad = Buffer.from('6b387300' + '0a0f0a02' + ascii('v1') + '1209' + ascii('ConfigMap') + '1204' + '0a020801', 'hex');
    assertBadRequest(() => decodeObject(bad), 'proto: wrong wireType = 0 for field name (field metadata.name)');
  });
  it('huge and negative length prefixes, varint overflow, illegal wire types', () => {
    const head = '6b387300' + '0a0f0a02' + ascii('v1') + '1209' + ascii('ConfigMap');
    assertBadRequest(() => decodeObject(Buffer.from(head + '12ffffffff0f', 'hex')), 'unexpected EOF');
    assertBadRequest(() => decodeObject(Buffer.from(head + '12ffffffffffffffffff01', 'hex')), 'negative length');
    assertBadRequest(() => decodeObject(Buffer.from(head + '12ffffffffffffffffffff01', 'hex')), 'integer overflow');
    assertBadRequest(() => decodeObject(Buffer.from(head + '1202' + '4f00', 'hex')), 'illegal wireType 7');
    assertBadRequest(() => decodeObject(Buffer.from(head + '1202' + '0f00', 'hex')), 'wrong wireType = 7 for field metadata');
    assertBadRequest(() => decodeObject(Buffer.from(head + '1201' + '0c', 'hex')), 'wiretype end group for non-group');
    assertBadRequest(() => decodeObject(Buffer.from(head + '1202' + '0000', 'hex')), 'illegal tag 0');
  });
  it('deeply nested groups in unknown fields are skipped without recursion', () => {
    const depth = 1_000_000;
    const body = Buffer.concat([Buffer.alloc(depth, 0x4b), Buffer.alloc(depth, 0x4c)]); // field 9 start/end group
    const env = Buffer.concat([
      Buffer.from('6b387300' + '0a0f0a02' + ascii('v1') + '1209' + ascii('ConfigMap'), 'hex'),
      Buffer.from([0x12]),
      lenVarint(body.length),
      body,
    ]);
    assert.deepEqual(decodeObject(env), { kind: 'ConfigMap', apiVersion: 'v1', metadata: {} });
    const unbalanced = Buffer.concat([env.subarray(0, env.length - 1)]);
    assertBadRequest(() => decodeObject(unbalanced));
  });
  it('deeply nested envelopes (watch events of watch events) are refused', () => {
    let o: KubeObject = { kind: 'ConfigMap', apiVersion: 'v1', metadata: {} };
    for (let i = 0; i < 40; i++) o = { kind: 'WatchEvent', apiVersion: 'meta.k8s.io/v1', type: 'ADDED', object: o };
    assert.throws(
      () => enc(o),
      (e: unknown) => e instanceof StatusError && e.code === 500,
    );
    // hand-build the same nesting on the wire
    let inner = Buffer.from(enc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: {} }));
    for (let i = 0; i < 40; i++) {
      const raw = Buffer.concat([Buffer.from([0x0a]), lenVarint(inner.length), inner]);
      const we = Buffer.concat([Buffer.from('0a05' + ascii('ADDED'), 'hex'), Buffer.from([0x12]), lenVarint(raw.length), raw]);
      const tm = Buffer.from('0a02' + ascii('v1') + '120a' + ascii('WatchEvent'), 'hex');
      inner = Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, tm.length]), tm, Buffer.from([0x12]), lenVarint(we.length), we]);
    }
    assertBadRequest(() => decodeObject(inner), 'nested too deeply');
  });
  it('invalid FieldsV1 JSON and out-of-range times are BadRequests', () => {
    const b = Buffer.from(enc({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { managedFields: [{ fieldsV1: { a: 1 } }] } }));
    const i = b.indexOf(Buffer.from('{"a":1}'));
    b[i] = 0x5b; // '['
    assertBadRequest(() => decodeObject(b), /invalid FieldsV1 JSON.*field metadata\.managedFields\.fieldsV1/);
    const far = Buffer.from('6b387300' + '0a0f0a02' + ascii('v1') + '1209' + ascii('ConfigMap') + '120b' + '0a09' + '4207' + '08ffffffffff07', 'hex');
    assertBadRequest(() => decodeObject(far), 'year outside of range');
  });
  it('fuzz: arbitrary bytes only ever throw BadRequest StatusErrors', () => {
    const check = (b: Uint8Array): void => {
      try {
        decodeObject(b);
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 400) throw e;
      }
      try {
        decodeWatchFrames(b);
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 400) throw e;
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), check), { numRuns: 3000 });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (tail) => check(Buffer.concat([PROTOBUF_MAGIC, tail]))),
      { numRuns: 3000 },
    );
    // mutations of valid encodings reach deep into the schema
    const seeds = [...Object.values(full), ...lists].map((o) => Buffer.from(enc(o)));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: seeds.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
        fc.option(fc.nat(), { nil: undefined }),
        (s, edits, cut) => {
          const b = Buffer.from(seeds[s]!);
          for (const [pos, val] of edits) b[4 + (pos % (b.length - 4))] = val;
          check(cut === undefined ? b : b.subarray(0, cut % (b.length + 1)));
        },
      ),
      { numRuns: 5000 },
    );
  });
});

function lenVarint(n: number): Buffer {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

describe('protobuf codec: ResourceQuota (map<string, Quantity>)', () => {
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q', namespace: 'ns' },
    spec: {
      hard: { 'count/configmaps': '2', cpu: '500m' },
      scopes: ['BestEffort'],
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
    },
    status: { hard: { 'count/configmaps': '2', cpu: '500m' }, used: { 'count/configmaps': '0', cpu: '0' } },
  };
  it('round-trips hard, scopes, scopeSelector and used', () => {
    assert.deepEqual(rt(quota), quota);
  });
  it('without a status: status is {} (a value struct), scopeSelector absent (a pointer)', () => {
    const out = rt({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { secrets: '1' } } });
    assert.deepEqual(out.status, {});
    assert.deepEqual(out.spec, { hard: { secrets: '1' } });
  });
  it('a map value is a Quantity message {string = 1}', () => {
    const bytes = hex(enc({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, status: { used: { a: '1' } } }));
    // status = 3 { used = 2 { key = 1 "a", value = 2 { string = 1 "1" } } }
    const entry = '0a01' + ascii('a') + '1203' + '0a01' + ascii('1');
    assert.ok(bytes.includes('1a0a' + '1208' + entry), bytes);
  });
});
