// The resource quota controller (kube-controller-manager's resourcequota controller,
// pkg/controller/resourcequota): writes each quota's status — `hard` copied from spec.hard and
// `used` recomputed by counting — when a quota is created or its spec.hard changes, when an object
// it counts is deleted (replenishment: used goes down), and for every quota once per resync period
// (upstream's --resource-quota-sync-period, 5 minutes).
//
// As upstream, status-only changes of a quota (the admission plugin's charges, this controller's
// own writes) do not trigger a recount: a recount lists the namespace's objects, and one racing a
// create that was charged but is not stored yet would undo the charge. The status is written with
// the resourceVersion it was computed from, so a charge made meanwhile makes the write conflict
// and the quota is counted again.
import type { Registry } from 'prom-client';
import type { KubeObject } from '../../apimachinery/types.js';
import { StatusError } from '../../apimachinery/errors.js';
import { Quantity } from '../../apimachinery/quantity.js';
import { countedResource } from '../../apimachinery/quota.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { asLogger } from '../../golang/klog.js';
import { realClock, sleep, type Clock } from '../runtime/clock.js';
import { Controller } from '../runtime/controller.js';
import { Informer, keyOf, splitKey } from '../runtime/informer.js';
import type { Runnable } from '../runtime/manager.js';
import { discoverResources } from '../discovery.js';
import { controllerFactory, type ControllerFactory } from '../types.js';

const RESOURCEQUOTAS: GVR = { group: '', version: 'v1', resource: 'resourcequotas' };

interface QuotaShape {
  spec?: { hard?: Record<string, unknown>; scopes?: string[]; scopeSelector?: { matchExpressions?: unknown[] } };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}
type Quota = KubeObject & QuotaShape;

export interface ResourceQuotaControllerOptions {
  /** Every quota is recounted this often (upstream's default 5 minutes). */
  readonly resyncPeriodMs?: number;
  /** Concurrent quota syncs (--concurrent-resource-quota-syncs, default 5). */
  readonly workers?: number;
  /** How soon a quota counting a resource not served (yet) is looked at again (upstream's discovery period, 30 s). */
  readonly discoveryPeriodMs?: number;
  readonly clock?: Clock;
}

const canonical = (v: unknown): string => Quantity.parse(v)?.toString() ?? String(v);

/** The same names with the same quantities. */
function sameList(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => b && k in b && canonical(a![k]) === canonical(b[k]));
}

/** Whether the quota's status does not reflect its spec yet (upstream's addQuota check). */
function needsSync(q: Quota): boolean {
  const hard = q.spec?.hard ?? {};
  if (!sameList(hard, q.status?.hard)) return true;
  const used = q.status?.used ?? {};
  return Object.keys(hard).some((k) => !(k in used));
}

const isScoped = (q: Quota): boolean => (q.spec?.scopes?.length ?? 0) > 0 || (q.spec?.scopeSelector?.matchExpressions?.length ?? 0) > 0;

export class ResourceQuotaController implements Runnable {
  readonly needLeaderElection = true;
  private readonly controller: Controller;
  private readonly quotas: Informer<Quota>;
  private readonly monitors = new Map<string, Informer<KubeObject>>();
  private readonly clock: Clock;
  private readonly log;
  private served: { at: number; byGroupResource: Map<string, GVR> } | undefined;
  private signal: AbortSignal | undefined;

  constructor(
    private readonly client: KubeClient,
    manager: { informer<T extends KubeObject>(gvr: GVR): Informer<T> },
    private readonly opts: ResourceQuotaControllerOptions & { log: (msg: string) => void; registry?: Registry },
  ) {
    this.clock = opts.clock ?? realClock;
    this.log = asLogger(opts.log);
    this.quotas = manager.informer<Quota>(RESOURCEQUOTAS);
    this.controller = new Controller({
      name: 'resourcequota',
      workers: opts.workers ?? 5,
      log: opts.log,
      clock: this.clock,
      ...(opts.registry ? { registry: opts.registry } : {}),
      reconciler: (key, signal) => this.sync(key, signal),
    });
    this.quotas.addEventHandler({
      onAdd: (q) => this.controller.enqueue(keyOf(q)),
      // Spec changes (and statuses behind their spec) only: see the top of the file.
      onUpdate: (old, cur) => {
        if (!sameList(old.spec?.hard, cur.spec?.hard) || needsSync(cur)) this.controller.enqueue(keyOf(cur));
      },
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.signal = signal;
    const running = this.controller.start(signal);
    this.enqueueAll();
    const resync = (async () => {
      const period = this.opts.resyncPeriodMs ?? 5 * 60_000;
      while (await sleep(this.clock, period, signal)) this.enqueueAll();
    })();
    try {
      await Promise.all([running, resync]);
    } finally {
      this.monitors.clear();
    }
  }

  private enqueueAll(): void {
    for (const q of this.quotas.store.list()) this.controller.enqueue(keyOf(q));
  }

  private enqueueNamespace(ns: string | undefined): void {
    if (!ns) return;
    for (const q of this.quotas.store.list()) if (q.metadata?.namespace === ns) this.controller.enqueue(keyOf(q));
  }

  /** The served version of group/resource (discovery's preferred one), looked up again at most once a second on a miss. */
  private async resolve(group: string, resource: string, signal: AbortSignal): Promise<GVR | undefined> {
    const id = `${group}/${resource}`;
    const hit = this.served?.byGroupResource.get(id);
    if (hit) return hit;
    if (this.served && this.clock.now() - this.served.at < 1000) return undefined;
    const { resources } = await discoverResources(this.client, ['list', 'watch'], { signal });
    const byGroupResource = new Map<string, GVR>();
    for (const r of resources) if (r.namespaced) byGroupResource.set(`${r.group}/${r.resource}`, { group: r.group, version: r.version, resource: r.resource });
    this.served = { at: this.clock.now(), byGroupResource };
    return byGroupResource.get(id);
  }

  /** Watches a counted resource for deletions (the replenishment controller's monitors). */
  private monitor(gvr: GVR): void {
    const id = `${gvr.group}/${gvr.version}/${gvr.resource}`;
    if (this.monitors.has(id) || !this.signal || this.signal.aborted) return;
    const informer = new Informer<KubeObject>({ client: this.client, gvr, clock: this.clock, log: this.opts.log, metadataOnly: true });
    informer.addEventHandler({ onDelete: (o) => this.enqueueNamespace(o.metadata?.namespace) });
    this.monitors.set(id, informer);
    informer.run(this.signal).catch((e: unknown) => {
      this.monitors.delete(id);
      if (!this.signal?.aborted) this.log.error(e instanceof Error ? e.message : String(e), 'Quota monitor failed', 'resource', id);
    });
  }

  /** syncResourceQuota: status.hard from spec.hard, status.used counted. */
  private async sync(key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number; requeue?: boolean } | void> {
    const { namespace, name } = splitKey(key);
    let q: Quota;
    try {
      q = await this.client.get<Quota>(RESOURCEQUOTAS, namespace, name, { signal });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
    const hard = q.spec?.hard ?? {};
    // Usage already recorded stays for what cannot be counted now (upstream starts from it too).
    const used: Record<string, string> = {};
    // Objects per group/resource, listed once per sync: `count/configmaps` and `configmaps` count the same.
    const counts = new Map<string, number>();
    let unresolved = false;
    for (const n of Object.keys(hard)) {
      const prev = q.status?.used?.[n];
      const counted = countedResource(n);
      if (!counted) {
        // cpu, memory, storage, ...: kplane serves no pods or volumes to take them.
        used[n] = prev ?? '0';
        continue;
      }
      if (isScoped(q)) {
        // No object kplane serves matches a quota scope (the generic evaluator matches none).
        used[n] = '0';
        continue;
      }
      const gvr = await this.resolve(counted.group, counted.resource, signal);
      if (!gvr) {
        // A legacy name (pods, services, ...) counts a core resource this control plane may not serve.
        if (!n.startsWith('count/')) used[n] = '0';
        else {
          unresolved = true;
          if (prev !== undefined) used[n] = prev;
        }
        continue;
      }
      this.monitor(gvr);
      const id = `${gvr.group}/${gvr.resource}`;
      let count = counts.get(id);
      if (count === undefined) {
        // Metadata only: counting needs no ConfigMap or Secret data.
        count = (await this.client.list(gvr, namespace, { signal, metadataOnly: true })).items.length;
        counts.set(id, count);
      }
      used[n] = String(count);
    }
    const status = { hard: { ...hard } as Record<string, string>, used };
    const again = unresolved ? { requeueAfterMs: this.opts.discoveryPeriodMs ?? 30_000 } : undefined;
    if (sameList(status.hard, q.status?.hard) && sameList(status.used, q.status?.used)) return again;
    try {
      // The resourceVersion read above: a charge made since then conflicts, and we count again.
      await this.client.updateStatus<Quota>(RESOURCEQUOTAS, namespace, { ...q, status }, { signal });
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) return { requeue: true };
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
    return again;
  }
}

/** The resource quota controller, as kube-controller-manager's `resourcequota`. */
export function resourceQuotaController(opts: ResourceQuotaControllerOptions = {}): ControllerFactory {
  return controllerFactory(
    { name: 'resourcequota', serviceAccountName: 'resourcequota-controller' },
    (ctx) => new ResourceQuotaController(ctx.client, ctx.manager, { ...opts, log: ctx.log, ...(ctx.metrics ? { registry: ctx.metrics } : {}) }),
  );
}
