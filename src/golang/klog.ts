// Logging as kube's components log: k8s.io/klog/v2's text lines and k8s.io/component-base's JSON
// format (zap through zapr), with `-v` verbosity levels and structured key/value pairs, the logr
// API (Info, Error, V, WithName, WithValues) in TypeScript.
//
// Written here rather than taken from pino or winston: both have their own line shapes (pino's
// `{"level":30,"time":…}`), while operators grep kplane's logs as they grep kube-apiserver's, so
// the shapes are klog's; what is needed (a level check, two formatters, a write) is small.
//
// Text (klog's header, then the structured part):
//   I1205 15:04:05.123456   12345 garbagecollector] "Deleting item" item="[v1/ConfigMap, …]" propagationPolicy="Background"
// klog's header ends in the source `file.go:line`; kplane puts the logger's name there instead
// (finding the caller would need a stack trace per line).
// JSON (component-base/logs/json): `{"ts":<ms since epoch>,"logger":…,"msg":…,"v":N,…}` for info
// lines, `{"ts":…,"msg":…,"err":…,…}` for errors (no "v"); no "caller", for the same reason.
import { inspect } from 'node:util';
import { goQuote } from './strconv.js';

export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

/**
 * A logr-shaped logger. It is also a plain `(msg) => void` function (an info line at V(0)), so it
 * fits every `log` option of the library that takes such a function.
 */
export interface Logger {
  (msg: string): void;
  /** An info line, written when this logger's level is enabled (always, but under `v(n)`). */
  info(msg: string, ...keysAndValues: unknown[]): void;
  /** An error line: always written, whatever the verbosity. */
  error(err: unknown, msg: string, ...keysAndValues: unknown[]): void;
  /** The same logger at verbosity `level`: its info lines show only with `-v=level` or more. */
  v(level: number): Logger;
  /** Whether info lines of this logger are written (klog's `V(n).Enabled()`). */
  enabled(): boolean;
  /** A logger whose lines name the component (klog's header, JSON's "logger"). */
  withName(name: string): Logger;
  /** A logger that adds these key/value pairs to every line. */
  withValues(...keysAndValues: unknown[]): Logger;
}

export interface KlogOptions {
  /** `-v`: info lines at this level or below are written (default 0). */
  readonly verbosity?: number;
  readonly format?: LogFormat;
  /** Where a finished line (with its newline) goes; default process.stderr, as klog's. */
  readonly write?: (line: string) => void;
  /** For tests: the time stamped on a line, in milliseconds since the epoch (fractions allowed). */
  readonly nowMs?: () => number;
  readonly pid?: number;
}

interface Sink {
  readonly verbosity: number;
  readonly format: LogFormat;
  readonly write: (line: string) => void;
  readonly nowMs: () => number;
  readonly pid: number;
}

interface State {
  readonly level: number;
  readonly name: string;
  readonly values: readonly unknown[];
}

/** A logger writing klog text or component-base JSON lines. */
export function createKlog(opts: KlogOptions = {}): Logger {
  const verbosity = opts.verbosity ?? 0;
  if (!Number.isSafeInteger(verbosity) || verbosity < 0) throw new RangeError(`verbosity must be a whole number, 0 or more; got ${verbosity}`);
  const sink: Sink = {
    verbosity,
    format: opts.format ?? 'text',
    write: opts.write ?? ((line) => void process.stderr.write(line)),
    // performance.now() keeps the microseconds that klog's header and the JSON "ts" carry.
    nowMs: opts.nowMs ?? (() => performance.timeOrigin + performance.now()),
    pid: opts.pid ?? process.pid,
  };
  return makeLogger(
    { level: 0, name: '', values: [] },
    (state, severity, msg, kv, err) => sink.write(formatLine(sink, state, severity, msg, kv, err)),
    (level) => level <= verbosity,
  );
}

/**
 * The logger behind a `log` option: a Logger as it is, a plain function as a logger at `-v=0`
 * whose lines are the structured part of klog's text (`"msg" key="value"`), nothing as a logger
 * that writes nothing.
 */
export function asLogger(log: ((msg: string) => void) | Logger | undefined): Logger {
  if (log === undefined) return discard;
  if (isLogger(log)) return log;
  const fn = log;
  return makeLogger(
    { level: 0, name: '', values: [] },
    (state, _severity, msg, kv, err) => fn(structuredText(state, msg, kv, err)),
    (level) => level === 0,
  );
}

export function isLogger(log: unknown): log is Logger {
  return typeof log === 'function' && typeof (log as Partial<Logger>).v === 'function' && typeof (log as Partial<Logger>).withName === 'function';
}

/** `--logging-format` and `-v`/`--v` as kube's components read them, or the flag's error text. */
export function checkLoggingFlags(format: string, verbosity: string): { format: LogFormat; verbosity: number } | { error: string } {
  if (!(LOG_FORMATS as readonly string[]).includes(format))
    return { error: `invalid argument ${goQuote(format)} for "--logging-format" flag: Unsupported log format; permitted formats: "json", "text"` };
  // klog's Level is an int32 read with strconv.ParseInt.
  if (!/^[+-]?[0-9]+$/.test(verbosity) || !Number.isSafeInteger(Number(verbosity)) || Number(verbosity) > 2147483647)
    return { error: `invalid argument ${goQuote(verbosity)} for "-v, --v" flag: strconv.ParseInt: parsing ${goQuote(verbosity)}: invalid syntax` };
  const v = Number(verbosity);
  // klog treats a negative level as 0 (nothing but V(0) is enabled).
  return { format: format as LogFormat, verbosity: Math.max(0, v) };
}

type Emit = (state: State, severity: 'I' | 'E', msg: string, kv: readonly unknown[], err: unknown) => void;

const NO_ERROR = Symbol('no error');

function makeLogger(state: State, emit: Emit, enabledAt: (level: number) => boolean): Logger {
  const on = enabledAt(state.level);
  const logger = ((msg: string) => {
    if (on) emit(state, 'I', msg, state.values, NO_ERROR);
  }) as Logger;
  logger.info = (msg, ...kv) => {
    if (on) emit(state, 'I', msg, state.values.length ? [...state.values, ...kv] : kv, NO_ERROR);
  };
  logger.error = (err, msg, ...kv) => emit(state, 'E', msg, state.values.length ? [...state.values, ...kv] : kv, err);
  logger.v = (level) => makeLogger({ ...state, level: state.level + Math.max(0, level) }, emit, enabledAt);
  logger.enabled = () => on;
  logger.withName = (name) => makeLogger({ ...state, name: state.name ? `${state.name}/${name}` : name }, emit, enabledAt);
  logger.withValues = (...kv) => makeLogger({ ...state, values: [...state.values, ...kv] }, emit, enabledAt);
  return logger;
}

const discard: Logger = makeLogger(
  { level: 0, name: '', values: [] },
  () => {},
  () => false,
);

function formatLine(sink: Sink, state: State, severity: 'I' | 'E', msg: string, kv: readonly unknown[], err: unknown): string {
  const ms = sink.nowMs();
  if (sink.format === 'json') {
    // zap's field order: ts, logger, msg; then zapr's "v" (info lines) or "err" (errors), then the pairs.
    const o: Record<string, unknown> = { ts: ms };
    if (state.name) o.logger = state.name;
    o.msg = msg;
    if (err === NO_ERROR) o.v = state.level;
    else if (err !== undefined && err !== null) o.err = errorText(err);
    const pairs = keyValuePairs(kv);
    for (const [k, v] of pairs) if (!(k in o)) o[k] = jsonValue(v);
    try {
      return `${JSON.stringify(o, bigintsAsText)}\n`;
    } catch {
      // A value JSON cannot hold (a cycle): its text instead, the line still written.
      for (const k of Object.keys(o)) if (typeof o[k] === 'object' && o[k] !== null) o[k] = inspect(o[k], { depth: 2, breakLength: Infinity });
      return `${JSON.stringify(o, bigintsAsText)}\n`;
    }
  }
  return `${header(severity, ms, sink.pid, state.name || 'kplane')}${structuredText(state, msg, kv, err)}\n`;
}

/** klog's header: `Lmmdd hh:mm:ss.uuuuuu threadid file:line] `, in local time. */
function header(severity: string, ms: number, pid: number, where: string): string {
  const d = new Date(Math.floor(ms));
  const micros = Math.floor((ms - Math.floor(ms / 1000) * 1000) * 1000);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${severity}${p2(d.getMonth() + 1)}${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}.${String(micros).padStart(6, '0')} ${String(pid).padStart(7, ' ')} ${where}] `;
}

/** The structured part of a klog text line: `"msg" err="…" key="value" key=1`. */
function structuredText(_state: State, msg: string, kv: readonly unknown[], err: unknown): string {
  let s = goQuote(msg);
  // klog.ErrorS(nil, …) writes no err key (zapr's too): the line is an error by its severity.
  if (err !== NO_ERROR && err !== undefined && err !== null) s += ` err=${goQuote(errorText(err))}`;
  for (const [k, v] of keyValuePairs(kv)) s += ` ${k}=${textValue(v)}`;
  return s;
}

/** Pairs from logr's flat list; a key without a value gets klog's "(MISSING)". */
function keyValuePairs(kv: readonly unknown[]): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (let i = 0; i < kv.length; i += 2) out.push([String(kv[i]), i + 1 < kv.length ? kv[i + 1] : '(MISSING)']);
  return out;
}

function errorText(err: unknown): string {
  if (err === null || err === undefined) return '<nil>';
  return err instanceof Error ? err.message : String(err);
}

/** A value as klog's text writes it: strings and errors quoted, numbers and booleans bare, the rest as JSON. */
function textValue(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (v instanceof Error) return goQuote(v.message);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === null || v === undefined) return '<nil>';
  try {
    return JSON.stringify(v, bigintsAsText) ?? goQuote(String(v));
  } catch {
    return goQuote(inspect(v, { depth: 2, breakLength: Infinity }));
  }
}

function bigintsAsText(_key: string, x: unknown): unknown {
  return typeof x === 'bigint' ? x.toString() : x;
}

function jsonValue(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (typeof v === 'bigint') return v.toString();
  if (v === undefined) return null;
  return v;
}
