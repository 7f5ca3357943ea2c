// The SQLite writer: owns the only write connection, assigns revisions inside each transaction and
// reports every commit (with what changed) back to SqliteStorage. It runs in a worker thread
// (writer-worker.ts) so that fsync never blocks the API server's event loop, or in-process when
// `inProcessWriter` is set. It knows nothing about threads: it takes messages and calls `send`.
import Database from 'better-sqlite3';
import type { FromWriter, ToWriter, WireKv, WireOutcome, WireWrite, WriterConfig } from './protocol.js';

// Every value is stored once, in `log`, the row of the revision that wrote it; `kv` indexes the
// current revision of each live key. (Until 2026-11 `kv` held a second copy of each value: with
// 1 KiB values only ~3 rows fit a 4 KiB page, so a create into a random place of the key order
// split pages and wrote ~2.7 times the bytes and took ~2.5 times the CPU per create in a raw micro.) The current
// row of a live key is never compacted away; a row stops being current when its key is written
// again, and compaction removes it once its revision is at or below the compacted revision.
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY,
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

/** The name of the log's key index of the 2026-12-06 builds, dropped on open. */
export const RETIRED_LOG_KEY_INDEX = 'log_key_rev';

/**
 * Databases written before the value moved out of `kv` (a `value` column there) are rewritten in
 * one transaction on open: a current value whose log row was compacted away gets that row back,
 * then `kv` loses the column. It also records how far compaction had got (`compaction_done`): the
 * old compaction deleted log rows from the oldest up, so an unfinished one left rows at or below
 * `compacted`. The operator is told before and after (it takes seconds for 100,000 keys).
 */
function migrateV1(db: Database.Database, send: Send): void {
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(kv)').all();
  if (!columns.some((c) => c.name === 'value')) return;
  const keys = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM kv').get()?.n ?? 0;
  const started = performance.now();
  send({
    type: 'notice',
    message: `sqlite: converting ${keys} keys to the current storage layout (each value stored once); this happens once and takes about 3 s per 100,000 keys`,
  });
  db.transaction(() => {
    const compacted = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'compacted'").get()?.value ?? 0;
    const minRev = db.prepare<[], { rev: number | null }>('SELECT MIN(rev) AS rev FROM log').get()?.rev ?? null;
    const done = minRev !== null && minRev <= compacted ? minRev - 1 : compacted;
    db.exec(`
INSERT INTO log (rev, key, deleted, value, create_rev)
  SELECT mod_rev, key, 0, value, create_rev FROM kv WHERE NOT EXISTS (SELECT 1 FROM log WHERE log.rev = kv.mod_rev);
CREATE TABLE kv_v2 (key TEXT PRIMARY KEY, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO kv_v2 (key, create_rev, mod_rev) SELECT key, create_rev, mod_rev FROM kv;
DROP TABLE kv;
ALTER TABLE kv_v2 RENAME TO kv;`);
    db.prepare("INSERT INTO meta (name, value) VALUES ('compaction_done', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value").run(done);
  }).immediate();
  send({ type: 'notice', message: `sqlite: converted ${keys} keys in ${((performance.now() - started) / 1000).toFixed(1)} s` });
}

interface KvRow {
  create_rev: number;
  mod_rev: number;
}

interface StoredKv extends KvRow {
  value: Buffer;
}

/** Opening failed; `busy` when another connection holds the writer lock. */
export class WriterOpenError extends Error {
  constructor(
    message: string,
    readonly busy: boolean,
  ) {
    super(message);
  }
}

export type Send = (msg: FromWriter, transfer?: ArrayBuffer[]) => void;

/** The lock file next to the database; see WriterCore.open. */
export function lockPath(path: string): string {
  return `${path}-lock`;
}

export class WriterCore {
  private revision: number;
  private compacted: number;
  /** Compaction has removed every non-current log row at or below this revision (meta `compaction_done`). */
  private compactionDone: number;
  private closed = false;
  private compacting = false;
  /** compact requests answered when the running deletion loop finishes. */
  private compactWaiters: number[] = [];
  private readonly stmt: ReturnType<typeof prepare>;

  private constructor(
    private readonly lock: Database.Database,
    private readonly db: Database.Database,
    private readonly config: WriterConfig,
    private readonly send: Send,
  ) {
    this.stmt = prepare(db);
    const maxLogRev = (db.prepare('SELECT MAX(rev) AS rev FROM log').get() as { rev: number | null }).rev ?? 0;
    const metaRev = this.stmt.getMeta.get('revision')?.value ?? 0;
    this.revision = Math.max(metaRev, maxLogRev);
    // Readers on the main thread take the revision of their snapshot from `meta`, so it must be exact.
    if (this.revision !== metaRev) this.stmt.setMeta.run('revision', this.revision);
    this.compacted = this.stmt.getMeta.get('compacted')?.value ?? 0;
    this.compactionDone = this.stmt.getMeta.get('compaction_done')?.value ?? this.compacted;
    // A crash during compaction leaves it short of the compacted revision; finish the job.
    if (this.compactionDone < this.compacted) this.runCompaction();
  }

  /**
   * Takes the writer lock, then opens the database in WAL mode with synchronous=FULL.
   *
   * The database itself is in normal locking mode, because SqliteStorage reads through a second
   * connection (EXCLUSIVE locking would shut it out). A second writer is refused by a small lock
   * database held in EXCLUSIVE locking mode for the life of this connection: SQLite enforces it
   * between connections of one process and, through an OS file lock, between processes, and the OS
   * drops it when the process dies, so a crash leaves no stale lock.
   */
  static open(config: WriterConfig, send: Send): WriterCore {
    let lock: Database.Database | undefined;
    let db: Database.Database | undefined;
    try {
      lock = new Database(lockPath(config.path), { timeout: 0 });
      lock.pragma('locking_mode = EXCLUSIVE');
      lock.exec('BEGIN EXCLUSIVE');
      lock.exec('CREATE TABLE IF NOT EXISTS writer_lock (note TEXT)');
      lock.exec('COMMIT');
      db = new Database(config.path, { timeout: 5_000 });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma(`wal_autocheckpoint = ${config.walAutoCheckpointPages}`);
      db.exec('BEGIN IMMEDIATE');
      db.exec(SCHEMA);
      db.exec('COMMIT');
      migrateV1(db, send);
      // The log's key index was added on 2026-12-06 and taken out the same day (it cost creates 18 %
      // and updates 7 % at 64 clients): a database opened by a build that had it loses it again.
      db.exec(`DROP INDEX IF EXISTS ${RETIRED_LOG_KEY_INDEX}`);
      return new WriterCore(lock, db, config, send);
    } catch (err) {
      db?.close();
      lock?.close();
      throw new WriterOpenError((err as Error).message, (err as { code?: unknown }).code === 'SQLITE_BUSY');
    }
  }

  get currentRevision(): number {
    return this.revision;
  }

  get compactedRevision(): number {
    return this.compacted;
  }

  handle(msg: ToWriter): void {
    if (this.closed) return;
    switch (msg.type) {
      case 'batch':
        this.commitBatch(msg.id, msg.writes, msg.values);
        return;
      case 'compact':
        try {
          // Persisted before any row goes, so a reader that misses a row also sees it is compacted.
          if (msg.revision > this.compacted) {
            this.stmt.setMeta.run('compacted', msg.revision);
            this.compacted = msg.revision;
          }
        } catch (err) {
          this.send({ type: 'compact-failed', id: msg.id, message: (err as Error).message });
          return;
        }
        this.compactWaiters.push(msg.id);
        this.runCompaction();
        return;
      case 'close':
        this.closed = true;
        this.db.close();
        this.lock.close();
        this.send({ type: 'closed' });
        return;
    }
  }

  private commitBatch(id: number, writes: WireWrite[], packed: Uint8Array): void {
    const values = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
    const outcomes: WireOutcome[] = [];
    const out: Buffer[] = [];
    let outLen = 0;
    const wire = (row: StoredKv): WireKv => {
      const kv = { createRev: row.create_rev, modRev: row.mod_rev, off: outLen, len: row.value.byteLength };
      out.push(row.value);
      outLen += row.value.byteLength;
      return kv;
    };
    const revisionBefore = this.revision;
    try {
      this.db
        .transaction(() => {
          for (const write of writes) outcomes.push(this.apply(write, values, wire));
          if (this.revision !== revisionBefore) this.stmt.setMeta.run('revision', this.revision);
        })
        .immediate();
    } catch (err) {
      // Nothing of the batch was committed: hand its revisions out again.
      this.revision = revisionBefore;
      this.send({ type: 'batch', id, ok: false, message: (err as Error).message });
      return;
    }
    const reply = new Uint8Array(outLen);
    let off = 0;
    for (const b of out) {
      reply.set(b, off);
      off += b.byteLength;
    }
    this.send({ type: 'batch', id, ok: true, revision: this.revision, outcomes, values: reply }, [reply.buffer]);
  }

  /** Runs inside the batch transaction. A failed precondition fails this write only. */
  private apply(write: WireWrite, values: Buffer, wire: (row: StoredKv) => WireKv): WireOutcome {
    const { key } = write;
    const row = this.stmt.getKv.get(key);
    if (write.op === 'create') {
      if (row !== undefined) return { ok: false, err: 'exists' };
      const rev = this.revision + 1;
      const blob = values.subarray(write.off, write.off + write.len);
      this.stmt.insertKv.run(key, rev, rev);
      this.stmt.insertLog.run(rev, key, 0, blob, rev, null, null, null);
      this.revision = rev;
      return { ok: true, rev, createRev: rev };
    }
    if (row === undefined) return { ok: false, err: 'notfound' };
    const current = this.stored(key, row);
    if (write.expected !== undefined && write.expected !== row.mod_rev) return { ok: false, err: 'conflict', current: wire(current) };
    const rev = this.revision + 1;
    if (write.op === 'update') {
      const blob = values.subarray(write.off, write.off + write.len);
      this.stmt.updateKv.run(rev, key);
      this.stmt.insertLog.run(rev, key, 0, blob, row.create_rev, current.value, row.create_rev, row.mod_rev);
    } else {
      this.stmt.deleteKv.run(key);
      this.stmt.insertLog.run(rev, key, 1, current.value, row.create_rev, null, row.create_rev, row.mod_rev);
    }
    // The replaced row is history now; compaction has already passed its revision, so it goes here.
    if (row.mod_rev <= this.compactionDone) this.stmt.deleteLogRow.run(row.mod_rev);
    this.revision = rev;
    return { ok: true, rev, createRev: row.create_rev, prev: wire(current) };
  }

  private stored(key: string, row: KvRow): StoredKv {
    const value = this.stmt.getValue.get(row.mod_rev)?.value;
    if (value === undefined) throw new Error(`sqlite: the log row of ${key} at revision ${row.mod_rev} is missing`);
    return { ...row, value };
  }

  /**
   * Deletes history at or below `compacted` (all but each live key's current row), one window of
   * `compactionChunkRows` revisions per transaction, yielding to this thread's event loop between
   * them so that write batches interleave instead of waiting for the whole job. Progress is kept in
   * meta (`compaction_done`), so a crash resumes where it stopped.
   */
  private runCompaction(): void {
    if (this.compacting) return;
    this.compacting = true;
    const step = (): void => {
      if (this.closed) return;
      const from = this.compactionDone;
      const to = Math.max(from, Math.min(this.compacted, from + this.config.compactionChunkRows));
      try {
        if (to > from) {
          this.db
            .transaction(() => {
              this.stmt.deleteLogWindow.run(from, to);
              this.stmt.setMeta.run('compaction_done', to);
            })
            .immediate();
        }
      } catch (err) {
        this.compacting = false;
        const waiters = this.compactWaiters;
        this.compactWaiters = [];
        const message = (err as Error).message;
        if (waiters.length === 0) this.send({ type: 'background-error', message: `sqlite compaction failed: ${message}` });
        for (const id of waiters) this.send({ type: 'compact-failed', id, message });
        return;
      }
      this.compactionDone = to;
      if (to < this.compacted) {
        setImmediate(step);
        return;
      }
      this.compacting = false;
      const waiters = this.compactWaiters;
      this.compactWaiters = [];
      for (const id of waiters) this.send({ type: 'compact-done', id, compacted: this.compacted });
    };
    step();
  }
}

function prepare(db: Database.Database) {
  return {
    getKv: db.prepare<[string], KvRow>('SELECT create_rev, mod_rev FROM kv WHERE key = ?'),
    getValue: db.prepare<[number], { value: Buffer }>('SELECT value FROM log WHERE rev = ?'),
    insertKv: db.prepare('INSERT INTO kv (key, create_rev, mod_rev) VALUES (?, ?, ?)'),
    updateKv: db.prepare('UPDATE kv SET mod_rev = ? WHERE key = ?'),
    deleteKv: db.prepare('DELETE FROM kv WHERE key = ?'),
    insertLog: db.prepare('INSERT INTO log (rev, key, deleted, value, create_rev, prev_value, prev_create_rev, prev_mod_rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    deleteLogRow: db.prepare('DELETE FROM log WHERE rev = ?'),
    setMeta: db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value'),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    deleteLogWindow: db.prepare('DELETE FROM log WHERE rev > ? AND rev <= ? AND NOT EXISTS (SELECT 1 FROM kv WHERE kv.key = log.key AND kv.mod_rev = log.rev)'),
  };
}
