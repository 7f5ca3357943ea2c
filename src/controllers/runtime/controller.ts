// A controller (controller-runtime's internal/controller): informers feed keys into a rate-limited
// queue; N workers hand each key to the Reconciler, which reads current state and converges.
import type { Registry } from 'prom-client';
import type { KubeObject, OwnerReference } from '../../apimachinery/types.js';
import { realClock, type Clock } from './clock.js';
import { keyOf, type Informer } from './informer.js';
import { controllerMetrics, type ControllerMetrics } from './metrics.js';
import { WorkQueue, type RateLimiter } from './workqueue.js';
import { asLogger, type Logger } from '../../golang/klog.js';

export interface ReconcileResult {
  /** Reconcile again after this long (backoff is reset: this is a plan, not a failure). */
  readonly requeueAfterMs?: number;
  /** Reconcile again with the rate limiter's backoff. */
  readonly requeue?: boolean;
}

/**
 * Gets a key (`namespace/name` or `name`), not an event: it must read what it needs, converge, and
 * be safe to call again for the same key at any time.
 */
export interface Reconciler {
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;
}

/** An error retrying will not fix (reconcile.TerminalError): recorded, not retried. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  readonly code = 'KPL_ERR_TERMINAL';
}

export function isTerminal(e: unknown): boolean {
  return e instanceof TerminalError || (e instanceof Error && e.cause instanceof TerminalError);
}

export interface ControllerOptions {
  readonly name: string;
  readonly reconciler: Reconciler | Reconciler['reconcile'];
  /** Concurrent reconciles (never two for one key). Default 1. */
  readonly workers?: number;
  /** Whether only the elected leader runs it. Default true. */
  readonly needLeaderElection?: boolean;
  readonly rateLimiter?: RateLimiter<string>;
  readonly clock?: Clock;
  /** Metrics go here; none without it. */
  readonly registry?: Registry;
  readonly log?: (msg: string) => void;
}

type KeyMapper = (obj: KubeObject) => readonly string[];

interface Source {
  readonly informer: Informer<KubeObject>;
  readonly map: KeyMapper;
}

export class Controller {
  readonly name: string;
  readonly needLeaderElection: boolean;
  private readonly reconciler: Reconciler;
  private readonly workers: number;
  private readonly clock: Clock;
  private readonly metrics: ControllerMetrics;
  private readonly log: Logger;
  private readonly sources: Source[] = [];
  private queue: WorkQueue<string> | undefined;

  constructor(private readonly opts: ControllerOptions) {
    if (!opts.name) throw new Error('a controller needs a name (it labels its metrics and logs)');
    const workers = opts.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`controller ${opts.name}: workers must be a positive integer, got ${workers}`);
    this.name = opts.name;
    this.workers = workers;
    this.needLeaderElection = opts.needLeaderElection ?? true;
    const r = opts.reconciler;
    this.reconciler = typeof r === 'function' ? { reconcile: r } : r;
    this.clock = opts.clock ?? realClock;
    this.metrics = controllerMetrics(opts.registry, opts.name);
    this.log = asLogger(opts.log);
  }

  /** Reconcile each object of this informer under its own key. */
  for<T extends KubeObject>(informer: Informer<T>): this {
    return this.watches(informer, (o) => [keyOf(o)]);
  }

  /** Reconcile the controlling owner (of `ownerKind`, same namespace) when an owned object changes. */
  owns<T extends KubeObject>(informer: Informer<T>, ownerKind: string, ownerApiVersion?: string): this {
    return this.watches(informer, (o) => {
      const ref = o.metadata?.ownerReferences?.find(
        (r: OwnerReference) => r.controller && r.kind === ownerKind && (!ownerApiVersion || r.apiVersion === ownerApiVersion),
      );
      if (!ref) return [];
      return [o.metadata?.namespace ? `${o.metadata.namespace}/${ref.name}` : ref.name];
    });
  }

  /** Reconcile whatever keys `map` names when an object of this informer changes. */
  watches<T extends KubeObject>(informer: Informer<T>, map: (obj: T) => readonly string[]): this {
    const source = { informer: informer as unknown as Informer<KubeObject>, map: map as KeyMapper };
    this.sources.push(source);
    const enqueueAll = (o: T): void => {
      for (const k of map(o)) this.enqueue(k);
    };
    informer.addEventHandler({
      onAdd: enqueueAll,
      onUpdate: (old, cur) => {
        enqueueAll(cur);
        // A mapping that changed (e.g. a new owner) must reach the old target too.
        if (old !== cur) for (const k of map(old)) this.enqueue(k);
      },
      onDelete: enqueueAll,
    });
    return this;
  }

  /** The informers this controller reads (the manager waits for them to sync first). */
  get informers(): Informer<KubeObject>[] {
    return this.sources.map((s) => s.informer);
  }

  /** Queues a key; ignored while the controller is not running (start() enqueues everything). */
  enqueue(key: string): void {
    this.queue?.add(key);
  }

  /**
   * Runs workers until `signal` aborts, then returns once they have finished. Each start uses a
   * fresh queue seeded with every cached object: a controller that was not running (e.g. not the
   * leader) missed events, and level-based reconciling makes "everything once" the catch-up.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.queue) throw new Error(`controller ${this.name} is already running`);
    const q = new WorkQueue<string>({
      clock: this.clock,
      metrics: this.metrics.queue,
      ...(this.opts.rateLimiter ? { rateLimiter: this.opts.rateLimiter } : {}),
    });
    this.queue = q;
    this.metrics.maxConcurrentReconciles(this.workers);
    const stop = (): void => q.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) q.shutDown();
    try {
      for (const s of this.sources) for (const o of s.informer.store.list()) for (const k of s.map(o)) q.add(k);
      this.log.info('Starting workers', 'controller', this.name, 'workerCount', this.workers);
      await Promise.all(Array.from({ length: this.workers }, () => this.worker(q, signal)));
    } finally {
      signal.removeEventListener('abort', stop);
      this.queue = undefined;
      this.log.info('All workers finished', 'controller', this.name);
    }
  }

  private async worker(q: WorkQueue<string>, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await q.get();
      if (key === undefined) return;
      if (signal.aborted) {
        q.done(key);
        continue;
      }
      await this.process(q, key, signal);
    }
  }

  private async process(q: WorkQueue<string>, key: string, signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    this.metrics.activeWorkers(1);
    try {
      const r = (await this.reconciler.reconcile(key, signal)) ?? {};
      if (r.requeueAfterMs !== undefined && r.requeueAfterMs > 0) {
        q.forget(key);
        q.addAfter(key, r.requeueAfterMs);
        this.metrics.reconciled('requeue_after');
      } else if (r.requeue) {
        q.addRateLimited(key);
        this.metrics.reconciled('requeue');
      } else {
        q.forget(key);
        this.metrics.reconciled('success');
      }
    } catch (e) {
      this.metrics.reconciled('error');
      if (isTerminal(e)) {
        this.metrics.reconcileError(true);
        q.forget(key);
        this.log.error(describe(e), 'Reconciler error (terminal, not retried)', 'controller', this.name, 'key', key);
      } else {
        this.metrics.reconcileError(false);
        // Stopping is not a failure of the key: a shut-down queue ignores the re-add anyway.
        q.addRateLimited(key);
        if (!signal.aborted) this.log.error(describe(e), 'Reconciler error', 'controller', this.name, 'key', key, 'retries', q.numRequeues(key));
      }
    } finally {
      this.metrics.reconcileSeconds((this.clock.now() - started) / 1000);
      this.metrics.activeWorkers(-1);
      q.done(key);
    }
  }
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
