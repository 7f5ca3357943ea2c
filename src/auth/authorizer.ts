// The authorizer contract (k8s.io/apiserver/pkg/authorization/authorizer): given who asks and what
// the request is about, allow, deny, or have no opinion (the next authorizer of a union decides;
// with none left the request is denied). The server's authorization filter, the SubjectAccessReview
// endpoints and RBAC's escalation checks all ask through it, so it sits in the auth layer.
import type { UserInfo } from '../admission/index.js';

/** authorizer.Decision. */
export type AuthorizationDecision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizationResult {
  readonly decision: AuthorizationDecision;
  /** Why; appended to the 403's message and returned in a SubjectAccessReview's status.reason. */
  readonly reason?: string;
  /** An error met while deciding (status.evaluationError); the decision stands. */
  readonly error?: string;
}

/**
 * authorizer.Attributes without the user: what the request is about. The server's RequestInfo has
 * these fields; a SubjectAccessReview's spec is turned into them.
 */
export interface AuthorizationAttributes {
  readonly isResourceRequest: boolean;
  /** The URL path of a non-resource request. */
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

export interface Authorizer {
  /** Decides for `user` doing `attrs.verb` on what `attrs` names (resource or non-resource path). */
  authorize(user: UserInfo, attrs: AuthorizationAttributes): AuthorizationResult | Promise<AuthorizationResult>;
}

/** authorizer.ResourceRuleInfo / NonResourceRuleInfo: what a user may do, as SelfSubjectRulesReview reports it. */
export interface ResourceRuleInfo {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}
export interface NonResourceRuleInfo {
  readonly verbs: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

/** authorizer.RuleResolver: the rules a user holds in a namespace, for SelfSubjectRulesReview. */
export interface RuleResolver {
  rulesFor(
    user: UserInfo,
    namespace: string,
  ): { resourceRules: ResourceRuleInfo[]; nonResourceRules: NonResourceRuleInfo[]; incomplete: boolean; error?: string };
}

/** AlwaysAllow: every request is allowed (kube-apiserver's default mode; kplane's library default). */
export const alwaysAllow: Authorizer & RuleResolver = {
  authorize: () => ({ decision: 'allow' }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};

/** AlwaysDeny: every request is denied (upstream's alwaysDenyAuthorizer answers "deny" with reason "Everything is forbidden."). */
export const alwaysDeny: Authorizer & RuleResolver = {
  authorize: () => ({ decision: 'no-opinion', reason: 'Everything is forbidden.' }),
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/** system:masters: a user in it is allowed everything before any configured authorizer is asked. */
export const SYSTEM_PRIVILEGED_GROUP = 'system:masters';

/** authorizerfactory.NewPrivilegedGroups: allow members of these groups, no opinion otherwise. */
export function privilegedGroups(...groups: string[]): Authorizer {
  return {
    authorize: (user) => {
      for (const g of user.groups) if (groups.includes(g)) return { decision: 'allow' };
      return { decision: 'no-opinion' };
    },
  };
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | undefined)?.then === 'function';
}

/**
 * union.New: each authorizer in turn; the first allow or deny decides, with its reason. When all
 * have no opinion, the reasons are joined with newlines (and so are the errors).
 */
export function unionAuthorizer(authorizers: readonly Authorizer[]): Authorizer {
  if (authorizers.length === 1) return authorizers[0]!;
  // Every request goes through here: the synchronous path allocates nothing until an authorizer
  // has no opinion with a reason or an error to report.
  const from = (
    user: UserInfo,
    attrs: AuthorizationAttributes,
    i: number,
    reasons?: string[],
    errors?: string[],
  ): AuthorizationResult | Promise<AuthorizationResult> => {
    for (; i < authorizers.length; i++) {
      const r = authorizers[i]!.authorize(user, attrs);
      if (isPromise(r)) {
        const next = i + 1;
        return r.then((res) => {
          if (res.decision !== 'no-opinion') return res;
          if (res.reason) (reasons ??= []).push(res.reason);
          if (res.error) (errors ??= []).push(res.error);
          return from(user, attrs, next, reasons, errors);
        });
      }
      if (r.decision !== 'no-opinion') return r;
      if (r.reason) (reasons ??= []).push(r.reason);
      if (r.error) (errors ??= []).push(r.error);
    }
    return {
      decision: 'no-opinion',
      ...(reasons ? { reason: reasons.join('\n') } : {}),
      ...(errors ? { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` } : {}),
    };
  };
  return { authorize: (user, attrs) => from(user, attrs, 0) };
}

/** union.NewRuleResolvers: every resolver's rules, incomplete if any is, errors aggregated. */
export function unionRuleResolver(resolvers: readonly RuleResolver[]): RuleResolver {
  if (resolvers.length === 1) return resolvers[0]!;
  return {
    rulesFor(user, namespace) {
      const resourceRules: ResourceRuleInfo[] = [];
      const nonResourceRules: NonResourceRuleInfo[] = [];
      let incomplete = false;
      const errors: string[] = [];
      for (const r of resolvers) {
        const out = r.rulesFor(user, namespace);
        resourceRules.push(...out.resourceRules);
        nonResourceRules.push(...out.nonResourceRules);
        incomplete ||= out.incomplete;
        if (out.error) errors.push(out.error);
      }
      return { resourceRules, nonResourceRules, incomplete, ...(errors.length ? { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` } : {}) };
    },
  };
}

/** Counts terminal decisions as `apiserver_authorization_decisions_total{type,name,decision}` does. */
export type DecisionRecorder = (type: string, name: string, decision: 'allowed' | 'denied') => void;

/** metrics.InstrumentedAuthorizer: allow and deny are counted; no opinion is not terminal and is not. */
export function instrumentedAuthorizer(type: string, name: string, delegate: Authorizer, record: DecisionRecorder): Authorizer {
  const count = (r: AuthorizationResult): AuthorizationResult => {
    if (r.decision === 'allow') record(type, name, 'allowed');
    else if (r.decision === 'deny') record(type, name, 'denied');
    return r;
  };
  return {
    authorize(user, attrs) {
      const r = delegate.authorize(user, attrs);
      return isPromise(r) ? r.then(count) : count(r);
    },
  };
}
