// What one request costs the server, counted rather than timed, so that it holds on a loaded
// machine: promises made and heap bytes allocated per create, update and get of a 1 KiB ConfigMap.
//   node --import tsx bench/request-cost.ts [--tree DIR] [--n 200] [--reps 3]
// --tree runs the control plane of another checkout (e.g. `git archive deb126d | tar -x -C DIR`
// with node_modules linked): both sides then use this file's client and counting.
//
// The server runs in a child process (its src/index.ts: createControlPlane on SQLite), which counts
// between 'begin' and 'end' only: promises through an async hook (a run of its own, as the hook
// itself allocates), heap bytes as heapUsed's growth with a young generation large enough that no
// GC runs in the window (the child reports the GCs seen; a window with one is not a figure).
// Requests come one at a time over one HTTP/2 connection, after a warm-up of as many; each figure
// is the median of --reps windows of --n requests. Background work (controllers, leases) in the
// window is counted too: it is the same for both sides and small beside the requests.
import { createHook } from 'node:async_hooks';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TOKEN = 'request-cost-token';

interface Window {
  readonly promises: number;
  readonly heapBytes: number;
  readonly gcs: number;
  readonly cpuUs: number;
}

type Mode = 'promises' | 'bytes';

/** The child: a control plane of `tree`, measuring itself on request of the parent. */
async function serve(tree: string, mode: Mode): Promise<void> {
  const lib = (await import(pathToFileURL(join(tree, 'src', 'index.ts')).href)) as {
    createControlPlane(o: Record<string, unknown>): Promise<{ url: string; start(): Promise<void>; stop(): Promise<void> }>;
    sqlite(o: { dir: string }): unknown;
  };
  const dir = mkdtempSync(join(tmpdir(), 'kplane-request-cost-'));
  const cp = await lib.createControlPlane({
    storage: lib.sqlite({ dir: join(dir, 'db') }),
    dataDir: dir,
    port: 0,
    tokens: new Map([[TOKEN, { name: 'bench', groups: ['system:masters'] }]]),
    log: () => undefined,
  });
  await cp.start();
  let counting = false;
  let promises = 0;
  if (mode === 'promises')
    createHook({
      init(_id, type) {
        if (counting && type === 'PROMISE') promises++;
      },
    }).enable();
  let gcs = 0;
  new PerformanceObserver((l) => (gcs += l.getEntries().length)).observe({ entryTypes: ['gc'] });
  let heap0 = 0;
  let cpu0 = process.cpuUsage();
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (m: string) => {
    if (m === 'begin') {
      gc?.();
      // GC entries are delivered later: the window starts once the forced GC's have been counted.
      setTimeout(() => {
        gcs = 0;
        promises = 0;
        heap0 = process.memoryUsage().heapUsed;
        cpu0 = process.cpuUsage();
        counting = true;
        process.send!('begun');
      }, 100);
    } else if (m === 'end') {
      counting = false;
      const heapBytes = process.memoryUsage().heapUsed - heap0;
      const cpu = process.cpuUsage(cpu0);
      const w = { promises, heapBytes, cpuUs: cpu.user + cpu.system };
      setTimeout(() => process.send!({ ...w, gcs } satisfies Window), 100);
    } else if (m === 'exit') void cp.stop().then(() => process.exit(0));
  });
  process.send!({ url: cp.url });
}

function configMap(name: string, tag: string): Buffer {
  const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { seq: tag, payload: '' } };
  o.data.payload = 'x'.repeat(Math.max(0, 1024 - Buffer.byteLength(JSON.stringify(o))));
  return Buffer.from(JSON.stringify(o));
}

function ask<T>(child: ChildProcess, m: string, accept: (r: unknown) => boolean = () => true): Promise<T> {
  return new Promise((ok) => {
    const on = (r: unknown): void => {
      if (!accept(r)) return;
      child.off('message', on);
      ok(r as T);
    };
    child.on('message', on);
    child.send(m);
  });
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function measure(tree: string, mode: Mode, n: number, reps: number): Promise<Record<string, { perRequest: number; gcs: number; cpuUs: number }>> {
  const child = fork(fileURLToPath(import.meta.url), ['--child', tree, mode], {
    execArgv: ['--import', 'tsx', '--expose-gc', '--max-semi-space-size=128', '--min-semi-space-size=128', '--conditions=kplane-source'],
    cwd: tree,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { url } = await new Promise<{ url: string }>((ok, fail) => {
    child.once('message', (m) => ok(m as { url: string }));
    child.once('exit', (code) => fail(new Error(`the server of ${tree} exited (${code}) before it was ready`)));
  });
  const session = connect(url, { rejectUnauthorized: false });
  const request = (method: string, path: string, body?: Buffer): Promise<number> =>
    new Promise((ok, fail) => {
      const s = session.request({
        ':method': method,
        ':path': path,
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json',
      });
      let status = 0;
      s.on('response', (h) => (status = Number(h[':status'])));
      s.on('data', () => undefined);
      s.on('close', () => ok(status));
      s.on('error', fail);
      s.end(body);
    });
  const path = '/api/v1/namespaces/default/configmaps';
  const total = n * reps;
  const ops: Record<string, { call: (i: number) => Promise<number>; ok: number }> = {
    create: { call: (i) => request('POST', path, configMap(`cm-${i}`, String(i))), ok: 201 },
    update: { call: (i) => request('PUT', `${path}/cm-${i % total}`, configMap(`cm-${i % total}`, `u${i}`)), ok: 200 },
    get: { call: (i) => request('GET', `${path}/cm-${i % total}`), ok: 200 },
  };
  const out: Record<string, { perRequest: number; gcs: number; cpuUs: number }> = {};
  try {
    for (const [op, { call, ok }] of Object.entries(ops)) {
      // Warm-up: creates of other names; updates and gets of the objects the measured creates made.
      for (let i = 0; i < n; i++) await call(total * 10 + i);
      const windows: Window[] = [];
      for (let rep = 0; rep < reps; rep++) {
        await ask(child, 'begin', (r) => r === 'begun');
        for (let i = 0; i < n; i++) {
          const status = await call(rep * n + i);
          if (status !== ok) throw new Error(`${op} ${rep * n + i}: HTTP ${status}`);
        }
        windows.push(await ask<Window>(child, 'end'));
      }
      out[op] = {
        perRequest: median(windows.map((w) => (mode === 'promises' ? w.promises : w.heapBytes))) / n,
        gcs: Math.max(...windows.map((w) => w.gcs)),
        cpuUs: median(windows.map((w) => w.cpuUs)) / n,
      };
    }
  } finally {
    session.close();
    await new Promise((ok) => {
      child.once('exit', ok);
      child.send('exit');
    });
  }
  return out;
}

async function main(argv: readonly string[]): Promise<void> {
  let tree = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  let n = 200;
  let reps = 3;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--tree') tree = resolve(argv[++i] ?? '');
    else if (a === '--n') n = Number(argv[++i]);
    else if (a === '--reps') reps = Number(argv[++i]);
    else throw new Error(`unknown argument ${a}; usage: bench/request-cost.ts [--tree DIR] [--n 200] [--reps 3]`);
  }
  if (!(Number.isInteger(n) && n > 0 && Number.isInteger(reps) && reps > 0)) throw new Error('--n and --reps must be positive integers');
  const promises = await measure(tree, 'promises', n, reps);
  const bytes = await measure(tree, 'bytes', n, reps);
  console.log(`request cost of ${tree} (${reps} × ${n} requests, medians)`);
  for (const op of Object.keys(promises)) {
    const b = bytes[op]!;
    const gcNote = b.gcs > 0 ? `  (GC in the window: heap figure not valid)` : '';
    console.log(
      `  ${op.padEnd(7)} ${promises[op]!.perRequest.toFixed(1).padStart(6)} promises  ${(b.perRequest / 1024).toFixed(1).padStart(6)} KiB  ${Math.round(b.cpuUs)} µs CPU${gcNote}`,
    );
  }
}

const args = process.argv.slice(2);
if (args[0] === '--child') {
  serve(args[1]!, args[2] as Mode).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
} else if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main(args).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`request-cost: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
