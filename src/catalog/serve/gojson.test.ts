import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goJSON, goString } from './gojson.js';

describe('goJSON', () => {
  it('sorts map keys at every level and keeps array order', () => {
    assert.equal(goJSON({ b: 1, a: [{ z: true, y: null }], c: 'x' }), '{"a":[{"y":null,"z":true}],"b":1,"c":"x"}');
  });
  it('escapes <, > and & only when asked (json.Marshal), U+2028/9 always', () => {
    assert.equal(goString('<a&b>\u2028'), '"<a&b>\\u2028"');
    assert.equal(goString('<a&b>\u2029', { escapeHTML: true }), '"\\u003ca\\u0026b\\u003e\\u2029"');
  });
  it('writes control characters as Go does', () => {
    assert.equal(goString('\n\t\u0001"\\'), '"\\n\\t\\u0001\\"\\\\"');
  });
});

describe('goJSON edge cases', () => {
  it('writes a lone surrogate as U+FFFD (invalid UTF-8 to Go) and sorts keys by code point', () => {
    assert.equal(goString('a\ud800b'), '"a\ufffdb"');
    assert.equal(goJSON({ '\u{1F600}': 1, '\uffff': 2 }), '{"\uffff":2,"\u{1F600}":1}');
  });
});
