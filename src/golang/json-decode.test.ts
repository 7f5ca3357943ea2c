import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeJSON, describeJsonSyntaxError, hasNumberTexts, numberTextAt, unmarshalSyntaxError } from './json-decode.js';

describe('golang/json-decode', () => {
  it('decodes as JSON.parse does and lists duplicate keys by path, the last value winning', () => {
    const r = decodeJSON('{"a":{"b":1,"b":2},"c":[{"d":1,"d":3}]}');
    assert.equal(r.error, undefined);
    assert.deepEqual(r, { value: { a: { b: 2 }, c: [{ d: 3 }] }, duplicateFields: ['a.b', 'c[0].d'] });
  });

  it("answers malformed text with Go's message and where it went wrong", () => {
    assert.deepEqual(decodeJSON('{"a":}'), { error: "invalid character '}' looking for beginning of value at line 1, column 6 (offset 5)" });
    assert.deepEqual(decodeJSON('[1,'), { error: 'unexpected end of JSON input' });
    assert.equal(describeJsonSyntaxError('{"a" 1}', undefined, false), "invalid character '1' after object key");
  });

  it('stops past the nesting limit, naming it', () => {
    // JSON.parse accepts it; the structure pass finds the bracket
    assert.deepEqual(decodeJSON('[[[1]]]', { maxDepth: 2 }), { error: "invalid character '[' exceeded max depth of 2 at line 1, column 3 (offset 2)" });
    // JSON.parse refuses it; the scanner finds the bracket first
    assert.deepEqual(decodeJSON('[[[1]]', { maxDepth: 2 }), { error: "invalid character '[' exceeded max depth of 2 at line 1, column 3 (offset 2)" });
  });

  it('records the text of numbers a double does not write back, unless told not to', () => {
    const r = decodeJSON('{"a":1.0,"b":2,"c":[1e3]}');
    assert.ok(r.error === undefined);
    const v = r.value as { a: number; c: number[] };
    assert.ok(hasNumberTexts(v));
    assert.equal(numberTextAt(v, 'a', 1)?.literal, '1.0');
    assert.equal(numberTextAt(v, 'b', 2), undefined);
    assert.equal(numberTextAt(v.c, 0, 1000)?.literal, '1e3');
    const plain = decodeJSON('{"a":1.0}', { numberTexts: false });
    assert.ok(plain.error === undefined && !hasNumberTexts(plain.value));
    // strict: a text with duplicates is refused by the caller, so nothing is recorded
    const dup = decodeJSON('{"a":1.0,"a":1.0}', { strict: true });
    assert.ok(dup.error === undefined && !hasNumberTexts(dup.value));
  });

  it('keeps integers within int64 exactly (bigints past 2^53), with or without number texts', () => {
    const r = decodeJSON('{"spec":{"sizes":[1,9007199254740993,1.5e300],"n":-9223372036854775808}}');
    assert.ok(r.error === undefined);
    assert.deepEqual(r.value, { spec: { sizes: [1, 9007199254740993n, 1.5e300], n: -9223372036854775808n } });
    const plain = decodeJSON('[9223372036854775807,1.0]', { numberTexts: false });
    assert.ok(plain.error === undefined);
    assert.deepEqual(plain.value, [9223372036854775807n, 1]);
    assert.equal(hasNumberTexts(plain.value), false);
    // A number as the whole text is no container: JSON.parse's double (only request bodies of objects matter).
    assert.deepEqual(decodeJSON('9223372036854775807'), { value: 2 ** 63, duplicateFields: [] });
  });
});

describe('unmarshalSyntaxError (json.Unmarshal of an invalid text)', () => {
  it("gives SyntaxError's message as Go words it (decode_test.go's unmarshalSyntaxTests), without position", () => {
    const cases: [string, string][] = [
      ['{"X": "foo", "Y"}', "invalid character '}' after object key"],
      ['[1, 2, 3+]', "invalid character '+' after array element"],
      ['{"X":12x}', "invalid character 'x' after object key:value pair"],
      ['[2, 3', 'unexpected end of JSON input'],
      ['{"F3": -}', "invalid character '}' in numeric literal"],
      ['\x01 42', "invalid character '\\x01' looking for beginning of value"],
      ['42 \x01', "invalid character '\\x01' after top-level value"],
      ['', 'unexpected end of JSON input'],
    ];
    for (const [text, want] of cases) assert.equal(unmarshalSyntaxError(text), want, JSON.stringify(text));
  });
  it('quotes the refused byte as Go does (a byte as a rune: the first byte of é is Ã)', () => {
    assert.equal(unmarshalSyntaxError('{"a":é}'), "invalid character 'Ã' looking for beginning of value");
    assert.equal(unmarshalSyntaxError('{"a":1}'), undefined);
  });
});
