import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';
import { baseEnvironment, armMeter, meter } from './library.js';
import { meterComprehensions } from './expressions.js';
import { parseCel } from './source.js';

/** The runtime cost an expression charges (its comprehensions metered as compiled programs are). */
function cost(e: string): number {
  const p = parseCel(baseEnvironment(), e);
  meterComprehensions(p.ast);
  p.check();
  armMeter(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  p({});
  return meter.used;
}

describe('two-variable comprehensions (cel-go ext.TwoVarComprehensions)', () => {
  it('all, exists and existsOne over lists (index, element) and maps (key, value), as cel-go documents them', () => {
    assert.equal(evaluate('[1, 2, 3].all(i, j, i < j)'), true);
    assert.equal(evaluate("{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)"), false);
    assert.equal(evaluate("{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))"), true);
    assert.equal(evaluate("{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))"), true);
    assert.equal(evaluate('[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)'), false);
    assert.equal(evaluate('[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)'), false);
    assert.equal(evaluate('[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)'), true);
    assert.equal(evaluate("{'i': 0, 'j': 1, 'k': 2}.exists_one(i, v, i == 'l' || v == 1)"), true);
  });

  it('transformList, transformMap and transformMapEntry, with and without a filter', () => {
    assert.deepEqual(evaluate('[1, 2, 3].transformList(i, v, (i * v) + v)'), [1n, 4n, 9n]);
    assert.deepEqual(evaluate('[1, 2, 3].transformList(i, v, i % 2 == 0, (i * v) + v)'), [1n, 9n]);
    assert.deepEqual(evaluate("{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k)"), ['greeting', 'farewell']);
    assert.deepEqual(evaluate("{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v)"), ['hello', 'goodbye']);
    assert.equal(evaluate('[1, 2, 3].transformMap(i, v, (i * v) + v) == {0: 1, 1: 4, 2: 9}'), true);
    assert.equal(evaluate('[1, 2, 3].transformMap(i, v, i % 2 == 0, (i * v) + v)[2]'), 9n);
    assert.equal(evaluate("{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}"), true);
    assert.equal(evaluate("{'greeting': 'hello'}.transformMapEntry(k, v, {v: k}) == {'hello': 'greeting'}"), true);
    assert.equal(evaluate("size({'a': 1, 'b': 2}.transformMapEntry(k, v, v > 1, {k + k: v}))"), 1n);
  });

  it('reads objects as they come from a request: the keys and values of labels, the elements of a list', () => {
    const object = { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { ports: [{ port: 80 }, { port: 443 }] } };
    assert.equal(evaluate("object.metadata.labels.all(k, v, k.size() < 10 && v != '')", { object }), true);
    assert.deepEqual(evaluate("object.spec.ports.transformList(i, p, string(i) + ':' + string(p.port))", { object }), ['0:80', '1:443']);
  });

  it('refuses what cel-go refuses, with its messages', () => {
    fails("{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, v, {v: k})", 'insert failed: key aloha already exists');
    fails('[1, 2].all(1 + 2, v, true)', 'argument must be a simple name');
    fails('[1, 2].all(x, x, true)', 'duplicate variable name: x');
    fails('[1, 2].exists(__result__, v, true)', 'iteration variable overwrites accumulator variable');
    fails('1.all(i, v, true)', "Expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic).");
    fails('[1, 2].all(i, v, 1)', "found no matching overload for '_&&_' applied to '(bool, int)'");
    fails('[1, 2].exists(i, v, 1)', "found no matching overload for '_||_' applied to '(bool, int)'");
    fails('[1, 2].existsOne(i, v, 1)', "existsOne(var, var, predicate) predicate must return bool, got 'int'");
    fails("{'a': 1}.transformMapEntry(k, v, v)", "transformMapEntry(var, var, transform) transform must return a map, got 'int'");
    // all and exists absorb an error when another element decides, as the one-variable forms do.
    assert.equal(evaluate('[0, 1].exists(i, v, 1 / v > 0)'), true);
    assert.equal(evaluate('[0, 1].all(i, v, i == 5 && 1 / v > 0)'), false);
    fails('[0, 1].all(i, v, 1 / v > 0)', 'division by zero');
  });

  it('charges the runtime meter per iteration, and a nested comprehension once per iteration of its own', () => {
    const one = cost('[1, 2, 3].all(i, v, v > 0)');
    assert.ok(one > 0);
    assert.equal(cost('[1, 2, 3, 4, 5, 6].all(i, v, v > 0)'), one * 2);
    // The one-variable form nested in itself: the inner loop's steps counted once (they were twice).
    const inner = cost('[1, 2, 3].all(y, y > 0)');
    const outer = cost('[[1, 2, 3]].all(x, x.all(y, y > 0))');
    assert.ok(outer - inner < inner, `nested ${outer}, inner alone ${inner}`);
  });
});
