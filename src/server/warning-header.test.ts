import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warningHeaderValue } from './apiserver.js';

test('warningHeaderValue quotes like upstream and is always a valid header value', () => {
  assert.equal(warningHeaderValue('unknown field "foo"'), '299 - "unknown field \\"foo\\""');
  assert.equal(warningHeaderValue('a\\b'), '299 - "a\\\\b"');
  // Non-ASCII (also U+FFFD from invalid UTF-8 in a body) and control characters are escaped.
  assert.equal(warningHeaderValue('unknown field "apiñ\uFFFDVersion"'), '299 - "unknown field \\"api\\u00f1\\ufffdVersion\\""');
  assert.equal(warningHeaderValue('a\x7fb\nc\u4e2d'), '299 - "a\\u007fb\\nc\\u4e2d"');
  for (let c = 0; c < 0x3000; c += 7) assert.match(warningHeaderValue(`x${String.fromCharCode(c)}y`), /^[\x20-\x7e]*$/);
});
