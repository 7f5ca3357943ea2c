import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { containsBigInt, mayHoldLongIntegers, parseJSONExact, stringifyJSON } from './json-int64.js';

describe('stringifyJSON', () => {
  it('is JSON.stringify without bigints, and writes bigints as JSON integers', () => {
    const plain = { a: [1, 'x', null, { b: true }], c: undefined, d: new Date(0) };
    assert.equal(stringifyJSON(plain), JSON.stringify(plain));
    assert.equal(stringifyJSON(plain, 2), JSON.stringify(plain, null, 2));
    assert.equal(
      stringifyJSON({ a: 9223372036854775807n, b: [-9223372036854775808n, 1], c: 'x' }),
      '{"a":9223372036854775807,"b":[-9223372036854775808,1],"c":"x"}',
    );
    assert.equal(stringifyJSON({ a: 1n }, 2), '{\n  "a": 1\n}');
    assert.equal(stringifyJSON(5n), '5');
  });

  it('leaves strings that look like its markers alone', () => {
    const v = { s: '\u0000abc:12', t: '"\\u0000', n: 9007199254740993n };
    assert.deepEqual(JSON.parse(stringifyJSON(v).replace('9007199254740993', '0')), { s: '\u0000abc:12', t: '"\\u0000', n: 0 });
  });

  it('(property) round-trips through parseJSONExact', () => {
    const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
    fc.assert(
      fc.property(fc.jsonValue(), fc.bigInt(INT64), fc.string(), (other, x, s) => {
        const v = { other, x: Number.isSafeInteger(Number(x)) ? Number(x) : x, list: [s, x < 0n ? x : -x] };
        const back = parseJSONExact(stringifyJSON(v)) as typeof v;
        assert.equal(BigInt(back.x), x);
        assert.equal(back.list[0], s);
        assert.equal(stringifyJSON(back), stringifyJSON(v));
      }),
      { numRuns: 500 },
    );
  });
});

describe('parseJSONExact', () => {
  it('keeps int64 integers past 2^53 as bigints, all else as JSON.parse does', () => {
    assert.deepEqual(parseJSONExact('{"a":[9007199254740993,9007199254740991,"9007199254740993",1e30,18446744073709551615],"b":{"c":-9223372036854775808}}'), {
      a: [9007199254740993n, 9007199254740991, '9007199254740993', 1e30, 18446744073709552000],
      b: { c: -9223372036854775808n },
    });
    assert.deepEqual(parseJSONExact('{"k\\"ey":12345678901234567,"x":"\\\\"}'), { 'k"ey': 12345678901234567n, x: '\\' });
    // A number as the whole text too.
    assert.equal(parseJSONExact(' 9223372036854775807 '), 9223372036854775807n);
    assert.equal(parseJSONExact('1.5'), 1.5);
    assert.equal(parseJSONExact('9223372036854775808'), 2 ** 63);
  });

  it('(property) finds a run of 16 digits exactly where a regular expression does', () => {
    const text = fc
      .array(fc.oneof(fc.constantFrom('1', '9', '0', '"', ',', '.', '-'), fc.stringMatching(/^[0-9]{1,20}$/)), { maxLength: 40 })
      .map((a) => a.join(''));
    fc.assert(
      fc.property(text, (t) => assert.equal(mayHoldLongIntegers(t), /[0-9]{16}/.test(t), t)),
      { numRuns: 3000 },
    );
  });

  it('tells whether a text may hold long integers and a value bigints', () => {
    assert.equal(mayHoldLongIntegers('{"a":123456789012345}'), false);
    assert.equal(mayHoldLongIntegers('{"a":1234567890123456}'), true);
    assert.equal(containsBigInt({ a: [{ b: 1n }] }), true);
    assert.equal(containsBigInt({ a: [{ b: 1 }] }), false);
  });
});
