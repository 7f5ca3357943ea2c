import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64Error, base64ErrorOffset, decodeStdBase64 } from './base64.js';

// base64.StdEncoding.DecodeString's CorruptInputError offsets (Go 1.23) for the same texts.
describe('golang/base64', () => {
  it('accepts padded standard base64, with \\r and \\n anywhere', () => {
    for (const s of ['', 'YWJj', 'YQ==', 'YWI=', 'YW\nJj', 'YQ==\r\n']) assert.equal(base64ErrorOffset(s), -1, JSON.stringify(s));
  });
  it('reports the byte Go reports', () => {
    const cases: [string, number][] = [
      ['Y', 0],
      ['YWJ', 0],
      ['YQ=', 3],
      ['YQ==x', 4],
      ['a!bc', 1],
      ['=abc', 0],
    ];
    for (const [s, at] of cases) assert.equal(base64ErrorOffset(s), at, JSON.stringify(s));
  });
  it('decodes what it accepts', () => {
    assert.deepEqual(decodeStdBase64('YW\nJj'), Buffer.from('abc'));
    assert.equal(decodeStdBase64('a!bc'), 1);
  });
  it("base64_test.go's TestDecodeCorrupt, TestNewLineCharacters and TestDecoderIssue7733", () => {
    const cases: [string, number][] = [
      ['', -1],
      ['\n', -1],
      ['AAA=\n', -1],
      ['AAAA\n', -1],
      ['!!!!', 0],
      ['====', 0],
      ['x===', 1],
      ['=AAA', 0],
      ['A=AA', 1],
      ['AA=A', 2],
      ['AA==A', 4],
      ['AAA=AAAA', 4],
      ['AAAAA', 4],
      ['AAAAAA', 4],
      ['A=', 1],
      ['A==', 1],
      ['AA=', 3],
      ['AA==', -1],
      ['AAA=', -1],
      ['AAAA', -1],
      ['AAAAAA=', 7],
      ['YWJjZA=====', 8],
      ['A!\n', 1],
      ['A=\n', 1],
    ];
    for (const [s, at] of cases) assert.equal(base64ErrorOffset(s), at, JSON.stringify(s));
    for (const s of [
      'c3VyZQ==',
      'c3VyZQ==\r',
      'c3VyZQ==\n',
      'c3VyZQ==\r\n',
      'c3VyZ\r\nQ==',
      'c3V\ryZ\nQ==',
      'c3V\nyZ\rQ==',
      'c3VyZ\nQ==',
      'c3VyZQ\n==',
      'c3VyZQ=\n=',
      'c3VyZQ=\r\n\r\n=',
    ]) {
      assert.deepEqual(decodeStdBase64(s), Buffer.from('sure'), JSON.stringify(s));
    }
  });
  it('counts UTF-8 bytes, and words the error as CorruptInputError does', () => {
    assert.equal(base64Error('YQ==é'), 'illegal base64 data at input byte 4');
    assert.equal(base64Error('éYQ=='), 'illegal base64 data at input byte 0');
    assert.equal(base64Error('YWJjé'), 'illegal base64 data at input byte 4');
    assert.equal(base64Error('YWJj'), undefined);
  });
});
