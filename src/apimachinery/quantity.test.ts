import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Quantity, canonicalResourceList, parseQuantity } from './quantity.js';

const canon = (s: string | number): string => Quantity.parse(s)!.toString();

describe('Quantity', () => {
  it('writes the canonical form as resource.Quantity.String() does', () => {
    const cases: [string | number, string][] = [
      ['0', '0'],
      ['2', '2'],
      [2, '2'],
      ['1000', '1k'],
      ['1500', '1500'],
      ['0.5', '500m'],
      ['1.5', '1500m'],
      ['100m', '100m'],
      ['1e3', '1e3'],
      ['1E6', '1e6'],
      ['2048', '2048'],
      ['2Ki', '2Ki'],
      ['1024Mi', '1Gi'],
      ['1536Ki', '1536Ki'],
      ['0.5Ki', '512'],
      ['1000Mi', '1000Mi'],
      ['-1', '-1'],
      ['-1k', '-1k'],
      ['1n', '1n'],
      ['0.0000000001', '1n'],
      ['1000E', '1000E'],
      [' 3 ', '3'],
    ];
    for (const [input, want] of cases) assert.equal(canon(input), want, `${String(input)}`);
  });

  it('refuses what ParseQuantity refuses', () => {
    for (const s of ['', 'lots', '1.2.3', '1Qi', '--1', '.']) assert.equal(Quantity.parse(s), undefined, s);
    assert.equal(Quantity.parse(true), undefined);
  });

  it('adds, compares and tells integers (MilliValue % 1000 == 0)', () => {
    const a = Quantity.parse('1')!;
    const b = Quantity.parse('1500m')!;
    assert.equal(a.add(b).toString(), '2500m');
    assert.equal(a.cmp(b), -1);
    assert.equal(b.cmp(a), 1);
    assert.equal(Quantity.parse('1k')!.cmp(Quantity.parse('1000')!), 0);
    assert.equal(Quantity.parse('2')!.isInteger(), true);
    assert.equal(Quantity.parse('1500m')!.isInteger(), false);
    assert.equal(Quantity.parse('0.0001')!.isInteger(), false);
    assert.equal(Quantity.parse('-1')!.sign(), -1);
  });

  it('canonicalResourceList keeps values that do not parse', () => {
    assert.deepEqual(canonicalResourceList({ a: '1000', b: 'x', c: 3 }), { a: '1k', b: 'x', c: '3' });
    assert.equal(canonicalResourceList(['a']), undefined);
  });
});

describe('parseQuantity', () => {
  it("gives Go's error texts and never trims", () => {
    const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    assert.equal(parseQuantity('').error, FORMAT);
    assert.equal(parseQuantity(' 1').error, FORMAT);
    assert.equal(parseQuantity('1 ').error, FORMAT);
    assert.equal(parseQuantity('1i').error, "unable to parse quantity's suffix");
    assert.equal(parseQuantity('1e99999999999999999999').error, "unable to parse quantity's suffix");
    assert.equal(parseQuantity('.e-10').error, 'unable to parse numeric part of quantity');
    assert.equal(parseQuantity('1.k').quantity?.toString(), '1k');
  });

  it('accepts, without a value, what Go reads but kplane cannot hold or refuses', () => {
    for (const s of ['-', '+', '.', '-.', '1e1001']) assert.deepEqual(parseQuantity(s), { quantity: undefined }, s);
    assert.equal(parseQuantity('000').quantity?.toString(), '0');
    assert.equal(parseQuantity('1e1000').quantity!.cmp(Quantity.fromInt(10n ** 1000n)), 0);
  });
});
