// Upstream's ipallocator and portallocator repair controllers (pkg/registry/core/service/
// {ipallocator,portallocator}/controller/repair.go): at start and then every --repair interval
// (upstream: 3 minutes) the stored bitmaps are checked against the Services that exist. An item a
// Service holds but the bitmap lacks is taken again (event `ClusterIPNotAllocated` /
// `PortNotAllocated`); an item held twice or outside the range is reported
// (`...AlreadyAllocated`, `...OutOfRange`: "please recreate service"); an item the bitmap holds
// that no Service has is a leak: flagged, kept for `NUM_REPAIRS_BEFORE_LEAK_CLEANUP` rounds (an
// allocation whose Service is still being written looks the same), then freed. The round works
// on a snapshot read before the Services are listed and is written back only if the bitmap did not
// change meanwhile (a compare-and-swap; a lost race is tried again, then left for the next round),
// so an allocation made during the round is never lost.
import type { Counter, Registry } from 'prom-client';
import { Counter as PromCounter } from 'prom-client';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { KubeClient } from '../../../client/types.js';
import type { Storage } from '../../../storage/storage.js';
import type { GenericStore } from '../../store.js';
import type { ServiceAllocators } from './alloc.js';
import { bitmapClear, bitmapHas, bitmapSet, type PersistedRange, type RangeSnapshot, SnapshotConflictError } from './allocator.js';
import { needsClusterIP, needsHealthCheck, serviceNodePorts, type Service } from './types.js';

/** How many rounds an item must look leaked before it is freed (upstream's numRepairsBeforeLeakCleanup). */
export const NUM_REPAIRS_BEFORE_LEAK_CLEANUP = 3;
/** Upstream's repair interval (kube-apiserver's RepairServicesInterval). */
export const DEFAULT_REPAIR_INTERVAL_MS = 3 * 60_000;
/** retry.DefaultBackoff: 5 tries 10 ms apart. */
const CONFLICT_RETRIES = 5;
const CONFLICT_DELAY_MS = 10;

/** What one kind of range says, in upstream's words. */
interface RangeWords {
  readonly component: string;
  notAllocated(x: string | number): [reason: string, message: string];
  duplicate(x: string | number): [reason: string, message: string];
  outOfRange(x: string | number, range: string): [reason: string, message: string];
  logItem(x: string | number): string;
  rangeName: string;
}

const IP_WORDS: RangeWords = {
  component: 'ipallocator-repair-controller',
  notAllocated: (ip) => ['ClusterIPNotAllocated', `Cluster IP [IPv4]:${ip} is not allocated; repairing`],
  duplicate: (ip) => ['ClusterIPAlreadyAllocated', `Cluster IP [IPv4]:${ip} was assigned to multiple services; please recreate service`],
  outOfRange: (ip, r) => ['ClusterIPOutOfRange', `Cluster IP [IPv4]:${ip} is not within the service CIDR ${r}; please recreate service`],
  logItem: (ip) => `the cluster IP [IPv4]:${ip}`,
  rangeName: 'service CIDR',
};

const PORT_WORDS: RangeWords = {
  component: 'portallocator-repair-controller',
  notAllocated: (p) => ['PortNotAllocated', `Port ${p} is not allocated; repairing`],
  duplicate: (p) => ['PortAlreadyAllocated', `Port ${p} was assigned to multiple services; please recreate service`],
  outOfRange: (p, r) => ['PortOutOfRange', `Port ${p} is not within the port range ${r}; please recreate service`],
  logItem: (p) => `the node port ${p}`,
  rangeName: 'port range',
};

export interface ServiceAllocationRepairOptions {
  readonly alloc: ServiceAllocators;
  readonly storage: Storage;
  /** The Services' store (listed straight from it, as upstream lists through its own client). */
  readonly store: GenericStore;
  readonly log: (msg: string) => void;
  /** Where the Warning events go (the control plane's loopback client); none: log only. */
  readonly client?: KubeClient;
  /** The control plane's metrics: apiserver_clusterip_repair_* and apiserver_nodeport_repair_*. */
  readonly metrics?: Registry;
}

interface RepairMetrics {
  readonly errors: Counter<'type'>;
  readonly reconcileErrors: Counter;
}

function repairMetrics(registry: Registry | undefined, prefix: string, what: string, errorsName: string): RepairMetrics {
  const name = `apiserver_${prefix}_repair_${errorsName}_errors_total`;
  const reconcile = `apiserver_${prefix}_repair_reconcile_errors_total`;
  const existing = registry?.getSingleMetric(name) as Counter<'type'> | undefined;
  if (existing) return { errors: existing, reconcileErrors: registry?.getSingleMetric(reconcile) as Counter };
  const registers = registry ? [registry] : [];
  return {
    errors: new PromCounter({
      name,
      help: `Number of errors detected on ${what} by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown, invalid`,
      labelNames: ['type'],
      registers,
    }),
    reconcileErrors: new PromCounter({ name: reconcile, help: `Number of reconciliation failures on the ${prefix} repair reconcile loop`, registers }),
  };
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class ServiceAllocationRepair {
  /** Per range: how many more rounds a leaked item is kept (upstream's `leaks`). */
  private readonly leaks = { ips: new Map<string | number, number>(), ports: new Map<string | number, number>() };
  private readonly metrics: { ips: RepairMetrics; ports: RepairMetrics };
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private events: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ServiceAllocationRepairOptions) {
    this.metrics = {
      ips: repairMetrics(opts.metrics, 'clusterip', 'clusterips', 'ip'),
      ports: repairMetrics(opts.metrics, 'nodeport', 'ports', 'port'),
    };
  }

  /**
   * One round over both ranges (RunOnce), each retried on a conflict. `freeLeaksAtOnce` (the round
   * at start, before any create can be in flight) frees leaked items without the grace rounds.
   */
  async runOnce(opts: { freeLeaksAtOnce?: boolean } = {}): Promise<void> {
    const ranges = this.opts.alloc.ranges(this.opts.storage);
    for (const [which, range, words] of [
      ['ips', ranges.ips, IP_WORDS],
      ['ports', ranges.ports, PORT_WORDS],
    ] as const) {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.repairRange(which, range, words, opts.freeLeaksAtOnce ?? false);
          break;
        } catch (e) {
          if (e instanceof SnapshotConflictError && attempt < CONFLICT_RETRIES) {
            await pause(CONFLICT_DELAY_MS);
            continue;
          }
          this.metrics[which].reconcileErrors.inc();
          const what = which === 'ips' ? 'service IP allocations' : 'port allocations';
          this.opts.log(`repair: unable to persist the updated ${what}: ${e instanceof Error ? e.message : String(e)}`);
          break;
        }
      }
    }
    await this.events;
  }

  /** Runs a round every `intervalMs` until `stop()` (wait.Until: the next round starts after the last ends). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.stopped) return;
    const tick = (): void => {
      this.timer = setTimeout(() => {
        this.running = this.runOnce()
          .catch((e: unknown) => this.opts.log(`repair: ${e instanceof Error ? e.message : String(e)}`))
          .finally(() => {
            this.running = undefined;
            if (!this.stopped) tick();
          });
      }, intervalMs);
      this.timer.unref?.();
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.events;
  }

  private async repairRange(which: 'ips' | 'ports', range: PersistedRange, words: RangeWords, freeLeaksAtOnce: boolean): Promise<void> {
    const { log } = this.opts;
    const metrics = this.metrics[which];
    const leaks = this.leaks[which];
    const snap: RangeSnapshot = await range.snapshot();
    if (snap.range !== undefined && snap.range !== range.range.text)
      log(
        `repair: the stored ${which === 'ips' ? 'service cluster IP range' : 'service node port range'} ${snap.range} differs from the configured ${range.range.text}; using ${range.range.text}`,
      );
    // Listed after the snapshot: an item allocated in between is in neither, or only in the list.
    const list = await this.opts.store.list(undefined);
    const stored = snap.bits.slice();
    const rebuilt = new Uint8Array(stored.length);
    for (const svc of list.items as Service[]) {
      const who = `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`;
      for (const item of which === 'ips' ? clusterIPsOf(svc) : nodePortsOf(svc)) {
        const i = range.range.indexOf(item);
        if (i === undefined) {
          metrics.errors.inc({ type: 'outOfRange' });
          this.event(svc, words.component, ...words.outOfRange(item, range.range.text));
          log(`repair: ${words.logItem(item)} for service ${who} is not within the ${words.rangeName} ${range.range.text}; please recreate`);
        } else if (bitmapHas(rebuilt, i)) {
          metrics.errors.inc({ type: 'duplicate' });
          this.event(svc, words.component, ...words.duplicate(item));
          log(`repair: ${words.logItem(item)} for service ${who} was assigned to multiple services; please recreate`);
        } else {
          bitmapSet(rebuilt, i);
          if (bitmapHas(stored, i)) {
            // Seen: what is left in `stored` afterwards is what no Service holds.
            bitmapClear(stored, i);
          } else {
            metrics.errors.inc({ type: 'repair' });
            this.event(svc, words.component, ...words.notAllocated(item));
            log(`repair: ${words.logItem(item)} for service ${who} is not allocated; repairing`);
          }
          leaks.delete(item);
        }
      }
    }
    for (let i = 0; i < range.range.size; i++) {
      if (!bitmapHas(stored, i)) continue;
      const item = range.range.itemAt(i);
      let count = leaks.get(item);
      if (freeLeaksAtOnce) count = 0;
      else if (count === undefined) {
        log(`repair: ${words.logItem(item)} may have leaked: flagging for later clean up`);
        count = NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1;
      }
      if (count > 0) {
        // Still counted as in use until the count runs out.
        leaks.set(item, count - 1);
        bitmapSet(rebuilt, i);
      } else {
        leaks.delete(item);
        metrics.errors.inc({ type: 'leak' });
        log(`repair: ${words.logItem(item)} appears to have leaked: cleaning up`);
      }
    }
    const unchanged = snap.modRevision !== undefined && snap.range === range.range.text && rebuilt.every((b, k) => b === snap.bits[k]);
    if (!unchanged) await range.replaceSnapshot(snap, rebuilt);
  }

  /** A core/v1 Warning Event about the Service, from `component` (record.EventRecorder's shape); failures are logged. */
  private event(svc: Service, component: string, reason: string, message: string): void {
    const client = this.opts.client;
    if (!client) return;
    const m = svc.metadata ?? {};
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${m.name ?? 'service'}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`, namespace: m.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Service', namespace: m.namespace, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion },
      reason,
      message,
      type: 'Warning',
      source: { component },
      reportingComponent: component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    } as unknown as KubeObject;
    this.events = this.events
      .then(() => client.create({ group: '', version: 'v1', resource: 'events' }, m.namespace, body))
      .then(
        () => undefined,
        (e: unknown) =>
          this.opts.log(`repair: could not record event ${reason} for service ${m.namespace}/${m.name}: ${e instanceof Error ? e.message : String(e)}`),
      );
  }
}

function clusterIPsOf(svc: Service): string[] {
  if (!needsClusterIP(svc) || svc.spec?.clusterIPs?.[0] === 'None') return [];
  return svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : []);
}

/** collectServiceNodePorts: the node ports and the health check port, each once. */
function nodePortsOf(svc: Service): number[] {
  const held = [...serviceNodePorts(svc), ...(needsHealthCheck(svc) && svc.spec?.healthCheckNodePort ? [svc.spec.healthCheckNodePort] : [])];
  return [...new Set(held)];
}
