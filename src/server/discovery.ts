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

export class Discovery {
  constructor(private readonly registry: ApiRegistry) {}

  private groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const gv of this.registry.groupVersions()) {
      const vs = groups.get(gv.group) ?? [];
      if (!vs.includes(gv.version)) vs.push(gv.version);
      groups.set(gv.group, vs);
    }
    for (const vs of groups.values()) vs.sort(compareKubeVersions);
    return groups;
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
    for (const [group, versions] of this.groups()) {
      if ((which === 'core') !== (group === '')) continue;
      items.push({
        metadata: { name: group, ...(version === 'v2' ? {} : {}) },
        versions: versions.map((v) => ({
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
        })),
      });
    }
    return JSON.stringify({ kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items });
  }

  /** aggregated discovery's ETag: the whole SHA-512 of the document in upper-case hex, quoted. */
  etag(body: string): string {
    return `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"`;
  }
}

/** discovery.StorageVersionHash: first 8 bytes of sha256("<group>/<version>/<kind>"), base64. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}
