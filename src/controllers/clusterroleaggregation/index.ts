// The ClusterRole aggregation controller (pkg/controller/clusterroleaggregation): a ClusterRole
// with an aggregationRule gets, as its rules, the rules of every other ClusterRole matching one of
// its selectors (each selector's matches by name, a rule already present not repeated), written
// with server-side apply as field manager `clusterrole-aggregation-controller`. Any ClusterRole
// change looks at every aggregated ClusterRole again.
import { tryLabelSelectorFromObject, matchesLabels, type LabelSelectorObject } from '../../apimachinery/labels.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR } from '../../client/types.js';
import { Controller } from '../runtime/controller.js';
import { controllerFactory, type ControllerFactory } from '../types.js';

export const CLUSTER_ROLES: GVR = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const FIELD_MANAGER = 'clusterrole-aggregation-controller';

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface ClusterRole extends KubeObject {
  rules?: PolicyRule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] } | null;
}

/** The rules `role` aggregates from `all`, in upstream's order. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const seen = new Set<string>();
  for (const s of role.aggregationRule?.clusterRoleSelectors ?? []) {
    const parsed = tryLabelSelectorFromObject(s);
    if (!parsed.ok) throw new Error(parsed.message);
    const matches = all
      .filter((r) => r.metadata?.name !== role.metadata?.name && matchesLabels(parsed.selector, r.metadata?.labels))
      .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    for (const r of matches) {
      for (const rule of r.rules ?? []) {
        const key = canonical(rule);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(rule);
      }
    }
  }
  return out;
}

/** Semantic equality of rules: nil and empty lists alike. */
function canonical(rule: PolicyRule): string {
  const l = (x: string[] | undefined): string[] => x ?? [];
  return JSON.stringify([l(rule.verbs), l(rule.apiGroups), l(rule.resources), l(rule.resourceNames), l(rule.nonResourceURLs)]);
}

export function clusterRoleAggregation(): ControllerFactory {
  return controllerFactory({ name: 'clusterrole-aggregation', serviceAccountName: 'clusterrole-aggregation-controller' }, (ctx) => {
    const informer = ctx.manager.informer<ClusterRole>(CLUSTER_ROLES);
    const controller = new Controller({
      name: 'clusterrole-aggregation',
      workers: 1,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: async (key, signal) => {
        const role = informer.store.get(key);
        if (!role?.aggregationRule) return;
        const rules = aggregatedRules(role, informer.store.list());
        const current = role.rules ?? [];
        if (rules.length === current.length && rules.every((r, i) => canonical(r) === canonical(current[i]!))) return;
        await ctx.client.patch(
          CLUSTER_ROLES,
          undefined,
          key,
          'apply',
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: key }, rules },
          { fieldManager: FIELD_MANAGER, force: true, signal },
        );
      },
    });
    // Every change may change what some aggregated role should hold: look at all of them.
    controller.watches(informer, () =>
      informer.store
        .list()
        .filter((r) => r.aggregationRule)
        .map((r) => r.metadata?.name ?? ''),
    );
    return controller;
  });
}
