// [1b] Open loop from h2load (C): creates offered at a fixed rate over one HTTP/2 connection, then
// gets of 1,000 of the created objects at the same rate, kplane and the bare baseline; the server's
// event-loop delay and GC pauses printed per round. Goals: p99 create ≤ 25 ms and p99 get ≤ 5 ms at
// 1,000/s offered.
import { BENCH_TOKEN, configMap, describePauses, type Pauses } from '../common.js';
import { fmt, h2loadCpuMs, sharedOf, withCpu, type Scenario, type ServerProc } from '../context.js';
import { h2load, type H2LoadResult } from '../h2load.js';
import { HttpClient, type RoundResult } from '../load.js';

export const openloop: Scenario = {
  names: ['openloop'],
  shared: true,
  tools: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const servers = sharedOf(ctx);
    console.log(
      `\n[1b] Open loop from h2load (C): creates, then gets of 1,000 of them, offered at ${cfg.openRate}/s over one HTTP/2 connection ` +
        `(evenly spaced, up to 256 in flight), latency from each request's send; warm-up ${cfg.openWarmMs} ms, measured ${cfg.openMs} ms`,
    );
    const headers = [`authorization: Bearer ${BENCH_TOKEN}`, 'content-type: application/json', 'accept: application/json'];
    const round = (
      srv: ServerProc,
      r: { path: string; body?: string; uris?: string[] },
    ): Promise<{ result: { result: H2LoadResult; cpu: string }; pauses: Pauses }> =>
      srv.withPauses(() =>
        withCpu(
          srv.started.pid,
          () =>
            h2load({
              url: `${srv.started.url}${r.path}`,
              rate: cfg.openRate,
              seconds: cfg.openMs / 1000,
              warmSeconds: cfg.openWarmMs / 1000,
              headers,
              ...(r.body !== undefined ? { body: r.body } : {}),
              ...(r.uris ? { uris: r.uris } : {}),
            }),
          h2loadCpuMs,
        ),
      );
    const asRound = (h: H2LoadResult): RoundResult => ({
      ops: h.answered,
      errors: h.errors,
      seconds: cfg.openMs / 1000,
      latencies: h.latency.samples,
      ...(h.errors ? { firstError: `statuses ${JSON.stringify(h.statuses)}` } : {}),
    });
    for (const [target, srv] of [
      ['kplane', servers.kplane],
      ['bare-https', servers.bare],
    ] as const) {
      const path = '/api/v1/namespaces/bench-open/configmaps';
      const body = JSON.stringify(configMap('', 'bench-open')).replace('"name":""', '"generateName":"cm-open-"');
      const {
        result: { result: c, cpu },
        pauses,
      } = await round(srv, { path, body });
      console.log(`    ${target} create round: ${describePauses(pauses)}`);
      const row = rec.round('1b-openloop', target, 'create', `${cfg.openRate}/s`, asRound(c), `h2load, 1 HTTP/2 connection; ${cpu}`);
      if (target === 'kplane')
        rec.goal(
          `p99 create at ${cfg.openRate} creates/s offered`,
          '≤ 25 ms',
          `${fmt(row.p99, 2)} ms (answered ${fmt(c.answered / (cfg.openMs / 1000))}/s)`,
          (row.p99 ?? Infinity) <= 25 && c.errors === 0,
        );
      // Gets at the same offered rate, of objects the round created (their names come from a list).
      const client = new HttpClient(srv.started.url, servers.creds, 1);
      const list = JSON.parse((await client.send('GET', `${path}?limit=1000`)).body.toString()) as { items: { metadata: { name: string } }[] };
      client.close();
      if (list.items.length === 0) throw new Error(`${target}: the create round left no configmaps to get`);
      const uris = list.items.map((o) => `${path}/${o.metadata.name}`);
      const {
        result: { result: g, cpu: gcpu },
        pauses: gp,
      } = await round(srv, { path, uris });
      console.log(`    ${target} get round: ${describePauses(gp)}`);
      const grow = rec.round(
        '1b-openloop',
        target,
        'get',
        `${cfg.openRate}/s`,
        asRound(g),
        `h2load, 1 HTTP/2 connection, ${uris.length} objects in turn; ${gcpu}`,
      );
      if (target === 'kplane')
        rec.goal(
          `p99 get at ${cfg.openRate} gets/s offered`,
          '≤ 5 ms',
          `${fmt(grow.p99, 2)} ms (answered ${fmt(g.answered / (cfg.openMs / 1000))}/s)`,
          (grow.p99 ?? Infinity) <= 5 && g.errors === 0,
        );
    }
    return rec.result();
  },
};
