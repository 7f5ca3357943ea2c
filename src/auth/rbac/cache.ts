// What the RBAC authorizer reads: the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as
// the informer last saw them (upstream reads listers), with the bindings indexed by subject so that
// a decision looks only at the bindings naming the user, one of its groups or its ServiceAccount,
// not at every binding (upstream lists them all; with thousands of bindings that is the cost).
import type { ClusterRole, Role, RoleBinding, Subject } from './types.js';
import { RBAC_GROUP } from './types.js';

const SA_PREFIX = 'system:serviceaccount:';

/** One binding as the index holds it; `namespace` is '' for a ClusterRoleBinding. */
export interface BindingEntry {
  readonly binding: RoleBinding;
  readonly namespace: string;
}

/**
 * The key a subject is found under: users and ServiceAccounts by the user name they match
 * (`system:serviceaccount:<ns>:<name>`, the binding's namespace when the subject gives none),
 * groups by name. Undefined for a subject that can match nobody.
 */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      if (!ns) return undefined;
      return `u:${SA_PREFIX}${ns}:${s.name}`;
    }
    default:
      return undefined;
  }
}

type Index = Map<string, Set<BindingEntry>>;

function addToIndex(index: Index, e: BindingEntry): void {
  for (const s of e.binding.subjects ?? []) {
    const k = subjectKey(s, e.namespace);
    if (k === undefined) continue;
    let set = index.get(k);
    if (!set) index.set(k, (set = new Set()));
    set.add(e);
  }
}

function removeFromIndex(index: Index, e: BindingEntry): void {
  for (const s of e.binding.subjects ?? []) {
    const k = subjectKey(s, e.namespace);
    if (k === undefined) continue;
    const set = index.get(k);
    if (!set) continue;
    set.delete(e);
    if (set.size === 0) index.delete(k);
  }
}

export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';

export class RbacCache {
  private readonly roles = new Map<string, Role>();
  private readonly clusterRoles = new Map<string, ClusterRole>();
  private readonly clusterRoleBindings = new Map<string, BindingEntry>();
  private readonly roleBindings = new Map<string, BindingEntry>();
  private readonly clusterIndex: Index = new Map();
  /** namespace → subject key → bindings. */
  private readonly namespaceIndex = new Map<string, Index>();
  private readonly listeners = new Set<() => void>();

  getRole(namespace: string, name: string): Role | undefined {
    return this.roles.get(`${namespace}/${name}`);
  }

  getClusterRole(name: string): ClusterRole | undefined {
    return this.clusterRoles.get(name);
  }

  /** The ClusterRoleBindings that may apply to a user with these name and groups, each once. */
  clusterBindingsFor(user: string, groups: readonly string[]): BindingEntry[] {
    return collect(this.clusterIndex, user, groups);
  }

  /** The RoleBindings of `namespace` that may apply to the user, each once. */
  roleBindingsFor(namespace: string, user: string, groups: readonly string[]): BindingEntry[] {
    const index = this.namespaceIndex.get(namespace);
    return index ? collect(index, user, groups) : [];
  }

  get size(): { roles: number; clusterRoles: number; roleBindings: number; clusterRoleBindings: number } {
    return {
      roles: this.roles.size,
      clusterRoles: this.clusterRoles.size,
      roleBindings: this.roleBindings.size,
      clusterRoleBindings: this.clusterRoleBindings.size,
    };
  }

  /** Calls `fn` after every change (tests and the benchmark wait on it). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  upsert(kind: RbacKind, obj: Role | ClusterRole | RoleBinding): void {
    this.put(kind, obj);
    this.changed();
  }

  delete(kind: RbacKind, obj: Role | ClusterRole | RoleBinding): void {
    this.remove(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
    this.changed();
  }

  /** A relist: what is not in `items` is gone. */
  replace(kind: RbacKind, items: readonly (Role | ClusterRole | RoleBinding)[]): void {
    const keep = new Set(items.map((o) => keyOf(kind, o)));
    for (const k of [...this.keysOf(kind)]) {
      if (keep.has(k)) continue;
      const slash = k.indexOf('/');
      this.remove(kind, slash < 0 ? '' : k.slice(0, slash), slash < 0 ? k : k.slice(slash + 1));
    }
    for (const o of items) this.put(kind, o);
    this.changed();
  }

  private keysOf(kind: RbacKind): Iterable<string> {
    switch (kind) {
      case 'Role':
        return this.roles.keys();
      case 'ClusterRole':
        return this.clusterRoles.keys();
      case 'RoleBinding':
        return this.roleBindings.keys();
      case 'ClusterRoleBinding':
        return this.clusterRoleBindings.keys();
    }
  }

  private put(kind: RbacKind, obj: Role | ClusterRole | RoleBinding): void {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    switch (kind) {
      case 'Role':
        this.roles.set(`${ns}/${name}`, obj);
        return;
      case 'ClusterRole':
        this.clusterRoles.set(name, obj);
        return;
      case 'ClusterRoleBinding': {
        this.remove(kind, '', name);
        const e: BindingEntry = { binding: obj as RoleBinding, namespace: '' };
        this.clusterRoleBindings.set(name, e);
        addToIndex(this.clusterIndex, e);
        return;
      }
      case 'RoleBinding': {
        this.remove(kind, ns, name);
        const e: BindingEntry = { binding: obj as RoleBinding, namespace: ns };
        this.roleBindings.set(`${ns}/${name}`, e);
        let index = this.namespaceIndex.get(ns);
        if (!index) this.namespaceIndex.set(ns, (index = new Map<string, Set<BindingEntry>>()));
        addToIndex(index, e);
        return;
      }
    }
  }

  private remove(kind: RbacKind, ns: string, name: string): void {
    switch (kind) {
      case 'Role':
        this.roles.delete(`${ns}/${name}`);
        return;
      case 'ClusterRole':
        this.clusterRoles.delete(name);
        return;
      case 'ClusterRoleBinding': {
        const e = this.clusterRoleBindings.get(name);
        if (!e) return;
        this.clusterRoleBindings.delete(name);
        removeFromIndex(this.clusterIndex, e);
        return;
      }
      case 'RoleBinding': {
        const e = this.roleBindings.get(`${ns}/${name}`);
        if (!e) return;
        this.roleBindings.delete(`${ns}/${name}`);
        const index = this.namespaceIndex.get(ns);
        if (!index) return;
        removeFromIndex(index, e);
        if (index.size === 0) this.namespaceIndex.delete(ns);
        return;
      }
    }
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}

function keyOf(kind: RbacKind, o: Role | ClusterRole | RoleBinding): string {
  const name = o.metadata?.name ?? '';
  return kind === 'Role' || kind === 'RoleBinding' ? `${o.metadata?.namespace ?? ''}/${name}` : name;
}

function collect(index: Index, user: string, groups: readonly string[]): BindingEntry[] {
  const out: BindingEntry[] = [];
  const byUser = index.get(`u:${user}`);
  if (byUser) for (const e of byUser) out.push(e);
  let seen: Set<BindingEntry> | undefined;
  for (let i = 0; i < groups.length; i++) {
    const set = index.get(`g:${groups[i]}`);
    if (!set) continue;
    for (const e of set) {
      // A binding naming both the user and one of its groups (or two groups) is visited once.
      if (out.length > 0) {
        seen ??= new Set(out);
        if (seen.has(e)) continue;
        seen.add(e);
      }
      out.push(e);
    }
  }
  return out;
}

/** appliesToUser: whether a binding's subject is this user (the binding's namespace fills a ServiceAccount's). */
export function subjectApplies(s: Subject, user: string, groups: readonly string[], bindingNamespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user;
    case 'Group':
      return groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || bindingNamespace;
      return ns !== '' && user === `${SA_PREFIX}${ns}:${s.name}`;
    }
    default:
      return false;
  }
}

export { RBAC_GROUP };
