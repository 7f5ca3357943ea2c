import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExpiredError, StorageUnavailableError, isProgressRequestable, prefixEnd } from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { SortedKeys } from './sorted-keys.js';
import { WatchChannel } from './watch-channel.js';

/** kube's watch cache bounds (defaultLowerBoundCapacity, defaultUpperBoundCapacity) and eventFreshDuration. */
const HISTORY_LOWER_BOUND = 100;
const HISTORY_UPPER_BOUND = 100 * 1024;
const HISTORY_WINDOW_MS = 75_000;

export interface CachingStorageOptions {
  /**
   * Recent events kept per registered prefix for watches that resume, fixed. Default: sized as
   * kube's watch cache sizes itself (historyWindowMs): from 100 events, doubled while the oldest
   * kept event is younger than the window, halved while the event a quarter of the ring from the
   * newest is older, up to 102,400.
   */
  readonly historyCapacity?: number;
  /** The history a dynamically sized ring keeps at least (kube's eventFreshDuration). Default 75,000. */
  readonly historyWindowMs?: number;
  /** Live events a watcher may fall behind before it is ended with WatchOverflowError. Default 1,000. */
  readonly watcherBufferCapacity?: number;
  /** How long a consistent list waits for the cache to catch up before asking the inner store. Default 3,000. */
  readonly consistentReadTimeoutMs?: number;
  /** The ConsistentListFromCache feature gate: off, consistent reads (no resourceVersion) go to storage. Default on. */
  readonly consistentListFromCache?: () => boolean;
  /** Progress interval asked of the inner watch, which keeps the cache's revision fresh. Default 1,000. */
  readonly innerProgressIntervalMs?: number;
  /** Pause before re-watching or re-listing after the inner watch broke. Default 250. */
  readonly retryDelayMs?: number;
  /**
   * The cache self-check (kube's watch cache consistency checker): about this often (the first
   * check after one interval, each wait jittered up to half as long again) every loaded cache is
   * compared with the inner store at the cache's revision. 0 or undefined: never.
   */
  readonly consistencyCheckIntervalMs?: number;
  /** Told every check's outcome, e.g. for a metric and a log line. */
  readonly onConsistencyCheck?: (result: ConsistencyCheckResult) => void;
  /**
   * Told a prefix's ring capacity when its cache is first loaded (`previous` undefined) and after each
   * resize, as kube's watch cache records watch_cache_capacity and its increase and decrease counters.
   */
  readonly onHistoryCapacity?: (prefix: string, capacity: number, previous: number | undefined) => void;
  /** Milliseconds now, for the ages the ring is sized by (tests pass their own). Default Date.now. */
  readonly clock?: () => number;
}

/** One comparison of a prefix's cache with the inner store (kube's consistency.Digest). */
export interface ConsistencyCheckResult {
  readonly prefix: string;
  /** As kube's apiserver_storage_consistency_checks_total labels them. */
  readonly status: 'success' | 'failure' | 'error';
  /** The cache's revision, at which the store was read. */
  readonly revision?: number;
  readonly cacheDigest?: string;
  readonly storageDigest?: string;
  /** Where they first differ: `index=<i> cache=<key>@<modRevision> storage=<key>@<modRevision>` (`<nil>`: missing). */
  readonly diff?: string;
  /** Why no comparison could be made (status 'error'), e.g. the revision was compacted. */
  readonly error?: unknown;
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

const MAX_TIMER_MS = 2 ** 31 - 1;

interface CacheWatcher {
  readonly prefix: string;
  /** Events at or below this revision were already seen by the client. */
  readonly afterRevision: number;
  readonly channel: WatchChannel<WatchEvent>;
  readonly progressIntervalMs: number;
  lastSentAtMs: number;
}

/**
 * A Storage that answers latest lists and watches for registered prefixes from memory and passes
 * everything else (gets, writes, old-revision lists, unregistered prefixes) to the inner store.
 * `close()` also closes the inner store.
 */
export class CachingStorage implements Storage {
  private readonly caches = new Map<string, PrefixCache>();
  private closed = false;
  private readonly stopCompactionListener: (() => void) | undefined;
  /** Prefixes whose last self-check found the cache different from the store, with that result. */
  private readonly diverged = new Map<string, ConsistencyCheckResult>();
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly inner: Storage,
    private readonly opts: CachingStorageOptions = {},
  ) {
    // The backend's own compaction schedule (SQLite, etcd) never passes through compact() here.
    this.stopCompactionListener = inner.onCompacted?.((revision) => this.forgetHistoryUpTo(revision));
    const checkMs = opts.consistencyCheckIntervalMs ?? 0;
    if (checkMs > 0 && !Number.isNaN(checkMs)) this.scheduleConsistencyCheck(checkMs);
  }

  /**
   * Compares every loaded cache with the inner store now: the cache's keys and mod revisions at its
   * revision R against a list of the store at R. A cache found different answers no more lists
   * (the store does, as kube's cacher delegates once inconsistent) and is reported by
   * `divergences()` until a later check finds it equal again.
   */
  async checkConsistency(): Promise<ConsistencyCheckResult[]> {
    const results: ConsistencyCheckResult[] = [];
    for (const [prefix, cache] of this.caches) {
      if (this.closed) break;
      const result = await cache.checkConsistency();
      if (result.status === 'failure') this.diverged.set(prefix, result);
      else if (result.status === 'success') this.diverged.delete(prefix);
      results.push(result);
      this.opts.onConsistencyCheck?.(result);
    }
    return results;
  }

  /** The failed checks of caches still considered different from the store (for /readyz). */
  divergences(): ConsistencyCheckResult[] {
    return [...this.diverged.values()];
  }

  private scheduleConsistencyCheck(intervalMs: number): void {
    // Node fires a timer past 2^31-1 ms after 1 ms instead: cap the wait (about 24.8 days).
    const delay = Math.min(intervalMs * (1 + Math.random() / 2), MAX_TIMER_MS);
    this.checkTimer = setTimeout(() => {
      void this.checkConsistency().finally(() => {
        if (!this.closed) this.scheduleConsistencyCheck(intervalMs);
      });
    }, delay);
    this.checkTimer.unref();
  }

  /**
   * Starts caching keys under `prefix` (ending in '/', e.g. '/registry/configmaps/'). Resolves once
   * the first list is loaded; requests before that wait for it (lists at most for the read timeout).
   */
  register(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`cacher prefix must end with '/': ${prefix}`);
    let cache = this.caches.get(prefix);
    if (cache === undefined) {
      cache = new PrefixCache(this.inner, prefix, this.opts, () => this.progressRequestsSafe());
      this.caches.set(prefix, cache);
      cache.start();
    }
    return cache.ready;
  }

  /**
   * A consistent get. When the inner store's revision is local (SQLite, memory), a loaded cache
   * that has applied everything up to that revision answers it from memory; otherwise, and while
   * the cache loads or lags, the inner store does.
   */
  async get(key: string): Promise<KV | undefined> {
    const peeked = (await this.localCacheCaughtUp(key))?.peek(key);
    return peeked !== undefined ? peeked.kv : this.inner.get(key);
  }

  peek(key: string): { kv: KV | undefined } | undefined {
    return this.cacheFor(key)?.peek(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const cache = this.cacheFor(prefix);
    if (cache === undefined || (opts.revision !== undefined && opts.revision > 0) || this.diverged.has(cache.prefix)) return this.inner.list(prefix, opts);
    return (await this.caughtUp(cache)) ? cache.list(prefix, opts) : this.inner.list(prefix, opts);
  }

  /**
   * Counted from memory under the same rule as get: a SQLite COUNT over a large prefix runs on the
   * event loop and stalled every request for tens of milliseconds each time the object-count
   * metric was refreshed.
   */
  async count(prefix: string): Promise<number> {
    return (await this.localCacheCaughtUp(prefix))?.count(prefix) ?? this.inner.count(prefix);
  }

  /**
   * Whether `cache` has applied everything up to the store's current revision. It waits a while
   * for that, asking the inner watch for progress, only where progress answers are safe; else
   * (etcd before 3.4.31) a cache behind the store's revision is passed over at once, as
   * kube-apiserver passes consistent lists to etcd without the RequestWatchProgress feature.
   */
  private async caughtUp(cache: PrefixCache): Promise<boolean> {
    if (this.opts.consistentListFromCache?.() === false) return false;
    const atLeast = await this.inner.currentRevision();
    const waitMs = this.progressRequestsSafe() ? (this.opts.consistentReadTimeoutMs ?? 3_000) : 0;
    return cache.waitForRevision(atLeast, waitMs);
  }

  private progressRequestsSafe(): boolean {
    return this.inner.watchProgressRequestsSafe?.() ?? true;
  }

  /**
   * The loaded cache covering `keyOrPrefix`, once caught up, when the store's revision is local;
   * undefined otherwise (etcd: other API servers write too, so only a round trip is consistent).
   */
  private async localCacheCaughtUp(keyOrPrefix: string): Promise<PrefixCache | undefined> {
    if (!this.inner.revisionIsLocal) return undefined;
    const cache = this.cacheFor(keyOrPrefix);
    if (cache === undefined || !cache.isLoaded()) return undefined;
    return (await this.caughtUp(cache)) ? cache : undefined;
  }

  create(key: string, value: Uint8Array): Promise<KV> {
    return this.inner.create(key, value);
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    return this.inner.update(key, value, expectedModRevision);
  }

  delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    return this.inner.delete(key, expectedModRevision);
  }

  watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
    const cache = this.cacheFor(prefix);
    return cache === undefined ? this.inner.watch(prefix, opts) : cache.watch(prefix, opts);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  oldestRevision(): Promise<number> {
    return this.inner.oldestRevision();
  }

  async compact(revision: number): Promise<void> {
    await this.inner.compact(revision);
    this.forgetHistoryUpTo(revision);
  }

  onCompacted(listener: (revision: number) => void): () => void {
    return this.inner.onCompacted?.(listener) ?? (() => undefined);
  }

  /** Our history must not answer what the store no longer can (kube clients expect the 410). */
  private forgetHistoryUpTo(revision: number): void {
    for (const cache of this.caches.values()) cache.forgetHistoryUpTo(revision);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopCompactionListener?.();
    if (this.checkTimer !== undefined) clearTimeout(this.checkTimer);
    for (const cache of this.caches.values()) cache.stop();
    await this.inner.close();
  }

  private cacheFor(prefix: string): PrefixCache | undefined {
    for (const [registered, cache] of this.caches) if (prefix.startsWith(registered)) return cache;
    return undefined;
  }
}

/**
 * The cache of one registered prefix: current KVs (a map plus a sorted key array for paging), a
 * ring of recent events, and the watchers. It is fed by one inner list + watch; `revision` is the
 * revision up to which it has applied everything.
 */
class PrefixCache {
  readonly ready: Promise<void>;
  private markReady!: () => void;
  private readonly items = new Map<string, KV>();
  private sortedKeys = new SortedKeys();
  private revision = 0;
  private loaded = false;
  /** The ring holds every event after this revision. */
  private historyFloor = 0;
  /**
   * The store's compacted revision as last told: may be ahead of `revision` (the compactor's own
   * writes lie outside every prefix), so it is kept apart from historyFloor, which a watch "from
   * now" must never be below.
   */
  private compactedRevision = 0;
  private ring: (ChangeEvent | undefined)[];
  /** When each ring slot's event was applied (ms), for the dynamic sizing. */
  private ringTimes: number[];
  private ringStart = 0;
  private ringSize = 0;
  /** Fixed capacity (historyCapacity), or undefined: sized by age as kube's watch cache is. */
  private readonly fixedCapacity: number | undefined;
  private readonly watchers = new Set<CacheWatcher>();
  private revisionWaiters: { revision: number; resolve: (reached: boolean) => void }[] = [];
  private readonly stopper = new AbortController();
  private innerStream: AsyncIterable<WatchEvent> | undefined;
  private progressTicker: NodeJS.Timeout | undefined;
  private progressTickMs = Infinity;

  constructor(
    private readonly inner: Storage,
    readonly prefix: string,
    private readonly opts: CachingStorageOptions,
    /** Whether the inner watch may be asked for progress (see Storage.watchProgressRequestsSafe). */
    private readonly mayRequestProgress: () => boolean,
  ) {
    this.fixedCapacity = opts.historyCapacity === undefined ? undefined : Math.max(1, opts.historyCapacity);
    const capacity = this.fixedCapacity ?? HISTORY_LOWER_BOUND;
    this.ring = new Array<ChangeEvent | undefined>(capacity);
    this.ringTimes = new Array<number>(capacity).fill(0);
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
  }

  peek(key: string): { kv: KV | undefined } | undefined {
    return this.isLoaded() ? { kv: this.items.get(key) } : undefined;
  }

  /** Keys under `prefix` now, or undefined when not loaded. */
  count(prefix: string): number | undefined {
    if (!this.isLoaded()) return undefined;
    return this.sortedKeys.rank(prefixEnd(prefix)) - this.sortedKeys.rank(prefix);
  }

  isLoaded(): boolean {
    return this.loaded && !this.stopper.signal.aborted;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopper.abort();
    if (this.progressTicker !== undefined) clearInterval(this.progressTicker);
    for (const w of [...this.watchers]) w.channel.fail(new StorageUnavailableError('cacher closed'));
    for (const waiter of this.revisionWaiters) waiter.resolve(false);
    this.revisionWaiters = [];
  }

  /** Resolves true once the cache has applied everything up to `revision`, false on timeout. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.loaded && this.revision >= revision) return Promise.resolve(true);
    if (timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.revisionWaiters = this.revisionWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        revision,
        resolve: (reached: boolean) => {
          clearTimeout(timer);
          resolve(reached);
        },
      };
      this.revisionWaiters.push(waiter);
      // Writes outside this prefix move the store's revision without sending us events.
      this.requestInnerProgress();
    });
  }

  list(prefix: string, opts: ListOptions): ListResult {
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const first = this.sortedKeys.rank(from);
    const end = this.sortedKeys.rank(prefixEnd(prefix));
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
    const stop = Math.max(first, Math.min(end, first + limit));
    const items: KV[] = [];
    for (const key of this.sortedKeys.from(from, stop - first)) items.push(this.items.get(key) as KV);
    const remaining = end - stop;
    return remaining > 0 ? { items, revision: this.revision, more: true, remaining } : { items, revision: this.revision, more: false };
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    const baseCapacity = this.opts.watcherBufferCapacity ?? 1_000;
    let watcher: CacheWatcher | undefined;
    const channel = new WatchChannel<WatchEvent>({
      prefix,
      capacity: baseCapacity,
      signal: opts.signal,
      onClose: () => {
        if (watcher !== undefined) this.watchers.delete(watcher);
      },
      onRequestProgress: () => {
        if (watcher !== undefined && this.revision >= watcher.afterRevision) channel.push({ type: 'progress', revision: this.revision });
      },
    });
    if (channel.isClosed) return channel;
    const attach = (): void => {
      if (channel.isClosed) return;
      const afterRevision = opts.afterRevision > 0 ? opts.afterRevision : this.revision;
      if (afterRevision < this.historyFloor || (opts.afterRevision > 0 && opts.afterRevision < this.compactedRevision)) {
        // kube answers 410 "too old resource version" here; the client re-lists.
        channel.fail(new ExpiredError(afterRevision, Math.max(this.historyFloor, this.compactedRevision) + 1));
        return;
      }
      // Replay and registration in one synchronous step: no event can be applied in between.
      const replay = this.eventsAfter(afterRevision, prefix);
      channel.raiseCapacity(replay.length);
      for (const event of replay) channel.push(event);
      watcher = { prefix, afterRevision, channel, progressIntervalMs: opts.progressIntervalMs ?? 0, lastSentAtMs: Date.now() };
      this.watchers.add(watcher);
      if (watcher.progressIntervalMs > 0) this.ensureProgressTicker(watcher.progressIntervalMs);
    };
    if (this.loaded) attach();
    else void this.ready.then(attach);
    return channel;
  }

  /** See CachingStorage.checkConsistency. */
  async checkConsistency(): Promise<ConsistencyCheckResult> {
    const prefix = this.prefix;
    if (!this.isLoaded()) return { prefix, status: 'error', error: new Error('cache is not ready') };
    // A synchronous snapshot: no event is applied while it is taken.
    const { items: cached, revision } = this.list(prefix, {});
    const cacheHash = createHash('sha256');
    for (const kv of cached) cacheHash.update(`${kv.key}\0${kv.modRevision}\n`);
    const storageHash = createHash('sha256');
    let index = 0;
    let diff: string | undefined;
    const visit = (kv: KV): void => {
      storageHash.update(`${kv.key}\0${kv.modRevision}\n`);
      if (diff === undefined) {
        const mine = cached[index];
        if (mine === undefined || mine.key !== kv.key || mine.modRevision !== kv.modRevision) diff = diffDetail(index, mine, kv);
      }
      index++;
    };
    try {
      let page = await this.inner.list(prefix, { limit: 10_000, ...(revision > 0 ? { revision } : {}) });
      for (;;) {
        for (const kv of page.items) visit(kv);
        if (!page.more) break;
        const last = page.items.at(-1) as KV;
        page = await this.inner.list(prefix, { limit: 10_000, revision: page.revision, startKey: `${last.key}\0` });
      }
      if (revision > 0 && page.revision !== revision) throw new Error(`storage answered at revision ${page.revision}, not at the cache's ${revision}`);
    } catch (error) {
      return { prefix, status: 'error', revision, error };
    }
    if (diff === undefined && index < cached.length) diff = diffDetail(index, cached[index], undefined);
    const cacheDigest = cacheHash.digest('hex').slice(0, 16);
    const storageDigest = storageHash.digest('hex').slice(0, 16);
    return {
      prefix,
      status: diff === undefined ? 'success' : 'failure',
      revision,
      cacheDigest,
      storageDigest,
      ...(diff !== undefined ? { diff } : {}),
    };
  }

  forgetHistoryUpTo(revision: number): void {
    while (this.ringSize > 0 && (this.ring[this.ringStart] as ChangeEvent).revision <= revision) this.dropOldest();
    if (revision > this.historyFloor) this.historyFloor = Math.min(revision, this.revision);
    if (revision > this.compactedRevision) this.compactedRevision = revision;
  }

  /** List, then watch from the list's revision; on a broken watch resume, on an expired one re-list. */
  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.load();
          needList = false;
          this.markReady();
        }
        const streamStop = new AbortController();
        const stopStream = (): void => streamStop.abort();
        signal.addEventListener('abort', stopStream, { once: true });
        const stream = this.inner.watch(this.prefix, {
          afterRevision: this.revision,
          progressIntervalMs: this.opts.innerProgressIntervalMs ?? 1_000,
          signal: streamStop.signal,
        });
        // A list of an empty store has revision 0, and a watch "after 0" means "from now on": a
        // write between that list and this watch would be lost. Re-list if the store has moved.
        if (this.revision === 0 && (await this.inner.currentRevision()) > 0) {
          signal.removeEventListener('abort', stopStream);
          streamStop.abort();
          needList = true;
          continue;
        }
        this.innerStream = stream;
        // Waiters that arrived while no stream existed never asked for progress.
        if (this.revisionWaiters.length > 0) this.requestInnerProgress();
        try {
          for await (const event of stream) this.apply(event);
        } finally {
          signal.removeEventListener('abort', stopStream);
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof ExpiredError) needList = true;
      }
      this.innerStream = undefined;
      if (signal.aborted) return;
      await sleep(this.opts.retryDelayMs ?? 250, undefined, { signal }).catch(() => undefined);
    }
  }

  /** Replaces the cache with a fresh list; watchers of the old history cannot be continued. */
  private async load(): Promise<void> {
    const items: KV[] = [];
    let listed = await this.inner.list(this.prefix, { limit: 10_000 });
    const revision = listed.revision;
    items.push(...listed.items);
    while (listed.more) {
      const last = listed.items.at(-1) as KV;
      listed = await this.inner.list(this.prefix, { limit: 10_000, revision, startKey: `${last.key}\0` });
      items.push(...listed.items);
    }
    const wasLoaded = this.loaded;
    this.items.clear();
    for (const kv of items) this.items.set(kv.key, kv);
    this.sortedKeys = new SortedKeys(items.map((kv) => kv.key));
    this.ring.fill(undefined);
    this.ringStart = 0;
    this.ringSize = 0;
    this.revision = revision;
    this.historyFloor = revision;
    this.loaded = true;
    if (wasLoaded) {
      for (const w of [...this.watchers]) w.channel.fail(new ExpiredError(w.afterRevision, revision + 1));
    } else {
      this.opts.onHistoryCapacity?.(this.prefix, this.ring.length, undefined);
    }
    this.resolveWaiters();
  }

  /**
   * Asks the inner watch for a progress event, whose revision the cache then takes as reached.
   * Never where the answer may come ahead of events still to be sent: the cache would skip them.
   */
  private requestInnerProgress(): void {
    if (isProgressRequestable(this.innerStream) && this.mayRequestProgress()) this.innerStream.requestProgress();
  }

  private apply(event: WatchEvent): void {
    if (event.type === 'progress') {
      if (event.revision > this.revision) {
        this.revision = event.revision;
        this.resolveWaiters();
      }
      return;
    }
    if (event.revision <= this.revision) return;
    const key = event.kv.key;
    if (event.type === 'put') {
      if (!this.items.has(key)) this.sortedKeys.add(key);
      this.items.set(key, event.kv);
    } else if (this.items.delete(key)) {
      this.sortedKeys.delete(key);
    }
    const now = Date.now();
    const appliedAt = this.opts.clock?.() ?? now;
    if (this.ringSize === this.ring.length) {
      if (this.fixedCapacity === undefined) this.resizeRing(appliedAt);
      if (this.ringSize === this.ring.length) this.dropOldest();
    }
    const slot = (this.ringStart + this.ringSize) % this.ring.length;
    this.ring[slot] = event;
    this.ringTimes[slot] = appliedAt;
    this.ringSize++;
    this.revision = event.revision;
    for (const w of this.watchers) {
      if (event.revision > w.afterRevision && key.startsWith(w.prefix)) {
        w.lastSentAtMs = now;
        w.channel.push(event);
      }
    }
    if (this.revisionWaiters.length > 0) this.resolveWaiters();
  }

  /**
   * kube's watchCache.resizeCacheLocked, asked when the ring is full: double it while its oldest
   * event is younger than the window (a watch resuming within the window finds its events), halve
   * it while the event a quarter of the ring from the newest is older (memory follows the rate).
   */
  private resizeRing(now: number): void {
    const capacity = this.ring.length;
    const windowMs = this.opts.historyWindowMs ?? HISTORY_WINDOW_MS;
    if (now - (this.ringTimes[this.ringStart] ?? 0) < windowMs) {
      const grown = Math.min(capacity * 2, HISTORY_UPPER_BOUND);
      if (grown > capacity) this.resizeRingTo(grown);
      return;
    }
    const quarterFromNewest = (this.ringStart + this.ringSize - Math.floor(capacity / 4)) % capacity;
    if (now - (this.ringTimes[quarterFromNewest] ?? 0) > windowMs) {
      const shrunk = Math.max(Math.floor(capacity / 2), HISTORY_LOWER_BOUND);
      if (shrunk < capacity) this.resizeRingTo(shrunk);
    }
  }

  /** Moves the newest events (as many as fit) into a ring of `capacity`; older ones leave history. */
  private resizeRingTo(capacity: number): void {
    const previous = this.ring.length;
    while (this.ringSize > capacity) this.dropOldest();
    const ring = new Array<ChangeEvent | undefined>(capacity);
    const times = new Array<number>(capacity).fill(0);
    for (let i = 0; i < this.ringSize; i++) {
      const from = (this.ringStart + i) % this.ring.length;
      ring[i] = this.ring[from];
      times[i] = this.ringTimes[from] ?? 0;
    }
    this.ring = ring;
    this.ringTimes = times;
    this.ringStart = 0;
    this.opts.onHistoryCapacity?.(this.prefix, capacity, previous);
  }

  /** The ring's capacity now (for tests and metrics). */
  historyCapacity(): number {
    return this.ring.length;
  }

  private dropOldest(): void {
    const oldest = this.ring[this.ringStart] as ChangeEvent;
    this.ring[this.ringStart] = undefined;
    this.ringStart = (this.ringStart + 1) % this.ring.length;
    this.ringSize--;
    this.historyFloor = Math.max(this.historyFloor, oldest.revision);
  }

  /** Events with revision > afterRevision under `prefix`, oldest first (binary search on revision). */
  private eventsAfter(afterRevision: number, prefix: string): ChangeEvent[] {
    const at = (i: number): ChangeEvent => this.ring[(this.ringStart + i) % this.ring.length] as ChangeEvent;
    let low = 0;
    let high = this.ringSize;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (at(mid).revision <= afterRevision) low = mid + 1;
      else high = mid;
    }
    const out: ChangeEvent[] = [];
    for (let i = low; i < this.ringSize; i++) {
      const event = at(i);
      if (event.kv.key.startsWith(prefix)) out.push(event);
    }
    return out;
  }

  private resolveWaiters(): void {
    const reached = this.revisionWaiters.filter((w) => w.revision <= this.revision);
    if (reached.length === 0) return;
    this.revisionWaiters = this.revisionWaiters.filter((w) => w.revision > this.revision);
    for (const w of reached) w.resolve(true);
  }

  /** One ticker per prefix sends bookmarks to idle watchers; thousands of watchers, one timer. */
  private ensureProgressTicker(intervalMs: number): void {
    const tickMs = Math.max(20, Math.min(intervalMs, 1_000));
    if (tickMs >= this.progressTickMs) return;
    if (this.progressTicker !== undefined) clearInterval(this.progressTicker);
    this.progressTickMs = tickMs;
    this.progressTicker = setInterval(() => {
      const now = Date.now();
      for (const w of this.watchers) {
        if (w.progressIntervalMs > 0 && now - w.lastSentAtMs >= w.progressIntervalMs && w.channel.buffered === 0 && this.revision >= w.afterRevision) {
          w.lastSentAtMs = now;
          w.channel.push({ type: 'progress', revision: this.revision });
        }
      }
    }, tickMs);
    this.progressTicker.unref();
  }
}

function diffDetail(index: number, cached: KV | undefined, stored: KV | undefined): string {
  const show = (kv: KV | undefined): string => (kv === undefined ? '<nil>' : `${kv.key}@${kv.modRevision}`);
  return `index=${index} cache=${show(cached)} storage=${show(stored)}`;
}
