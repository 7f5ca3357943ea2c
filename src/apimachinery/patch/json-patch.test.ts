import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../errors.js';
import { hasNumberTexts, numberTextAt, parseJson } from '../json.js';
import { applyJsonPatch, applyJsonPatchOperations, decodeJsonPatch } from './json-patch.js';
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
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, 'invalid json patch')),
    {
      code: 400,
      reason: 'BadRequest',
      message: "invalid character 'i' looking for beginning of value",
    },
  );
  const invalid = { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' };
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, '[{"op": "test", "value": "podA", "path": "/invalid/path"}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, '[{"op": "test", "value": "podB", "path": "/metadata/name"}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, '[{"op": "remove", "path": "/metadata/nope"}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, '[{"op": "add", "path": "/a/b/c", "value": 1}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(pod, '[{"op": "frob", "path": "/a"}]')),
    invalid,
  );
  assert.equal(failure(() => applyJsonPatch(pod, '{"op":"add"}')).message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const many = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/metadata/name', value: 'podA' }));
  assert.deepEqual(
    failure(() => applyJsonPatchOperations(pod, many)),
    {
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    },
  );
  assert.deepEqual(applyJsonPatch(pod, 'null'), pod);
});

test("json patch as json-patch v4 (kube's) reads it: replace of a missing key sets it, null test of a missing key passes, negative indices", () => {
  const doc = { metadata: { name: 'a', finalizers: ['x', 'y', 'z'] }, data: { k: 'v' } };
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/data/new","value":"n"}]'), { ...doc, data: { k: 'v', new: 'n' } });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/metadata/labels","value":{"l":"1"}}]'), {
    ...doc,
    metadata: { ...doc.metadata, labels: { l: '1' } },
  });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"test","path":"/data/missing","value":null}]'), doc);
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"remove","path":"/metadata/finalizers/-1"}]'), { ...doc, metadata: { name: 'a', finalizers: ['x', 'y'] } });
  assert.deepEqual(applyJsonPatch(doc, '[{"op":"replace","path":"/metadata/finalizers/-3","value":"w"}]'), {
    ...doc,
    metadata: { name: 'a', finalizers: ['w', 'y', 'z'] },
  });
  const invalid = { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' };
  // Still errors: an index out of range (also counted from the end), a missing parent, a test of a missing key with a value.
  assert.deepEqual(
    failure(() => applyJsonPatch(doc, '[{"op":"remove","path":"/metadata/finalizers/-4"}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(doc, '[{"op":"replace","path":"/nope/x","value":1}]')),
    invalid,
  );
  assert.deepEqual(
    failure(() => applyJsonPatch(doc, '[{"op":"test","path":"/data/missing","value":"v"}]')),
    invalid,
  );
  assert.deepEqual(doc.data, { k: 'v' });
});

/** JSON with sorted keys, each number as its recorded text (numberTextAt) or else String(n). */
function withTexts(v: unknown): string {
  const walk = (x: unknown, container?: object, key?: string | number): string => {
    if (typeof x === 'number') return (container !== undefined ? numberTextAt(container, key!, x)?.literal : undefined) ?? String(x);
    if (typeof x === 'bigint') return `${x}n`;
    if (x === null || typeof x !== 'object') return JSON.stringify(x);
    if (Array.isArray(x)) return `[${x.map((e, i) => walk(e, x, i)).join(',')}]`;
    const o = x as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${walk(o[k], o, k)}`)
      .join(',')}}`;
  };
  return walk(v);
}

test("json patch keeps its numbers' texts where json-patch v4 puts them (add, replace, copy, move), and test compares them by text", () => {
  const doc = { spec: { leaseDurationSeconds: 1, holderIdentity: 'a' }, a: [1, 2] };
  // Each patched text as json-patch v4.12.0 (kube vendors v4) prints it under Go 1.19; undefined: it fails.
  const cases: [string, string | undefined][] = [
    ['[{"op":"replace","path":"/spec/leaseDurationSeconds","value":1.0}]', '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1.0}}'],
    [
      '[{"op":"add","path":"/spec/x","value":{"y":1e3,"z":[1.50]}}]',
      '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1,"x":{"y":1e3,"z":[1.50]}}}',
    ],
    [
      '[{"op":"add","path":"/spec/x","value":1.0},{"op":"copy","from":"/spec/x","path":"/spec/leaseDurationSeconds"}]',
      '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1.0,"x":1.0}}',
    ],
    [
      '[{"op":"add","path":"/spec/x","value":1.0},{"op":"move","from":"/spec/x","path":"/spec/leaseDurationSeconds"}]',
      '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1.0}}',
    ],
    ['[{"op":"test","path":"/spec/leaseDurationSeconds","value":1.0}]', undefined],
    ['[{"op":"test","path":"/spec/leaseDurationSeconds","value":1}]', '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1}}'],
    [
      '[{"op":"add","path":"/spec/x","value":1.0},{"op":"test","path":"/spec/x","value":1.0}]',
      '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1,"x":1.0}}',
    ],
    ['[{"op":"add","path":"/spec/x","value":1.0},{"op":"test","path":"/spec/x","value":1}]', undefined],
    ['[{"op":"add","path":"/spec/x","value":{"a":1.0}},{"op":"test","path":"/spec/x","value":{"a":1}}]', undefined],
    [
      '[{"op":"add","path":"/a/0","value":1.0},{"op":"add","path":"/a/0","value":7}]',
      '{"a":[7,1.0,1,2],"spec":{"leaseDurationSeconds":1,"holderIdentity":"a"}}',
    ],
    ['[{"op":"add","path":"/a/-","value":9007199254740993}]', '{"a":[1,2,9007199254740993],"spec":{"leaseDurationSeconds":1,"holderIdentity":"a"}}'],
    ['[{"op":"add","path":"/spec/x","value":1.0, "value": 1}]', '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1,"x":1}}'],
    ['[{"op":"add","path":"/spec/x","value":-0.0}]', '{"a":[1,2],"spec":{"holderIdentity":"a","leaseDurationSeconds":1,"x":-0.0}}'],
  ];
  for (const [patch, want] of cases) {
    if (want === undefined) {
      assert.equal(failure(() => applyJsonPatch(doc, patch)).code, 422, patch);
      continue;
    }
    assert.equal(withTexts(applyJsonPatch(doc, patch)), withTexts(parseJson(want).value), patch);
  }
  assert.deepEqual(doc, { spec: { leaseDurationSeconds: 1, holderIdentity: 'a' }, a: [1, 2] });
});

test('json patch: int64s past 2^53 (bigints) are placed, copied, moved and tested exactly; strings stay strings; none without such numbers', () => {
  const out = applyJsonPatch(
    { spec: { x: {} } },
    '[{"op":"add","path":"/spec/x/y","value":{"z":[1,9007199254740993]}},{"op":"add","path":"/spec/n","value":12345678901234567}]',
  ) as {
    spec: { x: { y: { z: unknown[] } }; n: unknown };
  };
  assert.deepEqual(out, { spec: { x: { y: { z: [1, 9007199254740993n] } }, n: 12345678901234567n } });
  const big = { spec: { a: 9223372036854775807n, l: [{ b: -9223372036854775808n }] } };
  assert.deepEqual(
    applyJsonPatch(
      big,
      '[{"op":"test","path":"/spec/a","value":9223372036854775807},{"op":"copy","from":"/spec/l","path":"/spec/m"},{"op":"move","from":"/spec/a","path":"/spec/c"},{"op":"replace","path":"/spec/l/0/b","value":1}]',
    ),
    { spec: { c: 9223372036854775807n, l: [{ b: 1 }], m: [{ b: -9223372036854775808n }] } },
  );
  assert.deepEqual(big, { spec: { a: 9223372036854775807n, l: [{ b: -9223372036854775808n }] } }, 'the original is untouched');
  // test compares exactly: 2^63-2 is not 2^63-1, though both are the same double.
  assert.equal(failure(() => applyJsonPatch(big, '[{"op":"test","path":"/spec/a","value":9223372036854775806}]')).code, 422);
  assert.equal(failure(() => applyJsonPatch(big, '[{"op":"test","path":"/spec/a","value":9223372036854775808}]')).code, 422);
  // A string is never taken for a number, whatever it holds.
  const s = applyJsonPatch(
    {},
    '[{"op":"add","path":"/s","value":"\\u0000kplane-number-x:1.0"},{"op":"add","path":"/t","value":"1.0"},{"op":"add","path":"/n","value":2.0}]',
  ) as Record<string, unknown>;
  assert.deepEqual(s, { s: '\u0000kplane-number-x:1.0', t: '1.0', n: 2 });
  assert.equal(numberTextAt(s, 'n', 2)?.literal, '2.0');
  // The common path: a patch whose numbers need no text records none, and its result has none.
  for (const patch of [
    '[{"op":"add","path":"/n","value":3}]',
    '[{"op":"add","path":"/s","value":"nginx:1.25"},{"op":"add","path":"/o","value":{"a":[1,-2,10]}}]',
    '[]',
    'null',
  ]) {
    const ops = decodeJsonPatch(patch);
    assert.equal(hasNumberTexts(ops), false, patch);
    assert.equal(hasNumberTexts(applyJsonPatchOperations({}, ops)), false, patch);
  }
  // Decoded operations are left as they were: applied twice, they give the same result and texts.
  const twice = decodeJsonPatch('[{"op":"add","path":"/a","value":1.0},{"op":"add","path":"/b","value":{"x":[1e3]}}]');
  for (let i = 0; i < 2; i++) {
    const r = applyJsonPatchOperations({}, twice) as { a: number; b: { x: number[] } };
    assert.deepEqual(r, { a: 1, b: { x: [1000] } }, `application ${i + 1}`);
    assert.equal(numberTextAt(r, 'a', 1)?.literal, '1.0', `application ${i + 1}`);
    assert.equal(numberTextAt(r.b.x, 0, 1000)?.literal, '1e3', `application ${i + 1}`);
  }
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
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [orig, patch, want] of cases) assert.deepEqual(mergePatch(orig as never, patch as never), want, JSON.stringify([orig, patch]));
  assert.deepEqual(
    failure(() => applyMergePatch({}, '{')),
    { code: 400, reason: 'BadRequest', message: 'Invalid JSON Patch' },
  );
  assert.deepEqual(applyMergePatch({ metadata: { labels: { a: '1', b: '2' } } }, '{"metadata":{"labels":{"a":null}}}'), { metadata: { labels: { b: '2' } } });
});
