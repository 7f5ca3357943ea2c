import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ConflictError, ExpiredError, KeyExistsError, KeyNotFoundError, StorageError, StorageUnavailableError, prefixEnd } from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { WatchChannel } from '../cacher/watch-channel.js';
import type { FromWriter, ToWriter, WireKv, WireWrite, WriterConfig } from './protocol.js';
import { WriterCore, WriterOpenError, lockPath } from './writer-core.js';
import { PRIVATE_DIR_MODE, ensurePrivateFile } from '../private-files.js';

export interface SqliteStorageOptions {
  /** The database file. Its directory is created when missing. */
  readonly path: string;
  /**
   * Compact this often, as kube-apiserver's compactor (`--etcd-compaction-interval`) does etcd's
   * history: each round records the current revision and compacts to the one recorded a round
   * earlier, so history lives one to two intervals. 0 or undefined = never.
   */
  readonly compactIntervalMs?: number;
  /**
   * A floor under automatic compaction: it never compacts within this many revisions of the
   * current one. Default 0 (time alone decides, as on kube-apiserver).
   */
  readonly retainRevisions?: number;
  /** Revisions of history one compaction step (one transaction) covers; writes interleave between steps. Default 1,000. */
  readonly compactionChunkRows?: number;
  /** Events a watcher may fall behind before it is cut off with WatchOverflowError. Default 100,000. */
  readonly watchBufferCapacity?: number;
  /** Told about failures of background work (automatic compaction). */
  readonly onBackgroundError?: (err: unknown) => void;
  /** Told about long work while opening (converting a database of an earlier layout). */
  readonly onNotice?: (message: string) => void;
  /**
   * Commit on the calling thread instead of a worker thread (each fsync then blocks the event
   * loop). For comparisons and environments without worker threads. Default false.
   */
  readonly inProcessWriter?: boolean;
  /**
   * WAL pages after which a commit also copies the WAL into the database (SQLite's
   * wal_autocheckpoint; 0 = never, then the WAL grows without bound). SQLite runs that checkpoint
   * inside the commit that crosses the mark, so that commit, and every write waiting for the next
   * one, waits for it: at SQLite's default of 1,000 pages (~220 ConfigMap creates here) the commits
   * that ran one took 11-15 ms and set the p99 of creates at 1,000/s to 16-39 ms; at 500 pages
   * checkpoints cover half as many pages, twice as often (p99 13-22 ms; 250 pages cost ~15 % of
   * the create throughput at 64 concurrent clients). Default 500.
   */
  readonly walAutoCheckpointPages?: number;
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

/** The key kube-apiserver's compactor writes in etcd each round; kept under the same name here. */
export const COMPACT_REV_KEY = 'compact_rev_key';

interface KvRow {
  key: string;
  value: Buffer;
  create_rev: number;
  mod_rev: number;
}

interface LogRow {
  rev: number;
  key: string;
  deleted: number;
  value: Buffer;
  create_rev: number;
  /** NULL for deletes, whose previous value is `value`. */
  prev_value: Buffer | null;
  prev_create_rev: number | null;
  prev_mod_rev: number | null;
}

type PendingWrite =
  | { readonly op: 'create'; readonly key: string; readonly value: Uint8Array; readonly settle: Settle<KV> }
  | { readonly op: 'update'; readonly key: string; readonly value: Uint8Array; readonly expected: number; readonly settle: Settle<KV> }
  | { readonly op: 'delete'; readonly key: string; readonly expected: number | undefined; readonly settle: Settle<{ kv: KV; revision: number }> };

interface Settle<T> {
  resolve(v: T): void;
  reject(e: unknown): void;
}

interface SqliteWatcher {
  readonly prefix: string;
  readonly channel: WatchChannel<WatchEvent>;
  /** Deliver only events above this: the watch's start, which a list's snapshot may put ahead of `committedRevision`. */
  after: number;
}

/** The writer, wherever it runs. Replies arrive asynchronously, in order, through `onMessage`. */
interface WriterLink {
  send(msg: ToWriter, transfer: ArrayBuffer[]): void;
  /** Whether the writer keeps the process alive: only while work is outstanding, like a pending timer. */
  setBusy(busy: boolean): void;
  /** Resolves when the writer is gone (after a `close` message, or at once if it already failed). */
  exited(): Promise<void>;
  /** Stops a writer that can no longer be trusted (it broke the protocol). */
  kill(): void;
  onMessage: (msg: FromWriter) => void;
  /** The writer died or broke the protocol; it will not answer again. */
  onLost: (err: unknown) => void;
}

// The state of a key at revision R is its current row unless the log holds a change after R; then it
// is the "previous" side of the first such change. So an old list reads the log only after R.
const CHANGED_AFTER = `WITH changed AS (
  SELECT key, MIN(rev) AS first_rev FROM log WHERE rev > @rev AND key >= @from AND key < @end GROUP BY key
)`;
// Current rows with their values (each value lives in the log row of the revision that wrote it).
const CURRENT = 'SELECT kv.key AS key, l.value AS value, kv.create_rev AS create_rev, kv.mod_rev AS mod_rev FROM kv JOIN log l ON l.rev = kv.mod_rev';
const STATE_AT = `${CHANGED_AFTER}
${CURRENT}
  WHERE kv.key >= @from AND kv.key < @end AND kv.key NOT IN (SELECT key FROM changed)
UNION ALL
SELECT l.key, COALESCE(l.prev_value, l.value) AS value, l.prev_create_rev AS create_rev, l.prev_mod_rev AS mod_rev
  FROM changed c JOIN log l ON l.rev = c.first_rev WHERE l.prev_mod_rev IS NOT NULL
ORDER BY key LIMIT @limit`;
const COUNT_STATE_AT = `${CHANGED_AFTER}
SELECT (SELECT COUNT(*) FROM kv WHERE key >= @from AND key < @end AND key NOT IN (SELECT key FROM changed))
     + (SELECT COUNT(*) FROM changed c JOIN log l ON l.rev = c.first_rev WHERE l.prev_mod_rev IS NOT NULL) AS n`;

/**
 * SQLite backend: WAL with synchronous=FULL, a `log` table with one row per revision (its value,
 * and the previous value inline, for watches and reads at older revisions) and a `kv` table that
 * points each live key at the log row of its current revision (lists never scan history; each
 * value is stored once, see writer-core.ts).
 *
 * Writes go to a writer (writer-core.ts) in a worker thread that owns the only write connection, so
 * commits and their fsyncs never block this event loop. One batch is in flight at a time; writes
 * issued meanwhile accumulate and go as the next batch when the previous one's result arrives
 * (group commit that grows with load). A write's promise settles only after its batch committed.
 *
 * Reads run here, on a separate read-only connection, each in its own short read transaction: in
 * WAL mode it sees every transaction committed before it began, so a write whose promise resolved
 * is visible to every later read. Reads that need a revision take it from `meta` inside the same
 * snapshot, because the writer may already have committed a batch whose result has not arrived.
 *
 * Watchers are fed from batch results, on this thread, in revision order. `committedRevision` is
 * the last revision delivered to watchers; a watch's catch-up reads the log up to exactly that
 * revision and registers the watcher in the same synchronous step, so the seam between catch-up
 * and live events has neither gap nor duplicate.
 */
export class SqliteStorage implements Storage {
  /** One process owns the database (the `-lock` file): every acknowledged write passed through here. */
  readonly revisionIsLocal = true;
  /** Highest revision whose commit has been reported here (and delivered to watchers). */
  private committedRevision: number;
  /** Compacted revision as last reported by the writer (reads check `meta` in their snapshot). */
  private compactedRevision: number;
  private pending: PendingWrite[] = [];
  private inFlight: PendingWrite[] | undefined;
  private flushScheduled = false;
  private nextId = 1;
  private readonly compactions = new Map<number, Settle<void>>();
  private readonly watchers = new Set<SqliteWatcher>();
  private closed = false;
  /** Set when the writer is lost; every later operation fails with it. */
  private failure: StorageUnavailableError | undefined;
  private closing: Promise<void> | undefined;
  private onDrained: (() => void) | undefined;
  private onWriterClosed: (() => void) | undefined;
  private commits = 0;
  private compactTimer: NodeJS.Timeout | undefined;
  /** The revision the previous automatic compaction round recorded; the next round compacts to it. */
  private compactMark = 0;
  private readonly compactListeners = new Set<(revision: number) => void>();
  private readonly stmt: Statements;
  private readonly snapshot: <T>(fn: () => T) => T;

  private constructor(
    private readonly reader: Database.Database,
    private readonly writer: WriterLink,
    revision: number,
    compacted: number,
    private readonly opts: SqliteStorageOptions,
  ) {
    this.stmt = prepareStatements(reader);
    const tx = reader.transaction((fn: () => unknown) => fn());
    this.snapshot = <T>(fn: () => T): T => tx(fn) as T;
    this.committedRevision = revision;
    this.compactedRevision = compacted;
    writer.onMessage = (msg) => this.onWriterMessage(msg);
    writer.onLost = (err) => this.lose(err);
    if (opts.compactIntervalMs !== undefined && opts.compactIntervalMs > 0) this.scheduleCompaction(opts.compactIntervalMs);
  }

  static async open(opts: SqliteStorageOptions): Promise<SqliteStorage> {
    const pages = opts.walAutoCheckpointPages ?? 500;
    if (!Number.isSafeInteger(pages) || pages < 0) throw new TypeError(`walAutoCheckpointPages must be a whole number of pages, 0 or more; got ${pages}`);
    // The database holds Secrets: owner-only, as etcd's data (see private-files.ts). A missing
    // directory is made 0700; an existing one is the caller's (createControlPlane fixes its data dir).
    mkdirSync(dirname(opts.path), { recursive: true, mode: PRIVATE_DIR_MODE });
    // SQLite gives the -wal, -shm and -journal files it creates the database file's mode, so the
    // database is made 0600 before SQLite first opens it; files left by an earlier run are fixed too.
    const log = opts.onNotice;
    ensurePrivateFile(opts.path, { create: true, ...(log ? { log } : {}) });
    ensurePrivateFile(lockPath(opts.path), { create: true, ...(log ? { log } : {}) });
    for (const suffix of ['-wal', '-shm', '-journal']) ensurePrivateFile(opts.path + suffix, log ? { log } : {});
    const config: WriterConfig = {
      path: opts.path,
      compactionChunkRows: opts.compactionChunkRows ?? 1_000,
      walAutoCheckpointPages: pages,
    };
    let started: { link: WriterLink; revision: number; compacted: number };
    try {
      started = opts.inProcessWriter ? startInProcessWriter(config, opts.onNotice) : await startWorkerWriter(config, opts.onBackgroundError, opts.onNotice);
    } catch (err) {
      if (err instanceof WriterOpenError && err.busy) {
        throw new StorageUnavailableError(
          `sqlite database ${opts.path} is already open in another process (another kplane server on the same data path?). ` +
            `Stop that process, or give this one a different data directory (kplane serve --data-dir DIR; library: sqlite({ dir })).`,
          { cause: err },
        );
      }
      throw new StorageUnavailableError(`cannot open sqlite database ${opts.path}: ${(err as Error).message}`, { cause: err });
    }
    let reader: Database.Database;
    try {
      // Opened after the writer, which has created the file and switched it to WAL.
      reader = new Database(opts.path, { readonly: true, fileMustExist: true, timeout: 1_000 });
    } catch (err) {
      started.link.send({ type: 'close' }, []);
      await started.link.exited();
      throw new StorageUnavailableError(`cannot open sqlite database ${opts.path} for reading: ${(err as Error).message}`, { cause: err });
    }
    return new SqliteStorage(reader, started.link, started.revision, started.compacted, opts);
  }

  /** Transactions committed by this instance (observes group commit). */
  get commitCount(): number {
    return this.commits;
  }

  async get(key: string): Promise<KV | undefined> {
    this.assertOpen();
    const row = this.stmt.getKv.get(key);
    return row === undefined ? undefined : kvFromRow(row);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const requested = opts.revision !== undefined && opts.revision > 0 ? opts.revision : 0;
    const end = prefixEnd(prefix);
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : -1;
    return this.snapshot((): ListResult => {
      const compacted = this.stmt.getMeta.get('compacted')?.value ?? 0;
      if (requested > 0 && requested < compacted) throw new ExpiredError(requested, compacted + 1);
      // The snapshot's own revision: it may be ahead of committedRevision (a batch committed whose
      // result is still on its way), and the items are those of the snapshot.
      const current = this.stmt.getMeta.get('revision')?.value ?? 0;
      if (requested === 0 || requested >= current) {
        const items = this.stmt.listLatest.all({ from, end, limit }).map(kvFromRow);
        const last = items.at(-1);
        if (limit < 0 || items.length < limit || last === undefined) return { items, revision: current, more: false };
        const remaining = this.stmt.countAfter.get(last.key, end)?.n ?? 0;
        return remaining > 0 ? { items, revision: current, more: true, remaining } : { items, revision: current, more: false };
      }
      const items = this.stmt.listAt.all({ rev: requested, from, end, limit }).map(kvFromRow);
      const last = items.at(-1);
      if (limit < 0 || items.length < limit || last === undefined) return { items, revision: requested, more: false };
      const remaining = this.stmt.countAt.get({ rev: requested, from: last.key + '\0', end })?.n ?? 0;
      return remaining > 0 ? { items, revision: requested, more: true, remaining } : { items, revision: requested, more: false };
    });
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    return this.stmt.countRange.get(prefix, prefixEnd(prefix))?.n ?? 0;
  }

  create(key: string, value: Uint8Array): Promise<KV> {
    return new Promise((resolve, reject) => this.enqueue({ op: 'create', key, value, settle: { resolve, reject } }));
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    return new Promise((resolve, reject) => this.enqueue({ op: 'update', key, value, expected: expectedModRevision, settle: { resolve, reject } }));
  }

  delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    return new Promise((resolve, reject) => this.enqueue({ op: 'delete', key, expected: expectedModRevision, settle: { resolve, reject } }));
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    let progressTimer: NodeJS.Timeout | undefined;
    const watcher: SqliteWatcher = {
      prefix,
      after: 0,
      channel: new WatchChannel<WatchEvent>({
        prefix,
        capacity: this.opts.watchBufferCapacity ?? 100_000,
        signal: opts.signal,
        onClose: () => {
          this.watchers.delete(watcher);
          if (progressTimer !== undefined) clearInterval(progressTimer);
        },
        // Every reported commit was pushed to this watcher when it arrived, so this is a safe bookmark.
        onRequestProgress: () => watcher.channel.push({ type: 'progress', revision: this.bookmark(watcher) }),
      }),
    };
    const { channel } = watcher;
    if (channel.isClosed) return channel;
    if (this.closed || this.failure !== undefined) {
      channel.fail(this.failure ?? new StorageUnavailableError('sqlite storage is closed'));
      return channel;
    }
    if (opts.afterRevision > 0) {
      // Catch-up and registration happen in one synchronous step: no batch result can slip in
      // between, and the log holds every revision up to committedRevision (the writer reported it).
      let rows: LogRow[];
      try {
        rows = this.snapshot(() => {
          const compacted = this.stmt.getMeta.get('compacted')?.value ?? 0;
          if (opts.afterRevision < compacted) throw new ExpiredError(opts.afterRevision, compacted + 1);
          return this.stmt.logAfter.all({ after: opts.afterRevision, upTo: this.committedRevision, from: prefix, end: prefixEnd(prefix) });
        });
      } catch (err) {
        channel.fail(err instanceof StorageError ? err : new StorageUnavailableError(`sqlite read failed: ${(err as Error).message}`, { cause: err }));
        return channel;
      }
      for (const row of rows) if (!channel.push(eventFromLog(row))) return channel;
    }
    watcher.after = Math.max(opts.afterRevision, this.committedRevision);
    this.watchers.add(watcher);
    if (opts.progressIntervalMs !== undefined && opts.progressIntervalMs > 0) {
      progressTimer = setInterval(() => {
        if (channel.buffered === 0) channel.push({ type: 'progress', revision: this.bookmark(watcher) });
      }, opts.progressIntervalMs);
      progressTimer.unref();
    }
    return channel;
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.committedRevision;
  }

  async oldestRevision(): Promise<number> {
    this.assertOpen();
    return (this.stmt.getMeta.get('compacted')?.value ?? 0) + 1;
  }

  compact(revision: number): Promise<void> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.compactions.set(id, { resolve, reject });
      this.writer.send({ type: 'compact', id, revision: Math.min(revision, this.committedRevision) }, []);
      this.updateBusy();
    });
  }

  /**
   * One round of kube-apiserver's compactor (etcd3/compact.go), run every `compactIntervalMs`:
   * write `compact_rev_key` (its value is the revision this round compacts to, as there), remember
   * the revision of that write, and compact to the revision the previous round remembered. The
   * write is what makes a quiet store's history expire too: without it the revision would not move,
   * and a continue token or watch from before the last write would stay valid for ever (on etcd the
   * same write does it). The first round only records ("we don't compact on bootstrap").
   */
  async compactRound(): Promise<void> {
    this.assertOpen();
    const target = this.compactMark;
    const key = COMPACT_REV_KEY;
    const value = Buffer.from(String(target));
    const current = await this.get(key);
    const written = current === undefined ? await this.create(key, value) : await this.update(key, value, current.modRevision);
    this.compactMark = written.modRevision;
    if (target === 0) return;
    const floor = this.opts.retainRevisions ?? 0;
    const upTo = floor > 0 ? Math.min(target, written.modRevision - floor) : target;
    if (upTo > this.compactedRevision) await this.compact(upTo);
  }

  /** Calls `listener` with the compacted revision after every compaction (automatic or asked for). */
  onCompacted(listener: (revision: number) => void): () => void {
    this.compactListeners.add(listener);
    return () => this.compactListeners.delete(listener);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new StorageUnavailableError('sqlite storage is closed');
    if (this.failure !== undefined) throw this.failure;
    try {
      this.stmt.ping.get();
    } catch (err) {
      throw new StorageUnavailableError(`sqlite is not answering: ${(err as Error).message}`, { cause: err });
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // Writes already issued still commit (and settle); later ones are refused by enqueue.
    this.closed = true;
    if (this.compactTimer !== undefined) clearTimeout(this.compactTimer);
    if (this.failure === undefined && (this.pending.length > 0 || this.inFlight !== undefined)) {
      await new Promise<void>((resolve) => {
        this.onDrained = resolve;
        this.schedule();
      });
    }
    for (const w of [...this.watchers]) w.channel.fail(new StorageUnavailableError('sqlite storage closed'));
    // Before the writer: the last connection to close checkpoints and removes the WAL, which a
    // read-only connection cannot do.
    this.reader.close();
    if (this.failure === undefined) {
      const closed = new Promise<void>((resolve) => (this.onWriterClosed = resolve));
      this.writer.send({ type: 'close' }, []);
      this.updateBusy();
      // A writer that dies instead of answering is closed too (its connections die with it).
      await Promise.race([closed, this.writer.exited()]);
    }
    await this.writer.exited();
    // An unfinished compaction resumes at the next open; its meta change is already durable.
    for (const settle of this.compactions.values()) settle.resolve();
    this.compactions.clear();
  }

  private enqueue(write: PendingWrite): void {
    if (this.closed || this.failure !== undefined) {
      write.settle.reject(this.failure ?? new StorageUnavailableError('sqlite storage is closed'));
      return;
    }
    this.pending.push(write);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushScheduled || this.inFlight !== undefined || this.pending.length === 0) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: every write issued during this turn of the event loop,
    // including those issued from promise continuations, joins the same batch.
    setImmediate(() => this.flush());
  }

  /** Sends every pending write to the writer as one batch (one transaction, one fsync). */
  private flush(): void {
    this.flushScheduled = false;
    if (this.inFlight !== undefined || this.pending.length === 0 || this.failure !== undefined) return;
    const batch = this.pending;
    this.pending = [];
    let total = 0;
    for (const w of batch) if (w.op !== 'delete') total += w.value.byteLength;
    const values = new Uint8Array(total);
    const writes: WireWrite[] = [];
    let off = 0;
    for (const w of batch) {
      if (w.op === 'delete') {
        writes.push({ op: 'delete', key: w.key, expected: w.expected });
        continue;
      }
      values.set(w.value, off);
      writes.push(
        w.op === 'create'
          ? { op: 'create', key: w.key, off, len: w.value.byteLength }
          : { op: 'update', key: w.key, off, len: w.value.byteLength, expected: w.expected },
      );
      off += w.value.byteLength;
    }
    this.inFlight = batch;
    this.writer.send({ type: 'batch', id: this.nextId++, writes, values }, [values.buffer]);
    this.updateBusy();
  }

  private onWriterMessage(msg: FromWriter): void {
    switch (msg.type) {
      case 'batch':
        this.onBatchResult(msg);
        break;
      case 'compact-done': {
        this.compactedRevision = Math.max(this.compactedRevision, msg.compacted);
        const settle = this.compactions.get(msg.id);
        this.compactions.delete(msg.id);
        for (const listener of this.compactListeners) listener(msg.compacted);
        settle?.resolve();
        break;
      }
      case 'compact-failed': {
        const settle = this.compactions.get(msg.id);
        this.compactions.delete(msg.id);
        settle?.reject(new StorageUnavailableError(`sqlite compaction failed: ${msg.message}`));
        break;
      }
      case 'background-error':
        this.opts.onBackgroundError?.(new StorageUnavailableError(msg.message));
        break;
      case 'notice':
        this.opts.onNotice?.(msg.message);
        break;
      case 'closed':
        this.onWriterClosed?.();
        break;
      case 'ready':
      case 'open-failed':
        this.lose(new Error(`unexpected ${msg.type} message from the sqlite writer`));
        return;
    }
    this.updateBusy();
  }

  private onBatchResult(msg: Extract<FromWriter, { type: 'batch' }>): void {
    const batch = this.inFlight;
    this.inFlight = undefined;
    if (batch === undefined) {
      this.lose(new Error('batch result from the sqlite writer without a batch in flight'));
      return;
    }
    if (!msg.ok) {
      const failure = new StorageUnavailableError(`sqlite commit failed: ${msg.message}`);
      for (const w of batch) w.settle.reject(failure);
    } else {
      this.commits++;
      this.committedRevision = Math.max(this.committedRevision, msg.revision);
      const values = Buffer.from(msg.values.buffer, msg.values.byteOffset, msg.values.byteLength);
      const stored = (key: string, w: WireKv): KV => ({
        key,
        value: values.subarray(w.off, w.off + w.len),
        createRevision: w.createRev,
        modRevision: w.modRev,
      });
      const events: ChangeEvent[] = [];
      const settlers: (() => void)[] = [];
      batch.forEach((write, i) => {
        const outcome = msg.outcomes[i];
        if (outcome === undefined) {
          const err = new StorageUnavailableError('sqlite writer returned no outcome for a write');
          settlers.push(() => write.settle.reject(err));
          return;
        }
        const { key } = write;
        if (!outcome.ok) {
          let err: StorageError;
          if (outcome.err === 'conflict') err = new ConflictError(key, stored(key, outcome.current));
          else if (outcome.err === 'exists') err = new KeyExistsError(key);
          else err = new KeyNotFoundError(key);
          settlers.push(() => write.settle.reject(err));
          return;
        }
        const rev = outcome.rev;
        const prevKv = outcome.prev === undefined ? undefined : stored(key, outcome.prev);
        if (write.op === 'delete') {
          if (prevKv === undefined) throw new Error('sqlite writer reported a delete without the deleted value');
          events.push({ type: 'delete', kv: { ...prevKv, modRevision: rev }, prevKv, revision: rev });
          settlers.push(() => write.settle.resolve({ kv: prevKv, revision: rev }));
          return;
        }
        const kv: KV = { key, value: toBuffer(write.value), createRevision: outcome.createRev, modRevision: rev };
        events.push(prevKv === undefined ? { type: 'put', kv, revision: rev } : { type: 'put', kv, prevKv, revision: rev });
        settlers.push(() => write.settle.resolve(kv));
      });
      // Watchers first, then callers: an acknowledged write has been offered to every watcher.
      for (const event of events) {
        for (const w of this.watchers) if (event.revision > w.after && event.kv.key.startsWith(w.prefix)) w.channel.push(event);
      }
      for (const settle of settlers) settle();
    }
    if (this.pending.length > 0) this.schedule();
    else if (this.onDrained !== undefined) {
      const drained = this.onDrained;
      this.onDrained = undefined;
      drained();
    }
  }

  /** The writer is gone: nothing will commit any more. Fail everything that waits on it. */
  private lose(err: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = new StorageUnavailableError(`sqlite writer failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    const batch = [...(this.inFlight ?? []), ...this.pending];
    this.inFlight = undefined;
    this.pending = [];
    for (const w of batch) w.settle.reject(this.failure);
    for (const settle of this.compactions.values()) settle.reject(this.failure);
    this.compactions.clear();
    for (const w of [...this.watchers]) w.channel.fail(this.failure);
    this.onDrained?.();
    this.onDrained = undefined;
    this.onWriterClosed?.();
    this.onWriterClosed = undefined;
    this.writer.setBusy(false);
    this.writer.kill();
  }

  private updateBusy(): void {
    if (this.failure !== undefined) return;
    this.writer.setBusy(this.inFlight !== undefined || this.compactions.size > 0 || this.onWriterClosed !== undefined);
  }

  private bookmark(watcher: SqliteWatcher): number {
    return Math.max(watcher.after, this.committedRevision);
  }

  /** The next automatic round, one interval after the previous one ended (rounds never overlap). */
  private scheduleCompaction(intervalMs: number): void {
    this.compactTimer = setTimeout(() => {
      this.compactTimer = undefined;
      this.compactRound()
        .catch((err: unknown) => {
          if (!this.closed && this.failure === undefined) this.opts.onBackgroundError?.(err);
        })
        .finally(() => {
          if (!this.closed && this.failure === undefined) this.scheduleCompaction(intervalMs);
        });
    }, intervalMs);
    this.compactTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('sqlite storage is closed');
    if (this.failure !== undefined) throw this.failure;
  }
}

/**
 * Starts the writer thread. The worker's script is TypeScript when this module is (run through
 * tsx), JavaScript when compiled; runtime/thread-entry.mjs, plain JavaScript, loads it.
 */
async function startWorkerWriter(
  config: WriterConfig,
  onBackgroundError: ((err: unknown) => void) | undefined,
  onNotice: ((message: string) => void) | undefined,
): Promise<{ link: WriterLink; revision: number; compacted: number }> {
  const ts = import.meta.url.endsWith('.ts');
  const script = new URL(ts ? './writer-worker.ts' : './writer-worker.js', import.meta.url).href;
  // The parent's --import hooks do not carry over to a worker on Node 20, so tsx is always
  // registered by the entry script for TypeScript. The rest of execArgv is not passed on either:
  // flags such as --input-type or --eval (`node -e`) make the Worker constructor throw, and the
  // writer needs none of them.
  const worker = new Worker(new URL('../../runtime/thread-entry.mjs', import.meta.url), {
    workerData: { config, script, registerTsx: ts },
    execArgv: process.execArgv.filter((arg) => arg === '--enable-source-maps' || arg.startsWith('--conditions=')),
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once('exit', () => ((exited = true), resolve())));
  const ready = await new Promise<{ revision: number; compacted: number }>((resolve, reject) => {
    const onMessage = (msg: FromWriter): void => {
      if (msg.type === 'background-error') {
        onBackgroundError?.(new StorageUnavailableError(msg.message));
        return;
      }
      if (msg.type === 'notice') {
        onNotice?.(msg.message);
        return;
      }
      cleanup();
      if (msg.type === 'ready') resolve({ revision: msg.revision, compacted: msg.compacted });
      else if (msg.type === 'open-failed') reject(new WriterOpenError(msg.message, msg.busy));
      else reject(new Error(`unexpected ${msg.type} message from the sqlite writer while opening`));
    };
    const onError = (err: unknown): void => {
      cleanup();
      reject(err);
    };
    const onExit = (code: number): void => {
      cleanup();
      reject(new Error(`sqlite writer thread exited with code ${code} while opening`));
    };
    const cleanup = (): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });
  let closing = false;
  // `worker` is kept on the link for tests, which kill the thread to check that a lost writer fails
  // every waiting write.
  const link: WriterLink & { readonly worker: Worker } = {
    worker,
    send: (msg, transfer) => {
      if (msg.type === 'close') closing = true;
      worker.postMessage(msg, transfer);
    },
    setBusy: (busy) => (busy ? worker.ref() : worker.unref()),
    exited: () => (exited ? Promise.resolve() : exit),
    kill: () => void worker.terminate(),
    onMessage: () => undefined,
    onLost: () => undefined,
  };
  worker.on('message', (msg: FromWriter) => link.onMessage(msg));
  worker.on('messageerror', (err) => link.onLost(err));
  worker.on('error', (err) => link.onLost(err));
  worker.on('exit', (code) => {
    if (!closing) link.onLost(new Error(`sqlite writer thread exited with code ${code}`));
  });
  worker.unref();
  return { link, ...ready };
}

/** The same writer on this thread; replies are delivered as microtasks, never re-entrantly. */
function startInProcessWriter(
  config: WriterConfig,
  onNotice: ((message: string) => void) | undefined,
): { link: WriterLink; revision: number; compacted: number } {
  const link: WriterLink = {
    send: (msg) => core.handle(msg),
    setBusy: () => undefined,
    exited: () => Promise.resolve(),
    kill: () => undefined,
    onMessage: () => undefined,
    onLost: () => undefined,
  };
  // Notices come while opening too, before anyone listens on the link: they go straight out.
  const core: WriterCore = WriterCore.open(config, (msg) => (msg.type === 'notice' ? onNotice?.(msg.message) : queueMicrotask(() => link.onMessage(msg))));
  return { link, revision: core.currentRevision, compacted: core.compactedRevision };
}

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Database.Database) {
  return {
    getKv: db.prepare<[string], KvRow>(`${CURRENT} WHERE kv.key = ?`),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    listLatest: db.prepare<{ from: string; end: string; limit: number }, KvRow>(
      `${CURRENT} WHERE kv.key >= @from AND kv.key < @end ORDER BY kv.key LIMIT @limit`,
    ),
    countRange: db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM kv WHERE key >= ? AND key < ?'),
    countAfter: db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM kv WHERE key > ? AND key < ?'),
    listAt: db.prepare<{ rev: number; from: string; end: string; limit: number }, KvRow>(STATE_AT),
    countAt: db.prepare<{ rev: number; from: string; end: string }, { n: number }>(COUNT_STATE_AT),
    logAfter: db.prepare<{ after: number; upTo: number; from: string; end: string }, LogRow>(
      'SELECT * FROM log WHERE rev > @after AND rev <= @upTo AND key >= @from AND key < @end ORDER BY rev',
    ),
    ping: db.prepare('SELECT 1'),
  };
}

export function openSqliteStorage(opts: SqliteStorageOptions): Promise<SqliteStorage> {
  return SqliteStorage.open(opts);
}

function kvFromRow(row: KvRow): KV {
  return { key: row.key, value: row.value, createRevision: row.create_rev, modRevision: row.mod_rev };
}

function eventFromLog(row: LogRow): ChangeEvent {
  const kv: KV = { key: row.key, value: row.value, createRevision: row.create_rev, modRevision: row.rev };
  const prevKv: KV | undefined =
    row.prev_mod_rev === null
      ? undefined
      : { key: row.key, value: row.prev_value ?? row.value, createRevision: row.prev_create_rev ?? row.create_rev, modRevision: row.prev_mod_rev };
  if (row.deleted) return { type: 'delete', kv, prevKv: prevKv as KV, revision: row.rev };
  return prevKv === undefined ? { type: 'put', kv, revision: row.rev } : { type: 'put', kv, prevKv, revision: row.rev };
}

function toBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
