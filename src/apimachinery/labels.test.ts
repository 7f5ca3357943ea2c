import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isStatusError } from './errors.js';
import {
  labelRequiresExactMatch,
  labelSelectorFromObject,
  labelSelectorToString,
  matchesLabels,
  parseLabelSelector,
  selectorFromSet,
  tryLabelSelectorFromObject,
  tryParseLabelSelector,
  type LabelOperator,
  type LabelRequirement,
} from './labels.js';

const errorOf = (s: string): string => {
  const r = tryParseLabelSelector(s);
  assert.equal(r.ok, false, `expected ${JSON.stringify(s)} to fail`);
  return r.ok ? '' : r.message;
};

test('parses every operator (upstream TestSelectorParse valid cases)', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
    ['x!=a,y=b', 'x!=a,y=b'],
    ['x=,z= ', 'x=,z='],
    ['x= ,z= ', 'x=,z='],
    ['!x', '!x'],
    ['x>1', 'x>1'],
    ['x>1,z<5', 'x>1,z<5'],
    ['x==a', 'x==a'],
    ['x in (a,b)', 'x in (a,b)'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in ()', 'x in ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x in (in)', 'x in (in)'],
    ['  y , !x  ', '!x,y'],
    ['z,y,x', 'x,y,z'],
    ['example.com/a=b', 'example.com/a=b'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
  ];
  for (const [input, canonical] of cases) assert.equal(labelSelectorToString(parseLabelSelector(input)), canonical, input);
});

test('syntax errors carry upstream messages', () => {
  assert.equal(
    errorOf('x=a||y=b'),
    "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  );
  assert.equal(errorOf('a b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  assert.equal(errorOf('x y=z'), "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt");
  // Negative bounds are integers but not valid label values, so upstream rejects them too.
  assert.match(errorOf('x>-5'), /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "-5"/);
  assert.match(errorOf('In/x=y'), /^unable to parse requirement: <nil>: Invalid value: "In\/x": prefix part a lowercase RFC 1123 subdomain/);
  assert.equal(errorOf('x=a,'), "found '', expected: identifier after ','");
  assert.equal(errorOf(',x'), "found ',', expected: !, identifier, or 'end of string'");
  assert.equal(errorOf('x in a'), "unable to parse requirement: found 'a' expected: '('");
  assert.equal(errorOf('x in (a'), "unable to parse requirement: found '', expected: ',' or ')'");
  assert.equal(errorOf('x (a)'), "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt");
  assert.equal(errorOf('x=a b'), "found 'b', expected: ',' or 'end of string'");
  assert.equal(errorOf('!x=a'), "found '=', expected: ',' or 'end of string'");
  assert.equal(errorOf('x>a'), "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer");
  assert.match(errorOf('x=a b c'), /^found 'b'/);
  assert.match(errorOf('x=-a'), /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "-a": a valid label must be an empty string/);
  assert.match(errorOf('a/b/c'), /^unable to parse requirement: <nil>: Invalid value: "a\/b\/c": a qualified name must consist of/);
  assert.equal(errorOf('x=(a)'), "unable to parse requirement: found '(', expected: identifier");
});

test('parseLabelSelector throws a 400', () => {
  try {
    parseLabelSelector('x in');
    assert.fail('should throw');
  } catch (e) {
    assert.ok(isStatusError(e));
    assert.equal(e.code, 400);
    assert.equal(e.status.message, "unable to parse requirement: found '' expected: '('");
  }
});

test('empty values between commas: the second of two commas is consumed, as upstream parseIdentifiersList does', () => {
  const msg = (sel: string): string => {
    try {
      parseLabelSelector(sel);
    } catch (e) {
      return isStatusError(e) ? (e.status.message ?? '') : String(e);
    }
    return 'parsed';
  };
  assert.equal(msg('app in (x,,)'), "unable to parse requirement: found ')', expected: ',', or identifier");
  assert.equal(msg('app in (,,)'), "unable to parse requirement: found ')', expected: ',', or identifier");
  assert.equal(msg('app in (a,,b)'), 'parsed');
  assert.equal(msg('app in (,,,)'), 'parsed');
  assert.ok(matchesLabels(parseLabelSelector('app in (a,,b)'), { app: '' }));
});

test('matching semantics (upstream TestSelectorMatches)', () => {
  const m = (sel: string, labels: Record<string, string>): boolean => matchesLabels(parseLabelSelector(sel), labels);
  assert.ok(m('', { x: 'y' }));
  assert.ok(m('x=y', { x: 'y' }));
  assert.ok(m('x=y,z=w', { x: 'y', z: 'w' }));
  assert.ok(m('x!=y,z!=w', { x: 'z', z: 'a' }));
  assert.ok(m('notin=in', { notin: 'in' }));
  assert.ok(m('x', { x: 'z' }));
  assert.ok(m('!x', { y: 'z' }));
  assert.ok(m('x>1', { x: '2' }));
  assert.ok(m('x<1', { x: '0' }));
  assert.ok(m('x notin (a)', {}));
  assert.ok(m('x!=a', {}));
  assert.ok(!m('x=z', {}));
  assert.ok(!m('x=y', { x: 'z' }));
  assert.ok(!m('x=y,z=w', { x: 'w', z: 'w' }));
  assert.ok(!m('x!=y,z!=w', { x: 'z', z: 'w' }));
  assert.ok(!m('x', { y: 'z' }));
  assert.ok(!m('!x', { x: 'z' }));
  assert.ok(!m('x>1', { x: '0' }));
  assert.ok(!m('x>1', { x: 'a' }));
  assert.ok(!m('x<1', { x: '1' }));
  assert.ok(!m('x in (a,b)', { x: 'c' }));
  assert.ok(m('x in (a,b)', { x: 'b' }));
  assert.ok(m('x in ()', { x: '' }));
  assert.ok(m('x>5', { x: '+6' }));
  assert.ok(m('x>9223372036854775806', { x: '9223372036854775807' }));
});

test('metav1.LabelSelector objects', () => {
  assert.equal(matchesLabels(labelSelectorFromObject(null), {}), false);
  assert.equal(matchesLabels(labelSelectorFromObject({}), { a: 'b' }), true);
  const s = labelSelectorFromObject({
    matchLabels: { b: '1' },
    matchExpressions: [
      { key: 'a', operator: 'In', values: ['y', 'x'] },
      { key: 'c', operator: 'DoesNotExist' },
      { key: 'd', operator: 'Exists' },
      { key: 'e', operator: 'NotIn', values: ['z'] },
    ],
  });
  assert.equal(labelSelectorToString(s), 'a in (x,y),b=1,!c,d,e notin (z)');
  assert.ok(matchesLabels(s, { a: 'x', b: '1', d: '' }));
  assert.ok(!matchesLabels(s, { a: 'x', b: '1', d: '', c: '' }));
  const bad = tryLabelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] });
  assert.equal(bad.ok ? '' : bad.message, '"Gt" is not a valid label selector operator');
  const empty = tryLabelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In' }] });
  assert.equal(empty.ok ? '' : empty.message, "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty");
  const exists = tryLabelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] });
  assert.equal(exists.ok ? '' : exists.message, 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist');
  const badKey = tryLabelSelectorFromObject({ matchLabels: { 'a b': 'c' } });
  assert.match(badKey.ok ? '' : badKey.message, /^key: Invalid value: "a b": name part must consist/);
  assert.equal(badKey.ok ? 0 : badKey.issues.length, 1);
});

test('exact match and selectors from sets', () => {
  assert.equal(labelRequiresExactMatch(parseLabelSelector('a=b,c in (d)'), 'c'), 'd');
  assert.equal(labelRequiresExactMatch(parseLabelSelector('a!=b'), 'a'), undefined);
  assert.equal(labelSelectorToString(selectorFromSet({ z: '1', a: '2' })), 'a=2,z=1');
});

const keyArb = fc
  .tuple(fc.option(fc.constantFrom('example.com', 'a.b', 'k8s.io'), { nil: undefined }), fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/))
  .map(([prefix, name]) => (prefix ? `${prefix}/${name}` : name));
const valueArb = fc.stringMatching(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?$/);
const requirementArb: fc.Arbitrary<LabelRequirement> = fc.oneof(
  fc.record({ key: keyArb, operator: fc.constantFrom<LabelOperator>('=', '==', '!='), values: valueArb.map((v) => [v]) }),
  fc.record({
    key: keyArb,
    operator: fc.constantFrom<LabelOperator>('in', 'notin'),
    values: fc.uniqueArray(valueArb, { minLength: 1, maxLength: 4 }).map((v) => [...v].sort()),
  }),
  fc.record({ key: keyArb, operator: fc.constantFrom<LabelOperator>('exists', '!'), values: fc.constant([]) }),
  fc.record({ key: keyArb, operator: fc.constantFrom<LabelOperator>('gt', 'lt'), values: fc.nat().map((n) => [String(n)]) }),
);

test('property: parse(toString(selector)) gives the selector back', () => {
  fc.assert(
    fc.property(fc.uniqueArray(requirementArb, { maxLength: 5, selector: (r) => r.key }), (reqs) => {
      const sorted = reqs
        .map((r) => ({ key: r.key, operator: r.operator, values: [...r.values] }))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const text = labelSelectorToString({ requirements: sorted });
      const parsed = parseLabelSelector(text);
      assert.deepEqual(parsed.requirements, sorted, text);
      assert.equal(labelSelectorToString(parsed), text);
    }),
    { numRuns: 1000 },
  );
});

test('property: parsing arbitrary text never throws anything unexpected', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      const r = tryParseLabelSelector(s);
      if (r.ok) assert.deepEqual(parseLabelSelector(labelSelectorToString(r.selector)).requirements.length, r.selector.requirements.length);
    }),
    { numRuns: 2000 },
  );
});
