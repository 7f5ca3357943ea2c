// Cases ported from apiextensions-apiserver pkg/apiserver/schema/pruning/algorithm_test.go (TestPrune)
// and objectmeta coercion of embedded metadata.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prune, pruneObjectMeta } from './prune.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const S = (p: JSONSchemaProps) => newStructural(p);

function check(json: string, schema: JSONSchemaProps | undefined, expected: string, expectedPruned: string[] = [], isResourceRoot = false): void {
  const obj: unknown = JSON.parse(json);
  const pruned = prune(obj, schema ? S(schema) : undefined, { isResourceRoot });
  assert.deepEqual(obj, JSON.parse(expected));
  assert.deepEqual(pruned, expectedPruned);
}

describe('prune (upstream TestPrune)', () => {
  it('empty', () => check('null', undefined, 'null'));
  it('scalar', () => check('4', {}, '4'));
  it('scalar array', () => check('[1,2]', { items: {} }, '[1,2]'));
  it('object array', () =>
    check('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', { items: { properties: { a: {}, c: {} } } }, '[{"a":1},{},{"a":1,"c":3}]', ['[1].b', '[2].b']));
  it('object array with nil schema', () =>
    check('[{"a":1},{"b":1},{"a":1,"b":2,"c":3}]', undefined, '[{},{},{}]', ['[0].a', '[1].b', '[2].a', '[2].b', '[2].c']));
  it('object array object', () =>
    check(
      '{"array":[{"a":1},{"b":1},{"a":1,"b":2,"c":3}],"unspecified":{"a":1},"specified":{"a":1,"b":2,"c":3}}',
      { properties: { array: { items: { properties: { a: {}, c: {} } } }, specified: { properties: { a: {}, c: {} } } } },
      '{"array":[{"a":1},{},{"a":1,"c":3}],"specified":{"a":1,"c":3}}',
      ['array[1].b', 'array[2].b', 'specified.b', 'unspecified'],
    ));
  it('nested x-kubernetes-preserve-unknown-fields', () =>
    check(
      `{"unspecified":"bar","alpha":"abc","beta":42.0,"unspecifiedObject":{"unspecified":"bar"},
        "pruning":{"unspecified":"bar","unspecifiedObject":{"unspecified":"bar"},"pruning":{"unspecified":"bar"},"apiVersion":"unknown","preserving":{"unspecified":"bar"}},
        "preserving":{"unspecified":"bar","unspecifiedObject":{"unspecified":"bar"},"pruning":{"unspecified":"bar"},"preserving":{"unspecified":"bar"},"preservingUnknownType":[{"foo":true},{"bar":true}]},
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":{"foo":{"specified":{"unspecified":"bar"},"unspecified":"bar"}},
        "preservingAdditionalPropertiesKeyPruneValues":{"foo":{"specified":{"unspecified":"bar"},"unspecified":"bar"}}}`,
      {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        properties: {
          alpha: { type: 'string' },
          beta: { type: 'number' },
          pruning: {
            type: 'object',
            properties: { preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, pruning: { type: 'object' } },
          },
          preserving: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: {
              preserving: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              preservingUnknownType: { 'x-kubernetes-preserve-unknown-fields': true },
              pruning: { type: 'object' },
            },
          },
          preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            additionalProperties: { type: 'object', properties: { specified: { type: 'object' } } },
          },
          preservingAdditionalPropertiesKeyPruneValues: {
            type: 'object',
            additionalProperties: { type: 'object', properties: { specified: { type: 'object' } } },
          },
        },
      },
      `{"unspecified":"bar","alpha":"abc","beta":42.0,"unspecifiedObject":{"unspecified":"bar"},
        "pruning":{"pruning":{},"preserving":{"unspecified":"bar"}},
        "preserving":{"unspecified":"bar","unspecifiedObject":{"unspecified":"bar"},"pruning":{},"preserving":{"unspecified":"bar"},"preservingUnknownType":[{"foo":true},{"bar":true}]},
        "preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields":{"foo":{"specified":{}}},
        "preservingAdditionalPropertiesKeyPruneValues":{"foo":{"specified":{}}}}`,
      [
        'preserving.pruning.unspecified',
        'preservingAdditionalPropertiesKeyPruneValues.foo.specified.unspecified',
        'preservingAdditionalPropertiesKeyPruneValues.foo.unspecified',
        'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.specified.unspecified',
        'preservingAdditionalPropertiesNotInheritingXPreserveUnknownFields.foo.unspecified',
        'pruning.apiVersion',
        'pruning.pruning.unspecified',
        'pruning.unspecified',
        'pruning.unspecifiedObject',
      ],
    ));
  it('additionalProperties with schema', () =>
    check(
      '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1}}}',
      { properties: { a: {}, c: { additionalProperties: { type: 'integer' } } } },
      '{"a":1,"c":{"a":1,"b":2,"c":{}}}',
      ['b', 'c.c.a'],
    ));
  it('additionalProperties with bool', () =>
    check(
      '{"a":1,"b":1,"c":{"a":1,"b":2,"c":{"a":1, "apiVersion": "unknown"}}}',
      { properties: { a: {}, c: { additionalProperties: false } } },
      '{"a":1,"c":{"a":1,"b":2,"c":{}}}',
      ['b', 'c.c.a', 'c.c.apiVersion'],
    ));
  it('resource root keeps apiVersion, kind and metadata', () =>
    check(
      '{"apiVersion":"a/v1","kind":"A","metadata":{"name":"x"},"spec":{"a":1,"b":2},"foo":1}',
      { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'integer' } } } } },
      '{"apiVersion":"a/v1","kind":"A","metadata":{"name":"x"},"spec":{"a":1}}',
      ['foo', 'spec.b'],
      true,
    ));
  it('metadata-named fields below the root are pruned and reported', () =>
    check(
      '{"spec":{"metadata":{"a":1},"kind":"x"}}',
      { type: 'object', properties: { spec: { type: 'object' } } },
      '{"spec":{}}',
      ['spec.kind', 'spec.metadata'],
      true,
    ));
  it('x-kubernetes-embedded-resource keeps TypeMeta and drops unknown metadata fields', () =>
    check(
      '{"apiVersion":"foo/v1","kind":"Foo","metadata":{"name":"instance","unspecified":"bar"},"unspecified":"bar","pruned":{"apiVersion":"foo/v1","kind":"Foo","unspecified":"bar","metadata":{"name":"instance","unspecified":"bar"},"spec":{"unspecified":"bar"}},"preserving":{"apiVersion":"foo/v1","kind":"Foo","unspecified":"bar","metadata":{"name":"instance","unspecified":"bar"},"spec":{"unspecified":"bar"}}}',
      {
        type: 'object',
        properties: {
          pruned: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
          preserving: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      '{"apiVersion":"foo/v1","kind":"Foo","metadata":{"name":"instance","unspecified":"bar"},"pruned":{"apiVersion":"foo/v1","kind":"Foo","metadata":{"name":"instance"},"spec":{}},"preserving":{"apiVersion":"foo/v1","kind":"Foo","unspecified":"bar","metadata":{"name":"instance"},"spec":{"unspecified":"bar"}}}',
      // Pruning proper, sorted; then embedded metadata, which upstream's pruning skips and
      // objectmeta.Coerce reports after it (the order field_validation_test.go expects).
      ['pruned.spec.unspecified', 'pruned.unspecified', 'unspecified', 'preserving.metadata.unspecified', 'pruned.metadata.unspecified'],
      true,
    ));
  it('pruneRootMetadata drops unknown root metadata fields', () => {
    const obj = { apiVersion: 'a/v1', kind: 'A', metadata: { name: 'x', bogus: 1, labels: {} } };
    assert.deepEqual(prune(obj, S({ type: 'object' }), { isResourceRoot: true, pruneRootMetadata: true }), ['metadata.bogus']);
    assert.deepEqual(obj.metadata, { name: 'x' });
  });
  it('pruneObjectMeta looks into ownerReferences', () => {
    const meta = { name: 'x', ownerReferences: [{ apiVersion: 'v1', kind: 'A', name: 'a', uid: 'u', extra: true }] };
    assert.deepEqual(pruneObjectMeta(meta, 'spec.template.metadata'), ['spec.template.metadata.ownerReferences[0].extra']);
  });
  it('deeply nested arrays under an unspecified schema do not overflow the stack', () => {
    let deep: unknown = { a: 1 };
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const obj = { x: [deep] };
    const out = prune(obj, S({ type: 'object', properties: { x: { type: 'array', items: { 'x-kubernetes-preserve-unknown-fields': true } } } }));
    assert.deepEqual(out, []);
    const out2 = prune({ y: deep }, S({ type: 'object', properties: { y: { type: 'array', items: { type: 'string' } } } }));
    assert.equal(out2.length, 1);
    assert.ok(out2[0]!.startsWith('y[0][0]') && out2[0]!.endsWith('].a'));
  });
});
