import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cannotUnmarshal, jsonKind, numberValue, strictDuplicateField, strictUnknownField, unknownFieldError, unmarshalTypeError } from './json-errors.js';

// Each expectation is what encoding/json (Go 1.23) or sigs.k8s.io/json printed for the same decode.
describe('golang/json-errors', () => {
  it('names JSON kinds as the decoder does', () => {
    assert.deepEqual([null, 'a', 1, 2n, true, [], {}].map(jsonKind), ['null', 'string', 'number', 'number', 'bool', 'array', 'object']);
  });

  it('prints an UnmarshalTypeError at the root as a Go value', () => {
    assert.equal(cannotUnmarshal([], 'v1.Lease'), 'json: cannot unmarshal array into Go value of type v1.Lease');
    assert.equal(cannotUnmarshal(true, 'jsonpatch.Patch'), 'json: cannot unmarshal bool into Go value of type jsonpatch.Patch');
    assert.equal(
      cannotUnmarshal('x', 'map[string]interface {}', { struct: '', field: '' }),
      'json: cannot unmarshal string into Go value of type map[string]interface {}',
    );
  });

  it('prints it inside a struct with the struct and the field path (addErrorContext)', () => {
    assert.equal(
      cannotUnmarshal(1, 'string', { struct: 'LeaseSpec', field: 'spec.holderIdentity' }),
      'json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string',
    );
    // an unnamed struct still gets the dot
    assert.equal(cannotUnmarshal({}, '[]string', { struct: '', field: 'owned' }), 'json: cannot unmarshal object into Go struct field .owned of type []string');
  });

  it('prints a number that does not fit its type with the literal as written', () => {
    assert.equal(
      unmarshalTypeError(numberValue('1.0'), 'int32', { struct: 'LeaseSpec', field: 'spec.leaseDurationSeconds' }),
      'json: cannot unmarshal number 1.0 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32',
    );
    assert.equal(unmarshalTypeError(numberValue('1e999'), 'float64'), 'json: cannot unmarshal number 1e999 into Go value of type float64');
  });

  it('quotes an unknown field as %q does (DisallowUnknownFields)', () => {
    assert.equal(unknownFieldError('foo'), 'json: unknown field "foo"');
    assert.equal(unknownFieldError('a"b\u0001é'), 'json: unknown field "a\\"b\\x01é"');
  });

  it('names strict-mode problems by their dotted path', () => {
    assert.equal(strictUnknownField('spec.foo'), 'unknown field "spec.foo"');
    assert.equal(strictDuplicateField('metadata.name'), 'duplicate field "metadata.name"');
  });
});
