// Rules that only select fields of self/oldSelf get self converted with just those fields; any
// other use of self converts it whole. Either way the rules see the same values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../../apimachinery/errors.js';
import type { JSONSchemaProps, ValidationRule } from '../schema/types.js';
import { selectedSelfFields } from './compile.js';
import { compileRules, evaluate } from './index.js';

const props: Record<string, JSONSchemaProps> = {
  a: { type: 'string' },
  b: { type: 'integer' },
  c: { type: 'object', properties: { d: { type: 'integer' } } },
  l: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
  m: { type: 'object', additionalProperties: { type: 'string' } },
};

function specNode(rules: ValidationRule[]) {
  const schema: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': rules, properties: props } } };
  const { compiled, issues } = compileRules(schema);
  assert.deepEqual(issues, []);
  return { compiled, node: compiled.root!.properties!.get('spec')! };
}

function usedFields(rules: ValidationRule[]): string[] | undefined {
  const { node } = specNode(rules);
  const asts = node.rules.flatMap((r) => (r.messageProgram ? [r.program.ast, r.messageProgram.ast] : [r.program.ast]));
  const f = selectedSelfFields(asts);
  return f ? [...f].sort() : undefined;
}

describe('converting only the fields the rules select', () => {
  it('finds the selected fields, and gives up on any other use', () => {
    assert.deepEqual(usedFields([{ rule: 'self.b > 0 && has(self.a)' }]), ['a', 'b']);
    assert.deepEqual(usedFields([{ rule: 'self.l.all(x, x.n < self.b)' }, { rule: 'self.c.d > 0', messageExpression: "'bad ' + self.a" }]), [
      'a',
      'b',
      'c',
      'l',
    ]);
    assert.deepEqual(usedFields([{ rule: 'self.b == oldSelf.b' }]), ['b']);
    assert.equal(usedFields([{ rule: 'self == oldSelf' }]), undefined);
    assert.equal(usedFields([{ rule: 'self.b > 0' }, { rule: "self.m.all(k, k != 'x') && [self, self].size() == 2" }]), undefined);
    assert.equal(usedFields([{ rule: 'self.b > 0', messageExpression: 'string(self.b) + string(has(self.a))' }, { rule: '[self].size() == 1' }]), undefined);
    assert.equal(usedFields([{ rule: 'self.l.exists(x, [self].size() == x.n)' }, { rule: 'true', messageExpression: "self.?a.orValue('')" }]), undefined);
  });

  it('evaluates as with the whole object', () => {
    const rules: ValidationRule[] = [
      { rule: 'self.b > 0 && has(self.a)', message: 'need a and b' },
      { rule: 'self.l.all(x, x.n < self.b)', messageExpression: "'n too big: ' + string(self.b)" },
      { rule: '!has(self.c) || self.c.d != 3' },
    ];
    const { compiled } = specNode(rules);
    const full = compileRules({
      type: 'object',
      properties: { spec: { type: 'object', 'x-kubernetes-validations': [...rules, { rule: 'self == self' }], properties: props } },
    }).compiled;
    const objs = [
      { spec: { a: 'x', b: 2, l: [{ n: 1 }], m: { k: 'v' } } },
      { spec: { b: 0, l: [{ n: 5 }], c: { d: 3 } } },
      { spec: { a: 'y', b: 1, l: [{ n: 1 }, { n: 0 }], c: { d: 4 } } },
    ];
    for (const o of objs) {
      const got = evaluate(compiled, o).map(issueString);
      assert.deepEqual(got, evaluate(full, o).map(issueString));
    }
    assert.deepEqual(evaluate(compiled, objs[1]).map(issueString), [
      'spec: Invalid value: need a and b',
      'spec: Invalid value: n too big: 0',
      'spec: Invalid value: failed rule: !has(self.c) || self.c.d != 3',
    ]);
  });
});
