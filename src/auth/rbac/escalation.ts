// Escalation prevention (pkg/registry/rbac/validation.ConfirmNoEscalation and
// pkg/registry/rbac/escalation_check.go): a user may grant only what it holds itself, unless it
// may `escalate` the role (or `bind` the role a binding refers to). system:masters may do anything.
import type { UserInfo } from '../../admission/index.js';
import { goQuote } from '../../golang/strconv.js';
import type { Authorizer } from '../authorizer.js';
import { SYSTEM_PRIVILEGED_GROUP } from '../authorizer.js';
import { compactRules, compactString, covers, goQuoteList } from './evaluation.js';
import type { RbacRuleResolver } from './resolver.js';
import { RBAC_GROUP, type PolicyRule, type RoleRef } from './types.js';

/** EscalationAllowed: the superuser group skips the checks. */
export function escalationAllowed(user: UserInfo): boolean {
  return user.groups.includes(SYSTEM_PRIVILEGED_GROUP);
}

/** RoleEscalationAuthorized: `escalate` on the role (roles or clusterroles) being written. */
export async function roleEscalationAuthorized(
  authorizer: Authorizer,
  user: UserInfo,
  resource: 'roles' | 'clusterroles',
  namespace: string,
  name: string,
): Promise<boolean> {
  const r = await authorizer.authorize(user, {
    isResourceRequest: true,
    path: '',
    verb: 'escalate',
    apiGroup: RBAC_GROUP,
    apiVersion: '*',
    namespace,
    resource,
    subresource: '',
    name,
  });
  return r.decision === 'allow';
}

/** BindingAuthorized: `bind` on the role a binding refers to (a ClusterRole is asked for in the binding's namespace). */
export async function bindingAuthorized(authorizer: Authorizer, user: UserInfo, ref: RoleRef, bindingNamespace: string): Promise<boolean> {
  const resource = ref.kind === 'Role' ? 'roles' : ref.kind === 'ClusterRole' ? 'clusterroles' : '';
  if (!resource) return false;
  const r = await authorizer.authorize(user, {
    isResourceRequest: true,
    path: '',
    verb: 'bind',
    apiGroup: ref.apiGroup,
    apiVersion: '*',
    namespace: bindingNamespace,
    resource,
    subresource: '',
    name: ref.name,
  });
  return r.decision === 'allow';
}

/** ConfirmNoEscalation: undefined when the user holds every rule, else upstream's message. */
export function confirmNoEscalation(resolver: RbacRuleResolver, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const owner = resolver.policyRulesFor(user, namespace);
  const { covered, missing } = covers(owner.rules, rules);
  if (covered) return undefined;
  // sets.NewString(...).List(): sorted, without duplicates.
  const described = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${described.join('\n')}`;
  if (owner.error !== undefined) msg += `; resolution errors: [${owner.error}]`;
  return msg;
}
