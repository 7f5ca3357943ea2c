import { ConflictError, ExpiredError, KeyExistsError, KeyNotFoundError, StorageUnavailableError } from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { WatchChannel } from '../cacher/watch-channel.js';

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

export interface MemoryStorageOptions {
  /** Events a watcher may fall behind before it is cut off with WatchOverflowError. */
  readonly watchBufferCapacity?: number;
}

interface MemoryWatcher {
  readonly prefix: string;
  readonly channel: WatchChannel<WatchEvent>;
}

/**
 * The reference backend: the whole history since the last compaction lives in one array, which
 * makes every answer easy to check by reading. Meant for tests of the layers above storage.
 * Every write is applied synchronously when called, so concurrent callers get distinct revisions in
 * call order and a watcher registered in the same tick misses nothing.
 */
export class MemoryStorage implements Storage {
  readonly revisionIsLocal = true;
  private revision = 0;
  private compactedRevision = 0;
  private readonly current = new Map<string, KV>();
  /** Every change after `compactedRevision`, in revision order, each with its prevKv. */
  private history: ChangeEvent[] = [];
  private readonly watchers = new Set<MemoryWatcher>();
  private closed = false;
  private readonly watchBufferCapacity: number;

  constructor(opts: MemoryStorageOptions = {}) {
    this.watchBufferCapacity = opts.watchBufferCapacity ?? 100_000;
  }

  async get(key: string): Promise<KV | undefined> {
    this.assertOpen();
    return this.current.get(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const atRevision = opts.revision !== undefined && opts.revision > 0 ? opts.revision : this.revision;
    if (atRevision < this.compactedRevision) throw new ExpiredError(atRevision, this.compactedRevision + 1);
    const state = atRevision >= this.revision ? this.current : this.stateAt(atRevision);
    const from = opts.startKey ?? prefix;
    const keys = [...state.keys()].filter((k) => k.startsWith(prefix) && k >= from).sort(compareKeys);
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : keys.length;
    const items = keys.slice(0, limit).map((k) => state.get(k) as KV);
    const remaining = keys.length - items.length;
    return remaining > 0 ? { items, revision: atRevision, more: true, remaining } : { items, revision: atRevision, more: false };
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    let n = 0;
    for (const key of this.current.keys()) if (key.startsWith(prefix)) n++;
    return n;
  }

  async create(key: string, value: Uint8Array): Promise<KV> {
    this.assertOpen();
    if (this.current.has(key)) throw new KeyExistsError(key);
    const revision = ++this.revision;
    const kv: KV = { key, value, createRevision: revision, modRevision: revision };
    this.current.set(key, kv);
    this.record({ type: 'put', kv, revision });
    return kv;
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    this.assertOpen();
    const prevKv = this.current.get(key);
    if (prevKv === undefined) throw new KeyNotFoundError(key);
    if (prevKv.modRevision !== expectedModRevision) throw new ConflictError(key, prevKv);
    const revision = ++this.revision;
    const kv: KV = { key, value, createRevision: prevKv.createRevision, modRevision: revision };
    this.current.set(key, kv);
    this.record({ type: 'put', kv, prevKv, revision });
    return kv;
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    this.assertOpen();
    const prevKv = this.current.get(key);
    if (prevKv === undefined) throw new KeyNotFoundError(key);
    if (expectedModRevision !== undefined && prevKv.modRevision !== expectedModRevision) {
      throw new ConflictError(key, prevKv);
    }
    const revision = ++this.revision;
    this.current.delete(key);
    this.record({ type: 'delete', kv: { ...prevKv, modRevision: revision }, prevKv, revision });
    return { kv: prevKv, revision };
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    const watcher: MemoryWatcher = {
      prefix,
      channel: new WatchChannel<WatchEvent>({
        prefix,
        capacity: this.watchBufferCapacity,
        signal: opts.signal,
        onClose: () => {
          this.watchers.delete(watcher);
          if (progressTimer !== undefined) clearInterval(progressTimer);
        },
        // Every event up to `revision` was pushed synchronously at write time, so it is a safe bookmark.
        onRequestProgress: () => watcher.channel.push({ type: 'progress', revision: this.revision }),
      }),
    };
    let progressTimer: NodeJS.Timeout | undefined;
    const { channel } = watcher;
    if (channel.isClosed) return channel;
    if (this.closed) {
      channel.fail(new StorageUnavailableError('memory storage is closed'));
      return channel;
    }
    if (opts.afterRevision > 0) {
      if (opts.afterRevision < this.compactedRevision) {
        channel.fail(new ExpiredError(opts.afterRevision, this.compactedRevision + 1));
        return channel;
      }
      for (const event of this.history) {
        if (event.revision > opts.afterRevision && event.kv.key.startsWith(prefix)) channel.push(event);
      }
    }
    this.watchers.add(watcher);
    if (opts.progressIntervalMs !== undefined && opts.progressIntervalMs > 0) {
      progressTimer = setInterval(() => {
        if (channel.buffered === 0) channel.push({ type: 'progress', revision: this.revision });
      }, opts.progressIntervalMs);
      progressTimer.unref();
    }
    return channel;
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.revision;
  }

  async oldestRevision(): Promise<number> {
    this.assertOpen();
    return this.compactedRevision + 1;
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    if (revision <= this.compactedRevision) return;
    this.compactedRevision = Math.min(revision, this.revision);
    this.history = this.history.filter((e) => e.revision > this.compactedRevision);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new StorageUnavailableError('memory storage is closed');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of [...this.watchers]) w.channel.fail(new StorageUnavailableError('memory storage closed'));
  }

  private record(event: ChangeEvent): void {
    this.history.push(event);
    for (const w of this.watchers) {
      if (event.kv.key.startsWith(w.prefix)) w.channel.push(event);
    }
  }

  /** Rebuilds the key space at an older revision by undoing the newer history. */
  private stateAt(revision: number): Map<string, KV> {
    const state = new Map(this.current);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const event = this.history[i] as ChangeEvent;
      if (event.revision <= revision) break;
      if (event.prevKv !== undefined) state.set(event.kv.key, event.prevKv);
      else state.delete(event.kv.key);
    }
    return state;
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('memory storage is closed');
  }
}

/** Byte order for ASCII keys, which is what etcd and sqlite use. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function openMemoryStorage(opts: MemoryStorageOptions = {}): Promise<MemoryStorage> {
  return Promise.resolve(new MemoryStorage(opts));
}
