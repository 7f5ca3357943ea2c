// The ResourceQuota admission plugin (plugin/pkg/admission/resourcequota, its evaluator in
// controller.go, and pkg/quota/v1/generic's object-count evaluator). A validating plugin: every
// create of a namespaced object is charged one `count/<resource>[.<group>]` (and the legacy name of
// configmaps, secrets, resourcequotas, services, ...) against each quota of its namespace whose
// status.hard names it; a create that would take `used` past `hard` is refused with upstream's 403.
//
// Race-free as upstream: the charge is written to the quota's status with a compare-and-swap
// (the store's guaranteed update re-reads the quota and checks again when another writer won), so
// concurrent creates at the limit never take `used` past `hard`, whichever API server they reach.
// Within this server, requests for one namespace are charged one after another (upstream batches
// them per namespace for the same reason), so they rarely lose a compare-and-swap at all.
import { StatusError, forbidden } from '../../../apimachinery/errors.js';
import { Quantity } from '../../../apimachinery/quantity.js';
import { objectCountNames } from '../../../apimachinery/quota.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../../../admission/index.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { ApiRegistry } from '../../registry.js';
import type { ResourceQuota } from './strategy.js';

/** Resources never charged: the quota's own writes, and the review kinds (nothing is stored). */
const NOT_COUNTED = new Set(['authorization.k8s.io/localsubjectaccessreviews']);

export interface ResourceQuotaAdmissionOptions {
  /** The group/resource of quotas (default core/v1 resourcequotas). */
  readonly quotas?: { readonly group: string; readonly version: string; readonly resource: string };
  /** How long what a namespace's quotas track is remembered (default 1 s); milliseconds now (tests). */
  readonly trackedTTLMs?: number;
  readonly now?: () => number;
}

/** Namespaces whose tracked names are remembered at most (upstream's live-lookup LRU holds 100). */
const TRACKED_CACHE_SIZE = 4096;

/** upstream's prettyPrint: `name=value` sorted by name, joined by commas. */
function prettyPrint(list: ReadonlyMap<string, Quantity>): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${list.get(k)!.toString()}`)
    .join(',');
}

function quantities(list: Record<string, unknown> | undefined): Map<string, Quantity> {
  const out = new Map<string, Quantity>();
  for (const [k, v] of Object.entries(list ?? {})) {
    const q = Quantity.parse(v);
    if (q) out.set(k, q);
  }
  return out;
}

/**
 * What the create costs against this quota, as upstream's checkRequest judges it: undefined when
 * the quota does not track the object (no name of it in status.hard, or any scope: no kplane
 * resource matches a scope, as upstream's generic evaluator matches none); a 403 when the quota's
 * usage is not known yet or the create would exceed it; else the quota's new `used`.
 */
function charge(a: AdmissionAttributes, quota: ResourceQuota, names: readonly string[]): Record<string, string> | undefined {
  const spec = quota.spec ?? {};
  if ((spec.scopes?.length ?? 0) > 0 || (spec.scopeSelector?.matchExpressions?.length ?? 0) > 0) return undefined;
  const hard = quantities(quota.status?.hard);
  const restricted = names.filter((n) => hard.has(n));
  if (restricted.length === 0) return undefined;
  const usedRaw = quota.status?.used ?? {};
  if (restricted.some((n) => !(n in usedRaw))) {
    throw denied(a, `status unknown for quota: ${quota.metadata?.name ?? ''}, resources: ${[...restricted].sort().join(',')}`);
  }
  const used = quantities(usedRaw);
  const one = Quantity.fromInt(1);
  const exceeded: string[] = [];
  const next: Record<string, string> = { ...usedRaw };
  for (const n of restricted) {
    const now = (used.get(n) ?? Quantity.fromInt(0)).add(one);
    if (now.cmp(hard.get(n)!) > 0) exceeded.push(n);
    next[n] = now.toString();
  }
  if (exceeded.length > 0) {
    const pick = (m: Map<string, Quantity>): Map<string, Quantity> => new Map(exceeded.map((n) => [n, m.get(n) ?? Quantity.fromInt(0)]));
    throw denied(
      a,
      `exceeded quota: ${quota.metadata?.name ?? ''}, requested: ${prettyPrint(new Map(exceeded.map((n) => [n, one])))}, used: ${prettyPrint(pick(used))}, limited: ${prettyPrint(pick(hard))}`,
    );
  }
  return next;
}

function denied(a: AdmissionAttributes, why: string) {
  return forbidden({ group: a.resource.group, resource: a.resource.resource }, nameForError(a), why);
}

/** admission.NewForbidden's name: the request's, else the object's name or generateName. */
function nameForError(a: AdmissionAttributes): string {
  if (a.name) return a.name;
  const meta = a.object?.metadata;
  return meta?.name || meta?.generateName || 'Unknown';
}

export function resourceQuotaAdmission(registry: ApiRegistry, opts: ResourceQuotaAdmissionOptions = {}): AdmissionPlugin {
  const gvr = opts.quotas ?? { group: '', version: 'v1', resource: 'resourcequotas' };
  const now = opts.now ?? Date.now;
  const ttl = opts.trackedTTLMs ?? 1000;
  // What each namespace's quotas track (the names in their status.hard), read from storage at most
  // once per TTL: most creates are in namespaces without quotas, and a consistent list per create
  // would cost every write. A quota written through this server forgets its namespace's entry at
  // once (upstream reads an informer's cache, then storage when the cache has none, remembering
  // that for 30 s).
  const tracked = new Map<string, { names: Set<string>; until: number }>();
  const remember = (ns: string, quotas: readonly ResourceQuota[]): void => {
    const names = new Set<string>();
    for (const q of quotas) for (const n of Object.keys(q.status?.hard ?? {})) names.add(n);
    tracked.delete(ns);
    tracked.set(ns, { names, until: now() + ttl });
    if (tracked.size > TRACKED_CACHE_SIZE) tracked.delete(tracked.keys().next().value!);
  };
  const trackedNames = (ns: string): Set<string> | undefined => {
    const e = tracked.get(ns);
    if (!e) return undefined;
    if (e.until > now()) return e.names;
    tracked.delete(ns);
    return undefined;
  };
  // One charge at a time per namespace (the tail of each namespace's queue).
  const queues = new Map<string, Promise<void>>();
  const serially = async <T>(ns: string, fn: () => Promise<T>): Promise<T> => {
    const before = queues.get(ns) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = before.then(() => mine);
    queues.set(ns, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (queues.get(ns) === tail) queues.delete(ns);
    }
  };

  return {
    name: 'ResourceQuota',
    // NewHandler(Create, Update): object-count evaluators charge creates only.
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    // Not async: a write no quota tracks (nearly all, and every one in a namespace without quotas)
    // passes without a promise; only a charge, or the namespace's quotas to be read, waits.
    validate(a): Promise<void> | undefined {
      if (a.resource.group === gvr.group && a.resource.resource === gvr.resource) tracked.delete(a.namespace);
      // Sub-resource writes and cluster-scoped objects are not charged.
      if (a.operation !== 'CREATE' || a.subresource !== '' || !a.namespace) return undefined;
      if (NOT_COUNTED.has(`${a.resource.group}/${a.resource.resource}`)) return undefined;
      const quotas = registry.lookup(gvr.group, gvr.version, gvr.resource);
      if (!quotas) return undefined;
      const names = objectCountNames(a.resource.group, a.resource.resource);
      const known = trackedNames(a.namespace);
      if (known && !names.some((n) => known.has(n))) return undefined;
      return serially(a.namespace, async () => {
        // A create queued behind the one that read the namespace's quotas may use what it read.
        const fresh = trackedNames(a.namespace);
        if (fresh && !names.some((n) => fresh.has(n))) return;
        // Check every quota first, then charge each: the charge checks again on the stored quota.
        const live = (await quotas.store.list(a.namespace)).items as ResourceQuota[];
        remember(a.namespace, live);
        const tracking = live.filter((q) => charge(a, q, names) !== undefined);
        if (a.dryRun) return;
        for (const q of tracking) {
          // A quota deleted meanwhile charges nothing (the update's 404 is not the create's).
          await quotas.store
            .update(
              a.namespace,
              q.metadata!.name!,
              (current: KubeObject | undefined) => {
                const cur = current as ResourceQuota;
                const used = charge(a, cur, names);
                if (used === undefined) return cur;
                return { ...cur, status: { ...cur.status, used } };
              },
              { subresource: 'status' },
            )
            .catch((e: unknown) => {
              if (!(e instanceof StatusError && e.code === 404)) throw e;
            });
        }
      });
    },
  };
}
