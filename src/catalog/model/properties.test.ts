import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Property } from '../declcfg/types.js';
import { parseProperties } from './properties.js';

const err = (props: Property[]): string => {
  try {
    parseProperties(props);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

describe('parseProperties: olm.bundle.object data is a []byte field', () => {
  it("reports base64.StdEncoding's CorruptInputError with its real offset (base64_test.go's TestDecodeCorrupt)", () => {
    const obj = (data: string): Property[] => [{ type: 'olm.bundle.object', value: { data } }];
    const pre = 'parse property[0] of type "olm.bundle.object": ';
    assert.equal(err(obj('AAA=AAAA')), `${pre}illegal base64 data at input byte 4`);
    assert.equal(err(obj('YWJjZA=====')), `${pre}illegal base64 data at input byte 8`);
    assert.equal(err(obj('AA=')), `${pre}illegal base64 data at input byte 3`);
    assert.equal(err(obj('!!!!')), `${pre}illegal base64 data at input byte 0`);
    assert.equal(err(obj('c3VyZQ=\r\n=')), 'no error');
  });
});
