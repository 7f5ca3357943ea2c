// What the server knows about one served resource: enough for discovery, OpenAPI paths, protobuf
// and request routing. The registry pairs a descriptor with a Strategy (behaviour).

export interface SubresourceDescriptor {
  /** e.g. `status`, `finalize`, `scale`. */
  readonly name: string;
  /** Kind sent and received on the subresource (the parent's kind for status/finalize). */
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
  /** OpenAPI definition of `kind` when it is not upstream's `io.k8s.api.<group>.<version>.<Kind>` (a kplane group's). */
  readonly definitionName?: string;
}

export interface ResourceDescriptor {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** Resource name in URLs: `configmaps`. */
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly namespaced: boolean;
  /** Discovery verbs: get, list, watch, create, update, patch, delete, deletecollection. */
  readonly verbs: readonly string[];
  /**
   * What discovery lists when it differs from what is served (a terminating CRD's resource lists
   * delete, deletecollection, get, list, watch but still serves update and patch, as upstream).
   */
  readonly discoveryVerbs?: readonly string[];
  readonly subresources: readonly SubresourceDescriptor[];
  /** OpenAPI definition of the kind, e.g. `io.k8s.api.core.v1.ConfigMap`; its list is `<name>List`. */
  readonly definitionName: string;
}

/**
 * The group, version and kind a subresource speaks (the parent's group and version unless it names
 * its own), and that kind's OpenAPI definition: the parent's for the parent kind, else the
 * subresource's `definitionName`, else upstream's `io.k8s.api.<group's first label>.<version>.<Kind>`
 * (autoscaling/v1 Scale → io.k8s.api.autoscaling.v1.Scale).
 */
export function subresourceKind(
  r: ResourceDescriptor,
  sub: SubresourceDescriptor,
): { readonly group: string; readonly version: string; readonly kind: string; readonly definitionName: string } {
  const group = sub.group ?? r.group;
  const version = sub.version ?? r.version;
  if (sub.kind === r.kind && group === r.group) return { group, version, kind: sub.kind, definitionName: r.definitionName };
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '').split('.')[0]!;
  return { group, version, kind: sub.kind, definitionName: sub.definitionName ?? `io.k8s.api.${g}.${version}.${sub.kind}` };
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
