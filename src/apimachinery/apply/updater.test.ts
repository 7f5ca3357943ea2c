// The ownership engine, with cases ported from structured-merge-diff's merge tests
// (leaf_test.go, multiple_appliers_test.go, set_test.go, key_test.go, nested_test.go,
// deduced_test.go). Managers are plain names here, as in upstream's fixture.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import type { Definitions, OpenAPISchema } from '../schema.js';
import type { JsonValue } from '../types.js';
import { typeOf, type TypeRef } from './atoms.js';
import { ApplyConflicts } from './conflict.js';
import { pathToString } from './fieldpath.js';
import { applyOwnership, updateOwnership, type ManagerSets } from './updater.js';

const ref = (name: string): OpenAPISchema => ({ $ref: '#/definitions/' + name });

const defs: Definitions = {
  leafFields: { type: 'object', properties: { numeric: { type: 'integer' }, string: { type: 'string' }, bool: { type: 'boolean' } } },
  myElement: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'integer' } } },
  associative: {
    type: 'object',
    properties: { list: { type: 'array', items: ref('myElement'), 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] } },
  },
  setType: { type: 'object', properties: { list: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } } },
  atomicType: { type: 'object', properties: { list: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' } } },
  nested: {
    type: 'object',
    properties: {
      a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'string' }, d: { type: 'string' } } }, e: { type: 'string' } } },
    },
  },
};

class Fixture {
  live: JsonValue | undefined = undefined;
  readonly managers: ManagerSets = new Map();
  readonly type: TypeRef;
  constructor(schema: OpenAPISchema | undefined) {
    this.type = typeOf(schema, defs);
  }
  apply(manager: string, yaml: string, force = false, version = 'v1'): this {
    const out = applyOwnership(this.live, parse(yaml) as JsonValue, version, this.managers, manager, force, { type: this.type });
    if (out.object !== undefined) this.live = out.object;
    return this;
  }
  update(manager: string, yaml: string, version = 'v1'): this {
    const next = parse(yaml) as JsonValue;
    updateOwnership(this.live, next, version, this.managers, manager, { type: this.type });
    this.live = next;
    return this;
  }
  conflicts(manager: string, yaml: string): string[] {
    try {
      this.apply(manager, yaml);
    } catch (e) {
      assert.ok(e instanceof ApplyConflicts);
      return e.conflicts.map((c) => `${c.manager} ${pathToString(c.path)}`);
    }
    return [];
  }
  owned(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [m, vs] of [...this.managers].sort(([a], [b]) => (a < b ? -1 : 1))) out[m] = vs.set.toString().split('\n').join(' ');
    return out;
  }
  expectObject(yaml: string): void {
    assert.deepEqual(this.live, parse(yaml));
  }
}

test('leaf: apply twice; the second apply owns exactly its own fields', () => {
  const f = new Fixture(ref('leafFields')).apply('default', 'numeric: 1\nstring: string').apply('default', 'numeric: 2\nstring: string\nbool: false');
  f.expectObject('numeric: 2\nstring: string\nbool: false');
  assert.deepEqual(f.owned(), { default: '.bool .numeric .string' });
});

test('leaf: apply, update by a controller, apply again without touching its field: no conflict', () => {
  const f = new Fixture(ref('leafFields'))
    .apply('default', 'numeric: 1\nstring: string')
    .update('controller', 'numeric: 1\nstring: string\nbool: true')
    .apply('default', 'numeric: 2\nstring: string');
  f.expectObject('numeric: 2\nstring: string\nbool: true');
  assert.deepEqual(f.owned(), { controller: '.bool', default: '.numeric .string' });
});

test('leaf: a controller changed a field the applier sets: conflict, then force takes it back', () => {
  const f = new Fixture(ref('leafFields'))
    .apply('default', 'numeric: 1\nstring: string')
    .update('controller', 'numeric: 1\nstring: controller string\nbool: true');
  assert.deepEqual(f.owned(), { controller: '.bool .string', default: '.numeric' });
  assert.deepEqual(f.conflicts('default', 'numeric: 2\nstring: user string'), ['controller .string']);
  f.expectObject('numeric: 1\nstring: controller string\nbool: true'); // nothing written on conflict
  f.apply('default', 'numeric: 2\nstring: user string', true);
  f.expectObject('numeric: 2\nstring: user string\nbool: true');
  assert.deepEqual(f.owned(), { controller: '.bool', default: '.numeric .string' });
});

test('leaf: a field the applier stops applying is removed (apply_twice_remove)', () => {
  const f = new Fixture(ref('leafFields')).apply('default', 'numeric: 1\nstring: string\nbool: false').apply('default', 'string: new string');
  f.expectObject('string: new string');
  assert.deepEqual(f.owned(), { default: '.string' });
});

test('leaf: a field another applier also owns survives when one of them stops applying it', () => {
  const f = new Fixture(ref('leafFields')).apply('one', 'numeric: 1\nstring: s').apply('two', 'numeric: 1').apply('one', 'string: s');
  f.expectObject('numeric: 1\nstring: s');
  assert.deepEqual(f.owned(), { one: '.string', two: '.numeric' });
});

test('leaf: a field an updater touched after the applier survives the applier dropping it', () => {
  const f = new Fixture(ref('leafFields'))
    .apply('default', 'numeric: 1\nstring: s')
    .update('controller', 'numeric: 5\nstring: s')
    .apply('default', 'string: s');
  f.expectObject('numeric: 5\nstring: s');
  assert.deepEqual(f.owned(), { controller: '.numeric', default: '.string' });
});

test("multiple appliers, list-map: remove_one keeps the other applier's item", () => {
  const f = new Fixture(ref('associative'))
    .apply('apply-one', 'list:\n- name: a\n- name: b')
    .apply('apply-two', 'list:\n- name: c', false, 'v2')
    .apply('apply-one', 'list:\n- name: a', false, 'v3');
  f.expectObject('list:\n- name: a\n- name: c');
  assert.deepEqual(f.owned(), { 'apply-one': '.list[name="a"] .list[name="a"].name', 'apply-two': '.list[name="c"] .list[name="c"].name' });
  assert.equal(f.managers.get('apply-one')!.apiVersion, 'v3');
});

test('multiple appliers, list-map: same value is shared ownership, different value conflicts', () => {
  const f = new Fixture(ref('associative')).apply('apply-one', 'list:\n- name: a\n  value: 0').apply('apply-two', 'list:\n- name: a\n  value: 0');
  assert.deepEqual(f.owned(), {
    'apply-one': '.list[name="a"] .list[name="a"].name .list[name="a"].value',
    'apply-two': '.list[name="a"] .list[name="a"].name .list[name="a"].value',
  });
  const g = new Fixture(ref('associative')).apply('apply-one', 'list:\n- name: a\n  value: 0');
  assert.deepEqual(g.conflicts('apply-two', 'list:\n- name: a\n  value: 1'), ['apply-one .list[name="a"].value']);
});

test('list-map merge order: the configuration orders the items it names, live-only items stay near their place', () => {
  // Traced through typed/merge.go visitListItems: live [a b c d] + config [d b] → [a c d b].
  const f = new Fixture(ref('associative'))
    .update('controller', 'list:\n- name: a\n- name: b\n- name: c\n- name: d')
    .apply('default', 'list:\n- name: d\n- name: b');
  f.expectObject('list:\n- name: a\n- name: c\n- name: d\n- name: b');
});

test('set: items are unioned across appliers; an item dropped by its only applier goes away', () => {
  const f = new Fixture(ref('setType')).apply('one', 'list: [a, b]').apply('two', 'list: [c, b]');
  f.expectObject('list: [a, c, b]');
  assert.deepEqual(f.owned(), { one: '.list[="a"] .list[="b"]', two: '.list[="b"] .list[="c"]' });
  f.apply('one', 'list: [b]');
  f.expectObject('list: [c, b]');
  f.apply('two', 'list: [b]');
  f.expectObject('list: [b]');
});

test('atomic list: replaced as a whole, and changing it conflicts with its owner', () => {
  const f = new Fixture(ref('atomicType')).apply('one', 'list: [a, b]');
  assert.deepEqual(f.conflicts('two', 'list: [c]'), ['one .list']);
  f.apply('two', 'list: [c]', true);
  f.expectObject('list: [c]');
  assert.deepEqual(f.owned(), { two: '.list' });
});

test('nested structs: parents are pruned with their last owned child, kept while anything under them is owned', () => {
  const f = new Fixture(ref('nested')).apply('one', 'a:\n  b:\n    c: x\n  e: y').apply('two', 'a:\n  b:\n    d: z');
  f.apply('one', 'a:\n  e: y');
  f.expectObject('a:\n  b:\n    d: z\n  e: y');
  f.apply('two', 'a:\n  e: y');
  f.expectObject('a:\n  e: y');
  f.apply('one', '{}');
  f.apply('two', '{}');
  f.expectObject('{}');
});

test('deduced (no schema): maps merge key by key, lists are atomic', () => {
  const f = new Fixture(undefined).apply('one', 'a:\n  x: 1\nl: [1, 2]').apply('two', 'a:\n  y: 2');
  f.expectObject('a:\n  x: 1\n  y: 2\nl: [1, 2]');
  assert.deepEqual(f.conflicts('two', 'l: [3]'), ['one .l']);
  assert.deepEqual(f.owned(), { one: '.a .l .a.x', two: '.a .a.y' });
});

test('update: changed fields move to the updater, removed fields drop from everyone', () => {
  const f = new Fixture(ref('leafFields')).apply('a', 'numeric: 1\nstring: s\nbool: true').update('u', 'numeric: 2\nstring: s');
  assert.deepEqual(f.owned(), { a: '.string', u: '.numeric' });
});
