// The garbage collector's dependency graph (kube's pkg/controller/garbagecollector/graph.go):
// one node per uid, edges from owners to dependents. A node for an owner that was referenced but
// not (yet) seen by an informer is "virtual": its existence is checked against the API.
import type { OwnerReference } from '../../apimachinery/types.js';
import type { GVR } from '../../client/types.js';

/** What an object is known as: its owner-reference coordinates plus namespace (objectReference). */
export interface Identity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  /** '' for cluster-scoped objects (and for virtual owners, the namespace of the dependent that named them). */
  readonly namespace: string;
}

/** objectReference.String() upstream: `[apiVersion/kind, namespace: ns, name: n, uid: u]`. */
export function identityString(i: Identity): string {
  return `[${i.apiVersion}/${i.kind}, namespace: ${i.namespace}, name: ${i.name}, uid: ${i.uid}]`;
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.uid === b.uid && a.namespace === b.namespace;
}

export class GraphNode {
  identity: Identity;
  /** The resource it was observed through; unknown for virtual nodes. */
  gvr: GVR | undefined;
  owners: OwnerReference[] = [];
  readonly dependents = new Set<GraphNode>();
  /** Seen through an informer (not just named by a dependent's ownerReference). */
  observed: boolean;
  beingDeleted = false;
  /** Being deleted with the foregroundDeletion finalizer: waits for its blocking dependents. */
  deletingDependents = false;

  constructor(identity: Identity, observed: boolean, gvr?: GVR) {
    this.identity = identity;
    this.observed = observed;
    this.gvr = gvr;
  }

  /** Dependents whose reference to this node blocks its foreground deletion. */
  blockingDependents(): GraphNode[] {
    const out: GraphNode[] = [];
    for (const dep of this.dependents) {
      if (dep.owners.some((o) => o.uid === this.identity.uid && o.blockOwnerDeletion === true)) out.push(dep);
    }
    return out;
  }

  /** A copy with the same edges (replacing a virtual node's identity). */
  clone(): GraphNode {
    const n = new GraphNode(this.identity, this.observed, this.gvr);
    n.owners = this.owners;
    for (const d of this.dependents) n.dependents.add(d);
    n.beingDeleted = this.beingDeleted;
    n.deletingDependents = this.deletingDependents;
    return n;
  }
}

/** A bounded set with least-recently-added eviction (upstream's absentOwnerCache, an LRU of 500). */
export class BoundedSet {
  private readonly items = new Set<string>();
  constructor(private readonly max: number) {}
  add(k: string): void {
    this.items.delete(k);
    this.items.add(k);
    if (this.items.size > this.max) this.items.delete(this.items.values().next().value as string);
  }
  has(k: string): boolean {
    return this.items.has(k);
  }
}

export function identityKey(i: Pick<Identity, 'apiVersion' | 'kind' | 'name' | 'uid' | 'namespace'>): string {
  return JSON.stringify([i.apiVersion, i.kind, i.namespace, i.name, i.uid]);
}
