import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Optional } from '@marcbachmann/cel-js';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';
import { blankOptionalEntries } from './source.js';

const valueOf = (o: unknown): unknown => (o instanceof Optional && o.hasValue() ? o.value() : undefined);

describe('optional types beyond the evaluator: ofNonZeroValue, optMap, optFlatMap, optional entries', () => {
  it('optional.ofNonZeroValue is none for a zero value of any type', () => {
    for (const zero of ['0', '0u', '0.0', "''", 'false', 'null', '[]', '{}', "b''"])
      assert.equal(evaluate(`optional.ofNonZeroValue(${zero}).hasValue()`), false, zero);
    for (const value of ['1', "'a'", 'true', '[0]', "{'a': 0}"]) assert.equal(evaluate(`optional.ofNonZeroValue(${value}).hasValue()`), true, value);
  });

  it('optMap maps a present value and keeps none; optFlatMap takes an optional from its expression', () => {
    assert.equal(valueOf(evaluate("{'k': 'v'}[?'k'].optMap(v, v + '!')")), 'v!');
    assert.equal(evaluate("{'k': 'v'}[?'x'].optMap(v, v + '!').hasValue()"), false);
    assert.equal(valueOf(evaluate('optional.of(2).optFlatMap(x, x > 1 ? optional.of(x * 2) : optional.none())')), 4n);
    assert.equal(evaluate('optional.of(1).optFlatMap(x, x > 1 ? optional.of(x * 2) : optional.none()).hasValue()'), false);
    assert.equal(evaluate('object.?spec.?replicas.optMap(r, r * 2).orValue(1)', { object: { spec: { replicas: 3n } } }), 6n);
    fails('optional.of(1).optMap(1, 2)', 'optMap() variable name must be a simple identifier');
    fails('optional.of(1).optFlatMap(x, x)', "optFlatMap() expression must be optional, got 'int'");
    fails('(1).optMap(x, x)', "optMap() receiver must be optional, got 'int'");
  });

  it('first, last and unwrap (version 2 of the optional library)', () => {
    assert.equal(valueOf(evaluate('[1, 2, 3].first()')), 1n);
    assert.equal(valueOf(evaluate('[1, 2, 3].last()')), 3n);
    assert.equal(evaluate('[].first().hasValue()'), false);
    assert.deepEqual(evaluate('optional.unwrap([optional.of(1), optional.none(), optional.of(3)])'), [1n, 3n]);
    assert.deepEqual(evaluate("[optional.none(), optional.of('a')].unwrapOpt()"), ['a']);
  });

  it('a list or map literal keeps an optional entry only when it has a value', () => {
    assert.deepEqual(evaluate('[1, ?optional.of(2), ?optional.none(), 3]'), [1n, 2n, 3n]);
    assert.deepEqual(evaluate('[?optional.none()]'), []);
    assert.equal(evaluate("{'a': 1, ?'b': optional.none(), ?'c': optional.of(3)} == {'a': 1, 'c': 3}"), true);
    assert.equal(evaluate("[[?optional.of('a')], ?optional.of(['b'])] == [['a'], ['b']]"), true);
    assert.deepEqual(evaluate('[?object.?metadata.?labels.?app, ?object.?metadata.?labels.?nope]', { object: { metadata: { labels: { app: 'web' } } } }), [
      'web',
    ]);
    assert.equal(evaluate("true ? 'a?' + [?(optional.of('b'))][0] : 'c'"), 'a?b');
    assert.equal(evaluate("'a' in [?optional.of('a')] && !('b' in [?optional.none()])"), true);
    fails('[1, ?2]', "optional entry must be optional, got 'int'");
  });

  it('blanks only the ? that opens an entry, keeping every column', () => {
    const src = "[a, ?b, c[?0], {?'k': d ? e : f}, g.?h, '?', x(?y)]";
    const { src: out, marks } = blankOptionalEntries(src);
    assert.equal(out.length, src.length);
    assert.deepEqual(
      marks.map((i) => src.slice(i, i + 3)),
      ['?b,', "?'k"],
    );
  });
});
