// WithTimeoutForNonLongRunningRequests (see deadline.ts for the rules): every request but a watch
// gets one deadline, the filter's (--request-timeout or a shorter `?timeout=`), or for a write
// whose 34 s bound comes first, the write handler's own. Past it, unless the handler answered
// already, the filter answers 504 (or the handler's Status for the write bound) and whatever the
// handler writes later is dropped; the handler sees `s.expired` before it reaches storage.
import type { ErrorSink } from '../config.js';
import {
  Deadlines,
  FILTER_TIMEOUT_BODY,
  FILTER_TIMEOUT_CONTENT_TYPE,
  filterTimeoutMs,
  handlerBoundFirst,
  handlerTimeoutError,
  resetResponse,
  silence,
  WRITE_TIMEOUT_UPPER_BOUND_MS,
} from '../deadline.js';
import { header, type Filter, type RequestScope } from '../request-scope.js';
import { postTimeout, writeError } from '../handlers/responsewriters.js';

export function withTimeout(requestTimeoutMs: number, sink: ErrorSink): Filter {
  // One queue per distinct duration, shared by the server's requests (deadline.ts's Deadlines).
  const deadlines = new Deadlines<RequestScope>((s) => deadlinePassed(sink, s, false));
  const writeDeadlines = new Deadlines<RequestScope>((s) => deadlinePassed(sink, s, true));
  return (next) => (s) => {
    if (!s.longRunning) {
      const ms = filterTimeoutMs(s.userTimeoutMs, requestTimeoutMs);
      s.deadline = handlerBoundFirst(s.info.verb, ms) ? writeDeadlines.add(s, WRITE_TIMEOUT_UPPER_BOUND_MS, s.started) : deadlines.add(s, ms, s.started);
      s.cleanUpOnClose();
    }
    return next(s);
  };
}

/**
 * A request's deadline passed. An answer still being written (a client that does not read it) is
 * reset. Unless the handler answered already: the timeout filter's 504 (only
 * the headers set before the handler ran), or for a write past its 34 s bound the handler's own
 * 504 Status; a response already started is reset. What the handler writes afterwards is dropped,
 * and its work stops before it reaches storage (the handlers' validating admission).
 */
function deadlinePassed(sink: ErrorSink, s: RequestScope, byHandler: boolean): void {
  const { req, res } = s;
  s.expired = true;
  try {
    if (res.writableFinished) return;
    if (res.writableEnded) {
      // Answered in time, but the client has not taken the answer by the deadline: a write blocked
      // past it (upstream's timeout writer then aborts the handler, which is still in its Write).
      // The connection (HTTP/1.1) or stream (HTTP/2) is reset, and what it still held is freed.
      resetResponse(res);
      return;
    }
    const timedOutAt = performance.now();
    const timedOutBy = byHandler ? 'rest-handler' : 'timeout-handler';
    s.timedOutBy = timedOutBy;
    const late = (): void => {
      sink.metrics?.recordPostTimeout(timedOutBy, 'ok');
      sink.log?.(postTimeout(req, timedOutAt, '<nil>'));
    };
    if (res.headersSent) {
      // http.ErrAbortHandler: the HTTP/2 stream is reset, the HTTP/1.1 connection closed.
      silence(res, late);
      resetResponse(res);
      return;
    }
    if (byHandler) {
      writeError(sink, res, handlerTimeoutError(), s);
    } else {
      // The timeout writer's headers are those of the filters around it: the audit ID and Cache-Control.
      const auditId = res.getHeader('Audit-Id');
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      if (auditId !== undefined) res.setHeader('Audit-Id', auditId);
      res.setHeader('Cache-Control', 'no-cache, private');
      res.setHeader('Content-Type', FILTER_TIMEOUT_CONTENT_TYPE);
      res.statusCode = 504;
      res.end(FILTER_TIMEOUT_BODY);
      sink.metrics?.recordRequestTermination(req.method ?? 'GET', s.info, s.query, header(req, 'content-type'), 504);
    }
    silence(res, late);
  } catch (e) {
    sink.log?.(`${req.method ?? ''} ${req.url ?? ''}: answering the timeout failed: ${e instanceof Error ? e.message : String(e)}`);
    res.destroy();
  }
}
