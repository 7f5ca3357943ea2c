// The behaviour every Storage must show. Each backend's test file calls `storageConformance` with a
// factory; a backend (or wrapper such as the cacher) that passes is a backend.
//
// Every case writes under its own random prefix, so the suite also runs against a shared store
// (one etcd for the whole file) where revisions are global and other cases' keys exist.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ConflictError, ExpiredError, KeyExistsError, KeyNotFoundError } from '../storage.js';
import type { KV, Storage, WatchEvent } from '../storage.js';

export interface OpenedStorage {
  readonly storage: Storage;
  cleanup(): Promise<void>;
}

const CASE_TIMEOUT_MS = 20_000;

export function storageConformance(name: string, open: () => Promise<OpenedStorage>): void {
  describe(`storage conformance: ${name}`, () => {
    let opened: OpenedStorage;
    let s: Storage;
    /** Unique per case, ends with '/'. */
    let p: string;

    beforeEach(async () => {
      opened = await open();
      s = opened.storage;
      p = `/registry/conformance${randomBytes(4).toString('hex')}/`;
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    it('create stores a key once; a second create fails with KeyExistsError', { timeout: CASE_TIMEOUT_MS }, async () => {
      const kv = await s.create(`${p}a`, enc('one'));
      assert.equal(kv.key, `${p}a`);
      assert.equal(dec(kv), 'one');
      assert.ok(kv.createRevision > 0);
      assert.equal(kv.createRevision, kv.modRevision);
      await assert.rejects(s.create(`${p}a`, enc('two')), (e: unknown) => e instanceof KeyExistsError && e.key === `${p}a`);
      assert.equal(dec(await s.get(`${p}a`)), 'one');
    });

    it('get returns the stored KV or undefined', { timeout: CASE_TIMEOUT_MS }, async () => {
      const created = await s.create(`${p}a`, enc('v'));
      assertSameKv(await s.get(`${p}a`), created);
      assert.equal(await s.get(`${p}missing`), undefined);
    });

    it('update is a compare-and-swap on the mod revision', { timeout: CASE_TIMEOUT_MS }, async () => {
      const created = await s.create(`${p}a`, enc('v1'));
      const updated = await s.update(`${p}a`, enc('v2'), created.modRevision);
      assert.equal(dec(updated), 'v2');
      assert.equal(updated.createRevision, created.createRevision);
      assert.ok(updated.modRevision > created.modRevision);
      await assert.rejects(s.update(`${p}a`, enc('v3'), created.modRevision), (e: unknown) => {
        assert.ok(e instanceof ConflictError);
        assert.equal(e.key, `${p}a`);
        assertSameKv(e.current, updated);
        return true;
      });
      assert.equal(dec(await s.get(`${p}a`)), 'v2');
      await assert.rejects(s.update(`${p}missing`, enc('x'), 1), KeyNotFoundError);
    });

    it('delete with and without an expected revision', { timeout: CASE_TIMEOUT_MS }, async () => {
      const a = await s.create(`${p}a`, enc('a'));
      const b = await s.create(`${p}b`, enc('b'));
      const deletedA = await s.delete(`${p}a`);
      assertSameKv(deletedA.kv, a);
      assert.ok(deletedA.revision > b.modRevision);
      assert.equal(await s.get(`${p}a`), undefined);
      await assert.rejects(s.delete(`${p}a`), KeyNotFoundError);

      await assert.rejects(s.delete(`${p}b`, b.modRevision - 1), (e: unknown) => {
        assert.ok(e instanceof ConflictError);
        assertSameKv(e.current, b);
        return true;
      });
      assert.ok(await s.get(`${p}b`));
      const deletedB = await s.delete(`${p}b`, b.modRevision);
      assert.ok(deletedB.revision > deletedA.revision);
      assert.equal(await s.get(`${p}b`), undefined);
      // A key can be created again after deletion, with a new create revision.
      const again = await s.create(`${p}a`, enc('again'));
      assert.ok(again.createRevision > deletedB.revision);
    });

    it('revisions increase strictly and are global across keys', { timeout: CASE_TIMEOUT_MS }, async () => {
      const before = await s.currentRevision();
      const r1 = (await s.create(`${p}a`, enc('1'))).modRevision;
      const r2 = (await s.create(`${p}b`, enc('1'))).modRevision;
      const r3 = (await s.update(`${p}a`, enc('2'), r1)).modRevision;
      const r4 = (await s.delete(`${p}b`)).revision;
      const r5 = (await s.create(`/registry/other${p.slice('/registry/'.length)}x`, enc('1'))).modRevision;
      const seq = [before, r1, r2, r3, r4, r5];
      for (let i = 1; i < seq.length; i++) assert.ok((seq[i] as number) > (seq[i - 1] as number), `revisions ${seq.join(',')}`);
      assert.ok((await s.currentRevision()) >= r5);
    });

    it('list returns the keys under the prefix in key order, not a sibling prefix', { timeout: CASE_TIMEOUT_MS }, async () => {
      await s.create(`${p}ns10/c`, enc('c'));
      await s.create(`${p}ns1/b`, enc('b'));
      const last = await s.create(`${p}ns1/a`, enc('a'));
      await s.create(`${p.slice(0, -1)}x/ns1/z`, enc('outside'));
      const ns1 = await s.list(`${p}ns1/`);
      assert.deepEqual(keysOf(ns1.items), [`${p}ns1/a`, `${p}ns1/b`]);
      assert.equal(dec(ns1.items[0]), 'a');
      assert.ok(ns1.revision >= last.modRevision);
      assert.equal(ns1.more, false);
      const all = await s.list(p);
      assert.deepEqual(keysOf(all.items), [`${p}ns1/a`, `${p}ns1/b`, `${p}ns10/c`]);
      assert.deepEqual((await s.list(`${p}ns2/`)).items, []);
    });

    it('list at an older revision shows the state of that revision', { timeout: CASE_TIMEOUT_MS }, async () => {
      const a1 = await s.create(`${p}a`, enc('a1'));
      const c = await s.create(`${p}c`, enc('c'));
      const at = c.modRevision;
      await s.update(`${p}a`, enc('a2'), a1.modRevision);
      await s.create(`${p}b`, enc('b'));
      await s.delete(`${p}c`);
      const old = await s.list(p, { revision: at });
      assert.equal(old.revision, at);
      assert.deepEqual(keysOf(old.items), [`${p}a`, `${p}c`]);
      assertSameKv(old.items[0], a1);
      assertSameKv(old.items[1], c);
      const now = await s.list(p);
      assert.deepEqual(
        now.items.map((kv) => [kv.key, dec(kv)]),
        [
          [`${p}a`, 'a2'],
          [`${p}b`, 'b'],
        ],
      );
    });

    it('limit and startKey page through a list with more and remaining', { timeout: CASE_TIMEOUT_MS }, async () => {
      for (const n of ['a', 'b', 'c', 'd', 'e']) await s.create(`${p}${n}`, enc(n));
      const page1 = await s.list(p, { limit: 2 });
      assert.deepEqual(keysOf(page1.items), [`${p}a`, `${p}b`]);
      assert.equal(page1.more, true);
      assert.equal(page1.remaining, 3);
      // A write between pages must not show up when paging at the first page's revision.
      await s.create(`${p}bb`, enc('late'));
      const page2 = await s.list(p, { limit: 2, startKey: `${p}b\0`, revision: page1.revision });
      assert.deepEqual(keysOf(page2.items), [`${p}c`, `${p}d`]);
      assert.equal(page2.more, true);
      assert.equal(page2.remaining, 1);
      assert.equal(page2.revision, page1.revision);
      const page3 = await s.list(p, { limit: 2, startKey: `${p}d\0`, revision: page1.revision });
      assert.deepEqual(keysOf(page3.items), [`${p}e`]);
      assert.equal(page3.more, false);
      const exact = await s.list(p, { limit: 6 });
      assert.equal(exact.items.length, 6);
      assert.equal(exact.more, false);
    });

    it('count counts the keys under the prefix', { timeout: CASE_TIMEOUT_MS }, async () => {
      assert.equal(await s.count(p), 0);
      for (const n of ['a', 'b', 'c']) await s.create(`${p}ns1/${n}`, enc(n));
      await s.create(`${p}ns10/a`, enc('x'));
      assert.equal(await s.count(`${p}ns1/`), 3);
      assert.equal(await s.count(p), 4);
      await s.delete(`${p}ns1/a`);
      assert.equal(await s.count(`${p}ns1/`), 2);
    });

    it('watch from a revision replays history, then goes live, in order with prevKv', { timeout: CASE_TIMEOUT_MS }, async () => {
      // A write outside the prefix first: afterRevision 0 would mean "from now" on a fresh store.
      const start = (await s.create(`${p.slice(0, -1)}-before/x`, enc('x'))).modRevision;
      const a1 = await s.create(`${p}a`, enc('a1'));
      const a2 = await s.update(`${p}a`, enc('a2'), a1.modRevision);
      await s.create(`${p.slice(0, -1)}0/sibling`, enc('not mine'));
      const b1 = await s.create(`${p}b`, enc('b1'));
      const ac = new AbortController();
      const events = s.watch(p, { afterRevision: start, signal: ac.signal });
      const reader = readEvents(events);
      try {
        const replayed = await reader.take(3);
        const delA = await s.delete(`${p}a`);
        const b2 = await s.update(`${p}b`, enc('b2'), b1.modRevision);
        const live = await reader.take(2);
        const all = [...replayed, ...live];
        assert.deepEqual(
          all.map((e) => [e.type, e.kv.key, dec(e.kv), e.revision]),
          [
            ['put', `${p}a`, 'a1', a1.modRevision],
            ['put', `${p}a`, 'a2', a2.modRevision],
            ['put', `${p}b`, 'b1', b1.modRevision],
            ['delete', `${p}a`, 'a2', delA.revision],
            ['put', `${p}b`, 'b2', b2.modRevision],
          ],
        );
        assert.equal(all[0]?.prevKv, undefined);
        assertSameKv(all[1]?.prevKv, a1);
        assertSameKv(all[3]?.prevKv, a2);
        assert.equal(all[3]?.kv.modRevision, delA.revision);
        assertSameKv(all[4]?.prevKv, b1);
        assertSameKv(all[4]?.kv, b2);
      } finally {
        ac.abort();
      }
    });

    it('watch from a revision in the middle skips older events', { timeout: CASE_TIMEOUT_MS }, async () => {
      const a1 = await s.create(`${p}a`, enc('a1'));
      const a2 = await s.update(`${p}a`, enc('a2'), a1.modRevision);
      const ac = new AbortController();
      const reader = readEvents(s.watch(p, { afterRevision: a1.modRevision, signal: ac.signal }));
      try {
        const [first] = await reader.take(1);
        assert.equal(first?.revision, a2.modRevision);
      } finally {
        ac.abort();
      }
    });

    it('watch from 0 delivers only new events', { timeout: CASE_TIMEOUT_MS }, async () => {
      await s.create(`${p}old`, enc('old'));
      const ac = new AbortController();
      const reader = readEvents(s.watch(p, { afterRevision: 0, signal: ac.signal }));
      try {
        await settle();
        const fresh = await s.create(`${p}new`, enc('new'));
        const [first] = await reader.take(1);
        assert.equal(first?.kv.key, `${p}new`);
        assert.equal(first?.revision, fresh.modRevision);
      } finally {
        ac.abort();
      }
    });

    it('watch below the compacted revision fails with ExpiredError from the iterator', { timeout: CASE_TIMEOUT_MS }, async () => {
      const r1 = await s.create(`${p}a`, enc('1'));
      const r2 = await s.update(`${p}a`, enc('2'), r1.modRevision);
      const r3 = await s.update(`${p}a`, enc('3'), r2.modRevision);
      await s.compact(r3.modRevision);
      assert.equal(await s.oldestRevision(), r3.modRevision + 1);
      const ac = new AbortController();
      try {
        const it = s.watch(p, { afterRevision: r1.modRevision, signal: ac.signal })[Symbol.asyncIterator]();
        await assert.rejects(withTimeout(it.next(), 5_000, 'watch below compaction'), ExpiredError);
      } finally {
        ac.abort();
      }
      // Watching from exactly the compacted revision misses nothing, so it is allowed.
      const ac2 = new AbortController();
      try {
        const reader = readEvents(s.watch(p, { afterRevision: r3.modRevision, signal: ac2.signal }));
        const r4 = await s.update(`${p}a`, enc('4'), r3.modRevision);
        const [first] = await reader.take(1);
        assert.equal(first?.revision, r4.modRevision);
      } finally {
        ac2.abort();
      }
    });

    it('list at a compacted revision fails with ExpiredError', { timeout: CASE_TIMEOUT_MS }, async () => {
      const r1 = await s.create(`${p}a`, enc('1'));
      const r2 = await s.update(`${p}a`, enc('2'), r1.modRevision);
      await s.compact(r2.modRevision);
      await assert.rejects(s.list(p, { revision: r1.modRevision }), ExpiredError);
      const atCompacted = await s.list(p, { revision: r2.modRevision });
      assert.deepEqual(atCompacted.items.map(dec), ['2']);
    });

    it('compaction keeps current values', { timeout: CASE_TIMEOUT_MS }, async () => {
      const a = await s.create(`${p}a`, enc('a'));
      const b1 = await s.create(`${p}b`, enc('b1'));
      const b2 = await s.update(`${p}b`, enc('b2'), b1.modRevision);
      const c = await s.create(`${p}c`, enc('c'));
      await s.delete(`${p}c`, c.modRevision);
      await s.compact(await s.currentRevision());
      assertSameKv(await s.get(`${p}a`), a);
      assertSameKv(await s.get(`${p}b`), b2);
      assert.equal(await s.get(`${p}c`), undefined);
      const listed = await s.list(p);
      assert.deepEqual(keysOf(listed.items), [`${p}a`, `${p}b`]);
      assert.equal(await s.count(p), 2);
      const updated = await s.update(`${p}a`, enc('a2'), a.modRevision);
      assert.ok(updated.modRevision > b2.modRevision);
    });

    it('concurrent creates of many keys all get distinct revisions', { timeout: CASE_TIMEOUT_MS }, async () => {
      const n = 300;
      const kvs = await Promise.all(Array.from({ length: n }, (_, i) => s.create(`${p}k${String(i).padStart(4, '0')}`, enc(`v${i}`))));
      assert.equal(new Set(kvs.map((kv) => kv.modRevision)).size, n);
      const listed = await s.list(p);
      assert.equal(listed.items.length, n);
      for (const kv of kvs) assert.ok(listed.revision >= kv.modRevision);
      // Racing creates of the same key: exactly one wins.
      const racing = await Promise.allSettled(Array.from({ length: 10 }, () => s.create(`${p}same`, enc('x'))));
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1);
      assert.ok(racing.every((r) => r.status === 'fulfilled' || r.reason instanceof KeyExistsError));
    });

    it('aborting the signal ends a watch', { timeout: CASE_TIMEOUT_MS }, async () => {
      const ac = new AbortController();
      const stream = s.watch(p, { afterRevision: 0, signal: ac.signal });
      const done = (async () => {
        const seen: WatchEvent[] = [];
        for await (const e of stream) if (e.type !== 'progress') seen.push(e);
        return seen;
      })();
      await settle();
      await s.create(`${p}a`, enc('a'));
      await sleep(200);
      ac.abort();
      const seen = await withTimeout(done, 5_000, 'watch did not end after abort');
      assert.ok(seen.length <= 1);
    });

    it('emits progress events to an idle watcher when asked', { timeout: CASE_TIMEOUT_MS }, async (t) => {
      // etcd before 3.4.31 is never asked (its answers may come ahead of the events).
      if (s.watchProgressRequestsSafe?.() === false) {
        t.skip('this store says its progress answers are not safe to ask for');
        return;
      }
      await s.create(`${p.slice(0, -1)}z/other`, enc('elsewhere'));
      const before = await s.currentRevision();
      const ac = new AbortController();
      try {
        const it = s.watch(p, { afterRevision: 0, progressIntervalMs: 200, signal: ac.signal })[Symbol.asyncIterator]();
        const first = await withTimeout(it.next(), 10_000, 'no progress event');
        assert.equal(first.done, false);
        assert.equal(first.value.type, 'progress');
        assert.ok(first.value.revision >= before, `progress ${first.value.revision} < ${before}`);
      } finally {
        ac.abort();
      }
    });
  });
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

/** Reads change events (skipping progress) from a watch; `take` waits for the next n. */
function readEvents(stream: AsyncIterable<WatchEvent>): { take(n: number, timeoutMs?: number): Promise<ChangeEvent[]> } {
  const it = stream[Symbol.asyncIterator]();
  return {
    async take(n, timeoutMs = 10_000) {
      const out: ChangeEvent[] = [];
      const deadline = Date.now() + timeoutMs;
      while (out.length < n) {
        const r = await withTimeout(it.next(), Math.max(1, deadline - Date.now()), `waiting for ${n} events, got ${out.length}`);
        if (r.done) throw new Error(`watch ended after ${out.length} of ${n} events`);
        if (r.value.type !== 'progress') out.push(r.value);
      }
      return out;
    },
  };
}

export function enc(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

export function dec(kv: KV | undefined): string {
  assert.ok(kv, 'expected a KV');
  return Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength).toString('utf8');
}

function keysOf(items: readonly KV[]): string[] {
  return items.map((kv) => kv.key);
}

function assertSameKv(actual: KV | undefined, expected: KV): void {
  assert.ok(actual, `expected ${expected.key}`);
  assert.deepEqual(
    { key: actual.key, value: dec(actual), createRevision: actual.createRevision, modRevision: actual.modRevision },
    { key: expected.key, value: dec(expected), createRevision: expected.createRevision, modRevision: expected.modRevision },
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Gives a remote backend time to register a watch before the write it must see. */
function settle(): Promise<void> {
  return sleep(100);
}

export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
