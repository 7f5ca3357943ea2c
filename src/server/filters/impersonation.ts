// WithImpersonation's place in the chain: after authentication, before max-in-flight and
// authorization, so the limits and the authorizer see the user the request acts as. Upstream
// reads Impersonate-User/-Group/-Uid/-Extra-*, asks the authorizer whether the authenticated user
// may `impersonate` each, and replaces the user. Without an Impersonator the headers are ignored
// and the filter is not in the chain.
import type { UserInfo } from '../../admission/index.js';
import { internalError } from '../../apimachinery/errors.js';
import type { RequestInfo } from '../requestinfo.js';
import { forbiddenError, type AuthorizationResult, type Authorizer } from './authorization.js';
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

// The Impersonator of kube-apiserver (apiserver/pkg/endpoints/filters/impersonation.go): each thing
// asked for is authorized as verb `impersonate` for the authenticated user, then the request acts as
//   Impersonate-User      users (group ""), or serviceaccounts in the account's namespace for
//                         `system:serviceaccount:<ns>:<name>` (groups then default to the account's)
//   Impersonate-Group     groups (group ""), one check per header
//   Impersonate-Uid       uids (group authentication.k8s.io)
//   Impersonate-Extra-<k> userextras/<k> (group authentication.k8s.io), the key path-unescaped
// A user other than system:anonymous gets system:authenticated unless a group says otherwise.

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const SA_PREFIX = 'system:serviceaccount:';
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** One thing asked for, an ObjectReference upstream (its fields in Go's order for the error text). */
interface ImpersonationRequest {
  readonly kind: 'ServiceAccount' | 'User' | 'Group' | 'UserExtra' | 'UID';
  readonly namespace: string;
  readonly name: string;
  readonly apiVersion: string;
  readonly fieldPath: string;
}

/** serviceaccount.SplitUsername: namespace and name of `system:serviceaccount:<ns>:<name>`, if valid. */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) return undefined;
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}

/** url.PathUnescape, the key as sent when it does not unescape. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** Go's %v of an ObjectReference: `{Kind Namespace Name UID APIVersion ResourceVersion FieldPath}`. */
function goObjectReference(r: ImpersonationRequest): string {
  return `{${r.kind} ${r.namespace} ${r.name}  ${r.apiVersion}  ${r.fieldPath}}`;
}

/** buildImpersonationRequests, from the raw header lines (one value per line, as Go's Header). */
function impersonationRequests(req: Request): ImpersonationRequest[] {
  const raw = req.rawHeaders;
  let user: string | undefined;
  let uid: string | undefined;
  const groups: ImpersonationRequest[] = [];
  const extras: ImpersonationRequest[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith('impersonate-')) continue;
    const value = raw[i + 1]!;
    if (name === USER_HEADER) user ??= value;
    else if (name === UID_HEADER) uid ??= value;
    else if (name === GROUP_HEADER) groups.push({ kind: 'Group', namespace: '', name: value, apiVersion: '', fieldPath: '' });
    else if (name.startsWith(EXTRA_PREFIX)) {
      const key = unescapeExtraKey(name.slice(EXTRA_PREFIX.length));
      extras.push({ kind: 'UserExtra', namespace: '', name: value, apiVersion: 'authentication.k8s.io/v1', fieldPath: key });
    }
  }
  const out: ImpersonationRequest[] = [];
  // Header.Get: an empty Impersonate-User asks for nobody.
  if (user) {
    const sa = splitServiceAccountUsername(user);
    out.push(
      sa
        ? { kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name, apiVersion: '', fieldPath: '' }
        : { kind: 'User', namespace: '', name: user, apiVersion: '', fieldPath: '' },
    );
  }
  out.push(...groups, ...extras);
  if (uid) out.push({ kind: 'UID', namespace: '', name: uid, apiVersion: 'authentication.k8s.io/v1', fieldPath: '' });
  if ((groups.length > 0 || extras.length > 0 || uid) && !user) {
    throw internalError(new Error(`requested [${out.map(goObjectReference).join(' ')}] without impersonating a user`));
  }
  return out;
}

/**
 * Whether the request carries any Impersonate-* header. The common case is none: one pass over the
 * raw header names (an array both HTTP/1.1 and HTTP/2 requests already hold), not a `for…in` over
 * the headers object, which costs microseconds per request on its dictionary-mode object.
 */
function asksForImpersonation(req: Request): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    // 'i' or 'I' first, then the case-insensitive prefix (HTTP/1.1 keeps the sender's case).
    if (name.length > 12 && (name.charCodeAt(0) | 0x20) === 0x69 && name.slice(0, 12).toLowerCase() === 'impersonate-') return true;
  }
  return false;
}

/** The authorizer's question for one request: verb `impersonate` on the thing asked for. */
function attributesOf(r: ImpersonationRequest): RequestInfo {
  let group = '';
  let resource: string;
  let subresource = '';
  switch (r.kind) {
    case 'ServiceAccount':
      resource = 'serviceaccounts';
      break;
    case 'User':
      resource = 'users';
      break;
    case 'Group':
      resource = 'groups';
      break;
    case 'UserExtra':
      group = 'authentication.k8s.io';
      resource = 'userextras';
      subresource = r.fieldPath;
      break;
    case 'UID':
      group = 'authentication.k8s.io';
      resource = 'uids';
      break;
  }
  return {
    isResourceRequest: true,
    path: '',
    verb: 'impersonate',
    apiPrefix: '',
    apiGroup: group,
    apiVersion: 'v1',
    namespace: r.namespace,
    resource,
    subresource,
    name: r.name,
    parts: [],
  };
}

/** Upstream's impersonation checks against `authorizer` (with AlwaysAllow every impersonation is allowed). */
export function createImpersonator(authorizer: Authorizer): Impersonator {
  return {
    impersonate(req, requestor) {
      if (!asksForImpersonation(req)) return requestor;
      const requests = impersonationRequests(req);
      if (requests.length === 0) return requestor;
      return actingUser(authorizer, requestor, requests);
    },
  };
}

async function actingUser(authorizer: Authorizer, requestor: UserInfo, requests: readonly ImpersonationRequest[]): Promise<UserInfo> {
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let username = '';
  let uid = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs = attributesOf(r);
    switch (r.kind) {
      case 'ServiceAccount':
        username = `${SA_PREFIX}${r.namespace}:${r.name}`;
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
        break;
      case 'User':
        username = r.name;
        break;
      case 'Group':
        groups.push(r.name);
        break;
      case 'UserExtra':
        (extra[r.fieldPath] ??= []).push(r.name);
        break;
      case 'UID':
        uid = r.name;
        break;
    }
    let decision: AuthorizationResult;
    try {
      decision = await authorizer.authorize(requestor, attrs);
    } catch {
      // An authorizer's error refuses, as upstream's (err != nil), without a reason.
      throw forbiddenError(requestor, attrs, '');
    }
    if (decision.decision !== 'allow') throw forbiddenError(requestor, attrs, decision.reason ?? '');
  }
  if (username !== 'system:anonymous') {
    if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) groups.push('system:authenticated');
  } else if (!groups.includes('system:unauthenticated')) {
    groups.push('system:unauthenticated');
  }
  return { name: username, ...(uid ? { uid } : {}), groups, ...(Object.keys(extra).length ? { extra } : {}) };
}
