// What a served version computes once per schema (defaulting nodes, validator nodes, the fields CEL
// rules read) follows a changed CRD: the strategy built from the new CRD uses the new schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { issueString } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { crdObject } from '../../test/support/crd.js';
import { buildServedVersion } from './customresource.js';
import { celValidationRules } from './rules.js';
import type { CustomResourceDefinition } from './types.js';
import type { JSONSchemaProps } from './schema/index.js';

function served(spec: JSONSchemaProps) {
  const crd = crdObject({ group: 'x.example.com', plural: 'things', kind: 'Thing', spec: spec as never }) as unknown as CustomResourceDefinition;
  crd.status = { acceptedNames: { plural: 'things', kind: 'Thing' }, storedVersions: ['v1'] };
  return buildServedVersion(crd, crd.spec!.versions![0]!, { rules: celValidationRules() }).registration;
}

const obj = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'x.example.com/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'n' }, spec });

test('defaults, validation and CEL rules follow a changed schema', () => {
  const before = served({
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.a < 10', message: 'a too big' }],
    properties: { a: { type: 'integer', default: 1 }, b: { type: 'string', maxLength: 3 } },
  });
  const after = served({
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'self.b.size() < 2', message: 'b too long' }],
    properties: { a: { type: 'integer', default: 2, maximum: 5 }, b: { type: 'string', default: 'zz' } },
  });
  for (let round = 0; round < 2; round++) {
    const o1 = obj({});
    before.strategy.defaults!(o1);
    assert.deepEqual((o1 as unknown as { spec: unknown }).spec, { a: 1 });
    const o2 = obj({});
    after.strategy.defaults!(o2);
    assert.deepEqual((o2 as unknown as { spec: unknown }).spec, { a: 2, b: 'zz' });

    assert.deepEqual(before.strategy.validate(obj({ a: 7, b: 'long' })).map(issueString), ['spec.b: Too long: may not be more than 3 bytes']);
    assert.deepEqual(after.strategy.validate(obj({ a: 7, b: 'long' })).map(issueString), [
      'spec.a: Invalid value: 7: spec.a in body should be less than or equal to 5',
      'spec: Invalid value: b too long',
    ]);
    assert.deepEqual(before.strategy.validate(obj({ a: 11, b: 'x' })).map(issueString), ['spec: Invalid value: a too big']);
    assert.deepEqual(after.converter?.fromStorage(obj({ a: 1 })).spec, { a: 1, b: 'zz' });
    assert.deepEqual(before.converter?.fromStorage(obj({ b: 'x' })).spec, { b: 'x', a: 1 });
  }
});
