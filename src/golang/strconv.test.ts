import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERR_RANGE, ERR_SYNTAX, goAtoi, NumError, parseGoBool, parseGoInt, parseGoUint, underscoreOK } from './strconv.js';

type Case = [string, bigint | string]; // the value, or the NumError's Err text
const S = ERR_SYNTAX;
const R = ERR_RANGE;

function check(fn: (s: string) => bigint | NumError, func: string, cases: Case[], label: string): void {
  for (const [input, want] of cases) {
    const got = fn(input);
    const what = `${label}(${JSON.stringify(input)})`;
    if (typeof want === 'bigint') assert.equal(got, want, what);
    else {
      assert.ok(got instanceof NumError, what);
      assert.deepEqual([got.func, got.num, got.err], [func, input, want], what);
    }
  }
}

// The tables of Go's src/strconv/atoi_test.go.
const uint64Tests: Case[] = [
  ['', S],
  ['0', 0n],
  ['1', 1n],
  ['12345', 12345n],
  ['012345', 12345n],
  ['12345x', S],
  ['98765432100', 98765432100n],
  ['18446744073709551615', (1n << 64n) - 1n],
  ['18446744073709551616', R],
  ['18446744073709551620', R],
];
const uint64BaseTests: Case[] = [
  ['', S],
  ['0', 0n],
  ['0x', S],
  ['0X', S],
  ['1', 1n],
  ['12345', 12345n],
  ['012345', 0o12345n],
  ['0x12345', 0x12345n],
  ['0X12345', 0x12345n],
  ['12345x', S],
  ['0xabcdefg123', S],
  ['123456789abc', S],
  ['98765432100', 98765432100n],
  ['18446744073709551615', (1n << 64n) - 1n],
  ['18446744073709551616', R],
  ['18446744073709551620', R],
  ['0xFFFFFFFFFFFFFFFF', (1n << 64n) - 1n],
  ['0x10000000000000000', R],
  ['01777777777777777777777', (1n << 64n) - 1n],
  ['01777777777777777777778', S],
  ['02000000000000000000000', R],
  ['0200000000000000000000', 1n << 61n],
];
const int64Tests: Case[] = [
  ['', S],
  ['0', 0n],
  ['-0', 0n],
  ['1', 1n],
  ['-1', -1n],
  ['12345', 12345n],
  ['-12345', -12345n],
  ['012345', 12345n],
  ['-012345', -12345n],
  ['98765432100', 98765432100n],
  ['-98765432100', -98765432100n],
  ['9223372036854775807', (1n << 63n) - 1n],
  ['-9223372036854775807', -((1n << 63n) - 1n)],
  ['9223372036854775808', R],
  ['-9223372036854775808', -(1n << 63n)],
  ['9223372036854775809', R],
  ['-9223372036854775809', R],
];
const int32Tests: Case[] = [
  ['', S],
  ['0', 0n],
  ['-0', 0n],
  ['012345', 12345n],
  ['12345x', S],
  ['-12345x', S],
  ['2147483647', (1n << 31n) - 1n],
  ['-2147483647', -((1n << 31n) - 1n)],
  ['2147483648', R],
  ['-2147483648', -(1n << 31n)],
  ['2147483649', R],
  ['-2147483649', R],
];
const uint32Tests: Case[] = [
  ['', S],
  ['12345x', S],
  ['987654321', 987654321n],
  ['4294967295', (1n << 32n) - 1n],
  ['4294967296', R],
];

describe('golang/strconv ParseUint, ParseInt, Atoi (atoi_test.go)', () => {
  it('ParseUint(s, 10, 64)', () => check((s) => parseGoUint(s, 10, 64), 'ParseUint', uint64Tests, 'ParseUint'));
  it('ParseUint(s, 0, 64): base prefixes', () => check((s) => parseGoUint(s, 0, 64), 'ParseUint', uint64BaseTests, 'ParseUint'));
  it('ParseUint(s, 10, 32)', () => check((s) => parseGoUint(s, 10, 32), 'ParseUint', uint32Tests, 'ParseUint'));
  it('ParseInt(s, 10, 64) and bitSize 0 (int)', () => {
    check((s) => parseGoInt(s, 10, 64), 'ParseInt', int64Tests, 'ParseInt');
    check((s) => parseGoInt(s, 10, 0), 'ParseInt', int64Tests, 'ParseInt');
  });
  it('ParseInt(s, 10, 32)', () => check((s) => parseGoInt(s, 10, 32), 'ParseInt', int32Tests, 'ParseInt'));
  it('ParseInt(s, base, 64): other bases', () => {
    const cases: [string, number, bigint | string][] = [
      ['0x12345', 0, 0x12345n],
      ['-0X12345', 0, -0x12345n],
      ['-012345', 0, -0o12345n],
      ['-12345x', 0, S],
      ['g', 17, 16n],
      ['10', 25, 25n],
      ['holycow', 35, BigInt((((((17 * 35 + 24) * 35 + 21) * 35 + 34) * 35 + 12) * 35 + 24) * 35 + 32)],
      ['holycow', 36, BigInt((((((17 * 36 + 24) * 36 + 21) * 36 + 34) * 36 + 12) * 36 + 24) * 36 + 32)],
      ['-1', 2, -1n],
      ['1010', 2, 10n],
      ['111111111111111111111111111111111111111111111111111111111111111', 2, (1n << 63n) - 1n],
      ['1000000000000000000000000000000000000000000000000000000000000000', 2, R],
      ['-1000000000000000000000000000000000000000000000000000000000000000', 2, -(1n << 63n)],
      ['-1000000000000000000000000000000000000000000000000000000000000001', 2, R],
      ['-10', 8, -8n],
      ['57635436545', 8, 0o57635436545n],
      ['-123456789abcdef', 16, -0x123456789abcdefn],
      ['7fffffffffffffff', 16, (1n << 63n) - 1n],
    ];
    for (const [s, base, want] of cases) check((x) => parseGoInt(x, base, 64), 'ParseInt', [[s, want]], `ParseInt base ${base}`);
  });
  it('Atoi: ParseInt(s, 10, 0) named Atoi', () => check(goAtoi, 'Atoi', [...int64Tests, ['+', S], ['-', S], ['1_000', S]], 'Atoi'));
  it('reports overflow before a later bad character, as Go reads left to right', () => {
    check(
      (s) => parseGoInt(s, 10, 64),
      'ParseInt',
      [
        ['99999999999999999999x', R],
        ['9x9999999999999999999', S],
      ],
      'ParseInt',
    );
  });
  it('base 0 allows underscores between digits only', () => {
    check(
      (s) => parseGoInt(s, 0, 64),
      'ParseInt',
      [
        ['1_000', 1000n],
        ['0x_1f', 0x1fn],
        ['-0b1_0', -2n],
        ['_1', S],
        ['1__0', S],
        ['1_', S],
      ],
      'ParseInt',
    );
    check((s) => parseGoInt(s, 10, 64), 'ParseInt', [['1_000', S]], 'ParseInt');
    assert.equal(underscoreOK('0_7'), true);
  });
  it('invalid base and bit size (TestParseIntBase, TestParseIntBitSize)', () => {
    for (const base of [-1, 1, 37]) check((s) => parseGoInt(s, base, 0), 'ParseInt', [['0', `invalid base ${base}`]], 'ParseInt');
    for (const bits of [-1, 65]) check((s) => parseGoUint(s, 0, bits), 'ParseUint', [['0', `invalid bit size ${bits}`]], 'ParseUint');
    assert.equal(parseGoInt('0', 36, 0), 0n);
  });
});

describe('golang/strconv NumError and ParseBool', () => {
  it('Error() quotes the input with Quote (TestNumError)', () => {
    assert.equal(new NumError('ParseFloat', '0', 'failed').message, 'strconv.ParseFloat: parsing "0": failed');
    assert.equal(new NumError('ParseFloat', '`', 'failed').message, 'strconv.ParseFloat: parsing "`": failed');
    assert.equal(new NumError('ParseFloat', '1\x00.2', 'failed').message, 'strconv.ParseFloat: parsing "1\\x00.2": failed');
    assert.equal((goAtoi('x') as NumError).message, 'strconv.Atoi: parsing "x": invalid syntax');
    assert.equal((parseGoUint('18446744073709551616') as NumError).message, 'strconv.ParseUint: parsing "18446744073709551616": value out of range');
  });
  it('ParseBool (atob_test.go)', () => {
    for (const s of ['1', 't', 'T', 'true', 'TRUE', 'True']) assert.equal(parseGoBool(s), true, s);
    for (const s of ['0', 'f', 'F', 'false', 'FALSE', 'False']) assert.equal(parseGoBool(s), false, s);
    for (const s of ['', 'asdf', 'tRUE', 'yes']) assert.deepEqual(parseGoBool(s), new NumError('ParseBool', s, ERR_SYNTAX), s);
    assert.equal((parseGoBool('yes') as NumError).message, 'strconv.ParseBool: parsing "yes": invalid syntax');
  });
});
