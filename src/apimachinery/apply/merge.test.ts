// apply/update as kube-apiserver's field manager does them, against the real built-in schemas.
// Expectations follow k8s.io/apimachinery/pkg/util/managedfields (fieldmanager_test.go,
// conflict_test.go, lastappliedmanager_test.go, skipnonapplied_test.go, capmanagers_test.go) and
// what a real cluster records for the same requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import { StatusError } from '../errors.js';
import type { OpenAPISchema } from '../schema.js';
import type { KubeObject, ManagedFieldsEntry } from '../types.js';
import { FieldSet, makePath } from './fieldpath.js';
import { LAST_APPLIED_ANNOTATION, MAX_UPDATE_MANAGERS, apply, update, type ApplyOptions } from './merge.js';

const defs = builtinDefinitions;
const ref = (name: string): OpenAPISchema => ({ $ref: '#/definitions/' + name });
const CM = ref('io.k8s.api.core.v1.ConfigMap');
const NS = ref('io.k8s.api.core.v1.Namespace');
const LEASE = ref('io.k8s.api.coordination.v1.Lease');
const EVENT = ref('io.k8s.api.core.v1.Event');
const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:01:00Z';

/** A ConfigMap; empty data is left out (applying `data: {}` would own `.data` itself). */
function cm(data: Record<string, string>, meta: Record<string, unknown> = {}): KubeObject {
  const o: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', ...meta } };
  return Object.keys(data).length ? { ...o, data } : o;
}

function applyCM(live: KubeObject | undefined, config: KubeObject, manager: string, extra: Partial<ApplyOptions> = {}) {
  return apply({ live, config, manager, schema: CM, defs, apiVersion: 'v1', kind: 'ConfigMap', now: T1, ...extra });
}

/** create through an Update (e.g. kubectl create / client-side apply), as the registry will call it. */
function created(obj: KubeObject, manager: string, schema: OpenAPISchema = CM, apiVersion = 'v1'): KubeObject {
  const managedFields = update({ old: undefined, new: obj, manager, schema, defs, apiVersion, now: T0 });
  return { ...obj, metadata: { ...obj.metadata, uid: 'uid-1', ...(managedFields ? { managedFields } : {}) } };
}

function entries(o: KubeObject | ManagedFieldsEntry[] | undefined): Record<string, unknown> {
  const list = Array.isArray(o) ? o : (o?.metadata?.managedFields ?? []);
  return Object.fromEntries(list.map((e) => [`${e.manager}/${e.operation}${e.subresource ? '/' + e.subresource : ''}`, e.fieldsV1]));
}

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

test('create by Update records every field with "." for containers it created (kubectl create)', () => {
  const live = created(cm({ key: 'a' }, { labels: { app: 'x' } }), 'kubectl-create');
  assert.deepEqual(live.metadata!.managedFields, [
    {
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'v1',
      time: T0,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { '.': {}, 'f:key': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
    },
  ]);
});

test('conflict with a client-side-apply owner: 409 with upstream message and one cause per field', () => {
  const live = created(cm({ key: 'a' }), 'kubectl-client-side-apply');
  const err = statusOf(() => applyCM(live, cm({ key: 'b' }), 'mgr'));
  assert.deepEqual(err.status, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    reason: 'Conflict',
    code: 409,
    message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key',
    details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using v1', field: '.data.key' }] },
  });
});

test('several conflicts are grouped by manager, sorted; appliers print without a version', () => {
  let live = created(cm({ a: '1', b: '2' }, { labels: { app: 'x' } }), 'foo');
  live = applyCM(live, cm({}, { labels: { app: 'x' } }), 'bar').object;
  const err = statusOf(() => applyCM(live, cm({ a: '9', b: '9' }, { labels: { app: 'y' } }), 'mine'));
  // foo created the label too, so it conflicts with both owners.
  assert.equal(
    err.status.message,
    'Apply failed with 4 conflicts: conflicts with "bar":\n- .metadata.labels.app\nconflicts with "foo" using v1:\n- .data.a\n- .data.b\n- .metadata.labels.app',
  );
  assert.deepEqual(
    err.status.details!.causes!.map((c) => `${c.message} ${c.field}`),
    [
      'conflict with "bar" .metadata.labels.app',
      'conflict with "foo" using v1 .data.a',
      'conflict with "foo" using v1 .data.b',
      'conflict with "foo" using v1 .metadata.labels.app',
    ],
  );
});

test('force takes the conflicting fields; the old owner keeps the rest', () => {
  const live = created(cm({ key: 'a', other: 'o' }), 'kubectl-client-side-apply');
  const r = applyCM(live, cm({ key: 'b' }), 'mgr', { force: true });
  assert.deepEqual(r.object.data, { key: 'b', other: 'o' });
  assert.deepEqual(entries(r.object), {
    'mgr/Apply': { 'f:data': { 'f:key': {} } },
    'kubectl-client-side-apply/Update': { 'f:data': { '.': {}, 'f:other': {} } },
  });
  assert.equal(r.changed, true);
});

test('kubectl --server-side takes over from client-side apply through the last-applied annotation', () => {
  const lastApplied = '{"apiVersion":"v1","data":{"key":"a"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"cm","namespace":"default"}}\n';
  const live = created(cm({ key: 'a' }, { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } }), 'kubectl-client-side-apply');
  const r = applyCM(live, cm({ key: 'b' }), 'kubectl');
  assert.equal(r.object.data!['key' as never], 'b');
  // The annotation follows the applied configuration, so client-side apply still works afterwards.
  assert.equal(
    r.object.metadata!.annotations![LAST_APPLIED_ANNOTATION],
    '{"apiVersion":"v1","data":{"key":"b"},"kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"}}\n',
  );
  assert.deepEqual(entries(r.object)['kubectl/Apply'], { 'f:data': { 'f:key': {} } });
  // Any other manager still conflicts.
  assert.equal(statusOf(() => applyCM(live, cm({ key: 'b' }), 'someone')).status.code, 409);
});

test('kubectl takeover still conflicts on fields changed since the last client-side apply', () => {
  const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { key: 'a' }, metadata: { name: 'cm' } });
  let live = created(cm({ key: 'a' }, { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } }), 'kubectl-client-side-apply');
  const edited = cm({ key: 'edited' }, { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } });
  const mf = update({ old: live, new: edited, manager: 'kubectl-edit', schema: CM, defs, apiVersion: 'v1', now: T0 });
  live = { ...edited, metadata: { ...edited.metadata, uid: 'uid-1', managedFields: mf! } };
  const err = statusOf(() => applyCM(live, cm({ key: 'b' }), 'kubectl'));
  assert.equal(err.status.message, 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.key');
});

test('first apply to an object without managedFields gives its existing fields to "before-first-apply"', () => {
  const live: KubeObject = {
    ...cm({ key: 'a', keep: 'k' }, { labels: { l: 'v' } }),
    metadata: { name: 'cm', namespace: 'default', uid: 'u', labels: { l: 'v' } },
  };
  const conflictErr = statusOf(() => applyCM(live, cm({ key: 'b' }), 'mgr'));
  assert.equal(conflictErr.status.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.key');
  const r = applyCM(live, cm({ key: 'a', mine: 'm' }), 'mgr');
  assert.deepEqual(entries(r.object), {
    'mgr/Apply': { 'f:data': { 'f:key': {}, 'f:mine': {} } },
    'before-first-apply/Update': { 'f:data': { '.': {}, 'f:keep': {}, 'f:key': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
  });
});

test('updates to an untracked existing object stay untracked; [] in the request resets managedFields', () => {
  const untracked: KubeObject = { ...cm({ a: '1' }), metadata: { name: 'cm', uid: 'u' } };
  assert.equal(update({ old: untracked, new: cm({ a: '2' }), manager: 'm', schema: CM, defs, apiVersion: 'v1', now: T0 }), undefined);
  const live = created(cm({ a: '1' }), 'm');
  const reset = { ...cm({ a: '2' }), metadata: { name: 'cm', managedFields: [] } };
  assert.equal(update({ old: live, new: reset, manager: 'm', schema: CM, defs, apiVersion: 'v1', now: T0 }), undefined);
  const resetOne = { ...cm({ a: '2' }), metadata: { name: 'cm', managedFields: [{}] } };
  assert.equal(update({ old: live, new: resetOne, manager: 'm', schema: CM, defs, apiVersion: 'v1', now: T0 }), undefined);
});

test('update reads managedFields from the request when valid, else keeps the stored ones', () => {
  const live = created(cm({ a: '1', b: '2' }), 'creator');
  const handEdited: ManagedFieldsEntry[] = [
    { manager: 'claimed', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } },
  ];
  const viaRequest = update({
    old: live,
    new: { ...cm({ a: '1', b: '2' }), metadata: { name: 'cm', managedFields: handEdited } },
    manager: 'x',
    schema: CM,
    defs,
    apiVersion: 'v1',
    now: T1,
  });
  assert.deepEqual(entries(viaRequest), { 'claimed/Update': { 'f:data': { 'f:a': {} } } });
  const garbage = [{ manager: 'bad', operation: 'Frobnicate' }] as unknown as ManagedFieldsEntry[];
  const viaLive = update({
    old: live,
    new: { ...cm({ a: '1', b: '3' }), metadata: { name: 'cm', managedFields: garbage } },
    manager: 'x',
    schema: CM,
    defs,
    apiVersion: 'v1',
    now: T1,
  });
  assert.deepEqual(entries(viaLive), { 'creator/Update': { 'f:data': { '.': {}, 'f:a': {} } }, 'x/Update': { 'f:data': { 'f:b': {} } } });
});

test('a label the applier stops applying is removed; one owned by another manager stays', () => {
  let live = applyCM(undefined, cm({}, { labels: { a: '1', b: '2' } }), 'one').object;
  live = applyCM(live, cm({}, { labels: { b: '2', c: '3' } }), 'two').object;
  const r = applyCM(live, cm({}, { labels: {} }), 'one');
  assert.deepEqual(r.object.metadata!.labels, { b: '2', c: '3' });
  const r2 = applyCM(r.object, cm({}), 'two');
  assert.equal(r2.object.metadata!.labels, undefined, 'empty labels map is pruned with its last owned key');
});

test('ownerReferences merge by uid across appliers; each item is atomic', () => {
  const owner = (uid: string, name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
  let live = applyCM(undefined, cm({}, { ownerReferences: [owner('1', 'a')] }), 'one').object;
  live = applyCM(live, cm({}, { ownerReferences: [owner('2', 'b')] }), 'two').object;
  assert.deepEqual(live.metadata!.ownerReferences, [owner('1', 'a'), owner('2', 'b')]);
  assert.deepEqual(entries(live)['one/Apply'], { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"1"}': {} } } });
  const err = statusOf(() => applyCM(live, cm({}, { ownerReferences: [owner('1', 'renamed')] }), 'two'));
  assert.equal(err.status.message, 'Apply failed with 1 conflict: conflict with "one": .metadata.ownerReferences[uid="1"]');
});

test('identity and type fields are never owned; an apply of only those leaves no entry', () => {
  const r = applyCM(undefined, cm({}), 'mgr');
  assert.equal(r.managedFields, undefined);
  assert.equal(r.object.metadata!.managedFields, undefined);
  assert.deepEqual(r.object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } });
});

test('a no-op apply changes nothing and keeps the entry time; a shared owner is added without a time change of others', () => {
  const first = applyCM(undefined, cm({ k: 'v' }), 'mgr', { now: T0 });
  const again = applyCM(first.object, cm({ k: 'v' }), 'mgr', { now: T1 });
  assert.equal(again.changed, false);
  assert.deepEqual(again.managedFields, first.managedFields);
  const shared = applyCM(first.object, cm({ k: 'v' }), 'other', { now: T1 });
  // No time sorts as 0, so the untimed entry comes first.
  assert.deepEqual(Object.keys(entries(shared.object)), ['other/Apply', 'mgr/Apply']);
  assert.equal(shared.managedFields!.find((e) => e.manager === 'other')!.time, undefined, 'upstream only stamps an applier whose apply changed the object');
});

test('subresource writes get their own entries and are named in conflict messages', () => {
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: ['kubernetes'] } };
  const live = created(ns, 'creator', NS);
  const withStatus: KubeObject = { ...live, status: { phase: 'Active' } };
  const mf = update({ old: live, new: withStatus, manager: 'ns-controller', schema: NS, defs, apiVersion: 'v1', subresource: 'status', now: T1 });
  assert.deepEqual(entries(mf)['ns-controller/Update/status'], { 'f:status': { '.': {}, 'f:phase': {} } });
  const err = statusOf(() =>
    apply({
      live: { ...withStatus, metadata: { ...withStatus.metadata, managedFields: mf! } },
      config: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, status: { phase: 'Terminating' } },
      manager: 'me',
      schema: NS,
      defs,
      apiVersion: 'v1',
      subresource: 'status',
      now: T1,
    }),
  );
  assert.equal(err.status.message, 'Apply failed with 1 conflict: conflict with "ns-controller" with subresource "status" using v1: .status.phase');
});

test('reset fields (e.g. status through the main resource) are never owned', () => {
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
  const mf = update({ old: undefined, new: ns, manager: 'creator', schema: NS, defs, apiVersion: 'v1', now: T0, resetFields: FieldSet.of(makePath('status')) });
  assert.deepEqual(entries(mf), { 'creator/Update': { 'f:spec': { '.': {}, 'f:finalizers': {} } } });
});

test('bad configurations: wrong type → 400, managedFields set → 400, undeclared field → 500 as upstream', () => {
  const wrong = statusOf(() => applyCM(undefined, { ...cm({}), apiVersion: 'v2' }, 'm'));
  assert.deepEqual([wrong.status.code, wrong.status.message], [400, 'invalid object type: /v2, Kind=ConfigMap']);
  const withMf = statusOf(() => applyCM(undefined, cm({}, { managedFields: [] }), 'm'));
  assert.deepEqual([withMf.status.code, withMf.status.message], [400, 'metadata.managedFields must be nil']);
  const typo = statusOf(() => applyCM(undefined, { ...cm({}), dta: { a: 'b' } }, 'm'));
  assert.deepEqual(
    [typo.status.code, typo.status.message],
    [500, 'Internal error occurred: failed to create typed patch object (default/cm; /v1, Kind=ConfigMap): .dta: field not declared in schema'],
  );
  const dup = statusOf(() => applyCM(undefined, cm({}, { finalizers: ['a', 'a'] }), 'm'));
  assert.match(dup.status.message!, /\.metadata\.finalizers: duplicate entries for key \[="a"\]/);
});

test('stored managedFields that cannot be decoded fail an apply with 500', () => {
  const live = {
    ...cm({}),
    metadata: { name: 'cm', managedFields: [{ manager: 'x', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { bogus: {} } }] },
  } as KubeObject;
  const err = statusOf(() => applyCM(live, cm({ a: 'b' }), 'm'));
  assert.equal(err.status.code, 500);
  assert.match(
    err.status.message!,
    /^Internal error occurred: failed to decode managed fields: error decoding versioned set from .*: error decoding set: parsing key as path element: missing colon: bogus$/,
  );
});

test('more than 10 Update entries: the oldest are merged into "ancient-changes"', () => {
  let live = created(cm({ k0: '0' }), 'm0');
  for (let i = 1; i <= MAX_UPDATE_MANAGERS + 1; i++) {
    const next = cm({ ...(live.data as Record<string, string>), [`k${i}`]: String(i) });
    const mf = update({ old: live, new: next, manager: `m${i}`, schema: CM, defs, apiVersion: 'v1', now: new Date(Date.parse(T0) + i * 1000) });
    live = { ...next, metadata: { ...next.metadata, uid: 'uid-1', managedFields: mf! } };
  }
  const names = live.metadata!.managedFields!.map((e) => e.manager);
  assert.equal(names.length, MAX_UPDATE_MANAGERS);
  assert.equal(names[0], 'ancient-changes');
  // Capped twice: m0+m1 first, then the bucket (now the oldest) absorbs m2.
  assert.deepEqual(live.metadata!.managedFields![0]!.fieldsV1, { 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
});

test('entries are sorted: Apply before Update, then by time, then by manager', () => {
  let live = created(cm({ a: '1' }), 'zeta');
  live = applyCM(live, cm({ b: '2' }), 'applier', { now: T1 }).object;
  const next = cm({ a: '1', b: '2', c: '3' });
  const mf = update({ old: live, new: next, manager: 'alpha', schema: CM, defs, apiVersion: 'v1', now: T1 });
  assert.deepEqual(
    mf!.map((e) => `${e.operation}:${e.manager}`),
    ['Apply:applier', 'Update:zeta', 'Update:alpha'],
  );
});

test('Lease: a holder renewing through Update takes renewTime from the applier that set it', () => {
  const lease: KubeObject = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'l', namespace: 'kube-system' },
    spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2024-01-01T00:00:00.000000Z' },
  };
  const first = apply({ live: undefined, config: lease, manager: 'setup', schema: LEASE, defs, apiVersion: 'coordination.k8s.io/v1', now: T0 });
  const renewed = { ...first.object, spec: { ...(first.object.spec as object), renewTime: '2024-01-01T00:00:10.000000Z' } };
  const mf = update({
    old: { ...first.object, metadata: { ...first.object.metadata, uid: 'u' } },
    new: renewed,
    manager: 'holder',
    schema: LEASE,
    defs,
    apiVersion: 'coordination.k8s.io/v1',
    now: T1,
  });
  assert.deepEqual(entries(mf), {
    'setup/Apply': { 'f:spec': { 'f:holderIdentity': {}, 'f:leaseDurationSeconds': {} } },
    'holder/Update': { 'f:spec': { 'f:renewTime': {} } },
  });
});

test('Event: involvedObject (atomic ObjectReference) is owned and replaced as one value', () => {
  const ev = (name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', name, namespace: 'default' },
    reason: 'R',
  });
  const first = apply({ live: undefined, config: ev('p1'), manager: 'recorder', schema: EVENT, defs, apiVersion: 'v1', now: T0 });
  assert.deepEqual(entries(first.object)['recorder/Apply'], { 'f:involvedObject': {}, 'f:reason': {} });
  const second = apply({ live: first.object, config: ev('p2'), manager: 'recorder', schema: EVENT, defs, apiVersion: 'v1', now: T1 });
  assert.deepEqual(second.object.involvedObject, { kind: 'Pod', name: 'p2', namespace: 'default' });
});
