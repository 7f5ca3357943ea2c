import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GENERATED_NAME_ALPHABET,
  generateName,
  isDNS1123Label,
  isDNS1123Subdomain,
  isPathSegmentName,
  isPathSegmentPrefix,
  isQualifiedName,
  isValidLabelValue,
  maskTrailingDash,
  nameIsDNSSubdomain,
} from './names.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

test('DNS-1123 subdomain', () => {
  for (const ok of ['a', 'ab', 'a-b', 'a.b', '0', 'a.b.c', 'example.com', '1.2.3']) assert.deepEqual(isDNS1123Subdomain(ok), [], ok);
  assert.deepEqual(isDNS1123Subdomain('Foo'), [SUBDOMAIN_MSG]);
  for (const bad of ['', '-a', 'a-', 'a..b', '.a', 'a_b', 'a b']) assert.deepEqual(isDNS1123Subdomain(bad), [SUBDOMAIN_MSG], bad);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(253)), []);
});

test('DNS-1123 label, with the dots special case', () => {
  assert.deepEqual(isDNS1123Label('my-name'), []);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label('A'), [LABEL_MSG]);
  assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
});

test('qualified names (label keys)', () => {
  for (const ok of ['simple', 'now-with-dashes', 'a.b/c', 'example.com/MyName', 'A', 'a_b', '1-2']) assert.deepEqual(isQualifiedName(ok), [], ok);
  assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('a/'), [
    'name part must be non-empty',
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  assert.match(
    isQualifiedName('a/b/c')[0]!,
    /^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e.g. 'example.com\/MyName'\)$/,
  );
  assert.deepEqual(
    isQualifiedName('Bad_Prefix/a').map((m) => m.slice(0, 30)),
    ['prefix part a lowercase RFC 11'],
  );
  assert.deepEqual(isQualifiedName('a'.repeat(64))[0], 'name part must be no more than 63 characters');
});

test('label values', () => {
  for (const ok of ['', 'a', 'a-b_c.d', 'A1']) assert.deepEqual(isValidLabelValue(ok), [], ok);
  assert.deepEqual(isValidLabelValue('-a'), [
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  ]);
  assert.equal(isValidLabelValue('a'.repeat(64))[0], 'must be no more than 63 characters');
});

test('path segment names', () => {
  assert.deepEqual(isPathSegmentName('.'), ["may not be '.'"]);
  assert.deepEqual(isPathSegmentName('..'), ["may not be '..'"]);
  assert.deepEqual(isPathSegmentName('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
  assert.deepEqual(isPathSegmentName('Any:Thing'), []);
  assert.deepEqual(isPathSegmentPrefix('.'), []);
});

test('generateName: masking, truncation, alphabet', () => {
  assert.equal(maskTrailingDash('foo-'), 'foa');
  assert.equal(maskTrailingDash('-'), '-');
  assert.deepEqual(nameIsDNSSubdomain('foo-', true), []);
  assert.notDeepEqual(nameIsDNSSubdomain('foo-', false), []);
  const name = generateName('web-');
  assert.match(name, new RegExp(`^web-[${GENERATED_NAME_ALPHABET}]{5}$`));
  const long = generateName('x'.repeat(100));
  assert.equal(long.length, 63);
  assert.ok(long.startsWith('x'.repeat(58)));
  assert.equal(
    generateName('a-', () => 0),
    'a-bbbbb',
  );
});
