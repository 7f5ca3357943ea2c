import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import Database from 'better-sqlite3';
import {
  ConflictError,
  ExpiredError,
  KeyExistsError,
  KeyNotFoundError,
  StorageError,
  StorageUnavailableError,
  prefixEnd,
} from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { WatchChannel } from '../cacher/watch-channel.js';

export interface SqliteStorageOptions {
  /** The database file. Its directory is created when missing. */
  readonly path: string;
  /** Run `compact(current - retainRevisions)` this often (0 or undefined = never). */
  readonly compactIntervalMs?: number;
  /** History kept by automatic compaction. Default 10,000 revisions. */
  readonly retainRevisions?: number;
  /** Log rows deleted per compaction step; the event loop runs between steps. Default 1,000. */
  readonly compactionChunkRows?: number;
  /** Events a watcher may fall behind before it is cut off with WatchOverflowError. Default 100,000. */
  readonly watchBufferCapacity?: number;
  /** Told about failures of background work (automatic compaction). */
  readonly onBackgroundError?: (err: unknown) => void;
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

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
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY,
  value BLOB NOT NULL,
  create_rev INTEGER NOT NULL,
  mod_rev INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log (
  rev INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  deleted INTEGER NOT NULL,
  value BLOB NOT NULL,
  create_rev INTEGER NOT NULL,
  prev_value BLOB,
  prev_create_rev INTEGER,
  prev_mod_rev INTEGER
);
CREATE TABLE IF NOT EXISTS meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`;

// The state of a key at revision R is its current row unless the log holds a change after R; then it
// is the "previous" side of the first such change. So an old list reads the log only after R.
const CHANGED_AFTER = `WITH changed AS (
  SELECT key, MIN(rev) AS first_rev FROM log WHERE rev > @rev AND key >= @from AND key < @end GROUP BY key
)`;
const STATE_AT = `${CHANGED_AFTER}
SELECT key, value, create_rev, mod_rev FROM kv
  WHERE key >= @from AND key < @end AND key NOT IN (SELECT key FROM changed)
UNION ALL
SELECT l.key, COALESCE(l.prev_value, l.value) AS value, l.prev_create_rev AS create_rev, l.prev_mod_rev AS mod_rev
  FROM changed c JOIN log l ON l.rev = c.first_rev WHERE l.prev_mod_rev IS NOT NULL
ORDER BY key LIMIT @limit`;
const COUNT_STATE_AT = `${CHANGED_AFTER}
SELECT (SELECT COUNT(*) FROM kv WHERE key >= @from AND key < @end AND key NOT IN (SELECT key FROM changed))
     + (SELECT COUNT(*) FROM changed c JOIN log l ON l.rev = c.first_rev WHERE l.prev_mod_rev IS NOT NULL) AS n`;

/**
 * SQLite backend: one writer connection holding an exclusive lock, WAL with synchronous=FULL, and
 * group commit. A `kv` table holds current state (lists never scan history); a `log` table holds
 * one row per revision with the previous value inline, for watches and reads at older revisions.
 *
 * better-sqlite3 is synchronous, which this class relies on: a commit, the notification of
 * watchers and a new watcher's catch-up read each run without interruption, so the seam between
 * catch-up and live events has neither gap nor duplicate.
 */
export class SqliteStorage implements Storage {
  /** Highest revision handed out (may be ahead of `committedRevision` inside a flush). */
  private revision: number;
  /** Highest revision that is durable and visible to readers and watchers. */
  private committedRevision: number;
  private compactedRevision: number;
  private pending: PendingWrite[] = [];
  private flushScheduled = false;
  private readonly watchers = new Set<SqliteWatcher>();
  private closed = false;
  private commits = 0;
  private compaction: Promise<void> = Promise.resolve();
  private autoCompactTimer: NodeJS.Timeout | undefined;
  private readonly stmt: Statements;

  private constructor(
    private readonly db: Database.Database,
    private readonly opts: SqliteStorageOptions,
  ) {
    this.stmt = prepareStatements(db);
    const maxLogRev = (db.prepare('SELECT MAX(rev) AS rev FROM log').get() as { rev: number | null }).rev ?? 0;
    this.revision = Math.max(this.stmt.getMeta.get('revision')?.value ?? 0, maxLogRev);
    this.committedRevision = this.revision;
    this.compactedRevision = this.stmt.getMeta.get('compacted')?.value ?? 0;
    // A crash during compaction leaves log rows at or below the compacted revision; finish the job.
    const minRev = this.stmt.minLogRev.get()?.rev;
    if (minRev !== null && minRev !== undefined && minRev <= this.compactedRevision) {
      this.compaction = this.deleteLogUpTo(this.compactedRevision).catch((err: unknown) => this.opts.onBackgroundError?.(err));
    }
    if (opts.compactIntervalMs !== undefined && opts.compactIntervalMs > 0) {
      this.autoCompactTimer = setInterval(() => this.autoCompact(), opts.compactIntervalMs);
      this.autoCompactTimer.unref();
    }
  }

  static async open(opts: SqliteStorageOptions): Promise<SqliteStorage> {
    mkdirSync(dirname(opts.path), { recursive: true });
    let db: Database.Database | undefined;
    try {
      db = new Database(opts.path, { timeout: 0 });
      // EXCLUSIVE before WAL: SQLite then keeps the WAL index in heap memory, and the lock taken by the
      // first transaction below is held until close, so a second writer fails fast instead of
      // corrupting our in-memory revision counter. The OS drops the lock when a process dies.
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.exec('BEGIN EXCLUSIVE');
      db.exec(SCHEMA);
      db.exec('COMMIT');
      return new SqliteStorage(db, opts);
    } catch (err) {
      db?.close();
      if ((err as { code?: unknown }).code === 'SQLITE_BUSY') {
        throw new StorageUnavailableError(
          `sqlite database ${opts.path} is already open in another process (another kplane server on the same data path?). ` +
            `Stop that process, or give this one a different database path.`,
          { cause: err },
        );
      }
      throw new StorageUnavailableError(`cannot open sqlite database ${opts.path}: ${(err as Error).message}`, { cause: err });
    }
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
    if (requested > 0 && requested < this.compactedRevision) throw new ExpiredError(requested, this.compactedRevision + 1);
    const end = prefixEnd(prefix);
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : -1;
    if (requested === 0 || requested >= this.committedRevision) {
      const revision = this.committedRevision;
      const items = this.stmt.listLatest.all({ from, end, limit }).map(kvFromRow);
      const last = items.at(-1);
      if (limit < 0 || items.length < limit || last === undefined) return { items, revision, more: false };
      const remaining = this.stmt.countAfter.get(last.key, end)?.n ?? 0;
      return remaining > 0 ? { items, revision, more: true, remaining } : { items, revision, more: false };
    }
    const items = this.stmt.listAt.all({ rev: requested, from, end, limit }).map(kvFromRow);
    const last = items.at(-1);
    if (limit < 0 || items.length < limit || last === undefined) return { items, revision: requested, more: false };
    const remaining = this.stmt.countAt.get({ rev: requested, from: last.key + '\0', end })?.n ?? 0;
    return remaining > 0 ? { items, revision: requested, more: true, remaining } : { items, revision: requested, more: false };
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen();
    return this.stmt.countRange.get(prefix, prefixEnd(prefix))?.n ?? 0;
  }

  create(key: string, value: Uint8Array): Promise<KV> {
    return new Promise((resolve, reject) => this.enqueue({ op: 'create', key, value, settle: { resolve, reject } }));
  }

  update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    return new Promise((resolve, reject) =>
      this.enqueue({ op: 'update', key, value, expected: expectedModRevision, settle: { resolve, reject } }),
    );
  }

  delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    return new Promise((resolve, reject) =>
      this.enqueue({ op: 'delete', key, expected: expectedModRevision, settle: { resolve, reject } }),
    );
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    let progressTimer: NodeJS.Timeout | undefined;
    const watcher: SqliteWatcher = {
      prefix,
      channel: new WatchChannel<WatchEvent>({
        prefix,
        capacity: this.opts.watchBufferCapacity ?? 100_000,
        signal: opts.signal,
        onClose: () => {
          this.watchers.delete(watcher);
          if (progressTimer !== undefined) clearInterval(progressTimer);
        },
        // Every committed event was pushed to this watcher during its commit, so this is a safe bookmark.
        onRequestProgress: () => watcher.channel.push({ type: 'progress', revision: this.committedRevision }),
      }),
    };
    const { channel } = watcher;
    if (channel.isClosed) return channel;
    if (this.closed) {
      channel.fail(new StorageUnavailableError('sqlite storage is closed'));
      return channel;
    }
    if (opts.afterRevision > 0) {
      if (opts.afterRevision < this.compactedRevision) {
        channel.fail(new ExpiredError(opts.afterRevision, this.compactedRevision + 1));
        return channel;
      }
      // Catch-up and registration happen in one synchronous step: no commit can slip in between.
      const rows = this.stmt.logAfter.all({ after: opts.afterRevision, upTo: this.committedRevision, from: prefix, end: prefixEnd(prefix) });
      for (const row of rows) if (!channel.push(eventFromLog(row))) return channel;
    }
    this.watchers.add(watcher);
    if (opts.progressIntervalMs !== undefined && opts.progressIntervalMs > 0) {
      progressTimer = setInterval(() => {
        if (channel.buffered === 0) channel.push({ type: 'progress', revision: this.committedRevision });
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
    return this.compactedRevision + 1;
  }

  async compact(revision: number): Promise<void> {
    this.assertOpen();
    const target = Math.min(revision, this.committedRevision);
    if (target > this.compactedRevision) {
      // Persisted and visible before any row goes, so no reader ever sees a half-compacted history.
      this.stmt.setMeta.run('compacted', target);
      this.compactedRevision = target;
    }
    const done = this.compaction.then(() => this.deleteLogUpTo(this.compactedRevision));
    this.compaction = done.catch(() => undefined);
    await done;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new StorageUnavailableError('sqlite storage is closed');
    try {
      this.db.prepare('SELECT 1').get();
    } catch (err) {
      throw new StorageUnavailableError(`sqlite is not answering: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.pending.length > 0) this.flush();
    this.closed = true;
    if (this.autoCompactTimer !== undefined) clearInterval(this.autoCompactTimer);
    for (const w of [...this.watchers]) w.channel.fail(new StorageUnavailableError('sqlite storage closed'));
    await this.compaction;
    this.db.close();
  }

  private enqueue(write: PendingWrite): void {
    if (this.closed) {
      write.settle.reject(new StorageUnavailableError('sqlite storage is closed'));
      return;
    }
    this.pending.push(write);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      // setImmediate, not a microtask: every write issued during this turn of the event loop,
      // including those issued from promise continuations, joins the same transaction.
      setImmediate(() => this.flush());
    }
  }

  /** Commits every pending write in one transaction, then tells watchers and callers. */
  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0 || this.closed) {
      for (const w of batch) w.settle.reject(new StorageUnavailableError('sqlite storage is closed'));
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const events: ChangeEvent[] = [];
    const revisionBefore = this.revision;
    try {
      this.db.transaction(() => {
        for (const write of batch) {
          try {
            outcomes.push({ ok: true, value: this.apply(write, events) });
          } catch (err) {
            // A lost compare-and-swap fails that write alone; anything else aborts the batch.
            if (!(err instanceof StorageError)) throw err;
            outcomes.push({ ok: false, error: err });
          }
        }
        if (this.revision !== revisionBefore) this.stmt.setMeta.run('revision', this.revision);
      }).immediate();
    } catch (err) {
      this.revision = revisionBefore;
      const failure = new StorageUnavailableError(`sqlite commit failed: ${(err as Error).message}`, { cause: err });
      for (const w of batch) w.settle.reject(failure);
      return;
    }
    this.commits++;
    this.committedRevision = this.revision;
    for (const event of events) {
      for (const w of this.watchers) if (event.kv.key.startsWith(w.prefix)) w.channel.push(event);
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) (write.settle as Settle<unknown>).resolve(outcome.value);
      else write.settle.reject(outcome?.error);
    });
  }

  /** Runs inside the batch transaction; throws a StorageError when the precondition fails. */
  private apply(write: PendingWrite, events: ChangeEvent[]): unknown {
    const { key } = write;
    const row = this.stmt.getKv.get(key);
    if (write.op === 'create') {
      if (row !== undefined) throw new KeyExistsError(key);
      const rev = this.revision + 1;
      const blob = toBuffer(write.value);
      this.stmt.insertKv.run(key, blob, rev, rev);
      this.stmt.insertLog.run(rev, key, 0, blob, rev, null, null, null);
      this.revision = rev;
      const kv: KV = { key, value: blob, createRevision: rev, modRevision: rev };
      events.push({ type: 'put', kv, revision: rev });
      return kv;
    }
    if (row === undefined) throw new KeyNotFoundError(key);
    const prevKv = kvFromRow(row);
    if (write.expected !== undefined && write.expected !== row.mod_rev) throw new ConflictError(key, prevKv);
    const rev = this.revision + 1;
    if (write.op === 'update') {
      const blob = toBuffer(write.value);
      this.stmt.updateKv.run(blob, rev, key);
      this.stmt.insertLog.run(rev, key, 0, blob, row.create_rev, row.value, row.create_rev, row.mod_rev);
      this.revision = rev;
      const kv: KV = { key, value: blob, createRevision: row.create_rev, modRevision: rev };
      events.push({ type: 'put', kv, prevKv, revision: rev });
      return kv;
    }
    this.stmt.deleteKv.run(key);
    this.stmt.insertLog.run(rev, key, 1, row.value, row.create_rev, null, row.create_rev, row.mod_rev);
    this.revision = rev;
    events.push({ type: 'delete', kv: { ...prevKv, modRevision: rev }, prevKv, revision: rev });
    return { kv: prevKv, revision: rev };
  }

  /** Deletes history in small transactions, yielding between them so requests keep flowing. */
  private async deleteLogUpTo(revision: number): Promise<void> {
    const chunkRows = this.opts.compactionChunkRows ?? 1_000;
    while (!this.closed) {
      const deleted = this.stmt.deleteLogChunk.run(revision, chunkRows).changes;
      if (deleted < chunkRows) return;
      await yieldToEventLoop();
    }
  }

  private autoCompact(): void {
    const target = this.committedRevision - (this.opts.retainRevisions ?? 10_000);
    if (this.closed || target <= this.compactedRevision) return;
    this.compact(target).catch((err: unknown) => this.opts.onBackgroundError?.(err));
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageUnavailableError('sqlite storage is closed');
  }
}

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Database.Database) {
  return {
    getKv: db.prepare<[string], KvRow>('SELECT key, value, create_rev, mod_rev FROM kv WHERE key = ?'),
    insertKv: db.prepare('INSERT INTO kv (key, value, create_rev, mod_rev) VALUES (?, ?, ?, ?)'),
    updateKv: db.prepare('UPDATE kv SET value = ?, mod_rev = ? WHERE key = ?'),
    deleteKv: db.prepare('DELETE FROM kv WHERE key = ?'),
    insertLog: db.prepare(
      'INSERT INTO log (rev, key, deleted, value, create_rev, prev_value, prev_create_rev, prev_mod_rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    listLatest: db.prepare<{ from: string; end: string; limit: number }, KvRow>(
      'SELECT key, value, create_rev, mod_rev FROM kv WHERE key >= @from AND key < @end ORDER BY key LIMIT @limit',
    ),
    countRange: db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM kv WHERE key >= ? AND key < ?'),
    countAfter: db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM kv WHERE key > ? AND key < ?'),
    listAt: db.prepare<{ rev: number; from: string; end: string; limit: number }, KvRow>(STATE_AT),
    countAt: db.prepare<{ rev: number; from: string; end: string }, { n: number }>(COUNT_STATE_AT),
    logAfter: db.prepare<{ after: number; upTo: number; from: string; end: string }, LogRow>(
      'SELECT * FROM log WHERE rev > @after AND rev <= @upTo AND key >= @from AND key < @end ORDER BY rev',
    ),
    deleteLogChunk: db.prepare('DELETE FROM log WHERE rev IN (SELECT rev FROM log WHERE rev <= ? ORDER BY rev LIMIT ?)'),
    minLogRev: db.prepare<[], { rev: number | null }>('SELECT MIN(rev) AS rev FROM log'),
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
