// Reads a KPLANE_BENCH_WEBHOOK_TRACE directory (bench/webhook-trace.ts, bench/scenarios/extending.ts)
// and tells, for the paced rounds of the `webhook` scenario, where a create waited: median and the
// tail (creates at or above the round's p99), split into the generator's lag behind its schedule,
// kplane before the call, the call's wait for a connection, the way to the webhook, its handling,
// the way back, kplane after the call; and which processes were in a GC pause meanwhile.
//   node --import tsx bench/webhook-trace-report.ts <dir>
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

type Rec = Record<string, number | string | undefined> & { t: string };
const dir = process.argv[2];
if (!dir) {
  console.error('usage: webhook-trace-report.ts <trace dir>');
  process.exit(2);
}
const read = (f: string): Rec[] =>
  readFileSync(join(dir, f), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
const loadgen = read('loadgen.jsonl');
const byPid = new Map<number, Rec[]>();
let webhookPid = 0;
for (const f of files) {
  const m = /^(kplane|webhook)-(\d+)\.jsonl$/.exec(f);
  if (!m) continue;
  byPid.set(Number(m[2]), read(f));
  if (m[1] === 'webhook') webhookPid = Number(m[2]);
}
const num = (v: unknown): number => (typeof v === 'number' ? v : NaN);
const pct = (xs: number[], p: number): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
};
const mean = (xs: number[]): number => {
  const v = xs.filter((x) => !Number.isNaN(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
};
const f2 = (x: number): string => (Number.isNaN(x) ? '-' : x.toFixed(2));

/** GC pause ms of `recs` overlapping [a, b]. */
const gcIn = (recs: Rec[] | undefined, a: number, b: number): { n: number; ms: number } => {
  let n = 0;
  let ms = 0;
  for (const r of recs ?? []) {
    if (r.t !== 'gc') continue;
    const s = num(r.start);
    const e = s + num(r.ms);
    if (e < a || s > b) continue;
    n++;
    ms += Math.min(e, b) - Math.max(s, a);
  }
  return { n, ms };
};

for (const round of loadgen.filter((r) => r.t === 'round')) {
  const target = String(round.target);
  const pid = num(round.pid);
  const creates = loadgen.filter((r) => r.t === 'create' && String(r.name).startsWith(`cm-${String(round.tag)}-`));
  if (creates.length === 0) continue;
  const kplane = byPid.get(pid);
  const hook = byPid.get(webhookPid);
  const calls = new Map<string, Rec>();
  for (const r of kplane ?? []) if (r.t === 'call' && typeof r.name === 'string') calls.set(r.name, r);
  const served = (hook ?? []).filter((r) => r.t === 'served');
  const lat = creates.map((c) => num(c.end) - num(c.send));
  const p99 = pct(lat, 0.99);
  const t0 = Math.min(...creates.map((c) => num(c.send)));
  const t1 = Math.max(...creates.map((c) => num(c.end)));
  const rows = creates.map((c) => {
    const send = num(c.send);
    const end = num(c.end);
    const call = calls.get(String(c.name));
    // The webhook's handling of this call: the request served on the call's connection meanwhile.
    const s = call
      ? served.find((r) => num(r.remote) === num(call.local) && num(r.start) >= num(call.sent) - 0.5 && num(r.start) <= num(call.headers))
      : undefined;
    return {
      lat: end - send,
      lag: send - num(c.due),
      pre: call ? num(call.created) - send : NaN,
      queue: call ? num(call.sent) - num(call.created) : NaN,
      toHook: s && call ? num(s.start) - num(call.sent) : NaN,
      handle: s ? num(s.end) - num(s.start) : NaN,
      back: s && call ? num(call.headers) - num(s.end) : NaN,
      body: call ? num(call.done) - num(call.headers) : NaN,
      post: call ? end - num(call.done) : NaN,
      gcK: gcIn(kplane, send, end),
      gcW: gcIn(hook, send, end),
    };
  });
  const tail = rows.filter((r) => r.lat >= p99);
  console.log(`\n## ${target} (kplane pid ${pid}): ${creates.length} creates, p50 ${f2(pct(lat, 0.5))} ms, p99 ${f2(p99)} ms, max ${f2(pct(lat, 1))} ms`);
  const cols = ['lat', 'lag', 'pre', 'queue', 'toHook', 'handle', 'back', 'body', 'post'] as const;
  console.log(`| set | ${cols.join(' | ')} | kplane GC ms | webhook GC ms |`);
  console.log(`|---|${cols.map(() => '---:').join('|')}|---:|---:|`);
  const line = (label: string, set: typeof rows, agg: (xs: number[]) => number): void =>
    console.log(
      `| ${label} | ${cols.map((k) => f2(agg(set.map((r) => r[k])))).join(' | ')} | ${f2(agg(set.map((r) => r.gcK.ms)))} | ${f2(agg(set.map((r) => r.gcW.ms)))} |`,
    );
  // The call itself, as kplane waited on it (created → answer read): the latency a create gains
  // from the webhook alone, without the storage and scheduling tail it shares with the none server.
  const waited = rows.map((r) => r.queue + r.toHook + r.handle + r.back + r.body).filter((x) => !Number.isNaN(x));
  if (waited.length > 0)
    console.log(
      `the call (created → answer read in kplane), ${waited.length} calls: p50 ${f2(pct(waited, 0.5))} ms, p99 ${f2(pct(waited, 0.99))} ms, max ${f2(pct(waited, 1))} ms`,
    );
  line('all, median', rows, (xs) => pct(xs, 0.5));
  line('all, mean', rows, mean);
  line(`tail (${tail.length}), mean`, tail, mean);
  for (const r of tail.sort((a, b) => b.lat - a.lat).slice(0, 8)) line('  one', [r], mean);
  const inRound = (recs: Rec[] | undefined, t: string): Rec[] => (recs ?? []).filter((r) => r.t === t && num(r.at) >= t0 && num(r.at) <= t1);
  const gcs = (recs: Rec[] | undefined): Rec[] => (recs ?? []).filter((r) => r.t === 'gc' && num(r.start) >= t0 && num(r.start) <= t1);
  const gcSummary = (recs: Rec[] | undefined): string => {
    const g = gcs(recs);
    const major = g.filter((r) => num(r.kind) === 4);
    return `${g.length} pauses, ${f2(g.reduce((a, r) => a + num(r.ms), 0))} ms total, max ${f2(Math.max(0, ...g.map((r) => num(r.ms))))} ms, ${major.length} major`;
  };
  console.log(
    `kplane GC in the round: ${gcSummary(kplane)}; loop delay max per second: ${inRound(kplane, 'loop')
      .map((r) => f2(num(r.max)))
      .join(' ')}`,
  );
  if (target !== 'none') {
    console.log(
      `webhook GC in the round: ${gcSummary(hook)}; loop delay max per second: ${inRound(hook, 'loop')
        .map((r) => f2(num(r.max)))
        .join(' ')}`,
    );
    console.log(
      `connections opened in the round: kplane→webhook ${inRound(kplane, 'connected').length}, seen by the webhook ${inRound(hook, 'newConnection').length}; call errors ${inRound(kplane, 'callError').length}`,
    );
    // The calls that went out on a connection opened for them (its first call), and their creates.
    const fresh = new Set(inRound(kplane, 'connected').map((r) => num(r.local)));
    const firstOn = new Set<number>();
    const onFresh = creates.filter((c) => {
      const call = calls.get(String(c.name));
      if (!call || !fresh.has(num(call.local)) || firstOn.has(num(call.local))) return false;
      firstOn.add(num(call.local));
      return true;
    });
    const freshRows = rows.filter((_, i) => onFresh.includes(creates[i]!));
    if (freshRows.length) line(`on a new connection (${freshRows.length}), mean`, freshRows, mean);
    console.log(`tail creates whose call went out on a new connection: ${tail.filter((r) => freshRows.includes(r)).length} of ${tail.length}`);
  }
  // Pacing: sends that left late or together (a burst is several creates within 1 ms).
  const sends = creates.map((c) => num(c.send)).sort((a, b) => a - b);
  let bursts = 0;
  for (let i = 1; i < sends.length; i++) if (sends[i]! - sends[i - 1]! < 1) bursts++;
  const lags = rows.map((r) => r.lag);
  console.log(
    `generator: lag behind schedule p50 ${f2(pct(lags, 0.5))} ms, p99 ${f2(pct(lags, 0.99))} ms, max ${f2(pct(lags, 1))}; sends < 1 ms after the previous: ${bursts}`,
  );
}
