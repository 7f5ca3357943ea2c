// client-go's work queue (util/workqueue): a FIFO of keys that de-duplicates and never hands one
// key to two workers at once, plus delayed adds and per-key rate-limited retries.
import { realClock, type Clock, type TimerHandle } from './clock.js';

/** How long to wait before a key's next retry. */
export interface RateLimiter<K> {
  whenMs(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
}

/** base·2^failures per key, capped (ItemExponentialFailureRateLimiter). */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}
  whenMs(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    // 2^n overflows to Infinity long before it matters; the cap keeps it finite.
    return Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
  }
  forget(key: K): void {
    this.failures.delete(key);
  }
  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * An overall token bucket (qps, burst) shared by all keys, as golang.org/x/time/rate's Reserve:
 * each retry takes a token; when the bucket is empty the wait grows by 1/qps per retry, so a
 * storm of failing keys is spread out even while each key's own backoff is still short.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }
  whenMs(_key: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
  forget(_key: K): void {}
  numRequeues(_key: K): number {
    return 0;
  }
}

/** The longest of several limiters' delays (MaxOfRateLimiter). */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }
  whenMs(key: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.whenMs(key));
    return max;
  }
  forget(key: K): void {
    for (const l of this.limiters) l.forget(key);
  }
  numRequeues(key: K): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

/** client-go's DefaultControllerRateLimiter: per key 5 ms → 1000 s, overall 10 qps with a burst of 100. */
export function defaultControllerRateLimiter<K>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ItemExponentialFailureRateLimiter<K>(5, 1000_000), new BucketRateLimiter<K>(10, 100, clock));
}

/** Hooks for queue metrics (client-go's MetricsProvider); all optional. */
export interface WorkQueueMetrics {
  depth?(n: number): void;
  added?(): void;
  /** Time a key waited in the queue before a worker took it. */
  queueLatencySeconds?(s: number): void;
  /** Time between get() and done() for one key. */
  workDurationSeconds?(s: number): void;
  retried?(): void;
}

export interface WorkQueueOptions<K> {
  readonly clock?: Clock;
  readonly rateLimiter?: RateLimiter<K>;
  readonly metrics?: WorkQueueMetrics;
}

export class WorkQueue<K = string> {
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: WorkQueueMetrics;
  // `items` from `head` on is the ready FIFO; `dirty` is every key that needs processing (queued
  // or waiting for its current holder to finish); `processing` is keys a worker holds.
  private items: K[] = [];
  private head = 0;
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly queuedAt = new Map<K, number>();
  private readonly startedAt = new Map<K, number>();
  private readonly waiting = new Map<K, { at: number; timer: TimerHandle }>();
  private waiters: ((k: K | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shutting = false;

  constructor(opts: WorkQueueOptions<K> = {}) {
    this.clock = opts.clock ?? realClock;
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
    this.metrics = opts.metrics ?? {};
  }

  get shuttingDown(): boolean {
    return this.shutting;
  }

  /** Keys ready to be handed out (not those processing or waiting on a delay). */
  len(): number {
    return this.items.length - this.head;
  }

  add(key: K): void {
    if (this.shutting) return;
    if (this.dirty.has(key)) return;
    this.metrics.added?.();
    this.dirty.add(key);
    this.queuedAt.set(key, this.clock.now());
    // A key being processed stays out of the FIFO: done() puts it back, so that no two workers
    // ever hold the same key and the change that re-dirtied it is still seen afterwards.
    if (this.processing.has(key)) return;
    this.items.push(key);
    this.metrics.depth?.(this.len());
    this.wake();
  }

  /** Adds `key` once `ms` have passed; a pending earlier add for the same key wins. */
  addAfter(key: K, ms: number): void {
    if (this.shutting) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const cur = this.waiting.get(key);
    if (cur && cur.at <= at) return;
    cur?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { at, timer });
  }

  /** Re-adds after the rate limiter's delay for this key (a failed attempt). */
  addRateLimited(key: K): void {
    if (this.shutting) return;
    this.metrics.retried?.();
    this.addAfter(key, this.rateLimiter.whenMs(key));
  }

  /** Resets the key's backoff (it succeeded, or will not be retried). */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key, waiting if none is ready; `undefined` once shut down and empty. The caller must
   * call done(key) when finished with it.
   */
  get(): Promise<K | undefined> {
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: K): void {
    if (!this.processing.delete(key)) return;
    const started = this.startedAt.get(key);
    this.startedAt.delete(key);
    if (started !== undefined) this.metrics.workDurationSeconds?.((this.clock.now() - started) / 1000);
    if (this.dirty.has(key)) {
      this.items.push(key);
      this.metrics.depth?.(this.len());
      this.wake();
    }
    if (this.processing.size === 0 && this.drainWaiters.length) {
      for (const w of this.drainWaiters.splice(0)) w();
    }
  }

  /** Stops accepting keys and drops delayed ones; get() hands out what is queued, then undefined. */
  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    for (const { timer } of this.waiting.values()) timer.cancel();
    this.waiting.clear();
    // Waiters exist only while the FIFO is empty, so they all get "shut down".
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** shutDown(), then resolves once every key handed out has been done(). */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return;
    await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  private take(): K {
    const key = this.items[this.head]!;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    const queued = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    const now = this.clock.now();
    if (queued !== undefined) this.metrics.queueLatencySeconds?.((now - queued) / 1000);
    this.startedAt.set(key, now);
    this.metrics.depth?.(this.len());
    return key;
  }

  private wake(): void {
    while (this.waiters.length && this.len() > 0) this.waiters.shift()!(this.take());
  }
}
