import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration, parseTimeError, timeQuote, timeQuoteBytes } from './time.js';

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
    // format_test.go's TestQuote
    const cases: [string, string][] = [
      ['"', '"\\""'],
      ['abc"xyz"', '"abc\\"xyz\\""'],
      ['', '""'],
      ['abc', '"abc"'],
      ['☺', '"\\xe2\\x98\\xba"'],
      ['☺ hello ☺ hello', '"\\xe2\\x98\\xba hello \\xe2\\x98\\xba hello"'],
      ['\x04', '"\\x04"'],
    ];
    for (const [s, want] of cases) assert.equal(timeQuote(s), want, s);
  });
});

describe('parseTimeError (time.Parse of Go 1.24 with the metav1 layouts)', () => {
  const T = (s: string) => parseTimeError(s, false);
  const M = (s: string) => parseTimeError(s, true);
  const L3339 = '"2006-01-02T15:04:05Z07:00"';
  it('accepts RFC 3339 with optional fraction (Time) and exactly six fraction digits (MicroTime)', () => {
    for (const s of [
      '2024-01-02T03:04:05Z',
      '2024-01-02T03:04:05.123Z',
      '2024-01-02T03:04:05,5+01:00',
      '2024-01-01T1:00:00Z',
      '2024-02-29T00:00:00Z',
      '2000-02-29T00:00:00Z',
      '2024-01-01T00:00:00+24:00',
    ])
      assert.equal(T(s), undefined, s);
    for (const s of ['2024-01-02T03:04:05.123456Z', '2024-01-02T03:04:05,000001-07:00', '2024-01-01T00:00:00.+12345Z', '2024-01-01T00:00:00.-00000Z'])
      assert.equal(M(s), undefined, s);
  });
  it('reports the element that failed, or the range', () => {
    assert.equal(T(''), `parsing time "" as ${L3339}: cannot parse "" as "2006"`);
    assert.equal(T('2024-1-01T00:00:00Z'), `parsing time "2024-1-01T00:00:00Z" as ${L3339}: cannot parse "1-01T00:00:00Z" as "01"`);
    assert.equal(T('2024-01-01 00:00:00Z'), `parsing time "2024-01-01 00:00:00Z" as ${L3339}: cannot parse " 00:00:00Z" as "T"`);
    assert.equal(T('2024-01-01T00:00:00'), `parsing time "2024-01-01T00:00:00" as ${L3339}: cannot parse "" as "Z07:00"`);
    assert.equal(T('2024-01-01T00:00:00+0100'), `parsing time "2024-01-01T00:00:00+0100" as ${L3339}: cannot parse "+0100" as "Z07:00"`);
    assert.equal(T('2024-01-01T00:00:00Zx'), 'parsing time "2024-01-01T00:00:00Zx": extra text: "x"');
    assert.equal(T('2024-13-01T00:00:00Z'), 'parsing time "2024-13-01T00:00:00Z": month out of range');
    assert.equal(T('2024-01-01T24:00:00Z'), 'parsing time "2024-01-01T24:00:00Z": hour out of range');
    assert.equal(T('2024-01-01T00:60:00Z'), 'parsing time "2024-01-01T00:60:00Z": minute out of range');
    assert.equal(T('2024-01-01T00:00:60Z'), 'parsing time "2024-01-01T00:00:60Z": second out of range');
    assert.equal(T('2023-02-29T00:00:00Z'), 'parsing time "2023-02-29T00:00:00Z": day out of range');
    assert.equal(T('1900-02-29T00:00:00Z'), 'parsing time "1900-02-29T00:00:00Z": day out of range');
    assert.equal(
      M('2024-01-01T00:00:00.12345Z'),
      `parsing time "2024-01-01T00:00:00.12345Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".12345Z" as ".000000"`,
    );
    assert.equal(
      M('2024-01-01T00:00:00.1234567Z'),
      `parsing time "2024-01-01T00:00:00.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00"`,
    );
    assert.equal(M('2024-01-01T00:00:00.-12345Z'), 'parsing time "2024-01-01T00:00:00.-12345Z": fractional second out of range');
  });
  it('follows Go 1.24 where it differs from Go 1.19 (the element before it was consumed; offset checks)', () => {
    assert.equal(T('20a4-01-01T00:00:00Z'), `parsing time "20a4-01-01T00:00:00Z" as ${L3339}: cannot parse "20a4-01-01T00:00:00Z" as "2006"`);
    assert.equal(
      M('2024-01-01T00:00:00.12a456Z'),
      `parsing time "2024-01-01T00:00:00.12a456Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse ".12a456Z" as ".000000"`,
    );
    assert.equal(T('2024-01-01T00:00:00x01:00'), `parsing time "2024-01-01T00:00:00x01:00" as ${L3339}: cannot parse "x01:00" as "Z07:00"`);
    assert.equal(T('2024-01-01T00:00:00+-1:00'), `parsing time "2024-01-01T00:00:00+-1:00" as ${L3339}: cannot parse "+-1:00" as "Z07:00"`);
    assert.equal(T('2024-01-01T00:00:00+25:00'), 'parsing time "2024-01-01T00:00:00+25:00": time zone offset hour out of range');
    assert.equal(T('2024-01-01T00:00:00+01:61'), 'parsing time "2024-01-01T00:00:00+01:61": time zone offset minute out of range');
  });
  it('quotes as time.quote does: bytes outside printable ASCII in hex', () => {
    assert.equal(T('\ud800'), `parsing time "\\xef\\xbf\\xbd" as ${L3339}: cannot parse "\\xef\\xbf\\xbd" as "2006"`);
    assert.equal(T('2024-01-01T00:00:00Zé"'), 'parsing time "2024-01-01T00:00:00Z\\xc3\\xa9\\"": extra text: "\\xc3\\xa9\\""');
  });
  it("format_test.go's RFC 3339 cases (TestParseErrors, TestParseFractionalSecondsLongerThanNineDigits)", () => {
    assert.equal(T('2006-01-02T15:04:05Z07:00'), 'parsing time "2006-01-02T15:04:05Z07:00": extra text: "07:00"');
    assert.equal(T('2006-01-02T15:04_abc'), `parsing time "2006-01-02T15:04_abc" as ${L3339}: cannot parse "_abc" as ":"`);
    assert.equal(T('2006-01-02T15:04:05_abc'), `parsing time "2006-01-02T15:04:05_abc" as ${L3339}: cannot parse "_abc" as "Z07:00"`);
    assert.equal(T('2006-01-02T15:04:05Z_abc'), 'parsing time "2006-01-02T15:04:05Z_abc": extra text: "_abc"');
    assert.equal(T('2010-02-04T21:00:67.012345678-08:00'), 'parsing time "2010-02-04T21:00:67.012345678-08:00": second out of range');
    assert.equal(T('"'), `parsing time "\\"" as ${L3339}: cannot parse "\\"" as "2006"`);
    for (const s of ['2021-09-29T16:04:33.000000001Z', '2021-09-29T16:04:33.0123456789Z', '2021-09-29T16:04:33.9999999999999999Z'])
      assert.equal(T(s), undefined, s);
  });
});
