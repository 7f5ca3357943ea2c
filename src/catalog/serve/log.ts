// Log lines in logrus's text format, which opm serve writes (and log collectors already parse):
//   time="2026-11-22T02:20:47Z" level=info msg="serving registry" cache=/tmp/x configs=/catalog port=50051
// Fields are sorted by key; values are quoted only when they need to be.

export type Level = 'debug' | 'info' | 'warning' | 'error' | 'fatal';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warning: 2, error: 3, fatal: 4 };

export type Fields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  with(fields: Fields): Logger;
  log(level: Level, msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  debug(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  enabled(level: Level): boolean;
}

function quote(v: string): string {
  // logrus quotes anything outside [A-Za-z0-9-._/@^+]
  return /^[A-Za-z0-9\-._/@^+]+$/.test(v) ? v : JSON.stringify(v);
}

let lastSecond = -1;
let lastStamp = '';

/** RFC 3339 to the second (logrus's default timestamp), formatted once per second. */
export function rfc3339(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastStamp = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return lastStamp;
}

export function formatLine(time: Date, level: Level, msg: string, fields: Fields): string {
  const iso = rfc3339(time.getTime());
  const parts = [`time="${iso}"`, `level=${level}`, `msg=${JSON.stringify(msg)}`];
  for (const k of Object.keys(fields).sort()) {
    const v = fields[k];
    if (v === undefined) continue;
    parts.push(`${k}=${quote(String(v))}`);
  }
  return parts.join(' ') + '\n';
}

export function createLogger(opts: { write: (line: string) => void; level?: Level; fields?: Fields; now?: () => Date }): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const base = opts.fields ?? {};
  const now = opts.now ?? (() => new Date());
  const logger: Logger = {
    with: (fields) => createLogger({ ...opts, fields: { ...base, ...fields } }),
    log(level, msg, fields = {}) {
      if (ORDER[level] < min) return;
      opts.write(formatLine(now(), level, msg, { ...base, ...fields }));
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
export function bufferedWriter(write: (chunk: string) => void, opts: { maxDelayMs?: number; maxBytes?: number } = {}): { write: (line: string) => void; flush: () => void } {
  const maxDelayMs = opts.maxDelayMs ?? 0;
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  let pending: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer !== undefined) {
      if (maxDelayMs > 0) clearTimeout(timer as NodeJS.Timeout);
      else clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    bytes = 0;
    write(chunk);
  };
  return {
    write(line) {
      pending.push(line);
      bytes += line.length;
      if (bytes >= maxBytes) flush();
      else if (timer === undefined) timer = maxDelayMs > 0 ? setTimeout(flush, maxDelayMs) : setImmediate(flush);
    },
    flush,
  };
}
