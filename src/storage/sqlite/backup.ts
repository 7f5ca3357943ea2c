// Backup and restore of the SQLite database (`kplane backup`, `kplane restore`).
//
// A backup is `VACUUM INTO`, run from a connection of its own (read-only on the source), not
// SQLite's online backup API (better-sqlite3's `db.backup()`). The backup API copies a few pages
// per step and starts again from the first page whenever another connection writes the source
// between steps; under a server's steady write load a large database would never finish (and a
// single step, which would finish, reports no progress). `VACUUM INTO` reads one snapshot in one
// read transaction: in WAL mode that never blocks the server's writer (it only keeps the WAL from
// being reset until it ends), and the copy is a consistent database at one revision, compact, in
// rollback-journal mode, with no -wal beside it. It runs on a worker thread so that this thread can
// report progress (the output's size against the source's used pages) and be interrupted.
//
// A restore writes a copy of the backup into the data directory while holding the server's writer
// lock (so no server can start on it meanwhile), then moves the revision forward and marks it
// compacted, as `etcdutl snapshot restore --bump-revision --mark-compacted` does for etcd: every
// resourceVersion a client obtained from the server before the restore is then older than the
// compacted revision, so a watch or a read at it is answered 410 Gone ("too old resource version")
// and the client lists again, instead of being resumed into a history that diverged.
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ensurePrivateDir, ensurePrivateFile } from '../private-files.js';
import { lockPath } from './writer-core.js';

/** The database file in a data directory, as `sqlite({ dir })` names it. */
export const DATABASE_FILE = 'kplane.db';

/**
 * The revision a restore adds by default: the value etcd's and Kubernetes' restore procedures use
 * with `etcdutl snapshot restore --bump-revision 1000000000 --mark-compacted`. It must exceed the
 * number of writes the server accepted after the backup was taken.
 */
export const DEFAULT_BUMP_REVISION = 1_000_000_000;

export type BackupErrorCode = 'no-database' | 'not-kplane' | 'exists' | 'disk-full' | 'in-use' | 'not-empty' | 'interrupted' | 'failed';

/** A backup or restore refused or failed; the message says what to do. Nothing half-written is left. */
export class BackupError extends Error {
  override readonly name = 'BackupError';
  constructor(
    readonly code: BackupErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a kplane database holds, read in one snapshot. */
export interface DatabaseInfo {
  /** The revision of the last write (meta `revision`). */
  readonly revision: number;
  /** History at or below this revision is gone (meta `compacted`). */
  readonly compacted: number;
  /** Live keys (objects, plus kplane's own bookkeeping key). */
  readonly keys: number;
  /** `v1`: written before 2026-11-27 (values in `kv`); the server converts it on its first start. */
  readonly layout: 'current' | 'v1';
}

export interface BackupProgress {
  readonly copiedBytes: number;
  /** What the copy is expected to reach: the source's pages in use. */
  readonly totalBytes: number;
}

export interface BackupOptions {
  /** The database to copy (a data directory's kplane.db). A server may be writing it. */
  readonly source: string;
  /** Where the copy goes; written 0600. */
  readonly output: string;
  /** Replace `output` when it exists. */
  readonly force?: boolean;
  /** Called every `progressIntervalMs` while the copy runs (not at all when it is quicker). */
  readonly onProgress?: (p: BackupProgress) => void;
  readonly progressIntervalMs?: number;
  /** Stops the copy; the partial output is removed and the promise rejects with code `interrupted`. */
  readonly signal?: AbortSignal;
}

export interface BackupResult extends DatabaseInfo {
  readonly bytes: number;
}

/** Copies a kplane database, consistently, while a server may be serving from it. */
export async function backupDatabase(opts: BackupOptions): Promise<BackupResult> {
  const { source, output } = opts;
  if (!isFile(source))
    throw new BackupError(
      'no-database',
      `no kplane database at ${source} (kplane serve --data-dir DIR keeps it in DIR/${DATABASE_FILE}; is --data-dir right? ` +
        'A server with --storage etcd keeps its data in etcd: back that up with etcdctl snapshot save)',
    );
  inspectDatabase(source);
  const existing = statOrUndefined(output);
  if (existing?.isDirectory()) throw new BackupError('exists', `${output} is a directory; name the file the backup goes to`);
  if (existing && !opts.force) throw new BackupError('exists', `${output} already exists; choose another name, or pass --force to replace it`);
  if (!statOrUndefined(dirname(output))?.isDirectory()) throw new BackupError('failed', `the directory of ${output} does not exist`);
  const tmp = join(dirname(output), `.${basename(output)}.partial-${process.pid}`);
  try {
    await vacuumInto(source, tmp, opts);
    const info = verify(tmp, `the copy of ${source}`);
    syncFile(tmp);
    renameSync(tmp, output);
    syncDir(dirname(output));
    return { ...info, bytes: statSync(output).size };
  } catch (err) {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-journal`, { force: true });
    throw asBackupError(err, output);
  }
}

/** Reads what a file holds, or says why it is not a kplane database (code `not-kplane`). */
export function inspectDatabase(path: string): DatabaseInfo {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError('not-kplane', `${path} is not a kplane database: ${(err as Error).message}`, { cause: err });
  }
  try {
    return readInfo(db, path);
  } finally {
    db.close();
  }
}

function readInfo(db: Database.Database, path: string): DatabaseInfo {
  const notKplane = (why: string): BackupError => new BackupError('not-kplane', `${path} is not a kplane database: ${why}`);
  let columns: Map<string, string[]>;
  try {
    columns = new Map(
      ['kv', 'log', 'meta'].map((t) => [
        t,
        db
          .prepare<[], { name: string }>(`PRAGMA table_info(${t})`)
          .all()
          .map((c) => c.name),
      ]),
    );
  } catch (err) {
    throw notKplane((err as Error).message);
  }
  const want: Record<string, string[]> = {
    kv: ['key', 'create_rev', 'mod_rev'],
    log: ['rev', 'key', 'deleted', 'value', 'create_rev', 'prev_value', 'prev_create_rev', 'prev_mod_rev'],
    meta: ['name', 'value'],
  };
  for (const [table, names] of Object.entries(want)) {
    const have = columns.get(table) ?? [];
    if (have.length === 0) throw notKplane(`it has no table "${table}"`);
    const missing = names.filter((n) => !have.includes(n));
    if (missing.length) throw notKplane(`table "${table}" lacks ${missing.map((m) => `"${m}"`).join(', ')}`);
  }
  return db.transaction((): DatabaseInfo => {
    const meta = (name: string): number | undefined =>
      db.prepare<[string], { value: unknown }>('SELECT value FROM meta WHERE name = ?').get(name)?.value as number | undefined;
    const revision = meta('revision');
    const maxRev = db.prepare<[], { rev: number | null }>('SELECT MAX(rev) AS rev FROM log').get()?.rev ?? 0;
    if (revision !== undefined && !Number.isSafeInteger(revision)) throw notKplane(`its revision is ${String(revision)}, not a whole number`);
    const compacted = meta('compacted') ?? 0;
    if (!Number.isSafeInteger(compacted)) throw notKplane(`its compacted revision is ${String(compacted)}, not a whole number`);
    const keys = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM kv').get()?.n ?? 0;
    return { revision: Math.max(revision ?? 0, maxRev), compacted, keys, layout: columns.get('kv')?.includes('value') ? 'v1' : 'current' };
  })();
}

/** inspectDatabase plus SQLite's quick_check: every page and index of the file is readable. */
function verify(path: string, what: string): DatabaseInfo {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const info = readInfo(db, path);
    const problems = db
      .prepare<[], { quick_check: string }>('PRAGMA quick_check')
      .all()
      .map((r) => r.quick_check);
    if (problems.join() !== 'ok') throw new BackupError('failed', `${what} is damaged (SQLite quick_check): ${problems.slice(0, 5).join('; ')}`);
    return info;
  } finally {
    db.close();
  }
}

export interface RestoreOptions {
  /** A backup (`kplane backup`), or a kplane.db copied from a stopped server. */
  readonly input: string;
  /** The data directory to restore into; created 0700 when missing. */
  readonly dataDir: string;
  /** Restore into a directory that is not empty (its database is replaced; other files stay). */
  readonly force?: boolean;
  /**
   * Revisions to move forward by (default DEFAULT_BUMP_REVISION), counted from the backup's
   * revision or from the replaced database's, whichever is higher; the new revision is marked
   * compacted. 0 keeps the backup's revisions and history as they are.
   */
  readonly bumpRevision?: number;
  readonly onProgress?: (p: BackupProgress) => void;
  readonly progressIntervalMs?: number;
  readonly signal?: AbortSignal;
  /** Told about what a restore notices on its way (a replaced database it could not read). */
  readonly onNotice?: (message: string) => void;
}

export interface RestoreResult {
  /** The database written (dataDir/kplane.db). */
  readonly path: string;
  /** The backup's own revision and keys. */
  readonly backup: DatabaseInfo;
  /** The revision of the database the restore replaced, when there was one it could read. */
  readonly replacedRevision: number | undefined;
  /** The revision the restored database starts from (and, when moved, its compacted revision). */
  readonly revision: number;
}

/** Writes a backup into a data directory no server is using. */
export async function restoreDatabase(opts: RestoreOptions): Promise<RestoreResult> {
  const { input, dataDir } = opts;
  const bump = opts.bumpRevision ?? DEFAULT_BUMP_REVISION;
  if (!Number.isSafeInteger(bump) || bump < 0) throw new BackupError('failed', `the revision bump must be a whole number, 0 or more; got ${bump}`);
  if (!isFile(input)) throw new BackupError('no-database', `no backup at ${input}`);
  const backup = verify(input, input);
  const dirStat = statOrUndefined(dataDir);
  if (dirStat && !dirStat.isDirectory()) throw new BackupError('failed', `${dataDir} is not a directory`);
  const path = join(dataDir, DATABASE_FILE);
  // A server holds the lock file for as long as it runs; its absence means none runs here.
  if (dirStat && isFile(lockPath(path))) releaseWriterLock(takeWriterLock(path));
  const entries = dirStat ? readdirSync(dataDir) : [];
  if (entries.length > 0 && !opts.force)
    throw new BackupError(
      'not-empty',
      `${dataDir} is not empty (${entries.slice(0, 4).join(', ')}${entries.length > 4 ? ', …' : ''}); restore into a new directory, or pass --force to replace its database (other files in it are kept)`,
    );
  ensurePrivateDir(dataDir, opts.onNotice);
  const lock = takeWriterLock(path);
  const tmp = join(dataDir, `.${DATABASE_FILE}.restoring-${process.pid}`);
  try {
    let replacedRevision: number | undefined;
    if (isFile(path)) {
      try {
        replacedRevision = inspectDatabase(path).revision;
      } catch (err) {
        opts.onNotice?.(`the database being replaced (${path}) could not be read, so its revision is not known: ${(err as Error).message}`);
      }
    }
    await vacuumInto(input, tmp, opts);
    const revision = bump > 0 ? Math.max(backup.revision, replacedRevision ?? 0) + bump : backup.revision;
    if (!Number.isSafeInteger(revision)) throw new BackupError('failed', `the revision after the bump (${revision}) is too large`);
    if (bump > 0) bumpAndMarkCompacted(tmp, revision, backup.layout);
    syncFile(tmp);
    // The old database's WAL must not be replayed into the new one: it goes first.
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
    renameSync(tmp, path);
    syncDir(dataDir);
    return { path, backup, replacedRevision, revision };
  } catch (err) {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-journal`, { force: true });
    throw asBackupError(err, path);
  } finally {
    releaseWriterLock(lock);
  }
}

/**
 * The revision moves to `revision` and everything at or below it is compacted: the history of the
 * backup goes (each live key keeps its current row and resourceVersion), as after etcdutl's
 * `--bump-revision --mark-compacted`. The next write gets `revision + 1`.
 */
function bumpAndMarkCompacted(path: string, revision: number, layout: DatabaseInfo['layout']): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    db.transaction(() => {
      // The earlier layout keeps current values in `kv`, and the server's conversion puts them back
      // into `log`; a log row it finds at or below the compacted revision would make it resume a
      // compaction over every revision up to the bumped one, so none is left.
      if (layout === 'v1') db.exec('DELETE FROM log');
      else db.exec('DELETE FROM log WHERE NOT EXISTS (SELECT 1 FROM kv WHERE kv.key = log.key AND kv.mod_rev = log.rev)');
      const set = db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value');
      set.run('revision', revision);
      set.run('compacted', revision);
      set.run('compaction_done', revision);
    })();
  } finally {
    db.close();
  }
}

/**
 * Holds the writer lock of the database at `path` as a server does (writer-core.ts): an EXCLUSIVE
 * lock on the `-lock` file, which the OS drops if this process dies.
 */
function takeWriterLock(path: string, then = 'then run the restore again'): Database.Database {
  ensurePrivateFile(lockPath(path), { create: true });
  const lock = new Database(lockPath(path), { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
    lock.exec('CREATE TABLE IF NOT EXISTS writer_lock (note TEXT)');
    lock.exec('COMMIT');
    return lock;
  } catch (err) {
    lock.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY')
      throw new BackupError('in-use', `${dirname(path)} is in use by a running kplane server; stop it first (${then})`, { cause: err });
    throw err;
  }
}

function releaseWriterLock(lock: Database.Database): void {
  lock.close();
}

// The copy runs on a worker thread, so that this thread stays free to report progress and to stop
// it. Plain JavaScript evaluated in the worker (no TypeScript loader needed there); better-sqlite3 is
// resolved here and passed in.
const VACUUM_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.source, { readonly: true, fileMustExist: true, timeout: 5000 });
try {
  db.prepare('VACUUM INTO ?').run(workerData.output);
  parentPort.postMessage({ ok: true });
} catch (err) {
  parentPort.postMessage({ ok: false, message: err.message, code: err.code });
} finally {
  db.close();
}
`;

const requireHere = createRequire(import.meta.url);

/** `VACUUM INTO output` from a read-only connection to `source`, on a worker thread. */
async function vacuumInto(
  source: string,
  output: string,
  opts: { onProgress?: (p: BackupProgress) => void; progressIntervalMs?: number; signal?: AbortSignal },
): Promise<void> {
  opts.signal?.throwIfAborted();
  // VACUUM INTO wants a missing or empty file: made empty here, 0600, so the copy is never readable by others.
  rmSync(output, { force: true });
  closeSync(openSync(output, 'wx', 0o600));
  ensurePrivateFile(output);
  const totalBytes = usedBytes(source);
  const worker = new Worker(VACUUM_WORKER, { eval: true, workerData: { module: requireHere.resolve('better-sqlite3'), source, output } });
  const timer = opts.onProgress
    ? setInterval(() => {
        const copiedBytes = statOrUndefined(output)?.size ?? 0;
        opts.onProgress?.({ copiedBytes: Math.min(copiedBytes, totalBytes), totalBytes });
      }, opts.progressIntervalMs ?? 1_000)
    : undefined;
  const onAbort = (): void => void worker.terminate();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await new Promise<{ ok: boolean; message?: string; code?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) =>
        reject(opts.signal?.aborted ? new BackupError('interrupted', 'interrupted') : new Error(`the copy's thread exited with code ${code}`)),
      );
    });
    if (!result.ok) throw Object.assign(new Error(result.message ?? 'the copy failed'), { code: result.code });
  } finally {
    if (timer) clearInterval(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    await worker.terminate();
  }
}

/** Bytes of the pages in use (the free list aside): what VACUUM INTO writes, near enough. */
function usedBytes(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    return Math.max(1, (pages - free) * (db.pragma('page_size', { simple: true }) as number));
  } finally {
    db.close();
  }
}

function asBackupError(err: unknown, output: string): BackupError {
  if (err instanceof BackupError) return err;
  const e = err as { code?: unknown; message?: string };
  if (e.code === 'SQLITE_FULL' || e.code === 'ENOSPC' || e.code === 'EFBIG')
    return new BackupError('disk-full', `no space left to write ${output} (${e.message}); free some space or write elsewhere. Nothing was written.`, {
      cause: err,
    });
  return new BackupError('failed', `cannot write ${output}: ${e.message ?? String(err)}`, { cause: err });
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function isFile(path: string): boolean {
  return statOrUndefined(path)?.isFile() ?? false;
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes a rename in `dir` durable. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** One stored object: its key and the bytes stored (JSON, or `k8s:enc:…` when encrypted at rest). */
export interface StoredValue {
  readonly key: string;
  readonly value: Buffer;
}

/**
 * Reads the database of a stopped server (`kplane upgrade-check --data-dir`): `read` gets a
 * function that yields the current value of every key under a prefix, in key order. The writer
 * lock is held meanwhile, so no server starts on the directory while it is read, and a running
 * server refuses it (`in-use`: the API is the way to read a live server). The connection is
 * read-only: nothing is written, not even a checkpoint.
 */
export function readStoppedDatabase<T>(
  dataDir: string,
  read: (values: (prefix: string) => Iterable<StoredValue>) => T,
  then = 'or read it through the API',
): T {
  const path = join(dataDir, DATABASE_FILE);
  if (!isFile(path)) throw new BackupError('no-database', `no kplane database at ${path}`);
  const lock = takeWriterLock(path, then);
  try {
    const { layout } = inspectDatabase(path);
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const stmt = db.prepare<[string, string], StoredValue>(
        layout === 'v1'
          ? 'SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key'
          : 'SELECT kv.key AS key, log.value AS value FROM kv JOIN log ON log.rev = kv.mod_rev WHERE kv.key >= ? AND kv.key < ? ORDER BY kv.key',
      );
      // Keys compare as bytes: every key under `prefix` sorts below the prefix with its last character moved up by one.
      const end = (prefix: string): string => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      return read((prefix) => stmt.iterate(prefix, end(prefix)));
    } finally {
      db.close();
    }
  } finally {
    releaseWriterLock(lock);
  }
}
