// Creates offered at a fixed rate (default 200/s) to one kplane (SQLite) server, from this process:
// p50/p99 latency, the server's CPU per create, event-loop delay and GC pauses. For looking at the
// tail of the `webhook` scenario's paced rounds without a webhook (issue 23).
//   node --import tsx bench/paced-probe.ts [--rate 200] [--seconds 10] [--cpu-prof DIR]
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configMap, describePauses, procCpuMs } from './common.js';
import { ServerProc, credsOf } from './context.js';
import { HttpClient, expectStatus, openLoop } from './load.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const rate = Number(arg('rate', '200'));
const seconds = Number(arg('seconds', '10'));
const prof = arg('cpu-prof', '');
const dataDir = await mkdtemp(join(tmpdir(), 'kplane-paced-'));
const srv = await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'db'), ...(prof ? { cpuProfDir: prof } : {}) });
const NS = 'paced';
await srv.ensureNamespace(NS);
const client = new HttpClient(srv.started.url, credsOf(srv), 64);
async function paced(ms: number, tag: string): Promise<number[]> {
  const r = await openLoop({
    rate,
    ms,
    op: async (i) => expectStatus(await client.send('POST', `/api/v1/namespaces/${NS}/configmaps`, JSON.stringify(configMap(`cm-${tag}-${i}`, NS))), 201),
  });
  if (r.errors > 0) throw new Error(`${r.errors} creates failed: ${r.firstError ?? ''}`);
  return r.latencies.sort((a, b) => a - b);
}
/** CPU ms (user, system) of each thread of `pid`, by thread id and name. */
function threads(pid: number): Map<string, { name: string; user: number; sys: number }> {
  const out = new Map<string, { name: string; user: number; sys: number }>();
  const tick = 10; // USER_HZ
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name: readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), user: Number(f[11]) * tick, sys: Number(f[12]) * tick });
    } catch {
      // gone
    }
  }
  return out;
}
/** Cumulative counts of kplane_storage_request_duration_seconds{operation="create"} by bucket. */
async function storageCreateBuckets(): Promise<Map<string, number>> {
  const r = await client.send('GET', '/metrics');
  const out = new Map<string, number>();
  for (const line of r.body.toString().split('\n')) {
    if (!line.startsWith('kplane_storage_request_duration_seconds_bucket{') || !line.includes('operation="create"')) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1] ?? '';
    out.set(le, (out.get(le) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}
await paced(4000, 'w');
const b0 = await storageCreateBuckets();
const t0 = threads(srv.started.pid);
const c0 = procCpuMs(srv.started.pid);
const { result: lat, pauses } = await srv.withPauses(() => paced(seconds * 1000, 'm'));
const cpu = procCpuMs(srv.started.pid) - c0;
const q = (p: number): string => (lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? NaN).toFixed(2);
console.log(
  `${rate}/s n=${lat.length} p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(0.9999)} ms; server CPU ${((cpu * 1000) / lat.length).toFixed(0)} µs/create`,
);
console.log(`  ${describePauses(pauses)}`);
const b1 = await storageCreateBuckets();
console.log(`  storage creates by bucket (le: count): ${[...b1].map(([le, n]) => `${le}: ${n - (b0.get(le) ?? 0)}`).join(', ')}`);
for (const [tid, t] of threads(srv.started.pid)) {
  const b = t0.get(tid) ?? { user: 0, sys: 0 };
  const u = t.user - b.user;
  const sy = t.sys - b.sys;
  if (u + sy >= 20)
    console.log(`  thread ${tid} ${t.name}: user ${((u * 1000) / lat.length).toFixed(0)} µs, system ${((sy * 1000) / lat.length).toFixed(0)} µs per create`);
}
client.close();
await srv.stop();
await rm(dataDir, { recursive: true, force: true });
