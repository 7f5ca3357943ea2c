// The filters around the API handler, assembled in one place in kube-apiserver's order
// (genericapiserver's DefaultBuildHandlerChain), outermost first:
//
//   AuditInit (+ CacheControl) → PanicRecovery → RequestInfo → request metrics (latency trackers)
//   → response compression → RequestDeadline → Timeout → Authentication → (Audit) → Impersonation
//   → MaxInFlight → Authorization → handler
//
// Consequences clients see: a bad path or `?timeout=` is a 400 before credentials are looked at;
// credentials are judged (401) before load is (429); a 429 never holds a deadline's handler; every
// answer, the 504 included, carries Audit-Id and Cache-Control. Upstream sets Cache-Control inside
// RequestInfo; here it goes with the audit ID so that a path refused by RequestInfo carries it too.
// With an audit policy, WithAudit sits between authentication and impersonation (the policy sees
// the authenticated user; the event records whom it impersonates) and WithFailedAuthenticationAudit
// around authentication, as upstream; without one neither is in the chain.
import type { UserInfo } from '../../admission/index.js';
import type { ApiMetrics } from '../metrics.js';
import type { ErrorSink } from '../config.js';
import type { Handler, Request } from '../request-scope.js';
import type { AuditRuntime } from '../audit/context.js';
import { withAudit, withFailedAuthenticationAudit } from './audit.js';
import { withAuditInit } from './audit-init.js';
import { withAuthentication } from './authentication.js';
import { withAuthorization, type Authorizer } from './authorization.js';
import { withImpersonation, type Impersonator } from './impersonation.js';
import { withMaxInFlight, type MaxInFlight } from './max-in-flight.js';
import { withPanicRecovery } from './panic-recovery.js';
import { withRequestDeadline } from './request-deadline.js';
import { withRequestInfo } from './request-info.js';
import { withRequestMetrics } from './request-metrics.js';
import { withResponseCompression } from './response-compression.js';
import { withTimeout } from './timeout.js';

export interface HandlerChainConfig {
  readonly sink: ErrorSink;
  readonly metrics: ApiMetrics | undefined;
  readonly authenticate: (req: Request) => UserInfo | Promise<UserInfo>;
  readonly impersonator: Impersonator | undefined;
  readonly authorizer: Authorizer | undefined;
  readonly maxInFlight: MaxInFlight;
  readonly requestTimeoutMs: number;
  /** Asked per request (APIResponseCompression may turn at runtime). */
  readonly responseCompression: boolean | (() => boolean);
  /** The audit policy and backend (`--audit-policy-file`, `--audit-log-*`); none: no auditing. */
  readonly audit?: AuditRuntime | undefined;
}

/** Wraps `apiHandler` once, when the server is built; each request then runs the finished chain. */
export function buildHandlerChain(apiHandler: Handler, c: HandlerChainConfig): Handler {
  // Inside out, as upstream writes it: the filter applied last runs first.
  let h = apiHandler;
  h = withAuthorization(c.authorizer, c.sink)(h);
  h = withMaxInFlight(c.maxInFlight, c.metrics)(h);
  h = withImpersonation(c.impersonator, c.sink)(h);
  h = withAudit(c.audit)(h);
  h = withAuthentication(c.authenticate)(h);
  h = withFailedAuthenticationAudit(c.audit)(h);
  h = withTimeout(c.requestTimeoutMs, c.sink)(h);
  h = withRequestDeadline(h);
  h = withResponseCompression(c.responseCompression)(h);
  h = withRequestMetrics(c.metrics)(h);
  h = withRequestInfo(h);
  h = withPanicRecovery(c.sink)(h);
  h = withAuditInit(h);
  return h;
}
