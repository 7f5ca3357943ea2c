// The benchmark's results as data: what `npm run bench -- --json` writes to bench/results/ (one file
// per run), what the files transcribed from the old journal of docs/benchmarks.md hold, and what
// bench/plot.ts reads. docs/benchmarks.md ("Results as JSON") describes the same shape.

/** The value of `schema` in every results file; bumped when a field changes meaning. */
export const RESULTS_SCHEMA = 'kplane-bench/v1';

/** One printed row of a run: a measured round, a ratio between two of them, or a single value. */
export interface Row {
  /** The scenario's label as printed: `1-crud`, `1b-openloop`, `2-sqlite`, `3-list10k`, `4-watch`, `5-rss`, `6-etcd`, `ssa`, `cr`, `7-nsdelete`, `8-gc`, `9-idlecm`, `catalog`, `micro`. */
  readonly scenario: string;
  /** What was measured: `kplane`, a baseline (`bare-https`, `etcd3 client`, …), or `a/b` for a ratio row. */
  readonly target: string;
  /** The operation, e.g. `create`, `list 10000`, `RSS, 100000 objects`. */
  readonly op: string;
  /** Requests in flight (`1`, `16`, `64`), an offered rate (`1000/s`), watchers (`1000`), or `-`. */
  readonly concurrency: string;
  readonly opsPerSec?: number;
  /** Latencies in ms (for sqlite rows: per commit). */
  readonly p50?: number;
  readonly p99?: number;
  readonly max?: number;
  /** Samples behind the latencies (requests answered in the round). */
  readonly n?: number;
  readonly errors?: number;
  /** The value as printed, for rows that have one: `66%`, `363 MiB`, `2.60 s`, `0.17%`, … */
  readonly value?: string;
  /**
   * `value`'s leading number and unit, for plotting: `66%` → 66 and `%`. A ratio row (`target`
   * `a/b`) holds a/b in per cent here, and as a fraction in `ratio`.
   */
  readonly amount?: number;
  readonly unit?: string;
  /** Ratio rows: a's figure ÷ b's (ops/s ÷ ops/s), e.g. 0.66. */
  readonly ratio?: number;
  readonly note?: string;
  /** Closed-loop rounds: the server process's CPU time (user + system, ms) over the measured window. */
  readonly serverCpuMs?: number;
}

/** One goal of the issues and its verdict in the run. */
export interface Goal {
  readonly name: string;
  /** The goal as printed, e.g. `≥ 40%`, `≤ 25 ms`. */
  readonly target: string;
  /** What the run measured, as printed. */
  readonly measured: string;
  readonly met: boolean;
}

export interface Machine {
  readonly cpus?: number;
  readonly model?: string;
  readonly memoryBytes?: number;
  /** `os.release()`, e.g. `6.1.0-18-cloud-amd64`. */
  readonly kernel?: string;
  readonly node?: string;
  /** Free text, for transcribed runs whose machine the journal only described. */
  readonly description?: string;
}

/** A results file: bench/results/<UTC date>-<short commit or 'unknown'>.json. */
export interface BenchResults {
  readonly schema: typeof RESULTS_SCHEMA;
  /** The run's start, ISO 8601 UTC (transcribed runs: as precise as the journal says). */
  readonly date: string;
  /** The commit the run measured (short hash), or null when it cannot be told. */
  readonly commit: string | null;
  /** Whether the work tree had uncommitted changes (null: unknown). */
  readonly dirty: boolean | null;
  readonly machine: Machine;
  /** `full` (the default counts), `quick` (`--quick`), or `partial` (a transcribed run that names figures of several invocations). */
  readonly config: 'full' | 'quick' | 'partial';
  /** The `--only` names the run ran. */
  readonly scenarios: readonly string[];
  /** `--concurrency` when given. */
  readonly concurrency?: readonly number[];
  readonly elapsedSeconds?: number;
  readonly loadAverage?: { readonly start?: readonly number[]; readonly end?: readonly number[] };
  readonly rows: readonly Row[];
  readonly goals: readonly Goal[];
  /** Transcribed runs only: `transcribed from docs/benchmarks.md (<section heading>)`. */
  readonly source?: string;
  /** Transcribed runs only: what the journal said about the figures that the rows cannot hold. */
  readonly notes?: readonly string[];
}

/** `66%` → {66, '%'}; `363 MiB` → {363, 'MiB'}; `2.60 s` → {2.6, 's'}; a value not led by a number and a unit → undefined. */
export function amountOf(value: string | undefined): { amount: number; unit: string } | undefined {
  const m = value === undefined ? null : /^(-?\d+(?:\.\d+)?)\s*(%|ns|µs|ms|s|KiB|MiB|GiB|KB|MB|GB)(?=$|\s)/.exec(value.trim());
  if (!m) return undefined;
  return { amount: Number(m[1]), unit: m[2]! };
}

/** A row as written to a results file: `amount`/`unit` and, for ratio rows, `ratio` filled from `value`. */
export function withAmount(row: Row): Row {
  const a = amountOf(row.value);
  if (!a) return row;
  const ratio = row.target.includes('/') && a.unit === '%' && row.ratio === undefined ? { ratio: a.amount / 100 } : {};
  return { ...row, amount: a.amount, unit: a.unit, ...ratio };
}

/** bench/results/<name>: `2026-11-28T0934Z-a3e988c.json` (UTC start, minutes; `unknown` without a commit). */
export function resultsFileName(date: Date, commit: string | null): string {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}Z-${commit ?? 'unknown'}.json`;
}
