import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { MaxInFlight } from './max-in-flight.js';
import type { ApiMetrics, RequestKind } from '../metrics.js';

/** Only the watermark gauge: the rest of ApiMetrics is not touched by the filter. */
function gauge(): { metrics: ApiMetrics; published: [RequestKind, number][] } {
  const published: [RequestKind, number][] = [];
  const metrics = { setInflightRequests: (kind: RequestKind, n: number) => void published.push([kind, n]) } as unknown as ApiMetrics;
  return { metrics, published };
}

describe('max-in-flight pools', () => {
  it('get and list share the read-only pool; every other verb the mutating one', () => {
    assert.equal(MaxInFlight.isMutating('get'), false);
    assert.equal(MaxInFlight.isMutating('list'), false);
    assert.equal(MaxInFlight.isMutating('watch'), false);
    for (const v of ['create', 'update', 'patch', 'delete', 'deletecollection', 'post', 'head', 'options']) assert.equal(MaxInFlight.isMutating(v), true, v);
    const f = new MaxInFlight(1, 1);
    const read = f.admit('list', ['developers']);
    const write = f.admit('create', ['developers']);
    assert.notEqual(read, 'too-many');
    assert.notEqual(write, 'too-many');
    assert.equal(f.admit('get', ['developers']), 'too-many');
    assert.equal(f.admit('patch', ['developers']), 'too-many');
    if (read !== 'too-many') read.release();
    assert.notEqual(f.admit('get', ['developers']), 'too-many');
    assert.equal(f.admit('delete', ['developers']), 'too-many');
  });

  it('system:masters is served past a full pool without taking a slot; a free slot is taken by anyone', () => {
    const f = new MaxInFlight(0, 2);
    const first = f.admit('create', ['system:masters', 'system:authenticated']);
    assert.notEqual(first, 'too-many');
    assert.equal(f.inUse('mutating'), 1, 'a master takes a free slot');
    assert.notEqual(f.admit('create', ['developers']), 'too-many', 'the second slot');
    assert.equal(f.admit('create', ['developers']), 'too-many');
    const past = f.admit('create', ['system:masters']);
    assert.notEqual(past, 'too-many');
    assert.equal(f.inUse('mutating'), 2);
    if (past !== 'too-many') past.release();
    assert.equal(f.inUse('mutating'), 2, 'releasing a request served past the limit gives back nothing');
  });

  it('0 is no limit, and a release counts once', () => {
    const f = new MaxInFlight(0, 0);
    for (let i = 0; i < 1000; i++) assert.notEqual(f.admit(i % 2 ? 'get' : 'create', []), 'too-many');
    const g = new MaxInFlight(1, 1);
    const s = g.admit('create', []);
    assert.notEqual(s, 'too-many');
    if (s !== 'too-many') {
      s.release();
      s.release();
    }
    assert.equal(g.inUse('mutating'), 0);
  });

  it('limits must be whole numbers, 0 or more', () => {
    assert.throws(() => new MaxInFlight(-1, 1), /maxRequestsInFlight must be a whole number/);
    assert.throws(() => new MaxInFlight(1, 1.5), /maxMutatingRequestsInFlight must be a whole number/);
  });

  it('publishes each second the most slots in use during it, then starts again from 0', () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const { metrics, published } = gauge();
      const f = new MaxInFlight(10, 10, metrics);
      const a = f.admit('get', []);
      const b = f.admit('list', []);
      const c = f.admit('create', []);
      if (a !== 'too-many') a.release();
      mock.timers.tick(1000);
      assert.deepEqual(published, [
        ['readOnly', 2],
        ['mutating', 1],
      ]);
      published.length = 0;
      // Nothing started or ended in this second: 0, although two slots are held (upstream's watermark).
      mock.timers.tick(1000);
      assert.deepEqual(published, [
        ['readOnly', 0],
        ['mutating', 0],
      ]);
      published.length = 0;
      if (b !== 'too-many') b.release();
      if (c !== 'too-many') c.release();
      mock.timers.tick(1000);
      assert.deepEqual(published, [
        ['readOnly', 0],
        ['mutating', 0],
      ]);
      f.stop();
    } finally {
      mock.timers.reset();
    }
  });
});
