import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration, timeQuote, timeQuoteBytes } from './time.js';

describe('parseGoDuration (time.ParseDuration)', () => {
  it('reads durations to the nanosecond', () => {
    const cases: [string, bigint][] = [
      ['0', 0n],
      ['+0', 0n],
      ['-0', 0n],
      ['0s', 0n],
      ['5s', 5_000_000_000n],
      ['300ms', 300_000_000n],
      ['1m30s', 90_000_000_000n],
      ['1.5h', 5_400_000_000_000n],
      ['-1.5h', -5_400_000_000_000n],
      ['2h45m', 9_900_000_000_000n],
      ['.5s', 500_000_000n],
      ['5.s', 5_000_000_000n],
      ['1µs', 1_000n],
      ['1μs', 1_000n],
      ['1us', 1_000n],
      ['10ns', 10n],
      ['1h1h', 7_200_000_000_000n],
      ['9223372036854775807ns', 9223372036854775807n],
      ['-9223372036854775808ns', -9223372036854775808n],
      ['0.000000001s', 1n],
      ['1.0000000001s', 1_000_000_000n],
      ['0.1234567890123456789012345h', 444_444_440_444n],
    ];
    for (const [s, ns] of cases) assert.deepEqual(parseGoDuration(s), { ns }, s);
  });

  it("answers time's own error texts", () => {
    const cases: [string, string][] = [
      ['', 'time: invalid duration ""'],
      ['-', 'time: invalid duration "-"'],
      ['bogus', 'time: invalid duration "bogus"'],
      ['.', 'time: invalid duration "."'],
      ['.s', 'time: invalid duration ".s"'],
      ['5', 'time: missing unit in duration "5"'],
      ['00', 'time: missing unit in duration "00"'],
      ['1s5', 'time: missing unit in duration "1s5"'],
      ['5x', 'time: unknown unit "x" in duration "5x"'],
      ['5 s', 'time: unknown unit " s" in duration "5 s"'],
      ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
      ['5S', 'time: unknown unit "S" in duration "5S"'],
      ['1µ', 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"'],
      ['5"x', 'time: unknown unit "\\"x" in duration "5\\"x"'],
      ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
      ['9223372036854775809ns', 'time: invalid duration "9223372036854775809ns"'],
      ['2562048h', 'time: invalid duration "2562048h"'],
      ['99999999999999999999s', 'time: invalid duration "99999999999999999999s"'],
    ];
    for (const [s, error] of cases) assert.deepEqual(parseGoDuration(s), { error }, s);
  });
});

describe('timeQuote (time.quote)', () => {
  it('escapes every byte outside printable ASCII, and quotes and backslashes', () => {
    assert.equal(timeQuote('5s'), '"5s"');
    assert.equal(timeQuote('µ'), '"\\xc2\\xb5"');
    assert.equal(timeQuote('a"b\\c\n'), '"a\\"b\\\\c\\x0a"');
    assert.equal(timeQuoteBytes(Buffer.from('2024-01-02Tx'), 10), '"Tx"');
  });
});
