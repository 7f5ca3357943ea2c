// The storage contract: etcd's data model, reduced to what an API server needs.
// One global revision counter is bumped by every write; each key carries the revision that created
// it and the one that last modified it. Every backend (sqlite, etcd, memory) and the cacher in front
// of them implement this interface and pass src/storage/conformance/.

/** A stored key and its value at some revision. */
export interface KV {
  readonly key: string;
  /** Serialized object (JSON bytes). Treat as immutable: backends and the cacher share it. */
  readonly value: Uint8Array;
  readonly createRevision: number;
  readonly modRevision: number;
  /**
   * The value was read through an encryption provider or key other than the one that writes now
   * (upstream's `stale` from TransformFromStorage): an update writes it even when nothing changed,
   * which is how rewriting every object moves it to the new key. Absent: false.
   */
  readonly stale?: boolean;
}

export interface ListOptions {
  /** Read at this revision (0 or undefined = latest). Below the compacted revision: ExpiredError. */
  readonly revision?: number;
  /** Return at most this many items (0 or undefined = all). */
  readonly limit?: number;
  /** Start at this key (inclusive), used for continue tokens. Must lie under the prefix. */
  readonly startKey?: string;
}

export interface ListResult {
  readonly items: KV[];
  /** The revision the list was read at; a watch from here misses nothing. */
  readonly revision: number;
  /** True when `limit` cut the result short. */
  readonly more: boolean;
  /** When `more`, how many keys remain after the last returned one (if the backend knows). */
  readonly remaining?: number;
}

/**
 * A `put` carries the new KV and, for an update, the previous one. A `delete` carries the deleted
 * object's last value in `kv` (its modRevision is the deletion revision) and the stored KV before the
 * deletion in `prevKv`. Events of one watch arrive in strictly increasing revision order.
 */
export type WatchEvent =
  | { readonly type: 'put'; readonly kv: KV; readonly prevKv?: KV; readonly revision: number }
  | { readonly type: 'delete'; readonly kv: KV; readonly prevKv?: KV; readonly revision: number }
  /** The watcher has seen everything up to `revision` (drives bookmarks). */
  | { readonly type: 'progress'; readonly revision: number };

export interface WatchOptions {
  /** Deliver events with revision > afterRevision. 0 = from now on. Below compaction: ExpiredError. */
  readonly afterRevision: number;
  /** Ask the backend to emit `progress` events roughly this often when idle (ms). */
  readonly progressIntervalMs?: number;
  readonly signal: AbortSignal;
}

export interface Storage {
  get(key: string): Promise<KV | undefined>;
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  count(prefix: string): Promise<number>;
  /** Fails with KeyExistsError when the key is present. */
  create(key: string, value: Uint8Array): Promise<KV>;
  /** Compare-and-swap on the key's mod revision: ConflictError (carrying the current KV) if it moved, KeyNotFoundError if absent. */
  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV>;
  /** Deletes the key, guarded by the mod revision when given. Returns the deleted KV (its modRevision = the deletion revision is in `revision`). */
  delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }>;
  /**
   * Events in revision order for keys under `prefix`. The iterator ends when the signal aborts.
   * `watch` itself never throws: ExpiredError (afterRevision below the compacted revision),
   * WatchOverflowError (consumer too slow) and StorageUnavailableError (backend lost) reject a
   * `next()` of the iterator, after which it is finished. The returned iterable may also implement
   * {@link ProgressRequestable}.
   */
  watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent>;
  /** The newest revision (for consistent reads). */
  currentRevision(): Promise<number>;
  /**
   * Optional: true when currentRevision() is known in this process and covers every write any
   * client of this data can have seen acknowledged (SQLite and memory: one process owns the data).
   * A cache may then answer consistent reads once it has caught up with that revision, without a
   * round trip. Never true for etcd, where other API servers write too.
   */
  readonly revisionIsLocal?: boolean;
  /**
   * Optional: false while a watch's progress requests ({@link ProgressRequestable}) might be
   * answered with a revision whose events the stream has not sent yet (kube's RequestWatchProgress
   * feature check: etcd before 3.4.31, and 3.5.0 to 3.5.12, answer a watch that is still catching
   * up with the current revision, etcd-io/etcd#15220 and #17507). Such streams then never send
   * progress requests, and a cache must not wait for answers. Absent: always safe.
   */
  watchProgressRequestsSafe?(): boolean;
  /** The oldest revision still answerable (compacted revision + 1). */
  oldestRevision(): Promise<number>;
  /** Forget history at or below `revision` (current values stay). */
  compact(revision: number): Promise<void>;
  /**
   * Optional: calls `listener` with the compacted revision after each compaction, including those
   * the backend runs on its own schedule, so that a cache in front of it forgets the same history.
   * Returns a function that removes the listener.
   */
  onCompacted?(listener: (revision: number) => void): () => void;
  /**
   * Optional: the value a cache holds for `key` right now, without a round trip and without a
   * freshness guarantee (like a client-go lister). Undefined when no loaded cache covers the key;
   * `{ kv: undefined }` when the cache says the key is absent.
   */
  peek?(key: string): { kv: KV | undefined } | undefined;
  /** Resolves when the backend answers; rejects with StorageUnavailableError otherwise (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Optional capability of a watch stream: emit a `progress` event soon (kube's RequestWatchProgress),
 * so that a cache can prove it has seen a given revision without waiting for an idle interval.
 */
export interface ProgressRequestable {
  requestProgress(): void;
}

export function isProgressRequestable(x: unknown): x is ProgressRequestable {
  return typeof (x as Partial<ProgressRequestable> | null)?.requestProgress === 'function';
}

/** Base of the storage errors. They name the key; the registry turns them into kube Status errors. */
export abstract class StorageError extends Error {
  abstract readonly code: string;
  constructor(
    message: string,
    readonly key: string,
  ) {
    super(message);
  }
}

export class KeyExistsError extends StorageError {
  override readonly name = 'KeyExistsError';
  readonly code = 'KPL_STORAGE_KEY_EXISTS';
  constructor(key: string) {
    super(`key exists: ${key}`, key);
  }
}

export class KeyNotFoundError extends StorageError {
  override readonly name = 'KeyNotFoundError';
  readonly code = 'KPL_STORAGE_KEY_NOT_FOUND';
  constructor(key: string) {
    super(`key not found: ${key}`, key);
  }
}

/** The key's mod revision was not the expected one. `current` is what is stored now. */
export class ConflictError extends StorageError {
  override readonly name = 'ConflictError';
  readonly code = 'KPL_STORAGE_CONFLICT';
  constructor(
    key: string,
    readonly current: KV,
  ) {
    super(`conflict on ${key}: mod revision is ${current.modRevision}`, key);
  }
}

/** The requested revision has been compacted. */
export class ExpiredError extends StorageError {
  override readonly name = 'ExpiredError';
  readonly code = 'KPL_STORAGE_EXPIRED';
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`revision ${requested} has been compacted; oldest available is ${oldest}`, '');
  }
}

/**
 * The watcher did not keep up: its bounded buffer overflowed and the watch was ended. The caller
 * should close the client's watch (kube clients then re-watch from their last seen revision).
 */
export class WatchOverflowError extends StorageError {
  override readonly name = 'WatchOverflowError';
  readonly code = 'KPL_STORAGE_WATCH_OVERFLOW';
  constructor(
    prefix: string,
    readonly capacity: number,
  ) {
    super(`watcher on ${prefix} fell more than ${capacity} events behind and was closed`, prefix);
  }
}

/** The backend cannot be reached or failed to persist. */
export class StorageUnavailableError extends StorageError {
  override readonly name = 'StorageUnavailableError';
  readonly code = 'KPL_STORAGE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, '');
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** Smallest string greater than every key with this prefix (etcd's range end for a prefix). */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** A storage backend to open when the control plane starts (sqlite(), etcd(), memory(), or your own). */
export interface StorageFactory {
  readonly name: string;
  /** `log` tells the operator about long work while opening (e.g. converting a database's layout). */
  open(ctx?: { readonly log?: (message: string) => void }): Promise<Storage>;
}
