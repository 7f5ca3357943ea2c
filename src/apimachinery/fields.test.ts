import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from './errors.js';
import {
  checkSupportedFields,
  escapeFieldValue,
  exactMetadataName,
  fieldSelectorToString,
  matchesFields,
  parseFieldSelector,
  transformFieldSelector,
  tryParseFieldSelector,
  unescapeFieldValue,
} from './fields.js';

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    assert.ok(isStatusError(e));
    assert.equal(e.code, 400);
    return e.status.message!;
  }
  return assert.fail('expected a StatusError');
};

test('parses terms with every operator, sorted like upstream', () => {
  const s = parseFieldSelector('status.phase!=Running,metadata.name==web,metadata.namespace=default');
  assert.deepEqual(s.requirements, [
    { field: 'metadata.name', operator: '=', value: 'web' },
    { field: 'metadata.namespace', operator: '=', value: 'default' },
    { field: 'status.phase', operator: '!=', value: 'Running' },
  ]);
  assert.equal(fieldSelectorToString(s), 'metadata.name=web,metadata.namespace=default,status.phase!=Running');
  assert.deepEqual(parseFieldSelector('').requirements, []);
  assert.deepEqual(parseFieldSelector(',,a=b,').requirements, [{ field: 'a', operator: '=', value: 'b' }]);
});

test('escaping (upstream TestSelectorParse/TestEscapeValue cases)', () => {
  assert.deepEqual(parseFieldSelector('a=b\\,c,d=e\\=f\\\\').requirements, [
    { field: 'a', operator: '=', value: 'b,c' },
    { field: 'd', operator: '=', value: 'e=f\\' },
  ]);
  assert.equal(escapeFieldValue('a\\b,c=d'), 'a\\\\b\\,c\\=d');
  assert.deepEqual(unescapeFieldValue(escapeFieldValue('x=,\\y')), { ok: true, value: 'x=,\\y' });
  assert.equal(
    message(() => parseFieldSelector('a=b\\c')),
    'invalid field selector: invalid escape sequence: \\c',
  );
  assert.equal(
    message(() => parseFieldSelector('a=b\\')),
    'invalid field selector: invalid escape sequence: \\',
  );
  assert.equal(
    message(() => parseFieldSelector('a=b=c')),
    'invalid field selector: unescaped character in value: 61',
  );
  assert.equal(
    message(() => parseFieldSelector('a')),
    "invalid selector: 'a'; can't understand 'a'",
  );
  assert.equal(
    message(() => parseFieldSelector('x=y,a!b')),
    "invalid selector: 'x=y,a!b'; can't understand 'a!b'",
  );
  const round = parseFieldSelector('a=x\\,y');
  assert.deepEqual(parseFieldSelector(fieldSelectorToString(round)), round);
});

test('matching: missing fields read as empty', () => {
  const f = { 'metadata.name': 'web', 'status.phase': 'Running' };
  assert.ok(matchesFields(parseFieldSelector('metadata.name=web'), f));
  assert.ok(!matchesFields(parseFieldSelector('metadata.name=db'), f));
  assert.ok(matchesFields(parseFieldSelector('status.phase!=Failed'), f));
  assert.ok(!matchesFields(parseFieldSelector('status.phase!=Running'), f));
  assert.ok(matchesFields(parseFieldSelector('spec.nodeName='), f));
  assert.ok(!matchesFields(parseFieldSelector('spec.nodeName!='), f));
});

test('exact metadata.name and supported-field checks', () => {
  assert.equal(exactMetadataName(parseFieldSelector('metadata.name=web')), 'web');
  assert.equal(exactMetadataName(parseFieldSelector('metadata.name!=web')), undefined);
  const s = parseFieldSelector('metadata.name=a,spec.foo=b');
  assert.equal(
    message(() => checkSupportedFields(s, ['metadata.name', 'metadata.namespace'])),
    'field label not supported: spec.foo',
  );
  assert.doesNotThrow(() => checkSupportedFields(s, new Set(['metadata.name', 'spec.foo'])));
  const renamed = transformFieldSelector(s, (field, value) => (field === 'spec.foo' ? { field: '', value: '' } : { field, value }));
  assert.equal(fieldSelectorToString(renamed), 'metadata.name=a');
  assert.equal(tryParseFieldSelector('a').ok, false);
});
