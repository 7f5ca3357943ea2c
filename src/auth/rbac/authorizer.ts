// The RBAC authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go): allowed by the first rule that
// matches, with the binding that granted it as the reason; otherwise no opinion, with the
// resolution errors met (a binding to a missing role) as the reason.
import type { UserInfo } from '../../admission/index.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authorizer.js';
import { ruleAllows } from './evaluation.js';
import { aggregate, type RbacRuleResolver } from './resolver.js';

export class RbacAuthorizer implements Authorizer {
  constructor(readonly resolver: RbacRuleResolver) {}

  authorize(user: UserInfo, attrs: AuthorizationAttributes): AuthorizationResult {
    let allowedBy: (() => string) | undefined;
    let errors: string[] | undefined;
    this.resolver.visitRulesFor(user, attrs.namespace, (source, rule, err) => {
      if (rule && ruleAllows(attrs, rule)) {
        allowedBy = source;
        return false;
      }
      if (err) (errors ??= []).push(err);
      return true;
    });
    if (allowedBy) return { decision: 'allow', reason: `RBAC: allowed by ${allowedBy()}` };
    return errors ? { decision: 'no-opinion', reason: `RBAC: ${aggregate(errors)}` } : { decision: 'no-opinion' };
  }
}
