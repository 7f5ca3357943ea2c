import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closingQuote, quoteChar, quoteCharAsJSON, scanJSON, type ScanResult } from './json-scanner.js';

const message = (r: ScanResult): string => (r.kind === 'error' ? `${r.offset}: ${r.message}` : r.kind);

// Expectations are what json.Unmarshal / json.Decoder (Go 1.23) answered for the same bytes;
// offsets here are the refused byte's index (Go's SyntaxError.Offset is one more).
describe('golang/json-scanner, one value (json.Unmarshal)', () => {
  it('names the first refused byte and what the scanner was looking for', () => {
    const cases: [string, string][] = [
      ['', 'eof'],
      ['{', 'eof'],
      ['{"a":}', "5: invalid character '}' looking for beginning of value"],
      ['{"a" 1}', "5: invalid character '1' after object key"],
      ['{"a":1 "b":2}', `7: invalid character '"' after object key:value pair`],
      ['{"a":1,}', "7: invalid character '}' looking for beginning of object key string"],
      ['[1 2]', "3: invalid character '2' after array element"],
      ['[1,]', "3: invalid character ']' looking for beginning of value"],
      ['{}\n x', "4: invalid character 'x' after top-level value"],
      ['tru', 'eof'],
      ['trux', "3: invalid character 'x' in literal true (expecting 'e')"],
      ['nul', 'eof'],
      ['"a\\x"', "3: invalid character 'x' in string escape code"],
      ['"\\u12g4"', "5: invalid character 'g' in \\u hexadecimal character escape"],
      ['01', "1: invalid character '1' after top-level value"],
      ['1.', 'eof'],
      ['1.e', "2: invalid character 'e' after decimal point in numeric literal"],
      ['1e+', 'eof'],
      ['1ex', "2: invalid character 'x' in exponent of numeric literal"],
      ['-x', "1: invalid character 'x' in numeric literal"],
      ["{'a':1}", "1: invalid character '\\'' looking for beginning of object key string"],
      ['"\u0001"', "1: invalid character '\\x01' in string literal"],
      [' [ {"a" : [ true , null ] } ] ', 'ok'],
    ];
    for (const [input, want] of cases) assert.equal(message(scanJSON(input)), want, JSON.stringify(input));
  });

  it('stops past the nesting limit at the bracket that exceeds it', () => {
    assert.equal(message(scanJSON('[[[1]]]', 0, { maxDepth: 2 })), "2: invalid character '[' exceeded max depth");
    assert.equal(message(scanJSON('[[1]]', 0, { maxDepth: 2 })), 'ok');
  });

  it("quotes bytes as Go's quoteChar does; quoteCharAsJSON keeps the API server's wording", () => {
    // the first byte of "é", scanned as latin1
    assert.equal(message(scanJSON(Buffer.from('é').toString('latin1'))), "0: invalid character 'Ã' looking for beginning of value");
    assert.equal(quoteChar(0x7f), "'\\x7f'");
    assert.equal(quoteChar(0x22), `'"'`);
    assert.equal(quoteChar(0x27), "'\\''");
    assert.equal(quoteCharAsJSON(0x01), "'\\u0001'");
    assert.equal(message(scanJSON('"\u0001"', 0, { quote: quoteCharAsJSON })), "1: invalid character '\\u0001' in string literal");
  });
});

describe('golang/json-scanner, a stream (json.Decoder)', () => {
  it('ends a value where it ends and leaves the rest alone', () => {
    assert.deepEqual(scanJSON('{"a":1} {"b":', 0, { stream: true }), { kind: 'ok', end: 7 });
    assert.deepEqual(scanJSON('x {"a":[1,2]}garbage', 2, { stream: true }), { kind: 'ok', end: 13 });
    assert.deepEqual(scanJSON('12 34', 0, { stream: true }), { kind: 'ok', end: 2 });
  });
  it('reports a value cut short as the end of input, and a bad byte as in one value', () => {
    assert.equal(message(scanJSON('{"a":[1,', 0, { stream: true })), 'eof');
    assert.equal(message(scanJSON('{"a" "x"}', 0, { stream: true })), `5: invalid character '"' after object key`);
  });
});

describe('closingQuote', () => {
  it('skips escaped quotes and answers -1 for an unterminated string', () => {
    assert.equal(closingQuote('"ab"', 1), 3);
    assert.equal(closingQuote('"a\\"b"', 1), 5);
    assert.equal(closingQuote('"a\\\\"b', 1), 4);
    assert.equal(closingQuote('"abc', 1), -1);
  });
});
