// Escalation prevention on writes of the four kinds (pkg/registry/rbac/<kind>/policybased): a user
// may write a Role or ClusterRole only with rules it holds itself, unless it may `escalate` it; a
// binding only to a role whose rules it holds, unless it may `bind` that role. Upstream checks in
// the REST storage before admission and before validation; kplane checks in the mutating phase of
// admission (which runs before the strategy's validation, and changes nothing), so that changing
// a binding's roleRef to a role one does not hold is the same 403 as upstream, not a 422.
import type { AdmissionAttributes, AdmissionPlugin } from '../../admission/index.js';
import type { Authorizer } from '../../auth/authorizer.js';
import { bindingAuthorized, confirmNoEscalation, escalationAllowed, roleEscalationAuthorized } from '../../auth/rbac/escalation.js';
import type { RbacRuleResolver } from '../../auth/rbac/resolver.js';
import type { PolicyRule, RoleRef } from '../../auth/rbac/types.js';
import { forbidden, notFound } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { RBAC_GROUP } from './validation.js';

export interface EscalationCheckOptions {
  /** The control plane's authorizer (asked for `escalate` and `bind`). */
  readonly authorizer: () => Authorizer | undefined;
  /** RBAC's rule resolver: what the user holds. Without it (RBAC not on) only `escalate`/`bind` count. */
  readonly resolver: () => RbacRuleResolver | undefined;
}

/** IsOnlyMutatingGCFields: an update that only touches ownerReferences and finalizers is not checked. */
function onlyGcFields(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return false;
  const strip = (o: KubeObject): unknown => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, ...meta } = o.metadata ?? {};
    return { ...o, metadata: meta };
  };
  return JSON.stringify(strip(obj)) === JSON.stringify(strip(old));
}

export function rbacEscalationCheck(opts: EscalationCheckOptions): AdmissionPlugin {
  return {
    name: 'RBACEscalationCheck',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    // Not async: the writes of every other group (nearly all) pass without a promise.
    admit(a: AdmissionAttributes): Promise<void> | undefined {
      if (a.resource.group !== RBAC_GROUP || a.subresource || !a.object) return undefined;
      const resource = a.resource.resource;
      if (resource !== 'roles' && resource !== 'clusterroles' && resource !== 'rolebindings' && resource !== 'clusterrolebindings') return undefined;
      return checkEscalation(opts, a, resource);
    },
  };
}

async function checkEscalation(opts: EscalationCheckOptions, a: AdmissionAttributes, resource: string): Promise<void> {
  if (!a.object) return;
  if (escalationAllowed(a.userInfo)) return;
  if (a.operation === 'UPDATE' && onlyGcFields(a.object, a.oldObject)) return;
  const authorizer = opts.authorizer();
  if (!authorizer) return;
  const gr = { group: RBAC_GROUP, resource };
  const name = a.object.metadata?.name ?? a.name;
  const namespace = resource === 'roles' || resource === 'rolebindings' ? a.namespace : '';
  const resolver = opts.resolver();
  if (resource === 'roles' || resource === 'clusterroles') {
    if (await roleEscalationAuthorized(authorizer, a.userInfo, resource, namespace, name)) return;
    const rules = (Array.isArray(a.object.rules) ? a.object.rules : []) as PolicyRule[];
    const why = resolver ? confirmNoEscalation(resolver, a.userInfo, namespace, rules) : undefined;
    if (why !== undefined || !resolver) throw forbidden(gr, name, why ?? 'escalation check is unavailable');
    return;
  }
  const given = (a.object.roleRef ?? {}) as Partial<RoleRef>;
  // The v1 default, which the store applies after admission.
  const ref: RoleRef = { apiGroup: given.apiGroup || RBAC_GROUP, kind: given.kind ?? '', name: given.name ?? '' };
  // Another kind is refused by validation (roleRef.kind: Unsupported value), not here.
  if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') return;
  if (await bindingAuthorized(authorizer, a.userInfo, ref, namespace)) return;
  if (!resolver) throw forbidden(gr, name, 'escalation check is unavailable');
  const resolved = resolver.roleReferenceRules(ref, namespace);
  if ('error' in resolved) {
    throw notFound({ group: RBAC_GROUP, resource: ref.kind === 'Role' ? 'roles' : 'clusterroles' }, ref.name);
  }
  const why = confirmNoEscalation(resolver, a.userInfo, namespace, resolved.rules);
  if (why !== undefined) throw forbidden(gr, name, why);
}
