import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Optional } from '@marcbachmann/cel-js';
import { celEvaluate as evaluate } from '../../../test/support/cel.js';

describe('the format library', () => {
  it('validate answers none for a valid string, the validator texts otherwise', () => {
    assert.equal(evaluate("format.dns1123Label().validate('my-name').hasValue()"), false);
    assert.deepEqual(evaluate("format.dns1123Label().validate('My_Name').value()"), [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    assert.equal(evaluate("format.dns1123LabelPrefix().validate('prefix-').hasValue()"), false);
    assert.equal(evaluate("format.dns1123Label().validate('prefix-').hasValue()"), true);
    assert.equal(evaluate("format.qualifiedName().validate('example.com/name').hasValue()"), false);
    assert.equal(evaluate("format.labelValue().validate('').hasValue()"), false);
    assert.deepEqual(evaluate("format.uuid().validate('nope').value()"), ['does not match the UUID format']);
    assert.equal(evaluate("format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()"), false);
    assert.deepEqual(evaluate("format.byte().validate('!!').value()"), ['invalid base64']);
    assert.deepEqual(evaluate("format.date().validate('2021-13-01').value()"), ['invalid date']);
    assert.equal(evaluate("format.datetime().validate('2021-01-01T00:00:00Z').hasValue()"), false);
    assert.deepEqual(evaluate("format.uri().validate('example.com').value()"), ['parse "example.com": invalid URI for request']);
    assert.equal(evaluate("format.uri().validate('https://example.com/x').hasValue()"), false);
  });

  it('named finds a format by name, or none', () => {
    assert.equal(evaluate("format.named('dns1035Label').value().validate('1abc').hasValue()"), true);
    assert.ok((evaluate("format.named('nope')") as Optional).hasValue() === false);
  });
});

describe('the sets extension', () => {
  it('contains, equivalent and intersects, with CEL equality', () => {
    assert.equal(evaluate('sets.contains([1, 2, 3], [3, 1])'), true);
    assert.equal(evaluate('sets.contains([1, 2], [4])'), false);
    assert.equal(evaluate('sets.contains([1, 2], [])'), true);
    assert.equal(evaluate('sets.contains([[1], [2]], [[2]])'), true);
    assert.equal(evaluate("sets.equivalent(['a', 'b', 'b'], ['b', 'a'])"), true);
    assert.equal(evaluate('sets.equivalent([1], [1, 2])'), false);
    assert.equal(evaluate('sets.intersects([1, 2], [2, 5])'), true);
    assert.equal(evaluate('sets.intersects([1], [])'), false);
    assert.equal(evaluate("sets.contains([{'a': 1}], [{'a': 1}])"), true);
  });
});
