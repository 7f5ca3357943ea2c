// The rule resolver (pkg/registry/rbac/validation/rule.go, DefaultRuleResolver): the rules a user
// holds in a namespace are those of every ClusterRoleBinding naming it, then those of every
// RoleBinding of the namespace naming it, each binding's role looked up by its roleRef.
import type { UserInfo } from '../../admission/index.js';
import { goQuote } from '../../golang/strconv.js';
import type { NonResourceRuleInfo, ResourceRuleInfo, RuleResolver } from '../authorizer.js';
import { subjectApplies, type BindingEntry, type RbacCache } from './cache.js';
import type { PolicyRule, RoleRef, Subject } from './types.js';

/** Where a rule came from, as upstream's describers print it in "RBAC: allowed by ...". */
export function describeSource(e: BindingEntry, subject: Subject): string {
  const b = e.binding;
  const who =
    subject.kind === 'ServiceAccount'
      ? `${subject.kind} ${goQuote(`${subject.name}/${subject.namespace || e.namespace}`)}`
      : `${subject.kind} ${goQuote(subject.name)}`;
  const what = e.namespace ? `RoleBinding ${goQuote(`${b.metadata?.name ?? ''}/${e.namespace}`)}` : `ClusterRoleBinding ${goQuote(b.metadata?.name ?? '')}`;
  return `${what} of ${b.roleRef.kind} ${goQuote(b.roleRef.name)} to ${who}`;
}

/**
 * Called with each rule that applies (and its source), or with a resolution error (a binding whose
 * role is missing); returns false to stop.
 */
export type RuleVisitor = (source: (() => string) | undefined, rule: PolicyRule | undefined, error: string | undefined) => boolean;

export class RbacRuleResolver implements RuleResolver {
  constructor(private readonly cache: RbacCache) {}

  /** GetRoleReferenceRules: the rules of the role a binding refers to, or the lister's NotFound. */
  roleReferenceRules(ref: RoleRef, bindingNamespace: string): { rules: readonly PolicyRule[] } | { error: string } {
    switch (ref.kind) {
      case 'Role': {
        const r = this.cache.getRole(bindingNamespace, ref.name);
        return r ? { rules: r.rules ?? [] } : { error: `role.rbac.authorization.k8s.io ${goQuote(ref.name)} not found` };
      }
      case 'ClusterRole': {
        const r = this.cache.getClusterRole(ref.name);
        return r ? { rules: r.rules ?? [] } : { error: `clusterrole.rbac.authorization.k8s.io ${goQuote(ref.name)} not found` };
      }
      default:
        return { error: `unsupported role reference kind: ${goQuote(ref.kind)}` };
    }
  }

  visitRulesFor(user: UserInfo, namespace: string, visit: RuleVisitor): void {
    if (!this.visitBindings(this.cache.clusterBindingsFor(user.name, user.groups), user, visit)) return;
    if (namespace) this.visitBindings(this.cache.roleBindingsFor(namespace, user.name, user.groups), user, visit);
  }

  private visitBindings(entries: readonly BindingEntry[], user: UserInfo, visit: RuleVisitor): boolean {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const subjects = e.binding.subjects ?? [];
      const subject = subjects.find((s) => subjectApplies(s, user.name, user.groups, e.namespace));
      if (!subject) continue;
      const resolved = this.roleReferenceRules(e.binding.roleRef, e.namespace);
      if ('error' in resolved) {
        if (!visit(undefined, undefined, resolved.error)) return false;
        continue;
      }
      const source = (): string => describeSource(e, subject);
      for (const rule of resolved.rules) if (!visit(source, rule, undefined)) return false;
    }
    return true;
  }

  /** RulesFor: every rule the user holds in the namespace, and the resolution errors (aggregated as upstream prints them). */
  policyRulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; error?: string } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (_s, rule, err) => {
      if (rule) rules.push(rule);
      if (err) errors.push(err);
      return true;
    });
    return errors.length ? { rules, error: aggregate(errors) } : { rules };
  }

  rulesFor(
    user: UserInfo,
    namespace: string,
  ): { resourceRules: ResourceRuleInfo[]; nonResourceRules: NonResourceRuleInfo[]; incomplete: boolean; error?: string } {
    const { rules, error } = this.policyRulesFor(user, namespace);
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    for (const r of rules) {
      if (r.resources?.length)
        resourceRules.push({ verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources, resourceNames: r.resourceNames ?? [] });
      if (r.nonResourceURLs?.length) nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
    }
    return { resourceRules, nonResourceRules, incomplete: false, ...(error !== undefined ? { error } : {}) };
  }
}

/** utilerrors.NewAggregate(...).Error(): one message as it is, several as `[a, b]`. */
export function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}
