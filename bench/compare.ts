// npm run bench:compare -- --base <git ref> [--only create,get,...] [--quick] [--rounds N] [--tolerance 5]
//
// "Before and after in one run": the benchmark of an earlier commit (checked out into a temporary
// git worktree that shares this checkout's node_modules and .tools) and of this tree, group of
// scenarios by group, round by round. Each side runs its own `npm run bench -- --only <group>
// --json <file>`: its own harness, its own server code. The two harnesses speak the same results
// shape (rows keyed by scenario, target, op and concurrency), which is all this script reads.
//
// The verdict is made to hold on a shared 2-core machine, whose drift between two runs minutes
// apart exceeds the 5 % to be shown:
// - the sides run in ABBA order (base, head, head, base, …: sidesInOrder), so that neither always
//   goes first and a drift linear in time cancels out of the medians;
// - every slot (one side's run of one group in one round) measures its own bare baseline, and every
//   kplane figure is also taken ÷ the baseline's same figure of the same slot ("vs bare"): what the
//   machine did to both in that slot divides out;
// - each round's head is compared with the same round's base; a figure's change is the median of
//   those changes, its spread their range, and its verdict (verdictOf; for ops/s on "vs bare" where
//   there is one, for latencies and CPU on the raw figure) "within 5 %" when even the worst round is, "worse by X % beyond spread" when even the best
//   round is worse than the tolerance, otherwise "inconclusive".
// The comparison is written to bench/results/compare-<date>-<base>-<head>.json (schema v2: every
// round's values, the order of the slots, the load average at the start and the end).
//
// Beside throughput and latency, each closed-loop round gives the server's CPU time per request
// (`server CPU ms/op`: the server process's user+system time over the measured window ÷ requests
// answered). It moves far less with the machine's load than throughput does, so it is the figure
// to read on a shared machine.
//
// --pin runs each side's harness (the load generator, h2load) on CPU 1 and re-pins every server it
// starts (bench/server.ts, SQLite, etcd, webhook processes: any descendant that is not the harness)
// to CPU 0, with taskset (util-linux), so that on 2 cores the server and the generator never take
// turns on one core, whichever side runs first.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Row } from './results.js';
import { exitWithUsage, UsageError } from './usage.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Scenarios that share servers run together, as one `--only` group. */
const GROUPS: readonly (readonly string[])[] = [
  ['create', 'get', 'update', 'list'],
  ['openloop'],
  ['list10k'],
  ['watch'],
  ['ssa'],
  ['cr'],
  ['sqlite'],
  ['rss'],
  ['etcd'],
  ['nsdelete', 'gc', 'idlecm'],
  ['catalog'],
  ['resolver'],
  ['micro'],
  ['webhook'],
  ['policy'],
  ['aggregated'],
];

interface Args {
  readonly base: string;
  readonly only: ReadonlySet<string> | undefined;
  readonly quick: boolean;
  readonly rounds: number;
  readonly tolerancePct: number;
  /** Closed-loop warm-up and measuring windows for both sides (KPLANE_BENCH_WARM_MS/_MEASURE_MS); unset: the harness's. */
  readonly warmMs: number | undefined;
  readonly measureMs: number | undefined;
  /** Server processes on CPU 0, the load generator on CPU 1 (taskset). */
  readonly pin: boolean;
}

const COMPARE_USAGE =
  'usage: npm run bench:compare -- --base <git ref> [--only create,get,...] [--quick] [--rounds N] [--tolerance PCT] [--warm-ms MS --measure-ms MS] [--pin]';

function parseArgs(argv: readonly string[]): Args {
  let base: string | undefined;
  let only: Set<string> | undefined;
  let quick = false;
  let rounds = 1;
  let tolerancePct = 5;
  let warmMs: number | undefined;
  let measureMs: number | undefined;
  let pin = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => (a.includes('=') ? a.slice(a.indexOf('=') + 1) : (argv[++i] ?? ''));
    if (a.startsWith('--base')) base = value();
    else if (a.startsWith('--only')) only = new Set(value().split(',').filter(Boolean));
    else if (a === '--quick') quick = true;
    else if (a === '--pin') pin = true;
    else if (a.startsWith('--rounds')) rounds = Number(value());
    else if (a.startsWith('--tolerance')) tolerancePct = Number(value());
    else if (a.startsWith('--warm-ms')) warmMs = Number(value());
    else if (a.startsWith('--measure-ms')) measureMs = Number(value());
    else if (a === '--help' || a === '-h') {
      console.log(COMPARE_USAGE);
      process.exit(0);
    } else throw new UsageError(`unknown argument '${a}'`);
  }
  if (!base) throw new UsageError('--base <git ref> is required: the commit to compare this tree with (e.g. --base main~5)');
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`--rounds must be a positive integer, not ${rounds}`);
  if (!(tolerancePct >= 0)) throw new UsageError(`--tolerance must be a number of per cent, not ${tolerancePct}`);
  for (const [flag, v] of [
    ['--warm-ms', warmMs],
    ['--measure-ms', measureMs],
  ] as const)
    if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new UsageError(`${flag} must be a positive number of milliseconds, not ${v}`);
  if (pin && availableParallelism() < 2) throw new Error('--pin needs 2 CPUs: the servers on CPU 0, the load generator on CPU 1');
  return { base, only, quick, rounds, tolerancePct, warmMs, measureMs, pin };
}

/** The 1, 5 and 15 minute load averages, as /proc/loadavg has them. */
export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

export function git(args: readonly string[], cwd = root): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

/**
 * A temporary worktree of `commit` at `tree` that uses this checkout's dependencies and tools
 * (node_modules and .tools linked; same lockfile family: a base whose dependencies differ would need
 * its own install, which neither bench:compare nor bench:ab does). removeBaseTree undoes it.
 */
export function addBaseTree(tree: string, commit: string): void {
  git(['worktree', 'add', '--detach', tree, commit]);
  for (const d of ['node_modules', '.tools']) if (existsSync(join(root, d))) symlinkSync(join(root, d), join(tree, d));
}

export function removeBaseTree(tree: string): void {
  git(['worktree', 'remove', '--force', tree]);
}

// ---- --pin ---------------------------------------------------------------------------------------

const SERVER_CPU = 0;
const LOAD_CPU = 1;

/**
 * Whether a process under a side's `npm run bench` is the harness (npm and its shell, bench/run.ts,
 * h2load: the load generator) rather than a server under test.
 */
export function isHarnessProcess(argv: readonly string[]): boolean {
  const exe = (argv[0] ?? '').split('/').pop() ?? '';
  if (exe === 'npm' || exe === 'sh' || exe === 'bash' || exe === 'h2load' || exe === 'taskset') return true;
  return argv.some((a) => a.endsWith('bench/run.ts') || a.endsWith('npm-cli.js') || a.endsWith('/h2load'));
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // gone meanwhile
  }
}

/**
 * Watches the descendants of a side's harness (every 100 ms, from /proc) and puts each server
 * process, all its threads, on SERVER_CPU; the harness stays on LOAD_CPU, where taskset started it.
 * Threads a server starts later inherit the CPU of the thread that starts them; a process whose
 * thread count changed is pinned again, so no thread started before the first look escapes.
 */
export class ServerPinner {
  private readonly timer: NodeJS.Timeout;
  /** pid → threads seen when it was last pinned. */
  private readonly pinned = new Map<number, number>();
  failure: string | undefined;

  constructor(private readonly root: number) {
    this.timer = setInterval(() => this.scan(), 100);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private scan(): void {
    const children = new Map<number, number[]>();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const stat = readProc(`/proc/${d}/stat`);
      if (!stat) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    }
    const todo = [...(children.get(this.root) ?? [])];
    for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
      todo.push(...(children.get(pid) ?? []));
      const cmdline = readProc(`/proc/${pid}/cmdline`);
      if (cmdline === undefined || isHarnessProcess(cmdline.split('\0').filter(Boolean))) continue;
      let threads: number;
      try {
        threads = readdirSync(`/proc/${pid}/task`).length;
      } catch {
        continue;
      }
      if (this.pinned.get(pid) === threads) continue;
      try {
        execFileSync('taskset', ['-a', '-p', '-c', String(SERVER_CPU), String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
        this.pinned.set(pid, threads);
      } catch (e) {
        // A process, or one of its threads, that ended meanwhile ("No such process") is no failure:
        // the next scan pins what is left. taskset missing or refused is.
        const stderr = String((e as { stderr?: unknown }).stderr ?? '');
        if (existsSync(`/proc/${pid}`) && !stderr.includes('No such process'))
          this.failure ??= `taskset -a -p -c ${SERVER_CPU} ${pid} failed: ${(e as Error).message} ${stderr.trim()}`;
      }
    }
  }
}

// ---- a base without the window variables ---------------------------------------------------------

/**
 * The closed-loop windows of harnesses older than KPLANE_BENCH_WARM_MS/_MEASURE_MS (deb126d's
 * bench/run.ts): written into its FULL configuration, so that --warm-ms/--measure-ms hold for both
 * sides. Without this the base measured on its own 1 s + 3 s windows while the head measured on the
 * ones asked for (the case of compare-2026-12-06T1147Z-deb126d-add8fa4.json).
 */
export function withWindowVariables(runTs: string): string | undefined {
  if (runTs.includes('KPLANE_BENCH_WARM_MS')) return runTs;
  const re = /(const FULL: Config = \{[^}]*?)warmMs: (\d+),(\s*)measureMs: (\d+),/;
  if (!re.test(runTs)) return undefined;
  return runTs.replace(
    re,
    (_m, head: string, warm: string, sp: string, measure: string) =>
      `${head}warmMs: Number(process.env.KPLANE_BENCH_WARM_MS ?? ${warm}),${sp}measureMs: Number(process.env.KPLANE_BENCH_MEASURE_MS ?? ${measure}),`,
  );
}

/** Makes the base's harness read the window variables when the comparison sets windows; refuses when it cannot. */
function baseWindows(baseTree: string, windows: Pick<Args, 'warmMs' | 'measureMs'>): void {
  if (windows.warmMs === undefined && windows.measureMs === undefined) return;
  const harness = [join(baseTree, 'bench', 'context.ts'), join(baseTree, 'bench', 'run.ts')].find(
    (f) => existsSync(f) && readFileSync(f, 'utf8').includes('KPLANE_BENCH_WARM_MS'),
  );
  if (harness) return;
  const runTs = join(baseTree, 'bench', 'run.ts');
  const patched = existsSync(runTs) ? withWindowVariables(readFileSync(runTs, 'utf8')) : undefined;
  if (patched === undefined)
    throw new Error("--warm-ms/--measure-ms: the base's harness has no window variables and no FULL configuration to set them in; compare without them");
  writeFileSync(runTs, patched);
  console.log('[compare] base harness: windows from KPLANE_BENCH_WARM_MS/_MEASURE_MS written into its bench/run.ts (temporary worktree only)');
}

/** Runs one side's benchmark for one group; its output goes to ours, prefixed. */
function runSide(
  label: string,
  tree: string,
  group: readonly string[],
  quick: boolean,
  jsonFile: string,
  opts: Pick<Args, 'warmMs' | 'measureMs' | 'pin'>,
): Promise<Row[]> {
  const args = ['run', 'bench', '--', '--only', group.join(','), '--json', jsonFile, ...(quick ? ['--quick'] : [])];
  console.log(`\n[compare] ${label}: npm ${args.join(' ')}  (in ${tree})${opts.pin ? `; harness on CPU ${LOAD_CPU}, servers on CPU ${SERVER_CPU}` : ''}`);
  return new Promise((resolve, reject) => {
    // Both sides read the windows from the environment (a base older than these variables gets them
    // in its temporary worktree: baseWindows).
    const env = { ...process.env };
    if (opts.warmMs !== undefined) env.KPLANE_BENCH_WARM_MS = String(opts.warmMs);
    if (opts.measureMs !== undefined) env.KPLANE_BENCH_MEASURE_MS = String(opts.measureMs);
    const child = opts.pin
      ? spawn('taskset', ['-c', String(LOAD_CPU), 'npm', ...args], { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('npm', args, { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const pinner = opts.pin && child.pid !== undefined ? new ServerPinner(child.pid) : undefined;
    const prefix = (chunk: Buffer): string =>
      chunk
        .toString('utf8')
        .split('\n')
        .map((l) => (l === '' ? l : `  ${label} | ${l}`))
        .join('\n');
    child.stdout.on('data', (c: Buffer) => process.stdout.write(prefix(c)));
    child.stderr.on('data', (c: Buffer) => process.stderr.write(prefix(c)));
    child.on('error', (e) => {
      pinner?.stop();
      reject(e);
    });
    child.on('exit', (code) => {
      pinner?.stop();
      if (pinner?.failure) return reject(new Error(`--pin: ${pinner.failure}`));
      if (code !== 0) return reject(new Error(`${label}'s benchmark of ${group.join(',')} exited ${code}; its output is above`));
      try {
        resolve((JSON.parse(readFileSync(jsonFile, 'utf8')) as { rows: Row[] }).rows);
      } catch (e) {
        reject(new Error(`${label}'s benchmark wrote no readable ${jsonFile}: ${(e as Error).message}`));
      }
    });
  });
}

/** A figure of a row, and whether more is better. */
interface Figure {
  readonly key: string;
  readonly scenario: string;
  readonly target: string;
  readonly label: string;
  readonly value: number;
  readonly higherIsBetter: boolean;
}

const UNIT_RE = /^(-?[\d.]+)(?: vs [\d.]+)?\s*(%|MiB|ms|s|µs|ns)?/;

/** The figures of one row worth comparing: throughput, latencies, and printed values with a unit whose direction is known. */
export function figuresOf(r: Row): Figure[] {
  const id = `${r.scenario} | ${r.target} | ${r.op} | ${r.concurrency}`;
  const out: Figure[] = [];
  const add = (what: string, value: number | undefined, higherIsBetter: boolean): void => {
    if (value !== undefined && Number.isFinite(value))
      out.push({ key: `${id} | ${what}`, scenario: r.scenario, target: r.target, label: `${r.op} c=${r.concurrency} ${what}`, value, higherIsBetter });
  };
  add('ops/s', r.opsPerSec, true);
  add('p50 ms', r.p50, false);
  add('p99 ms', r.p99, false);
  add('server CPU ms/op', serverCpuMsPerOp(r), false);
  if (r.value !== undefined && r.opsPerSec === undefined) {
    const m = UNIT_RE.exec(r.value);
    if (m) {
      const unit = m[2];
      // A per cent is a ratio (kplane ÷ baseline: more is better) or a share of a core (less is better).
      const higher = unit === '%' ? r.target.includes('/') : false;
      if (unit !== undefined) add(unit, Number(m[1]), higher); // "28156 vs 22749 ns": kplane's figure comes first
    }
  }
  return out;
}

/**
 * The server's CPU time per answered request in a round: its `serverCpuMs` ÷ `n`, or, from a
 * harness that only prints it (deb126d's), the note's `server N%` of one core over the window ÷ ops/s.
 */
export function serverCpuMsPerOp(r: Row): number | undefined {
  if (r.serverCpuMs !== undefined && r.n) return r.serverCpuMs / r.n;
  const m = /(?:^|; )server (\d+(?:\.\d+)?)%/.exec(r.note ?? '');
  if (!m || !r.opsPerSec) return undefined;
  return (Number(m[1]) * 10) / r.opsPerSec;
}

const isBaseline = (target: string): boolean => !target.includes('kplane') && !target.includes('/');

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Change in per cent, signed so that negative is worse. */
export function changePct(before: number, after: number, higherIsBetter: boolean): number {
  if (before === 0) return 0;
  const pct = ((after - before) / Math.abs(before)) * 100;
  return higherIsBetter ? pct : -pct;
}

// ---- rounds, slots and verdicts ------------------------------------------------------------------

export type Side = 'base' | 'head';

/**
 * The order of the two sides in a round of a group: ABBA over consecutive rounds (base, head, head,
 * base, base, head, …), shifted by one for every other group, so that neither side always runs
 * first, or right after the other's warm machine, and a drift that is linear in time cancels out
 * of the medians over an even number of rounds.
 */
export function sidesInOrder(round: number, group: number): readonly [Side, Side] {
  return (round + group) % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
}

/** A figure as one slot (one side's run of one group in one round) measured it. */
export interface SlotFigure extends Figure {
  /**
   * The figure ÷ the same figure of the bare baseline in the same slot (same scenario, op,
   * concurrency and measure), when the slot has exactly one baseline for it: the machine's drift
   * between slots divides out. Its direction is the figure's.
   */
  readonly vsBare?: number;
}

/** The figures of one slot's rows, each kplane figure with its ratio to the slot's own baseline. */
export function slotFigures(rows: readonly Row[]): SlotFigure[] {
  const all = rows.flatMap((r) => figuresOf(r));
  // scenario | op | concurrency | measure → the baselines' values in this slot.
  const partner = (f: Figure): string => {
    const [scenario, , op, concurrency, what] = f.key.split(' | ');
    return `${scenario} | ${op} | ${concurrency} | ${what}`;
  };
  const bare = new Map<string, number[]>();
  for (const f of all) if (isBaseline(f.target)) bare.set(partner(f), [...(bare.get(partner(f)) ?? []), f.value]);
  return all.map((f) => {
    if (isBaseline(f.target) || f.target.includes('/')) return f;
    const b = bare.get(partner(f));
    return b?.length === 1 && b[0]! > 0 ? { ...f, vsBare: f.value / b[0]! } : f;
  });
}

export type VerdictKind = 'within' | 'worse' | 'inconclusive';

export interface Verdict {
  readonly kind: VerdictKind;
  readonly text: string;
  /** Median of the rounds' changes (negative: worse), and their range. */
  readonly changePct: number;
  readonly minPct: number;
  readonly maxPct: number;
}

const pct = (x: number): string => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} %`;

/**
 * The verdict on one figure from its rounds' changes (each round's head against the same round's
 * base, negative worse): "within" when even the worst round is within the tolerance, "worse" when
 * even the best round is worse than it (by the median change), otherwise inconclusive: the spread
 * between rounds is larger than the tolerance, or the rounds fall on both sides of it.
 */
export function verdictOf(roundChangesPct: readonly number[], tolerancePct: number): Verdict {
  if (roundChangesPct.length === 0) throw new Error('verdictOf: no rounds');
  const changePct = median(roundChangesPct);
  const minPct = Math.min(...roundChangesPct);
  const maxPct = Math.max(...roundChangesPct);
  const v = (kind: VerdictKind, text: string): Verdict => ({ kind, text, changePct, minPct, maxPct });
  if (minPct >= -tolerancePct) return v('within', `within ${tolerancePct} %`);
  if (maxPct < -tolerancePct) return v('worse', `worse by ${Math.abs(changePct).toFixed(1)} % beyond spread`);
  const spread = maxPct - minPct;
  if (spread > tolerancePct) return v('inconclusive', `inconclusive: spread ${spread.toFixed(1)} % > tolerance`);
  return v('inconclusive', `inconclusive: rounds ${pct(minPct)} … ${pct(maxPct)} on both sides of −${tolerancePct} %`);
}

/** One side's values of a figure, round by round (undefined: that round did not measure it). */
export interface FigureRounds {
  readonly f: Figure;
  readonly values: (number | undefined)[];
  readonly vsBare: (number | undefined)[];
}

/** The comparison of one measure (the raw figure, or its ratio to the bare baseline). */
export interface Compared {
  readonly before: number;
  readonly after: number;
  readonly beforeRounds: readonly number[];
  readonly afterRounds: readonly number[];
  /** Each round's change, head against the base of the same round (negative: worse). */
  readonly roundChangesPct: readonly number[];
  readonly verdict: Verdict;
}

export interface ComparedFigure {
  readonly figure: string;
  readonly scenario: string;
  readonly baseline: boolean;
  readonly higherIsBetter: boolean;
  readonly raw: Compared;
  readonly vsBare?: Compared;
  /**
   * For a throughput (higher is better), vsBare's verdict where there is one: the machine's drift
   * moves kplane and the bare server alike. For latencies and CPU per request, raw's: dividing by
   * the bare server's p99 adds that server's own tail noise (a bare p99 swings more than a mean).
   */
  readonly verdict: Verdict;
}

function compared(before: readonly (number | undefined)[], after: readonly (number | undefined)[], higherIsBetter: boolean, tol: number): Compared | undefined {
  const paired: number[] = [];
  for (let r = 0; r < Math.min(before.length, after.length); r++) {
    const b = before[r];
    const a = after[r];
    if (b !== undefined && a !== undefined) paired.push(changePct(b, a, higherIsBetter));
  }
  const bs = before.filter((x): x is number => x !== undefined);
  const as = after.filter((x): x is number => x !== undefined);
  if (paired.length === 0) return undefined;
  return {
    before: median(bs),
    after: median(as),
    beforeRounds: bs,
    afterRounds: as,
    roundChangesPct: paired,
    verdict: verdictOf(paired, tol),
  };
}

/** Every figure both sides measured, compared round by round, raw and as a ratio to its slot's bare baseline. */
export function compareRounds(base: ReadonlyMap<string, FigureRounds>, head: ReadonlyMap<string, FigureRounds>, tolerancePct: number): ComparedFigure[] {
  const out: ComparedFigure[] = [];
  for (const [key, b] of base) {
    const h = head.get(key);
    if (!h) continue;
    const raw = compared(b.values, h.values, b.f.higherIsBetter, tolerancePct);
    if (!raw) continue;
    const vsBare = compared(b.vsBare, h.vsBare, b.f.higherIsBetter, tolerancePct);
    out.push({
      figure: `${b.f.target} ${b.f.label}`,
      scenario: b.f.scenario,
      baseline: isBaseline(b.f.target),
      higherIsBetter: b.f.higherIsBetter,
      raw,
      ...(vsBare ? { vsBare } : {}),
      verdict: (vsBare && b.f.higherIsBetter ? vsBare : raw).verdict,
    });
  }
  return out;
}

/** Adds one slot's figures to a side's rounds. */
export function collectSlot(into: Map<string, FigureRounds>, round: number, rows: readonly Row[]): void {
  for (const f of slotFigures(rows)) {
    let e = into.get(f.key);
    if (!e) into.set(f.key, (e = { f, values: [], vsBare: [] }));
    e.values[round] = f.value;
    if (f.vsBare !== undefined) e.vsBare[round] = f.vsBare;
  }
}

/** A figure's comparison as printed: medians with each side's range over the rounds, the change and the rounds' changes. */
export function formatCompared(c: Compared, digits: (x: number) => string): string {
  const side = (m: number, xs: readonly number[]): string =>
    xs.length > 1 ? `${digits(m)} (${digits(Math.min(...xs))}–${digits(Math.max(...xs))})` : digits(m);
  const rounds = c.roundChangesPct.length > 1 ? `  rounds ${pct(c.verdict.minPct)} … ${pct(c.verdict.maxPct)}` : '  1 round: no spread';
  return `${side(c.before, c.beforeRounds)} → ${side(c.after, c.afterRounds)}  ${pct(c.verdict.changePct)}${rounds}`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const baseCommit = git(['rev-parse', '--short', args.base]);
  const headCommit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain']) !== '';
  const groups = GROUPS.map((g) => g.filter((s) => !args.only || args.only.has(s))).filter((g) => g.length > 0);
  if (args.only)
    for (const s of args.only)
      if (!GROUPS.some((g) => g.includes(s))) throw new UsageError(`--only: unknown scenario '${s}'; known: ${GROUPS.flat().join(',')}`);

  const scratch = await mkdtemp(join(tmpdir(), 'kplane-bench-compare-'));
  const baseTree = join(scratch, 'base');
  console.log(
    `[compare] base ${args.base} = ${baseCommit}, head ${headCommit}${dirty ? ' (uncommitted changes included)' : ''}; ${groups.length} groups × ${args.rounds} round(s)${args.quick ? ', quick' : ''}${args.warmMs !== undefined || args.measureMs !== undefined ? `; windows warm ${args.warmMs ?? 'default'} ms, measure ${args.measureMs ?? 'default'} ms` : ''}`,
  );
  addBaseTree(baseTree, baseCommit);
  try {
    baseWindows(baseTree, args);
    const before = new Map<string, FigureRounds>();
    const after = new Map<string, FigureRounds>();
    const order: string[] = [];
    const loadStart = loadAverage();
    await mkdir(join(scratch, 'json'), { recursive: true });
    let n = 0;
    for (let round = 0; round < args.rounds; round++) {
      for (const [i, group] of groups.entries()) {
        // ABBA: base, head, head, base, … (sidesInOrder): order effects cancel out of the medians.
        for (const side of sidesInOrder(round, i)) {
          order.push(`${round + 1}:${group.join(',')}:${side}`);
          const rows = await runSide(
            `${side} ${side === 'base' ? baseCommit : headCommit} (round ${round + 1})`,
            side === 'base' ? baseTree : root,
            group,
            args.quick,
            join(scratch, 'json', `${n++}.json`),
            args,
          );
          // Every slot measures its own bare baseline: each figure is also taken ÷ that one.
          collectSlot(side === 'base' ? before : after, round, rows);
        }
      }
    }
    const loadEnd = loadAverage();

    const figures = compareRounds(before, after, args.tolerancePct);
    console.log(
      `\n[compare] ${baseCommit} \u2192 ${headCommit}, ${args.rounds} round(s), load average ${loadStart} at the start, ${loadEnd} at the end. Per figure: the medians over the rounds (each side's range), the change (negative = worse) and the range of the rounds' changes (each round's head against that round's base); "vs bare": the same for the figure \u00f7 the bare baseline of its own slot. Verdict (on "vs bare" where there is one): tolerance ${args.tolerancePct} %.`,
    );
    const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3));
    const mark: Record<VerdictKind, string> = { within: '      ', worse: 'WORSE ', inconclusive: '  ??  ' };
    for (const f of figures.filter((x) => !x.baseline)) {
      console.log(`  ${mark[f.verdict.kind]}${f.figure}: ${f.verdict.text}`);
      console.log(`           raw      ${formatCompared(f.raw, fmt)}${f.vsBare ? '' : `  ${f.raw.verdict.text}`}`);
      if (f.vsBare) console.log(`           vs bare  ${formatCompared(f.vsBare, fmt)}`);
    }
    const baselines = figures.filter((x) => x.baseline);
    if (baselines.length) {
      console.log(`\n[compare] the baselines themselves (not kplane code: the machine's drift between the sides):`);
      for (const f of baselines) console.log(`         ${f.figure.padEnd(50)} ${formatCompared(f.raw, fmt)}`);
    }
    const kplane = figures.filter((x) => !x.baseline);
    const count = (k: VerdictKind): ComparedFigure[] => kplane.filter((x) => x.verdict.kind === k);
    const worse = count('worse');
    console.log(
      `\n[compare] ${kplane.length} kplane figures: ${count('within').length} within ${args.tolerancePct} %, ${worse.length} worse beyond spread, ${count('inconclusive').length} inconclusive${worse.length ? `; worse: ${worse.map((r) => r.figure).join('; ')}` : ''}`,
    );
    const stamp = new Date().toISOString(); // 2026-12-05T13:04:…Z → 2026-12-05T1304Z, as results files are named
    const out = join(root, 'bench', 'results', `compare-${stamp.slice(0, 10)}T${stamp.slice(11, 13)}${stamp.slice(14, 16)}Z-${baseCommit}-${headCommit}.json`);
    await writeFile(
      out,
      JSON.stringify(
        {
          schema: 'kplane-bench-compare/v2',
          date: new Date().toISOString(),
          base: baseCommit,
          head: headCommit,
          headDirty: dirty,
          quick: args.quick,
          rounds: args.rounds,
          tolerancePct: args.tolerancePct,
          pin: args.pin,
          ...(args.warmMs !== undefined ? { warmMs: args.warmMs } : {}),
          ...(args.measureMs !== undefined ? { measureMs: args.measureMs } : {}),
          loadAverage: { start: loadStart, end: loadEnd },
          order,
          figures,
        },
        null,
        2,
      ) + '\n',
    );
    console.log(`[compare] written to ${out}`);
  } finally {
    removeBaseTree(baseTree);
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    if (e instanceof UsageError) exitWithUsage('bench:compare', COMPARE_USAGE, e.message);
    console.error(`bench:compare: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
