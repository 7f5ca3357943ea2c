// kube-apiserver's max-in-flight filter (apiserver pkg/server/filters/maxinflight.go), what upstream
// runs when API Priority and Fairness is off: two pools of slots, one for read-only requests (verbs
// get and list; a watch is long-running and never takes a slot) and one for every other verb
// (--max-requests-inflight 400 and --max-mutating-requests-inflight 200 by default; 0 = no limit for
// that pool). A request that finds its pool full is answered 429 `Too many requests, please try
// again later.` with `Retry-After: 1`, unless its user is in system:masters: upstream serves those
// anyway ("a super-admin or a loopback connection"), without a slot. The filter runs after
// authentication, so credentials are judged (401) before load is.
//
// apiserver_current_inflight_requests{request_kind="readOnly"|"mutating"} is upstream's watermark:
// the most slots in use at once during the last second, published every second.
import { tooManyRequests } from '../../apimachinery/errors.js';
import type { ApiMetrics, RequestKind } from '../metrics.js';
import { header, type Filter } from '../request-scope.js';
import { PlainTextError } from '../handlers/responsewriters.js';

/** Upstream's defaults (genericapiserver's NewConfig). */
export const DEFAULT_MAX_REQUESTS_INFLIGHT = 400;
export const DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200;

const NON_MUTATING_VERBS = new Set(['get', 'list', 'watch']);
const SYSTEM_PRIVILEGED_GROUP = 'system:masters';
const WATERMARK_PERIOD_MS = 1000;

interface Pool {
  readonly kind: RequestKind;
  readonly limit: number;
  inUse: number;
  watermark: number;
}

/** What `admit` decided: run the request (and call `release` when it is done), or answer 429. */
export type InFlightAdmission = { readonly release: () => void } | 'too-many';

const NOTHING_TO_RELEASE = { release: (): void => undefined };

export class MaxInFlight {
  private readonly readOnly: Pool;
  private readonly mutating: Pool;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readOnlyLimit: number,
    mutatingLimit: number,
    private readonly metrics?: ApiMetrics,
  ) {
    for (const [name, v] of [
      ['maxRequestsInFlight', readOnlyLimit],
      ['maxMutatingRequestsInFlight', mutatingLimit],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 0) throw new TypeError(`${name} must be a whole number, 0 (no limit) or more; got ${v}`);
    }
    this.readOnly = { kind: 'readOnly', limit: readOnlyLimit, inUse: 0, watermark: 0 };
    this.mutating = { kind: 'mutating', limit: mutatingLimit, inUse: 0, watermark: 0 };
    if (metrics && (readOnlyLimit > 0 || mutatingLimit > 0)) {
      this.timer = setInterval(() => this.publishWatermarks(), WATERMARK_PERIOD_MS);
      this.timer.unref();
    }
  }

  /** Whether a request of `verb` counts against the mutating pool (every verb but get, list and watch). */
  static isMutating(verb: string): boolean {
    return !NON_MUTATING_VERBS.has(verb);
  }

  /**
   * A slot for a request that is not long-running (the caller skips watches), or 'too-many' when
   * its pool is full and `groups` does not hold system:masters.
   */
  admit(verb: string, groups: readonly string[]): InFlightAdmission {
    const pool = MaxInFlight.isMutating(verb) ? this.mutating : this.readOnly;
    if (pool.limit === 0) return NOTHING_TO_RELEASE;
    if (pool.inUse >= pool.limit) return groups.includes(SYSTEM_PRIVILEGED_GROUP) ? NOTHING_TO_RELEASE : 'too-many';
    pool.inUse++;
    if (pool.inUse > pool.watermark) pool.watermark = pool.inUse;
    return new Slot(pool);
  }

  /** Both pools without a limit: nothing to filter. */
  get unlimited(): boolean {
    return this.readOnly.limit === 0 && this.mutating.limit === 0;
  }

  /** Slots in use now (for tests and diagnostics). */
  inUse(kind: RequestKind): number {
    return (kind === 'readOnly' ? this.readOnly : this.mutating).inUse;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  // startWatermarkMaintenance: the highest use of the period, then a new period. Upstream's
  // watermark starts each period at 0 and grows as slots are taken and given back; a period in
  // which no request started or ended publishes 0 even while slots are held, as upstream's does.
  private publishWatermarks(): void {
    for (const pool of [this.readOnly, this.mutating]) {
      this.metrics?.setInflightRequests(pool.kind, pool.watermark);
      pool.watermark = 0;
    }
  }
}

/** A held slot of a pool, given back once. A class, not a closure: tsx (esbuild's keepNames) names each closure made per request. */
class Slot {
  private released = false;
  constructor(private readonly pool: Pool) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.pool.inUse--;
    // Upstream notes the level after a request too: both states count for the period.
    if (this.pool.inUse > this.pool.watermark) this.pool.watermark = this.pool.inUse;
  }
}

/**
 * WithMaxInFlightLimit. It runs after authentication, so a 429 never reaches a handler: it is a
 * termination (apiserver_request_terminations_total), not a served request.
 */
export function withMaxInFlight(limiter: MaxInFlight, metrics: ApiMetrics | undefined): Filter {
  return (next) =>
    limiter.unlimited
      ? next
      : (s) => {
          if (s.longRunning) return next(s);
          const slot = limiter.admit(s.info.verb, s.user.groups);
          if (slot === 'too-many') {
            s.terminated = true;
            metrics?.recordRequestTermination(s.req.method ?? 'GET', s.info, s.query, header(s.req, 'content-type'), 429);
            const tooMany = tooManyRequests('Too many requests, please try again later.');
            throw new PlainTextError(tooMany.status, tooMany.message);
          }
          s.slot = slot;
          s.cleanUpOnClose();
          return next(s);
        };
}
