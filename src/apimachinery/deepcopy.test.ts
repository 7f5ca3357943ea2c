import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseJSONExact } from '../golang/json-int64.js';
import { deepCopyJSON } from './deepcopy.js';

test('deepCopyJSON copies every level: changing the copy leaves the original as it was', () => {
  const original = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', labels: { x: 'y' }, finalizers: ['f'], managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }] },
    data: { k: 'v' },
    n: 1.5,
    b: false,
    z: null,
    u: undefined,
    big: 9007199254740993n,
  };
  const before = structuredClone(original);
  const copy = deepCopyJSON(original);
  assert.deepStrictEqual(copy, original);
  assert.notEqual(copy.metadata, original.metadata);
  assert.notEqual(copy.metadata.managedFields[0]!.fieldsV1, original.metadata.managedFields[0]!.fieldsV1);
  copy.metadata.labels.x = 'changed';
  copy.metadata.finalizers.push('g');
  copy.metadata.managedFields[0]!.fieldsV1['f:data'] = { changed: true };
  copy.data.k = 'changed';
  assert.deepStrictEqual(original, before);
  assert.ok('u' in copy, 'an undefined member stays a member, as with structuredClone');
});

test('deepCopyJSON copies a __proto__ key as an own member, never as the prototype', () => {
  const parsed = parseJSONExact('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
  const copy = deepCopyJSON(parsed);
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal((copy as { polluted?: unknown }).polluted, undefined);
  assert.deepStrictEqual(Object.keys(copy), ['__proto__', 'a']);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true });
});

test('deepCopyJSON copies values nested as deep as the JSON decoder allows (structuredClone overflows)', () => {
  const depth = 10_000;
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 0; i < depth; i++) {
    const next: Record<string, unknown> = {};
    at.a = i % 2 === 0 ? next : [next];
    at = next;
  }
  assert.throws(() => structuredClone(root), RangeError);
  const copy = deepCopyJSON(root);
  let levels = 0;
  for (let c: unknown = copy; c !== undefined; levels++) {
    const v: unknown = (c as Record<string, unknown>).a;
    c = Array.isArray(v) ? v[0] : v;
  }
  assert.equal(levels, depth + 1);
});

test('deepCopyJSON copies what is not plain JSON as structuredClone does', () => {
  const when = new Date('2026-12-07T00:00:00Z');
  const bytes = Uint8Array.of(1, 2, 3);
  const copy = deepCopyJSON({ when, bytes, nested: [{ bytes }] });
  assert.ok(copy.when instanceof Date);
  assert.equal(copy.when.getTime(), when.getTime());
  assert.notEqual(copy.when, when);
  assert.ok(copy.bytes instanceof Uint8Array);
  assert.deepStrictEqual([...copy.nested[0]!.bytes], [1, 2, 3]);
  assert.notEqual(copy.bytes, bytes);
  assert.equal(deepCopyJSON('s'), 's');
  assert.equal(deepCopyJSON(null), null);
  const proto = Object.create(null) as Record<string, unknown>;
  proto.k = { v: 1 };
  const c = deepCopyJSON(proto);
  assert.deepStrictEqual({ ...c }, { k: { v: 1 } });
  assert.notEqual(c.k, proto.k);
});
