import assert from 'node:assert/strict';
import { test } from 'node:test';
import { warningHeaderValue } from './apiserver.js';
import { setWarnings } from './warning-header.js';

test('warningHeaderValue quotes like upstream and is always a valid header value', () => {
  assert.equal(warningHeaderValue('unknown field "foo"'), '299 - "unknown field \\"foo\\""');
  assert.equal(warningHeaderValue('a\\b'), '299 - "a\\\\b"');
  // Non-ASCII (also U+FFFD from invalid UTF-8 in a body) and control characters are escaped.
  assert.equal(warningHeaderValue('unknown field "apiñ\uFFFDVersion"'), '299 - "unknown field \\"api\\u00f1\\ufffdVersion\\""');
  assert.equal(warningHeaderValue('a\x7fb\nc\u4e2d'), '299 - "a\\u007fb\\nc\\u4e2d"');
  for (let c = 0; c < 0x3000; c += 7) assert.match(warningHeaderValue(`x${String.fromCharCode(c)}y`), /^[\x20-\x7e]*$/);
});

/** A response's headers, as node keeps them. */
function fakeResponse(): { getHeader(n: string): unknown; setHeader(n: string, v: unknown): void; warnings(): string[] } {
  const h = new Map<string, unknown>();
  return {
    getHeader: (n) => h.get(n.toLowerCase()),
    setHeader: (n, v) => void h.set(n.toLowerCase(), v),
    warnings: () => ((h.get('warning') as string[] | undefined) ?? []).map((v) => JSON.parse(v.slice('299 - '.length)) as string),
  };
}

test('setWarnings records as upstream: empty and repeated texts dropped, in order', () => {
  const res = fakeResponse();
  setWarnings(res as never, ['a', '', 'b', 'a']);
  setWarnings(res as never, ['b', 'c']);
  assert.deepEqual(res.warnings(), ['a', 'b', 'c']);
});

test('setWarnings past 4 Ki runes cuts every warning to 256 runes, then drops what does not fit', () => {
  const res = fakeResponse();
  const long = (c: string): string => c.repeat(1_500);
  setWarnings(res as never, [long('a'), long('b')]); // 3,000 runes: fits as is
  assert.deepEqual(res.warnings(), [long('a'), long('b')]);
  setWarnings(res as never, [long('c')]); // 4,500: over, all cut and written again
  assert.deepEqual(res.warnings(), ['a'.repeat(256), 'b'.repeat(256), 'c'.repeat(256)]);
  // Truncating: each new one is cut, and once 4 Ki runes are written nothing more is added.
  for (let i = 0; i < 20; i++) setWarnings(res as never, [`${i}`.padEnd(300, 'x')]);
  const got = res.warnings();
  assert.equal(got.length, 16); // 3 + 13 cut warnings reach 4,096 runes
  assert.ok(got.every((w) => [...w].length <= 256));
});
