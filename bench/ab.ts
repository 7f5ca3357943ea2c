// npm run bench:ab -- --base <git ref> [--ops create,get,update,list] [--concurrency 1,16,64] [--slices N]
//                     [--slice-ms MS] [--warmup-ms MS] [--warm-ms MS] [--tolerance PCT] [--seed N] [--json FILE]
//
// An interleaved A/B of an earlier commit ("base") and this tree ("head") on the CRUD closed-loop
// figures of the bench (create, get, update, list of 1 KiB ConfigMaps over HTTPS keep-alive).
//
// Why: bench:compare runs whole harnesses per side, minutes apart; on a shared 2-core machine the
// figures drift by ±25 % between such runs, more than the 5 % to be shown. Here both servers (each
// side's own bench/server.ts, kplane on SQLite, each with its own data directory) run for the whole
// comparison, and one load generator (this tree's HttpClient, the bodies of bench/scenarios/crud.ts)
// drives them in alternating slices of a couple of seconds: base, head, head, base, … (ABBA per pair
// of slices: sidesOfPair). A drift slower than a pair of slices (seconds) moves both slices of a
// pair alike and cancels out of the pair's ratio head/base.
//
// Per slice: a short warm-up whose completions are not counted, a counted window (ops/s, p50, p99,
// and the server process's CPU time per answered request, user+system from /proc/<pid>/stat over
// the window), then the requests still in flight are drained and not counted. Per figure (op ×
// concurrency × measure): the ratio head/base of each pair, their median, and a 95 % confidence
// interval of the median from a seeded percentile bootstrap over the pairs (bootstrapMedianCI; the
// distribution-free order-statistics interval is kept beside it in the JSON). Verdict (judge):
// "within X %" when the interval's worse end is within the tolerance, "worse by Y %" when even its
// better end is worse than the tolerance, otherwise "inconclusive".
//
// The JSON (bench/results/ab-<date>-<base>-<head>.json, or --json FILE; schema kplane-bench-ab/v1)
// keeps every slice's values, both commits, both sides' node flags and the load average at the
// start and the end.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NODE_FLAGS } from '../src/runtime/node-flags.js';
import { RpcClient, procCpuMs, stats, type Credentials, type StartedServer } from './common.js';
import { addBaseTree, git, loadAverage, median, removeBaseTree } from './compare.js';
import { CRUD_POOL, FULL, serverExecArgv } from './context.js';
import { HttpClient } from './load.js';
import { CRUD_OPS, crudRequest, type CrudOp } from './scenarios/crud.js';
import { exitWithUsage, UsageError } from './usage.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The operations bench:ab knows: the crud scenario's, sent as it sends them (crudRequest). */
export const AB_OPS = CRUD_OPS;
export type Op = CrudOp;
export type Side = 'base' | 'head';

// ---- arguments -----------------------------------------------------------------------------------

export interface AbArgs {
  readonly base: string;
  readonly ops: readonly Op[];
  readonly concurrency: readonly number[];
  /** Slices per figure (op × concurrency), even: they go in pairs. */
  readonly slices: number;
  /** The counted window of a slice. */
  readonly sliceMs: number;
  /** The start of every slice whose completions are not counted. */
  readonly warmupMs: number;
  /** Each server's warm-up per op before the first slice. */
  readonly warmMs: number;
  readonly tolerancePct: number;
  readonly seed: number;
  readonly json: string | undefined;
}

export const AB_USAGE =
  'usage: npm run bench:ab -- --base <git ref> [--ops create,get,update,list] [--concurrency 1,16,64] [--slices N] [--slice-ms MS] [--warmup-ms MS] [--warm-ms MS] [--tolerance PCT] [--seed N] [--json FILE]';

export function parseAbArgs(argv: readonly string[]): AbArgs {
  let base: string | undefined;
  let ops: Op[] = [...AB_OPS];
  let concurrency: number[] = [...FULL.concurrency];
  let slices = 20;
  let sliceMs = 2000;
  let warmupMs = 250;
  let warmMs = 3000;
  let tolerancePct = 5;
  let seed = 1;
  let json: string | undefined;
  const positiveInt = (flag: string, v: string): number => {
    const n = Number(v);
    if (v === '' || !Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer, not '${v}'`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    const value = (): string => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--base':
        base = value();
        break;
      case '--ops': {
        const names = value().split(',').filter(Boolean);
        for (const n of names) if (!(AB_OPS as readonly string[]).includes(n)) throw new UsageError(`--ops: unknown op '${n}'; known: ${AB_OPS.join(',')}`);
        ops = AB_OPS.filter((o) => names.includes(o));
        if (ops.length === 0) throw new UsageError('--ops needs at least one op');
        break;
      }
      case '--concurrency':
        concurrency = value()
          .split(',')
          .map((c) => positiveInt('--concurrency', c));
        break;
      case '--slices':
        slices = positiveInt('--slices', value());
        if (slices % 2 !== 0 || slices < 2) throw new UsageError(`--slices must be even (slices go in base/head pairs), not ${slices}`);
        break;
      case '--slice-ms':
        sliceMs = positiveInt('--slice-ms', value());
        break;
      case '--warmup-ms': {
        const v = value();
        warmupMs = Number(v);
        if (!Number.isInteger(warmupMs) || warmupMs < 0) throw new UsageError(`--warmup-ms must be a whole number of milliseconds ≥ 0, not '${v}'`);
        break;
      }
      case '--warm-ms': {
        const v = value();
        warmMs = Number(v);
        if (!Number.isInteger(warmMs) || warmMs < 0) throw new UsageError(`--warm-ms must be a whole number of milliseconds ≥ 0, not '${v}'`);
        break;
      }
      case '--tolerance': {
        const v = value();
        tolerancePct = Number(v);
        if (!(tolerancePct >= 0)) throw new UsageError(`--tolerance must be a number of per cent ≥ 0, not '${v}'`);
        break;
      }
      case '--seed': {
        const v = value();
        seed = Number(v);
        if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, not '${v}'`);
        break;
      }
      case '--json':
        json = value();
        break;
      case '--help':
      case '-h':
        console.log(AB_USAGE);
        process.exit(0);
        break;
      default:
        throw new UsageError(`unknown argument '${a}'`);
    }
  }
  if (!base) throw new UsageError('--base <git ref> is required: the commit to compare this tree with (e.g. --base deb126d)');
  return { base, ops, concurrency, slices, sliceMs, warmupMs, warmMs, tolerancePct, seed, json };
}

// ---- order, pairs, ratios, intervals, verdicts ---------------------------------------------------

/**
 * The sides of pair `pair` of a figure: ABBA over consecutive pairs (base, head, head, base, …),
 * shifted by one for every other figure, so that neither side always runs first, a drift linear in
 * time cancels out over two pairs, and two slices of one side never follow each other across figures
 * more than twice.
 */
export function sidesOfPair(pair: number, figure = 0): readonly [Side, Side] {
  return (pair + figure) % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
}

/** One slice's value of a measure, with the pair it belongs to. */
export interface PairedValue {
  readonly pair: number;
  readonly side: Side;
  readonly value: number;
}

/**
 * The ratio head/base of every complete pair (both slices present, both values finite, the base's
 * above zero), in pair order.
 */
export function pairRatios(values: readonly PairedValue[]): number[] {
  const byPair = new Map<number, { base?: number; head?: number }>();
  for (const v of values) {
    const p = byPair.get(v.pair) ?? {};
    if (p[v.side] !== undefined) throw new Error(`pair ${v.pair} has two ${v.side} slices`);
    p[v.side] = v.value;
    byPair.set(v.pair, p);
  }
  const out: number[] = [];
  for (const pair of [...byPair.keys()].sort((a, b) => a - b)) {
    const { base, head } = byPair.get(pair)!;
    if (base !== undefined && head !== undefined && Number.isFinite(base) && Number.isFinite(head) && base > 0) out.push(head / base);
  }
  return out;
}

/** A small seeded generator (mulberry32): the same resamples for the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A confidence interval of the median of `xs` by the percentile bootstrap: `resamples` samples of
 * xs.length drawn with replacement (seeded), the median of each, and their (1−level)/2 and
 * 1−(1−level)/2 quantiles.
 */
export function bootstrapMedianCI(xs: readonly number[], opts: { resamples?: number; seed?: number; level?: number } = {}): [number, number] {
  const { resamples = 2000, seed = 1, level = 0.95 } = opts;
  if (xs.length === 0) return [NaN, NaN];
  const rnd = seededRandom(seed);
  const medians = new Float64Array(resamples);
  const sample = new Array<number>(xs.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < xs.length; i++) sample[i] = xs[Math.floor(rnd() * xs.length)]!;
    medians[r] = median(sample);
  }
  medians.sort();
  const at = (q: number): number => medians[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return [at((1 - level) / 2), at(1 - (1 - level) / 2)];
}

/**
 * The distribution-free confidence interval of the median from order statistics: [x(k), x(n−k+1)]
 * with k the largest rank for which P(Binomial(n, ½) ≤ k−1) ≤ (1−level)/2, and its actual coverage;
 * undefined when n is too small for any such k (n < 6 at 95 %).
 */
export function orderStatisticMedianCI(xs: readonly number[], level = 0.95): { ci: [number, number]; coverage: number } | undefined {
  const n = xs.length;
  const s = [...xs].sort((a, b) => a - b);
  const alpha = (1 - level) / 2;
  // cdf[j] = P(B ≤ j), B ~ Binomial(n, ½)
  let term = 0.5 ** n; // P(B = 0)
  let cdf = 0;
  let k = 0;
  for (let j = 0; j < n; j++) {
    cdf += term;
    if (cdf > alpha) break;
    k = j + 1; // P(B ≤ k−1) ≤ alpha
    term = (term * (n - j)) / (j + 1);
  }
  if (k < 1) return undefined;
  let tail = 0;
  let t = 0.5 ** n;
  for (let j = 0; j < k; j++) {
    tail += t;
    t = (t * (n - j)) / (j + 1);
  }
  return { ci: [s[k - 1]!, s[n - k]!], coverage: 1 - 2 * tail };
}

/** The change a ratio head/base stands for, in per cent, negative worse. */
export function changeOfRatio(ratio: number, higherIsBetter: boolean): number {
  return higherIsBetter ? (ratio - 1) * 100 : (1 - ratio) * 100;
}

export type VerdictKind = 'within' | 'worse' | 'inconclusive';

/** Fewer pairs give no verdict: a bootstrap of 1–4 values is no interval (and order statistics need 6 at 95 %). */
export const MIN_PAIRS = 5;

export interface Judged {
  readonly pairs: number;
  readonly medianRatio: number;
  /** 95 % bootstrap interval of the median ratio. */
  readonly ci: [number, number];
  /** The distribution-free interval, where there are enough pairs. */
  readonly orderStatisticCi?: { ci: [number, number]; coverage: number };
  /** The median's change and the interval's worse and better ends as changes (negative: worse). */
  readonly changePct: number;
  readonly worstPct: number;
  readonly bestPct: number;
  readonly kind: VerdictKind;
  readonly text: string;
}

/**
 * The verdict on one figure from its pairs' ratios head/base: "within" when the interval's worse end
 * is within the tolerance, "worse" when even its better end is worse than the tolerance (by the
 * median change), otherwise inconclusive.
 */
export function judge(ratios: readonly number[], higherIsBetter: boolean, tolerancePct: number, opts: { seed?: number; resamples?: number } = {}): Judged {
  if (ratios.length === 0)
    return { pairs: 0, medianRatio: NaN, ci: [NaN, NaN], changePct: NaN, worstPct: NaN, bestPct: NaN, kind: 'inconclusive', text: 'inconclusive: no pairs' };
  const medianRatio = median(ratios);
  const ci = bootstrapMedianCI(ratios, opts);
  const os = orderStatisticMedianCI(ratios);
  const ends = ci.map((r) => changeOfRatio(r, higherIsBetter));
  const worstPct = Math.min(...ends);
  const bestPct = Math.max(...ends);
  const changePct = changeOfRatio(medianRatio, higherIsBetter);
  const j = (kind: VerdictKind, text: string): Judged => ({
    pairs: ratios.length,
    medianRatio,
    ci,
    ...(os ? { orderStatisticCi: os } : {}),
    changePct,
    worstPct,
    bestPct,
    kind,
    text,
  });
  if (ratios.length < MIN_PAIRS) return j('inconclusive', `inconclusive: ${ratios.length} pairs, an interval needs ${MIN_PAIRS}`);
  if (worstPct >= -tolerancePct) return j('within', `within ${tolerancePct} %`);
  if (bestPct < -tolerancePct) return j('worse', `worse by ${Math.abs(changePct).toFixed(1)} %`);
  return j('inconclusive', 'inconclusive');
}

// ---- one slice -----------------------------------------------------------------------------------

export interface SliceValues {
  readonly ops: number;
  readonly seconds: number;
  readonly opsPerSec: number;
  readonly p50: number;
  readonly p99: number;
  /** The server's CPU time (user+system) over the counted window ÷ the requests answered in it. */
  readonly cpuMsPerOp: number;
  /** Failed requests in the whole slice (warm-up and drain too), and the first failure. */
  readonly errors: number;
  readonly firstError?: string;
  /** Answers after the window (drained, not counted). */
  readonly drained: number;
}

export interface Slice extends SliceValues {
  readonly figure: string;
  /** Index within the figure (0 … slices−1); pair = index >> 1. */
  readonly index: number;
  readonly pair: number;
  readonly side: Side;
  readonly commit: string;
  /** When the slice started (ISO) and the 1-minute load average then. */
  readonly at: string;
  readonly load1: number;
}

/**
 * A closed loop of `concurrency` workers for warmupMs + windowMs; answers within the window are
 * counted (latency from each request's start), those of the warm-up and of the drain after the
 * window are not. The server's CPU is read at the window's two ends, in the same timer callbacks that
 * open and close it.
 */
export async function runSlice(opts: {
  concurrency: number;
  warmupMs: number;
  windowMs: number;
  serverPid: number;
  request: (i: number) => Promise<void>;
}): Promise<SliceValues> {
  const latencies: number[] = [];
  let counting = false;
  let stopped = false;
  let next = 0;
  let errors = 0;
  let drained = 0;
  let firstError: string | undefined;
  let t0 = NaN;
  let t1 = NaN;
  let cpu0 = NaN;
  let cpu1 = NaN;
  const open = (): void => {
    t0 = performance.now();
    cpu0 = procCpuMs(opts.serverPid);
    counting = true;
  };
  let closeTimer: NodeJS.Timeout | undefined;
  const openTimer = setTimeout(() => {
    open();
    closeTimer = setTimeout(() => {
      t1 = performance.now();
      cpu1 = procCpuMs(opts.serverPid);
      counting = false;
      stopped = true;
    }, opts.windowMs);
  }, opts.warmupMs);
  const worker = async (): Promise<void> => {
    while (!stopped) {
      const i = next++;
      const s = performance.now();
      try {
        await opts.request(i);
        if (counting) latencies.push(performance.now() - s);
        else if (stopped) drained++;
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
        if (!stopped) await new Promise((r) => setTimeout(r, 10)); // a refusing server is not hammered
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, worker));
  } finally {
    clearTimeout(openTimer);
    clearTimeout(closeTimer);
  }
  const seconds = (t1 - t0) / 1000;
  const s = stats(latencies);
  return {
    ops: latencies.length,
    seconds,
    opsPerSec: latencies.length / seconds,
    p50: s.p50,
    p99: s.p99,
    cpuMsPerOp: latencies.length > 0 ? (cpu1 - cpu0) / latencies.length : NaN,
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
    drained,
  };
}

// ---- the servers ---------------------------------------------------------------------------------

/** The node flags a tree's product runs with (src/runtime/node-flags.ts, or src/cli/ in older trees such as deb126d). */
async function nodeFlagsOf(tree: string): Promise<readonly string[]> {
  for (const rel of ['src/runtime/node-flags.ts', 'src/cli/node-flags.ts']) {
    const f = join(tree, rel);
    if (!existsSync(f)) continue;
    const m = (await import(pathToFileURL(f).href)) as { NODE_FLAGS?: readonly string[] };
    if (m.NODE_FLAGS) return m.NODE_FLAGS;
  }
  console.log(`[ab] ${tree}: no node-flags module; this tree's flags are used`);
  return NODE_FLAGS;
}

/**
 * One side's kplane (SQLite) server: that tree's bench/server.ts forked as that tree's harness forks
 * it (ServerProc.start in bench/context.ts; deb126d's bench/run.ts the same: `--import tsx
 * --expose-gc` and the product's node flags, plus KPLANE_BENCH_NODE_FLAGS), started over the same
 * IPC protocol, in a data directory of its own.
 */
class SideServer {
  private constructor(
    readonly side: Side,
    readonly child: ChildProcess,
    readonly rpc: RpcClient,
    readonly started: StartedServer,
    readonly nodeFlags: readonly string[],
  ) {}

  static async start(side: Side, tree: string, dataDir: string): Promise<SideServer> {
    const nodeFlags = await nodeFlagsOf(tree);
    const execArgv = serverExecArgv(nodeFlags);
    const child = fork(join(tree, 'bench', 'server.ts'), [], { cwd: tree, execArgv, stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
    // Its log, prefixed with the side, without the RBAC bootstrap's line per default role.
    let rest = '';
    child.stderr?.on('data', (c: Buffer) => {
      const lines = (rest + c.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) if (!/^\[kplane\] rbac: created /.test(l)) process.stderr.write(`  ${side} | ${l}\n`);
    });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const rpc = new RpcClient(child);
    const started = await rpc.call<StartedServer>('start', { kind: 'kplane-sqlite', dataDir, storageDir: join(dataDir, 'db') });
    return new SideServer(side, child, rpc, started, nodeFlags);
  }

  get creds(): Credentials {
    const p = this.started.pki;
    if (!p) throw new Error(`${this.side}'s server has no PKI`);
    return { ca: p.ca, cert: p.adminCert, key: p.adminKey };
  }

  /** The objects the rounds need, as bench/run.ts's startShared stores them. */
  async prepare(ops: readonly Op[]): Promise<void> {
    await this.rpc.call('ensureNamespace', { namespace: 'bench-create' });
    if (ops.includes('get')) await this.rpc.call('preload', { namespace: 'bench-get', count: CRUD_POOL, prefix: 'pool-', window: 256 });
    if (ops.includes('update')) await this.rpc.call('preload', { namespace: 'bench-update', count: CRUD_POOL, prefix: 'pool-', window: 256 });
    if (ops.includes('list')) await this.rpc.call('preload', { namespace: 'bench-list', count: FULL.listPool, prefix: 'item-', window: 256 });
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((r) => (this.child.exitCode !== null ? r() : this.child.once('exit', () => r())));
    await this.rpc.call('stop').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Server processes alive, killed if this process exits without stopping them. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

// ---- the run -------------------------------------------------------------------------------------

interface Measure {
  readonly key: 'opsPerSec' | 'p50' | 'p99' | 'cpuMsPerOp';
  readonly label: string;
  readonly higherIsBetter: boolean;
}

export const MEASURES: readonly Measure[] = [
  { key: 'opsPerSec', label: 'ops/s', higherIsBetter: true },
  { key: 'p50', label: 'p50 ms', higherIsBetter: false },
  { key: 'p99', label: 'p99 ms', higherIsBetter: false },
  { key: 'cpuMsPerOp', label: 'server CPU ms/op', higherIsBetter: false },
];

export interface FigureResult {
  readonly figure: string;
  readonly op: Op;
  readonly concurrency: number;
  readonly measure: string;
  readonly higherIsBetter: boolean;
  readonly baseMedian: number;
  readonly headMedian: number;
  readonly ratios: readonly number[];
  readonly judged: Judged;
}

/** Every measure of one figure's slices, judged. */
export function judgeSlices(op: Op, concurrency: number, slices: readonly Slice[], tolerancePct: number, seed: number): FigureResult[] {
  return MEASURES.map((m) => {
    const values = slices.map((s) => ({ pair: s.pair, side: s.side, value: s[m.key] }));
    const ratios = pairRatios(values);
    const sideMedian = (side: Side): number => {
      const xs = values.filter((v) => v.side === side && Number.isFinite(v.value)).map((v) => v.value);
      return xs.length ? median(xs) : NaN;
    };
    return {
      figure: `${op} c=${concurrency} ${m.label}`,
      op,
      concurrency,
      measure: m.label,
      higherIsBetter: m.higherIsBetter,
      baseMedian: sideMedian('base'),
      headMedian: sideMedian('head'),
      ratios,
      judged: judge(ratios, m.higherIsBetter, tolerancePct, { seed }),
    };
  });
}

const num = (x: number): string =>
  !Number.isFinite(x) ? '-' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3);
const pct = (x: number): string => (!Number.isFinite(x) ? '-' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} %`);

/** One line of the final table. */
export function formatFigure(f: FigureResult): string {
  const j = f.judged;
  return (
    `${f.figure.padEnd(30)} ${num(f.baseMedian).padStart(8)} ${num(f.headMedian).padStart(8)}   ${j.medianRatio.toFixed(3)} (${pct(j.changePct)})`.padEnd(72) +
    `  ${j.ci[0].toFixed(3)}–${j.ci[1].toFixed(3)}  (${pct(j.worstPct)} … ${pct(j.bestPct)})`.padEnd(34) +
    `  ${j.pairs} pairs  ${j.text}`
  );
}

let interrupted = false;

async function main(): Promise<void> {
  const args = parseAbArgs(process.argv.slice(2));
  const baseCommit = git(['rev-parse', '--short', args.base]);
  const headCommit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain']) !== '';
  const figures = args.ops.flatMap((op) => args.concurrency.map((c) => ({ op, c })));
  const total = figures.length * args.slices;
  const estimateS = Math.round((total * (args.warmupMs + args.sliceMs + 100) + args.ops.length * 2 * args.warmMs) / 1000);
  console.log(
    `[ab] base ${args.base} = ${baseCommit}, head ${headCommit}${dirty ? ' (uncommitted changes included)' : ''}; ${figures.length} figures × ${args.slices} slices (${args.slices / 2} pairs) of ${args.warmupMs} ms warm-up + ${args.sliceMs} ms counted; about ${Math.ceil(estimateS / 60)} min`,
  );
  const onSignal = (): void => {
    interrupted = true;
    console.log('[ab] interrupted: stopping after this slice');
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const scratch = await mkdtemp(join(tmpdir(), 'kplane-bench-ab-'));
  const baseTree = join(scratch, 'base');
  addBaseTree(baseTree, baseCommit);
  const servers: SideServer[] = [];
  const clients = new Map<string, HttpClient>();
  try {
    await mkdir(join(scratch, 'data-base'));
    await mkdir(join(scratch, 'data-head'));
    // Both at once, both alive for the whole run.
    const [baseSrv, headSrv] = await Promise.all([
      SideServer.start('base', baseTree, join(scratch, 'data-base')),
      SideServer.start('head', root, join(scratch, 'data-head')),
    ]);
    servers.push(baseSrv, headSrv);
    const srv = (side: Side): SideServer => (side === 'base' ? baseSrv : headSrv);
    const commit = (side: Side): string => (side === 'base' ? baseCommit : headCommit);
    console.log(
      `[ab] servers: base pid ${baseSrv.started.pid} (${baseSrv.nodeFlags.join(' ')}), head pid ${headSrv.started.pid} (${headSrv.nodeFlags.join(' ')})`,
    );
    for (const s of servers) await s.prepare(args.ops);
    const clientOf = (side: Side, c: number): HttpClient => {
      const key = `${side}/${c}`;
      let cl = clients.get(key);
      if (!cl) clients.set(key, (cl = new HttpClient(srv(side).started.url, srv(side).creds, c)));
      return cl;
    };
    let sliceNo = 0;
    const tagOf = (side: Side): string => `${side}-${sliceNo++}`;

    // Each server warmed once per op, alternately, at the highest concurrency asked for.
    const cMax = Math.max(...args.concurrency);
    if (args.warmMs > 0)
      for (const op of args.ops)
        for (const side of ['base', 'head'] as const) {
          const tag = tagOf(side);
          const w = await runSlice({
            concurrency: cMax,
            warmupMs: 0,
            windowMs: args.warmMs,
            serverPid: srv(side).started.pid,
            request: (i) => crudRequest(clientOf(side, cMax), op, i, `w${tag}`),
          });
          console.log(`[ab] warm ${side} ${op} c=${cMax}: ${num(w.opsPerSec)} ops/s${w.errors ? `, ${w.errors} errors (${w.firstError ?? ''})` : ''}`);
          if (w.errors && w.ops === 0) throw new Error(`${side}'s server answered no ${op} while warming: ${w.firstError ?? ''}`);
        }

    const loadStart = loadAverage();
    const started = new Date().toISOString();
    const slices: Slice[] = [];
    const results: FigureResult[] = [];
    let done = 0;
    for (const [fi, { op, c }] of figures.entries()) {
      const figure = `${op} c=${c}`;
      const mine: Slice[] = [];
      for (let pair = 0; pair < args.slices / 2; pair++) {
        const pairSlices: Slice[] = [];
        for (const side of sidesOfPair(pair, fi)) {
          if (interrupted) throw new Error('interrupted');
          const at = new Date().toISOString();
          const load1 = loadavg()[0]!;
          const tag = tagOf(side);
          const v = await runSlice({
            concurrency: c,
            warmupMs: args.warmupMs,
            windowMs: args.sliceMs,
            serverPid: srv(side).started.pid,
            request: (i) => crudRequest(clientOf(side, c), op, i, tag),
          });
          const s: Slice = { figure, index: mine.length, pair, side, commit: commit(side), at, load1, ...v };
          mine.push(s);
          pairSlices.push(s);
          slices.push(s);
          done++;
        }
        const b = pairSlices.find((s) => s.side === 'base')!;
        const h = pairSlices.find((s) => s.side === 'head')!;
        const soFar = (key: Measure['key']): number => median(pairRatios(mine.map((s) => ({ pair: s.pair, side: s.side, value: s[key] }))));
        const sl = (s: Slice): string =>
          `${num(s.opsPerSec)} ops/s p50 ${num(s.p50)} p99 ${num(s.p99)} ms ${num(s.cpuMsPerOp)} ms/op${s.errors ? ` ERR ${s.errors} (${s.firstError ?? ''})` : ''}`;
        console.log(
          `[ab] ${String(done).padStart(String(total).length)}/${total} ${figure.padEnd(10)} pair ${pair + 1}/${args.slices / 2} (${pairSlices[0]!.side} first, load ${b.load1.toFixed(1)})  base ${sl(b)} | head ${sl(h)} | median head/base so far: ops/s ×${soFar('opsPerSec').toFixed(3)}, p99 ×${soFar('p99').toFixed(3)}, CPU/op ×${soFar('cpuMsPerOp').toFixed(3)}`,
        );
      }
      const judged = judgeSlices(op, c, mine, args.tolerancePct, args.seed);
      results.push(...judged);
      for (const f of judged) console.log(`[ab]   ${formatFigure(f)}`);
    }
    const loadEnd = loadAverage();

    console.log(
      `\n[ab] ${baseCommit} → ${headCommit}: ${args.slices / 2} pairs per figure, ${args.sliceMs} ms counted per slice; load average ${loadStart} at the start, ${loadEnd} at the end.`,
    );
    console.log(
      `[ab] per figure: each side's median over its slices, the median of the pairs' ratios head/base (change, negative = worse), its 95 % bootstrap interval (seeded, 2,000 resamples; as changes: worse … better end), verdict at tolerance ${args.tolerancePct} %.`,
    );
    console.log(`     ${'figure'.padEnd(30)} ${'base'.padStart(8)} ${'head'.padStart(8)}   median ratio`);
    const mark: Record<VerdictKind, string> = { within: '     ', worse: 'WORSE', inconclusive: ' ??  ' };
    for (const f of results) console.log(`${mark[f.judged.kind]} ${formatFigure(f)}`);
    const count = (k: VerdictKind): FigureResult[] => results.filter((f) => f.judged.kind === k);
    const worse = count('worse');
    console.log(
      `\n[ab] ${results.length} figures: ${count('within').length} within ${args.tolerancePct} %, ${worse.length} worse, ${count('inconclusive').length} inconclusive${worse.length ? `; worse: ${worse.map((f) => f.figure).join('; ')}` : ''}`,
    );
    const errors = slices.reduce((a, s) => a + s.errors, 0);
    if (errors) console.log(`[ab] ${errors} requests failed over the run (see the slices' errors in the JSON)`);

    const stamp = new Date().toISOString();
    const out = args.json
      ? resolve(args.json)
      : join(root, 'bench', 'results', `ab-${stamp.slice(0, 10)}T${stamp.slice(11, 13)}${stamp.slice(14, 16)}Z-${baseCommit}-${headCommit}.json`);
    await writeFile(
      out,
      JSON.stringify(
        {
          schema: 'kplane-bench-ab/v1',
          started,
          date: stamp,
          base: baseCommit,
          head: headCommit,
          headDirty: dirty,
          ops: args.ops,
          concurrency: args.concurrency,
          slicesPerFigure: args.slices,
          sliceMs: args.sliceMs,
          warmupMs: args.warmupMs,
          warmMs: args.warmMs,
          tolerancePct: args.tolerancePct,
          ci: { method: 'percentile bootstrap of the median over pairs', level: 0.95, resamples: 2000, seed: args.seed },
          nodeFlags: { base: baseSrv.nodeFlags, head: headSrv.nodeFlags },
          // Added to both sides (e.g. --cpu-prof, which slows both): a profiled run's figures say so.
          ...(process.env.KPLANE_BENCH_NODE_FLAGS ? { extraNodeFlags: process.env.KPLANE_BENCH_NODE_FLAGS } : {}),
          loadAverage: { start: loadStart, end: loadEnd },
          figures: results,
          slices,
        },
        null,
        2,
      ) + '\n',
    );
    console.log(`[ab] written to ${out}`);
  } finally {
    for (const cl of clients.values()) cl.close();
    await Promise.all(servers.map((s) => s.stop()));
    removeBaseTree(baseTree);
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main().catch((e: unknown) => {
    if (e instanceof UsageError) exitWithUsage('bench:ab', AB_USAGE, e.message);
    console.error(`bench:ab: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
