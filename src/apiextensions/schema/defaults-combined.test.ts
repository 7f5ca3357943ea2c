// defaultAndPruneNulls is applyDefaults followed by pruneNonNullableNullsWithoutDefaults, in one
// walk: the same object (values and key order) for arbitrary input.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyDefaults, defaultAndPruneNulls, needsDefaulting, pruneNonNullableNullsWithoutDefaults } from './defaults.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        a: { type: 'string', default: 'x' },
        b: { type: 'string', nullable: true, default: 'y' },
        c: { type: 'string' },
        d: { type: 'string', nullable: true },
        o: { type: 'object', default: { a: 'z' }, properties: { a: { type: 'string' }, n: { type: 'integer', default: 3 } } },
        m: {
          type: 'object',
          additionalProperties: { type: 'object', default: { n: 1 }, properties: { n: { type: 'integer' }, q: { type: 'string', default: 'q' } } },
        },
        mn: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
        l: {
          type: 'array',
          items: { type: 'object', default: { a: 'i' }, properties: { a: { type: 'string' }, c: { type: 'string' }, n: { type: 'integer', default: 2 } } },
        },
        ln: { type: 'array', items: { type: 'string' } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};
const s = newStructural(schema);

const key = fc.constantFrom('spec', 'a', 'b', 'c', 'd', 'o', 'm', 'mn', 'l', 'ln', 'free', 'n', 'q', 'x');
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string(),
    tie('arr'),
    tie('obj'),
  ),
  arr: fc.array(tie('value'), { maxLength: 4 }),
  obj: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
})).obj;

describe('defaultAndPruneNulls', () => {
  it('equals applyDefaults then pruneNonNullableNullsWithoutDefaults; needsDefaulting says whether they change anything', () => {
    fc.assert(
      fc.property(json, (obj) => {
        const want = structuredClone(obj);
        applyDefaults(want, s);
        pruneNonNullableNullsWithoutDefaults(want, s);
        const got = structuredClone(obj);
        defaultAndPruneNulls(got, s);
        assert.deepStrictEqual(got, want);
        assert.equal(JSON.stringify(got), JSON.stringify(want));
        // needsDefaulting tells exactly whether the two steps change anything
        assert.equal(needsDefaulting(obj, s), JSON.stringify(want) !== JSON.stringify(obj));
        assert.equal(needsDefaulting(got, s), false);
      }),
      { numRuns: 2000 },
    );
  });

  it('fills, keeps and drops as the two steps do', () => {
    const obj = { spec: { a: null, b: null, c: null, d: null, m: { k: null }, mn: { k: null }, l: [null, { c: null }], ln: [null] } };
    defaultAndPruneNulls(obj, s);
    assert.deepStrictEqual(obj, {
      spec: { a: 'x', b: null, d: null, m: { k: { n: 1, q: 'q' } }, mn: { k: null }, l: [{ a: 'i', n: 2 }, { n: 2 }], ln: [null], o: { a: 'z', n: 3 } },
    });
  });
});
