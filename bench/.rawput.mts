import { Etcd3 } from 'etcd3';
import { readFileSync } from 'node:fs';
import { startEtcd } from '../test/support/etcd.js';
const etcd = await startEtcd();
const pid = (etcd as unknown as { pid?: number }).pid;
const cpuOf = (p: number) => { const s = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(s[11]) + Number(s[12])) * 10; };
const c = new Etcd3({ hosts: [etcd.endpoint] });
const val = Buffer.alloc(1024, 'x');
async function round(ms: number, conc: number) {
  let n = 0, stop = false; const end = Date.now() + ms;
  await Promise.all(Array.from({ length: conc }, async (_, w) => { let i = 0; while (Date.now() < end) { await c.put(`/k/${w}/${i++}`).value(val); n++; } }));
  return n;
}
await round(2000, 64);
const { execSync } = await import("node:child_process"); const etcdPid = Number(execSync(`pgrep -f "etcd --name" | head -1`).toString().trim());
const u0 = process.cpuUsage(); const e0 = etcdPid ? cpuOf(etcdPid) : 0; const t0 = Date.now();
const n = await round(8000, 64);
const u = process.cpuUsage(u0); const e = etcdPid ? cpuOf(etcdPid) - e0 : 0; const wall = Date.now() - t0;
console.log(`${(n / (wall / 1000)).toFixed(0)} puts/s; client ${((u.user + u.system) / n).toFixed(0)} µs/put (${((u.user + u.system) / 1000 / wall * 100).toFixed(0)}% of a core); etcd ${(e * 1000 / n).toFixed(0)} µs/put (${(e / wall * 100).toFixed(0)}%)`);
c.close(); await etcd.stop(); void pid;
