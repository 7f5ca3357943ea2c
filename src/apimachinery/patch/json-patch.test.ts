import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../errors.js';
import { applyJsonPatch, applyJsonPatchOperations } from './json-patch.js';
import { applyMergePatch, mergePatch } from './merge-patch.js';

const failure = (f: () => unknown): { code: number; reason?: string; message?: string } => {
  try {
    f();
  } catch (e) {
    assert.ok(isStatusError(e), String(e));
    return { code: e.code, reason: e.reason, message: e.status.message };
  }
  return assert.fail('expected a StatusError');
};

const pod = { metadata: { name: 'podA', labels: { a: '1' } }, spec: { containers: [{ name: 'c' }] } };

test('json patch applies every operation without touching the input', () => {
  const out = applyJsonPatch(
    pod,
    JSON.stringify([
      { op: 'test', path: '/metadata/name', value: 'podA' },
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'replace', path: '/metadata/labels/a', value: 'x' },
      { op: 'add', path: '/spec/containers/-', value: { name: 'd' } },
      { op: 'copy', from: '/metadata/name', path: '/metadata/generateName' },
      { op: 'move', from: '/metadata/labels/b', path: '/metadata/labels/c' },
      { op: 'remove', path: '/spec/containers/0' },
    ]),
  );
  assert.deepEqual(out, { metadata: { name: 'podA', generateName: 'podA', labels: { a: 'x', c: '2' } }, spec: { containers: [{ name: 'd' }] } });
  assert.deepEqual(pod.metadata.labels, { a: '1' });
});

test('json patch errors match upstream (TestJSONPatch)', () => {
  assert.deepEqual(failure(() => applyJsonPatch(pod, 'invalid json patch')), {
    code: 400,
    reason: 'BadRequest',
    message: "invalid character 'i' looking for beginning of value",
  });
  const invalid = { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' };
  assert.deepEqual(failure(() => applyJsonPatch(pod, '[{"op": "test", "value": "podA", "path": "/invalid/path"}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(pod, '[{"op": "test", "value": "podB", "path": "/metadata/name"}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(pod, '[{"op": "remove", "path": "/metadata/nope"}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(pod, '[{"op": "add", "path": "/a/b/c", "value": 1}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(pod, '[{"op": "frob", "path": "/a"}]')), invalid);
  assert.equal(failure(() => applyJsonPatch(pod, '{"op":"add"}')).message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const many = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/metadata/name', value: 'podA' }));
  assert.deepEqual(failure(() => applyJsonPatchOperations(pod, many)), {
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
  });
  assert.deepEqual(applyJsonPatch(pod, 'null'), pod);
});

test('json patch as json-patch v4 (kube\'s) reads it: replace of a missing key sets it, null test of a missing key passes, negative indices', () => {
  const doc = { metadata: { name: 'a', finalizers: ['x', 'y', 'z'] }, data: { k: 'v' } };
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/data/new","value":"n"}]'), { ...doc, data: { k: 'v', new: 'n' } });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/metadata/labels","value":{"l":"1"}}]'), { ...doc, metadata: { ...doc.metadata, labels: { l: '1' } } });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"test","path":"/data/missing","value":null}]'), doc);
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"remove","path":"/metadata/finalizers/-1"}]'), { ...doc, metadata: { name: 'a', finalizers: ['x', 'y'] } });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/metadata/finalizers/-3","value":"w"}]'), { ...doc, metadata: { name: 'a', finalizers: ['w', 'y', 'z'] } });
  const invalid = { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' };
  // Still errors: an index out of range (also counted from the end), a missing parent, a test of a missing key with a value.
  assert.deepEqual(failure(() => applyJsonPatch(doc, '[{"op":"remove","path":"/metadata/finalizers/-4"}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(doc, '[{"op":"replace","path":"/nope/x","value":1}]')), invalid);
  assert.deepEqual(failure(() => applyJsonPatch(doc, '[{"op":"test","path":"/data/missing","value":"v"}]')), invalid);
  assert.deepEqual(doc.data, { k: 'v' });
});

test('merge patch (RFC 7386 appendix A cases)', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [orig, patch, want] of cases) assert.deepEqual(mergePatch(orig as never, patch as never), want, JSON.stringify([orig, patch]));
  assert.deepEqual(failure(() => applyMergePatch({}, '{')), { code: 400, reason: 'BadRequest', message: 'Invalid JSON Patch' });
  assert.deepEqual(applyMergePatch({ metadata: { labels: { a: '1', b: '2' } } }, '{"metadata":{"labels":{"a":null}}}'), { metadata: { labels: { b: '2' } } });
});
