// Controller and work-queue metrics with controller-runtime's and client-go's names, registered
// in the Registry the caller passes (never prom-client's global one: two control planes in one
// process must not share counters).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WorkQueueMetrics } from './workqueue.js';

export interface ControllerMetrics {
  readonly queue: WorkQueueMetrics;
  reconciled(result: 'success' | 'error' | 'requeue' | 'requeue_after'): void;
  reconcileError(terminal: boolean): void;
  reconcileSeconds(s: number): void;
  activeWorkers(delta: number): void;
  maxConcurrentReconciles(n: number): void;
}

const noop: ControllerMetrics = {
  queue: {},
  reconciled() {},
  reconcileError() {},
  reconcileSeconds() {},
  activeWorkers() {},
  maxConcurrentReconciles() {},
};

type Ctor<M> = new (cfg: { name: string; help: string; labelNames: string[]; registers: Registry[]; buckets?: number[] }) => M;

/** One metric object per name and registry: controllers sharing a registry share its families. */
function family<M>(registry: Registry, Kind: Ctor<M>, name: string, help: string, labelNames: string[], buckets?: number[]): M {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as unknown as M;
  return new Kind({ name, help, labelNames, registers: [registry], ...(buckets ? { buckets } : {}) });
}

// controller-runtime's reconcile buckets and client-go's work-queue buckets (1 µs ... 10 s).
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10,
  15, 20, 25, 30, 40, 50, 60,
];
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

export function controllerMetrics(registry: Registry | undefined, controller: string): ControllerMetrics {
  if (!registry) return noop;
  const total = family(registry, Counter, 'controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
  const errors = family(registry, Counter, 'controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']);
  const terminal = family(
    registry,
    Counter,
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
    ['controller'],
  );
  const time = family(
    registry,
    Histogram,
    'controller_runtime_reconcile_time_seconds',
    'Length of time per reconciliation per controller',
    ['controller'],
    RECONCILE_BUCKETS,
  );
  const active = family(registry, Gauge, 'controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']);
  const max = family(registry, Gauge, 'controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller']);
  const depth = family(registry, Gauge, 'workqueue_depth', 'Current depth of workqueue', ['name']);
  const adds = family(registry, Counter, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
  const latency = family(
    registry,
    Histogram,
    'workqueue_queue_duration_seconds',
    'How long in seconds an item stays in workqueue before being requested',
    ['name'],
    QUEUE_BUCKETS,
  );
  const work = family(
    registry,
    Histogram,
    'workqueue_work_duration_seconds',
    'How long in seconds processing an item from workqueue takes',
    ['name'],
    QUEUE_BUCKETS,
  );
  const retries = family(registry, Counter, 'workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
  const c = { controller };
  const q = { name: controller };
  for (const result of ['success', 'error', 'requeue', 'requeue_after']) total.inc({ controller, result }, 0);
  errors.inc(c, 0);
  terminal.inc(c, 0);
  // Every queue shows up from the start (an idle queue is depth 0, not absent).
  depth.set(q, 0);
  adds.inc(q, 0);
  retries.inc(q, 0);
  active.set(c, 0);
  return {
    queue: {
      depth: (n) => depth.set(q, n),
      added: () => adds.inc(q),
      queueLatencySeconds: (s) => latency.observe(q, s),
      workDurationSeconds: (s) => work.observe(q, s),
      retried: () => retries.inc(q),
    },
    reconciled: (result) => total.inc({ controller, result }),
    // As controller-runtime: a terminal error is an error too, and is also counted on its own.
    reconcileError: (isTerminal) => {
      errors.inc(c);
      if (isTerminal) terminal.inc(c);
    },
    reconcileSeconds: (s) => time.observe(c, s),
    activeWorkers: (d) => active.inc(c, d),
    maxConcurrentReconciles: (n) => max.set(c, n),
  };
}
