// What one request carries from filter to filter and into its handler: upstream keeps these on the
// request's context (RequestInfo, user, deadline, audit ID); here they are fields of one object made
// per request, so the chain adds no allocation of its own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../admission/index.js';
import type { RegisteredResource } from '../registry/registry.js';
import { nonResource, type RequestInfo } from './requestinfo.js';
import type { ApiMetrics } from './metrics.js';
import { clearDeadline, type PendingDeadline } from './deadline.js';
import { setWarnings } from './warning-header.js';

// The HTTP/2 compatibility API mirrors node:http's; one type keeps the handlers simple.
export type Request = IncomingMessage;
export type Response = ServerResponse;

/**
 * Serves a request. Handlers answer their own errors; what a filter throws (or rejects with) is
 * answered by the panic-recovery filter, as JSON, as the filters' answers always were.
 */
export type Handler = (s: RequestScope) => void | Promise<void>;

/**
 * What the handlers tell the request's audit event (server/audit/context.ts), as upstream's handlers
 * call audit.LogRequestObject / LogRequestPatch / LogResponseObject. Each call does only what the
 * request's audit level needs (nothing at None).
 */
export interface AuditHooks {
  /** The decoded body of a create, update or delete: completes objectRef; kept at Request level and above. */
  requestObject(obj: object): void;
  /** A patch's body as sent (Request level and above). */
  requestPatch(body: Uint8Array): void;
  /** The object answered: a Status sets responseStatus; kept at RequestResponse. */
  responseObject(obj: object): void;
  /** The answer's JSON bytes, written as they are (the stored-bytes fast paths). */
  responseJSON(body: Uint8Array): void;
  /** An error answer's Status. */
  responseStatus(status: object): void;
  /**
   * An annotation on the event (e.g. authorization.k8s.io/decision and /reason from the authorizer);
   * with `level`, only on events of that level or above.
   */
  annotate(key: string, value: string, level?: 'Request'): void;
}

/** Wraps a handler; a filter that is switched off returns `next` itself. */
export type Filter = (next: Handler) => Handler;

const ANONYMOUS_PLACEHOLDER: UserInfo = { name: '', groups: [] };
const NO_INFO: RequestInfo = nonResource('', '');

export class RequestScope {
  readonly req: Request;
  readonly res: Response;
  /** performance.now() when the request arrived (WithRequestReceivedTimestamp). */
  readonly started: number;
  /** Set by the request-info filter. */
  query: URLSearchParams;
  info: RequestInfo;
  /** The Accept header as Go's Header.Get reads it (output negotiation). */
  accept: string | undefined;
  /** Watches: no deadline and no in-flight slot (upstream's LongRunningFunc). */
  longRunning: boolean;
  /** Set by the authentication filter (and replaced by impersonation). */
  user: UserInfo;
  /** Whether the answer may be gzip-compressed (the compression filter). */
  compress: boolean;
  /** `?timeout=` in ms as the request-deadline filter read it. */
  userTimeoutMs: number | undefined;
  /** The request's deadline (the timeout filter's), cleared when the response closes. */
  deadline: PendingDeadline<RequestScope> | undefined;
  /** The in-flight slot held, given back when the response closes. */
  slot: { readonly release: () => void } | undefined;
  /** Set once the request's deadline passed: its work must not reach storage anymore. */
  expired: boolean;
  /** Who answered the request when its deadline passed (the label of apiserver_request_post_timeout_total). */
  timedOutBy: 'timeout-handler' | 'rest-handler' | undefined;
  /** Answered by a filter before any handler ran (a 429): recorded as a termination, not a request. */
  terminated: boolean;
  /** The resource a resource request addresses and its coordinates, set by the router. */
  resource: RegisteredResource | undefined;
  namespace: string | undefined;
  name: string;
  subresource: string;
  /** Set by the audit filter when a policy is given (a no-op recorder for requests at level None). */
  audit: AuditHooks | undefined;
  /** Set by the request-metrics filter: the request is counted when its response closes. */
  metrics: ApiMetrics | undefined;
  private cleanupHooked: boolean;

  constructor(req: Request, res: Response) {
    this.req = req;
    this.res = res;
    this.started = performance.now();
    this.query = EMPTY_QUERY;
    this.info = NO_INFO;
    this.accept = undefined;
    this.longRunning = false;
    this.user = ANONYMOUS_PLACEHOLDER;
    this.compress = false;
    this.userTimeoutMs = undefined;
    this.deadline = undefined;
    this.slot = undefined;
    this.expired = false;
    this.timedOutBy = undefined;
    this.terminated = false;
    this.resource = undefined;
    this.namespace = undefined;
    this.name = '';
    this.subresource = '';
    this.audit = undefined;
    this.metrics = undefined;
    this.cleanupHooked = false;
  }

  /** A warning for the response's Warning headers (admission webhooks' warnings). */
  addWarning(text: string): void {
    if (!this.res.headersSent) setWarnings(this.res, [text]);
  }

  /** An audit annotation from admission (admission.Attributes.AddAnnotation): kept on the request's audit event. */
  addAnnotation(key: string, value: string, level?: 'Request'): void {
    this.audit?.annotate(key, value, level);
  }

  /** Whether the request has an audit event for annotations to go to. */
  get audited(): boolean {
    return this.audit !== undefined;
  }

  /** Gives back the slot, clears the deadline and counts the request when the response closes; one listener however many filters ask. */
  cleanUpOnClose(): void {
    if (this.cleanupHooked) return;
    this.cleanupHooked = true;
    this.res.on('close', cleanUp(this));
  }
}

const EMPTY_QUERY = new URLSearchParams();

/** A module function returning an unnamed arrow: tsx (esbuild's keepNames) names a `const` arrow made per request with a defineProperty call. */
function cleanUp(s: RequestScope): () => void {
  return () => {
    s.slot?.release();
    if (s.deadline) clearDeadline(s.deadline);
    // The request-metrics filter's count; a request a filter terminated (a 429) was counted as a termination.
    if (s.metrics && !s.terminated)
      s.metrics.recordRequest(s.req.method ?? 'GET', s.info, s.query, header(s.req, 'content-type'), s.res.statusCode, (performance.now() - s.started) / 1000);
  };
}

/** The first value of a request header (node joins repeated ones only for some). */
export function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
