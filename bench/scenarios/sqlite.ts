// [2] Raw better-sqlite3 writes at kplane's durability (bench/sqlite-raw.ts in a child process):
// one transaction per write, and 16 and 64 writes per transaction. No goal: the storage baseline.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { benchDir, children, fmt, type Scenario } from '../context.js';

export const sqlite: Scenario = {
  names: ['sqlite'],
  async run(ctx) {
    const { cfg, rec } = ctx;
    console.log(`\n[2] Raw better-sqlite3 writes (WAL, synchronous=FULL, kv+log rows of 1 KiB, ${cfg.sqliteMs} ms per mode; same disk as kplane's data)`);
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(benchDir, 'sqlite-raw.ts'), `--ms=${cfg.sqliteMs}`, `--dir=${ctx.dataDir}`, '--batches=1,16,64'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.add(child);
      let s = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (s += d));
      child.once('exit', (code) => {
        children.delete(child);
        if (code === 0) resolve(s);
        else reject(new Error(`sqlite-raw exited ${code}`));
      });
    });
    for (const line of out.trim().split('\n')) {
      const r = JSON.parse(line) as { batch: number; ops: number; seconds: number; opsPerSec: number; commitP50: number; commitP99: number };
      const op = r.batch === 1 ? 'insert, 1 txn/write' : `insert, ${r.batch} writes/txn`;
      rec.row({
        scenario: '2-sqlite',
        target: 'better-sqlite3',
        op,
        concurrency: '-',
        opsPerSec: r.opsPerSec,
        p50: r.commitP50,
        p99: r.commitP99,
        n: r.ops,
        note: 'latency = per commit',
      });
      console.log(
        `  ${'better-sqlite3'.padEnd(14)} ${op.padEnd(22)} ${fmt(r.opsPerSec).padStart(7)} writes/s  commit p50 ${fmt(r.commitP50, 2)} ms  p99 ${fmt(r.commitP99, 2)} ms`,
      );
    }
    return rec.result();
  },
};
