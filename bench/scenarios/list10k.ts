// [3] A list of 10,000 ConfigMaps, whole JSON answer, one at a time, kplane and the bare baseline.
// Goal: kplane's p99 ≤ 250 ms.
import { fmt, sharedOf, type Scenario } from '../context.js';
import { HttpClient, closedLoop, expectStatus, type RoundResult } from '../load.js';

export const list10k: Scenario = {
  names: ['list10k'],
  shared: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const servers = sharedOf(ctx);
    console.log(`\n[3] List of ${cfg.list10k} ConfigMaps (1 KiB each), whole JSON response, one at a time (${cfg.list10kReps} after 2 warm-up)`);
    for (const [target, srv] of [
      ['kplane', servers.kplane],
      ['bare-https', servers.bare],
    ] as const) {
      const pre = await srv.preload('bench-list10k', cfg.list10k, 'big-');
      if (target === 'kplane') console.log(`  preloaded ${cfg.list10k} through the store in the server process in ${fmt(pre.ms)} ms`);
      const client = new HttpClient(srv.started.url, servers.creds, 1);
      let bytes = 0;
      const round = (n: number): Promise<RoundResult> =>
        closedLoop({
          concurrency: 1,
          maxOps: n,
          maxMs: 120_000,
          op: async () => {
            const r = await client.send('GET', '/api/v1/namespaces/bench-list10k/configmaps', undefined, undefined, { discardBody: true });
            expectStatus(r, 200);
            bytes = r.bytes;
          },
        });
      await round(2);
      const r = await round(cfg.list10kReps);
      client.close();
      const row = rec.round('3-list10k', target, `list ${cfg.list10k}`, 1, r, `${(bytes / 1e6).toFixed(1)} MB/response`);
      if (target === 'kplane')
        rec.goal(
          `list of ${cfg.list10k}`,
          '≤ 250 ms',
          `p50 ${fmt(row.p50)} ms, p99 ${fmt(row.p99)} ms (${(bytes / 1e6).toFixed(1)} MB)`,
          (row.p99 ?? Infinity) <= 250,
        );
    }
    return rec.result();
  },
};
