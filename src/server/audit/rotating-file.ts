// The audit log file, rotated as kube-apiserver's (gopkg.in/natefinch/lumberjack.v2): a write that
// would take the file past `maxSizeMB` first renames it to `<name>-<UTC time>.<ext>` (time as
// 2006-01-02T15-04-05.000) and starts a new one; then old backups beyond `maxBackups`, or older than
// `maxAgeDays` by the time in their name, are removed, and with `compress` the rest gzipped.
// Writes are synchronous: in blocking mode an event is on its way to disk before the request goes on.
import { closeSync, createReadStream, createWriteStream, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

const MEGABYTE = 1024 * 1024;
/** lumberjack's size when MaxSize is 0. */
const DEFAULT_MAX_SIZE_MB = 100;
const COMPRESS_SUFFIX = '.gz';

export interface RotatingFileOptions {
  readonly filename: string;
  /** --audit-log-maxsize: megabytes before rotation; 0 is lumberjack's default, 100. */
  readonly maxSizeMB?: number;
  /** --audit-log-maxbackup: old files kept; 0 keeps all (unless maxAge removes them). */
  readonly maxBackups?: number;
  /** --audit-log-maxage: days an old file is kept, by the time in its name; 0 keeps them. */
  readonly maxAgeDays?: number;
  /** --audit-log-compress: gzip rotated files. */
  readonly compress?: boolean;
  /** The clock (tests). */
  readonly now?: () => Date;
  /** Where a failure of the clean-up after a rotation is reported (lumberjack drops it). */
  readonly onMillError?: (e: Error) => void;
}

export class RotatingFile {
  private fd: number | undefined;
  private size = 0;
  private readonly max: number;
  private readonly now: () => Date;
  private milling: Promise<void> = Promise.resolve();
  /** Where a string is encoded before it is written (writes are synchronous, so one buffer serves all). */
  private readonly scratch = Buffer.allocUnsafe(64 * 1024);

  constructor(private readonly o: RotatingFileOptions) {
    this.max = (o.maxSizeMB && o.maxSizeMB > 0 ? o.maxSizeMB : DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.now = o.now ?? (() => new Date());
  }

  /** Appends `data`, rotating first if it would not fit; throws what the file system refused. */
  write(data: string | Uint8Array): void {
    let bytes: Uint8Array;
    if (typeof data !== 'string') bytes = data;
    else if (data.length * 3 <= this.scratch.length) {
      // Encoded into a buffer kept for it (UTF-8 is at most 3 bytes per UTF-16 unit): no allocation per event.
      bytes = this.scratch.subarray(0, this.scratch.write(data));
    } else bytes = Buffer.from(data);
    if (bytes.length > this.max) throw new Error(`write length ${bytes.length} exceeds maximum file size ${this.max}`);
    if (this.fd === undefined) this.openExistingOrNew(bytes.length);
    else if (this.size + bytes.length > this.max) this.rotate();
    let off = 0;
    while (off < bytes.length) {
      const n = writeSync(this.fd!, bytes, off, bytes.length - off);
      off += n;
      this.size += n;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }

  /** Resolves once the clean-up of the last rotation (removal, compression) is done. */
  settled(): Promise<void> {
    return this.milling;
  }

  private openExistingOrNew(writeLen: number): void {
    this.mill();
    let size: number;
    try {
      size = statSync(this.o.filename).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.openNew();
      throw new Error(`error getting log file info: ${(e as Error).message}`, { cause: e });
    }
    if (size + writeLen >= this.max) return this.rotate();
    try {
      this.fd = openSync(this.o.filename, 'a');
    } catch {
      // lumberjack: an old file that cannot be opened is left alone and a new one started.
      return this.openNew();
    }
    this.size = size;
  }

  private rotate(): void {
    this.close();
    this.openNew();
    this.mill();
  }

  private openNew(): void {
    const name = this.o.filename;
    try {
      mkdirSync(dirname(name), { recursive: true, mode: 0o755 });
    } catch (e) {
      throw new Error(`can't make directories for new logfile: ${(e as Error).message}`, { cause: e });
    }
    let mode = 0o600;
    let exists = false;
    try {
      mode = statSync(name).mode & 0o7777;
      exists = true;
    } catch {
      // no old file
    }
    if (exists) {
      try {
        renameSync(name, this.backupName());
      } catch (e) {
        throw new Error(`can't rename log file: ${(e as Error).message}`, { cause: e });
      }
    }
    try {
      this.fd = openSync(name, 'w', mode);
    } catch (e) {
      throw new Error(`can't open new logfile: ${(e as Error).message}`, { cause: e });
    }
    this.size = 0;
  }

  private backupName(): string {
    const name = this.o.filename;
    const ext = extname(name);
    const prefix = basename(name).slice(0, basename(name).length - ext.length);
    return join(dirname(name), `${prefix}-${formatBackupTime(this.now())}${ext}`);
  }

  /** millRunOnce, after the previous run: lumberjack runs it on its own goroutine, one at a time. */
  private mill(): void {
    const { maxBackups = 0, maxAgeDays = 0, compress = false } = this.o;
    if (maxBackups === 0 && maxAgeDays === 0 && !compress) return;
    this.milling = this.milling.then(() => this.millRunOnce()).catch((e: unknown) => this.o.onMillError?.(e as Error));
  }

  private async millRunOnce(): Promise<void> {
    const { maxBackups = 0, maxAgeDays = 0, compress = false } = this.o;
    let files = this.oldLogFiles();
    const remove: string[] = [];
    if (maxBackups > 0 && maxBackups < files.length) {
      const preserved = new Set<string>();
      const remaining: typeof files = [];
      for (const f of files) {
        // A file and its compressed copy count once.
        preserved.add(f.name.endsWith(COMPRESS_SUFFIX) ? f.name.slice(0, -COMPRESS_SUFFIX.length) : f.name);
        if (preserved.size > maxBackups) remove.push(f.name);
        else remaining.push(f);
      }
      files = remaining;
    }
    if (maxAgeDays > 0) {
      const cutoff = this.now().getTime() - maxAgeDays * 24 * 3600 * 1000;
      const remaining: typeof files = [];
      for (const f of files) {
        if (f.time < cutoff) remove.push(f.name);
        else remaining.push(f);
      }
      files = remaining;
    }
    const dir = dirname(this.o.filename);
    let firstError: Error | undefined;
    for (const name of remove) {
      try {
        unlinkSync(join(dir, name));
      } catch (e) {
        firstError ??= e as Error;
      }
    }
    if (compress) {
      for (const f of files) {
        if (f.name.endsWith(COMPRESS_SUFFIX)) continue;
        const from = join(dir, f.name);
        try {
          await pipeline(createReadStream(from), createGzip(), createWriteStream(from + COMPRESS_SUFFIX, { mode: statSync(from).mode & 0o7777 }));
          unlinkSync(from);
        } catch (e) {
          firstError ??= e as Error;
        }
      }
    }
    if (firstError) throw firstError;
  }

  /** The backups in the log's directory, newest first (by the time in their names). */
  private oldLogFiles(): { name: string; time: number }[] {
    const dir = dirname(this.o.filename);
    const base = basename(this.o.filename);
    const ext = extname(base);
    const prefix = `${base.slice(0, base.length - ext.length)}-`;
    const out: { name: string; time: number }[] = [];
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) continue;
      const time = timeFromName(e.name, prefix, ext) ?? timeFromName(e.name, prefix, ext + COMPRESS_SUFFIX);
      if (time !== undefined) out.push({ name: e.name, time });
    }
    return out.sort((a, b) => b.time - a.time);
  }
}

/** The time format of lumberjack's backups, 2006-01-02T15-04-05.000, in UTC. */
export function formatBackupTime(t: Date): string {
  return t.toISOString().slice(0, 23).replace(/:/g, '-');
}

function timeFromName(name: string, prefix: string, ext: string): number | undefined {
  if (!name.startsWith(prefix) || !name.endsWith(ext)) return undefined;
  const ts = name.slice(prefix.length, name.length - ext.length);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(ts);
  if (!m) return undefined;
  const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!);
  return Number.isNaN(t) ? undefined : t;
}
