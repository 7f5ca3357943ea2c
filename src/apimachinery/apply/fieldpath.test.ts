// Ported from structured-merge-diff fieldpath/{serialize,set,element}_test.go and
// managedfields/internal/fields_test.go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonValue } from '../types.js';
import {
  FieldSet,
  FieldsV1Error,
  comparePathElements,
  decodePathElement,
  keyElement,
  makePath,
  parseFieldsV1Key,
  pathToString,
  valueElement,
  indexElement,
  fieldElement,
} from './fieldpath.js';

const P = makePath;

test('FieldsV1 round trip keeps the document byte for byte (fields_test TestFieldsRoundTrip)', () => {
  for (const doc of ['{"f:metadata":{".":{},"f:name":{}}}', '{}']) {
    const set = FieldSet.fromFieldsV1(JSON.parse(doc) as JsonValue);
    assert.equal(JSON.stringify(set.toFieldsV1()), doc);
  }
});

test('serialization orders fields, then keys, then values, then indices; "." marks a node that is also a prefix', () => {
  const set = FieldSet.of(
    P('qux', { key: { name: 'second' } }, 'bar'),
    P('foo', 1, 'bar'),
    P('foo', 0, 'bar', 'zot'),
    P('foo', 0, 'bar', 'baz'),
    P('foo', 0, 'bar'),
    P('foo', 0),
    P('qux', { key: { name: 'first' } }),
    P('qux', { key: { name: 'first' } }, 'bar'),
    P('set', { value: 'b' }),
    P('set', { value: 1 }),
    P('set', { value: 'a' }),
  );
  assert.equal(
    JSON.stringify(set.toFieldsV1()),
    '{"f:foo":{"i:0":{".":{},"f:bar":{".":{},"f:baz":{},"f:zot":{}}},"i:1":{"f:bar":{}}},' +
      '"f:qux":{"k:{\\"name\\":\\"first\\"}":{".":{},"f:bar":{}},"k:{\\"name\\":\\"second\\"}":{"f:bar":{}}},' +
      '"f:set":{"v:1":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}}',
  );
  assert.ok(FieldSet.fromFieldsV1(set.toFieldsV1()).equals(set));
});

test('key elements sort their fields by name and write values as Go does (HTML characters escaped)', () => {
  assert.equal(keyElement({ protocol: 'TCP', port: 80 }), 'k:{"port":80,"protocol":"TCP"}');
  assert.equal(valueElement('a<b&c'), 'v:"a\\u003cb\\u0026c"');
  assert.equal(parseFieldsV1Key('k:{ "protocol": "TCP", "port": 80 }'), 'k:{"port":80,"protocol":"TCP"}');
  assert.equal(pathToString(P('spec', 'ports', { key: { protocol: 'TCP', port: 80 } }, 'name')), '.spec.ports[port=80,protocol="TCP"].name');
  assert.equal(pathToString(P('finalizers', { value: 'x' })), '.finalizers[="x"]');
  assert.equal(pathToString(P('list', 3)), '.list[3]');
});

test('int64s past 2^53 (bigints) in key and value elements are written and read back exactly', () => {
  const k = keyElement({ id: 9223372036854775807n, name: 'a' });
  assert.equal(k, 'k:{"id":9223372036854775807,"name":"a"}');
  assert.deepEqual(decodePathElement(k), {
    kind: 'key',
    fields: [
      ['id', 9223372036854775807n],
      ['name', 'a'],
    ],
  });
  const v = valueElement(-9007199254740993n);
  assert.equal(v, 'v:-9007199254740993');
  assert.deepEqual(decodePathElement(v), { kind: 'value', value: -9007199254740993n });
  assert.notEqual(keyElement({ id: 9223372036854775806n }), keyElement({ id: 9223372036854775807n }));
});

test('malformed FieldsV1 fails with upstream messages; unknown element types are skipped', () => {
  const err = (doc: unknown): string => {
    try {
      FieldSet.fromFieldsV1(doc as never);
    } catch (e) {
      assert.ok(e instanceof FieldsV1Error);
      return e.message;
    }
    return 'no error';
  };
  assert.match(err({ 'k:{invalid json}': { 'f:name': {}, '.': {} } }), /ReadObjectCB/);
  assert.equal(err({ foo: {} }), 'parsing key as path element: missing colon: foo');
  assert.equal(err({ f: {} }), 'parsing key as path element: key must be 2 characters long:');
  assert.equal(err({ 'i:x': {} }), 'parsing key as path element: strconv.Atoi: parsing "x": invalid syntax');
  // strconv.Atoi's range: an index past int64 is an error, not a rounded double.
  assert.equal(err({ 'i:9223372036854775808': {} }), 'parsing key as path element: strconv.Atoi: parsing "9223372036854775808": value out of range');
  assert.match(err({ 'f:a': 1 }), /ReadMapCB: expect \{ or n, but found 1/);
  assert.equal(FieldSet.fromFieldsV1({ 'z:whatever': {}, 'f:a': {} }).toString(), '.a');
});

test('union, intersection and difference treat members and children separately, as upstream', () => {
  const a = FieldSet.of(P('a'), P('b', 'c'), P('b', 'd'));
  const b = FieldSet.of(P('b'), P('b', 'c'), P('e'));
  assert.equal(a.union(b).toString(), '.a\n.b\n.e\n.b.c\n.b.d');
  assert.equal(a.intersection(b).toString(), '.b.c');
  // `.b` as a member of b does not remove a's paths below `.b`...
  assert.equal(a.difference(b).toString(), '.a\n.b.d');
  // ...but it does for the recursive difference.
  assert.equal(a.recursiveDifference(b).toString(), '.a');
  assert.ok(a.difference(a).empty());
  assert.equal(a.union(b).size(), 5);
});

test('leaves drops members that are prefixes of other members; has/withPrefix', () => {
  const s = FieldSet.of(P('a'), P('a', 'b'), P('c'));
  assert.equal(s.leaves().toString(), '.c\n.a.b');
  assert.ok(s.has(P('a', 'b')));
  assert.ok(!s.has(P('b')));
  assert.equal(s.withPrefix(fieldElement('a')).toString(), '.b');
  assert.ok(s.withPrefix(fieldElement('zzz')).empty());
});

test('path elements compare by kind, then by content (numbers before strings in values)', () => {
  const sorted = [
    indexElement(2),
    valueElement('a'),
    keyElement({ name: 'b' }),
    fieldElement('z'),
    indexElement(10),
    valueElement(3),
    keyElement({ name: 'a' }),
    fieldElement('a'),
  ].sort(comparePathElements);
  assert.deepEqual(sorted, ['f:a', 'f:z', 'k:{"name":"a"}', 'k:{"name":"b"}', 'v:3', 'v:"a"', 'i:2', 'i:10']);
});
