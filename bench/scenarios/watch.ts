// [4] Watch delivery: HTTP/2 watch streams on one namespace, updates of one ConfigMap sent one at a
// time; latency from the PUT's answer (and from its send) to each watcher's receipt. Goal: p99 from
// ack ≤ 100 ms with no event missing.
import { configMap, stats } from '../common.js';
import { fmt, sharedOf, type Scenario } from '../context.js';
import { HttpClient, Watchers, expectStatus } from '../load.js';

export const watch: Scenario = {
  names: ['watch'],
  shared: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const { kplane, creds } = sharedOf(ctx);
    console.log(
      `\n[4] Watch delivery: ${cfg.watchers} HTTP/2 watch streams over ${cfg.watchSessions} sessions on one namespace; ${cfg.watchEvents} updates, one at a time`,
    );
    await kplane.ensureNamespace('bench-watch');
    const client = new HttpClient(kplane.started.url, creds, 1);
    const created = await client.send('POST', '/api/v1/namespaces/bench-watch/configmaps', JSON.stringify(configMap('watched', 'bench-watch')));
    expectStatus(created, 201);
    const rv0 = (JSON.parse(created.body.toString('utf8')) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const receipts = new Map<number, number[]>();
    let waiting: { rv: number; done: () => void } | undefined;
    const watchers = new Watchers(kplane.started.url, creds);
    const t0 = performance.now();
    await watchers.open({
      count: cfg.watchers,
      sessions: cfg.watchSessions,
      path: `/api/v1/namespaces/bench-watch/configmaps?watch=true&resourceVersion=${rv0}&timeoutSeconds=3600`,
      onEvent: (_w, rv, at) => {
        let list = receipts.get(rv);
        if (!list) receipts.set(rv, (list = []));
        list.push(at);
        if (waiting && waiting.rv === rv && list.length >= cfg.watchers) waiting.done();
      },
    });
    const write = async (seq: number): Promise<{ sent: number; acked: number; rv: number; complete: boolean }> => {
      const sent = performance.now();
      const r = await client.send('PUT', '/api/v1/namespaces/bench-watch/configmaps/watched', JSON.stringify(configMap('watched', 'bench-watch', `e${seq}`)));
      const acked = performance.now();
      expectStatus(r, 200);
      const rv = Number((JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
      const complete = await new Promise<boolean>((resolve) => {
        if ((receipts.get(rv)?.length ?? 0) >= cfg.watchers) return resolve(true);
        const timer = setTimeout(() => resolve(false), 30_000);
        waiting = { rv, done: () => (clearTimeout(timer), resolve(true)) };
      });
      waiting = undefined;
      return { sent, acked, rv, complete };
    };
    // Warm-up: the first event also proves every stream is registered.
    const first = await write(0);
    console.log(`  ${cfg.watchers} streams opened and first event delivered to ${receipts.get(first.rv)?.length ?? 0} in ${fmt(performance.now() - t0)} ms`);
    const fromAck: number[] = [];
    const fromSend: number[] = [];
    let early = 0;
    let missing = 0;
    for (let e = 1; e <= cfg.watchEvents; e++) {
      const w = await write(e);
      const got = receipts.get(w.rv) ?? [];
      missing += Math.max(0, cfg.watchers - got.length);
      for (const at of got) {
        if (at < w.acked) early++;
        fromAck.push(Math.max(0, at - w.acked));
        fromSend.push(at - w.sent);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    watchers.close();
    client.close();
    const a = stats(fromAck);
    const s = stats(fromSend);
    const note = `${cfg.watchers} watchers × ${cfg.watchEvents} events; ${early} receipts before the ack (counted as 0); missing ${missing}; stream errors ${watchers.failures}`;
    rec.row({
      scenario: '4-watch',
      target: 'kplane',
      op: 'ack → receipt',
      concurrency: String(cfg.watchers),
      p50: a.p50,
      p99: a.p99,
      max: a.max,
      n: a.n,
      note,
    });
    rec.row({ scenario: '4-watch', target: 'kplane', op: 'send → receipt', concurrency: String(cfg.watchers), p50: s.p50, p99: s.p99, max: s.max, n: s.n });
    console.log(`  ack → receipt   p50 ${fmt(a.p50, 2)} ms  p99 ${fmt(a.p99, 2)} ms  max ${fmt(a.max, 2)} ms  (n=${a.n})`);
    console.log(`  send → receipt  p50 ${fmt(s.p50, 2)} ms  p99 ${fmt(s.p99, 2)} ms  max ${fmt(s.max, 2)} ms`);
    console.log(`  ${note}`);
    rec.goal(`watch p99 (${cfg.watchers} watchers)`, '≤ 100 ms', `${fmt(a.p99, 2)} ms from ack (${fmt(s.p99, 2)} ms from send)`, a.p99 <= 100 && missing === 0);
    return rec.result();
  },
};
