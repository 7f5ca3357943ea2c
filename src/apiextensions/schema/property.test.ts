// Robustness: validation, pruning and defaulting take arbitrary JSON (including hostile nesting)
// without throwing or hanging.
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { issueString } from '../../apimachinery/errors.js';
import { applyDefaults, pruneNonNullableNullsWithoutDefaults } from './defaults.js';
import { prune } from './prune.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';
import { validateObject } from './validate.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[a-z]+$', maxLength: 10 },
        replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
        ratio: { type: 'number', multipleOf: 0.25, nullable: true },
        mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        when: { type: 'string', format: 'date-time' },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 5 },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port'],
          items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' }, name: { type: 'string', default: 'x' } } },
        },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'array', items: { type: 'object' } } } },
        any: { 'x-kubernetes-preserve-unknown-fields': true },
      },
      oneOf: [{ required: ['replicas'] }, { required: ['ratio'] }],
    },
    status: {
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } } } },
    },
  },
};
const s = newStructural(schema);

const key = fc.constantFrom(
  'spec',
  'status',
  'name',
  'replicas',
  'ratio',
  'mode',
  'port',
  'when',
  'labels',
  'tags',
  'ports',
  'template',
  'free',
  'known',
  'any',
  'items',
  'a',
  'metadata',
  'apiVersion',
  'kind',
  'x',
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    tie('arr'),
    tie('obj'),
  ),
  arr: fc.array(tie('value'), { maxLength: 4 }),
  obj: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
})).obj;

function runAll(obj: unknown): void {
  prune(obj, s, { isResourceRoot: true, pruneRootMetadata: true });
  pruneNonNullableNullsWithoutDefaults(obj, s);
  applyDefaults(obj, s);
  // messages are rendered too: they print bad values, which must stay printable
  for (const e of validateObject(obj, s)) issueString(e);
}

function nest(depth: number, wrap: (x: unknown) => unknown, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = wrap(v);
  return v;
}

describe('property: never throws', () => {
  it('on arbitrary JSON objects', () => {
    fc.assert(
      fc.property(json, (obj) => {
        runAll(obj);
      }),
      { numRuns: 400 },
    );
  });
  it('on arbitrary JSON placed under spec and status', () => {
    fc.assert(
      fc.property(json, json, (spec, status) => {
        runAll({ apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n' }, spec, status });
      }),
      { numRuns: 400 },
    );
  });
  // No stack overflow and no super-linear walk: the test's timeout is the check.
  it('on deep nesting in every position', { timeout: 60_000 }, () => {
    const depth = 100_000;
    const deepArr = nest(depth, (x) => [x], { a: 1 });
    const deepObj = nest(depth, (x) => ({ x }), 1);
    for (const v of [deepArr, deepObj]) {
      for (const where of ['name', 'tags', 'ports', 'template', 'free', 'any', 'labels', 'mode', 'x'] as const) {
        runAll({ spec: { [where]: v }, status: { items: [[v]] } });
        runAll({ spec: { free: { known: [v] }, tags: [v, v], ports: [v, v], template: { apiVersion: v, kind: v, metadata: { name: v, labels: v } } } });
      }
    }
  });
});
