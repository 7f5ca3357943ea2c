import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LRUExpireCache } from './lru-expire-cache.js';

describe('LRUExpireCache', () => {
  it('drops an entry once its own time to live has passed', () => {
    let now = 1000;
    const c = new LRUExpireCache<string>(10, () => now);
    c.add('short', 'a', 100);
    c.add('long', 'b', 1000);
    now += 99;
    assert.equal(c.get('short'), 'a');
    now += 1;
    assert.equal(c.get('short'), undefined);
    assert.equal(c.get('long'), 'b');
    assert.equal(c.size, 1);
  });

  it('evicts the least recently used entry when full, a read counting as a use', () => {
    const c = new LRUExpireCache<number>(2, () => 0);
    c.add('a', 1, 10);
    c.add('b', 2, 10);
    assert.equal(c.get('a'), 1);
    c.add('c', 3, 10);
    assert.equal(c.get('b'), undefined);
    assert.equal(c.get('a'), 1);
    assert.equal(c.get('c'), 3);
  });

  it('re-adding a key replaces its value and its time to live', () => {
    let now = 0;
    const c = new LRUExpireCache<string>(2, () => now);
    c.add('k', 'old', 10);
    c.add('k', 'new', 100);
    now = 50;
    assert.equal(c.get('k'), 'new');
    assert.equal(c.size, 1);
  });
});
