import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SortedKeys } from './sorted-keys.js';

/** The model: a sorted array with binary-search rank, what the cache used before. */
function rankIn(sorted: readonly string[], key: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((sorted[mid] as string) < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

const key = fc.stringMatching(/^\/r\/[ab]{0,2}\/[a-c]{0,3}$/);

describe('SortedKeys', () => {
  it('agrees with a sorted array on size, rank and ranges after any adds and deletes', () => {
    fc.assert(
      fc.property(
        fc.array(key),
        fc.array(fc.tuple(fc.boolean(), key), { maxLength: 200 }),
        fc.array(fc.tuple(key, fc.integer({ min: 0, max: 40 })), { minLength: 1, maxLength: 20 }),
        (initial, ops, queries) => {
          let model = [...new Set(initial)].sort();
          const keys = new SortedKeys(model);
          for (const [add, k] of ops) {
            if (add) {
              keys.add(k);
              if (!model.includes(k)) model = [...model, k].sort();
            } else {
              keys.delete(k);
              model = model.filter((x) => x !== k);
            }
          }
          assert.equal(keys.size, model.length);
          for (const [q, limit] of queries) {
            assert.equal(keys.rank(q), rankIn(model, q), `rank of ${q}`);
            const at = rankIn(model, q);
            assert.deepEqual(keys.from(q, limit), model.slice(at, at + limit), `from ${q}, ${limit}`);
          }
          // Past every key: the rank is the size (the end iterator's own index is size - 1).
          assert.equal(keys.rank('\uffff'), model.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});
