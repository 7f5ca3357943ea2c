// Log lines in logrus's text format, which opm serve writes (and log collectors already parse):
//   time="2026-11-22T02:20:47Z" level=info msg="serving registry" cache=/tmp/x configs=/catalog port=50051
// Fields are sorted by key; values are quoted (Go's %q) only when they need to be.
import { rfc3339 } from '../../apimachinery/times.js';
import { goQuote } from '../../golang/strconv.js';

export type Level = 'debug' | 'info' | 'warning' | 'error' | 'fatal';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warning: 2, error: 3, fatal: 4 };

export type Fields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  with(fields: Fields): Logger;
  log(level: Level, msg: string, fields?: Fields): void;
  /**
   * Logs fields given as entries sorted by key with their printed values (the call log's fast
   * path), and `more` sorted the same way, merged in (an entry of `more` replaces one of the same key).
   */
  logEntries(level: Level, msg: string, entries: readonly Entry[], more?: readonly Entry[]): void;
  info(msg: string, fields?: Fields): void;
  debug(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  enabled(level: Level): boolean;
}

/** logrus's quoting of a value: bare when every character is one of [A-Za-z0-9-._/@^+] (an empty value too), else Go's %q. */
export function quote(v: string): string {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const bare =
      (c >= 0x61 && c <= 0x7a) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x30 && c <= 0x39) ||
      c === 0x2d ||
      c === 0x2e ||
      c === 0x5f ||
      c === 0x2f ||
      c === 0x40 ||
      c === 0x5e ||
      c === 0x2b;
    if (!bare) return goQuote(v);
  }
  return v;
}

export function formatLine(time: Date, level: Level, msg: string, fields: Fields): string {
  const parts = [`time="${rfc3339(time.getTime())}"`, `level=${level}`, `msg=${quote(msg)}`];
  for (const k of Object.keys(fields).sort()) {
    const v = fields[k];
    if (v === undefined) continue;
    parts.push(`${k}=${quote(String(v))}`);
  }
  return parts.join(' ') + '\n';
}

/** A field already in its printed form: key, quoted value, and the two as printed in a line (`key=value`). */
export type Entry = readonly [key: string, printed: string, text: string];

/** The entry of a key and its printed (quoted) value. */
export function newEntry(key: string, printed: string): Entry {
  return [key, printed, `${key}=${printed}`];
}

/**
 * Adds an entry to a list sorted by key (logrus prints fields sorted), replacing an entry of the
 * same key as an assignment to a fields object would. Lists are short (a dozen), so this is a scan.
 */
export function putEntry(list: Entry[], entry: Entry): void {
  const key = entry[0];
  let i = list.length;
  while (i > 0 && list[i - 1]![0] > key) i--;
  if (i > 0 && list[i - 1]![0] === key) list[i - 1] = entry;
  else list.splice(i, 0, entry);
}

/** The line formatLine would print for these fields, from entries already sorted and quoted. */
export function formatEntries(ms: number, level: Level, msg: string, entries: readonly Entry[]): string {
  let line = linePrefix(ms, level, msg);
  for (let i = 0; i < entries.length; i++) line += ' ' + entries[i]![2];
  return line + '\n';
}

const NO_ENTRIES: readonly Entry[] = [];

/** `time="…" level=… msg=…`, kept for the current second, level and message (a call logs the same few). */
let prefixMs = -1;
const prefixes = new Map<string, string>();
function linePrefix(ms: number, level: Level, msg: string): string {
  const second = Math.floor(ms / 1000);
  if (second !== prefixMs) {
    prefixes.clear();
    prefixMs = second;
  }
  const key = level + '\0' + msg;
  let p = prefixes.get(key);
  if (p === undefined) {
    p = `time="${rfc3339(ms)}" level=${level} msg=${quotedMessage(msg)}`;
    if (prefixes.size < 64) prefixes.set(key, p);
  }
  return p;
}

/**
 * The texts of three lists sorted by key, merged in key order; of entries with the same key the
 * one from the later list is printed (as later assignments to a fields object win).
 */
function forEachMerged(a: readonly Entry[], b: readonly Entry[], c: readonly Entry[], emit: (text: string) => void): void {
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length || k < c.length) {
    const ka = i < a.length ? a[i]![0] : undefined;
    const kb = j < b.length ? b[j]![0] : undefined;
    const kc = k < c.length ? c[k]![0] : undefined;
    let min = ka;
    if (kb !== undefined && (min === undefined || kb < min)) min = kb;
    if (kc !== undefined && (min === undefined || kc < min)) min = kc;
    let text: string;
    if (kc === min) text = c[k]![2];
    else if (kb === min) text = b[j]![2];
    else text = a[i]![2];
    if (ka === min) i++;
    if (kb === min) j++;
    if (kc === min) k++;
    emit(text);
  }
}

/** quote(msg) for the few messages a server logs again and again ("started call", "finished call"). */
const quotedMessages = new Map<string, string>();
function quotedMessage(msg: string): string {
  let q = quotedMessages.get(msg);
  if (q === undefined) {
    q = quote(msg);
    if (quotedMessages.size < 64) quotedMessages.set(msg, q);
  }
  return q;
}

/** Where lines can also be written piece by piece, without making each line a string first (bufferedWriter). */
export interface PieceSink {
  append(piece: string): void;
  /** The line is complete. */
  end(): void;
}

export function createLogger(opts: { write: (line: string) => void; pieces?: PieceSink; level?: Level; fields?: Fields; now?: () => Date }): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const base = opts.fields ?? {};
  const now = opts.now ?? (() => new Date());
  const nowMs = opts.now ? () => opts.now!().getTime() : Date.now;
  // the logger's own fields as entries, under which a call's entries are put
  const baseEntries: Entry[] = [];
  for (const [k, v] of Object.entries(base)) if (v !== undefined) putEntry(baseEntries, newEntry(k, quote(String(v))));
  const logger: Logger = {
    with: (fields) => createLogger({ ...opts, fields: { ...base, ...fields } }),
    log(level, msg, fields = {}) {
      if (ORDER[level] < min) return;
      opts.write(formatLine(now(), level, msg, { ...base, ...fields }));
    },
    logEntries(level, msg, entries, more = NO_ENTRIES) {
      if (ORDER[level] < min) return;
      const sink = opts.pieces;
      if (sink !== undefined) {
        sink.append(linePrefix(nowMs(), level, msg));
        forEachMerged(baseEntries, entries, more, (text) => {
          sink.append(' ');
          sink.append(text);
        });
        sink.append('\n');
        sink.end();
        return;
      }
      let line = linePrefix(nowMs(), level, msg);
      forEachMerged(baseEntries, entries, more, (text) => (line += ' ' + text));
      opts.write(line + '\n');
    },
    info: (msg, f) => logger.log('info', msg, f),
    debug: (msg, f) => logger.log('debug', msg, f),
    warn: (msg, f) => logger.log('warning', msg, f),
    error: (msg, f) => logger.log('error', msg, f),
    enabled: (level) => ORDER[level] >= min,
  };
  return logger;
}

/**
 * Lines gathered and written together: under load the call log is two lines per request, and one
 * write per line (or per turn of the event loop) would cost a system call and a wake-up each. Lines
 * go out at most `maxDelayMs` after they were logged, or as soon as `maxBytes` are pending; `flush`
 * writes whatever is pending now (before exit, or before a fatal error).
 */
export function bufferedWriter(
  write: (chunk: Buffer) => void,
  opts: { maxDelayMs?: number; maxBytes?: number } = {},
): { write: (line: string) => void; append: (piece: string) => void; end: () => void; flush: () => void } {
  const maxDelayMs = opts.maxDelayMs ?? 0;
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  // Lines are written as UTF-8 straight into this buffer; a flush hands it to `write` and starts a
  // new one (the write may still be in flight).
  let buf = Buffer.allocUnsafe(maxBytes * 2);
  let used = 0;
  let timer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer !== undefined) {
      if (maxDelayMs > 0) clearTimeout(timer as NodeJS.Timeout);
      else clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    if (used === 0) return;
    const chunk = buf.subarray(0, used);
    buf = Buffer.allocUnsafe(maxBytes * 2);
    used = 0;
    write(chunk);
  };
  const append = (piece: string): void => {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8.
    if (used + piece.length * 3 > buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, used + piece.length * 3));
      buf.copy(bigger, 0, 0, used);
      buf = bigger;
    }
    used += buf.write(piece, used, 'utf8');
  };
  const end = (): void => {
    if (used >= maxBytes) flush();
    else if (timer === undefined) timer = maxDelayMs > 0 ? setTimeout(flush, maxDelayMs) : setImmediate(flush);
  };
  return {
    write(line) {
      append(line);
      end();
    },
    append,
    end,
    flush,
  };
}
