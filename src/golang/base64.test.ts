import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64ErrorOffset, decodeStdBase64 } from './base64.js';

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
});
