// A shared informer (client-go tools/cache): a reflector that lists (in pages) and then watches
// from the list's resourceVersion, an indexed local cache, and event handlers. Events are ordered
// per object as the server sent them; handlers run synchronously and must only enqueue.
import { isStatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { realClock, sleep, type Clock, type TimerHandle } from './clock.js';
import { asLogger, type Logger } from '../../golang/klog.js';

/** `namespace/name`, or `name` for cluster-scoped objects (MetaNamespaceKeyFunc). */
export function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export type IndexFunc<T> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = 'namespace';

const namespaceIndex: IndexFunc<KubeObject> = (o) => [o.metadata?.namespace ?? ''];

/** The local cache: objects by key plus secondary indexes. Objects are shared: never mutate them. */
export class Store<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers: ReadonlyMap<string, IndexFunc<T>>;
  // index name → index value → keys
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Readonly<Record<string, IndexFunc<T>>> = {}) {
    this.indexers = new Map(Object.entries({ [NAMESPACE_INDEX]: namespaceIndex, ...indexers }));
    for (const name of this.indexers.keys()) this.indices.set(name, new Map());
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  hasIndex(indexName: string): boolean {
    return this.indices.has(indexName);
  }

  /** Objects whose index function `indexName` yields `value` (e.g. byIndex('namespace', 'default')). */
  byIndex(indexName: string, value: string): T[] {
    const idx = this.indices.get(indexName);
    if (!idx) throw new Error(`index "${indexName}" does not exist`);
    return [...(idx.get(value) ?? [])].map((k) => this.items.get(k)!);
  }

  /** Adds or replaces; returns the previous object. */
  upsert(key: string, obj: T): T | undefined {
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        let set = idx.get(v);
        if (!set) idx.set(v, (set = new Set()));
        set.add(key);
      }
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const set = idx.get(v);
        set?.delete(key);
        if (set?.size === 0) idx.delete(v);
      }
    }
  }
}

/** Handlers run inline on the informer's loop: they must return at once (enqueue, never await). */
export interface EventHandlers<T extends KubeObject = KubeObject> {
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called with old === new on resync, and for every object still present after a relist. */
  onUpdate?(oldObj: T, newObj: T): void;
  /** `finalStateUnknown`: the deletion was noticed by a relist, `obj` is the last state seen. */
  onDelete?(obj: T, finalStateUnknown: boolean): void;
}

export interface InformerOptions<T extends KubeObject> {
  readonly client: KubeClient;
  readonly gvr: GVR;
  /** Only this namespace; default all. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** List page size (limit); default 500, 0 = unpaged. */
  readonly pageSize?: number;
  /** Calls onUpdate(obj, obj) for every cached object this often; default never. */
  readonly resyncPeriodMs?: number;
  readonly indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** Watch requests ask the server to end after a random time in [min, 2·min); default 300 s. */
  readonly minWatchTimeoutSeconds?: number;
  /** Cache PartialObjectMetadata only (client-go's metadata informers): far less memory for big resources. */
  readonly metadataOnly?: boolean;
  /** Backoff between failed list/watch attempts: initial (default 800 ms), doubling to max (30 s). */
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  readonly clock?: Clock;
  readonly log?: (msg: string) => void;
}

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  private readonly handlers = new Set<EventHandlers<T>>();
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private rv: string | undefined;
  private running = false;
  private readonly clock: Clock;
  private readonly log: Logger;
  private lists = 0;

  constructor(private readonly opts: InformerOptions<T>) {
    this.store = new Store<T>(opts.indexers);
    this.clock = opts.clock ?? realClock;
    this.log = asLogger(opts.log);
  }

  get gvr(): GVR {
    return this.opts.gvr;
  }

  /** The resourceVersion of the last list, watch event or bookmark applied. */
  get lastSyncResourceVersion(): string | undefined {
    return this.rv;
  }

  /** How many full lists the reflector has made (the first, plus one per 410). */
  get listCount(): number {
    return this.lists;
  }

  /**
   * Registers handlers; returns a function that removes them. Added after the first sync, they
   * get onAdd for everything already cached, as client-go's late-registered handlers do.
   */
  addEventHandler(h: EventHandlers<T>): () => void {
    this.handlers.add(h);
    if (this.synced) for (const o of this.store.list()) this.call(() => h.onAdd?.(o, true));
    return () => this.handlers.delete(h);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** True once the first list is in the cache and delivered; false if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  /** Lists and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`informer for ${this.opts.gvr.resource} is already running`);
    this.running = true;
    let resync: TimerHandle | undefined;
    const scheduleResync = (): void => {
      const period = this.opts.resyncPeriodMs;
      if (!period || signal.aborted) return;
      resync = this.clock.setTimer(() => {
        if (this.synced) for (const o of this.store.list()) this.emitUpdate(o, o);
        scheduleResync();
      }, period);
    };
    scheduleResync();
    let needList = true;
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          if (needList) {
            await this.listAndReplace(signal);
            needList = false;
          }
          const { events, durationMs } = await this.watchOnce(signal);
          // A watch that closes at once without events is a failing server or proxy; going
          // straight back would spin, so it counts as a failure (client-go's "very short watch").
          if (events === 0 && durationMs < 1000 && !signal.aborted) throw new Error('very short watch');
          failures = 0;
        } catch (e) {
          if (signal.aborted) break;
          if (isStatusError(e) && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone')) {
            // Our resourceVersion is older than the server's history: only a fresh list can
            // tell us what changed (and what was deleted) meanwhile.
            this.log.info('Watch ended: resource version too old; relisting', 'informer', this.what(), 'reason', e.message);
            needList = true;
            continue;
          }
          failures++;
          const initial = this.opts.backoffInitialMs ?? 800;
          const delay = Math.min(initial * 2 ** (failures - 1), this.opts.backoffMaxMs ?? 30_000);
          this.log.error(e, 'Failed to list or watch; retrying', 'informer', this.what(), 'delayMs', Math.round(delay));
          await sleep(this.clock, delay * (0.5 + Math.random() * 0.5), signal);
        }
      }
    } finally {
      resync?.cancel();
      this.running = false;
    }
  }

  private what(): string {
    const g = this.opts.gvr;
    return `informer ${g.group ? `${g.resource}.${g.group}` : g.resource}${this.opts.namespace ? ` in ${this.opts.namespace}` : ''}`;
  }

  private selectors(): { labelSelector?: string; fieldSelector?: string; metadataOnly?: boolean } {
    return {
      ...(this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {}),
      ...(this.opts.fieldSelector ? { fieldSelector: this.opts.fieldSelector } : {}),
      ...(this.opts.metadataOnly ? { metadataOnly: true } : {}),
    };
  }

  private async listAll(signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const { client, gvr, namespace } = this.opts;
    const limit = this.opts.pageSize ?? 500;
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      let page;
      try {
        page = await client.list<T>(gvr, namespace, { ...this.selectors(), ...(limit > 0 ? { limit } : {}), ...(cont ? { continue: cont } : {}), signal });
      } catch (e) {
        // The continue token outlived the server's history: one unpaged list is still consistent.
        if (cont && isStatusError(e) && e.code === 410) return this.listUnpaged(signal);
        throw e;
      }
      items.push(...page.items);
      rv = page.metadata.resourceVersion ?? rv;
      cont = page.metadata.continue || undefined;
    } while (cont);
    return { items, resourceVersion: rv };
  }

  private async listUnpaged(signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const page = await this.opts.client.list<T>(this.opts.gvr, this.opts.namespace, { ...this.selectors(), signal });
    return { items: page.items, resourceVersion: page.metadata.resourceVersion ?? '' };
  }

  private async listAndReplace(signal: AbortSignal): Promise<void> {
    const { items, resourceVersion } = await this.listAll(signal);
    if (signal.aborted) return;
    this.lists++;
    const fresh = new Set<string>();
    for (const obj of items) {
      const key = keyOf(obj);
      fresh.add(key);
      const old = this.store.upsert(key, obj);
      if (old) this.emitUpdate(old, obj);
      else this.emitAdd(obj, !this.synced);
    }
    for (const key of this.store.keys()) {
      if (fresh.has(key)) continue;
      const old = this.store.remove(key)!;
      this.emitDelete(old, true);
    }
    this.rv = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<{ events: number; durationMs: number }> {
    const started = this.clock.now();
    const min = this.opts.minWatchTimeoutSeconds ?? 300;
    let events = 0;
    const stream = this.opts.client.watch<T>(this.opts.gvr, this.opts.namespace, {
      ...this.selectors(),
      ...(this.rv ? { resourceVersion: this.rv } : {}),
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(min * (1 + Math.random())),
      signal,
    });
    for await (const ev of stream) {
      events++;
      const obj = ev.object;
      const rv = obj.metadata?.resourceVersion;
      switch (ev.type) {
        case 'ADDED':
        case 'MODIFIED': {
          const old = this.store.upsert(keyOf(obj), obj);
          if (old) this.emitUpdate(old, obj);
          else this.emitAdd(obj, false);
          break;
        }
        case 'DELETED':
          this.store.remove(keyOf(obj));
          this.emitDelete(obj, false);
          break;
        case 'BOOKMARK':
          break;
      }
      if (rv) this.rv = rv;
    }
    return { events, durationMs: this.clock.now() - started };
  }

  private emitAdd(obj: T, initial: boolean): void {
    for (const h of this.handlers) this.call(() => h.onAdd?.(obj, initial));
  }
  private emitUpdate(old: T, obj: T): void {
    for (const h of this.handlers) this.call(() => h.onUpdate?.(old, obj));
  }
  private emitDelete(obj: T, unknown: boolean): void {
    for (const h of this.handlers) this.call(() => h.onDelete?.(obj, unknown));
  }

  // One handler's bug must not stop the cache or the other handlers from seeing events.
  private call(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.log.error(e instanceof Error ? (e.stack ?? e.message) : e, 'Event handler failed', 'informer', this.what());
    }
  }
}
