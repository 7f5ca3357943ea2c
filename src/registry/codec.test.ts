import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KV } from '../storage/storage.js';
import { StorageDecoder, encodeForStorage } from './codec.js';

const kvOf = (name: string, rev: number): KV => ({
  key: `/registry/configmaps/ns/${name}`,
  value: encodeForStorage({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: '999' }, data: { a: name } }),
  createRevision: rev,
  modRevision: rev,
});

describe('StorageDecoder', () => {
  it('decodes the stored bytes with the mod revision as resourceVersion', () => {
    const d = new StorageDecoder();
    const obj = d.decode(kvOf('a', 7));
    assert.deepEqual(obj, { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns', resourceVersion: '7' }, data: { a: 'a' } });
    assert.equal(d.decode(kvOf('a', 7), 5).metadata?.resourceVersion, '5', 'an explicit revision wins');
  });

  it('remembers recent reads, up to its capacity', () => {
    const d = new StorageDecoder(2);
    const [a, b, c] = [kvOf('a', 1), kvOf('b', 2), kvOf('c', 3)];
    const first = d.decode(a);
    assert.equal(d.decode(a), first, 'a watch event fanned out is parsed once');
    d.decode(b);
    d.decode(c);
    assert.notEqual(d.decode(a), first, 'the oldest left');
    assert.deepEqual(d.decode(a), first);
  });

  it("does not remember a write's answer, nor let it push reads out", () => {
    const d = new StorageDecoder(2);
    const read = kvOf('r', 1);
    const kept = d.decode(read);
    const w = kvOf('w', 2);
    const answer = d.decode(w, undefined, false);
    for (let i = 0; i < 5; i++) d.decode(kvOf(`w${i}`, 10 + i), undefined, false);
    assert.equal(d.decode(read), kept);
    const again = d.decode(w);
    assert.notEqual(again, answer);
    assert.deepEqual(again, answer);
  });

  it('a decode at an older revision is not remembered', () => {
    const d = new StorageDecoder();
    const kv = kvOf('x', 9);
    const old = d.decode(kv, 3);
    assert.notEqual(d.decode(kv, 3), old);
    assert.equal(d.decode(kv).metadata?.resourceVersion, '9');
  });
});
