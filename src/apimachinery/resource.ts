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

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
