// [2b] Paged lists at the first page's revision on SQLite, as a client with continue tokens reads
// them (limit 100 over 10,000 ConfigMap-sized values, in process, no HTTP): without writes, and
// while 200 writes a second update objects of the same prefix. No goal: a page should cost the
// same whatever was written since the first (KEP-0001, "SQLite paged lists").
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import { stats } from '../common.js';
import { fmt, type Scenario } from '../context.js';

const PREFIX = '/registry/configmaps/bench-pages/';

export const sqlitePages: Scenario = {
  names: ['sqlitepages'],
  async run(ctx) {
    const { rec, dataDir, quick } = ctx;
    const objects = quick ? 2_000 : 10_000;
    const limit = 100;
    /** A client's work between two pages; it also sets how many writes land during a pass. */
    const gapMs = 50;
    console.log(`\n[2b] SQLite pages of ${limit} over ${objects} objects at the first page's revision (${gapMs} ms between pages), in process`);
    const s = await openSqliteStorage({ path: join(dataDir, 'sqlite-pages', 'kplane.db') });
    try {
      const value = Buffer.alloc(1_000, 'x');
      const key = (i: number): string => `${PREFIX}cm-${String(i).padStart(6, '0')}`;
      const revisions: (number | undefined)[] = [];
      for (let at = 0; at < objects; at += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, objects - at) }, async (_, j) => (revisions[at + j] = (await s.create(key(at + j), value)).modRevision)),
        );
      }
      for (const writesPerSecond of [0, 200]) {
        let writes = 0;
        let next = 0;
        const writer =
          writesPerSecond === 0
            ? undefined
            : setInterval(() => {
                for (let j = 0; j < writesPerSecond / 20; j++) {
                  const i = (next++ * 7_919) % objects;
                  const expected = revisions[i];
                  if (expected === undefined) continue;
                  revisions[i] = undefined;
                  void s.update(key(i), value, expected).then((kv) => {
                    revisions[i] = kv.modRevision;
                    writes++;
                  });
                }
              }, 50);
        const latencies: number[] = [];
        let page = await s.list(PREFIX, { limit });
        const revision = page.revision;
        let items = page.items.length;
        while (page.more) {
          await sleep(gapMs);
          const t = performance.now();
          page = await s.list(PREFIX, { limit, revision, startKey: `${(page.items.at(-1) as { key: string }).key}\0` });
          latencies.push(performance.now() - t);
          items += page.items.length;
        }
        if (writer !== undefined) clearInterval(writer);
        if (items !== objects) throw new Error(`a pass at revision ${revision} gave ${items} items, not ${objects}`);
        const st = stats(latencies);
        const last = latencies.slice(-10).reduce((a, b) => a + b, 0) / Math.min(10, latencies.length);
        const op = writesPerSecond === 0 ? `pages 2+, no writes` : `pages 2+, ${writesPerSecond} writes/s`;
        rec.row({
          scenario: '2b-sqlitepages',
          target: 'kplane sqlite',
          op,
          concurrency: writesPerSecond === 0 ? '-' : `${writesPerSecond}/s`,
          p50: st.p50,
          p99: st.p99,
          max: st.max,
          n: latencies.length,
          note: `${writes} writes during the pass; last 10 pages ${fmt(last, 2)} ms each`,
        });
        console.log(
          `  ${op.padEnd(26)} p50 ${fmt(st.p50, 2).padStart(6)} ms  p99 ${fmt(st.p99, 2).padStart(6)} ms  last 10 ${fmt(last, 2).padStart(6)} ms  (${latencies.length} pages, ${writes} writes during the pass)`,
        );
        // Let the writes in flight settle before the next pass.
        while (revisions.some((r) => r === undefined)) await sleep(10);
      }
    } finally {
      await s.close();
    }
    return rec.result();
  },
};
