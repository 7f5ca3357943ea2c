// Cases ported from apiextensions-apiserver pkg/apiserver/schema/defaulting (algorithm_test.go,
// prunenulls_test.go, validation_test.go).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../../apimachinery/errors.js';
import { applyDefaults, needsDefaulting, pruneNonNullableNullsWithoutDefaults, validateDefaults } from './defaults.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const S = (p: JSONSchemaProps) => newStructural(p);

function check(json: string, schema: JSONSchemaProps | undefined, expected: string): void {
  const obj: unknown = JSON.parse(json);
  applyDefaults(obj, schema ? S(schema) : undefined);
  assert.deepEqual(obj, JSON.parse(expected));
}

describe('applyDefaults (upstream TestDefault)', () => {
  it('empty', () => check('null', undefined, 'null'));
  it('scalar', () => check('4', { default: 'foo' }, '4'));
  it('scalar array', () => check('[1,2]', { items: { default: 'foo' } }, '[1,2]'));
  it('object array', () =>
    check(
      '[{"a":1},{"b":1},{"c":1}]',
      { items: { properties: { a: { default: 'A' }, b: { default: 'B' }, c: { default: 'C' } } } },
      '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]',
    ));
  it('object array object', () =>
    check(
      '{"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
      {
        properties: {
          array: { items: { properties: { a: { default: 'A' }, b: { default: 'B' } } } },
          object: { properties: { a: { default: 'N' }, b: { default: 'O' } } },
          additionalProperties: { additionalProperties: { properties: { a: { default: 'alpha' }, b: { default: 'beta' } } } },
          foo: { default: 'bar' },
        },
      },
      '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}',
    ));
  it('empty and null', () =>
    check(
      '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
      { items: { properties: { a: { default: 'A' } } } },
      '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]',
    ));
  it('null in nullable list', () => check('[null]', { nullable: true, items: { properties: { a: { default: 'A' } } } }, '[null]'));
  it('null in non-nullable list', () => check('[null]', { items: { default: 'A' } }, '["A"]'));
  it('null in nullable object', () => check('{"a": null}', { properties: { a: { nullable: true, default: 'A' } } }, '{"a": null}'));
  it('null in non-nullable object', () => check('{"a": null}', { properties: { a: { default: 'A' } } }, '{"a": "A"}'));
  it('null in nullable map', () => check('{"a": null}', { additionalProperties: { nullable: true, default: 'A' } }, '{"a": null}'));
  it('null in non-nullable map', () => check('{"a": null}', { additionalProperties: { default: 'A' } }, '{"a": "A"}'));
  it('defaults are deep copies and are themselves defaulted', () => {
    const s = S({
      type: 'object',
      properties: {
        a: { type: 'object', default: { x: [1] }, properties: { x: { type: 'array', items: { type: 'integer' } }, y: { type: 'string', default: 'Y' } } },
      },
    });
    const o1: Record<string, { x: number[]; y: string }> = {};
    const o2: Record<string, { x: number[]; y: string }> = {};
    applyDefaults(o1, s);
    applyDefaults(o2, s);
    o1['a']!.x.push(2);
    assert.deepEqual(o2, { a: { x: [1], y: 'Y' } });
  });
});

describe('pruneNonNullableNullsWithoutDefaults (upstream prunenulls_test)', () => {
  it('drops non-nullable nulls without defaults only', () => {
    const s = S({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: 'string', nullable: true },
        c: { type: 'string', default: 'C' },
        m: { type: 'object', additionalProperties: { type: 'string' } },
        l: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } },
      },
    });
    const obj = { a: null, b: null, c: null, m: { k: null }, l: [{ x: null }], u: null };
    pruneNonNullableNullsWithoutDefaults(obj, s);
    assert.deepEqual(obj, { b: null, c: null, m: {}, l: [{}], u: null });
  });
});

describe('validateDefaults', () => {
  const P = 'spec.versions[0].schema.openAPIV3Schema';
  const v = (p: JSONSchemaProps): string[] => validateDefaults(S(p), P).map(issueString);
  it('valid defaults pass', () => {
    assert.deepEqual(
      v({ type: 'object', properties: { spec: { type: 'object', default: { a: 1 }, properties: { a: { type: 'integer', minimum: 0, default: 3 } } } } }),
      [],
    );
  });
  it('defaults must validate against their schema', () => {
    assert.deepEqual(v({ type: 'object', properties: { a: { type: 'integer', minimum: 1, default: 0 }, b: { type: 'string', default: 3 } } }), [
      `${P}.properties[a].default: Invalid value: 0:  in body should be greater than or equal to 1`,
      `${P}.properties[b].default: Invalid value: "integer":  in body must be of type string: "integer"`,
    ]);
  });
  it('defaults must be pruned', () => {
    assert.deepEqual(v({ type: 'object', properties: { spec: { type: 'object', default: { a: 1, unknown: 2 }, properties: { a: { type: 'integer' } } } } }), [
      `${P}.properties[spec].default: Invalid value: {"a":1,"unknown":2}: must not have unknown fields`,
    ]);
  });
  it('embedded resource defaults need valid TypeMeta', () => {
    assert.deepEqual(
      v({
        type: 'object',
        properties: { e: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, default: { kind: 'Foo' } } },
      }),
      [`${P}.properties[e].default.apiVersion: Required value`],
    );
  });
  it('defaults inside embedded metadata must result in valid metadata', () => {
    const out = v({
      type: 'object',
      properties: {
        e: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { metadata: { type: 'object', properties: { name: { type: 'string', default: 'a/b' } } } },
        },
      },
    });
    assert.deepEqual(out, [
      `${P}.properties[e].properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
    ]);
  });
});

describe('needsDefaulting', () => {
  const schema = S({
    type: 'object',
    properties: {
      a: { type: 'string', default: 'A' },
      n: { type: 'object', nullable: true, properties: { x: { type: 'integer' } } },
      list: { type: 'array', items: { type: 'object', default: { k: 1 }, properties: { k: { type: 'integer', default: 2 }, v: { type: 'string' } } } },
      map: { type: 'object', additionalProperties: { type: 'object', properties: { d: { type: 'boolean', default: true } } } },
      plain: { type: 'object', properties: { s: { type: 'string' } } },
    },
  });
  const cases: [string, string][] = [
    ['all defaults present', '{"a":"x","list":[{"k":1}],"map":{"m":{"d":false}}}'],
    ['a missing', '{}'],
    ['a null', '{"a":null}'],
    ['nullable null kept', '{"a":"x","n":null}'],
    ['non-nullable null without default pruned', '{"a":"x","plain":null}'],
    ['nested null pruned', '{"a":"x","plain":{"s":null}}'],
    ['list item default', '{"a":"x","list":[null]}'],
    ['list item field default', '{"a":"x","list":[{"v":"y"}]}'],
    ['map value default', '{"a":"x","map":{"m":{}}}'],
    ['unknown field ignored', '{"a":"x","other":null}'],
  ];
  for (const [name, json] of cases) {
    it(`agrees with applying the defaults: ${name}`, () => {
      const obj = JSON.parse(json) as Record<string, unknown>;
      const copy = structuredClone(obj);
      applyDefaults(copy, schema);
      pruneNonNullableNullsWithoutDefaults(copy, schema);
      assert.equal(needsDefaulting(obj, schema), JSON.stringify(copy) !== JSON.stringify(obj));
      assert.deepEqual(obj, JSON.parse(json), 'the object is not changed');
    });
  }
});
