// Request deadlines as kube-apiserver sets and enforces them.
//
// WithRequestDeadline (apiserver endpoints/filters/request_deadline.go) gives every request that is
// not long-running (here: every one but a watch) a deadline: --request-timeout (60 s) after it was
// received, or sooner when a `?timeout=` between zero and that asks for it (0, a negative one or a
// longer one leaves the default). WithTimeoutForNonLongRunningRequests (server/filters/timeout.go)
// answers 504 when the deadline passes before the handler answered, with only the headers of the
// filters outside it, and drops whatever the handler writes later; when the handler had started its
// answer, the stream is reset instead (http.ErrAbortHandler). The handler keeps running, but its
// context is done, so its next storage call fails; here it stops at the last step before storage
// (validateAdmission in handlers/admission.ts).
//
// The write handlers (create, update, patch, delete, deletecollection) also bound their own work to
// 34 s (handlers/rest.go requestTimeoutUpperBound); when that comes before the request's deadline,
// they answer themselves (finisher.go), with a Status in the negotiated format.
import { constants as h2 } from 'node:http2';
import { timeout, type StatusError } from '../apimachinery/errors.js';

/** --request-timeout's default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** requestTimeoutUpperBound of the write handlers. */
export const WRITE_TIMEOUT_UPPER_BOUND_MS = 34_000;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * What the timeout filter writes: the Status of NewTimeoutError encoded by json.Encoder without its
 * kind and apiVersion (the filter encodes ErrStatus directly), and no Content-Type of its own, so
 * Go's server sniffs `text/plain; charset=utf-8`.
 */
export const FILTER_TIMEOUT_BODY =
  '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';
export const FILTER_TIMEOUT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** The finisher's error for work past its deadline: NewTimeoutError(..., 0) of context.DeadlineExceeded. */
export function handlerTimeoutError(): StatusError {
  return timeout('request did not complete within requested timeout - context deadline exceeded', 0);
}

/** The filter's timeout in ms: `?timeout=` when it is above zero and below the server's, else the server's. */
export function filterTimeoutMs(userMs: number | undefined, requestTimeoutMs: number): number {
  return userMs !== undefined && userMs > 0 && userMs < requestTimeoutMs ? userMs : requestTimeoutMs;
}

/**
 * Whether the handler's own 34 s bound comes first for a request of this verb whose filter deadline
 * is `filterMs` away. At equal deadlines the filter answers: it wakes first and has less to do.
 */
export function handlerBoundFirst(verb: string, filterMs: number): boolean {
  return filterMs > WRITE_TIMEOUT_UPPER_BOUND_MS && WRITE_VERBS.has(verb);
}

// ---- deadline queues -----------------------------------------------------------------------------

/** setTimeout's largest delay (a 32-bit signed count of ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A started deadline; `clearDeadline` it once the request is over. */
export interface PendingDeadline<T> {
  readonly item: T;
  /** performance.now() at which it expires. */
  readonly at: number;
  prev: PendingDeadline<T> | undefined;
  next: PendingDeadline<T> | undefined;
  queue: DeadlineQueue<T> | undefined;
}

interface DeadlineQueue<T> {
  readonly ms: number;
  head: PendingDeadline<T> | undefined;
  tail: PendingDeadline<T> | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Deadlines of requests, with one timer per distinct duration rather than one per request: the
 * deadlines of one duration expire in the order they started, so each duration keeps its requests
 * in a linked list, oldest first, and one timer for the oldest. Starting and clearing a deadline is
 * a few pointer writes; nothing holds a request once it is over (no hash table whose replaced
 * copies would keep finished requests alive, see runtime/http2-stream-tables.ts).
 */
export class Deadlines<T> {
  private readonly queues = new Map<number, DeadlineQueue<T>>();

  /** `expired` runs (from a timer) for each deadline that passed before it was cleared; it must not throw. */
  constructor(private readonly expired: (item: T) => void) {}

  /** Starts `item`'s deadline, `ms` after `start` (a performance.now() time). */
  add(item: T, ms: number, start: number): PendingDeadline<T> {
    let q = this.queues.get(ms);
    if (q === undefined) this.queues.set(ms, (q = { ms, head: undefined, tail: undefined, timer: undefined }));
    const p: PendingDeadline<T> = { item, at: start + ms, prev: q.tail, next: undefined, queue: q };
    if (q.tail) q.tail.next = p;
    else q.head = p;
    q.tail = p;
    if (q.timer === undefined) this.arm(q, p.at);
    return p;
  }

  /** Deadlines started and not yet cleared or expired. */
  get size(): number {
    let n = 0;
    for (const q of this.queues.values()) for (let p = q.head; p; p = p.next) n++;
    return n;
  }

  private arm(q: DeadlineQueue<T>, at: number): void {
    // Within setTimeout's range (a longer wait fires early and re-arms).
    q.timer = setTimeout(() => this.fire(q), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - performance.now()))));
    // Deadlines never keep a process alive: the requests they belong to do, while they are open.
    q.timer.unref();
  }

  private fire(q: DeadlineQueue<T>): void {
    q.timer = undefined;
    const now = performance.now();
    for (let p = q.head; p && p.at <= now; p = q.head) {
      clearDeadline(p);
      this.expired(p.item);
    }
    if (q.head) this.arm(q, q.head.at);
    else if (this.queues.get(q.ms) === q) this.queues.delete(q.ms);
  }
}

/** Ends a deadline that has not expired (nothing when it did, or was cleared already). */
export function clearDeadline<T>(p: PendingDeadline<T>): void {
  const q = p.queue;
  if (q === undefined) return;
  p.queue = undefined;
  if (p.prev) p.prev.next = p.next;
  else q.head = p.next;
  if (p.next) p.next.prev = p.prev;
  else q.tail = p.prev;
  p.prev = p.next = undefined;
}

// ---- answers after the deadline ------------------------------------------------------------------

const silenced = new WeakSet<object>();

/** What a response can be written with; each becomes a no-op once the response is silenced. */
const WRITERS = [
  'setHeader',
  'setHeaders',
  'appendHeader',
  'removeHeader',
  'writeHead',
  'write',
  'end',
  'flushHeaders',
  'addTrailers',
  'writeContinue',
  'writeEarlyHints',
];

/**
 * After a timeout answer: what the handler still writes is dropped, as writes to upstream's timeout
 * writer fail with http.ErrHandlerTimeout. The response's writing methods become no-ops on this
 * response only (no cost on any other), so a late answer neither throws (headers already sent) nor
 * makes the response emit 'error' (a write after end). Its status code stays what was sent, for
 * whatever reads it when the response finishes. `onLateEnd` runs the first time the handler ends it.
 */
export function silence(res: object, onLateEnd?: () => void): void {
  if (silenced.has(res)) return;
  silenced.add(res);
  const target = res as Record<string, unknown>;
  let ended = false;
  for (const name of WRITERS) {
    if (typeof target[name] !== 'function') continue;
    const write = name === 'write';
    const end = name === 'end';
    Object.defineProperty(res, name, {
      configurable: true,
      writable: true,
      value(this: unknown): unknown {
        if (end && !ended) {
          ended = true;
          onLateEnd?.();
        }
        return write ? true : this;
      },
    });
  }
  const status = target.statusCode;
  Object.defineProperty(res, 'statusCode', { configurable: true, get: () => status, set: () => {} });
}

/** Whether a timeout answered `res` (its handler's writes are dropped). */
export function isSilenced(res: object): boolean {
  return silenced.has(res);
}

/**
 * Aborts an answer mid-way, as Go's server does for http.ErrAbortHandler: the HTTP/1.1 connection
 * is closed, an HTTP/2 stream is reset with INTERNAL_ERROR (destroy() alone would reset it with
 * NO_ERROR, which clients read as a complete, if short, body). What the response held is freed.
 */
export function resetResponse(res: object): void {
  const stream = (res as { stream?: { destroyed: boolean; close(code: number): void } }).stream;
  if (stream && !stream.destroyed) stream.close(h2.NGHTTP2_INTERNAL_ERROR);
  else (res as { destroy(): void }).destroy();
}
