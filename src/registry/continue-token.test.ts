// Continue tokens as upstream's storage.DecodeContinue reads them (its continue_test.go cases and
// encoding/json's matching), with the 400 texts a list answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatusError } from '../apimachinery/errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';

const raw = (json: string): string => Buffer.from(json).toString('base64url');
const refusal = (token: string): string => {
  try {
    decodeContinue(token);
  } catch (e) {
    assert.ok(e instanceof StatusError);
    assert.equal(e.code, 400);
    return e.message;
  }
  assert.fail(`accepted ${token}`);
};

test('a token the server wrote reads back', () => {
  assert.deepEqual(decodeContinue(encodeContinue(42, 'ns/name\x00')), { rv: 42, start: 'ns/name\x00' });
});

test('start keys that path.Clean would change are refused with the key', () => {
  for (const start of ['../x', 'a/../b', 'a//b', 'a/./b', 'a/', '.', '..', '/..'])
    assert.equal(refusal(raw(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start }))), `invalid continue token: continue key is not valid: ${start}`);
  // A leading slash is allowed and dropped, as upstream prefixes one before cleaning.
  assert.deepEqual(decodeContinue(raw('{"v":"meta.k8s.io/v1","rv":1,"start":"/a/b"}')), { rv: 1, start: 'a/b' });
});

test("encoding/json's rules: int64 rv, case-insensitive keys, null leaves a field, type errors", () => {
  assert.equal(
    refusal(raw('{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}')),
    'invalid continue token: continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64',
  );
  assert.equal(
    refusal(raw('{"v":"meta.k8s.io/v1","rv":9223372036854775808,"start":"a"}')),
    'invalid continue token: continue key is not valid: json: cannot unmarshal number 9223372036854775808 into Go struct field continueToken.rv of type int64',
  );
  assert.equal(
    refusal(raw('{"v":"meta.k8s.io/v1","rv":"5","start":"a"}')),
    'invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64',
  );
  assert.equal(
    refusal(raw('[]')),
    'invalid continue token: continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken',
  );
  assert.deepEqual(decodeContinue(raw('{"V":"meta.k8s.io/v1","RV":7,"Start":"a","other":1}')), { rv: 7, start: 'a' });
  // A negative revision is upstream's inconsistent continuation; 0 is not a revision.
  assert.deepEqual(decodeContinue(raw('{"v":"meta.k8s.io/v1","rv":-1,"start":"a"}')), { rv: -1, start: 'a' });
  assert.equal(
    refusal(raw('{"v":"meta.k8s.io/v1","rv":null,"start":"a"}')),
    'invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
  assert.equal(refusal(raw('null')), 'invalid continue token: continue key is not valid: server does not recognize this encoded version ');
});

test('bad base64 and bad JSON', () => {
  assert.equal(refusal('abc$'), 'invalid continue token: continue key is not valid: illegal base64 data at input byte 3');
  assert.equal(refusal('abcde'), 'invalid continue token: continue key is not valid: illegal base64 data at input byte 4');
  assert.equal(refusal(raw('{"v":')), 'invalid continue token: continue key is not valid: unexpected end of JSON input');
});
