// WithImpersonation's place in the chain: after authentication, before max-in-flight and
// authorization, so the limits and the authorizer see the user the request acts as. Upstream
// reads Impersonate-User/-Group/-Uid/-Extra-*, asks the authorizer whether the authenticated user
// may `impersonate` each, and replaces the user. Without an Impersonator the headers are ignored
// and the filter is not in the chain.
import type { UserInfo } from '../../admission/index.js';
import type { ErrorSink } from '../error-sink.js';
import type { Filter, Request, RequestScope } from '../request-scope.js';
import { writeError } from '../handlers/responsewriters.js';

export interface Impersonator {
  /**
   * The user the request acts as: `user` itself when the request asks for no impersonation.
   * Throws (or rejects with) a StatusError, a 403 upstream, to refuse.
   */
  impersonate(req: Request, user: UserInfo): UserInfo | Promise<UserInfo>;
}

export function withImpersonation(impersonator: Impersonator | undefined, sink: ErrorSink): Filter {
  return (next) =>
    impersonator === undefined
      ? next
      : (s) => {
          let acting: UserInfo | Promise<UserInfo>;
          try {
            acting = impersonator.impersonate(s.req, s.user);
          } catch (e) {
            return writeError(sink, s.res, e, s);
          }
          if (!(acting instanceof Promise)) return actAs(s, acting, next);
          return acting.then(
            (user) => actAs(s, user, next),
            (e: unknown) => writeError(sink, s.res, e, s),
          );
        };
}

function actAs(s: RequestScope, user: UserInfo, next: (s: RequestScope) => void | Promise<void>): void | Promise<void> {
  s.user = user;
  return next(s);
}
