// NamespaceLifecycle admission (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle): nothing is
// created in a namespace that is terminating, nothing is created or updated in one that is missing,
// and the immortal namespaces cannot be deleted.
import { StatusError, forbidden, notFound } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../../admission/index.js';
import type { ApiRegistry } from '../../registry.js';
import { NAMESPACE_DEFAULT, NAMESPACE_PUBLIC, NAMESPACE_SYSTEM } from './strategy.js';

/**
 * lifecycle.Register: default, kube-system and kube-public may not be deleted (kube-node-lease
 * may). The plugin's own list, not the system namespaces (SYSTEM_NAMESPACES): upstream keeps the
 * two apart, and kube-apiserver's system namespaces include kube-node-lease.
 */
export const IMMORTAL_NAMESPACES: readonly string[] = [NAMESPACE_DEFAULT, NAMESPACE_SYSTEM, NAMESPACE_PUBLIC];

/** How long creates in a namespace deleted through this server ignore the cache (forceLiveLookupTTL). */
const FORCE_LIVE_LOOKUP_TTL_MS = 30_000;
/** Entries of the force-live-lookup cache (upstream's LRU of 100). */
const FORCE_LIVE_LOOKUP_SIZE = 100;

/**
 * Resources whose creation says something about permissions in a namespace: they are admitted
 * whether or not the namespace exists, since refusing them would tell which namespaces do.
 */
const ACCESS_REVIEWS = new Set(['authorization.k8s.io/localsubjectaccessreviews']);

const NAMESPACES = { group: '', resource: 'namespaces' };

export interface NamespaceLifecycleOptions {
  /** Milliseconds now (tests). */
  readonly now?: () => number;
}

/**
 * Upstream's plugin is a mutating one (Admit): it runs before the object is defaulted, named from
 * its generateName and validated, so a create in a missing or terminating namespace is refused
 * with this plugin's error even when the object is invalid.
 */
export function namespaceLifecycle(registry: ApiRegistry, opts: NamespaceLifecycleOptions = {}): AdmissionPlugin {
  const immortal = new Set<string>(IMMORTAL_NAMESPACES);
  const now = opts.now ?? Date.now;
  // Namespaces deleted through this server lately: the watch cache may still show them Active.
  const forceLiveLookup = new Map<string, number>();
  const markForLiveLookup = (name: string): void => {
    forceLiveLookup.delete(name);
    forceLiveLookup.set(name, now() + FORCE_LIVE_LOOKUP_TTL_MS);
    if (forceLiveLookup.size > FORCE_LIVE_LOOKUP_SIZE) forceLiveLookup.delete(forceLiveLookup.keys().next().value!);
  };
  const mustLookLive = (name: string): boolean => {
    const until = forceLiveLookup.get(name);
    if (until === undefined) return false;
    if (until > now()) return true;
    forceLiveLookup.delete(name);
    return false;
  };

  return {
    name: 'NamespaceLifecycle',
    // NewHandler(Create, Update, Delete).
    handles: (op) => op !== 'CONNECT',
    async admit(a) {
      const isNamespace = a.kind.group === '' && a.kind.kind === 'Namespace';
      if (isNamespace && a.operation === 'DELETE' && immortal.has(a.name)) {
        throw forbidden({ group: a.resource.group, resource: a.resource.resource }, a.name, 'this namespace may not be deleted');
      }
      // Cluster-scoped resources are always admitted.
      if (!a.namespace && !isNamespace) return;
      if (isNamespace) {
        // Any operation on namespaces is admitted; after a delete, creates into it look past the cache.
        if (a.operation === 'DELETE') markForLiveLookup(a.name);
        return;
      }
      // Deleting content is always allowed; CONNECT is not an operation this plugin handles.
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      if (ACCESS_REVIEWS.has(`${a.resource.group}/${a.resource.resource}`)) return;
      const namespaces = registry.lookup('', 'v1', 'namespaces');
      if (!namespaces) return;
      let ns: KubeObject;
      try {
        // Like upstream's lister: the watch cache, and storage when the cache does not have it (a
        // namespace just created) or when this server deleted it lately and the cache says Active.
        ns = await namespaces.store.getCached(undefined, a.namespace);
        if (mustLookLive(a.namespace) && phaseOf(ns) === 'Active') ns = await namespaces.store.get(undefined, a.namespace);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) throw notFound(NAMESPACES, a.namespace);
        throw e;
      }
      if (a.operation !== 'CREATE' || phaseOf(ns) !== 'Terminating') return;
      const err = forbidden(
        { group: a.resource.group, resource: a.resource.resource },
        nameForError(a),
        `unable to create new content in namespace ${a.namespace} because it is being terminated`,
      );
      err.status.details = {
        ...err.status.details,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }],
      };
      throw err;
    },
  };
}

function phaseOf(ns: KubeObject): string | undefined {
  return (ns as { status?: { phase?: string } }).status?.phase;
}

/**
 * admission.NewForbidden's name (extractResourceName): the request's name, else the object's name
 * or, as names are generated after admission, its generateName; "Unknown" without either.
 */
function nameForError(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const meta = a.object?.metadata;
  return meta?.name || meta?.generateName || 'Unknown';
}
