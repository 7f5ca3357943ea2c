// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection with a
// LeaseLock: the record lives in the Lease's spec, writes are optimistic (the Lease's
// resourceVersion), and expiry is judged by when *we* last saw the record change, on our own
// clock, so that clock skew between candidates does not matter.
import { isStatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { formatMicroTime as formatWireMicroTime } from '../../apimachinery/protobuf/time.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { realClock, sleep, type Clock } from './clock.js';
import { asLogger, type Logger } from '../../golang/klog.js';

export const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

/** rl.LeaderElectionRecord. Times are MicroTime strings. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string;
  renewTime: string;
  leaderTransitions: number;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

/** metav1.MicroTime's wire form: `2006-01-02T15:04:05.000000Z` (always six fractional digits, UTC). */
export function formatMicroTime(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return formatWireMicroTime(seconds, (ms - seconds * 1000) * 1e6);
}

function recordFromSpec(s: LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: s?.holderIdentity ?? '',
    leaseDurationSeconds: s?.leaseDurationSeconds ?? 0,
    acquireTime: s?.acquireTime ?? '',
    renewTime: s?.renewTime ?? '',
    leaderTransitions: s?.leaseTransitions ?? 0,
  };
}

function specFromRecord(r: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaderTransitions,
  };
}

/** client-go's raw-record comparison: same fields, fixed order. */
const rawOf = (r: LeaderElectionRecord): string => JSON.stringify([r.holderIdentity, r.leaseDurationSeconds, r.acquireTime, r.renewTime, r.leaderTransitions]);

export interface LeaderElectionConfig {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly name: string;
  /** Unique per candidate (e.g. hostname + random suffix). */
  readonly identity: string;
  /** How long non-leaders wait after last seeing the record change before taking over. Default 15 s. */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps retrying a renewal before it gives up leading. Default 10 s. */
  readonly renewDeadlineMs?: number;
  /** Time between attempts. Default 2 s. */
  readonly retryPeriodMs?: number;
  /** On a graceful stop, empty the Lease so that another candidate takes over at once. Default true. */
  readonly releaseOnCancel?: boolean;
  readonly clock?: Clock;
  readonly log?: (msg: string) => void;
  /** Runs while we lead; `signal` aborts when leadership ends. Stop work promptly when it does. */
  readonly onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once when we stop leading (lost, or stopped after having led). */
  readonly onStoppedLeading?: () => void;
  /** The observed holder changed (including to ourselves). */
  readonly onNewLeader?: (identity: string) => void;
}

const JITTER_FACTOR = 1.2;

export class LeaderElector {
  private readonly client: KubeClient;
  private readonly clock: Clock;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly log: Logger;
  private observed: LeaderElectionRecord | undefined;
  private observedRaw = '';
  private observedTime = 0;
  /** The last Lease read or written: its resourceVersion guards our next write. */
  private lease: Lease | undefined;
  private reportedLeader = '';

  constructor(private readonly cfg: LeaderElectionConfig) {
    this.client = cfg.client;
    this.clock = cfg.clock ?? realClock;
    this.leaseDurationMs = cfg.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = cfg.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = cfg.retryPeriodMs ?? 2_000;
    this.log = asLogger(cfg.log);
    // The same checks as client-go's NewLeaderElector: without them two leaders can overlap.
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= JITTER_FACTOR * this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.retryPeriodMs < 1) throw new Error('retryPeriod must be positive');
    if (!cfg.identity) throw new Error('leader election requires an identity');
  }

  isLeader(): boolean {
    return this.observed?.holderIdentity === this.cfg.identity;
  }

  /** The last observed holder ('' if none). */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * Campaigns until elected, leads until leadership is lost or `signal` aborts, then returns.
   * On a graceful stop the Lease is released only after onStartedLeading's work has returned, so
   * that a successor never overlaps with us.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.acquire(signal))) return;
    const leading = new AbortController();
    const onAbort = (): void => leading.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let work: Promise<void>;
    try {
      work = Promise.resolve(this.cfg.onStartedLeading(leading.signal)).catch((e: unknown) => this.log.error(e, 'onStartedLeading failed'));
    } catch (e) {
      this.log.error(e, 'onStartedLeading failed');
      work = Promise.resolve();
    }
    try {
      await this.renew(leading.signal);
    } finally {
      leading.abort();
      signal.removeEventListener('abort', onAbort);
      await work;
      if (signal.aborted && (this.cfg.releaseOnCancel ?? true)) await this.release();
      this.cfg.onStoppedLeading?.();
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('Attempting to acquire leader lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok) {
        this.log.info('Successfully acquired lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
        return true;
      }
      await sleep(this.clock, this.retryPeriodMs * (1 + Math.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  private async renew(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // Keep trying every retryPeriod, but for no longer than renewDeadline: past it, another
      // candidate may already consider the lease expired, and we must stop acting as leader.
      const deadline = new AbortController();
      const timer = this.clock.setTimer(() => deadline.abort(), this.renewDeadlineMs);
      const onAbort = (): void => deadline.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      let renewed = false;
      try {
        while (!deadline.signal.aborted) {
          if (await this.tryAcquireOrRenew(deadline.signal)) {
            renewed = true;
            break;
          }
          await sleep(this.clock, this.retryPeriodMs, deadline.signal);
        }
      } finally {
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
      }
      this.maybeReportTransition();
      if (signal.aborted) return;
      if (!renewed) {
        this.log.info('Failed to renew lease: deadline passed', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
        return;
      }
      await sleep(this.clock, this.retryPeriodMs, signal);
    }
  }

  private leaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  private setObserved(r: LeaderElectionRecord): void {
    this.observed = r;
    this.observedRaw = rawOf(r);
    this.observedTime = this.clock.now();
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.cfg.identity,
      leaseDurationSeconds: Math.max(1, Math.round(this.leaseDurationMs / 1000)),
      acquireTime: formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaderTransitions: 0,
    };
    // 1. The leader with a valid lease writes straight over the Lease it last wrote.
    if (this.isLeader() && this.leaseValid(now) && this.lease) {
      desired.acquireTime = this.observed!.acquireTime;
      desired.leaderTransitions = this.observed!.leaderTransitions;
      if (await this.updateLease(desired, signal)) return true;
      this.log.info('Failed to update lease optimistically, falling back to slow path');
    }
    // 2. Read (or create) the Lease.
    let current: Lease;
    try {
      current = await this.client.get<Lease>(LEASES, this.cfg.namespace, this.cfg.name, { signal });
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) {
        this.log.error(e, 'Error retrieving lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
        return false;
      }
      try {
        this.lease = await this.client.create<Lease>(
          LEASES,
          this.cfg.namespace,
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.cfg.name, namespace: this.cfg.namespace },
            spec: specFromRecord(desired),
          },
          { signal },
        );
      } catch (err) {
        this.log.error(err, 'Error initially creating lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
        return false;
      }
      this.setObserved(desired);
      return true;
    }
    this.lease = current;
    // 3. Note when the record last changed, by our clock: that is what expiry is measured from.
    const old = recordFromSpec(current.spec);
    if (rawOf(old) !== this.observedRaw) this.setObserved(old);
    if (old.holderIdentity !== '' && this.leaseValid(now) && !this.isLeader()) return false;
    // 4. Take it over (or renew it).
    if (this.isLeader()) {
      desired.acquireTime = old.acquireTime;
      desired.leaderTransitions = old.leaderTransitions;
    } else {
      desired.leaderTransitions = old.leaderTransitions + 1;
    }
    return this.updateLease(desired, signal);
  }

  /** PUT guarded by the resourceVersion of the Lease last seen: a concurrent writer makes it 409. */
  private async updateLease(r: LeaderElectionRecord, signal?: AbortSignal): Promise<boolean> {
    if (!this.lease) return false;
    try {
      this.lease = await this.client.update<Lease>(LEASES, this.cfg.namespace, { ...this.lease, spec: specFromRecord(r) }, signal ? { signal } : {});
    } catch (e) {
      this.log.error(e, 'Failed to update lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
      return false;
    }
    this.setObserved(r);
    return true;
  }

  private async release(): Promise<void> {
    if (!this.isLeader()) return;
    const now = formatMicroTime(this.clock.now());
    const released: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaderTransitions: this.observed!.leaderTransitions,
    };
    const bounded = new AbortController();
    const timer = this.clock.setTimer(() => bounded.abort(), this.renewDeadlineMs);
    try {
      let ok = await this.updateLease(released, bounded.signal);
      if (!ok && !bounded.signal.aborted) {
        // A renewal aborted by the stop may still have been applied by the server, leaving our
        // cached resourceVersion stale (409). Re-read: if we still hold it, release that version.
        try {
          const fresh = await this.client.get<Lease>(LEASES, this.cfg.namespace, this.cfg.name, { signal: bounded.signal });
          if (fresh.spec?.holderIdentity === this.cfg.identity) {
            this.lease = fresh;
            ok = await this.updateLease(released, bounded.signal);
          }
        } catch (e) {
          this.log.error(e, 'Failed to re-read lease for release', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
        }
      }
      if (ok) this.log.info('Released lease', 'lease', `${this.cfg.namespace}/${this.cfg.name}`);
    } finally {
      timer.cancel();
    }
  }

  private maybeReportTransition(): void {
    const holder = this.observed?.holderIdentity ?? '';
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    if (this.cfg.onNewLeader) {
      try {
        this.cfg.onNewLeader(holder);
      } catch (e) {
        this.log.error(e, 'onNewLeader failed');
      }
    }
  }
}
