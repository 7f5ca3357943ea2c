// The manager (controller-runtime's manager): owns the shared informers and the controllers'
// life cycle. Caches start first and must sync before any controller runs; runnables that need
// leader election run only while this process holds the Lease, the others always.
import { setMaxListeners } from 'node:events';
import type { Registry } from 'prom-client';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { realClock, type Clock } from './clock.js';
import { Controller, type ControllerOptions } from './controller.js';
import { Informer, type IndexFunc } from './informer.js';
import { LeaderElector, type LeaderElectionConfig } from './leaderelection.js';
import { asLogger } from '../../golang/klog.js';

export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
  /** Default true: only the leader runs it. */
  readonly needLeaderElection?: boolean;
}

export type ManagerLeaderElection = Pick<
  LeaderElectionConfig,
  'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs' | 'releaseOnCancel' | 'onNewLeader'
>;

export interface ManagerOptions {
  readonly client: KubeClient;
  /** Without it every runnable runs at once (a single-replica process, or tests). */
  readonly leaderElection?: ManagerLeaderElection;
  readonly clock?: Clock;
  readonly registry?: Registry;
  readonly log?: (msg: string) => void;
  /** Replaces `new Informer(...)`, e.g. to share informers with other managers or fake them. */
  readonly newInformer?: <T extends KubeObject>(opts: InformerRequest<T>) => Informer<T>;
}

export interface InformerRequest<T extends KubeObject = KubeObject> {
  readonly client: KubeClient;
  readonly gvr: GVR;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  readonly resyncPeriodMs?: number;
  readonly clock?: Clock;
  readonly log?: (msg: string) => void;
}

export type InformerSpec<T extends KubeObject> = Omit<InformerRequest<T>, 'client' | 'gvr' | 'clock' | 'log'>;

export class Manager {
  readonly client: KubeClient;
  private readonly clock: Clock;
  private readonly log: (msg: string) => void;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly runnables: Runnable[] = [];
  private started = false;
  private leading = false;

  constructor(private readonly opts: ManagerOptions) {
    this.client = opts.client;
    this.clock = opts.clock ?? realClock;
    this.log = opts.log ?? (() => {});
  }

  /**
   * The shared informer for this resource and selection: one list+watch however many controllers
   * read it. Index functions are fixed by whoever asks first (asking again with others is an error).
   */
  informer<T extends KubeObject = KubeObject>(gvr: GVR, spec: InformerSpec<T> = {}): Informer<T> {
    const id = JSON.stringify([gvr.group, gvr.version, gvr.resource, spec.namespace ?? '', spec.labelSelector ?? '', spec.fieldSelector ?? '']);
    const existing = this.informers.get(id);
    if (existing) {
      if (spec.indexers && Object.keys(spec.indexers).some((k) => !existing.store.hasIndex(k))) {
        throw new Error(`informer for ${gvr.resource} already exists without index(es) ${Object.keys(spec.indexers).join(', ')}`);
      }
      return existing as unknown as Informer<T>;
    }
    if (this.started) throw new Error(`informer for ${gvr.resource} requested after the manager started`);
    const req: InformerRequest<T> = { ...spec, client: this.client, gvr, clock: this.clock, log: this.log };
    const inf = this.opts.newInformer ? this.opts.newInformer(req) : new Informer<T>(req);
    this.informers.set(id, inf as unknown as Informer<KubeObject>);
    return inf;
  }

  /** Builds a controller with the manager's clock, registry and log, and adds it. */
  controller(opts: Omit<ControllerOptions, 'clock' | 'registry' | 'log'> & Partial<Pick<ControllerOptions, 'clock' | 'registry' | 'log'>>): Controller {
    const c = new Controller({
      clock: this.clock,
      log: this.log,
      ...(this.opts.registry ? { registry: this.opts.registry } : {}),
      ...opts,
    });
    this.add(c);
    return c;
  }

  add(r: Runnable): void {
    if (this.started) throw new Error('runnables must be added before the manager starts');
    this.runnables.push(r);
  }

  /** Whether leader-elected runnables are running here now. */
  isLeading(): boolean {
    return this.leading;
  }

  /**
   * Runs until `signal` aborts (or a runnable fails: then everything is stopped and start()
   * rejects with that error). Returns once every informer and runnable has stopped.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('the manager was already started');
    this.started = true;
    const stop = new AbortController();
    // Every informer, runnable and wait listens on this private signal, one each: with more than ten
    // (the quota controller's watchers, the Feature reporter) Node would warn of a listener leak, on
    // stderr, where it breaks `--logging-format=json`.
    setMaxListeners(0, stop.signal);
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) stop.abort();
    let failure: unknown;
    const running: Promise<void>[] = [];
    const track = (what: string, p: Promise<void>): void => {
      running.push(
        p.catch((e: unknown) => {
          asLogger(this.log).error(e, 'Runnable failed', 'runnable', what);
          failure ??= e;
          stop.abort();
        }),
      );
    };
    try {
      for (const inf of this.informers.values()) track(`informer ${inf.gvr.resource}`, inf.run(stop.signal));
      const synced = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(stop.signal)));
      if (synced.every(Boolean) && !stop.signal.aborted) {
        asLogger(this.log).info('Caches synced');
        for (const r of this.runnables.filter((x) => x.needLeaderElection === false)) track('runnable', r.start(stop.signal));
        const elected = this.runnables.filter((x) => x.needLeaderElection !== false);
        if (elected.length) track('leader election', this.runElected(elected, stop.signal));
      }
      await new Promise<void>((r) => (stop.signal.aborted ? r() : stop.signal.addEventListener('abort', () => r(), { once: true })));
    } finally {
      stop.abort();
      await Promise.all(running);
      signal.removeEventListener('abort', onAbort);
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the first failure a runnable threw, rethrown as it was
    if (failure !== undefined) throw failure;
  }

  private async runElected(elected: Runnable[], signal: AbortSignal): Promise<void> {
    const runAll = async (s: AbortSignal): Promise<void> => {
      this.leading = true;
      try {
        await Promise.all(elected.map((r) => r.start(s)));
      } finally {
        this.leading = false;
      }
    };
    const le = this.opts.leaderElection;
    if (!le) return runAll(signal);
    // Leadership can be lost (a partition longer than renewDeadline); the leader-elected work has
    // then stopped, and this process campaigns again instead of exiting as controller-runtime does,
    // because inside `kplane serve` exiting would take the API server down with it.
    while (!signal.aborted) {
      let err: unknown;
      // A failing runnable ends this round (the lease is released) and then the manager.
      const round = new AbortController();
      const onAbort = (): void => round.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const elector = new LeaderElector({
        ...le,
        client: this.client,
        clock: this.clock,
        log: this.log,
        onStartedLeading: (s) =>
          runAll(s).catch((e: unknown) => {
            err = e;
            round.abort();
          }),
      });
      try {
        await elector.run(round.signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the elected runnables threw, rethrown as it was
      if (err !== undefined) throw err;
    }
  }
}
