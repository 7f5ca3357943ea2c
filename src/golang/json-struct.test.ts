import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StructDecoder } from './json-struct.js';

// A small json.Unmarshal into `type T struct { Name string; Tags []string; On bool }` (package pkg),
// checked against what encoding/json reported for the same documents.
function decodeT(
  value: unknown,
  opts: { disallowUnknownFields?: boolean; sortKeys?: boolean } = {},
): { out: Record<string, unknown>; err: string | undefined } {
  const d = new StructDecoder(opts);
  const out: Record<string, unknown> = {};
  d.fields(value, 'T', 'pkg.T', ['name', 'tags', 'on'], (f, v) => {
    const got = f === 'name' ? d.string(v) : f === 'tags' ? d.strings(v) : d.bool(v);
    if (got !== undefined) out[f] = got;
  });
  return { out, err: d.firstError };
}

describe('golang/json-struct', () => {
  it('matches keys exactly, else case-insensitively, and leaves fields alone for null', () => {
    assert.deepEqual(decodeT({ NAME: 'a', Tags: ['x'], on: null }), { out: { name: 'a', tags: ['x'] }, err: undefined });
  });
  it('keeps the first type error, named by struct and field, and goes on decoding', () => {
    const r = decodeT({ name: 1, tags: ['x', 2], on: true });
    assert.equal(r.err, 'json: cannot unmarshal number into Go struct field T.name of type string');
    assert.deepEqual(r.out, { tags: ['x', ''], on: true });
    assert.equal(decodeT({ tags: [1] }).err, 'json: cannot unmarshal number into Go struct field T.tags of type string');
    assert.equal(decodeT({ on: 'yes' }).err, 'json: cannot unmarshal string into Go struct field T.on of type bool');
  });
  it('names the Go value itself when the document is not an object', () => {
    assert.equal(decodeT([]).err, 'json: cannot unmarshal array into Go value of type pkg.T');
  });
  it('reports unknown fields when told to, in the order keys are met', () => {
    assert.equal(decodeT({ zz: 1, aa: 2 }, { disallowUnknownFields: true }).err, 'json: unknown field "zz"');
    assert.equal(decodeT({ zz: 1, aa: 2 }, { disallowUnknownFields: true, sortKeys: true }).err, 'json: unknown field "aa"');
    assert.equal(decodeT({ zz: 1, name: 2 }, { sortKeys: true }).err, 'json: cannot unmarshal number into Go struct field T.name of type string');
  });
});
