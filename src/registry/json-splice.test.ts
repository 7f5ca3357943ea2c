import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splicable, splicedLength, writeSpliced } from './json-splice.js';

const prefix = Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{');

/** The splice as store.ts wrote it before json-splice (three Buffers, concatenated). */
function oldSplice(v: Buffer, rv: number): Buffer {
  return Buffer.concat([prefix, Buffer.from(`"resourceVersion":"${rv}"${v[prefix.length] === 0x7d ? '' : ','}`), v.subarray(prefix.length)]);
}

const values: Buffer[] = [
  Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}'),
  // Empty metadata: no comma after the resourceVersion.
  Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{},"data":{}}'),
  Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}'),
  // Multi-byte UTF-8 right after the splice point and further on.
  Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"é日本語🎉","labels":{"ü":"ß"}},"data":{"x":"\u2028 \\ud800 \\"q\\" 𝄞"}}'),
  Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'big', uid: 'u' }, data: { payload: 'ы'.repeat(5000) } })),
];

describe('json-splice', () => {
  it('writes the same bytes as the three-part splice, for every resourceVersion width', () => {
    const rvs = [0, 1, 9, 10, 99, 100, 12345, 2 ** 31 - 1, 2 ** 31, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    for (const v of values) {
      assert.ok(splicable(v, prefix));
      for (const rv of rvs) {
        const want = oldSplice(v, rv);
        assert.equal(splicedLength(v, prefix.length, rv), want.length);
        // At an offset, in a buffer full of garbage, followed by a sentinel that must stay.
        const out = Buffer.alloc(want.length + 7, 0xee);
        const end = writeSpliced(out, 3, v, prefix, rv);
        assert.equal(end, 3 + want.length);
        assert.deepEqual(out.subarray(3, end), want, `rv ${rv}: ${v.toString().slice(0, 60)}`);
        assert.deepEqual(out.subarray(0, 3), Buffer.alloc(3, 0xee));
        assert.deepEqual(out.subarray(end), Buffer.alloc(4, 0xee));
        JSON.parse(out.subarray(3, end).toString('utf8'));
      }
    }
  });

  it('takes a resourceVersion that is not a plain integer as String() writes it', () => {
    const v = values[0]!;
    for (const rv of [2 ** 60, 1e21, 1.5]) {
      const want = oldSplice(v, rv);
      const out = Buffer.alloc(splicedLength(v, prefix.length, rv));
      assert.equal(writeSpliced(out, 0, v, prefix, rv), out.length);
      assert.deepEqual(out, want);
    }
  });

  it('works on a Uint8Array value (as TextEncoder hands it out) at a non-zero offset', () => {
    const backing = new Uint8Array(values[3]!.length + 10);
    backing.set(values[3]!, 5);
    const v = backing.subarray(5, 5 + values[3]!.length);
    const out = Buffer.alloc(splicedLength(v, prefix.length, 42));
    writeSpliced(out, 0, v, prefix, 42);
    assert.deepEqual(out, oldSplice(values[3]!, 42));
  });

  it('splicable: only values that start with the prefix and go on past it', () => {
    assert.equal(splicable(Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}'), prefix), false);
    assert.equal(splicable(Buffer.from('{"kind":"ConfigMap","apiVersion":"v2","metadata":{"name":"a"}}'), prefix), false);
    assert.equal(splicable(prefix, prefix), false);
    assert.equal(splicable(Buffer.concat([prefix, Buffer.from('}')]), prefix), false);
    assert.equal(splicable(Buffer.concat([prefix, Buffer.from('}}')]), prefix), true);
    assert.equal(splicable(Buffer.alloc(0), prefix), false);
  });
});
