import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ConflictError, ExpiredError, KeyExistsError, StorageUnavailableError } from '../storage.js';
import { dec, enc, storageConformance } from '../conformance/conformance.js';
import { COMPACT_REV_KEY, openSqliteStorage } from './sqlite-storage.js';
import { RETIRED_LOG_KEY_INDEX } from './writer-core.js';
import type { WatchEvent } from '../storage.js';

let dir: string;
let n = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-sqlite-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
const freshPath = (): string => join(dir, `db${n++}`, 'kplane.db');

storageConformance('sqlite', async () => {
  const storage = await openSqliteStorage({ path: freshPath() });
  return { storage, cleanup: () => storage.close() };
});

storageConformance('sqlite (in-process writer)', async () => {
  const storage = await openSqliteStorage({ path: freshPath(), inProcessWriter: true });
  return { storage, cleanup: () => storage.close() };
});

/** The largest gap between 1 ms interval ticks while `work` runs: how long the event loop was blocked. */
/** The longest event-loop stall while `work` runs, and how many 1 ms timer ticks ran meanwhile. */
async function maxTickGap(work: () => Promise<unknown>): Promise<{ gap: number; ticks: number }> {
  let last = performance.now();
  let maxGap = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks++;
  }, 1);
  try {
    await new Promise((r) => setTimeout(r, 20));
    maxGap = 0;
    ticks = 0;
    last = performance.now();
    await work();
    // The stall that ends with the work itself shows up in no tick.
    maxGap = Math.max(maxGap, performance.now() - last);
  } finally {
    clearInterval(timer);
  }
  return { gap: maxGap, ticks };
}

const value1k = (i: number): Uint8Array => enc(JSON.stringify({ i, pad: 'x'.repeat(1000) }));

describe('sqlite storage', () => {
  it('group commit: writes issued in one tick share one transaction; a failed CAS fails alone', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    try {
      const a = await s.create('/registry/g/a', enc('a'));
      const commitsBefore = s.commitCount;
      const results = await Promise.allSettled([
        ...Array.from({ length: 100 }, (_, i) => s.create(`/registry/g/k${i}`, enc(String(i)))),
        s.create('/registry/g/a', enc('dup')),
        s.update('/registry/g/a', enc('a2'), a.modRevision),
        // Same expected revision as the update just before it in the batch: must lose.
        s.update('/registry/g/a', enc('a3'), a.modRevision),
      ]);
      assert.equal(s.commitCount, commitsBefore + 1);
      const ok = results.slice(0, 100).map((r) => (r.status === 'fulfilled' ? r.value.modRevision : -1));
      assert.equal(new Set(ok).size, 100);
      assert.ok(ok.every((rev) => rev > a.modRevision));
      assert.ok(results[100]?.status === 'rejected' && results[100].reason instanceof KeyExistsError);
      assert.equal(results[101]?.status, 'fulfilled');
      assert.ok(results[102]?.status === 'rejected' && results[102].reason instanceof ConflictError);
      assert.equal(dec(await s.get('/registry/g/a')), 'a2');
    } finally {
      await s.close();
    }
  });

  it('keeps data, revision and compaction across reopen', async () => {
    const path = freshPath();
    const s1 = await openSqliteStorage({ path });
    const a = await s1.create('/registry/r/a', enc('a'));
    const a2 = await s1.update('/registry/r/a', enc('a2'), a.modRevision);
    await s1.compact(a.modRevision);
    await s1.close();
    const s2 = await openSqliteStorage({ path });
    try {
      assert.equal(await s2.currentRevision(), a2.modRevision);
      assert.equal(await s2.oldestRevision(), a.modRevision + 1);
      assert.equal(dec(await s2.get('/registry/r/a')), 'a2');
      const b = await s2.create('/registry/r/b', enc('b'));
      assert.equal(b.modRevision, a2.modRevision + 1);
    } finally {
      await s2.close();
    }
  });

  it('walAutoCheckpointPages bounds the WAL: the writer checkpoints once it holds that many pages', async () => {
    // 600 creates of 1 KiB, one at a time, write a few thousand WAL pages. The WAL file keeps its
    // largest size, so it shows how far the WAL grew between checkpoints.
    const walBytes = async (pages: number): Promise<number> => {
      const path = freshPath();
      const s = await openSqliteStorage({ path, walAutoCheckpointPages: pages });
      try {
        for (let i = 0; i < 600; i++) await s.create(`/registry/configmaps/ns/cm-${i}`, enc(JSON.stringify({ data: 'x'.repeat(1024), i })));
        return statSync(`${path}-wal`).size;
      } finally {
        await s.close();
      }
    };
    const small = await walBytes(50);
    const large = await walBytes(100_000);
    const page = 4096 + 24; // a WAL frame: page plus frame header
    assert.ok(small < 100 * page, `with 50 pages the WAL grew to ${small} bytes`);
    assert.ok(large > 1_000 * page, `without checkpoints the WAL should hold every page written (${large} bytes)`);
    for (const bad of [-1, 1.5, Number.NaN])
      await assert.rejects(openSqliteStorage({ path: freshPath(), walAutoCheckpointPages: bad }), /walAutoCheckpointPages must be a whole number/);
  });

  it('refuses a second writer on the same file with a clear error', async () => {
    const path = freshPath();
    const s1 = await openSqliteStorage({ path });
    try {
      await assert.rejects(openSqliteStorage({ path }), (e: unknown) => {
        assert.ok(e instanceof StorageUnavailableError);
        assert.match(e.message, /already open in another process/);
        assert.ok(e.message.includes(path));
        return true;
      });
      // Also from another process, where the lock is an OS file lock.
      const { code, output } = await runNode(
        `import { openSqliteStorage } from ${JSON.stringify(new URL('./sqlite-storage.ts', import.meta.url).href)};
         try { await openSqliteStorage({ path: ${JSON.stringify(path)} }); console.log('opened'); }
         catch (e) { console.log(e.message); }`,
      );
      assert.equal(code, 0);
      assert.match(output, /already open in another process/);
    } finally {
      await s1.close();
    }
    const s3 = await openSqliteStorage({ path });
    await s3.close();
  });

  it('automatic compaction is by time: a quiet store forgets history older than the last interval', async () => {
    const s = await openSqliteStorage({ path: freshPath(), compactIntervalMs: 100 });
    try {
      await s.create('/registry/tc/a', enc('a'));
      await s.create('/registry/tc/b', enc('b'));
      const listed = await s.list('/registry/tc/', { limit: 1 });
      assert.ok(listed.more);
      // Nothing else writes: the compactor's own compact_rev_key write moves the revision on, and
      // the round after it compacts past the list's revision (kube-apiserver's compactor on etcd
      // does the same, so a continue token of a quiet cluster expires).
      const deadline = Date.now() + 20_000;
      let expired: unknown;
      while (expired === undefined && Date.now() < deadline) {
        await s.list('/registry/tc/', { revision: listed.revision, startKey: '/registry/tc/b' }).catch((e: unknown) => (expired = e));
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(expired instanceof ExpiredError, `the list at ${listed.revision} never expired`);
      assert.ok((await s.oldestRevision()) > listed.revision);
      const it = s.watch('/registry/tc/', { afterRevision: listed.revision - 1, signal: AbortSignal.timeout(5_000) })[Symbol.asyncIterator]();
      await assert.rejects(it.next(), ExpiredError);
      assert.deepEqual(
        (await s.list('/registry/tc/')).items.map((kv) => dec(kv)),
        ['a', 'b'],
      );
      assert.match(dec(await s.get(COMPACT_REV_KEY)), /^[1-9][0-9]*$/);
    } finally {
      await s.close();
    }
  });

  it('a compaction round compacts to the revision the previous round recorded; the first compacts nothing', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    try {
      const a = await s.create('/registry/cr/a', enc('1'));
      await s.compactRound();
      const mark1 = (await s.get(COMPACT_REV_KEY))!;
      assert.equal(dec(mark1), '0', 'the first round records, as kube-apiserver does on bootstrap');
      assert.equal(await s.oldestRevision(), 1);
      const a2 = await s.update('/registry/cr/a', enc('2'), a.modRevision);
      await s.compactRound();
      const mark2 = (await s.get(COMPACT_REV_KEY))!;
      assert.equal(dec(mark2), String(mark1.modRevision), 'compact_rev_key holds the revision compacted to');
      assert.equal(await s.oldestRevision(), mark1.modRevision + 1);
      await assert.rejects(s.list('/registry/cr/', { revision: a.modRevision }), ExpiredError);
      // The revision recorded by the previous round is still readable: history covers one interval.
      assert.equal(dec((await s.list('/registry/cr/', { revision: mark1.modRevision })).items[0]), '1');
      assert.equal(dec((await s.list('/registry/cr/', { revision: a2.modRevision })).items[0]), '2');
    } finally {
      await s.close();
    }
  });

  it('retainRevisions is a floor under the time-based rounds; compaction runs in chunks', async () => {
    const s = await openSqliteStorage({ path: freshPath(), retainRevisions: 100, compactionChunkRows: 64 });
    try {
      let kv = await s.create('/registry/ac/a', enc('0'));
      const first = kv.modRevision;
      await s.compactRound();
      await s.compactRound();
      assert.equal(await s.oldestRevision(), 1, 'fewer than 100 revisions: nothing compacted');
      await s.list('/registry/ac/', { revision: first });
      for (let i = 1; i <= 600; i++) kv = await s.update('/registry/ac/a', enc(String(i)), kv.modRevision);
      await s.compactRound();
      await s.compactRound();
      const current = await s.currentRevision();
      assert.equal(await s.oldestRevision(), current - 100 + 1, 'the floor, not the previous round, bounds it');
      assert.equal(dec(await s.get('/registry/ac/a')), '600');
      const listed = await s.list('/registry/ac/', { revision: current - 100 });
      assert.equal(listed.items.length, 1);
      await assert.rejects(s.list('/registry/ac/', { revision: current - 101 }), ExpiredError);
    } finally {
      await s.close();
    }
  });

  it('the event loop keeps ticking while a batch of 5,000 creates commits in the writer thread', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    const inProcess = await openSqliteStorage({ path: freshPath(), inProcessWriter: true });
    try {
      const values = Array.from({ length: 5_000 }, (_, i) => value1k(i));
      const run = (st: typeof s, tag: string) => () => Promise.all(values.map((v, i) => st.create(`/registry/el/${tag}${i}`, v)));
      await s.create('/registry/el/warm', enc('w'));
      await inProcess.create('/registry/el/warm', enc('w'));
      const commits = s.commitCount;
      const threaded = await maxTickGap(run(s, 'w'));
      const inProc = await maxTickGap(run(inProcess, 'p'));
      assert.equal(s.commitCount, commits + 1, 'one batch');
      assert.equal(await s.count('/registry/el/'), 5_001);
      console.log(
        `# 5,000 creates in one batch: longest event-loop stall ${threaded.gap.toFixed(1)} ms, ${threaded.ticks} ticks (writer thread); ${inProc.gap.toFixed(1)} ms, ${inProc.ticks} ticks (in-process writer)`,
      );
      // What remains on this thread is issuing the creates, packing the batch and settling 5,000
      // promises, not the transaction or its fsync: while the writer thread commits, this thread's
      // timers run; with the in-process writer they wait for the whole commit. Counting the ticks
      // (not timing them) keeps the check independent of how busy the machine is.
      assert.ok(threaded.ticks >= inProc.ticks + 3, `timer ticks during the batch: ${threaded.ticks} (writer thread) vs ${inProc.ticks} (in-process)`);
    } finally {
      await s.close();
      await inProcess.close();
    }
  });

  it('read-your-writes: a resolved write is visible to the next get and list, while later batches commit', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    try {
      const checks: Promise<void>[] = [];
      for (let i = 0; i < 2_000; i++) {
        checks.push(
          s.create(`/registry/ryw/k${i}`, enc(String(i))).then(async (kv) => {
            const got = await s.get(kv.key);
            assert.equal(got?.modRevision, kv.modRevision);
            assert.ok((await s.currentRevision()) >= kv.modRevision);
            const listed = await s.list('/registry/ryw/', { startKey: kv.key, limit: 1 });
            assert.equal(listed.items[0]?.key, kv.key);
            assert.ok(listed.revision >= kv.modRevision);
          }),
        );
        if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      }
      await Promise.all(checks);
    } finally {
      await s.close();
    }
  });

  it('a watch from a list revision sees each later event once, with lists taken while batches commit', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    try {
      const writes = (async () => {
        for (let i = 0; i < 40; i++) await Promise.all(Array.from({ length: 50 }, (_, j) => s.create(`/registry/seam/k${i}-${j}`, enc('v'))));
      })();
      const controllers: AbortController[] = [];
      const watches: Promise<void>[] = [];
      for (let round = 0; round < 20; round++) {
        await new Promise((r) => setImmediate(r));
        const listed = await s.list('/registry/seam/');
        const seen = new Set(listed.items.map((kv) => kv.key));
        const ac = new AbortController();
        controllers.push(ac);
        const watch = s.watch('/registry/seam/', { afterRevision: listed.revision, signal: ac.signal });
        watches.push(
          (async () => {
            let last = listed.revision;
            for await (const ev of watch) {
              if (ev.type === 'progress') continue;
              assert.ok(ev.revision > last, `revision ${ev.revision} after ${last}`);
              last = ev.revision;
              assert.ok(!seen.has(ev.kv.key), `${ev.kv.key} both listed at ${listed.revision} and watched at ${ev.revision}`);
              seen.add(ev.kv.key);
              if (seen.size === 2_000) return;
            }
          })(),
        );
      }
      await writes;
      await Promise.all(watches);
      for (const ac of controllers) ac.abort();
    } finally {
      await s.close();
    }
  });

  it('a lost writer thread fails waiting writes, later calls and ping with StorageUnavailableError', async () => {
    const path = freshPath();
    const s = await openSqliteStorage({ path });
    const first = await s.create('/registry/lost/first', enc('1'));
    const ac = new AbortController();
    const watch = s.watch('/registry/lost/', { afterRevision: 0, signal: ac.signal });
    const writes = Array.from({ length: 500 }, (_, i) => s.create(`/registry/lost/k${i}`, value1k(i)));
    await new Promise((r) => setImmediate(r)); // the batch is now in flight
    // Reaching into the link to simulate a crash of the thread; there is no public way to kill it.
    await (s as unknown as { writer: { worker: Worker } }).writer.worker.terminate();
    const results = await Promise.allSettled(writes);
    assert.ok(results.every((r) => r.status === 'rejected' && r.reason instanceof StorageUnavailableError));
    await assert.rejects(s.ping(), StorageUnavailableError);
    await assert.rejects(s.create('/registry/lost/after', enc('x')), StorageUnavailableError);
    await assert.rejects(s.get('/registry/lost/first'), StorageUnavailableError);
    await assert.rejects(watch.next(), StorageUnavailableError);
    await s.close();
    const s2 = await openSqliteStorage({ path });
    try {
      assert.equal((await s2.get('/registry/lost/first'))?.modRevision, first.modRevision);
      const n = await s2.count('/registry/lost/');
      // The in-flight batch committed entirely or not at all.
      assert.ok(n === 1 || n === 501, `${n} keys`);
    } finally {
      await s2.close();
    }
  });

  it('stores each value once: kv points at the log row of the current revision', async () => {
    const path = freshPath();
    const s = await openSqliteStorage({ path });
    try {
      const a = await s.create('/registry/once/a', enc('a0'));
      await s.update('/registry/once/a', enc('a1'), a.modRevision);
      await s.create('/registry/once/b', enc('b0'));
    } finally {
      await s.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      const columns = db
        .prepare<[], { name: string }>('PRAGMA table_info(kv)')
        .all()
        .map((c) => c.name);
      assert.deepEqual(columns, ['key', 'create_rev', 'mod_rev']);
      const rows = db.prepare<[], { key: string; value: Buffer }>('SELECT kv.key, l.value FROM kv JOIN log l ON l.rev = kv.mod_rev ORDER BY kv.key').all();
      assert.deepEqual(
        rows.map((r) => [r.key, r.value.toString()]),
        [
          ['/registry/once/a', 'a1'],
          ['/registry/once/b', 'b0'],
        ],
      );
    } finally {
      db.close();
    }
  });

  it('compaction keeps the current value of a key written long before, and drops it once replaced', async () => {
    const path = freshPath();
    const s = await openSqliteStorage({ path, compactionChunkRows: 16 });
    let hotRev: number;
    try {
      const old = await s.create('/registry/keep/old', enc('old'));
      const gone = await s.create('/registry/keep/gone', enc('gone'));
      let kv = await s.create('/registry/keep/hot', enc('0'));
      for (let i = 1; i <= 100; i++) kv = await s.update('/registry/keep/hot', enc(String(i)), kv.modRevision);
      await s.delete('/registry/keep/gone', gone.modRevision);
      await s.compact(kv.modRevision);
      hotRev = kv.modRevision;
      assert.equal(dec(await s.get('/registry/keep/old')), 'old');
      assert.equal((await s.get('/registry/keep/old'))?.modRevision, old.modRevision);
      assert.equal(await s.get('/registry/keep/gone'), undefined);
      const listed = await s.list('/registry/keep/');
      assert.deepEqual(
        listed.items.map((x) => [x.key, dec(x)]),
        [
          ['/registry/keep/hot', '100'],
          ['/registry/keep/old', 'old'],
        ],
      );
      // At the compacted revision `gone` still existed: its value comes from its delete's log row.
      const atCompacted = await s.list('/registry/keep/', { revision: kv.modRevision });
      assert.deepEqual(
        atCompacted.items.map((x) => dec(x)),
        ['gone', '100', 'old'],
      );
      // Replacing the old value after compaction passed its revision removes its row at once.
      const replaced = await s.update('/registry/keep/old', enc('new'), old.modRevision);
      const events: WatchEvent[] = [];
      const ac = new AbortController();
      const it = s.watch('/registry/keep/', { afterRevision: kv.modRevision, signal: ac.signal })[Symbol.asyncIterator]();
      for (let i = 0; i < 2; i++) {
        const r = await it.next();
        if (!r.done) events.push(r.value);
      }
      ac.abort();
      assert.deepEqual(
        events.map((e) => [e.type, e.revision]),
        [
          ['delete', kv.modRevision + 1],
          ['put', replaced.modRevision],
        ],
      );
      assert.equal(events[1]?.type === 'put' ? dec(events[1].prevKv) : '', 'old');
    } finally {
      await s.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      const revs = db
        .prepare<[], { rev: number }>('SELECT rev FROM log ORDER BY rev')
        .all()
        .map((r) => r.rev);
      // Left: the hot key's current row (compacted exactly at it), gone's delete and old's update.
      assert.deepEqual(revs, [hotRev, hotRev + 1, hotRev + 2]);
    } finally {
      db.close();
    }
  });

  it('the in-process writer tells about the conversion too', async () => {
    const notices: string[] = [];
    const s = await openSqliteStorage({ path: await writeEarlierLayout(), inProcessWriter: true, onNotice: (m) => notices.push(m) });
    try {
      assert.deepEqual(
        notices.map((m) => m.split(' ').slice(0, 3).join(' ')),
        ['sqlite: converting 2', 'sqlite: converted 2'],
      );
      assert.equal(dec(await s.get('/registry/mig/a')), 'a0');
    } finally {
      await s.close();
    }
  });

  it('a compaction cut short (by a crash) is finished at the next open', async () => {
    const path = freshPath();
    const s = await openSqliteStorage({ path });
    let hot = await s.create('/registry/cut/hot', enc('0'));
    const cold = await s.create('/registry/cut/cold', enc('cold'));
    for (let i = 1; i <= 40; i++) hot = await s.update('/registry/cut/hot', enc(String(i)), hot.modRevision);
    await s.close();
    // What a crash right after the compacted revision was recorded, before any row went, leaves.
    const db = new Database(path);
    db.prepare("INSERT INTO meta (name, value) VALUES ('compacted', ?), ('compaction_done', 0) ON CONFLICT(name) DO UPDATE SET value = excluded.value").run(
      hot.modRevision - 5,
    );
    db.close();
    const reopened = await openSqliteStorage({ path, compactionChunkRows: 8 });
    try {
      assert.equal(await reopened.oldestRevision(), hot.modRevision - 4);
      assert.equal(dec(await reopened.get('/registry/cut/cold')), 'cold');
      assert.equal(dec(await reopened.get('/registry/cut/hot')), '40');
      const at = await reopened.list('/registry/cut/', { revision: hot.modRevision - 5 });
      assert.deepEqual(
        at.items.map((x) => dec(x)),
        ['cold', '35'],
      );
      // The resumed compaction runs in the writer in steps, writes interleave; nothing asks for it.
      await reopened.create('/registry/cut/after', enc('a'));
      const progress = new Database(path, { readonly: true });
      try {
        const done = (): number => progress.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'compaction_done'").get()?.value ?? -1;
        const deadline = Date.now() + 10_000;
        while (done() < hot.modRevision - 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      } finally {
        progress.close();
      }
    } finally {
      await reopened.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      const revs = check
        .prepare<[], { rev: number }>('SELECT rev FROM log ORDER BY rev')
        .all()
        .map((r) => r.rev);
      const done = check.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'compaction_done'").get()?.value;
      assert.equal(done, hot.modRevision - 5);
      // cold's create stays (current); hot's rows above the compacted revision stay; the rest went.
      assert.deepEqual(revs, [cold.modRevision, ...Array.from({ length: 5 }, (_, i) => hot.modRevision - 4 + i), hot.modRevision + 1]);
    } finally {
      check.close();
    }
  });

  it('opens a database of the earlier layout (value in kv), keeping every value and its history', async () => {
    const path = await writeEarlierLayout();
    const notices: string[] = [];
    const s = await openSqliteStorage({ path, onNotice: (m) => notices.push(m) });
    try {
      assert.equal(notices.length, 2, notices.join('\n'));
      assert.match(notices[0]!, /^sqlite: converting 2 keys to the current storage layout/);
      assert.match(notices[1]!, /^sqlite: converted 2 keys in \d+\.\d s$/);
      assert.equal(await s.currentRevision(), 5);
      assert.equal(await s.oldestRevision(), 4);
      const listed = await s.list('/registry/mig/');
      assert.deepEqual(
        listed.items.map((x) => [x.key, dec(x), x.createRevision, x.modRevision]),
        [
          ['/registry/mig/a', 'a0', 1, 1],
          ['/registry/mig/b', 'b1', 2, 4],
        ],
      );
      const at3 = await s.list('/registry/mig/', { revision: 3 });
      assert.deepEqual(
        at3.items.map((x) => [x.key, dec(x)]),
        [
          ['/registry/mig/a', 'a0'],
          ['/registry/mig/b', 'b0'],
          ['/registry/mig/c', 'c0'],
        ],
      );
      const ac = new AbortController();
      const it = s.watch('/registry/mig/', { afterRevision: 3, signal: ac.signal })[Symbol.asyncIterator]();
      const e4 = (await it.next()).value as WatchEvent;
      const e5 = (await it.next()).value as WatchEvent;
      ac.abort();
      assert.deepEqual([e4.type, e4.revision, e5.type, e5.revision], ['put', 4, 'delete', 5]);
      const a = await s.update('/registry/mig/a', enc('a1'), 1);
      assert.equal(dec(await s.get('/registry/mig/a')), 'a1');
      assert.equal(a.modRevision, 6);
    } finally {
      await s.close();
    }
    const check = new Database(path, { readonly: true });
    try {
      assert.deepEqual(
        check
          .prepare<[], { name: string }>('PRAGMA table_info(kv)')
          .all()
          .map((c) => c.name),
        ['key', 'create_rev', 'mod_rev'],
      );
      // The unfinished compaction was finished (row 3 gone); a's restored row went when a was updated.
      assert.deepEqual(
        check
          .prepare<[], { rev: number }>('SELECT rev FROM log ORDER BY rev')
          .all()
          .map((r) => r.rev),
        [4, 5, 6],
      );
    } finally {
      check.close();
    }
  });

  it('pages at an older revision give the state at that revision, however it changed since, and 410 once compacted', async () => {
    const s = await openSqliteStorage({ path: freshPath() });
    try {
      const key = (i: number): string => `/registry/pages/k${String(i).padStart(2, '0')}`;
      const kvs = new Map<string, number>();
      for (let i = 0; i < 40; i += 2) kvs.set(key(i), (await s.create(key(i), enc(`v${i}`))).modRevision);
      // Page one; the expected state is everything at its revision.
      const first = await s.list('/registry/pages/', { limit: 7 });
      const expected = [...kvs.keys()].map((k) => [k, `v${Number(k.slice(-2))}`]);
      // Then: keys created between and after, updates, deletions, a deletion and re-creation, and
      // writes elsewhere.
      for (let i = 1; i < 44; i += 2) await s.create(key(i), enc('new'));
      for (const i of [8, 14, 30]) await s.update(key(i), enc('changed'), kvs.get(key(i))!);
      for (const i of [10, 20, 38]) await s.delete(key(i));
      await s.delete(key(16));
      await s.create(key(16), enc('again'));
      for (let i = 0; i < 20; i++) await s.create(`/registry/elsewhere/${i}`, enc('x'));
      const got = first.items.map((kv) => [kv.key, dec(kv)]);
      const remainings = [first.remaining];
      let page = first;
      while (page.more) {
        page = await s.list('/registry/pages/', { limit: 7, revision: first.revision, startKey: `${page.items.at(-1)!.key}\0` });
        assert.equal(page.revision, first.revision);
        got.push(...page.items.map((kv) => [kv.key, dec(kv)]));
        remainings.push(page.more ? page.remaining : 0);
      }
      assert.deepEqual(got, expected);
      assert.deepEqual(remainings, [13, 6, 0], 'remaining counts at the first page revision');
      // Compacted past it: the next page is refused (the API answers 410 Expired).
      await s.compact(await s.currentRevision());
      await assert.rejects(
        s.list('/registry/pages/', { limit: 7, revision: first.revision, startKey: `${first.items.at(-1)!.key}\0` }),
        (e: unknown) => e instanceof ExpiredError && e.requested === first.revision,
      );
    } finally {
      await s.close();
    }
  });

  it('opens a database written while the log had its key index (2026-12-06 builds): drops the index, keeps data and history', async () => {
    const path = freshPath();
    let s = await openSqliteStorage({ path });
    const a = await s.create('/registry/prev/a', enc('a0'));
    await s.create('/registry/prev/b', enc('b0'));
    const before = await s.currentRevision();
    await s.update('/registry/prev/a', enc('a1'), a.modRevision);
    await s.delete('/registry/prev/b');
    await s.create('/registry/prev/c', enc('c0'));
    await s.close();
    // What those builds left: the same tables, with the index.
    const old = new Database(path);
    old.exec(`CREATE INDEX ${RETIRED_LOG_KEY_INDEX} ON log (key, rev, deleted, prev_mod_rev)`);
    old.close();
    s = await openSqliteStorage({ path });
    try {
      const check = new Database(path, { readonly: true });
      const indexes = check.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'log'").all();
      check.close();
      assert.deepEqual(indexes, [], 'the log has no index of its own again');
      const now = await s.list('/registry/prev/');
      assert.deepEqual(
        now.items.map((kv) => [kv.key, dec(kv)]),
        [
          ['/registry/prev/a', 'a1'],
          ['/registry/prev/c', 'c0'],
        ],
      );
      const page = await s.list('/registry/prev/', { revision: before, limit: 1 });
      assert.deepEqual([page.items.map(dec), page.more, page.remaining], [['a0'], true, 1]);
      const next = await s.list('/registry/prev/', { revision: before, limit: 1, startKey: '/registry/prev/a\0' });
      assert.deepEqual([next.items.map(dec), next.more], [['b0'], false]);
    } finally {
      await s.close();
    }
  });

  it('survives kill -9: every acknowledged create is present after reopen', { timeout: 60_000 }, async () => {
    const path = freshPath();
    const fixture = fileURLToPath(new URL('./crash-writer.fixture.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acked: string[] = [];
    let partial = '';
    const killedAfterAcks = 2_000;
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
        if (acked.length >= killedAfterAcks && child.exitCode === null && !child.killed) child.kill('SIGKILL');
      });
    });
    assert.equal(child.signalCode, 'SIGKILL');
    assert.ok(acked.length >= killedAfterAcks);
    const s = await openSqliteStorage({ path });
    try {
      const listed = await s.list('/registry/crash/');
      const present = new Set(listed.items.map((kv) => kv.key));
      const missing = acked.filter((k) => !present.has(k));
      assert.deepEqual(missing, [], `${missing.length} acknowledged keys lost`);
      for (const kv of listed.items) JSON.parse(dec(kv)); // nothing half-written
      const revs = listed.items.map((kv) => kv.modRevision);
      assert.equal(new Set(revs).size, revs.length);
      assert.ok((await s.currentRevision()) >= Math.max(...revs));
      console.log(`# kill -9: ${acked.length} acked, ${listed.items.length} present after reopen`);
    } finally {
      await s.close();
    }
  });
});

/**
 * A database of the layout before 2026-11-27 (the value also in kv): a (rev 1) and b (rev 2,
 * updated at 4) with history compacted at 3; rows 1-3 were deleted, but the compaction had not
 * finished: row 3 (c's create, deleted at 5) is still there.
 */
async function writeEarlierLayout(): Promise<string> {
  const path = freshPath();
  await mkdir(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`
CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE log (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, deleted INTEGER NOT NULL, value BLOB NOT NULL, create_rev INTEGER NOT NULL,
  prev_value BLOB, prev_create_rev INTEGER, prev_mod_rev INTEGER);
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO kv VALUES ('/registry/mig/a', X'6130', 1, 1), ('/registry/mig/b', X'6231', 2, 4);
INSERT INTO log VALUES (3, '/registry/mig/c', 0, X'6330', 3, NULL, NULL, NULL),
  (4, '/registry/mig/b', 0, X'6231', 2, X'6230', 2, 2),
  (5, '/registry/mig/c', 1, X'6330', 3, NULL, 3, 3);
INSERT INTO meta VALUES ('revision', 5), ('compacted', 3);`);
  db.close();
  // As kplane leaves its database (0600), so that opening it has only the conversion to tell.
  chmodSync(path, 0o600);
  return path;
}

function runNode(source: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}
