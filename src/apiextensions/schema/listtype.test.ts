// Cases ported from apiextensions-apiserver pkg/apiserver/schema/listtype/validation_test.go and
// the list-type rules of pkg/apis/apiextensions/validation/validation_test.go.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString, type FieldIssue } from '../../apimachinery/errors.js';
import { validateListSetsAndMaps, validateListTypeExtensions, validateMapListKeysMapSet } from './listtype.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const where = (errs: FieldIssue[]) => errs.map((e) => `${e.type === 'FieldValueDuplicate' ? 'duplicate' : 'invalid'} ${e.field}`).sort();
const set = (items: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'array', 'x-kubernetes-list-type': 'set', items });
const map = (keys: string[], items: JSONSchemaProps = { type: 'object' }): JSONSchemaProps => ({
  type: 'array',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': keys,
  items,
});

describe('validateListSetsAndMaps (upstream table)', () => {
  it('nil, no schema, no object', () => {
    assert.deepEqual(validateListSetsAndMaps(undefined, undefined), []);
    assert.deepEqual(validateListSetsAndMaps({}, undefined), []);
    assert.deepEqual(validateListSetsAndMaps(undefined, newStructural({})), []);
  });
  it('set list with multiple duplicated items', () => {
    const errs = validateListSetsAndMaps({ array: ['a', 'a', 'b', 'c', 'd', 'c'] }, newStructural({ type: 'object', properties: { array: set() } }), 'root');
    assert.deepEqual(errs.map(issueString), ['root.array[1]: Duplicate value: "a"', 'root.array[5]: Duplicate value: "c"']);
  });
  it('normal (atomic) lists are not checked', () => {
    assert.deepEqual(
      validateListSetsAndMaps({ array: ['a', 'a'] }, newStructural({ type: 'object', properties: { array: { type: 'array', items: { type: 'string' } } } })),
      [],
    );
  });
  it('set lists under additionalProperties and items', () => {
    const s = newStructural({
      type: 'object',
      properties: { m: { type: 'object', additionalProperties: set({ type: 'string' }) }, l: { type: 'array', items: set({ type: 'string' }) } },
    });
    assert.deepEqual(where(validateListSetsAndMaps({ m: { k: ['a', 'a'] }, l: [['b'], ['c', 'c']] }, s, 'root')), [
      'duplicate root.l[1][1]',
      'duplicate root.m[k][1]',
    ]);
  });
  it('set list with compound map items', () => {
    const names = ['strings', 'integers', 'booleans', 'float64', 'nil', 'empty maps', 'map values', 'nil values', 'array', 'nil array', 'multiple duplicates'];
    const s = newStructural({ type: 'object', properties: Object.fromEntries(names.map((n) => [n, set({ 'x-kubernetes-preserve-unknown-fields': true })])) });
    const obj = {
      strings: ['a', 'b', 'a'],
      integers: [1, 2, 1],
      booleans: [false, true, true],
      float64: [1.0, 2.0, 2.0],
      nil: ['a', null, null],
      'empty maps': [{ a: 'b' }, {}, {}],
      'map values': [{ a: 'b' }, { a: 'c' }, { a: 'b' }],
      'nil values': [{ a: null }, { b: 'c', a: null }],
      array: [[], ['a'], ['b'], ['a']],
      'nil array': [[], [null], [null, null], [null], ['a']],
      'multiple duplicates': [{ a: 'b' }, { a: 'c' }, { a: 'b' }, { a: 'c' }, { a: 'c' }],
    };
    assert.deepEqual(where(validateListSetsAndMaps(obj, s, 'root')), [
      'duplicate root.array[3]',
      'duplicate root.booleans[2]',
      'duplicate root.empty maps[2]',
      'duplicate root.float64[2]',
      'duplicate root.integers[2]',
      'duplicate root.map values[2]',
      'duplicate root.multiple duplicates[2]',
      'duplicate root.multiple duplicates[3]',
      'duplicate root.nil array[3]',
      'duplicate root.nil[2]',
      'duplicate root.strings[2]',
    ]);
  });
  it('maps compare keys regardless of key order', () => {
    const s = newStructural({ type: 'object', properties: { l: set({ type: 'object', 'x-kubernetes-map-type': 'atomic' }) } });
    assert.deepEqual(
      where(
        validateListSetsAndMaps(
          {
            l: [
              { a: 1, b: 2 },
              { b: 2, a: 1 },
            ],
          },
          s,
        ),
      ),
      ['duplicate l[1]'],
    );
  });
  it('map list with compound map items', () => {
    const item = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } satisfies JSONSchemaProps;
    const s = newStructural({
      type: 'object',
      properties: {
        strings: map(['a'], { type: 'string' }),
        integers: map(['a'], { type: 'integer' }),
        booleans: map(['a'], { type: 'boolean' }),
        float64: map(['a'], { type: 'number' }),
        nil: map(['a'], item),
        array: map(['a'], { type: 'array', items: { type: 'string' } }),
        'one key': map(['a'], item),
        'two keys': map(['a', 'b'], item),
        'undefined key': map(['a', 'b'], item),
        'compound key': map(['a'], item),
        'nil key': map(['a'], item),
        'nil item': map(['a'], item),
        'nil item multiple keys': map(['a', 'b'], item),
        'multiple duplicates': map(['a'], item),
      },
    });
    const obj = {
      strings: ['a'],
      integers: [1],
      booleans: [false],
      float64: [1.5],
      nil: [null],
      array: [['a']],
      'one key': [{ a: '0', c: '2' }, { a: '1', c: '1' }, { a: '1', c: '2' }, {}],
      'two keys': [{ a: '1', b: '1', c: '1' }, { a: '1', b: '2', c: '2' }, { a: '1', b: '2', c: '3' }, {}],
      'undefined key': [{ a: '1', b: '1', c: '1' }, { a: '1', c: '2' }, { a: '1', c: '3' }, {}],
      'compound key': [
        { a: [], c: '1' },
        { a: null, c: '1' },
        { a: ['a'], c: '1' },
        { a: ['a', 42], c: '2' },
        { a: ['a', 42], c: ['3'] },
      ],
      'nil key': [{ a: [], c: '1' }, { a: null, c: '1' }, { c: '1' }, { a: null }],
      'nil item': [null, { a: '0', c: '1' }, { a: null }, { c: '1' }],
      'nil item multiple keys': [null, { b: '0', c: '1' }, { a: null }, { c: '1' }],
      'multiple duplicates': [
        { a: [], c: '1' },
        { a: null, c: '1' },
        { a: ['a'], c: '1' },
        { a: ['a', 42], c: '2' },
        { a: ['a', 42], c: ['3'] },
        { a: ['a'], c: '1', d: '1' },
        { a: ['a'], c: '1', d: '2' },
      ],
    };
    assert.deepEqual(where(validateListSetsAndMaps(obj, s, 'root')), [
      'duplicate root.compound key[4]',
      'duplicate root.multiple duplicates[4]',
      'duplicate root.multiple duplicates[5]',
      'duplicate root.nil item multiple keys[3]',
      'duplicate root.nil item[3]',
      'duplicate root.nil key[3]',
      'duplicate root.one key[2]',
      'duplicate root.two keys[2]',
      'duplicate root.undefined key[2]',
      'invalid root.array[0]',
      'invalid root.booleans[0]',
      'invalid root.float64[0]',
      'invalid root.integers[0]',
      'invalid root.strings[0]',
    ]);
  });
  it('map duplicates report the key as the value', () => {
    const s = newStructural({ type: 'object', properties: { ports: map(['port'], { type: 'object', properties: { port: { type: 'integer' } } }) } });
    assert.deepEqual(validateListSetsAndMaps({ ports: [{ port: 80 }, { port: 80 }] }, s, 'spec').map(issueString), [
      'spec.ports[1]: Duplicate value: {"port":80}',
    ]);
  });
});

describe('list-type schema rules', () => {
  const P = 'spec.versions[0].schema.openAPIV3Schema';
  const rules = (s: JSONSchemaProps) => [...validateListTypeExtensions(s, P), ...validateMapListKeysMapSet(s, P)].map(issueString);
  it('list-type needs an array, map-type an object', () => {
    assert.deepEqual(rules({ type: 'object', 'x-kubernetes-list-type': 'set' }), [
      `${P}.type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`,
    ]);
    assert.deepEqual(rules({ 'x-kubernetes-map-type': 'atomic' }), [`${P}.type: Required value: must be object if x-kubernetes-map-type is specified`]);
  });
  it('unknown values', () => {
    assert.deepEqual(rules({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' }), [
      `${P}.x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`,
    ]);
    assert.deepEqual(rules({ type: 'object', 'x-kubernetes-map-type': 'x' }), [
      `${P}.x-kubernetes-map-type: Unsupported value: "x": supported values: "atomic", "granular"`,
    ]);
  });
  it('map keys require list-type map', () => {
    assert.deepEqual(rules({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-map-keys': ['a'] }), [
      `${P}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
    ]);
  });
  it('map lists: keys, item type, scalars, duplicates', () => {
    assert.deepEqual(rules({ type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } }), [
      `${P}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
    ]);
    assert.deepEqual(rules({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['a'], items: { type: 'string' } }), [
      `${P}.items.type: Invalid value: "string": must be object if parent array's x-kubernetes-list-type is map`,
    ]);
    assert.deepEqual(
      rules({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['a', 'a', 'z'],
        items: { type: 'object', required: ['a'], properties: { a: { type: 'object' } } },
      }),
      [
        `${P}.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
        `${P}.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map`,
        `${P}.x-kubernetes-list-map-keys: Invalid value: ["a","a","z"]: must not contain duplicate entries`,
        `${P}.x-kubernetes-list-map-keys: Invalid value: ["a","a","z"]: entries must all be names of item properties`,
      ],
    );
  });
  it('map keys must be required or defaulted, and not nullable', () => {
    assert.deepEqual(rules(map(['k'], { type: 'object', nullable: true, properties: { k: { type: 'string', nullable: true } } })), [
      `${P}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map`,
      `${P}.items.properties[k].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      `${P}.items.properties[k].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`,
    ]);
  });
  it('set items must be atomic', () => {
    assert.deepEqual(rules(set({ type: 'object' })), [
      `${P}.items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
    assert.deepEqual(rules(set({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' })), [
      `${P}.items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set`,
    ]);
  });
});
