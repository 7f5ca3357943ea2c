import assert from 'node:assert/strict';
import { createServer, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { BodyBuffers, finishedWhenSent } from './body-buffers.js';

const KiB = 1024;

describe('BodyBuffers', () => {
  it('hands a given-back buffer out again for a size it fits, rounded up to 64 KiB', () => {
    const pool = new BodyBuffers();
    const a = pool.take(130 * KiB);
    assert.equal(a.length, 192 * KiB);
    assert.equal(a.byteOffset, 0);
    pool.give(a);
    assert.deepEqual(pool.kept, { count: 1, bytes: 192 * KiB });
    assert.equal(pool.take(180 * KiB), a, 'fits');
    assert.deepEqual(pool.kept, { count: 0, bytes: 0 });
    pool.give(a);
    const bigger = pool.take(200 * KiB);
    assert.notEqual(bigger, a, 'too small for 200 KiB');
    assert.equal(bigger.length, 256 * KiB);
    pool.give(bigger);
    assert.equal(pool.take(100 * KiB), a, 'the smallest that fits');
    assert.equal(pool.take(100 * KiB), bigger);
    pool.clear();
  });

  it('leaves small and huge bodies to ordinary allocation and keeps none of them', () => {
    const pool = new BodyBuffers({ minBytes: 16 * KiB, maxBytes: 1024 * KiB });
    const small = pool.take(1000);
    assert.equal(small.length, 1000);
    pool.give(small);
    const huge = pool.take(2048 * KiB);
    assert.equal(huge.length, 2048 * KiB);
    pool.give(huge);
    // Not a buffer of its own making (a slice of other memory): not kept either.
    pool.give(Buffer.alloc(128 * KiB).subarray(0, 64 * KiB));
    pool.give(Buffer.alloc(100 * KiB));
    assert.deepEqual(pool.kept, { count: 0, bytes: 0 });
  });

  it('keeps at most maxFreeBytes, and nothing once idle', async () => {
    const pool = new BodyBuffers({ maxFreeBytes: 256 * KiB, idleMs: 30 });
    const bufs = [pool.take(64 * KiB), pool.take(64 * KiB), pool.take(128 * KiB), pool.take(64 * KiB)];
    for (const b of bufs) pool.give(b);
    assert.deepEqual(pool.kept, { count: 3, bytes: 256 * KiB });
    // Taken in each idle period: kept.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      pool.give(pool.take(64 * KiB));
    }
    assert.equal(pool.kept.count, 3);
    await new Promise((r) => setTimeout(r, 120));
    assert.deepEqual(pool.kept, { count: 0, bytes: 0 });
  });
});

describe('finishedWhenSent', () => {
  it("is node's HTTP/1.1 response itself, and nothing for other writables", async () => {
    const srv = createServer((_req, res) => {
      assert.ok(res instanceof ServerResponse);
      assert.equal(finishedWhenSent(res), res);
      res.end('ok');
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await res.text(), 'ok');
    await new Promise((r) => srv.close(r));
    assert.equal(finishedWhenSent(new Writable({ write: (_c, _e, cb) => cb() })), undefined);
    assert.equal(finishedWhenSent({}), undefined);
  });
});
