// Empties a terminating namespace (kube's pkg/controller/namespace/deletion): every served
// namespaced resource that can be deleted is deleted through the client (deletecollection, or
// list + delete), objects held by their own finalizers are waited for, the namespace's status
// conditions say what is left, and finally the `kubernetes` finalizer is removed through
// /finalize, after which the API server removes the namespace.
import { isStatusError } from '../../apimachinery/errors.js';
import { rfc3339 } from '../../apimachinery/times.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { discoverResources, type DiscoveredResource } from '../discovery.js';
import { asLogger, type Logger } from '../../golang/klog.js';

export const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
export const KUBERNETES_FINALIZER = 'kubernetes';

export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: NamespaceCondition[] };
}

// status_condition_utils.go, in its order.
const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;
type ConditionType = (typeof CONDITION_TYPES)[number];

const OK_MESSAGES: Record<ConditionType, string> = {
  NamespaceDeletionDiscoveryFailure: 'All resources successfully discovered',
  NamespaceDeletionGroupVersionParsingFailure: 'All legacy kube types successfully parsed',
  NamespaceDeletionContentFailure: 'All content successfully deleted, may be waiting on finalization',
  NamespaceContentRemaining: 'All content successfully removed',
  NamespaceFinalizersRemaining: 'All content-preserving finalizers finished',
};
const OK_REASONS: Record<ConditionType, string> = {
  NamespaceDeletionDiscoveryFailure: 'ResourcesDiscovered',
  NamespaceDeletionGroupVersionParsingFailure: 'ParsedGroupVersions',
  NamespaceDeletionContentFailure: 'ContentDeleted',
  NamespaceContentRemaining: 'ContentRemoved',
  NamespaceFinalizersRemaining: 'ContentHasNoFinalizers',
};

/** Some content is still going away (ResourcesRemainingError): try again in `estimateSeconds / 2`. */
export class ResourcesRemainingError extends Error {
  override readonly name = 'ResourcesRemainingError';
  readonly code = 'KPL_ERR_NAMESPACE_CONTENT_REMAINING';
  constructor(readonly estimateSeconds: number) {
    super(`some content remains in the namespace, estimate ${estimateSeconds} seconds before it is removed`);
  }
}

/** utilerrors.NewAggregate(...).Error(): one error as itself, several as "[a, b]". */
export class MultiError extends Error {
  override readonly name = 'AggregateError';
  readonly code = 'KPL_ERR_AGGREGATE';
  constructor(readonly errors: readonly Error[]) {
    super(errors.length === 1 ? errors[0]!.message : `[${errors.map((e) => e.message).join(', ')}]`);
  }
}

export interface DeleterOptions {
  readonly client: KubeClient;
  /** How long objects held by finalizers are assumed to take (upstream: 15 s). */
  readonly finalizerEstimateSeconds?: number;
  readonly now?: () => Date;
  readonly log?: (msg: string) => void;
}

function gvrString(g: GVR): string {
  // schema.GroupVersionResource.String()
  return `${g.group}/${g.version}, Resource=${g.resource}`;
}

export class NamespacedResourcesDeleter {
  private readonly client: KubeClient;
  private readonly estimate: number;
  private readonly now: () => Date;
  private readonly log: Logger;
  /** Operations a resource answered 404/405 for (operationNotSupportedCache). */
  private readonly unsupported = new Set<string>();

  constructor(opts: DeleterOptions) {
    this.client = opts.client;
    this.estimate = opts.finalizerEstimateSeconds ?? 15;
    this.now = opts.now ?? (() => new Date());
    this.log = asLogger(opts.log);
  }

  /**
   * One pass over namespace `name`. Resolves when there is nothing (more) to do; throws
   * ResourcesRemainingError when content is still going away, other errors to retry with backoff.
   */
  async delete(name: string, signal?: AbortSignal): Promise<void> {
    let ns: Namespace;
    try {
      ns = await this.client.get<Namespace>(NAMESPACES, undefined, name, { ...(signal ? { signal } : {}) });
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      throw e;
    }
    if (!ns.metadata?.deletionTimestamp) return;
    try {
      // A namespace gone meanwhile (404) is the end of the job, not an error.
      ns = await this.retryOnConflict(ns, (n) => this.ensureTerminating(n));
      if (!ns.metadata?.deletionTimestamp) return;
      if (!(ns.spec?.finalizers ?? []).includes(KUBERNETES_FINALIZER)) return;
      const estimate = await this.deleteAllContent(ns, signal);
      if (estimate > 0) throw new ResourcesRemainingError(estimate);
      await this.retryOnConflict(ns, (n) => this.finalize(n));
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      throw e;
    }
  }

  private async ensureTerminating(ns: Namespace): Promise<Namespace> {
    if (!ns.metadata?.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    return this.client.updateStatus<Namespace>(NAMESPACES, undefined, { ...ns, status: { ...(ns.status ?? {}), phase: 'Terminating' } });
  }

  private async finalize(ns: Namespace): Promise<Namespace> {
    const rest = [...new Set((ns.spec?.finalizers ?? []).filter((f) => f !== KUBERNETES_FINALIZER))].sort();
    return this.client.update<Namespace>(NAMESPACES, undefined, { ...ns, spec: { ...(ns.spec ?? {}), finalizers: rest } }, { subresource: 'finalize' });
  }

  /** retryOnConflictError: re-read and retry on 409; a namespace re-created under us is an error. */
  private async retryOnConflict(ns: Namespace, fn: (n: Namespace) => Promise<Namespace>): Promise<Namespace> {
    let latest = ns;
    for (;;) {
      try {
        return await fn(latest);
      } catch (e) {
        if (!(isStatusError(e) && e.code === 409)) throw e;
      }
      const prev = latest;
      latest = await this.client.get<Namespace>(NAMESPACES, undefined, ns.metadata?.name ?? '');
      if (prev.metadata?.uid !== latest.metadata?.uid) throw new Error('namespace uid has changed across retries');
    }
  }

  /** deleteAllContent: returns the estimate in seconds until remaining content is gone (0: nothing remains). */
  private async deleteAllContent(ns: Namespace, signal?: AbortSignal): Promise<number> {
    const namespace = ns.metadata?.name ?? '';
    const errs: Error[] = [];
    const newConditions: NamespaceCondition[] = [];
    const contentErrors: Error[] = [];
    let estimate = 0;
    let resources: DiscoveredResource[] = [];
    try {
      const found = await discoverResources(this.client, ['delete'], signal ? { signal } : {});
      resources = found.resources.filter((r) => r.namespaced);
      for (const pe of found.parseErrors) {
        errs.push(pe);
        newConditions.push(this.condition('NamespaceDeletionGroupVersionParsingFailure', 'GroupVersionParsingFailed', pe.message));
      }
    } catch (e) {
      // Discovery errors are not fatal upstream (a partial list is still worked on); ours is all
      // or nothing, so there is nothing to delete this round.
      const err = e instanceof Error ? e : new Error(String(e));
      errs.push(err);
      newConditions.push(this.condition('NamespaceDeletionDiscoveryFailure', 'DiscoveryFailed', err.message));
    }
    const gvrRemaining = new Map<string, number>();
    const finalizersRemaining = new Map<string, number>();
    for (const r of resources) {
      try {
        const m = await this.deleteAllContentForResource(r, namespace, signal);
        estimate = Math.max(estimate, m.estimate);
        if (m.remaining > 0) {
          gvrRemaining.set(`${r.resource}.${r.group}`, m.remaining);
          for (const [f, n] of m.finalizers) if (n > 0) finalizersRemaining.set(f, (finalizersRemaining.get(f) ?? 0) + n);
        }
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        errs.push(err);
        contentErrors.push(err);
      }
    }
    if (gvrRemaining.size) {
      const parts = [...gvrRemaining].map(([g, n]) => `${g} has ${n} resource instances`).sort();
      newConditions.push(this.condition('NamespaceContentRemaining', 'SomeResourcesRemain', `Some resources are remaining: ${parts.join(', ')}`));
    }
    if (finalizersRemaining.size) {
      const parts = [...finalizersRemaining].map(([f, n]) => `${f} in ${n} resource instances`).sort();
      newConditions.push(
        this.condition('NamespaceFinalizersRemaining', 'SomeFinalizersRemain', `Some content in the namespace has finalizers remaining: ${parts.join(', ')}`),
      );
    }
    if (contentErrors.length && !newConditions.some((c) => c.type === 'NamespaceDeletionContentFailure')) {
      const msgs = contentErrors.map((e) => e.message).sort();
      newConditions.push(
        this.condition(
          'NamespaceDeletionContentFailure',
          'ContentDeletionFailed',
          `Failed to delete all resource types, ${contentErrors.length} remaining: ${msgs.join(', ')}`,
        ),
      );
    }
    const status = { ...(ns.status ?? {}), conditions: (ns.status?.conditions ?? []).map((c) => ({ ...c })) };
    if (this.updateConditions(status.conditions, newConditions)) {
      try {
        await this.client.updateStatus<Namespace>(NAMESPACES, undefined, { ...ns, status });
      } catch (e) {
        this.log.error(e, "Couldn't update the namespace's status condition", 'namespace', namespace);
      }
    }
    if (errs.length) throw new MultiError(errs);
    return estimate;
  }

  private condition(type: ConditionType, reason: string, message: string): NamespaceCondition {
    return { type, status: 'True', lastTransitionTime: rfc3339(this.now()), reason, message };
  }

  /** updateConditions: every maintained type present, the "ok" variant when no failure was found. */
  private updateConditions(conditions: NamespaceCondition[], fresh: NamespaceCondition[]): boolean {
    let changed = false;
    for (const type of CONDITION_TYPES) {
      const next = fresh.find((c) => c.type === type) ?? {
        type,
        status: 'False' as const,
        lastTransitionTime: rfc3339(this.now()),
        reason: OK_REASONS[type],
        message: OK_MESSAGES[type],
      };
      const old = conditions.find((c) => c.type === type);
      if (!old) {
        conditions.push(next);
        changed = true;
      } else if (old.status !== next.status || old.message !== next.message || old.reason !== next.reason) {
        if (old.status !== next.status) old.lastTransitionTime = rfc3339(this.now());
        old.status = next.status;
        old.reason = next.reason;
        old.message = next.message;
        changed = true;
      }
    }
    return changed;
  }

  private async deleteAllContentForResource(
    r: DiscoveredResource,
    namespace: string,
    signal?: AbortSignal,
  ): Promise<{ estimate: number; remaining: number; finalizers: Map<string, number> }> {
    const gvr: GVR = { group: r.group, version: r.version, resource: r.resource };
    // Upstream's namespaced_resources_deleter logs these steps at V(5).
    this.log.v(5).info('Namespace controller - deleteAllContentForGroupVersionResource', 'namespace', namespace, 'gvr', gvrString(gvr));
    const supportedDC = await this.deleteCollection(r, gvr, namespace, signal);
    if (!supportedDC) await this.deleteEachItem(r, gvr, namespace, signal);
    const items = await this.listCollection(r, gvr, namespace, signal);
    if (!items) return { estimate: 0, remaining: 0, finalizers: new Map() };
    const finalizers = new Map<string, number>();
    for (const item of items) for (const f of item.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    if (finalizers.size > 0) return { estimate: this.estimate, remaining: items.length, finalizers };
    if (items.length === 0) return { estimate: 0, remaining: 0, finalizers };
    // Nothing holds them, yet they are still there: something unexpected (created meanwhile?).
    throw new Error(`unexpected items still remain in namespace: ${namespace} for gvr: ${gvrString(gvr)}`);
  }

  private async deleteCollection(r: DiscoveredResource, gvr: GVR, namespace: string, signal?: AbortSignal): Promise<boolean> {
    const key = `deletecollection ${r.group}/${r.resource}`;
    if (!r.verbs.includes('deletecollection') || this.unsupported.has(key)) return false;
    try {
      // Background: the namespace controller must not leave orphan finalizers it will never clear.
      await this.client.deleteCollection(gvr, namespace, { propagationPolicy: 'Background', ...(signal ? { signal } : {}) });
      return true;
    } catch (e) {
      if (isStatusError(e) && (e.code === 405 || e.code === 404)) {
        this.unsupported.add(key);
        return false;
      }
      throw e;
    }
  }

  private async listCollection(r: DiscoveredResource, gvr: GVR, namespace: string, signal?: AbortSignal): Promise<KubeObject[] | undefined> {
    const key = `list ${r.group}/${r.resource}`;
    if (!r.verbs.includes('list') || this.unsupported.has(key)) return undefined;
    try {
      const items: KubeObject[] = [];
      let cont: string | undefined;
      do {
        const page = await this.client.list(gvr, namespace, { limit: 500, ...(cont ? { continue: cont } : {}), ...(signal ? { signal } : {}) });
        items.push(...page.items);
        cont = page.metadata.continue || undefined;
      } while (cont);
      return items;
    } catch (e) {
      if (isStatusError(e) && (e.code === 405 || e.code === 404)) {
        this.unsupported.add(key);
        return undefined;
      }
      throw e;
    }
  }

  private async deleteEachItem(r: DiscoveredResource, gvr: GVR, namespace: string, signal?: AbortSignal): Promise<void> {
    const items = await this.listCollection(r, gvr, namespace, signal);
    for (const item of items ?? []) {
      if (item.metadata?.deletionTimestamp) continue;
      this.log.v(5).info('Namespace controller - deleteEachItem', 'namespace', namespace, 'gvr', gvrString(gvr), 'name', item.metadata?.name ?? '');
      try {
        await this.client.delete(gvr, namespace, item.metadata?.name ?? '', { propagationPolicy: 'Background', ...(signal ? { signal } : {}) });
      } catch (e) {
        if (isStatusError(e) && (e.code === 404 || e.code === 405)) continue;
        throw e;
      }
    }
  }
}
