import { test } from 'node:test';
import assert from 'node:assert/strict';
import { issueString, type FieldIssue } from '../errors.js';
import type { ObjectMeta } from '../types.js';
import { nameIsDNSSubdomain } from './names.js';
import {
  dropEmptyObjectMetaFields,
  finalizerWarnings,
  prepareObjectMetaForUpdate,
  validateFinalizerName,
  validateLabelSelector,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
} from './objectmeta.js';

const strings = (issues: FieldIssue[]): string[] => issues.map(issueString);
const ns = { namespaced: true, nameValidator: nameIsDNSSubdomain };
const cluster = { namespaced: false, nameValidator: nameIsDNSSubdomain };

test('a valid namespaced object has no issues', () => {
  const meta: ObjectMeta = {
    name: 'web',
    namespace: 'default',
    labels: { app: 'web', 'example.com/tier': '' },
    annotations: { 'Example.com/Note': 'x' },
    finalizers: ['example.com/cleanup', 'orphan'],
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
  };
  assert.deepEqual(validateObjectMetaCreate(meta, ns), []);
});

test('name required, name rules, generateName rules', () => {
  assert.deepEqual(strings(validateObjectMetaCreate({ namespace: 'a' }, ns)), ['metadata.name: Required value: name or generateName is required']);
  const bad = strings(validateObjectMetaCreate({ name: 'Web', namespace: 'a' }, ns));
  assert.equal(bad.length, 1);
  assert.ok(bad[0]!.startsWith('metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain'));
  const gen = strings(validateObjectMetaCreate({ name: 'abcde', generateName: 'Bad-', namespace: 'a' }, ns));
  assert.ok(gen[0]!.startsWith('metadata.generateName: Invalid value: "Bad-": a lowercase RFC 1123 subdomain'));
});

test('namespace: required when namespaced, forbidden otherwise, a DNS label', () => {
  assert.deepEqual(strings(validateObjectMetaCreate({ name: 'a' }, ns)), ['metadata.namespace: Required value']);
  assert.deepEqual(strings(validateObjectMetaCreate({ name: 'a', namespace: 'x' }, cluster)), ['metadata.namespace: Forbidden: not allowed on this type']);
  assert.deepEqual(strings(validateObjectMetaCreate({ name: 'a', namespace: 'a.b' }, ns)), ['metadata.namespace: Invalid value: "a.b": must not contain dots']);
});

test('labels and annotations', () => {
  const issues = strings(validateObjectMetaCreate({ name: 'a', labels: { 'bad key': 'v', ok: '-x' } }, cluster));
  assert.equal(issues.length, 2);
  assert.ok(issues[0]!.startsWith('metadata.labels: Invalid value: "bad key": name part must consist of'));
  assert.ok(issues[1]!.startsWith('metadata.labels: Invalid value: "-x": a valid label must be an empty string'));
  const big = { a: 'x'.repeat(256 * 1024) };
  assert.deepEqual(strings(validateObjectMetaCreate({ name: 'a', annotations: big }, cluster)), [
    'metadata.annotations: Too long: must have at most 262144 bytes',
  ]);
  assert.deepEqual(validateObjectMetaCreate({ name: 'a', annotations: { a: 'x'.repeat(256 * 1024 - 1) } }, cluster), []);
});

test('finalizers: qualified names, orphan vs foreground, warnings for unqualified names', () => {
  const issues = strings(validateObjectMetaCreate({ name: 'a', finalizers: ['orphan', 'foregroundDeletion', 'x/y/z'] }, cluster));
  assert.equal(issues.length, 2);
  assert.ok(issues[0]!.startsWith('metadata.finalizers: Invalid value: "x/y/z": a qualified name must consist of'));
  assert.equal(
    issues[1],
    'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion","x/y/z"]: finalizer orphan and foregroundDeletion cannot be both set',
  );
  assert.deepEqual(finalizerWarnings(['kubernetes', 'example.com/x', 'mine']), [
    'metadata.finalizers: "mine": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
  ]);
});

test('finalizers: the kube policy refuses unqualified non-standard names on create, at their index, after the generic issues', () => {
  const meta: ObjectMeta = { name: 'a', namespace: 'n', finalizers: ['foo', 'kubernetes', 'orphan', 'example.com/x', 'Bad_'] };
  assert.deepEqual(validateObjectMetaCreate({ ...meta, finalizers: ['kubernetes', 'orphan', 'example.com/x'] }, { ...ns, finalizerNames: 'kube' }), []);
  const issues = strings(validateObjectMetaCreate(meta, { ...ns, finalizerNames: 'kube' }));
  assert.equal(issues.length, 3);
  assert.ok(issues[0]!.startsWith('metadata.finalizers: Invalid value: "Bad_": name part must consist of'));
  assert.deepEqual(issues.slice(1), [
    'metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
    'metadata.finalizers[4]: Invalid value: "Bad_": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  // generic (leases, core/v1 events, CRDs) and custom resources accept the name; the default is generic.
  assert.deepEqual(validateObjectMetaCreate({ ...meta, finalizers: ['foo'] }, ns), []);
  assert.deepEqual(validateObjectMetaCreate({ ...meta, finalizers: ['foo'] }, { ...ns, finalizerNames: 'generic' }), []);
  assert.deepEqual(validateObjectMetaCreate({ ...meta, finalizers: ['foo'] }, { ...ns, finalizerNames: 'custom-resource' }), []);
});

test('finalizers: the kube policy checks every finalizer on update, the others none', () => {
  const old: ObjectMeta = { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '5', finalizers: ['example.com/x'] };
  const next: ObjectMeta = { ...old, finalizers: ['example.com/x', 'foo'] };
  assert.deepEqual(strings(validateObjectMetaUpdate(next, old, { finalizerNames: 'kube' })), [
    'metadata.finalizers[1]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  assert.deepEqual(validateObjectMetaUpdate(next, old), []);
  assert.deepEqual(validateObjectMetaUpdate(next, old, { finalizerNames: 'custom-resource' }), []);
});

test('finalizer warnings are for custom resources only', () => {
  assert.deepEqual(finalizerWarnings(['foo', 'example.com/x'], 'custom-resource'), [
    'metadata.finalizers: "foo": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
  ]);
  assert.deepEqual(finalizerWarnings(['foo'], 'kube'), []);
  assert.deepEqual(finalizerWarnings(['foo'], 'generic'), []);
});

test('validateFinalizerName (namespace spec.finalizers): qualified name, then standard-or-qualified, both at the given path', () => {
  assert.deepEqual(validateFinalizerName('kubernetes', 'spec.finalizers'), []);
  assert.deepEqual(validateFinalizerName('example.com/x', 'spec.finalizers'), []);
  assert.deepEqual(strings(validateFinalizerName('foo', 'spec.finalizers')), [
    'spec.finalizers: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  const bad = strings(validateFinalizerName('a/b/c', 'spec.finalizers[2]'));
  assert.equal(bad.length, 1);
  assert.ok(bad[0]!.startsWith('spec.finalizers[2]: Invalid value: "a/b/c": a qualified name must consist of'));
  const empty = strings(validateFinalizerName('', 'spec.finalizers[0]'));
  assert.equal(empty[0], 'spec.finalizers[0]: Invalid value: "": name part must be non-empty');
  assert.equal(empty.at(-1), 'spec.finalizers[0]: Invalid value: "": name is neither a standard finalizer name nor is it fully qualified');
});

test('ownerReferences: required fields, banned Event owner, one controller', () => {
  const issues = strings(
    validateObjectMetaCreate(
      {
        name: 'a',
        ownerReferences: [
          { apiVersion: '', kind: '', name: '', uid: '' },
          { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u', controller: true },
          { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u2', controller: true },
        ],
      },
      cluster,
    ),
  );
  assert.deepEqual(issues.slice(0, 4), [
    'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
    'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
    'metadata.ownerReferences.name: Invalid value: "": must not be empty',
    'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
  ]);
  assert.ok(issues[4]!.endsWith('/v1, Kind=Event is disallowed from being an owner'));
  assert.ok(issues[5]!.endsWith('Only one reference can have Controller set to true. Found "true" in references for Event/e and Pod/p'));
});

test('update: immutable fields, resourceVersion, generation, finalizers while deleting', () => {
  const old: ObjectMeta = { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '5', generation: 3, creationTimestamp: '2024-01-01T00:00:00Z' };
  assert.deepEqual(validateObjectMetaUpdate({ ...old }, old), []);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, name: 'b', namespace: 'm', uid: 'v', resourceVersion: '' }, old)), [
    'metadata.resourceVersion: Invalid value: "": must be specified for an update',
    'metadata.name: Invalid value: "b": field is immutable',
    'metadata.namespace: Invalid value: "m": field is immutable',
    'metadata.uid: Invalid value: "v": field is immutable',
  ]);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, generation: 2 }, old)), ['metadata.generation: Invalid value: 2: must not be decremented']);
  const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['a/b'] };
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...deleting, finalizers: ['a/b', 'c/d'] }, deleting)), [
    'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"c/d"}',
  ]);
  assert.deepEqual(strings(validateObjectMetaUpdate({ ...old, deletionGracePeriodSeconds: 30 }, old)), [
    'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
  ]);
});

test('prepareObjectMetaForUpdate keeps system fields', () => {
  const old: ObjectMeta = { name: 'a', uid: 'u', generation: 4, creationTimestamp: 't0', deletionTimestamp: 't1', deletionGracePeriodSeconds: 0 };
  const next: ObjectMeta = { name: 'a', generation: 9, creationTimestamp: 'tX' };
  prepareObjectMetaForUpdate(next, old);
  assert.deepEqual(next, { name: 'a', uid: 'u', generation: 4, creationTimestamp: 't0', deletionTimestamp: 't1', deletionGracePeriodSeconds: 0 });
  assert.deepEqual(validateObjectMetaUpdate({ ...next, resourceVersion: '1' }, old), []);
});

test('dropEmptyObjectMetaFields drops what Go would omit (omitempty) and keeps the rest', () => {
  const meta: ObjectMeta = { name: 'x', namespace: '', generateName: '', labels: {}, annotations: { a: '' }, finalizers: [], ownerReferences: [] };
  dropEmptyObjectMetaFields(meta);
  assert.deepEqual(meta, { name: 'x', annotations: { a: '' } });
  const full: ObjectMeta = { name: 'y', namespace: 'ns', labels: { k: 'v' }, finalizers: ['f'] };
  dropEmptyObjectMetaFields(full);
  assert.deepEqual(full, { name: 'y', namespace: 'ns', labels: { k: 'v' }, finalizers: ['f'] });
});

test('validateLabelSelector: operators, values by operator, keys and values as labels', () => {
  assert.deepEqual(validateLabelSelector({ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] }, 's'), []);
  const issues = validateLabelSelector(
    {
      matchLabels: { 'bad key!': 'x' },
      matchExpressions: [
        { key: 'a', operator: 'In', values: [] },
        { key: 'b', operator: 'Exists', values: ['x'] },
        { key: 'c', operator: 'Near' },
        { key: 'd', operator: 'NotIn', values: ['not a value!'] },
      ],
    },
    's',
  );
  assert.deepEqual(
    issues.map((i) => [i.type, i.field]),
    [
      ['FieldValueInvalid', 's.matchLabels'],
      ['FieldValueRequired', 's.matchExpressions[0].values'],
      ['FieldValueForbidden', 's.matchExpressions[1].values'],
      ['FieldValueInvalid', 's.matchExpressions[2].operator'],
      ['FieldValueInvalid', 's.matchExpressions[3].values[0]'],
    ],
  );
});
