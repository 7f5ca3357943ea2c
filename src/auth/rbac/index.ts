// RBAC: rule evaluation, the subject-indexed cache, the rule resolver, the authorizer, escalation
// checks and the bootstrap policy. The registry serves the kinds; this is what decides with them.
export { RbacCache, type RbacKind } from './cache.js';
export { RbacRuleResolver, describeSource } from './resolver.js';
export { RbacAuthorizer } from './authorizer.js';
export { startRbacInformer, type RbacInformer } from './informer.js';
export { confirmNoEscalation, escalationAllowed, roleEscalationAuthorized, bindingAuthorized } from './escalation.js';
export { reconcileBootstrapPolicy, reconcileClusterRole, reconcileClusterRoleBinding } from './reconcile.js';
export { bootstrapClusterRoles, bootstrapClusterRoleBindings, AUTO_UPDATE_ANNOTATION, KUBE_CONTROLLER_MANAGER_USER } from './bootstrap-policy.js';
export { ruleAllows, covers, compactString } from './evaluation.js';
export * from './types.js';

import type { KubeClient } from '../../client/types.js';
import { RbacAuthorizer } from './authorizer.js';
import { RbacCache } from './cache.js';
import { startRbacInformer, type RbacInformer } from './informer.js';
import { RbacRuleResolver } from './resolver.js';

/** The RBAC authorizer with its cache; `start` feeds the cache from the API and resolves once it is complete. */
export interface Rbac {
  readonly cache: RbacCache;
  readonly resolver: RbacRuleResolver;
  readonly authorizer: RbacAuthorizer;
  start(client: KubeClient, log?: (msg: string) => void): Promise<void>;
  stop(): Promise<void>;
}

export function createRbac(): Rbac {
  const cache = new RbacCache();
  const resolver = new RbacRuleResolver(cache);
  const authorizer = new RbacAuthorizer(resolver);
  let informer: RbacInformer | undefined;
  return {
    cache,
    resolver,
    authorizer,
    async start(client, log) {
      informer = startRbacInformer(client, cache, log ? { log } : {});
      await informer.synced();
    },
    async stop() {
      await informer?.stop();
    },
  };
}
