// [3b] A streamed list of 10,000 ConfigMaps (issue 21): time to last byte for a client that reads,
// and what a list in flight to a client that has stopped reading costs the server. Goals: time to
// last byte no worse than the last recorded whole-buffer list (scenario 3's p50 in bench/results),
// and per in-flight list ≤ 1 MB of server memory beyond its buffers (the chunks it holds, counted
// as ArrayBuffers).
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpsRequest, Agent } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServerProc, credsOf, fmt, type Scenario } from '../context.js';
import { HttpClient, closedLoop, expectStatus } from '../load.js';

const STALLED = 8;
const MB = 1024 * 1024;

/** p50 of the whole-buffer list of scenario 3 in the newest recorded result, for comparison. */
function recordedList10kP50(): { p50: number; file: string } | undefined {
  const dir = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'results');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .reverse();
  for (const file of files) {
    const rows = (JSON.parse(readFileSync(join(dir, file), 'utf8')) as { rows?: { scenario?: string; target?: string; p50?: number }[] }).rows ?? [];
    const row = rows.find((r) => r.scenario === '3-list10k' && r.target === 'kplane' && typeof r.p50 === 'number');
    if (row) return { p50: row.p50!, file };
  }
  return undefined;
}

export const liststream: Scenario = {
  names: ['liststream'],
  async run(ctx) {
    const { cfg, rec, dataDir, cpuProfDir } = ctx;
    console.log(`\n[3b] Streamed list of ${cfg.list10k} ConfigMaps: time to last byte, and memory per list in flight to ${STALLED} stalled readers`);
    const srv = await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'liststream-db'), ...(cpuProfDir ? { cpuProfDir } : {}) });
    try {
      await srv.preload('bench-liststream', cfg.list10k, 'big-');
      const creds = credsOf(srv);
      const path = '/api/v1/namespaces/bench-liststream/configmaps';
      const client = new HttpClient(srv.started.url, creds, 1);
      let bytes = 0;
      const round = (n: number) =>
        closedLoop({
          concurrency: 1,
          maxOps: n,
          maxMs: 120_000,
          op: async () => {
            const r = await client.send('GET', path, undefined, undefined, { discardBody: true });
            expectStatus(r, 200);
            bytes = r.bytes;
          },
        });
      await round(2);
      const r = await round(cfg.list10kReps);
      client.close();
      const row = rec.round('3b-liststream', 'kplane', `list ${cfg.list10k}, to last byte`, 1, r, `${(bytes / 1e6).toFixed(1)} MB/response`);
      const before = recordedList10kP50();
      if (before)
        rec.goal(
          `time to last byte, list of ${cfg.list10k}`,
          `≤ ${fmt(before.p50)} ms (p50 of scenario 3 in ${before.file}) + 10%`,
          `p50 ${fmt(row.p50)} ms`,
          (row.p50 ?? Infinity) <= before.p50 * 1.1,
        );

      // Clients that read the headers and stop: the server holds what is in flight for each.
      const idle = await srv.memory();
      const base = new URL(srv.started.url);
      const agents: Agent[] = [];
      const stalled = await Promise.all(
        Array.from({ length: STALLED }, () => {
          const agent = new Agent({ keepAlive: false, ca: creds.ca, cert: creds.cert, key: creds.key });
          agents.push(agent);
          const req = httpsRequest({ agent, host: base.hostname, port: base.port, path, headers: { accept: 'application/json' } });
          req.on('error', () => {});
          req.end();
          return new Promise<typeof req>((resolve) =>
            req.on('response', (res) => {
              res.pause();
              resolve(req);
            }),
          );
        }),
      );
      await new Promise((ok) => setTimeout(ok, 1_000));
      const held = await srv.memory();
      for (const req of stalled) req.destroy();
      for (const a of agents) a.destroy();
      const perList = (held.rss - idle.rss) / STALLED;
      const buffers = (held.arrayBuffers - idle.arrayBuffers) / STALLED;
      const beyond = perList - buffers;
      rec.row({
        scenario: '3b-liststream',
        target: 'kplane',
        op: `memory per list in flight (${STALLED} stalled)`,
        concurrency: String(STALLED),
        value: `${(perList / MB).toFixed(2)} MiB RSS`,
        note: `of which buffers (ArrayBuffers) ${(buffers / MB).toFixed(2)} MiB; RSS idle ${(idle.rss / MB).toFixed(0)} MiB, with ${STALLED} stalled ${(held.rss / MB).toFixed(0)} MiB`,
      });
      console.log(
        `  ${STALLED} stalled readers: RSS ${(idle.rss / MB).toFixed(0)} → ${(held.rss / MB).toFixed(0)} MiB, ${(perList / MB).toFixed(2)} MiB per list (buffers ${(buffers / MB).toFixed(2)} MiB)`,
      );
      rec.goal('server memory per list in flight, beyond its buffers', '≤ 1 MB', `${(beyond / 1e6).toFixed(2)} MB`, beyond <= 1e6);
    } finally {
      await srv.stop();
    }
    return rec.result();
  },
};
