// The garbage collector (kube's pkg/controller/garbagecollector): informers over every deletable
// resource found through discovery feed a dependency graph (graph builder); two work queues act
// on it. attemptToDelete deletes objects whose owners are all gone (checked against the API, not
// just the cache), and finishes foreground deletions once no dependent blocks them;
// attemptToOrphan removes an owner's references from its dependents, then its `orphan` finalizer.
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../../apimachinery/errors.js';
import type { KubeObject, OwnerReference } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { discoverResources, gvrString, parseGroupVersion, type DiscoveredResource } from '../discovery.js';
import { asLogger, type Logger } from '../../golang/klog.js';
import { realClock, sleep, type Clock } from '../runtime/clock.js';
import { Informer } from '../runtime/informer.js';
import type { Runnable } from '../runtime/manager.js';
import type { Registry } from 'prom-client';
import { controllerMetrics, type ControllerMetrics } from '../runtime/metrics.js';
import { WorkQueue } from '../runtime/workqueue.js';
import { BoundedSet, GraphNode, identityKey, identityString, sameIdentity, type Identity } from './graph.js';
import { stringifyJSON } from '../../golang/json-int64.js';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** Upstream's DefaultIgnoredResources: events are never owners worth a graph. */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);

export interface GarbageCollectorOptions {
  /** Concurrent attemptToDelete workers (upstream --concurrent-gc-syncs, default 20). */
  readonly workers?: number;
  /** How often discovery is re-read for new or removed resources (upstream 30 s). */
  readonly discoveryPeriodMs?: number;
  /** How long the first sync of all informers may take before the workers start anyway. */
  readonly initialSyncTimeoutMs?: number;
  readonly clock?: Clock;
  /**
   * Queue depth, latency and errors of the two queues go here, labelled
   * `garbagecollector_attempt_to_delete` and `garbagecollector_attempt_to_orphan`.
   */
  readonly registry?: Registry;
}

interface Mapping {
  readonly gvr: GVR;
  readonly namespaced: boolean;
}

class RestMappingError extends Error {
  override readonly name = 'RestMappingError';
  readonly code = 'KPL_ERR_GC_REST_MAPPING';
}

/** A cluster-scoped object naming a namespaced owner: invalid, never resolves by retrying. */
class NamespacedOwnerOfClusterScopedObjectError extends Error {
  override readonly name = 'NamespacedOwnerOfClusterScopedObjectError';
  readonly code = 'KPL_ERR_GC_NAMESPACED_OWNER';
}

type Outcome = 'forget' | 'requeue';

function hasFinalizer(o: KubeObject | undefined, f: string): boolean {
  return !!o?.metadata?.finalizers?.includes(f);
}

/** The deletion starts now, with finalizer `f` (deletionStartsWithFinalizer). */
function deletionStartsWithFinalizer(old: KubeObject | undefined, cur: KubeObject, f: string): boolean {
  if (!cur.metadata?.deletionTimestamp || !hasFinalizer(cur, f)) return false;
  if (!old) return true;
  return !old.metadata?.deletionTimestamp || !hasFinalizer(old, f);
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class GarbageCollector implements Runnable {
  readonly needLeaderElection = true;
  private readonly uidToNode = new Map<string, GraphNode>();
  private readonly absentOwners = new BoundedSet(500);
  private readonly clock: Clock;
  private readonly informers = new Map<string, { informer: Informer<KubeObject>; stop: AbortController; done: Promise<void>; resource: DiscoveredResource }>();
  /** apiVersion/kind → resource, over every served version (the REST mapper). */
  private mapper = new Map<string, Mapping>();
  private attemptToDelete: WorkQueue<string> | undefined;
  private attemptToOrphan: WorkQueue<string> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: GarbageCollectorOptions & { readonly log?: (msg: string) => void } = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.logger = asLogger(opts.log).withName('garbagecollector');
  }

  /** klog-shaped: per-object lines at V(2) and above, as upstream's garbage collector logs them. */
  private readonly logger: Logger;

  /** For tests: whether the graph has a node for this uid. */
  graphHasUID(uid: string): boolean {
    return this.uidToNode.has(uid);
  }

  async start(signal: AbortSignal): Promise<void> {
    const delMetrics = controllerMetrics(this.opts.registry, 'garbagecollector_attempt_to_delete');
    const orphanMetrics = controllerMetrics(this.opts.registry, 'garbagecollector_attempt_to_orphan');
    const del = new WorkQueue<string>({ clock: this.clock, metrics: delMetrics.queue });
    const orphan = new WorkQueue<string>({ clock: this.clock, metrics: orphanMetrics.queue });
    this.attemptToDelete = del;
    this.attemptToOrphan = orphan;
    const stopQueues = (): void => {
      del.shutDown();
      orphan.shutDown();
    };
    signal.addEventListener('abort', stopQueues, { once: true });
    try {
      // Discovery must work once before anything else makes sense; retry until it does.
      for (let attempt = 0; !signal.aborted; attempt++) {
        try {
          await this.syncResources(signal);
          break;
        } catch (e) {
          if (signal.aborted) break;
          this.logger.error(describe(e), 'Failed to discover resources; retrying');
          await sleep(this.clock, Math.min(500 * 2 ** attempt, 10_000), signal);
        }
      }
      if (signal.aborted) return;
      await this.waitForSync(signal, this.opts.initialSyncTimeoutMs ?? 30_000);
      this.logger.info('All resource monitors have synced. Proceeding to collect garbage', 'resources', this.informers.size);
      const workers = this.opts.workers ?? 20;
      const running: Promise<void>[] = [];
      delMetrics.maxConcurrentReconciles(workers);
      orphanMetrics.maxConcurrentReconciles(1);
      for (let i = 0; i < workers; i++) running.push(this.worker(del, (uid) => this.attemptToDeleteWorker(uid), signal, delMetrics));
      running.push(this.worker(orphan, (uid) => this.attemptToOrphanWorker(uid), signal, orphanMetrics));
      running.push(this.resyncLoop(signal));
      await Promise.all(running);
    } finally {
      signal.removeEventListener('abort', stopQueues);
      stopQueues();
      for (const m of this.informers.values()) m.stop.abort();
      await Promise.all([...this.informers.values()].map((m) => m.done));
      this.informers.clear();
      this.uidToNode.clear();
      this.attemptToDelete = undefined;
      this.attemptToOrphan = undefined;
    }
  }

  private async waitForSync(signal: AbortSignal, timeoutMs: number): Promise<void> {
    const t = new AbortController();
    // One waiter per monitored resource listens on this private signal: past ten (kplane's own
    // resources are eleven with the Feature API) Node would warn of a listener leak.
    setMaxListeners(this.informers.size + 1, t.signal);
    const onAbort = (): void => t.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = this.clock.setTimer(() => t.abort(), timeoutMs);
    try {
      const ok = await Promise.all([...this.informers.values()].map((m) => m.informer.waitForSync(t.signal)));
      if (!ok.every(Boolean) && !signal.aborted)
        this.logger.info('Not every resource monitor synced in time; collecting garbage anyway', 'timeoutMs', timeoutMs);
    } finally {
      timer.cancel();
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async resyncLoop(signal: AbortSignal): Promise<void> {
    const period = this.opts.discoveryPeriodMs ?? 30_000;
    while (!signal.aborted) {
      await sleep(this.clock, period, signal);
      if (signal.aborted) return;
      try {
        await this.syncResources(signal);
      } catch (e) {
        if (!signal.aborted) this.logger.error(describe(e), 'Failed to discover resources');
      }
    }
  }

  /** Starts informers for newly served deletable resources and stops those no longer served. */
  private async syncResources(signal: AbortSignal): Promise<void> {
    const lists = await this.client.discovery({ signal });
    const mapper = new Map<string, Mapping>();
    for (const l of lists) {
      let gv: { group: string; version: string };
      try {
        gv = parseGroupVersion(l.groupVersion);
      } catch {
        continue;
      }
      for (const r of l.resources) {
        if (r.name.includes('/')) continue;
        mapper.set(`${l.groupVersion}/${r.kind}`, { gvr: { group: gv.group, version: gv.version, resource: r.name }, namespaced: r.namespaced });
      }
    }
    this.mapper = mapper;
    const { resources } = await discoverResources(this.client, ['delete', 'list', 'watch'], { signal });
    const wanted = new Map<string, DiscoveredResource>();
    for (const r of resources) {
      if (IGNORED.has(`${r.group}/${r.resource}`)) continue;
      wanted.set(gvrString(r), r);
    }
    for (const [id, m] of this.informers) {
      if (wanted.has(id)) continue;
      this.logger.v(4).info('Stopping the monitor of a resource no longer served', 'resource', id);
      m.stop.abort();
      this.informers.delete(id);
    }
    for (const [id, r] of wanted) {
      if (this.informers.has(id) || signal.aborted) continue;
      this.startMonitor(id, r);
    }
  }

  private startMonitor(id: string, r: DiscoveredResource): void {
    const gvr: GVR = { group: r.group, version: r.version, resource: r.resource };
    // Metadata is all the graph needs; upstream's GC uses metadata informers for the same reason.
    const informer = new Informer<KubeObject>({ client: this.client, gvr, clock: this.clock, log: this.logger, metadataOnly: true });
    const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
    informer.addEventHandler({
      onAdd: (o) => this.processGraphChange('add', undefined, o, gvr, apiVersion, r.kind),
      onUpdate: (old, o) => this.processGraphChange('update', old, o, gvr, apiVersion, r.kind),
      onDelete: (o) => this.processGraphChange('delete', undefined, o, gvr, apiVersion, r.kind),
    });
    const stop = new AbortController();
    const done = informer.run(stop.signal).catch((e: unknown) => this.logger.error(describe(e), 'Monitor failed', 'resource', id));
    this.informers.set(id, { informer, stop, done, resource: r });
  }

  private enqueueDelete(n: GraphNode): void {
    this.attemptToDelete?.add(n.identity.uid);
  }

  // ---- graph builder (processGraphChanges) ----------------------------------------------------

  private processGraphChange(
    type: 'add' | 'update' | 'delete',
    old: KubeObject | undefined,
    obj: KubeObject,
    gvr: GVR,
    apiVersion: string,
    kind: string,
  ): void {
    const m = obj.metadata ?? {};
    const uid = m.uid;
    if (!uid) return;
    const observedIdentity: Identity = { apiVersion, kind, name: m.name ?? '', uid, namespace: m.namespace ?? '' };
    let existing = this.uidToNode.get(uid);
    if (existing && type !== 'delete' && !existing.observed) {
      // A virtual node is now observed: dependents that named it otherwise may be invalid.
      if (!sameIdentity(observedIdentity, existing.identity)) {
        const { nonmatching } = this.partitionDependents(existing, observedIdentity);
        for (const dep of nonmatching) {
          if (observedIdentity.namespace && dep.identity.namespace !== observedIdentity.namespace) this.reportInvalidNamespaceOwnerRef(dep, uid);
          this.enqueueDelete(dep);
        }
        existing = existing.clone();
        existing.identity = observedIdentity;
        this.replaceNode(existing);
      }
      existing.observed = true;
      existing.gvr = gvr;
    }
    if (type !== 'delete' && !existing) {
      const n = new GraphNode(observedIdentity, true, gvr);
      n.owners = [...(m.ownerReferences ?? [])];
      n.beingDeleted = !!m.deletionTimestamp;
      n.deletingDependents = !!m.deletionTimestamp && hasFinalizer(obj, FINALIZER_FOREGROUND);
      this.uidToNode.set(uid, n);
      this.addDependentToOwners(n, n.owners);
      this.processTransitions(old, obj, n);
      return;
    }
    if (type !== 'delete' && existing) {
      const next = m.ownerReferences ?? [];
      const { added, removed, changed } = referenceDiffs(existing.owners, next);
      if (added.length || removed.length || changed.length) {
        this.addUnblockedOwnersToDeleteQueue(removed, changed);
        existing.owners = [...next];
        this.addDependentToOwners(existing, added);
        this.removeDependentFromOwners(existing, removed);
      }
      if (m.deletionTimestamp) existing.beingDeleted = true;
      this.processTransitions(old, obj, existing);
      return;
    }
    if (!existing) return;
    this.removeNodeAndNotify(existing, observedIdentity);
  }

  private removeNodeAndNotify(n: GraphNode, deletedIdentity: Identity): void {
    this.uidToNode.delete(n.identity.uid);
    this.removeDependentFromOwners(n, n.owners);
    if (n.dependents.size > 0) this.absentOwners.add(identityKey(deletedIdentity));
    for (const dep of n.dependents) this.enqueueDelete(dep);
    for (const o of n.owners) {
      const owner = this.uidToNode.get(o.uid);
      // An owner waiting for its dependents may be done now.
      if (owner?.deletingDependents) this.enqueueDelete(owner);
    }
  }

  /** Replaces the node for a uid, re-pointing the edges of its owners and dependents. */
  private replaceNode(n: GraphNode): void {
    const old = this.uidToNode.get(n.identity.uid);
    this.uidToNode.set(n.identity.uid, n);
    if (!old || old === n) return;
    for (const o of n.owners) {
      const owner = this.uidToNode.get(o.uid);
      if (owner?.dependents.delete(old)) owner.dependents.add(n);
    }
  }

  private processTransitions(old: KubeObject | undefined, cur: KubeObject, n: GraphNode): void {
    if (deletionStartsWithFinalizer(old, cur, FINALIZER_ORPHAN)) {
      this.attemptToOrphan?.add(n.identity.uid);
      return;
    }
    if (deletionStartsWithFinalizer(old, cur, FINALIZER_FOREGROUND)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) this.enqueueDelete(dep);
      this.enqueueDelete(n);
    }
  }

  private addDependentToOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    let potentiallyInvalid = false;
    for (const ref of owners) {
      let owner = this.uidToNode.get(ref.uid);
      const known = !!owner;
      if (!owner) {
        owner = new GraphNode({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: n.identity.namespace }, false);
        this.uidToNode.set(ref.uid, owner);
      }
      owner.dependents.add(n);
      if (!known) {
        // The API says whether it exists; a virtual delete follows if it does not.
        this.enqueueDelete(owner);
      } else if (!potentiallyInvalid) {
        const ownerNamespaced = owner.identity.namespace !== '';
        if (ownerNamespaced && owner.identity.namespace !== n.identity.namespace) {
          if (owner.observed) this.reportInvalidNamespaceOwnerRef(n, ref.uid);
          potentiallyInvalid = true;
        } else if (ref.apiVersion !== owner.identity.apiVersion || ref.kind !== owner.identity.kind || ref.name !== owner.identity.name) {
          potentiallyInvalid = true;
        } else if (!ownerNamespaced && owner.identity.namespace !== n.identity.namespace && !owner.observed) {
          potentiallyInvalid = true;
        }
      }
    }
    if (potentiallyInvalid) this.enqueueDelete(n);
  }

  private removeDependentFromOwners(n: GraphNode, owners: readonly OwnerReference[]): void {
    for (const ref of owners) this.uidToNode.get(ref.uid)?.dependents.delete(n);
  }

  /** Owners waiting in foreground deletion that a removed or unblocked reference may release. */
  private addUnblockedOwnersToDeleteQueue(removed: readonly OwnerReference[], changed: readonly { old: OwnerReference; cur: OwnerReference }[]): void {
    for (const ref of removed) {
      if (ref.blockOwnerDeletion !== true) continue;
      const owner = this.uidToNode.get(ref.uid);
      if (owner?.deletingDependents) this.enqueueDelete(owner);
    }
    for (const c of changed) {
      if (c.old.blockOwnerDeletion === true && c.cur.blockOwnerDeletion !== true) {
        const owner = this.uidToNode.get(c.cur.uid);
        if (owner?.deletingDependents) this.enqueueDelete(owner);
      }
    }
  }

  /** Dependents that name `identity` exactly (coordinates and, for namespaced owners, namespace) and the others. */
  private partitionDependents(n: GraphNode, identity: Identity): { matching: GraphNode[]; nonmatching: GraphNode[] } {
    const matching: GraphNode[] = [];
    const nonmatching: GraphNode[] = [];
    const ownerNamespaced = identity.namespace !== '';
    for (const dep of n.dependents) {
      const ref = dep.owners.find((o) => o.uid === identity.uid);
      const ok =
        !!ref &&
        ref.apiVersion === identity.apiVersion &&
        ref.kind === identity.kind &&
        ref.name === identity.name &&
        (!ownerNamespaced || dep.identity.namespace === identity.namespace);
      (ok ? matching : nonmatching).push(dep);
    }
    return { matching, nonmatching };
  }

  /** The API confirmed `identity` does not exist (enqueueVirtualDeleteEvent + its processing). */
  private virtualDelete(identity: Identity): void {
    const n = this.uidToNode.get(identity.uid);
    if (!n) return;
    if (!n.observed) {
      const { matching, nonmatching } = this.partitionDependents(n, identity);
      if (nonmatching.length > 0) {
        // Some dependents name this uid otherwise: the node stays, under one of their names.
        if (matching.length) {
          this.absentOwners.add(identityKey(identity));
          for (const dep of matching) this.enqueueDelete(dep);
        }
        if (sameIdentity(n.identity, identity)) {
          const dep = nonmatching[0]!;
          const ref = dep.owners.find((o) => o.uid === identity.uid)!;
          const replacement = n.clone();
          replacement.identity = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: dep.identity.namespace };
          this.replaceNode(replacement);
          this.attemptToDelete?.addRateLimited(identity.uid);
        }
        return;
      }
    } else if (!sameIdentity(n.identity, identity)) {
      // An observed node is not removed on a lookup under other coordinates.
      const { matching } = this.partitionDependents(n, identity);
      if (matching.length) {
        this.absentOwners.add(identityKey(identity));
        for (const dep of matching) this.enqueueDelete(dep);
      }
      return;
    }
    this.removeNodeAndNotify(n, identity);
  }

  private reportInvalidNamespaceOwnerRef(n: GraphNode, ownerUID: string): void {
    const ref = n.owners.find((o) => o.uid === ownerUID);
    if (!ref) return;
    const invalid: Identity = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, namespace: n.identity.namespace };
    const message = `ownerRef ${identityString(invalid)} does not exist in namespace ${JSON.stringify(n.identity.namespace)}`;
    this.logger.v(2).info('Item references an owner in another namespace', 'item', identityString(n.identity), 'message', message);
    void this.recordEvent(n.identity, 'Warning', 'OwnerRefInvalidNamespace', message);
  }

  private async recordEvent(about: Identity, type: string, reason: string, message: string): Promise<void> {
    const now = new Date();
    const ts = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const namespace = about.namespace || 'default';
    const nanos = BigInt(now.getTime()) * 1_000_000n;
    try {
      await this.client.create({ group: '', version: 'v1', resource: 'events' }, namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${about.name}.${nanos.toString(16)}`, namespace },
        involvedObject: {
          kind: about.kind,
          apiVersion: about.apiVersion,
          name: about.name,
          uid: about.uid,
          ...(about.namespace ? { namespace: about.namespace } : {}),
        },
        reason,
        message,
        type,
        source: { component: 'garbage-collector-controller' },
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
        reportingComponent: 'garbage-collector-controller',
        reportingInstance: '',
      });
    } catch (e) {
      this.logger.error(describe(e), 'Could not record an event', 'reason', reason, 'object', identityString(about));
    }
  }

  // ---- workers -----------------------------------------------------------------------------

  private async worker(q: WorkQueue<string>, fn: (uid: string) => Promise<Outcome>, signal: AbortSignal, metrics: ControllerMetrics): Promise<void> {
    for (;;) {
      const uid = await q.get();
      if (uid === undefined) return;
      try {
        if (signal.aborted) continue;
        let outcome: Outcome;
        const started = this.clock.now();
        metrics.activeWorkers(1);
        try {
          outcome = await fn(uid);
          metrics.reconciled(outcome === 'forget' ? 'success' : 'requeue');
        } catch (e) {
          if (!signal.aborted) this.logger.error(describe(e), 'Error syncing item', 'uid', uid);
          metrics.reconciled('error');
          metrics.reconcileError(false);
          outcome = 'requeue';
        } finally {
          metrics.reconcileSeconds((this.clock.now() - started) / 1000);
          metrics.activeWorkers(-1);
        }
        if (outcome === 'forget') q.forget(uid);
        else q.addRateLimited(uid);
      } finally {
        q.done(uid);
      }
    }
  }

  private mapping(apiVersion: string, kind: string): Mapping {
    const m = this.mapper.get(`${apiVersion}/${kind}`);
    if (!m) throw new RestMappingError(`unable to get REST mapping for ${apiVersion}/${kind}`);
    return m;
  }

  private mappingOf(n: GraphNode): Mapping {
    if (n.gvr) return { gvr: n.gvr, namespaced: n.identity.namespace !== '' };
    return this.mapping(n.identity.apiVersion, n.identity.kind);
  }

  private async attemptToDeleteWorker(uid: string): Promise<Outcome> {
    const n = this.uidToNode.get(uid);
    if (!n) return 'forget';
    try {
      await this.attemptToDeleteItem(n);
    } catch (e) {
      if (e instanceof VirtualDeleted || e instanceof NamespacedOwnerOfClusterScopedObjectError) return 'forget';
      throw e;
    }
    // A virtual node that exists but has not been observed yet is looked at again.
    return n.observed || !this.uidToNode.has(uid) ? 'forget' : 'requeue';
  }

  private async getLatest(n: GraphNode): Promise<KubeObject | undefined> {
    const m = this.mappingOf(n);
    try {
      return await this.client.get(m.gvr, m.namespaced ? n.identity.namespace : undefined, n.identity.name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return undefined;
      throw e;
    }
  }

  private async attemptToDeleteItem(item: GraphNode): Promise<void> {
    // "Being deleted" is a one-way trip: wait for the final deletion, then process its dependents.
    if (item.beingDeleted && !item.deletingDependents) return;
    const latest = await this.getLatest(item);
    if (!latest || latest.metadata?.uid !== item.identity.uid) {
      const m = this.mappingOf(item);
      this.virtualDelete({ ...item.identity, namespace: m.namespaced ? item.identity.namespace : '' });
      throw new VirtualDeleted();
    }
    if (item.deletingDependents) return this.processDeletingDependentsItem(item);
    const refs = latest.metadata?.ownerReferences ?? [];
    if (refs.length === 0) return;
    const { solid, dangling, waiting } = await this.classifyReferences(item, refs);
    if (solid.length) {
      if (!dangling.length && !waiting.length) return;
      // References to gone owners, and to owners waiting for their dependents, are removed.
      const uids = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.patchOwnerReferences(item, (cur) => cur.filter((r) => !uids.has(r.uid)));
      return;
    }
    if (waiting.length && item.dependents.size) {
      for (const dep of item.dependents) {
        if (dep.deletingDependents) {
          // A possible cycle: make this item's references non-blocking before deleting it in foreground.
          await this.patchOwnerReferences(item, (cur) => cur.map((r) => (r.blockOwnerDeletion === true ? { ...r, blockOwnerDeletion: false } : r)));
          break;
        }
      }
      await this.deleteObject(item, latest, 'Foreground');
      return;
    }
    const policy = hasFinalizer(latest, FINALIZER_ORPHAN) ? 'Orphan' : hasFinalizer(latest, FINALIZER_FOREGROUND) ? 'Foreground' : 'Background';
    await this.deleteObject(item, latest, policy);
  }

  private async processDeletingDependentsItem(item: GraphNode): Promise<void> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      await this.removeFinalizer(item, FINALIZER_FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.enqueueDelete(dep);
  }

  private async classifyReferences(
    item: GraphNode,
    refs: readonly OwnerReference[],
  ): Promise<{ solid: OwnerReference[]; dangling: OwnerReference[]; waiting: OwnerReference[] }> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = await this.isDangling(ref, item);
      if (!owner) dangling.push(ref);
      else if (owner.metadata?.deletionTimestamp && hasFinalizer(owner, FINALIZER_FOREGROUND)) waiting.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** The owner as the API has it now, or undefined when it is gone (absent, or another uid). */
  private async isDangling(ref: OwnerReference, item: GraphNode): Promise<KubeObject | undefined> {
    const coords = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid };
    if (this.absentOwners.has(identityKey({ ...coords, namespace: '' }))) return undefined;
    if (this.absentOwners.has(identityKey({ ...coords, namespace: item.identity.namespace }))) return undefined;
    const m = this.mapping(ref.apiVersion, ref.kind);
    if (!item.identity.namespace && m.namespaced) {
      // A cluster-scoped object cannot have a namespaced owner: the reference is ignored.
      throw new NamespacedOwnerOfClusterScopedObjectError(
        `${identityString(item.identity)} is cluster-scoped, but refers to a namespaced owner ${ref.kind}/${ref.name}`,
      );
    }
    const absentKey = identityKey({ ...coords, namespace: m.namespaced ? item.identity.namespace : '' });
    let owner: KubeObject;
    try {
      owner = await this.client.get(m.gvr, m.namespaced ? item.identity.namespace : undefined, ref.name);
    } catch (e) {
      if (isStatusError(e) && e.code === 404) {
        this.absentOwners.add(absentKey);
        return undefined;
      }
      throw e;
    }
    if (owner.metadata?.uid !== ref.uid) {
      this.absentOwners.add(absentKey);
      return undefined;
    }
    return owner;
  }

  private async deleteObject(item: GraphNode, latest: KubeObject, policy: 'Foreground' | 'Background' | 'Orphan'): Promise<void> {
    const m = this.mappingOf(item);
    this.logger.v(2).info('Deleting item', 'item', identityString(item.identity), 'propagationPolicy', policy);
    try {
      await this.client.delete(m.gvr, m.namespaced ? item.identity.namespace : undefined, item.identity.name, {
        propagationPolicy: policy,
        preconditions: { uid: item.identity.uid, ...(latest.metadata?.resourceVersion ? { resourceVersion: latest.metadata.resourceVersion } : {}) },
      });
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return;
      throw e;
    }
  }

  /** Rewrites ownerReferences with `fn` under the object's resourceVersion, re-reading on conflict. */
  private async patchOwnerReferences(n: GraphNode, fn: (cur: OwnerReference[]) => OwnerReference[]): Promise<void> {
    await this.patchMetadata(n, (o) => {
      const cur = o.metadata?.ownerReferences ?? [];
      const next = fn(cur);
      if (stringifyJSON(next) === stringifyJSON(cur)) return undefined;
      return { ownerReferences: next.length ? next : null };
    });
  }

  private async removeFinalizer(n: GraphNode, finalizer: string): Promise<void> {
    await this.patchMetadata(n, (o) => {
      const cur = o.metadata?.finalizers ?? [];
      if (!cur.includes(finalizer)) return undefined;
      const next = cur.filter((f) => f !== finalizer);
      return { finalizers: next.length ? next : null };
    });
  }

  private async patchMetadata(n: GraphNode, change: (latest: KubeObject) => Record<string, unknown> | undefined): Promise<void> {
    const m = this.mappingOf(n);
    const ns = m.namespaced ? n.identity.namespace : undefined;
    for (let attempt = 0; attempt < 10; attempt++) {
      const latest = await this.getLatest(n);
      if (!latest || latest.metadata?.uid !== n.identity.uid) return;
      const meta = change(latest);
      if (!meta) return;
      try {
        await this.client.patch(m.gvr, ns, n.identity.name, 'merge', {
          metadata: { ...meta, uid: n.identity.uid, resourceVersion: latest.metadata?.resourceVersion },
        });
        return;
      } catch (e) {
        if (isStatusError(e) && e.code === 404) return;
        if (isStatusError(e) && e.code === 409) continue;
        throw e;
      }
    }
    throw new Error(`too many conflicts updating ${identityString(n.identity)}`);
  }

  private async attemptToOrphanWorker(uid: string): Promise<Outcome> {
    const owner = this.uidToNode.get(uid);
    if (!owner) return 'forget';
    const errors: string[] = [];
    await Promise.all(
      [...owner.dependents].map(async (dep) => {
        try {
          await this.patchOwnerReferences(dep, (cur) => cur.filter((r) => r.uid !== uid));
        } catch (e) {
          errors.push(`orphaning ${identityString(dep.identity)} failed, ${describe(e)}`);
        }
      }),
    );
    if (errors.length) throw new Error(`failed to orphan dependents of owner ${identityString(owner.identity)}, got errors: ${errors.join(', ')}`);
    await this.removeFinalizer(owner, FINALIZER_ORPHAN);
    return 'forget';
  }
}

/** attemptToDeleteItem found the item gone and removed it from the graph (enqueuedVirtualDeleteEventErr). */
class VirtualDeleted extends Error {
  override readonly name = 'VirtualDeleted';
  readonly code = 'KPL_ERR_GC_VIRTUAL_DELETE';
}

function referenceDiffs(
  old: readonly OwnerReference[],
  cur: readonly OwnerReference[],
): { added: OwnerReference[]; removed: OwnerReference[]; changed: { old: OwnerReference; cur: OwnerReference }[] } {
  const oldByUid = new Map(old.map((r) => [r.uid, r]));
  const curByUid = new Map(cur.map((r) => [r.uid, r]));
  const added = cur.filter((r) => !oldByUid.has(r.uid));
  const removed = old.filter((r) => !curByUid.has(r.uid));
  const changed: { old: OwnerReference; cur: OwnerReference }[] = [];
  for (const r of cur) {
    const o = oldByUid.get(r.uid);
    if (o && stringifyJSON(o) !== stringifyJSON(r)) changed.push({ old: o, cur: r });
  }
  return { added, removed, changed };
}
