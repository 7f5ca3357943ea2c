// [3c] `kplane backup` of a database of N ConfigMaps (1 KiB each) while the server takes a create
// load (issue 21, "Backup and restore"): how long the backup takes, and the creates' p50/p99 during
// it against a round of the same load without a backup. The backup is the CLI in a process of its
// own, as an operator runs it; its time is the one it prints (the copy, without node's start-up).
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ServerProc, benchDir, children, credsOf, fmt, type Scenario } from '../context.js';
import { HttpClient, expectStatus, type RoundResult } from '../load.js';

const CONCURRENCY = 16;

interface Sample {
  readonly startMs: number;
  readonly latencyMs: number;
}

/** Creates at CONCURRENCY until `until` resolves (and for at least `minMs`); each create's start and latency. */
async function createLoad(
  client: HttpClient,
  ns: string,
  prefix: string,
  until: Promise<unknown>,
  minMs: number,
): Promise<{ samples: Sample[]; errors: number; firstError?: string }> {
  const samples: Sample[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let done = false;
  const minimum = new Promise((ok) => setTimeout(ok, minMs));
  void Promise.all([until, minimum]).finally(() => (done = true));
  let next = 0;
  const body = (name: string): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: 'x'.repeat(1024) } });
  const worker = async (): Promise<void> => {
    while (!done) {
      const startMs = performance.now();
      try {
        const r = await client.send('POST', `/api/v1/namespaces/${ns}/configmaps`, body(`${prefix}${next++}`));
        expectStatus(r, 201);
        samples.push({ startMs, latencyMs: performance.now() - startMs });
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { samples, errors, ...(firstError ? { firstError } : {}) };
}

/** The creates that started within [fromMs, toMs], as a round. */
function window(load: { samples: Sample[]; errors: number; firstError?: string }, fromMs: number, toMs: number): RoundResult {
  const latencies = load.samples.filter((x) => x.startMs >= fromMs && x.startMs <= toMs).map((x) => x.latencyMs);
  return {
    ops: latencies.length,
    errors: load.errors,
    seconds: Math.max(1e-3, (toMs - fromMs) / 1000),
    latencies,
    ...(load.firstError ? { firstError: load.firstError } : {}),
  };
}

/** Runs `kplane backup`; resolves with what it printed. */
function runBackup(dataDir: string, out: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(benchDir, '..', 'src', 'cli', 'main.ts'), 'backup', '--data-dir', dataDir, '--force', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('exit', (code) => {
      children.delete(child);
      if (code === 0) resolve(stdout);
      else reject(new Error(`kplane backup exited ${code}: ${stderr}`));
    });
  });
}

export const backup: Scenario = {
  names: ['backup'],
  async run(ctx) {
    const { cfg, rec, dataDir, quick } = ctx;
    const objects = quick ? 5_000 : 50_000;
    const roundMs = quick ? 2_000 : 5_000;
    console.log(`\n[3c] kplane backup of ${objects} ConfigMaps (1 KiB) during a create load (c=${CONCURRENCY}), against the same load without a backup`);
    const storageDir = join(dataDir, 'backup-db');
    const srv = await ServerProc.start('kplane-sqlite', { dataDir, storageDir });
    try {
      const pre = await srv.preload('bench-backup', objects, 'obj-');
      console.log(`  preloaded ${objects} in ${fmt(pre.ms)} ms`);
      await srv.ensureNamespace('bench-backup-load');
      const client = new HttpClient(srv.started.url, credsOf(srv), CONCURRENCY);
      await createLoad(client, 'bench-backup-load', 'warm-', Promise.resolve(), cfg.warmMs);
      const t0 = performance.now();
      const quiet = await createLoad(client, 'bench-backup-load', 'quiet-', Promise.resolve(), roundMs);
      rec.round('3c-backup', 'kplane', 'create, no backup running', CONCURRENCY, window(quiet, t0, performance.now()));
      // The copy's window: from its partial output's appearance to the CLI's exit (node's start-up
      // before it, which a loaded machine makes long, is not the backup's cost).
      const out = join(dataDir, 'bench-backup-out.db');
      let copyStart: number | undefined;
      const watcher = setInterval(() => {
        if (copyStart === undefined && readdirSync(dataDir).some((f) => f.startsWith('.bench-backup-out.db.partial-'))) copyStart = performance.now();
      }, 5);
      const printed = runBackup(storageDir, out);
      const finished = printed.then(() => performance.now());
      const during = await createLoad(client, 'bench-backup-load', 'during-', printed, 0);
      clearInterval(watcher);
      const line = await printed;
      const copyEnd = await finished;
      client.close();
      const m = /: (\d+) keys at revision \d+, ([\d.]+) MiB in ([\d.]+) s/.exec(line);
      const keys = Number(m?.[1] ?? NaN);
      const copySeconds = Number(m?.[3] ?? NaN);
      const inCopy = window(during, copyStart ?? copyEnd, copyEnd);
      rec.round('3c-backup', 'kplane', 'create, during a backup', CONCURRENCY, inCopy, copyStart === undefined ? 'the copy was too quick to see' : undefined);
      rec.row({
        scenario: '3c-backup',
        target: 'kplane',
        op: `backup of ${objects} ConfigMaps`,
        concurrency: '-',
        value: `${fmt(copySeconds * 1000)} ms`,
        note: `${keys} keys, ${m?.[2] ?? '?'} MiB; as the CLI prints it (the copy and its check, without node's start-up)`,
      });
      console.log(`  backup: ${keys} keys, ${m?.[2]} MiB in ${copySeconds} s; ${inCopy.ops} creates acknowledged meanwhile`);
      await rm(out, { force: true });
    } finally {
      await srv.stop();
    }
    return rec.result();
  },
};
