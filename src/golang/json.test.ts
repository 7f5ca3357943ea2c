import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareGoStrings, field, goMarshal, goNumber, goString, goStruct, parseRawJSON, stringField } from './json.js';

// Cases where the copies this module replaces disagreed; each expectation is what Go 1.19's
// encoding/json printed for the same input.
describe('golang/json', () => {
  it('fails on NaN and infinities with json.Marshal words (+Inf, not Infinity)', () => {
    assert.throws(() => goNumber(Infinity), { message: 'json: unsupported value: +Inf' });
    assert.throws(() => goNumber(-Infinity), { message: 'json: unsupported value: -Inf' });
    assert.throws(() => goNumber(NaN), { message: 'json: unsupported value: NaN' });
    assert.throws(() => goMarshal({ a: [Infinity] }), { message: 'json: unsupported value: +Inf' });
  });

  it('orders a lone surrogate as U+FFFD, which is what Go decodes it to', () => {
    // Go sorts the decoded keys of {"\ud800":1,"\uffff":2,"a\ud800":3} as ["a\ufffd" "\ufffd" "\uffff"]
    assert.deepEqual(['\uffff', '\ud800', 'a\ud800'].sort(compareGoStrings), ['a\ud800', '\ud800', '\uffff']);
    assert.ok(compareGoStrings('\u{1F600}', '\uffff') > 0);
    assert.ok(compareGoStrings('\ud800', '\ud800\udc00') < 0);
    assert.ok(compareGoStrings('\ud800a', '\ud800\udc00') < 0);
    assert.equal(compareGoStrings('ab', 'ab'), 0);
  });

  it('matches struct fields as encoding/json folds names (ſ is s, K is k, ß is not ss)', () => {
    assert.equal(field({ ſchema: 'x' }, 'schema'), 'x');
    assert.equal(field({ '\u212aind': 'x' }, 'kind'), 'x');
    assert.equal(field({ meßage: 'x' }, 'message'), undefined);
    assert.equal(field({ SCHEMA: 'x', schema: 'y' }, 'schema'), 'y');
    assert.equal(field({ schema: 'y', SCHEMA: 'x' }, 'schema'), 'x');
    assert.throws(() => stringField({ Name: 1 }, 'name', 'T'), { message: 'json: cannot unmarshal number into Go struct field T.name of type string' });
  });
});

// The registry API's JSON-in-strings (catalog serve): json.Marshal of decoded values and of structs.
describe('golang/json as catalog serve writes it', () => {
  it('sorts map keys at every level and keeps array order', () => {
    assert.equal(goMarshal({ b: 1, a: [{ z: true, y: null }], c: 'x' }, false), '{"a":[{"y":null,"z":true}],"b":1,"c":"x"}');
  });
  it('escapes <, > and & only when asked (json.Marshal), U+2028/9 always', () => {
    assert.equal(goString('<a&b>\u2028'), '"<a&b>\\u2028"');
    assert.equal(goString('<a&b>\u2029', true), '"\\u003ca\\u0026b\\u003e\\u2029"');
  });
  it('writes control characters as Go does', () => {
    assert.equal(goString('\n\t\u0001"\\'), '"\\n\\t\\u0001\\"\\\\"');
  });
  it('writes a lone surrogate as U+FFFD (invalid UTF-8 to Go) and sorts keys by code point', () => {
    assert.equal(goString('a\ud800b'), '"a\ufffdb"');
    assert.equal(goMarshal({ '\u{1F600}': 1, '\uffff': 2 }, false), '{"\uffff":2,"\u{1F600}":1}');
  });
  it('writes struct fields in the order given and leaves out undefined ones', () => {
    assert.equal(
      goStruct([
        ['b', '1'],
        ['a', undefined],
        ['c', '"x"'],
      ]),
      '{"b":1,"c":"x"}',
    );
  });
});

// json.Unmarshal (whole) and json.Decoder (stream) of text holding raw values: Go's scanner words.
describe('golang/json parseRawJSON errors', () => {
  it('names the refused byte as the scanner does', () => {
    assert.throws(() => parseRawJSON('[1,]'), { message: "invalid character ']' looking for beginning of value" });
    assert.throws(() => parseRawJSON('{"a":1} x'), { message: "invalid character 'x' after top-level value" });
    assert.throws(() => parseRawJSON('"a\\x"'), { message: "invalid character 'x' in string escape code" });
    assert.throws(() => parseRawJSON('é'), { message: "invalid character 'Ã' looking for beginning of value" });
  });
  it('answers a cut-off value as Unmarshal and Decoder do', () => {
    assert.throws(() => parseRawJSON('[1,'), { message: 'unexpected end of JSON input' });
    assert.throws(() => parseRawJSON('{"a":', false), { message: 'unexpected EOF' });
    assert.equal(parseRawJSON('{"a":1} trailing', false).raw, '{"a":1}');
  });
});
