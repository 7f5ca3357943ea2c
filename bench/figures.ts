// The figures whose history bench/plot.ts draws: each reads one number out of a results file
// (bench/results.ts) — a row's ops/s, latency or value — with the goal it is judged against, if any.
import type { BenchResults, Row } from './results.js';

export interface Figure {
  readonly id: string;
  readonly title: string;
  /** The y axis's unit, e.g. `%`, `ms`, `MB`. */
  readonly unit: string;
  /** The goal line, and which side of it meets the goal. */
  readonly goal?: { readonly value: number; readonly meets: 'above' | 'below'; readonly label: string };
  /** The figure in one run, or undefined when the run did not measure it. */
  value(r: BenchResults): number | undefined;
}

/** A row of `r` by its scenario, target, operation and concurrency. */
export function rowOf(r: BenchResults, scenario: string, target: string, op: string, concurrency: string): Row | undefined {
  return r.rows.find((x) => x.scenario === scenario && x.target === target && x.op === op && x.concurrency === concurrency);
}

/** A ratio row's ratio in per cent (from `ratio`, else from its printed `amount`). */
function percentOf(row: Row | undefined): number | undefined {
  if (!row) return undefined;
  if (row.ratio !== undefined) return row.ratio * 100;
  return row.unit === '%' ? row.amount : undefined;
}

/** A row's value in seconds (its `amount` with unit `s` or `ms`). */
function secondsOf(row: Row | undefined): number | undefined {
  if (row?.amount === undefined) return undefined;
  if (row.unit === 's') return row.amount;
  if (row.unit === 'ms') return row.amount / 1000;
  return undefined;
}

/** A row's value in MB (10^6 bytes) from `amount` in MiB or MB. */
function megabytesOf(row: Row | undefined): number | undefined {
  if (row?.amount === undefined) return undefined;
  if (row.unit === 'MiB') return (row.amount * 2 ** 20) / 1e6;
  if (row.unit === 'MB') return row.amount;
  return undefined;
}

const below = (value: number, label: string) => ({ value, meets: 'below' as const, label });
const above = (value: number, label: string) => ({ value, meets: 'above' as const, label });

const crudRatio = (c: string, op = 'create'): Figure => ({
  id: `${op}-c${c}-ratio`,
  title: `${op} at c=${c}, kplane ÷ bare HTTPS`,
  unit: '%',
  ...(op === 'create' && c === '64' ? { goal: above(40, 'goal ≥ 40 %') } : {}),
  value: (r) => percentOf(rowOf(r, '1-crud', 'kplane/bare', op, c)),
});

const etcdRatio = (c: string): Figure => ({
  id: `etcd-c${c}-ratio`,
  title: `etcd: create at c=${c}, kplane ÷ raw etcd3 put`,
  unit: '%',
  goal: above(60, 'goal ≥ 60 %'),
  value: (r) => percentOf(rowOf(r, '6-etcd', 'kplane/etcd3 put', 'create', c)),
});

export const FIGURES: readonly Figure[] = [
  crudRatio('64'),
  crudRatio('16'),
  crudRatio('1'),
  crudRatio('64', 'get'),
  crudRatio('64', 'update'),
  crudRatio('64', 'list'),
  {
    id: 'create-c64-ops',
    title: 'create at c=64, kplane',
    unit: 'ops/s',
    value: (r) => rowOf(r, '1-crud', 'kplane', 'create', '64')?.opsPerSec,
  },
  {
    id: 'get-c1-p99',
    title: 'p99 get at c=1 (closed loop)',
    unit: 'ms',
    goal: below(5, 'goal ≤ 5 ms'),
    value: (r) => rowOf(r, '1-crud', 'kplane', 'get', '1')?.p99,
  },
  {
    id: 'openloop-create-p99',
    title: 'p99 create at 1,000/s offered (open loop, h2load)',
    unit: 'ms',
    goal: below(25, 'goal ≤ 25 ms'),
    value: (r) => rowOf(r, '1b-openloop', 'kplane', 'create', '1000/s')?.p99,
  },
  {
    id: 'openloop-get-p99',
    title: 'p99 get at 1,000/s offered (open loop, h2load)',
    unit: 'ms',
    goal: below(5, 'goal ≤ 5 ms'),
    value: (r) => rowOf(r, '1b-openloop', 'kplane', 'get', '1000/s')?.p99,
  },
  {
    id: 'list10k-p99',
    title: 'p99 list of 10,000 ConfigMaps',
    unit: 'ms',
    goal: below(250, 'goal ≤ 250 ms'),
    value: (r) => rowOf(r, '3-list10k', 'kplane', 'list 10000', '1')?.p99,
  },
  {
    id: 'watch-p99',
    title: 'watch p99 from ack, 1,000 watchers',
    unit: 'ms',
    goal: below(100, 'goal ≤ 100 ms'),
    value: (r) => rowOf(r, '4-watch', 'kplane', 'ack → receipt', '1000')?.p99,
  },
  {
    id: 'rss-100k',
    title: 'RSS with 100,000 ConfigMaps of 1 KiB',
    unit: 'MB',
    goal: below(400, 'goal ≤ 400 MB'),
    value: (r) => megabytesOf(rowOf(r, '5-rss', 'kplane', 'RSS, 100000 objects', '-')),
  },
  etcdRatio('16'),
  etcdRatio('64'),
  {
    id: 'sqlite-1txn',
    title: 'raw better-sqlite3, one transaction per write',
    unit: 'writes/s',
    value: (r) => rowOf(r, '2-sqlite', 'better-sqlite3', 'insert, 1 txn/write', '-')?.opsPerSec,
  },
  {
    id: 'ssa-p99',
    title: 'p99 server-side apply of an unchanged 50-field ConfigMap, c=1',
    unit: 'ms',
    goal: below(10, 'goal ≤ 10 ms'),
    value: (r) => rowOf(r, 'ssa', 'kplane', 'apply unchanged', '1')?.p99,
  },
  {
    id: 'cr-worst-ratio',
    title: 'custom resources ÷ ConfigMaps, worst operation and concurrency',
    unit: '%',
    goal: above(70, 'goal ≥ 70 %'),
    value: (r) => {
      const ratios = r.rows
        .filter((x) => x.scenario === 'cr' && x.target === 'CR/configmap')
        .map(percentOf)
        .filter((x): x is number => x !== undefined);
      return ratios.length ? Math.min(...ratios) : undefined;
    },
  },
  {
    id: 'nsdelete-s',
    title: 'delete a namespace of 10,000 ConfigMaps + 1,000 CRs',
    unit: 's',
    goal: below(20, 'goal ≤ 20 s'),
    value: (r) => secondsOf(rowOf(r, '7-nsdelete', 'kplane', 'delete namespace (10000 cm + 1000 CRs)', '-')),
  },
  {
    id: 'gc-background-s',
    title: 'garbage collection of 10,000 dependents (background)',
    unit: 's',
    goal: below(20, 'goal ≤ 20 s'),
    value: (r) => secondsOf(rowOf(r, '8-gc', 'kplane', 'background, 10000 dependents', '-')),
  },
  {
    id: 'gc-foreground-s',
    title: 'garbage collection, foreground over 3 levels of 1,000',
    unit: 's',
    goal: below(30, 'goal ≤ 30 s'),
    value: (r) => secondsOf(rowOf(r, '8-gc', 'kplane', 'foreground, 3 levels of 1000', '-')),
  },
  {
    id: 'idlecm-cpu',
    title: 'idle controller-manager over 100,000 objects, CPU',
    unit: '% of a core',
    goal: below(1, 'goal < 1 %'),
    value: (r) => rowOf(r, '9-idlecm', 'kplane controller-manager', 'idle CPU, 100000 objects', '-')?.amount,
  },
  {
    id: 'catalog-validate-s',
    title: 'catalog: load + validate 30,000 bundles',
    unit: 's',
    goal: below(5, 'goal ≤ 5 s'),
    value: (r) => secondsOf(rowOf(r, 'catalog', 'kplane', 'load + validate 30000 bundles', '-')),
  },
  {
    id: 'catalog-serve-p99',
    title: 'catalog: GetBundleForChannel p99 at 2,000/s',
    unit: 'ms',
    goal: below(2, 'goal ≤ 2 ms'),
    value: (r) => rowOf(r, 'catalog', 'kplane', 'GetBundleForChannel p99 at 2000/s open loop', '-')?.amount,
  },
  {
    id: 'catalog-render-warm-s',
    title: 'catalog: render a 100-bundle template, warm cache',
    unit: 's',
    goal: below(1, 'goal ≤ 1 s'),
    value: (r) => secondsOf(rowOf(r, 'catalog', 'kplane', 'render 100-bundle template (warm cache, worst of 3)', '-')),
  },
];

export function figureById(id: string): Figure | undefined {
  return FIGURES.find((f) => f.id === id);
}

export interface Point {
  readonly date: string;
  readonly commit: string | null;
  readonly value: number;
  /** The results file's `source` (transcribed runs) or undefined (measured and written by run.ts). */
  readonly source?: string;
}

/**
 * The figure's history: one point per run that measured it, oldest first. Quick runs are left out
 * (their counts are smaller, so their figures are not comparable).
 */
export function seriesOf(figure: Figure, runs: readonly BenchResults[]): Point[] {
  const points: Point[] = [];
  for (const r of runs) {
    if (r.config === 'quick') continue;
    const value = figure.value(r);
    if (value === undefined || !Number.isFinite(value)) continue;
    points.push({ date: r.date, commit: r.commit, value, ...(r.source ? { source: r.source } : {}) });
  }
  return points.sort((a, b) => a.date.localeCompare(b.date));
}
