// An InstallPlan's steps from resolved bundles, in the order OLM's catalog operator applies them:
// every bundle's CustomResourceDefinitions first (they must be Established before anything uses
// them), then the ClusterServiceVersions, then the RBAC generated from each CSV's
// spec.install.spec.permissions (ServiceAccount, Role, RoleBinding) and clusterPermissions
// (ClusterRole, ClusterRoleBinding), then the bundles' other objects (ConfigMaps, Secrets,
// Services, ...). Each step is operator-framework/api's Step: {resolving, resource {catalogSource,
// catalogSourceNamespace, group, version, kind, name, manifest}, status}.
import type { ApiBundle, ResolvedStep } from '../resolver/types.js';

type Json = Record<string, unknown>;

/** operator-framework/api's StepStatus. */
export type StepStatus = 'Unknown' | 'NotPresent' | 'Present' | 'Created' | 'WaitingForAPI';

export interface StepResource {
  catalogSource: string;
  catalogSourceNamespace: string;
  group: string;
  version: string;
  kind: string;
  name: string;
  /** The object as JSON text. */
  manifest: string;
}

export interface Step {
  resolving: string;
  resource: StepResource;
  status: StepStatus;
}

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function groupVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** The order class of a kind: CRDs, CSVs, RBAC, then everything else. */
export function stepRank(kind: string): number {
  switch (kind) {
    case 'CustomResourceDefinition':
      return 0;
    case 'ClusterServiceVersion':
      return 1;
    case 'ServiceAccount':
      return 2;
    case 'Role':
    case 'ClusterRole':
      return 3;
    case 'RoleBinding':
    case 'ClusterRoleBinding':
      return 4;
    default:
      return 5;
  }
}

/** The bundle's CSV as an object (from csvJson, else the CSV among its objects). */
export function bundleCsv(b: ApiBundle): Json | undefined {
  for (const text of [b.csvJson, ...(b.object ?? [])]) {
    if (!text) continue;
    try {
      const o = JSON.parse(text) as Json;
      if (o.kind === 'ClusterServiceVersion') return o;
    } catch {
      // not JSON: skipped
    }
  }
  return undefined;
}

/** The names of the RBAC objects OLM generates for one permission entry of a CSV. */
export function rbacName(csvName: string, serviceAccountName: string): string {
  return `${csvName}-${serviceAccountName}`.slice(0, 253);
}

const OWNER_LABELS = (csvName: string, namespace: string): Record<string, string> => ({
  'olm.owner': csvName,
  'olm.owner.namespace': namespace,
  'olm.owner.kind': 'ClusterServiceVersion',
});

export { OWNER_LABELS };

/** The RBAC objects for a CSV's permissions and clusterPermissions. */
export function rbacObjects(csv: Json, namespace: string): Json[] {
  const csvName = str(obj(csv.metadata).name);
  const install = obj(obj(obj(csv.spec).install).spec);
  const out: Json[] = [];
  const sas = new Set<string>();
  const labels = OWNER_LABELS(csvName, namespace);
  const sa = (name: string): void => {
    if (sas.has(name)) return;
    sas.add(name);
    out.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace, labels } });
  };
  for (const p of Array.isArray(install.permissions) ? install.permissions : []) {
    const saName = str(obj(p).serviceAccountName);
    if (!saName) continue;
    const name = rbacName(csvName, saName);
    sa(saName);
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace, labels }, rules: obj(p).rules ?? [] });
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: saName, namespace }],
    });
  }
  for (const p of Array.isArray(install.clusterPermissions) ? install.clusterPermissions : []) {
    const saName = str(obj(p).serviceAccountName);
    if (!saName) continue;
    const name = rbacName(csvName, saName);
    sa(saName);
    out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name, labels }, rules: obj(p).rules ?? [] });
    out.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: saName, namespace }],
    });
  }
  return out;
}

function stepOf(resolving: string, o: Json, step: ResolvedStep): Step {
  const { group, version } = groupVersion(str(o.apiVersion));
  return {
    resolving,
    resource: {
      catalogSource: step.catalog.name,
      catalogSourceNamespace: step.catalog.namespace,
      group,
      version,
      kind: str(o.kind),
      name: str(obj(o.metadata).name),
      manifest: JSON.stringify(o),
    },
    status: 'Unknown',
  };
}

/** The steps of an InstallPlan in `namespace` for the resolved bundles, in OLM's order. */
export function planSteps(resolved: readonly ResolvedStep[], namespace: string): Step[] {
  const out: Step[] = [];
  for (const r of resolved) {
    const csv = bundleCsv(r.bundle);
    const csvName = r.bundle.csvName;
    if (csv) {
      const meta = obj(csv.metadata);
      csv.metadata = { ...meta, namespace };
      // As OLM's NewStepResourceFromBundle: an upgrade's CSV names the CSV it replaces.
      if (r.replaces) csv.spec = { ...obj(csv.spec), replaces: r.replaces };
      out.push(stepOf(csvName, csv, r));
      for (const o of rbacObjects(csv, namespace)) out.push(stepOf(csvName, o, r));
    }
    for (const text of r.bundle.object ?? []) {
      let o: Json;
      try {
        o = JSON.parse(text) as Json;
      } catch {
        continue;
      }
      if (!o.kind || o.kind === 'ClusterServiceVersion') continue;
      if (o.kind !== 'CustomResourceDefinition' && !obj(o.metadata).namespace) o.metadata = { ...obj(o.metadata), namespace };
      out.push(stepOf(csvName, o, r));
    }
  }
  // A stable sort: within a rank, bundles stay in the resolver's order.
  return out
    .map((s, i) => ({ s, i }))
    .sort((a, b) => stepRank(a.s.resource.kind) - stepRank(b.s.resource.kind) || a.i - b.i)
    .map(({ s }) => s);
}
