// [7]–[9] Controllers: deleting a namespace of 10,000 ConfigMaps and 1,000 custom resources
// (nsdelete), garbage collection of 10,000 dependents and of a 3-level foreground chain (gc), and an
// idle controller-manager process with informers over 100,000 ConfigMaps (idlecm). Goals (at full
// scale only): ≤ 20 s, ≤ 20 s / 30 s, CPU < 1 % of a core.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { procCpuMs, rssMB } from '../common.js';
import { NODE_FLAGS } from '../../src/runtime/node-flags.js';
import { ServerProc, benchDir, children, withCpu, type Config, type Recorder, type Scenario } from '../context.js';

const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

interface DeleteAndWait {
  readonly ms: number;
  readonly done: boolean;
}

export const controllers: Scenario = {
  names: ['nsdelete', 'gc', 'idlecm'],
  async run(ctx) {
    const { cfg, rec, dataDir, cpuProfDir } = ctx;
    if (ctx.only.has('nsdelete')) await nsDelete(cfg, rec, dataDir, cpuProfDir);
    if (ctx.only.has('gc')) await gc(cfg, rec, dataDir, cpuProfDir);
    if (ctx.only.has('idlecm')) await idleCm(cfg, rec, dataDir);
    return rec.result();
  },
};

async function nsDelete(cfg: Config, rec: Recorder, dataDir: string, cpuProfDir: string | undefined): Promise<void> {
  const nCm = Math.round(10_000 * cfg.controllerScale);
  const nCr = Math.round(1_000 * cfg.controllerScale);
  console.log(`\n[7] Deleting a namespace holding ${nCm} ConfigMaps and ${nCr} custom resources (in-process controllers)`);
  const srv = await ServerProc.start('kplane-sqlite', {
    dataDir,
    storageDir: join(dataDir, 'nsdelete-db'),
    controllers: true,
    ...(cpuProfDir ? { cpuProfDir } : {}),
  });
  try {
    const widgets = await srv.rpc.call<{ group: string; version: string; resource: string }>('createCrd', { plural: 'widgets', kind: 'Widget' });
    const a = await srv.rpc.call<{ ms: number }>('preloadObjects', { gvr: CONFIGMAPS, namespace: 'bench-nsdelete', count: nCm, prefix: 'cm-' });
    const b = await srv.rpc.call<{ ms: number }>('preloadObjects', { gvr: widgets, namespace: 'bench-nsdelete', count: nCr, prefix: 'w-' });
    console.log(`  loaded in ${((a.ms + b.ms) / 1000).toFixed(1)} s through the store`);
    const { result: r, cpu } = await withCpu(srv.started.pid, () =>
      srv.rpc.call<DeleteAndWait>('deleteAndWait', {
        gvr: NAMESPACES,
        name: 'bench-nsdelete',
        until: { gvr: NAMESPACES, name: 'bench-nsdelete' },
        timeoutMs: 120_000,
      }),
    );
    console.log(`  namespace gone ${r.done ? 'after' : 'NOT within'} ${(r.ms / 1000).toFixed(2)} s (${cpu})`);
    rec.row({
      scenario: '7-nsdelete',
      target: 'kplane',
      op: `delete namespace (${nCm} cm + ${nCr} CRs)`,
      concurrency: '-',
      value: `${(r.ms / 1000).toFixed(2)} s`,
      note: cpu,
    });
    if (cfg.controllerScale >= 1)
      rec.goal(`namespace with ${nCm} ConfigMaps + ${nCr} CRs deleted`, '≤ 20 s', `${(r.ms / 1000).toFixed(1)} s`, r.done && r.ms <= 20_000);
  } finally {
    await srv.stop();
  }
}

async function gc(cfg: Config, rec: Recorder, dataDir: string, cpuProfDir: string | undefined): Promise<void> {
  const nDeps = Math.round(10_000 * cfg.controllerScale);
  const nLevel = Math.round(1_000 * cfg.controllerScale);
  console.log(`\n[8] Garbage collection: ${nDeps} dependents of one owner (background); foreground over 3 levels of ${nLevel}`);
  const srv = await ServerProc.start('kplane-sqlite', {
    dataDir,
    storageDir: join(dataDir, 'gc-db'),
    controllers: true,
    ...(cpuProfDir ? { cpuProfDir } : {}),
  });
  const owners = (kind: string, names: string[], uids: string[], block = false) => ({ apiVersion: 'v1', kind, names, uids, blockOwnerDeletion: block });
  try {
    // Background: one owner, nDeps dependents.
    const root = await srv.rpc.call<{ uids: string[] }>('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-gc',
      count: 1,
      prefix: 'owner-',
      returnUids: true,
    });
    await srv.rpc.call('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-gc',
      count: nDeps,
      prefix: 'dep-',
      labels: { set: 'bg' },
      owners: owners('ConfigMap', ['owner-0'], root.uids),
    });
    const { result: bg, cpu: bgCpu } = await withCpu(srv.started.pid, () =>
      srv.rpc.call<DeleteAndWait>('deleteAndWait', {
        gvr: CONFIGMAPS,
        namespace: 'bench-gc',
        name: 'owner-0',
        propagationPolicy: 'Background',
        until: { gvr: CONFIGMAPS, namespace: 'bench-gc', labelSelector: 'set=bg' },
        timeoutMs: 120_000,
      }),
    );
    console.log(`  background: ${nDeps} dependents gone ${bg.done ? 'after' : 'NOT within'} ${(bg.ms / 1000).toFixed(2)} s (${bgCpu})`);
    rec.row({
      scenario: '8-gc',
      target: 'kplane',
      op: `background, ${nDeps} dependents`,
      concurrency: '-',
      value: `${(bg.ms / 1000).toFixed(2)} s`,
      note: bgCpu,
    });
    if (cfg.controllerScale >= 1) rec.goal(`GC of ${nDeps} dependents (background)`, '≤ 20 s', `${(bg.ms / 1000).toFixed(1)} s`, bg.done && bg.ms <= 20_000);

    // Foreground: top → nLevel children → one grandchild each → one great-grandchild each, all blocking.
    const top = await srv.rpc.call<{ uids: string[] }>('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-fg',
      count: 1,
      prefix: 'top-',
      returnUids: true,
    });
    const l1 = await srv.rpc.call<{ uids: string[] }>('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-fg',
      count: nLevel,
      prefix: 'l1-',
      labels: { set: 'fg' },
      returnUids: true,
      owners: owners('ConfigMap', ['top-0'], top.uids, true),
    });
    const names = (p: string): string[] => Array.from({ length: nLevel }, (_, i) => `${p}${i}`);
    const l2 = await srv.rpc.call<{ uids: string[] }>('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-fg',
      count: nLevel,
      prefix: 'l2-',
      labels: { set: 'fg' },
      returnUids: true,
      owners: owners('ConfigMap', names('l1-'), l1.uids, true),
    });
    await srv.rpc.call('preloadObjects', {
      gvr: CONFIGMAPS,
      namespace: 'bench-fg',
      count: nLevel,
      prefix: 'l3-',
      labels: { set: 'fg' },
      owners: owners('ConfigMap', names('l2-'), l2.uids, true),
    });
    const { result: fg, cpu: fgCpu } = await withCpu(srv.started.pid, () =>
      srv.rpc.call<DeleteAndWait>('deleteAndWait', {
        gvr: CONFIGMAPS,
        namespace: 'bench-fg',
        name: 'top-0',
        propagationPolicy: 'Foreground',
        until: { gvr: CONFIGMAPS, namespace: 'bench-fg', name: 'top-0' },
        timeoutMs: 180_000,
      }),
    );
    console.log(`  foreground: 3 levels of ${nLevel}, owner gone ${fg.done ? 'after' : 'NOT within'} ${(fg.ms / 1000).toFixed(2)} s (${fgCpu})`);
    rec.row({
      scenario: '8-gc',
      target: 'kplane',
      op: `foreground, 3 levels of ${nLevel}`,
      concurrency: '-',
      value: `${(fg.ms / 1000).toFixed(2)} s`,
      note: fgCpu,
    });
    if (cfg.controllerScale >= 1) rec.goal(`GC foreground, 3 levels of ${nLevel}`, '≤ 30 s', `${(fg.ms / 1000).toFixed(1)} s`, fg.done && fg.ms <= 30_000);
  } finally {
    await srv.stop();
  }
}

async function idleCm(cfg: Config, rec: Recorder, dataDir: string): Promise<void> {
  const n = Math.round(100_000 * cfg.controllerScale);
  console.log(`\n[9] An idle kplane controller-manager (own process) with informers over ${n} ConfigMaps`);
  const srv = await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'idlecm-db') });
  let cm: ChildProcess | undefined;
  try {
    await srv.rpc.call('preloadObjects', { gvr: CONFIGMAPS, namespace: 'bench-idle', count: n, prefix: 'cm-' });
    const t0 = performance.now();
    const prof = process.env.KPLANE_BENCH_CM_PROF ? ['--cpu-prof', '--cpu-prof-dir', join(benchDir, 'profiles')] : [];
    cm = spawn(
      process.execPath,
      [
        ...prof,
        ...NODE_FLAGS,
        '--import',
        'tsx',
        join(benchDir, '..', 'src', 'cli', 'main.ts'),
        'controller-manager',
        '--kubeconfig',
        join(dataDir, 'admin.kubeconfig'),
        '--leader-elect=false',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.add(cm);
    const child = cm;
    // Synced: the namespace controller's cache and every garbage-collector monitor.
    await new Promise<void>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`controller-manager not synced in 180 s: ${err.slice(-2000)}`)), 180_000);
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        if (/caches synced/.test(err) && /proceeding to collect garbage/.test(err)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (c) => reject(new Error(`controller-manager exited (${c}): ${err.slice(-2000)}`)));
    });
    const syncMs = performance.now() - t0;
    // CPU of the controller-manager and of the server over one idle window, in % of a core.
    const idleWindow = async (): Promise<{ cmPct: number; srvPct: number; seconds: string }> => {
      const c0 = procCpuMs(child.pid!);
      const s0 = procCpuMs(srv.started.pid);
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, cfg.idleMeasureMs));
      const wall = performance.now() - w0;
      return {
        cmPct: ((procCpuMs(child.pid!) - c0) / wall) * 100,
        srvPct: ((procCpuMs(srv.started.pid) - s0) / wall) * 100,
        seconds: (wall / 1000).toFixed(0),
      };
    };
    // The first seconds after sync still carry start-up work (JIT, the GC of the initial lists):
    // measure the first window too, then the steady state after it.
    const first = await idleWindow();
    console.log(`  first ${first.seconds} s after sync: controller-manager CPU ${first.cmPct.toFixed(2)}% of a core`);
    rec.row({
      scenario: '9-idlecm',
      target: 'kplane controller-manager',
      op: `CPU right after sync, ${n} objects`,
      concurrency: '-',
      value: `${first.cmPct.toFixed(2)}%`,
      note: `first ${first.seconds} s after sync`,
    });
    const steady = await idleWindow();
    const cpuPct = steady.cmPct;
    const rss = rssMB(child.pid as number);
    console.log(
      `  synced in ${(syncMs / 1000).toFixed(1)} s; then idle for ${steady.seconds} s: controller-manager CPU ${cpuPct.toFixed(2)}% of a core, RSS ${rss.toFixed(0)} MiB (server ${steady.srvPct.toFixed(2)}%)`,
    );
    rec.row({
      scenario: '9-idlecm',
      target: 'kplane controller-manager',
      op: `idle CPU, ${n} objects`,
      concurrency: '-',
      value: `${cpuPct.toFixed(2)}%`,
      note: `steady state: the ${steady.seconds} s after that (sync took ${(syncMs / 1000).toFixed(1)} s); server ${steady.srvPct.toFixed(2)}%`,
    });
    rec.row({
      scenario: '9-idlecm',
      target: 'kplane controller-manager',
      op: `RSS, ${n} objects`,
      concurrency: '-',
      value: `${rss.toFixed(0)} MiB`,
    });
    if (cfg.controllerScale >= 1) rec.goal(`idle controller-manager over ${n} objects`, 'CPU < 1%', `${cpuPct.toFixed(2)}%`, cpuPct < 1);
    // V8's memory reducer runs its full GCs of the big heap once the process goes quiet, once, at
    // a time of its own (seen with --trace-gc: two mark-compacts of ~115 MB, 34-72 s after sync),
    // so they may fall into either window above or later. A third window shows that; it is
    // reported, not judged.
    const later = await idleWindow();
    console.log(`  the next ${later.seconds} s: controller-manager CPU ${later.cmPct.toFixed(2)}% of a core (server ${later.srvPct.toFixed(2)}%)`);
    rec.row({
      scenario: '9-idlecm',
      target: 'kplane controller-manager',
      op: `idle CPU later, ${n} objects`,
      concurrency: '-',
      value: `${later.cmPct.toFixed(2)}%`,
      note: `the ${later.seconds} s after the steady-state window (reported, not judged); server ${later.srvPct.toFixed(2)}%`,
    });
  } finally {
    if (cm && cm.exitCode === null) {
      const exited = new Promise((r) => cm!.once('exit', r));
      cm.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      cm.kill('SIGKILL');
    }
    await srv.stop();
  }
}
