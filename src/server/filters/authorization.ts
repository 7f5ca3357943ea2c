// WithAuthorization: the last filter before the handler. An Authorizer (src/auth/authorizer.ts)
// decides from the user and the RequestInfo (upstream's authorizer.Attributes); anything but
// `allow` is a 403 with upstream's message (responsewriters.Forbidden). Without an Authorizer
// every authenticated request is allowed and the filter is not in the chain.
import { StatusError, forbidden, internalError } from '../../apimachinery/errors.js';
import type { UserInfo } from '../../admission/index.js';
import type { ErrorSink } from '../error-sink.js';
import type { Filter, RequestScope } from '../request-scope.js';
import type { RequestInfo } from '../requestinfo.js';
import { writeError } from '../handlers/responsewriters.js';

import type { AuthorizationResult, Authorizer } from '../../auth/authorizer.js';

export type { AuthorizationDecision, AuthorizationResult, Authorizer } from '../../auth/authorizer.js';
export { alwaysAllow } from '../../auth/authorizer.js';

export function withAuthorization(authorizer: Authorizer | undefined, sink: ErrorSink): Filter {
  return (next) =>
    authorizer === undefined
      ? next
      : (s) => {
          let result: AuthorizationResult | Promise<AuthorizationResult>;
          try {
            result = authorizer.authorize(s.user, s.info);
          } catch (e) {
            return writeError(sink, s.res, internalError(e), s);
          }
          if (!(result instanceof Promise)) return decide(sink, s, result, next);
          return result.then(
            (r) => decide(sink, s, r, next),
            (e: unknown) => writeError(sink, s.res, internalError(e), s),
          );
        };
}

function decide(sink: ErrorSink, s: RequestScope, r: AuthorizationResult, next: (s: RequestScope) => void | Promise<void>): void | Promise<void> {
  // The audit event's annotations, as upstream's WithAuthorization sets them.
  if (r.decision === 'allow') {
    if (s.audit) {
      s.audit.annotate('authorization.k8s.io/decision', 'allow');
      s.audit.annotate('authorization.k8s.io/reason', r.reason ?? '');
    }
    return next(s);
  }
  // Not allowed, and an authorizer failed on the way (a Webhook that could not be reached, with no
  // mode after it allowing): upstream's 500 with the error, and the reason `internal error` — an
  // authorizer the server could not ask is not a verdict about the user.
  if (r.error !== undefined) {
    s.audit?.annotate('authorization.k8s.io/reason', 'internal error');
    return writeError(sink, s.res, internalError(new Error(r.error)), s);
  }
  if (s.audit) {
    s.audit.annotate('authorization.k8s.io/decision', 'forbid');
    s.audit.annotate('authorization.k8s.io/reason', r.reason ?? '');
  }
  writeError(sink, s.res, forbiddenError(s.user, s.info, r.reason ?? ''), s);
}

/** responsewriters.ForbiddenStatusError: who may not do what, and the authorizer's reason. */
export function forbiddenError(user: UserInfo, info: RequestInfo, reason: string): StatusError {
  const name = JSON.stringify(user.name);
  let what: string;
  if (!info.isResourceRequest) {
    what = `User ${name} cannot ${info.verb} path ${JSON.stringify(info.path)}`;
  } else {
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    const scope = info.namespace ? `in the namespace ${JSON.stringify(info.namespace)}` : 'at the cluster scope';
    what = `User ${name} cannot ${info.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(info.apiGroup)} ${scope}`;
  }
  const why = reason ? `${what}: ${reason}` : what;
  // NewForbidden of an empty GroupResource (a non-resource path): `forbidden: ...`, empty details.
  if (!info.isResourceRequest) return new StatusError({ reason: 'Forbidden', code: 403, message: `forbidden: ${why}`, details: {} });
  return forbidden({ group: info.apiGroup, resource: info.resource }, info.name, why);
}
