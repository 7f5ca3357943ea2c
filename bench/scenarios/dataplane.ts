// [dataplane] The loopback cloud's data plane (issue 25): HTTP GETs through LB → NodePort → pod
// against the same GETs straight to the pod server, keep-alive, from this process to a child
// holding the backend and both proxy hops (bench/dataplane-server.ts).
// Goals: throughput through the LB ≥ 50 % of direct; p99 added latency ≤ 2 ms at 500 req/s.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { benchDir, fmt, type Scenario } from '../context.js';
import type { RoundResult } from '../load.js';

type Addr = { ip: string; port: number };

function get(agent: http.Agent, a: Addr): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: a.ip, port: a.port, path: '/', agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function closed(a: Addr, concurrency: number, ms: number): Promise<RoundResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const until = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await get(agent, a);
          latencies.push(performance.now() - t);
        } catch (e) {
          errors++;
          firstError ??= String(e);
        }
      }
    }),
  );
  agent.destroy();
  return { ops: latencies.length, errors, firstError, seconds: (performance.now() - start) / 1000, latencies };
}

/** Open loop: `rate` requests a second, latency from each request's scheduled start. */
async function open(a: Addr, rate: number, ms: number): Promise<RoundResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const total = Math.round((rate * ms) / 1000);
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const at = start + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      get(agent, a).then(
        () => void latencies.push(performance.now() - at),
        (e: unknown) => {
          errors++;
          firstError ??= String(e);
        },
      ),
    );
  }
  await Promise.all(inflight);
  agent.destroy();
  return { ops: latencies.length, errors, firstError, seconds: (performance.now() - start) / 1000, latencies };
}

export const dataplane: Scenario = {
  names: ['dataplane'],
  async run(ctx) {
    const { rec, quick } = ctx;
    const ms = quick ? 3000 : 10_000;
    console.log(`\n[dataplane] HTTP GET through LB → NodePort → pod vs straight to the pod (keep-alive; ${ms / 1000} s rounds)`);
    const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, 'dataplane-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout });
        rl.once('line', resolve);
        child.once('exit', (code) => reject(new Error(`dataplane server exited with ${code}`)));
      });
      const addrs = JSON.parse(line) as { pod: Addr; lb: Addr };
      // Warm-up, then the rounds.
      await closed(addrs.pod, 4, 300);
      await closed(addrs.lb, 4, 300);
      const direct = rec.round('dataplane', 'direct', 'GET pod', 16, await closed(addrs.pod, 16, ms));
      const viaLB = rec.round('dataplane', 'LB→NodePort→pod', 'GET pod', 16, await closed(addrs.lb, 16, ms));
      const ratio = (viaLB.opsPerSec ?? 0) / (direct.opsPerSec ?? 1);
      rec.row({
        scenario: 'dataplane',
        target: 'LB/direct',
        op: 'GET pod',
        concurrency: '16',
        ratio,
        amount: ratio * 100,
        unit: '%',
        value: `${fmt(ratio * 100)}%`,
      });
      const d500 = rec.round('dataplane', 'direct', 'GET pod', '500/s', await open(addrs.pod, 500, ms));
      const l500 = rec.round('dataplane', 'LB→NodePort→pod', 'GET pod', '500/s', await open(addrs.lb, 500, ms));
      const added = (l500.p99 ?? Infinity) - (d500.p99 ?? 0);
      rec.goal('data plane throughput through the LB', '≥ 50%', `${fmt(ratio * 100)}% of direct`, ratio >= 0.5);
      rec.goal('p99 added latency at 500 req/s', '≤ 2 ms', `${fmt(added, 2)} ms (p99 ${fmt(l500.p99, 2)} vs ${fmt(d500.p99, 2)} ms direct)`, added <= 2);
    } finally {
      child.stdin.end();
      child.kill('SIGTERM');
    }
    return rec.result();
  },
};
