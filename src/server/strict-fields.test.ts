import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goYAMLDuplicateKeys } from '../golang/yaml-read.js';
import { sortedByKeys, strictFieldProblems } from './strict-fields.js';

describe('strictFieldProblems', () => {
  it('a typed JSON body: one pass in document order; a duplicate of an unknown field is unknown only', () => {
    const text = '{"metadata":{"name":"a","name":"b","x":1},"u":1,"u":2,"k":true,"k":false,"l":[{"y":1,"n":"a","n":"b"}]}';
    const problems = strictFieldProblems(
      { jsonBody: true, jsonText: text, duplicateFields: ['metadata.name', 'u', 'k', 'l[0].n'], unknown: ['metadata.x', 'u', 'l[0].y'], customResource: false },
      'Warn',
    );
    assert.deepEqual(problems, [
      'duplicate field "metadata.name"',
      'unknown field "metadata.x"',
      'unknown field "u"',
      'duplicate field "k"',
      'unknown field "l[0].y"',
      'duplicate field "l[0].n"',
    ]);
  });

  it('a YAML body: one go-yaml error, then unknown fields with sorted keys; Warn splits the lines', () => {
    const input = {
      duplicateFields: ['a'],
      yamlDuplicates: ['line 2: key "a" already set in map', 'line 4: key "b" already set in map'],
      unknown: ['spec.z', 'metadata.q', 'spec.items[10].x', 'spec.items[2].x'],
      customResource: false,
    };
    assert.throws(
      () => strictFieldProblems(input, 'Strict'),
      (e: Error) =>
        e.message ===
        'strict decoding error: yaml: unmarshal errors:\n  line 2: key "a" already set in map\n  line 4: key "b" already set in map, unknown field "metadata.q", unknown field "spec.items[2].x", unknown field "spec.items[10].x", unknown field "spec.z"',
    );
    assert.deepEqual(strictFieldProblems(input, 'Warn').slice(0, 2), input.yamlDuplicates);
    assert.deepEqual(strictFieldProblems(input, 'Ignore'), []);
  });

  it('a custom resource: duplicates first, then unknown fields as pruning gave them', () => {
    assert.deepEqual(
      strictFieldProblems({ duplicateFields: ['spec.a'], unknown: ['metadata.m', 'spec.b', 'spec.e.metadata.x'], customResource: true }, 'Warn'),
      ['duplicate field "spec.a"', 'unknown field "metadata.m"', 'unknown field "spec.b"', 'unknown field "spec.e.metadata.x"'],
    );
  });

  it("a JSON patch's own problems come first", () => {
    assert.deepEqual(
      strictFieldProblems({ duplicateFields: [], patchProblems: ['json patch unknown field "[0].foo"'], unknown: ['b', 'a'], customResource: false }, 'Warn'),
      ['json patch unknown field "[0].foo"', 'unknown field "a"', 'unknown field "b"'],
    );
  });
});

it('sortedByKeys: key by key, indices as numbers', () => {
  assert.deepEqual(sortedByKeys(['spec.unknown1', 'spec.template.spec.containers[0].x', 'metadata.z', 'a[10]', 'a[9]']), [
    'a[9]',
    'a[10]',
    'metadata.z',
    'spec.template.spec.containers[0].x',
    'spec.unknown1',
  ]);
});

it("goYAMLDuplicateKeys: go-yaml's strict-mode texts, by line, also for JSON text", () => {
  assert.deepEqual(goYAMLDuplicateKeys('a: 1\nb:\n  c: 1\n  c: 2\na: 3\n'), ['line 4: key "c" already set in map', 'line 5: key "a" already set in map']);
  assert.deepEqual(goYAMLDuplicateKeys('{\n "a": 1,\n "a": 2\n}'), ['line 3: key "a" already set in map']);
  assert.deepEqual(goYAMLDuplicateKeys('a: [1\n'), []);
});
