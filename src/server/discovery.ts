// Discovery documents: /api, /apis, /apis/<group>, /api/v1 and /apis/<group>/<version>, plus
// aggregated discovery (apidiscovery.k8s.io/v2 and v2beta1) that current kubectl asks for first.
import { createHash } from 'node:crypto';
import type { ApiRegistry, RegisteredResource } from '../registry/registry.js';

export const AGGREGATED_DISCOVERY_V2 = 'v2';
export const AGGREGATED_DISCOVERY_V2BETA1 = 'v2beta1';

/** Version preference as kube orders versions: GA > beta > alpha, higher numbers first. */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [0, 0, 0, v];
    const stability = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stability, Number(m[1]), Number(m[3] ?? 0), v];
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pb[i] as number) - (pa[i] as number);
  return pa[3] < pb[3] ? -1 : pa[3] > pb[3] ? 1 : 0;
}

/**
 * Where a group/version sits in discovery: kube-apiserver's APIService priorities for the generic
 * APIs (DefaultGenericAPIServicePriorities in pkg/controlplane/apiserver/aggregator.go). Group
 * versions without an entry (custom resources, groups a module adds) get what the CRD registration
 * controller gives CRDs: group 1000, version 100, so their versions order by kube-aware version.
 */
const PRIORITIES: ReadonlyMap<string, readonly [group: number, version: number]> = new Map([
  ['v1', [18000, 1]],
  ['events.k8s.io/v1', [17750, 15]],
  ['events.k8s.io/v1beta1', [17750, 5]],
  ['authentication.k8s.io/v1', [17700, 15]],
  ['authentication.k8s.io/v1beta1', [17700, 9]],
  ['authentication.k8s.io/v1alpha1', [17700, 1]],
  ['authorization.k8s.io/v1', [17600, 15]],
  ['certificates.k8s.io/v1', [17300, 15]],
  ['certificates.k8s.io/v1beta1', [17300, 9]],
  ['certificates.k8s.io/v1alpha1', [17300, 1]],
  ['rbac.authorization.k8s.io/v1', [17000, 15]],
  ['apiextensions.k8s.io/v1', [16700, 15]],
  ['admissionregistration.k8s.io/v1', [16700, 15]],
  ['admissionregistration.k8s.io/v1beta1', [16700, 12]],
  ['admissionregistration.k8s.io/v1alpha1', [16700, 9]],
  ['coordination.k8s.io/v1', [16500, 15]],
  ['coordination.k8s.io/v1beta1', [16500, 13]],
  ['coordination.k8s.io/v1alpha2', [16500, 12]],
  ['discovery.k8s.io/v1', [16200, 15]],
  ['discovery.k8s.io/v1beta1', [16200, 12]],
  ['flowcontrol.apiserver.k8s.io/v1', [16100, 21]],
  ['flowcontrol.apiserver.k8s.io/v1beta3', [16100, 18]],
  ['flowcontrol.apiserver.k8s.io/v1beta2', [16100, 15]],
  ['flowcontrol.apiserver.k8s.io/v1beta1', [16100, 12]],
  ['flowcontrol.apiserver.k8s.io/v1alpha1', [16100, 9]],
  ['internal.apiserver.k8s.io/v1alpha1', [16000, 9]],
  ['resource.k8s.io/v1alpha3', [15900, 9]],
  ['storagemigration.k8s.io/v1beta1', [15800, 9]],
]);
const CRD_PRIORITY = [1000, 100] as const;

/** Go's string order (group and version names are ASCII, so UTF-16 order is byte order). */
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface ServedGV {
  readonly group: string;
  readonly version: string;
  readonly groupPriority: number;
  readonly versionPriority: number;
}

export function priorityOf(group: string, version: string): ServedGV {
  const [groupPriority, versionPriority] = PRIORITIES.get(group ? `${group}/${version}` : version) ?? CRD_PRIORITY;
  return { group, version, groupPriority, versionPriority };
}

/** ByVersionPriority: higher priority first, then kube-aware version order. */
const byVersionPriority = (a: ServedGV, b: ServedGV): number => b.versionPriority - a.versionPriority || compareKubeVersions(a.version, b.version);

/** A resource as a backend's `/apis/<group>/<version>` lists it (metav1.APIResource). */
export interface RemoteAPIResource {
  readonly name: string;
  readonly singularName?: string;
  readonly namespaced: boolean;
  readonly group?: string;
  readonly version?: string;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

/** A group/version another server serves (a non-local APIService), as discovery and OpenAPI show it. */
export interface RemoteGroupVersion {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly groupPriority: number;
  readonly versionPriority: number;
  readonly available: boolean;
  /** What its last successful discovery check listed (undefined before one succeeded). */
  readonly resources: readonly RemoteAPIResource[] | undefined;
  /** A digest of that list (SHA-512, upper-case hex), for the OpenAPI v3 index's `hash`. */
  readonly resourcesHash: string | undefined;
  /** Its server's /openapi/v2 paths under the group/version and definitions, merged into ours. */
  readonly openAPIV2?: RemoteOpenAPIV2;
}

export interface RemoteOpenAPIV2 {
  readonly paths: Readonly<Record<string, unknown>>;
  readonly definitions: Readonly<Record<string, unknown>>;
  /** A digest of the document they came from. */
  readonly hash: string;
}

export class Discovery {
  constructor(
    private readonly registry: ApiRegistry,
    /** The aggregator's group/versions, merged in by their APIServices' priorities. */
    private readonly remote?: () => readonly RemoteGroupVersion[],
  ) {}

  /** Every group/version served, here or by another server (an APIService's wins over a local one). */
  private servedGVs(): ServedGV[] {
    const remote = this.remote?.() ?? [];
    if (remote.length === 0) return this.registry.groupVersions().map((gv) => priorityOf(gv.group, gv.version));
    const claimed = new Set(remote.map((r) => `${r.group}/${r.version}`));
    return [
      ...this.registry
        .groupVersions()
        .filter((gv) => !claimed.has(`${gv.group}/${gv.version}`))
        .map((gv) => priorityOf(gv.group, gv.version)),
      ...remote.map((r) => ({ group: r.group, version: r.version, groupPriority: r.groupPriority, versionPriority: r.versionPriority })),
    ];
  }

  /**
   * The groups with their versions in the order of the aggregator's /apis (SortedByGroupAndVersion):
   * APIServices sorted by group priority, ties by APIService name (`<version>.<group>`), a group
   * placed where its first APIService falls; versions by version priority, then kube-aware order.
   */
  private groups(): Map<string, string[]> {
    return new Map([...this.groupsWithPriorities()].map(([g, vs]) => [g, vs.map((v) => v.version)]));
  }

  private groupsWithPriorities(): Map<string, ServedGV[]> {
    const gvs = this.servedGVs();
    gvs.sort((a, b) => b.groupPriority - a.groupPriority || compareNames(`${a.version}.${a.group}`, `${b.version}.${b.group}`));
    const byGroup = new Map<string, ServedGV[]>();
    for (const gv of gvs) {
      const vs = byGroup.get(gv.group);
      if (vs) vs.push(gv);
      else byGroup.set(gv.group, [gv]);
    }
    for (const vs of byGroup.values()) vs.sort(byVersionPriority);
    return byGroup;
  }

  /**
   * The groups in aggregated discovery's order (calculateAPIGroupsLocked): by the highest group
   * priority of their versions, ties by group name; versions as in groups().
   */
  private aggregatedGroups(): [string, string[]][] {
    const groups = this.groupsWithPriorities();
    const top = new Map<string, number>();
    for (const [g, vs] of groups) top.set(g, Math.max(...vs.map((v) => v.groupPriority)));
    return [...groups].sort(([a], [b]) => top.get(b)! - top.get(a)! || compareNames(a, b)).map(([g, vs]) => [g, vs.map((v) => v.version)]);
  }

  apiVersions(serverAddress: string): object {
    return {
      kind: 'APIVersions',
      versions: this.groups().get('') ?? [],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  private groupObject(name: string, versions: string[]): object {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }

  apiGroupList(): object {
    const groups = [...this.groups().entries()].filter(([g]) => g !== '').map(([g, vs]) => this.groupObject(g, vs));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  apiGroup(group: string): object | undefined {
    const vs = this.groups().get(group);
    if (!vs || group === '') return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.groupObject(group, vs) };
  }

  private resourcesOf(group: string, version: string): RegisteredResource[] {
    return this.registry.resources.filter((r) => r.descriptor.group === group && r.descriptor.version === version);
  }

  resourceList(group: string, version: string): object | undefined {
    const rs = this.resourcesOf(group, version);
    if (!rs.length) return undefined;
    const resources: object[] = [];
    for (const { descriptor: d } of rs) {
      resources.push({
        name: d.plural,
        singularName: d.singular,
        namespaced: d.namespaced,
        kind: d.kind,
        verbs: [...(d.discoveryVerbs ?? d.verbs)],
        ...(d.shortNames.length ? { shortNames: [...d.shortNames] } : {}),
        ...(d.categories.length ? { categories: [...d.categories] } : {}),
        storageVersionHash: storageVersionHash(d.group, d.version, d.kind),
      });
      for (const s of d.subresources) {
        resources.push({
          name: `${d.plural}/${s.name}`,
          singularName: '',
          namespaced: d.namespaced,
          ...(s.group !== undefined ? { group: s.group } : {}),
          ...(s.version !== undefined ? { version: s.version } : {}),
          kind: s.kind,
          verbs: [...s.verbs],
        });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }

  /** APIGroupDiscoveryList for /api ('core') or /apis ('groups'), serialised once per call. */
  aggregated(which: 'core' | 'groups', version: string): string {
    const items: object[] = [];
    const remote = new Map((this.remote?.() ?? []).map((r) => [`${r.group}/${r.version}`, r]));
    for (const [group, allVersions] of this.aggregatedGroups()) {
      if ((which === 'core') !== (group === '')) continue;
      // Another server's group/version shows what its last discovery check listed (Stale while it
      // is unavailable); one never reached yet is left out, as upstream leaves out what it could not fetch.
      const versions = allVersions.filter((v) => !remote.has(`${group}/${v}`) || remote.get(`${group}/${v}`)!.resources !== undefined);
      if (versions.length === 0) continue;
      items.push({
        metadata: { name: group },
        versions: versions.map((v) => {
          const r = remote.get(`${group}/${v}`);
          return r ? remoteAggregatedVersion(r) : this.localAggregatedVersion(group, v);
        }),
      });
    }
    return JSON.stringify({ kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items });
  }

  private localAggregatedVersion(group: string, v: string): object {
    return {
      version: v,
      resources: this.resourcesOf(group, v).map(({ descriptor: d }) => ({
        resource: d.plural,
        responseKind: { group: d.group, version: d.version, kind: d.kind },
        scope: d.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: d.singular,
        verbs: [...(d.discoveryVerbs ?? d.verbs)],
        ...(d.shortNames.length ? { shortNames: [...d.shortNames] } : {}),
        ...(d.categories.length ? { categories: [...d.categories] } : {}),
        ...(d.subresources.length
          ? {
              subresources: d.subresources.map((s) => ({
                subresource: s.name,
                responseKind: { group: s.group ?? d.group, version: s.version ?? d.version, kind: s.kind },
                verbs: [...s.verbs],
              })),
            }
          : {}),
      })),
      freshness: 'Current',
    };
  }

  /** aggregated discovery's ETag: the whole SHA-512 of the document in upper-case hex, quoted. */
  etag(body: string): string {
    return `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
  }
}

/** An APIResourceList's entries as aggregated discovery shows them (subresources under their resource). */
function remoteAggregatedVersion(r: RemoteGroupVersion): object {
  const top = (r.resources ?? []).filter((x) => !x.name.includes('/'));
  return {
    version: r.version,
    resources: top.map((x) => {
      const subs = (r.resources ?? []).filter((s) => s.name.startsWith(`${x.name}/`));
      return {
        resource: x.name,
        responseKind: { group: x.group ?? r.group, version: x.version ?? r.version, kind: x.kind },
        scope: x.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: x.singularName ?? '',
        verbs: [...x.verbs],
        ...(x.shortNames?.length ? { shortNames: [...x.shortNames] } : {}),
        ...(x.categories?.length ? { categories: [...x.categories] } : {}),
        ...(subs.length
          ? {
              subresources: subs.map((s) => ({
                subresource: s.name.slice(x.name.length + 1),
                responseKind: { group: s.group ?? r.group, version: s.version ?? r.version, kind: s.kind },
                verbs: [...s.verbs],
              })),
            }
          : {}),
      };
    }),
    freshness: r.available ? 'Current' : 'Stale',
  };
}

/** discovery.StorageVersionHash: first 8 bytes of sha256("<group>/<version>/<kind>"), base64. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}
