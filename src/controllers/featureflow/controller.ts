// The server flow of KEP-0007: each API server runs this controller; the one that leads (the live
// API server whose identity Lease name hashes lowest) writes every Feature's status of its class
// (intended value, state, transition with tasks, conditions, events) and runs the head task of
// each transition. No election object: the identity Leases every server renews already say who
// is alive (KEP-1965), and every server computes the same leader from them. Two servers may both
// believe they lead for a moment (their views of a renewTime differ): status writes carry the
// resourceVersion they read and every task unit is idempotent, so that costs a conflict, not data.
//
// Event-driven as a kube controller is: informers (one list, then a watch) on the class's Features
// and on the identity Leases, and a work queue keyed by feature name. A Feature is reconciled when
// it changed (a use reported, spec.desired set), when the set of live API servers or the leader
// changed, or when a timer it asked for is due (WaitForUses' evaluation time, a failed task's
// backoff, a task that polls other objects, a retention window); a settled Feature with nothing
// new costs nothing, and nothing is listed again per round.
import { createHash } from 'node:crypto';
import { StatusError } from '../../apimachinery/errors.js';
import { rfc3339 } from '../../apimachinery/times.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import type { FeatureGate } from '../../featuregate/feature-gate.js';
import { asLogger } from '../../golang/klog.js';
import type { GatedField } from '../../registry/gated-fields.js';
import {
  FEATURES_API_VERSION,
  FEATURES_GROUP,
  FEATURES_VERSION,
  KPLANE_FEATURE_CLASS,
  type FeatureObject,
  type FeatureStatus,
  type FeatureUse,
} from '../../registry/features/features/types.js';
import { IDENTITY_LABEL } from '../apiserveridentity.js';
import { stabilityOf } from '../featurereporter.js';
import { Informer } from '../runtime/informer.js';
import { ItemExponentialFailureRateLimiter, WorkQueue } from '../runtime/workqueue.js';
import type { Clock } from '../runtime/clock.js';
import {
  CONDITION_AVAILABLE,
  DEFAULT_UNAVAILABLE_RETENTION_MS,
  headTask,
  reconcileFeature,
  WAIT_FOR_USES,
  type FeatureTasks,
  type FlowEvent,
  type KnownFeature,
  type TaskTemplate,
} from './machine.js';
import { backoffMs, runTask, type CustomTask, type DirectWrites } from './tasks.js';

const FEATURES: GVR = { group: FEATURES_GROUP, version: FEATURES_VERSION, resource: 'features' };
const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };
const API_SERVER = 'kube-apiserver';
const PSEUDO_FEATURES = new Set(['AllAlpha', 'AllBeta']);
const COMPONENT = 'feature-lifecycle-controller';

export interface FeatureFlowOptions {
  /**
   * This server's identity Lease (`apiserver-<hash>`): it leads when its hash is the lowest live
   * one. With `standalone`, only the name written as `transition.leader`.
   */
  readonly leaseName: string;
  /**
   * A third-party component that owns its class runs the flow itself (one instance, or behind
   * its own leader election): it always leads, and API servers are not expected to report the
   * class's features (WaitForUses waits for the uses reported, not for API servers).
   */
  readonly standalone?: boolean;
  /** The leader's version, written as unavailableSinceVersion of a feature it does not know. */
  readonly version: string;
  /** The class (namespace) of the features this flow owns (default kube-system). */
  readonly namespace?: string;
  /** Each feature's tasks toward On and toward Off (WaitForUses is appended). */
  readonly tasks?: Readonly<Record<string, FeatureTasks>>;
  /** The functions behind `Custom` tasks, by `params.name`. */
  readonly custom?: Readonly<Record<string, CustomTask>>;
  /**
   * ClearField's writes in process (the control plane gives its flow the registry's stores);
   * without it, ClearField updates through `client`.
   */
  readonly direct?: DirectWrites;
  /**
   * How often the leader is worked out again from the cached identity Leases (default 5 s), and
   * how often a task that waits on other objects (WaitForObjectsRemoved, DeleteCollection, Custom,
   * a Blocked task) is looked at again. Features are not listed again: changes come by watch.
   */
  readonly intervalMs?: number;
  /** Features reconciled at once (default 2; one feature is never reconciled by two at once). */
  readonly workers?: number;
  /** An identity Lease counts as live while renewed within this (default 40 s; research A13). */
  readonly livenessMs?: number;
  /** WaitForUses' evaluation period (default 60 s, longer than a reporter's 30 s resync). */
  readonly evaluationPeriodSeconds?: number;
  /** ClearField's page size (default 500). */
  readonly pageSize?: number;
  /**
   * ClearField's pace: at most this many objects a second (default: as fast as the server
   * writes), to bound what a pass adds to a busy server's load.
   */
  readonly clearFieldObjectsPerSecond?: number;
  /**
   * The features this server allows to turn at runtime (`--dynamic-features`; each must be marked
   * dynamic): for these, a Feature's `spec.desired` is the intended value (source API).
   */
  readonly dynamicFeatures?: readonly string[];
  /**
   * How long a Feature that no live component declares is kept (stability Unavailable, condition
   * Available=False) before the leader deletes it (default 7 days; research A14's row 11).
   */
  readonly unavailableRetentionMs?: number;
  readonly log?: (msg: string) => void;
  readonly now?: () => Date;
}

export interface FeatureFlow {
  start(): void;
  /**
   * Works out the leader again from the cached identity Leases and, when this server leads, queues
   * every cached Feature for a reconcile (no request is made).
   */
  sync(): Promise<void>;
  /** Whether this server led when the leader was last worked out. */
  readonly leading: boolean;
  /** Stops at once: a task unit in flight is abandoned unwritten (the next leader redoes it). */
  stop(): Promise<void>;
}

interface LeaseLike {
  metadata?: { name?: string };
  spec?: { holderIdentity?: string; renewTime?: string };
}

const hashOf = (name: string): string => createHash('sha256').update(name).digest('hex');

/**
 * The leader among identity Leases (research A13): those renewed within `livenessMs` of `now` are
 * live, and the live one whose name's SHA-256 is lowest leads. Every server computes the same
 * answer from the same list; a leader whose Lease goes stale is replaced by the next lowest.
 */
export function chooseLeader(leases: readonly LeaseLike[], now: Date, livenessMs: number): { leader: string | undefined; live: LeaseLike[] } {
  const live = leases.filter((l) => {
    const t = l.spec?.renewTime ? Date.parse(l.spec.renewTime) : NaN;
    return Number.isFinite(t) && now.getTime() - t <= livenessMs && !!l.metadata?.name;
  });
  let leader: string | undefined;
  let best = '';
  for (const l of live) {
    const h = hashOf(l.metadata!.name!);
    if (leader === undefined || h < best) {
      leader = l.metadata!.name!;
      best = h;
    }
  }
  return { leader, live };
}

/**
 * The ClearField tasks a kind's gated fields imply: turning a feature off clears its fields from
 * every stored object of the kind (one task per kind, all its fields in one pass).
 */
export function tasksFromGatedFields(resources: readonly { readonly gvr: GVR; readonly gatedFields: readonly GatedField[] }[]): Record<string, FeatureTasks> {
  const out: Record<string, { enable: TaskTemplate[]; disable: TaskTemplate[] }> = {};
  for (const { gvr, gatedFields } of resources) {
    const byFeature = new Map<string, string[]>();
    for (const f of gatedFields) byFeature.set(f.feature, [...(byFeature.get(f.feature) ?? []), `.${f.path.join('.')}`]);
    for (const [feature, paths] of byFeature) {
      const entry = (out[feature] ??= { enable: [], disable: [] });
      entry.disable.push({
        name: `clear-${gvr.resource}${gvr.group ? `.${gvr.group}` : ''}`,
        type: 'ClearField',
        params: { resource: `${gvr.group ? `${gvr.group}/` : ''}${gvr.version}/${gvr.resource}`, fieldPath: paths.join(',') },
      });
    }
  }
  return out;
}

/** Merges task declarations: the later ones' tasks come after the earlier ones'. */
export function mergeTasks(...all: readonly (Readonly<Record<string, FeatureTasks>> | undefined)[]): Record<string, FeatureTasks> {
  const out: Record<string, { enable: TaskTemplate[]; disable: TaskTemplate[] }> = {};
  for (const m of all)
    for (const [name, t] of Object.entries(m ?? {})) {
      const e = (out[name] ??= { enable: [], disable: [] });
      e.enable.push(...(t.enable ?? []));
      e.disable.push(...(t.disable ?? []));
    }
  return out;
}

const valueOf = (b: boolean): 'Enabled' | 'Disabled' => (b ? 'Enabled' : 'Disabled');
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const USE_FIELDS = ['component', 'identity', 'version', 'value', 'reportTime'] as const;
/**
 * Whether a status computed equals the one stored. The uses (up to 1,000) are compared field by
 * field, the rest as JSON: a reconcile runs on every reported use, and turning two lists of
 * hundreds of uses into JSON to compare them was most of what it cost.
 */
function sameStatus(a: FeatureStatus, b: FeatureStatus): boolean {
  if ((a.uses === undefined) !== (b.uses === undefined)) return false;
  const ua = a.uses ?? [];
  const ub = b.uses ?? [];
  if (ua.length !== ub.length) return false;
  for (let i = 0; i < ua.length; i++) {
    const x = ua[i]!;
    const y = ub[i]!;
    if (Object.keys(x).length !== Object.keys(y).length || USE_FIELDS.some((f) => x[f] !== y[f])) return false;
  }
  return same({ ...a, uses: undefined }, { ...b, uses: undefined });
}

export function featureFlow(client: KubeClient, gate: FeatureGate, opts: FeatureFlowOptions): FeatureFlow {
  const namespace = opts.namespace ?? KPLANE_FEATURE_CLASS;
  const log = asLogger(opts.log);
  const now = opts.now ?? ((): Date => new Date());
  const tasks = opts.tasks ?? {};
  const intervalMs = opts.intervalMs ?? 5_000;
  const abort = new AbortController();
  let ticker: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let leading = false;
  /** The live API servers' identities (Lease holders) when the leader was last worked out. */
  let liveHolders: ReadonlySet<string> = new Set();
  /** Per feature, the disagreement last raised as an event while leading. */
  const disagreements = new Map<string, string>();
  /** Per feature, ClearField's next page, listed ahead while a page is cleared (tasks.ts). */
  const prefetches = new Map<string, Map<string, Promise<Awaited<ReturnType<KubeClient['list']>>>>>();
  /**
   * Per feature, the object as this leader last wrote it: the informer's copy may not show that
   * write yet, and a reconcile of the older copy would redo what was written (a new WaitForUses
   * cycle, a page cleared again). The newer of the two is reconciled.
   */
  const written = new Map<string, KubeObject & FeatureObject>();
  // Timers that do not keep a process alive (a component that forgets stop() still exits).
  const clock: Clock = {
    now: () => Date.now(),
    setTimer(fn, ms) {
      const t = setTimeout(fn, Math.max(0, ms));
      t.unref();
      return { cancel: () => clearTimeout(t) };
    },
  };
  const featureInformer = new Informer<KubeObject & FeatureObject>({ client, gvr: FEATURES, namespace, clock, ...(opts.log ? { log: opts.log } : {}) });
  const leaseInformer = opts.standalone
    ? undefined
    : new Informer<KubeObject & LeaseLike>({
        client,
        gvr: LEASES,
        namespace: 'kube-system',
        labelSelector: `${IDENTITY_LABEL}=${API_SERVER}`,
        clock,
        ...(opts.log ? { log: opts.log } : {}),
      });
  // A failed reconcile (an API error) is retried after 1 s doubling to 5 min, the tasks' backoff;
  // a shorter interval (tests) shortens the first retry.
  const queue = new WorkQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter<string>(Math.min(1000, intervalMs), 300_000) });

  const dynamicNames = new Set((opts.dynamicFeatures ?? []).filter((n) => gate.isDynamic(n)));
  const known = (name: string, obj?: FeatureObject): KnownFeature | undefined => {
    if (PSEUDO_FEATURES.has(name)) return undefined;
    const spec = gate.getAll().get(name);
    if (!spec) return undefined;
    // research §5.3: spec.desired of a dynamic feature wins (the object is fresher than this
    // server's gate, which its own watch turns a moment later).
    const dynamic = dynamicNames.has(name);
    const desired = dynamic ? (obj as { spec?: { desired?: unknown } } | undefined)?.spec?.desired : undefined;
    const fromApi = desired === 'Enabled' || desired === 'Disabled';
    return {
      intended: fromApi ? desired : valueOf(gate.enabled(name)),
      source: fromApi ? 'API' : gate.explicitlySet(name) ? 'CommandLine' : 'Default',
      dynamic,
      stability: stabilityOf(spec),
      default: valueOf(spec.default),
      lockedToDefault: spec.lockToDefault === true,
      version: gate.emulationVersion().toString(),
    };
  };

  const recordEvent = async (f: KubeObject, e: FlowEvent): Promise<void> => {
    const at = now();
    const ts = rfc3339(at);
    const name = f.metadata?.name ?? '';
    try {
      await client.create(EVENTS, namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${name}.${(BigInt(at.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`, namespace },
        involvedObject: {
          kind: 'Feature',
          apiVersion: FEATURES_API_VERSION,
          name,
          namespace,
          uid: f.metadata?.uid,
          resourceVersion: f.metadata?.resourceVersion,
        },
        reason: e.reason,
        message: e.message,
        type: e.type,
        source: { component: COMPONENT },
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
        reportingComponent: COMPONENT,
        reportingInstance: opts.leaseName,
      });
    } catch (err) {
      log.error(err, 'Could not record an event', 'reason', e.reason, 'feature', `${namespace}/${name}`);
    }
  };

  /**
   * Reconciles one Feature: the state machine, then units of its head task while they make
   * progress. Returns the Feature as it stands after (as written, or as read when nothing changed).
   */
  const reconcileOne = async (initial: KubeObject & FeatureObject): Promise<KubeObject & FeatureObject> => {
    const name = initial.metadata?.name ?? '';
    const k = known(name, initial);
    let obj = initial;
    const prefetch = prefetches.get(name) ?? new Map<string, Promise<Awaited<ReturnType<KubeClient['list']>>>>();
    prefetches.set(name, prefetch);
    let clearedBefore: string | undefined; // a WaitForUses cycle began: other components' uses older than this go
    for (let unit = 0; unit < 10_000 && !abort.signal.aborted; unit++) {
      const liveUses = (s: FeatureStatus): FeatureUse[] =>
        (s.uses ?? []).filter(
          (u) =>
            (u.component === API_SERVER ? liveHolders.has(u.identity) : true) &&
            !(clearedBefore && u.component !== API_SERVER && (u.reportTime ?? '') < clearedBefore),
        );
      const machine = (s: FeatureStatus) =>
        reconcileFeature({
          status: s,
          ...(obj.metadata?.generation !== undefined ? { generation: obj.metadata.generation } : {}),
          known: k,
          leaderVersion: opts.version,
          tasks: tasks[name] ?? {},
          uses: liveUses(s),
          leader: opts.leaseName,
          evaluationPeriodSeconds: opts.evaluationPeriodSeconds ?? 60,
          now: now(),
          ...(disagreements.has(name) ? { lastDisagreement: disagreements.get(name)! } : {}),
          ...(opts.unavailableRetentionMs !== undefined ? { unavailableRetentionMs: opts.unavailableRetentionMs } : {}),
        });
      const first = machine(obj.status ?? {});
      if (first.delete) {
        // Row 11: the retention window is over. Deleted with the uid and resourceVersion read, so a
        // component that declared it again meanwhile (a new use) keeps it.
        try {
          const uid = obj.metadata?.uid;
          const resourceVersion = obj.metadata?.resourceVersion;
          await client.delete(FEATURES, namespace, name, {
            preconditions: { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
          });
          log.info('Deleted a feature no live component declares', 'feature', `${namespace}/${name}`);
        } catch (e) {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
        }
        return obj;
      }
      let status = first.status;
      const events = [...first.events];
      let again = false;
      const head = k ? headTask(status) : undefined;
      const waiting = head?.phase === 'Failed' && head.lastAttemptTime && now().getTime() < Date.parse(head.lastAttemptTime) + backoffMs(head.attempts ?? 1);
      if (head && status.transition?.target && !waiting) {
        const step = await runTask(head, {
          client,
          ...(opts.direct ? { direct: opts.direct } : {}),
          feature: { namespace, name },
          target: status.transition.target as 'On' | 'Off',
          uses: status.uses ?? [],
          liveApiServers: [...liveHolders],
          useEvaluationTime: status.useEvaluationTime,
          pageSize: opts.pageSize ?? 500,
          ...(opts.clearFieldObjectsPerSecond ? { clearFieldObjectsPerSecond: opts.clearFieldObjectsPerSecond } : {}),
          custom: opts.custom ?? {},
          signal: abort.signal,
          now: now(),
          prefetch,
        });
        if (abort.signal.aborted) return obj; // stopped: the unit is abandoned, unwritten
        // A unit that found nothing new (a task still Blocked for the same reason) keeps its record,
        // so that a blocked transition is not rewritten every round.
        const task = same({ ...step.task, lastAttemptTime: undefined }, { ...head, attempts: head.attempts ?? 0, lastAttemptTime: undefined })
          ? head
          : step.task;
        const list = status.transition.tasks ?? [];
        status.transition.tasks = list.map((t) => (t.name === head.name ? task : t));
        if (step.newCycle) {
          status.useEvaluationTime = step.newCycle.useEvaluationTime;
          clearedBefore = rfc3339(now());
          status.uses = (status.uses ?? []).filter((u) => u.component === API_SERVER);
        }
        if (step.task.phase === 'Succeeded')
          events.push({ type: 'Normal', reason: 'FeatureTaskSucceeded', message: `task ${step.task.name} (${step.task.type}): ${step.task.message ?? ''}` });
        if (step.task.phase === 'Failed')
          events.push({ type: 'Warning', reason: 'FeatureTaskFailed', message: `task ${step.task.name} (${step.task.type}): ${step.task.message ?? ''}` });
        const second = machine(status);
        status = second.status;
        events.push(...second.events);
        // Another unit at once while a task makes progress (pages of a ClearField, a DeleteCollection).
        again = step.task.phase === 'Running' && step.task.type !== 'WaitForUses' && !same(step.task.progress, head.progress);
        if (step.task.phase === 'Succeeded' && status.transition) again = true;
      }
      if (status.conditions?.find((x) => x.type === 'UsesAgree')?.status === 'True') disagreements.delete(name);
      if (sameStatus(status, obj.status ?? {})) return obj;
      // A reporter may have written a use meanwhile (409): read again and put this unit's outcome
      // (the leader's fields) onto the fresh uses, so that a page cleared is counted once. When more
      // than the uses changed (the announcer's first status, another server that led for a moment,
      // a new spec.desired), this unit's outcome was worked out from a status that is gone: the
      // unit runs again from the fresh object (task units are idempotent).
      const from = obj;
      let stale = false;
      for (let conflicts = 0; ; conflicts++) {
        try {
          obj = await client.updateStatus<KubeObject & FeatureObject>(FEATURES, namespace, { ...obj, status });
          written.set(name, obj);
          break;
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) return obj;
          if (!(e instanceof StatusError && e.code === 409) || conflicts >= 5) throw e;
        }
        obj = await client.get<KubeObject & FeatureObject>(FEATURES, namespace, name);
        if (obj.metadata?.generation !== from.metadata?.generation || !sameStatus({ ...(obj.status ?? {}), uses: [] }, { ...(from.status ?? {}), uses: [] })) {
          stale = true;
          break;
        }
        status = machine({ ...status, uses: obj.status?.uses ?? [] }).status;
      }
      if (stale) continue;
      const said = new Set<string>();
      for (const ev of events) {
        if (said.has(`${ev.reason}\u0000${ev.message}`)) continue;
        said.add(`${ev.reason}\u0000${ev.message}`);
        if (ev.reason === 'FeatureUsesDisagree') disagreements.set(name, ev.message);
        await recordEvent(obj, ev);
      }
      if (!again) return obj;
    }
    return obj;
  };

  /** The newer of the informer's copy and this leader's last write (resourceVersions are revisions). */
  const current = (name: string): (KubeObject & FeatureObject) | undefined => {
    const cached = featureInformer.store.get(`${namespace}/${name}`);
    const mine = written.get(name);
    if (!mine) return cached;
    if (!cached) return undefined; // deleted since (the informer saw it go)
    if (revision(cached) >= revision(mine)) {
      written.delete(name);
      return cached;
    }
    return mine;
  };

  /**
   * When a Feature needs looking at again with no change to it: WaitForUses' evaluation time, a
   * failed task's backoff, a task that waits on other objects (polled every interval), the end of
   * an undeclared feature's retention window. Undefined: only a change (a watch event) or a new
   * set of live API servers wakes it.
   */
  const dueInMs = (f: KubeObject & FeatureObject): number | undefined => {
    const s = f.status ?? {};
    const at = now().getTime();
    const head = s.transition ? headTask(s) : undefined;
    if (head) {
      if (head.type === WAIT_FOR_USES && head.phase === 'Running' && s.useEvaluationTime) {
        const evaluation = Date.parse(s.useEvaluationTime);
        if (Number.isFinite(evaluation)) return Math.max(0, evaluation - at) + 10;
      }
      if (head.phase === 'Failed' && head.lastAttemptTime) {
        const retry = Date.parse(head.lastAttemptTime) + backoffMs(head.attempts ?? 1);
        if (Number.isFinite(retry)) return Math.max(0, retry - at) + 10;
      }
      return intervalMs;
    }
    const available = s.conditions?.find((c) => c.type === CONDITION_AVAILABLE);
    if (s.stability === 'Unavailable' && available?.status === 'False' && available.lastTransitionTime) {
      const expiry = Date.parse(available.lastTransitionTime) + (opts.unavailableRetentionMs ?? DEFAULT_UNAVAILABLE_RETENTION_MS);
      if (Number.isFinite(expiry)) return Math.max(0, expiry - at) + 10;
    }
    return undefined;
  };

  const reconcileKey = async (name: string): Promise<void> => {
    const f = current(name);
    if (!f) {
      written.delete(name);
      prefetches.delete(name);
      return;
    }
    const after = await reconcileOne(f);
    if (abort.signal.aborted) return;
    const due = dueInMs(after);
    if (due !== undefined) queue.addAfter(name, due);
  };

  const enqueueAll = (): void => {
    for (const f of featureInformer.store.list()) queue.add(f.metadata?.name ?? '');
  };

  /**
   * Works out the leader and the live API servers from the cached identity Leases. A change of
   * either puts every Feature in the queue: a use of an API server counts only while it lives.
   */
  const checkLeader = (): void => {
    if (abort.signal.aborted) return;
    const { leader, live } = leaseInformer
      ? chooseLeader(leaseInformer.store.list(), now(), opts.livenessMs ?? 40_000)
      : { leader: opts.leaseName, live: [] as LeaseLike[] };
    const was = leading;
    leading = leader === opts.leaseName;
    if (leading !== was) log.info(leading ? 'Leading the feature flow' : 'No longer leading the feature flow', 'leader', leader ?? '', 'lease', opts.leaseName);
    const holders = new Set(live.map((l) => l.spec?.holderIdentity ?? '').filter(Boolean));
    const changed = holders.size !== liveHolders.size || [...holders].some((h) => !liveHolders.has(h));
    liveHolders = holders;
    if (leading && (!was || changed)) enqueueAll();
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const name = await queue.get();
      if (name === undefined) return;
      try {
        // Not leading: the key is dropped; becoming the leader queues every Feature again.
        if (leading) await reconcileKey(name);
        queue.forget(name);
      } catch (e) {
        if (!abort.signal.aborted) {
          log.error(e, 'Failed to reconcile a feature', 'feature', `${namespace}/${name}`);
          queue.addRateLimited(name);
        }
      } finally {
        queue.done(name);
      }
    }
  };

  const nameOf = (f: KubeObject): string => f.metadata?.name ?? '';
  featureInformer.addEventHandler({
    onAdd: (f) => queue.add(nameOf(f)),
    onUpdate: (_old, f) => {
      // This leader's own write: what follows from it was queued when it was written.
      if (written.get(nameOf(f))?.metadata?.resourceVersion === f.metadata?.resourceVersion) return;
      queue.add(nameOf(f));
    },
    onDelete: (f) => queue.add(nameOf(f)),
  });
  // A new identity Lease, or one renewed after it went stale, may change the leader at once; the
  // ticker notices Leases going stale (no event says so).
  leaseInformer?.addEventHandler({ onAdd: checkLeader, onUpdate: checkLeader, onDelete: checkLeader });

  const run = async (): Promise<void> => {
    const informers = [featureInformer.run(abort.signal), ...(leaseInformer ? [leaseInformer.run(abort.signal)] : [])];
    for (const p of informers)
      p.catch((e: unknown) => {
        if (!abort.signal.aborted) log.error(e, 'Feature flow informer stopped', 'namespace', namespace);
      });
    const synced = await Promise.all([featureInformer.waitForSync(abort.signal), ...(leaseInformer ? [leaseInformer.waitForSync(abort.signal)] : [])]);
    if (abort.signal.aborted || synced.includes(false)) return;
    const tick = (): void => {
      checkLeader();
      if (abort.signal.aborted) return;
      ticker = setTimeout(tick, intervalMs);
      ticker.unref();
    };
    tick();
    await Promise.all([...Array.from({ length: Math.max(1, opts.workers ?? 2) }, worker), ...informers]);
  };

  return {
    start() {
      running ??= run().catch((e: unknown) => {
        if (!abort.signal.aborted) log.error(e, 'Feature flow stopped', 'namespace', namespace);
      });
    },
    async sync() {
      checkLeader();
      if (leading) enqueueAll();
    },
    get leading() {
      return leading;
    },
    async stop() {
      abort.abort();
      if (ticker) clearTimeout(ticker);
      queue.shutDown();
      await running;
    },
  };
}

/** A resourceVersion as a number (kplane's are storage revisions); -1 when it is not one. */
function revision(o: KubeObject): bigint {
  try {
    return BigInt(o.metadata?.resourceVersion ?? '-1');
  } catch {
    return -1n;
  }
}
