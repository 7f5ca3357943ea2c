// Reconciling the bootstrap policy at start (pkg/registry/rbac/reconciliation, run by upstream's
// rbac/bootstrap-roles post-start hook): a missing default is created; an existing one gets the
// labels, annotations, rules (broken down, appended) and subjects it lacks, and keeps what a user
// added. One annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.
import { isStatusError } from '../../apimachinery/errors.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { AUTO_UPDATE_ANNOTATION, bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.js';
import { covers } from './evaluation.js';
import { RBAC_GROUP, type ClusterRole, type ClusterRoleBinding, type LabelSelectorLike, type Subject } from './types.js';

const CLUSTER_ROLES: GVR = { group: RBAC_GROUP, version: 'v1', resource: 'clusterroles' };
const CLUSTER_ROLE_BINDINGS: GVR = { group: RBAC_GROUP, version: 'v1', resource: 'clusterrolebindings' };

/** merge(expected, existing): what exists wins. */
function mergeMaps(expected: Record<string, string> | undefined, existing: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!expected && !existing) return undefined;
  return { ...expected, ...existing };
}

function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => b?.[k] === a?.[k]);
}

/** computeReconciledRole in its union mode: undefined when nothing is to change. */
export function reconcileClusterRole(existing: ClusterRole, expected: ClusterRole): ClusterRole | undefined {
  const out = structuredClone(existing);
  let changed = false;
  const annotations = mergeMaps(expected.metadata?.annotations, existing.metadata?.annotations);
  const labels = mergeMaps(expected.metadata?.labels, existing.metadata?.labels);
  out.metadata = { ...out.metadata, ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) };
  if (!sameMap(annotations, existing.metadata?.annotations) || !sameMap(labels, existing.metadata?.labels)) changed = true;
  const { missing } = covers(existing.rules ?? [], expected.rules ?? []);
  if (missing.length > 0) {
    out.rules = [...(existing.rules ?? []), ...missing];
    changed = true;
  }
  const want = expected.aggregationRule?.clusterRoleSelectors ?? [];
  if (want.length) {
    const have = existing.aggregationRule?.clusterRoleSelectors ?? [];
    const add = want.filter((w) => !have.some((h) => sameSelector(h, w)));
    if (add.length) {
      out.aggregationRule = { clusterRoleSelectors: [...have, ...add] };
      changed = true;
    }
  }
  return changed ? out : undefined;
}

function sameSelector(a: LabelSelectorLike, b: LabelSelectorLike): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function sameSubject(a: Subject, b: Subject): boolean {
  return a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '') && (a.apiGroup ?? '') === (b.apiGroup ?? '');
}

/** computeReconciledRoleBinding in its union mode; `recreate` when the roleRef differs (it cannot be updated). */
export function reconcileClusterRoleBinding(
  existing: ClusterRoleBinding,
  expected: ClusterRoleBinding,
): { update: ClusterRoleBinding; recreate: boolean } | undefined {
  const out = structuredClone(existing);
  let changed = false;
  const annotations = mergeMaps(expected.metadata?.annotations, existing.metadata?.annotations);
  const labels = mergeMaps(expected.metadata?.labels, existing.metadata?.labels);
  out.metadata = { ...out.metadata, ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) };
  if (!sameMap(annotations, existing.metadata?.annotations) || !sameMap(labels, existing.metadata?.labels)) changed = true;
  const recreate = JSON.stringify(existing.roleRef) !== JSON.stringify(expected.roleRef);
  if (recreate) {
    out.roleRef = expected.roleRef;
    changed = true;
  }
  const missing = (expected.subjects ?? []).filter((s) => !(existing.subjects ?? []).some((e) => sameSubject(e, s)));
  if (missing.length) {
    out.subjects = [...(existing.subjects ?? []), ...missing];
    changed = true;
  }
  return changed ? { update: out, recreate } : undefined;
}

const isProtected = (o: { metadata?: { annotations?: Record<string, string> } }): boolean => o.metadata?.annotations?.[AUTO_UPDATE_ANNOTATION] === 'false';

/** Writes the bootstrap policy through `client`; failures are returned (the caller logs them and retries). */
export async function reconcileBootstrapPolicy(client: KubeClient, log: (msg: string) => void = () => {}): Promise<void> {
  for (const expected of bootstrapClusterRoles()) {
    const name = expected.metadata!.name!;
    const existing = await getOrUndefined<ClusterRole>(client, CLUSTER_ROLES, name);
    if (!existing) {
      await createIgnoringExists(client, CLUSTER_ROLES, expected);
      log(`rbac: created clusterrole.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    const update = reconcileClusterRole(existing, expected);
    if (!update || isProtected(existing)) continue;
    await client.update(CLUSTER_ROLES, undefined, update);
    log(`rbac: updated clusterrole.rbac.authorization.k8s.io/${name} with additions`);
  }
  for (const expected of bootstrapClusterRoleBindings()) {
    const name = expected.metadata!.name!;
    const existing = await getOrUndefined<ClusterRoleBinding>(client, CLUSTER_ROLE_BINDINGS, name);
    if (!existing) {
      await createIgnoringExists(client, CLUSTER_ROLE_BINDINGS, expected);
      log(`rbac: created clusterrolebinding.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    const r = reconcileClusterRoleBinding(existing, expected);
    if (!r || isProtected(existing)) continue;
    if (r.recreate) {
      await client.delete(CLUSTER_ROLE_BINDINGS, undefined, name);
      const fresh = structuredClone(r.update);
      delete fresh.metadata!.resourceVersion;
      delete fresh.metadata!.uid;
      await client.create(CLUSTER_ROLE_BINDINGS, undefined, fresh);
    } else await client.update(CLUSTER_ROLE_BINDINGS, undefined, r.update);
    log(`rbac: updated clusterrolebinding.rbac.authorization.k8s.io/${name}`);
  }
}

async function getOrUndefined<T extends ClusterRole | ClusterRoleBinding>(client: KubeClient, gvr: GVR, name: string): Promise<T | undefined> {
  try {
    return await client.get<T>(gvr, undefined, name);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return undefined;
    throw e;
  }
}

async function createIgnoringExists(client: KubeClient, gvr: GVR, obj: ClusterRole | ClusterRoleBinding): Promise<void> {
  try {
    await client.create(gvr, undefined, obj);
  } catch (e) {
    // Another API server sharing the store created it first.
    if (isStatusError(e) && e.code === 409) return;
    throw e;
  }
}
