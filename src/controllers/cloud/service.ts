// The service controller (k8s.io/cloud-provider controllers/service): keeps a cloud load balancer
// per Service of type LoadBalancer (without a loadBalancerClass), guarded by the
// `service.kubernetes.io/load-balancer-cleanup` finalizer, and points every load balancer at the
// current node set when nodes come, go, or change their exclusion label or providerID.
// Finalizer and status go to the API as upstream's servicehelper.PatchService sends them: a
// strategic-merge PATCH on `services/status` computed from the old and new objects.
import { Counter, Histogram, type Registry } from 'prom-client';
import { isStatusError } from '../../apimachinery/errors.js';
import type { GVR } from '../../client/types.js';
import { asLogger } from '../../golang/klog.js';
import { Controller } from '../runtime/controller.js';
import { keyOf, splitKey } from '../runtime/informer.js';
import { ItemExponentialFailureRateLimiter } from '../runtime/workqueue.js';
import { controllerFactory, type ControllerContext, type ControllerFactory } from '../types.js';
import { EventRecorder } from './events.js';
import {
  ImplementedElsewhereError,
  LABEL_EXCLUDE_FROM_LB,
  LB_CLEANUP_FINALIZER,
  RetryError,
  TAINT_TO_BE_DELETED_BY_CA,
  type CloudProvider,
  type Ctx,
  type LoadBalancer,
  type LoadBalancerStatus,
  type Node,
  type Service,
} from './provider.js';

export const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
export const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };

/**
 * How long one provider call may take before the sync gives up on it (kplane's; upstream passes
 * no deadline and relies on the provider's own): long enough for a real cloud's load balancer
 * operations, short enough that a stuck cloud API does not hold a worker for ever.
 */
export const DEFAULT_PROVIDER_CALL_TIMEOUT_MS = 5 * 60_000;

/** A provider call did not return within its bound; its context was cancelled and the call abandoned. */
export class ProviderTimeoutError extends Error {
  override readonly name = 'ProviderTimeoutError';
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} did not return within ${timeoutMs / 1000}s`);
  }
}

/**
 * Runs one provider call with its own context, cancelled when the caller's is or after `timeoutMs`;
 * the timeout also settles the call for a provider that ignores cancellation (the call's own
 * promise is left to finish in the background).
 */
export async function boundedCall<T>(method: string, timeoutMs: number, parent: Ctx, call: (ctx: Ctx) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const onAbort = (): void => ac.abort(parent.signal.reason);
  if (parent.signal.aborted) onAbort();
  else parent.signal.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new ProviderTimeoutError(method, timeoutMs);
      ac.abort(e);
      reject(e);
    }, timeoutMs);
  });
  const result = call({ signal: ac.signal });
  // An abandoned call that fails later is nobody's business.
  result.catch(() => {});
  try {
    return await Promise.race([result, timeout]);
  } finally {
    clearTimeout(timer);
    parent.signal.removeEventListener('abort', onAbort);
  }
}

/** Upstream's minRetryDelay and maxRetryDelay. */
export const SERVICE_MIN_RETRY_DELAY_MS = 5_000;
export const SERVICE_MAX_RETRY_DELAY_MS = 300_000;

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function wantsLoadBalancer(s: Readonly<Service>): boolean {
  return s.spec?.type === 'LoadBalancer' && s.spec?.loadBalancerClass === undefined;
}

const hasFinalizer = (s: Readonly<Service>): boolean => (s.metadata?.finalizers ?? []).includes(LB_CLEANUP_FINALIZER);

/** The finalizer is there and the load balancer must go (the Service is being deleted or left LoadBalancer). */
export function needsCleanup(s: Readonly<Service>): boolean {
  if (!hasFinalizer(s)) return false;
  if (s.metadata?.deletionTimestamp) return true;
  return s.spec?.type !== 'LoadBalancer';
}

function portsEqualForLB(a: Readonly<Service>, b: Readonly<Service>): boolean {
  const x = a.spec?.ports ?? [];
  const y = b.spec?.ports ?? [];
  if (x.length !== y.length) return false;
  return x.every((p, i) => {
    const q = y[i]!;
    return (
      (p.name ?? '') === (q.name ?? '') &&
      (p.protocol ?? '') === (q.protocol ?? '') &&
      (p.port ?? 0) === (q.port ?? 0) &&
      (p.nodePort ?? 0) === (q.nodePort ?? 0) &&
      deepEqual(p.targetPort ?? 0, q.targetPort ?? 0) &&
      p.appProtocol === q.appProtocol
    );
  });
}

/** Upstream's needsUpdate: whether a change of the Service matters to its load balancer. */
export function needsUpdate(oldSvc: Readonly<Service>, newSvc: Readonly<Service>): boolean {
  const o = oldSvc.spec ?? {};
  const n = newSvc.spec ?? {};
  if (!wantsLoadBalancer(oldSvc) && !wantsLoadBalancer(newSvc)) return false;
  if (wantsLoadBalancer(oldSvc) !== wantsLoadBalancer(newSvc)) return true;
  if (wantsLoadBalancer(newSvc) && !deepEqual(o.loadBalancerSourceRanges, n.loadBalancerSourceRanges)) return true;
  if (!portsEqualForLB(oldSvc, newSvc) || (o.sessionAffinity ?? '') !== (n.sessionAffinity ?? '')) return true;
  if (!deepEqual(o.sessionAffinityConfig, n.sessionAffinityConfig)) return true;
  if ((o.loadBalancerIP ?? '') !== (n.loadBalancerIP ?? '')) return true;
  const oe = o.externalIPs ?? [];
  const ne = n.externalIPs ?? [];
  if (oe.length !== ne.length || oe.some((ip, i) => ip !== ne[i])) return true;
  if (!deepEqual(oldSvc.metadata?.annotations ?? {}, newSvc.metadata?.annotations ?? {})) return true;
  if (oldSvc.metadata?.uid !== newSvc.metadata?.uid) return true;
  if ((o.externalTrafficPolicy ?? '') !== (n.externalTrafficPolicy ?? '')) return true;
  if ((o.healthCheckNodePort ?? 0) !== (n.healthCheckNodePort ?? 0)) return true;
  return (o.ipFamilies ?? []).length !== (n.ipFamilies ?? []).length;
}

/** Not labelled node.kubernetes.io/exclude-from-external-load-balancers (a value that parses as false counts as absent). */
export function nodeIncluded(n: Readonly<Node>): boolean {
  const v = n.metadata?.labels?.[LABEL_EXCLUDE_FROM_LB];
  if (v === undefined) return true;
  const b = parseGoBool(v);
  return b === undefined ? false : !b;
}

function parseGoBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

/**
 * Upstream's stableNodeSetPredicates: not being deleted, not excluded, not tainted
 * ToBeDeletedByClusterAutoscaler. Readiness is deliberately not one of them (StableLoadBalancerNodeSet):
 * the cloud's health checks take a NotReady node out, the node list does not churn.
 */
export function loadBalancerNode(n: Readonly<Node>): boolean {
  if (n.metadata?.deletionTimestamp) return false;
  if (!nodeIncluded(n)) return false;
  return !(n.spec?.taints ?? []).some((t) => t.key === TAINT_TO_BE_DELETED_BY_CA);
}

/** Upstream's shouldSyncUpdatedNode: only the exclusion label flipping or a new providerID start a node sync. */
export function shouldSyncUpdatedNode(oldNode: Readonly<Node>, newNode: Readonly<Node>): boolean {
  if (nodeIncluded(oldNode) !== nodeIncluded(newNode)) return true;
  return (oldNode.spec?.providerID ?? '') !== (newNode.spec?.providerID ?? '');
}

/** Same names with the same providerIDs (nodesSufficientlyEqual). */
function nodesSufficientlyEqual(a: readonly Readonly<Node>[], b: readonly Readonly<Node>[]): boolean {
  if (a.length !== b.length) return false;
  const m = new Map(a.map((n) => [n.metadata?.name ?? '', n.spec?.providerID ?? '']));
  return b.every((n) => m.has(n.metadata?.name ?? '') && m.get(n.metadata?.name ?? '') === (n.spec?.providerID ?? ''));
}

/** servicehelper.LoadBalancerStatusEqual: the ingress lists compared entry by entry. */
function statusEqual(a: LoadBalancerStatus | undefined, b: LoadBalancerStatus | undefined): boolean {
  return deepEqual(a?.ingress ?? [], b?.ingress ?? []);
}

function nodeNames(nodes: readonly Readonly<Node>[]): string {
  const names = nodes.map((n) => n.metadata?.name ?? '').sort();
  const shown = names.length > 20 ? [...names.slice(0, 20), `<${names.length - 20} more>`] : names;
  return `[${shown.join(' ')}]`;
}

const BUCKETS = Array.from({ length: 15 }, (_, i) => 2 ** i);

/** Upstream's service_controller_* metrics (controllers/service/metrics.go), one set per registry. */
function serviceMetrics(registry: Registry | undefined) {
  const get = <M>(name: string, make: () => M): M => (registry?.getSingleMetric(name) as M | undefined) ?? make();
  const registers = registry ? [registry] : [];
  return {
    syncs: get(
      'service_controller_loadbalancer_sync_total',
      () =>
        new Counter({
          name: 'service_controller_loadbalancer_sync_total',
          help: 'A metric counting the amount of times any load balancer has been configured, as an effect of service/node changes on the cluster',
          registers,
        }),
    ),
    nodeSyncErrors: get(
      'service_controller_nodesync_error_total',
      () =>
        new Counter({
          name: 'service_controller_nodesync_error_total',
          help: 'A metric counting the amount of times any load balancer has been configured and errored, as an effect of node changes on the cluster',
          registers,
        }),
    ),
    nodeSyncLatency: get(
      'service_controller_nodesync_latency_seconds',
      () =>
        new Histogram({
          name: 'service_controller_nodesync_latency_seconds',
          help: 'A metric measuring the latency for nodesync which updates loadbalancer hosts on cluster node updates.',
          buckets: BUCKETS,
          registers,
        }),
    ),
    updateHostLatency: get(
      'service_controller_update_loadbalancer_host_latency_seconds',
      () =>
        new Histogram({
          name: 'service_controller_update_loadbalancer_host_latency_seconds',
          help: 'A metric measuring the latency for updating each load balancer hosts.',
          buckets: BUCKETS,
          registers,
        }),
    ),
  };
}

export interface ServiceControllerOptions {
  readonly provider: CloudProvider;
  /** --cluster-name (default kubernetes). */
  readonly clusterName?: string;
  /** --concurrent-service-syncs (default 1). */
  readonly workers?: number;
  readonly minRetryDelayMs?: number;
  readonly maxRetryDelayMs?: number;
  /** The bound on each provider call (default DEFAULT_PROVIDER_CALL_TIMEOUT_MS). */
  readonly providerCallTimeoutMs?: number;
}

export const SERVICE_LB_CONTROLLER = 'service-lb-controller';

/** The service controller as a ControllerFactory (idles with a warning when the provider has no LoadBalancer). */
export function serviceLBController(opts: ServiceControllerOptions): ControllerFactory {
  return controllerFactory(SERVICE_LB_CONTROLLER, (ctx) => {
    const balancer = opts.provider.loadBalancer();
    if (!balancer) {
      asLogger(ctx.log).info('The cloud provider does not support external load balancers; the service controller does not run');
      return { start: () => Promise.resolve(), needLeaderElection: true };
    }
    return new ServiceController(ctx, balancer, opts);
  });
}

class ServiceController {
  readonly needLeaderElection = true;
  private readonly clusterName: string;
  private readonly services;
  private readonly nodes;
  private readonly serviceQueue: Controller;
  private readonly nodeQueue: Controller;
  private readonly events: EventRecorder;
  private readonly lastSyncedNodes = new Map<string, readonly Readonly<Node>[]>();
  /** Services whose load balancer this process made or saw (upstream's cache, for non-finalizer deletions). */
  private readonly cache = new Map<string, Service>();
  private readonly log;
  private readonly metrics;
  /** The provider's LoadBalancer with every call bounded in time. */
  private readonly balancer: LoadBalancer;

  constructor(
    private readonly ctx: ControllerContext,
    provider: LoadBalancer,
    opts: ServiceControllerOptions,
  ) {
    const ms = opts.providerCallTimeoutMs ?? DEFAULT_PROVIDER_CALL_TIMEOUT_MS;
    this.balancer = {
      getLoadBalancer: (c, cluster, svc) => boundedCall('GetLoadBalancer', ms, c, (b) => provider.getLoadBalancer(b, cluster, svc)),
      getLoadBalancerName: (c, cluster, svc) => provider.getLoadBalancerName(c, cluster, svc),
      ensureLoadBalancer: (c, cluster, svc, nodes) => boundedCall('EnsureLoadBalancer', ms, c, (b) => provider.ensureLoadBalancer(b, cluster, svc, nodes)),
      updateLoadBalancer: (c, cluster, svc, nodes) => boundedCall('UpdateLoadBalancer', ms, c, (b) => provider.updateLoadBalancer(b, cluster, svc, nodes)),
      ensureLoadBalancerDeleted: (c, cluster, svc) =>
        boundedCall('EnsureLoadBalancerDeleted', ms, c, (b) => provider.ensureLoadBalancerDeleted(b, cluster, svc)),
    };
    this.clusterName = opts.clusterName ?? 'kubernetes';
    this.log = asLogger(ctx.log);
    this.metrics = serviceMetrics(ctx.metrics);
    this.services = ctx.manager.informer<Service>(SERVICES);
    this.nodes = ctx.manager.informer<Node>(NODES);
    this.events = new EventRecorder({ client: ctx.client, component: 'service-controller', log: ctx.log });
    const registry = ctx.metrics ? { registry: ctx.metrics } : {};
    this.serviceQueue = new Controller({
      name: 'service',
      workers: opts.workers ?? 1,
      log: ctx.log,
      ...registry,
      rateLimiter: new ItemExponentialFailureRateLimiter(
        opts.minRetryDelayMs ?? SERVICE_MIN_RETRY_DELAY_MS,
        opts.maxRetryDelayMs ?? SERVICE_MAX_RETRY_DELAY_MS,
      ),
      reconciler: async (key, s) => {
        try {
          await this.syncService(key, { signal: s });
        } catch (e) {
          if (e instanceof RetryError || (e instanceof Error && e.cause instanceof RetryError)) {
            const re = e instanceof RetryError ? e : (e.cause as RetryError);
            this.log.info(
              'Error processing service (retrying after the delay the cloud asked for)',
              'service',
              key,
              'retryAfterMs',
              re.retryAfterMs,
              'err',
              e.message,
            );
            return { requeueAfterMs: re.retryAfterMs };
          }
          throw e;
        }
        return;
      },
    });
    this.nodeQueue = new Controller({
      name: 'node',
      workers: 1,
      log: ctx.log,
      ...registry,
      rateLimiter: new ItemExponentialFailureRateLimiter(
        opts.minRetryDelayMs ?? SERVICE_MIN_RETRY_DELAY_MS,
        opts.maxRetryDelayMs ?? SERVICE_MAX_RETRY_DELAY_MS,
      ),
      reconciler: async (_key, s) => {
        for (const key of await this.syncNodes({ signal: s })) this.serviceQueue.enqueue(key);
      },
    });
    this.services.addEventHandler({
      onAdd: (s) => {
        if (wantsLoadBalancer(s) || needsCleanup(s)) this.serviceQueue.enqueue(keyOf(s));
      },
      onUpdate: (o, s) => {
        if (needsUpdate(o, s) || needsCleanup(s)) this.serviceQueue.enqueue(keyOf(s));
      },
      // Deletion arrives as an update with deletionTimestamp set, because of the finalizer.
    });
    this.nodes.addEventHandler({
      onAdd: () => this.nodeQueue.enqueue('nodes'),
      onUpdate: (o, n) => {
        if (shouldSyncUpdatedNode(o, n)) this.nodeQueue.enqueue('nodes');
      },
      onDelete: () => this.nodeQueue.enqueue('nodes'),
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.log.info('Starting service controller');
    // Both queues exist once start() has run synchronously; then the cache is queued once, as the
    // informers' initial adds would be.
    const running = Promise.all([this.serviceQueue.start(signal), this.nodeQueue.start(signal)]);
    for (const s of this.services.store.list()) if (wantsLoadBalancer(s) || needsCleanup(s)) this.serviceQueue.enqueue(keyOf(s));
    try {
      await running;
    } finally {
      await this.events.flush();
      this.log.info('Shutting down service controller');
    }
  }

  private async syncService(key: string, ctx: Ctx): Promise<void> {
    const service = this.services.store.get(key);
    if (!service) {
      // Gone without our finalizer (or after it): clean up what this process still remembers.
      const cached = this.cache.get(key);
      if (!cached) return;
      await this.processLoadBalancerDelete(cached, ctx);
      this.cache.delete(key);
      this.lastSyncedNodes.delete(key);
      return;
    }
    const svc = structuredClone(service);
    const cached = this.cache.get(key);
    if (cached && cached.metadata?.uid !== svc.metadata?.uid) await this.processLoadBalancerDelete(cached, ctx);
    this.cache.set(key, svc);
    let op: 'delete' | 'ensure';
    try {
      op = await this.syncLoadBalancerIfNeeded(svc, ctx);
    } catch (e) {
      this.events.event(svc, 'Service', 'Warning', 'SyncLoadBalancerFailed', `Error syncing load balancer: ${(e as Error).message}`);
      throw e;
    }
    if (op === 'delete') {
      this.cache.delete(key);
      this.lastSyncedNodes.delete(key);
    }
  }

  private async processLoadBalancerDelete(svc: Service, ctx: Ctx): Promise<void> {
    if (!wantsLoadBalancer(svc)) return;
    this.events.event(svc, 'Service', 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
    try {
      await this.balancer.ensureLoadBalancerDeleted(ctx, this.clusterName, svc);
    } catch (e) {
      this.events.event(svc, 'Service', 'Warning', 'DeleteLoadBalancerFailed', `Error deleting load balancer: ${(e as Error).message}`);
      throw e;
    }
    this.events.event(svc, 'Service', 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
  }

  private async syncLoadBalancerIfNeeded(svc: Service, ctx: Ctx): Promise<'delete' | 'ensure'> {
    const previous = svc.status?.loadBalancer ?? {};
    let next: LoadBalancerStatus;
    let op: 'delete' | 'ensure';
    let current: Service;
    if (!wantsLoadBalancer(svc) || needsCleanup(svc)) {
      op = 'delete';
      next = {};
      let exists: boolean;
      try {
        ({ exists } = await this.balancer.getLoadBalancer(ctx, this.clusterName, svc));
      } catch (e) {
        throw new Error(`failed to check if load balancer exists before cleanup: ${(e as Error).message}`, { cause: e });
      }
      if (exists) {
        this.log.info('Deleting existing load balancer', 'service', keyOf(svc));
        this.events.event(svc, 'Service', 'Normal', 'DeletingLoadBalancer', 'Deleting load balancer');
        try {
          await this.balancer.ensureLoadBalancerDeleted(ctx, this.clusterName, svc);
        } catch (e) {
          if (!(e instanceof ImplementedElsewhereError)) throw new Error(`failed to delete load balancer: ${(e as Error).message}`, { cause: e });
          this.log.info('LoadBalancer for service implemented by a different controller, ignoring', 'service', keyOf(svc));
        }
      }
      try {
        current = await this.patchFinalizer(svc, 'remove');
      } catch (e) {
        throw new Error(`failed to remove load balancer cleanup finalizer: ${(e as Error).message}`, { cause: e });
      }
      this.events.event(svc, 'Service', 'Normal', 'DeletedLoadBalancer', 'Deleted load balancer');
    } else {
      op = 'ensure';
      this.log.info('Ensuring load balancer for service', 'service', keyOf(svc));
      this.events.event(svc, 'Service', 'Normal', 'EnsuringLoadBalancer', 'Ensuring load balancer');
      try {
        current = await this.patchFinalizer(svc, 'add');
      } catch (e) {
        throw new Error(`failed to add load balancer cleanup finalizer: ${(e as Error).message}`, { cause: e });
      }
      const nodes = this.nodes.store.list().filter(loadBalancerNode);
      if (nodes.length === 0) this.events.event(svc, 'Service', 'Warning', 'UnAvailableLoadBalancer', 'There are no available nodes for LoadBalancer');
      this.lastSyncedNodes.set(keyOf(svc), nodes);
      let status: LoadBalancerStatus | undefined;
      try {
        status = await this.balancer.ensureLoadBalancer(ctx, this.clusterName, svc, nodes);
      } catch (e) {
        if (e instanceof ImplementedElsewhereError) return op;
        throw new Error(`failed to ensure load balancer: ${(e as Error).message}`, { cause: e });
      }
      // A JavaScript provider may answer nothing, as Go's may answer nil.
      if (!status) throw new Error('service status returned by EnsureLoadBalancer is nil');
      next = status;
      this.events.event(svc, 'Service', 'Normal', 'EnsuredLoadBalancer', 'Ensured load balancer');
    }
    if (!statusEqual(previous, next)) {
      try {
        await this.patchService(current, (s) => ((s.status ??= {}).loadBalancer = structuredClone(next)));
      } catch (e) {
        // Not found: the Service went right after the finalizer was removed.
        if (!(isStatusError(e) && e.code === 404)) throw new Error(`failed to update load balancer status: ${(e as Error).message}`, { cause: e });
      }
    }
    return op;
  }

  private async patchFinalizer(svc: Service, how: 'add' | 'remove'): Promise<Service> {
    if ((how === 'add') === hasFinalizer(svc)) return svc;
    this.log.v(2).info(how === 'add' ? 'Adding finalizer to service' : 'Removing finalizer from service', 'service', keyOf(svc));
    return this.patchService(svc, (s) => {
      const m = (s.metadata ??= {});
      m.finalizers = how === 'add' ? [...(m.finalizers ?? []), LB_CLEANUP_FINALIZER] : (m.finalizers ?? []).filter((f) => f !== LB_CLEANUP_FINALIZER);
    });
  }

  /**
   * servicehelper.PatchService: the two-way strategic merge patch from `svc` to `svc` changed by
   * `change` (spec kept as it was), sent to `services/status`. Only finalizers and the load
   * balancer status change here, so the patch is built for those two directly.
   */
  private async patchService(svc: Service, change: (s: Service) => void): Promise<Service> {
    const updated = structuredClone(svc);
    change(updated);
    const patch: { metadata?: Record<string, unknown>; status?: Record<string, unknown> } = {};
    const oldF = svc.metadata?.finalizers ?? [];
    const newF = updated.metadata?.finalizers ?? [];
    if (!deepEqual(oldF, newF)) {
      const added = newF.filter((f) => !oldF.includes(f));
      const removed = oldF.filter((f) => !newF.includes(f));
      patch.metadata = {
        ...(added.length ? { finalizers: added } : {}),
        ...(removed.length ? { '$deleteFromPrimitiveList/finalizers': removed } : {}),
        '$setElementOrder/finalizers': newF,
      };
    }
    if (!statusEqual(svc.status?.loadBalancer, updated.status?.loadBalancer)) {
      patch.status = { loadBalancer: updated.status?.loadBalancer?.ingress?.length ? updated.status.loadBalancer : { ingress: null } };
    }
    const { namespace, name } = splitKey(keyOf(svc));
    return this.ctx.client.patch<Service>(SERVICES, namespace, name, 'strategic', patch, { subresource: 'status' });
  }

  /** Points every cached load balancer at the current node set; returns the services to retry. */
  private async syncNodes(ctx: Ctx): Promise<string[]> {
    const started = Date.now();
    try {
      return await this.syncAllNodes(ctx);
    } finally {
      this.metrics.nodeSyncLatency.observe((Date.now() - started) / 1000);
    }
  }

  private async syncAllNodes(ctx: Ctx): Promise<string[]> {
    const retry: string[] = [];
    const nodes = this.nodes.store.list().filter(loadBalancerNode);
    for (const [key, svc] of [...this.cache]) {
      if (ctx.signal.aborted) break;
      const current = this.services.store.get(key) ?? svc;
      if (!wantsLoadBalancer(current)) continue;
      const old = (this.lastSyncedNodes.get(key) ?? []).filter(loadBalancerNode);
      this.lastSyncedNodes.set(key, nodes);
      if (nodesSufficientlyEqual(old, nodes)) continue;
      try {
        await this.updateLoadBalancerHosts(current, nodes, ctx);
      } catch (e) {
        this.log.error(e, 'Failed to update load balancer hosts', 'service', key);
        this.metrics.nodeSyncErrors.inc();
        retry.push(key);
      }
    }
    return retry;
  }

  private async updateLoadBalancerHosts(svc: Service, hosts: readonly Readonly<Node>[], ctx: Ctx): Promise<void> {
    this.log.v(2).info('Updating backends for load balancer', 'service', keyOf(svc), 'nodes', hosts.length);
    this.metrics.syncs.inc();
    const started = Date.now();
    let err: unknown;
    try {
      await this.balancer.updateLoadBalancer(ctx, this.clusterName, svc, hosts);
    } catch (e) {
      err = e;
    } finally {
      this.metrics.updateHostLatency.observe((Date.now() - started) / 1000);
    }
    if (err === undefined) {
      if (hosts.length === 0) this.events.event(svc, 'Service', 'Warning', 'UnAvailableLoadBalancer', 'There are no available nodes for LoadBalancer');
      else this.events.event(svc, 'Service', 'Normal', 'UpdatedLoadBalancer', 'Updated load balancer with new hosts');
      return;
    }
    if (err instanceof ImplementedElsewhereError) return;
    // Only an error if the load balancer still exists.
    try {
      const { exists } = await this.balancer.getLoadBalancer(ctx, this.clusterName, svc);
      if (!exists) return;
    } catch (e) {
      this.log.error(e, 'Failed to check if load balancer exists', 'service', keyOf(svc));
    }
    this.events.event(
      svc,
      'Service',
      'Warning',
      'UpdateLoadBalancerFailed',
      `Error updating load balancer with new hosts ${nodeNames(hosts)} [node names limited, total number of nodes: ${hosts.length}], error: ${(err as Error).message}`,
    );
    throw err instanceof Error ? err : new Error(String(err));
  }
}
