// What every scenario of bench/run.ts shares: the configuration (full or quick counts), the
// recorder that prints rows and goals as they come, the servers under test as child processes, and
// the shape a scenario module exports (bench/scenarios/).
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../src/runtime/node-flags.js';
import { RpcClient, procCpuMs, stats, type Credentials, type Memory, type Pauses, type StartedServer } from './common.js';
import type { H2LoadResult } from './h2load.js';
import type { RoundResult } from './load.js';
import type { Goal, Row } from './results.js';

/** The bench/ directory. */
export const benchDir = fileURLToPath(new URL('.', import.meta.url));

// ---- configuration -----------------------------------------------------------------------------

export interface Config {
  readonly concurrency: readonly number[];
  readonly warmMs: number;
  readonly measureMs: number;
  readonly maxOps: number;
  readonly openRate: number;
  readonly openMs: number;
  readonly openWarmMs: number;
  readonly listPool: number;
  readonly list10k: number;
  readonly list10kReps: number;
  readonly watchers: number;
  readonly watchSessions: number;
  readonly watchEvents: number;
  readonly rssObjects: number;
  readonly etcdConcurrency: readonly number[];
  readonly sqliteMs: number;
  /** Object counts of the controller scenarios (nsdelete, gc, idlecm) × this. */
  readonly controllerScale: number;
  readonly idleMeasureMs: number;
}

// The closed-loop windows. A code change that adds functions needs longer than 1 s of load before V8
// has optimised the request path: two commits compared on 1 s + 3 s windows differed by 20-40 % on
// get c=1 where 5 s + 15 s windows showed them equal (docs/benchmarks.md, 2026-12-05). Comparisons
// of commits (bench:compare --warm-ms/--measure-ms) set these; the defaults keep the full run short.
const WARM_MS = Number(process.env.KPLANE_BENCH_WARM_MS ?? 1000);
const MEASURE_MS = Number(process.env.KPLANE_BENCH_MEASURE_MS ?? 3000);

export const FULL: Config = {
  concurrency: [1, 16, 64],
  warmMs: WARM_MS,
  measureMs: MEASURE_MS,
  maxOps: Math.round((50_000 * MEASURE_MS) / 3000),
  openRate: 1000,
  openMs: 10000,
  openWarmMs: 3000,
  listPool: 100,
  list10k: 10_000,
  list10kReps: 20,
  watchers: 1000,
  watchSessions: 4,
  watchEvents: 20,
  rssObjects: 100_000,
  etcdConcurrency: [16, 64],
  sqliteMs: 2000,
  controllerScale: 1,
  idleMeasureMs: Number(process.env.KPLANE_BENCH_IDLE_MS ?? 30_000),
};

export const QUICK: Config = {
  concurrency: [1, 64],
  warmMs: 200,
  measureMs: 600,
  maxOps: 5_000,
  openRate: 1000,
  openMs: 1000,
  openWarmMs: 300,
  listPool: 100,
  list10k: 10_000,
  list10kReps: 5,
  watchers: 200,
  watchSessions: 2,
  watchEvents: 5,
  rssObjects: 10_000,
  etcdConcurrency: [16],
  sqliteMs: 500,
  controllerScale: 0.1,
  idleMeasureMs: 5_000,
};

/** Objects preloaded in the namespaces of the get and update rounds (bench-get, bench-update). */
export const CRUD_POOL = 1000;

// ---- rows and goals ----------------------------------------------------------------------------

export function fmt(n: number | undefined, digits = 1): string {
  if (n === undefined || Number.isNaN(n)) return '-';
  return n >= 100 ? n.toFixed(0) : n.toFixed(digits);
}

/** Collects one scenario's rows and goals, printing each measured round and goal as it comes. */
export class Recorder {
  readonly rows: Row[] = [];
  readonly goals: Goal[] = [];

  /** A row that was printed in the scenario's own words (or not at all). */
  row(row: Row): Row {
    this.rows.push(row);
    return row;
  }

  /** A measured round: its row, printed on one line. */
  round(scenario: string, target: string, op: string, concurrency: number | string, r: RoundResult, note?: string, serverCpuMs?: number): Row {
    const s = stats(r.latencies);
    const row: Row = {
      scenario,
      target,
      op,
      concurrency: String(concurrency),
      opsPerSec: r.ops / r.seconds,
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      n: r.ops,
      errors: r.errors,
      ...(note ? { note } : {}),
      ...(serverCpuMs !== undefined && Number.isFinite(serverCpuMs) ? { serverCpuMs } : {}),
    };
    this.rows.push(row);
    const err = r.errors ? `  errors=${r.errors} (${r.firstError ?? ''})` : '';
    console.log(
      `  ${target.padEnd(14)} ${op.padEnd(18)} c=${String(concurrency).padEnd(5)} ${fmt(row.opsPerSec).padStart(7)} ops/s  p50 ${fmt(s.p50, 2).padStart(6)} ms  p99 ${fmt(s.p99, 2).padStart(6)} ms  (n=${r.ops})${note ? `  ${note}` : ''}${err}`,
    );
    return row;
  }

  goal(name: string, target: string, measured: string, met: boolean): void {
    this.goals.push({ name, target, measured, met });
    console.log(`  goal: ${name}: ${measured} (target ${target}) → ${met ? 'MET' : 'MISSED'}`);
  }

  result(): ScenarioResult {
    return { rows: this.rows, goals: this.goals };
  }
}

// ---- child processes ---------------------------------------------------------------------------

/** Every child process of the run, killed when the run ends or fails. */
export const children = new Set<ChildProcess>();

/**
 * How a bench server is forked: from source with tsx, gc() exposed, the product's node flags (those
 * of the tree it runs from) and KPLANE_BENCH_NODE_FLAGS (e.g. GC settings or --cpu-prof to compare).
 */
export function serverExecArgv(nodeFlags: readonly string[]): string[] {
  return ['--import', 'tsx', '--expose-gc', ...nodeFlags, ...(process.env.KPLANE_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '')];
}

export class ServerProc {
  private constructor(
    readonly rpc: RpcClient,
    readonly started: StartedServer,
    readonly kind: string,
  ) {}

  static async start(
    kind: 'kplane-sqlite' | 'kplane-etcd' | 'bare' | 'bare-etcd',
    opts: {
      dataDir: string;
      storageDir?: string;
      etcdEndpoint?: string;
      cpuProfDir?: string;
      tls?: { key: string; cert: string; ca: string };
      controllers?: boolean;
      auditLogPath?: string;
      rbac?: boolean;
      aggregation?: { serviceAddresses: string[] };
      frontProxyBackend?: boolean;
      port?: number;
      featureGates?: Record<string, boolean>;
    },
  ): Promise<ServerProc> {
    // The product's node flags (npm start, bin/kplane.js) for every server, the baselines too: the
    // same runtime for all. KPLANE_BENCH_NODE_FLAGS adds more (e.g. GC settings to compare).
    const execArgv = serverExecArgv(NODE_FLAGS);
    if (opts.cpuProfDir && !kind.startsWith('bare')) execArgv.push('--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`);
    const child = fork(join(benchDir, 'server.ts'), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.add(child);
    child.once('exit', () => children.delete(child));
    const rpc = new RpcClient(child);
    const started = await rpc.call<StartedServer>('start', { kind, ...opts });
    return new ServerProc(rpc, started, kind);
  }

  preload(namespace: string, count: number, prefix: string): Promise<{ ms: number }> {
    return this.rpc.call('preload', { namespace, count, prefix, window: 256 });
  }

  /** A ServiceAccount allowed everything on ConfigMaps in `namespace` (a Role), and its token. */
  serviceAccountToken(namespace: string, name: string): Promise<{ token: string }> {
    return this.rpc.call('serviceAccountToken', { namespace, name });
  }

  ensureNamespace(namespace: string): Promise<void> {
    return this.rpc.call('ensureNamespace', { namespace });
  }

  memory(): Promise<Memory> {
    return this.rpc.call('memory');
  }

  /** Runs `fn` and reports the server's event-loop delay and GC pauses meanwhile. */
  async withPauses<T>(fn: () => Promise<T>): Promise<{ result: T; pauses: Pauses }> {
    await this.rpc.call('pausesReset');
    const result = await fn();
    return { result, pauses: await this.rpc.call<Pauses>('pauses') };
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((r) => (this.rpc.child.exitCode !== null ? r() : this.rpc.child.once('exit', () => r())));
    await this.rpc.call('stop').catch(() => undefined);
    const timer = setTimeout(() => this.rpc.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Runs `fn` and tells how busy the server process and the load generator were meanwhile (% of one
 * core). The load generator is this process, or for h2load rounds h2load itself (`generatorCpuMs`).
 */
export async function withCpu<T>(
  serverPid: number,
  fn: () => Promise<T>,
  generatorCpuMs?: (result: T) => number,
): Promise<{ result: T; cpu: string; serverCpuMs: number }> {
  const s0 = procCpuMs(serverPid);
  const g0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wall = performance.now() - t0;
  const g = process.cpuUsage(g0);
  const serverCpuMs = procCpuMs(serverPid) - s0;
  const srv = (serverCpuMs / wall) * 100;
  if (generatorCpuMs) return { result, serverCpuMs, cpu: `server ${srv.toFixed(0)}%, h2load ${((generatorCpuMs(result) / wall) * 100).toFixed(0)}%` };
  const gen = ((g.user + g.system) / 1000 / wall) * 100;
  return { result, serverCpuMs, cpu: `server ${srv.toFixed(0)}%, loadgen ${gen.toFixed(0)}%` };
}

export const h2loadCpuMs = (r: H2LoadResult): number => r.cpuSeconds * 1000;

export function credsOf(srv: ServerProc): Credentials {
  const p = srv.started.pki;
  if (!p) throw new Error(`${srv.kind} has no PKI`);
  return { ca: p.ca, cert: p.adminCert, key: p.adminKey };
}

// ---- the shape of a scenario -------------------------------------------------------------------

/** kplane (SQLite) and the bare HTTPS baseline, started once for the scenarios that share them. */
export interface SharedServers {
  readonly kplane: ServerProc;
  readonly bare: ServerProc;
  /** kplane's admin client certificate, the load generator's identity on both. */
  readonly creds: Credentials;
}

export interface ScenarioContext {
  readonly cfg: Config;
  readonly quick: boolean;
  /** The `--only` names selected (all of them by default). */
  readonly only: ReadonlySet<string>;
  /** A temporary directory for the run: data of every server, kplane's PKI. */
  readonly dataDir: string;
  /** With `--cpu-prof`: where the kplane servers write their CPU profiles. */
  readonly cpuProfDir: string | undefined;
  /** The shared servers; set for scenarios with `shared: true`. */
  readonly shared: SharedServers | undefined;
  /** This scenario's rows and goals. */
  readonly rec: Recorder;
}

export interface ScenarioResult {
  readonly rows: readonly Row[];
  readonly goals: readonly Goal[];
}

/** What each module of bench/scenarios/ exports. */
export interface Scenario {
  /** The `--only` names that select it (a family answers to several, e.g. create,get,update,list). */
  readonly names: readonly string[];
  /** Runs against the shared kplane and bare servers (started once for all such scenarios). */
  readonly shared?: boolean;
  /** Drives components installed into .tools/ (etcd, h2load, nghttpd, the registry). */
  readonly tools?: boolean;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

/** The shared servers of a scenario that declared `shared: true`. */
export function sharedOf(ctx: ScenarioContext): SharedServers {
  if (!ctx.shared) throw new Error('scenario needs the shared servers');
  return ctx.shared;
}
