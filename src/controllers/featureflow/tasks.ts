// The built-in task types of KEP-0007 (research §5.5). Each call of a runner does one unit of work
// (one page of a ClearField, one look at a collection, one WaitForUses evaluation) and returns the
// task as it should be stored: the leader writes it to the Feature's status after every unit, so
// that a new leader continues from the stored progress (the continue token of a ClearField) when
// the old one dies. Every unit is idempotent: doing one again after a crash changes nothing more.
import { setTimeout as delay } from 'node:timers/promises';
import { StatusError } from '../../apimachinery/errors.js';
import { rfc3339 } from '../../apimachinery/times.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import type { FeatureTask, FeatureUse, FeatureValue } from '../../registry/features/features/types.js';
import { CLEAR_FIELD, CUSTOM, DELETE_COLLECTION, KNOWN_TASK_TYPES, usesVerdict, WAIT_FOR_OBJECTS_REMOVED, WAIT_FOR_USES } from './machine.js';

/** A task type an author supplies: one unit of work per call, resumable from `progress`. */
export type CustomTask = (ctx: {
  readonly client: KubeClient;
  readonly feature: { readonly namespace: string; readonly name: string };
  readonly target: 'On' | 'Off';
  readonly params: Readonly<Record<string, string>>;
  readonly progress: NonNullable<FeatureTask['progress']>;
  readonly signal: AbortSignal;
}) => Promise<{ done: boolean; progress?: FeatureTask['progress']; message?: string }>;

/**
 * Writes for ClearField that skip HTTP and JSON: the registry's store of a resource, listed and
 * updated in process, with what an update through the API would run besides (the strategy and
 * gated fields in the store; admission and managedFields supplied by the API server). The control
 * plane gives one to its own flow; a flow over HTTPS (a third party's) has none and uses its client.
 */
export interface DirectWrites {
  /** The resource's in-process writer; undefined when this server does not serve it. */
  resource(gvr: GVR): DirectResource | undefined;
}

export interface DirectResource {
  /** One page, as LIST answers it (the same continue tokens: either path resumes the other's). */
  list(opts: { readonly limit: number; readonly continue?: string }): Promise<KubeList>;
  /**
   * Removes the fields at `paths` from the current object and writes it as an update would, with
   * a compare-and-swap on the revision it read, reading again and clearing again when another
   * write came first (so none is lost). True when a write was made; false when the object has
   * none of the fields (any more) or is gone.
   */
  clear(namespace: string | undefined, name: string, paths: readonly (readonly string[])[]): Promise<boolean>;
}

export interface TaskContext {
  readonly client: KubeClient;
  /** ClearField's in-process path, when the leader runs inside an API server that serves the resource. */
  readonly direct?: DirectWrites;
  readonly feature: { readonly namespace: string; readonly name: string };
  readonly target: 'On' | 'Off';
  /** Uses of live components, and the identities of the live API servers. */
  readonly uses: readonly FeatureUse[];
  readonly liveApiServers: readonly string[];
  readonly useEvaluationTime: string | undefined;
  readonly pageSize: number;
  /** ClearField's pace (objects a second); unset: unpaced. */
  readonly clearFieldObjectsPerSecond?: number;
  readonly custom: Readonly<Record<string, CustomTask>>;
  readonly signal: AbortSignal;
  readonly now: Date;
  /**
   * The leader's look-ahead for ClearField: the list of the page after the one a unit clears,
   * started while that unit's updates run, so that the next unit does not wait for it. Kept by
   * the flow between units; one entry at most.
   */
  readonly prefetch?: Map<string, Promise<KubeList>>;
}

type KubeList = Awaited<ReturnType<KubeClient['list']>>;

export interface TaskStep {
  readonly task: FeatureTask;
  /** WaitForUses: a new evaluation cycle (time to evaluate; uses of other components to clear). */
  readonly newCycle?: { readonly useEvaluationTime: string };
}

/** `group/version/resource`, or `version/resource` for the core group (`v1/configmaps`). */
export function parseResource(s: string | undefined): GVR | undefined {
  const parts = (s ?? '').split('/');
  if (parts.length === 2 && parts.every(Boolean)) return { group: '', version: parts[0]!, resource: parts[1]! };
  if (parts.length === 3 && parts.every(Boolean)) return { group: parts[0]!, version: parts[1]!, resource: parts[2]! };
  return undefined;
}

/** `.spec.strategy` or `spec.strategy` as path segments. */
export const parseFieldPath = (s: string | undefined): string[] => (s ?? '').split('.').filter(Boolean);

function parentOf(obj: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let cur: unknown = obj;
  for (const seg of path.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur !== null && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Record<string, unknown>) : undefined;
}

/** Whether the object has the field (null counts: it is stored). */
export function hasField(obj: KubeObject, path: readonly string[]): boolean {
  const parent = parentOf(obj, path);
  const leaf = path[path.length - 1];
  return parent !== undefined && leaf !== undefined && Object.hasOwn(parent, leaf);
}

/** Removes the field; true when it was there (null counts as there: it is stored). */
export function clearField(obj: KubeObject, path: readonly string[]): boolean {
  const parent = parentOf(obj, path);
  const leaf = path[path.length - 1];
  if (!parent || leaf === undefined || !Object.hasOwn(parent, leaf)) return false;
  delete parent[leaf];
  return true;
}

const valueOf = (target: 'On' | 'Off'): FeatureValue => (target === 'On' ? 'Enabled' : 'Disabled');
const isStatus = (e: unknown, ...codes: number[]): boolean => e instanceof StatusError && codes.includes(e.code);

/** How many times one object's clear is retried on a conflict before the page fails (and is redone). */
const CONFLICT_RETRIES = 10;

export async function runTask(task: FeatureTask, ctx: TaskContext): Promise<TaskStep> {
  const t: FeatureTask = { ...task, attempts: task.attempts ?? 0 };
  const stamp = (): void => {
    t.lastAttemptTime = rfc3339(ctx.now);
  };
  if (!KNOWN_TASK_TYPES.has(t.type)) {
    return {
      task: {
        ...t,
        phase: 'Blocked',
        message: `UnknownTaskType: this leader does not run tasks of type ${JSON.stringify(t.type)}; waiting for a leader that does`,
      },
    };
  }
  // Tasks that change data never run while a live component may still use the feature the old way.
  if (t.type === CLEAR_FIELD || t.type === DELETE_COLLECTION || t.type === CUSTOM) {
    const v = usesVerdict(ctx.uses, valueOf(ctx.target), ctx.liveApiServers);
    if (!v.done) return { task: { ...t, phase: 'Blocked', message: `waiting for uses before changing data: ${v.message}` } };
  }
  try {
    switch (t.type) {
      case WAIT_FOR_USES:
        return waitForUses(t, ctx);
      case CLEAR_FIELD:
        return { task: await clearFieldPage(t, ctx) };
      case WAIT_FOR_OBJECTS_REMOVED:
        return { task: await objectsRemoved(t, ctx, false) };
      case DELETE_COLLECTION:
        return { task: await objectsRemoved(t, ctx, true) };
      default:
        return { task: await custom(t, ctx) };
    }
  } catch (e) {
    stamp();
    // Row 7: the task failed; the leader retries it after a backoff (attempts counts the failures).
    const message = e instanceof Error ? e.message : String(e);
    return { task: { ...t, phase: 'Failed', attempts: (t.attempts ?? 0) + 1, message } };
  }
}

/** How long the leader waits before retrying a failed task: 1 s doubling to 5 min. */
export function backoffMs(attempts: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

function waitForUses(t: FeatureTask, ctx: TaskContext): TaskStep {
  const period = Number(t.params?.['evaluationPeriodSeconds'] ?? '60');
  const cycle = (): TaskStep => {
    const at = new Date(ctx.now.getTime() + (Number.isFinite(period) && period >= 0 ? period : 60) * 1000);
    return { task: { ...t, phase: 'Running', lastAttemptTime: rfc3339(ctx.now) }, newCycle: { useEvaluationTime: rfc3339(at) } };
  };
  // Step 1: a new cycle (the uses of components other than live API servers are cleared: those
  // that run re-report within their resync, those gone do not).
  if (t.phase !== 'Running' || !ctx.useEvaluationTime) return cycle();
  if (ctx.now.getTime() < Date.parse(ctx.useEvaluationTime)) return { task: t };
  const v = usesVerdict(ctx.uses, valueOf(ctx.target), ctx.liveApiServers);
  if (v.done) return { task: { ...t, phase: 'Succeeded', message: v.message, lastAttemptTime: rfc3339(ctx.now) } };
  // Row 8: some use disagrees at evaluation time: another cycle.
  const next = cycle();
  return { ...next, task: { ...next.task, attempts: (t.attempts ?? 0) + 1, message: v.message } };
}

/**
 * ClearField's updates in flight at once within a page. Storage commits the writes that wait
 * together (SQLite's group commit, etcd's pipelining), so more in flight means fewer commits per
 * object; each update is a few hundred microseconds of this event loop, so a GET waits behind a
 * few of them at most.
 */
const CLEAR_CONCURRENCY = 32;

async function clearFieldPage(t: FeatureTask, ctx: TaskContext): Promise<FeatureTask> {
  const gvr = parseResource(t.params?.['resource']);
  const paths = (t.params?.['fieldPath'] ?? '')
    .split(',')
    .map((p) => parseFieldPath(p))
    .filter((p) => p.length > 0);
  if (!gvr || paths.length === 0) {
    return { ...t, phase: 'Blocked', message: `params need resource (group/version/resource) and fieldPath, got ${JSON.stringify(t.params ?? {})}` };
  }
  const progress = { continue: t.progress?.continue ?? '', processed: t.progress?.processed ?? 0, changed: t.progress?.changed ?? 0 };
  const direct = ctx.direct?.resource(gvr);
  const listPage = (cont: string): Promise<KubeList> =>
    direct
      ? direct.list({ limit: ctx.pageSize, ...(cont ? { continue: cont } : {}) })
      : ctx.client.list(gvr, undefined, { limit: ctx.pageSize, ...(cont ? { continue: cont } : {}), signal: ctx.signal });
  const clear = direct
    ? (listed: KubeObject): Promise<boolean> | false =>
        // The listed object is shared with the store's decoder: only looked at; the store hands
        // the update a copy of the current object to clear.
        paths.some((p) => hasField(listed, p)) && direct.clear(listed.metadata?.namespace, listed.metadata?.name ?? '', paths)
    : (listed: KubeObject): Promise<boolean> => clearOne(ctx.client, gvr, listed, paths);
  const pageKey = (cont: string): string => `${t.params?.['resource'] ?? ''}\u0000${ctx.pageSize}\u0000${cont}`;
  const unitStarted = Date.now();
  let page;
  try {
    const ahead = ctx.prefetch?.get(pageKey(progress.continue));
    ctx.prefetch?.clear();
    page = await (ahead ?? listPage(progress.continue));
  } catch (e) {
    // An expired continue token (410): start the pass over; clearing is idempotent.
    if (isStatus(e, 410) && progress.continue)
      return { ...t, phase: 'Running', progress: { ...progress, continue: '' }, message: 'continue token expired; listing again from the start' };
    throw e;
  }
  // The next page is listed while this one's updates run (a continue token lists at the first
  // page's snapshot either way, so it reads the same objects later or now).
  const following = page.metadata?.continue ?? '';
  if (following && ctx.prefetch) {
    const ahead = listPage(following);
    ahead.catch(() => {}); // a failure surfaces when the next unit awaits it (and lists again then)
    ctx.prefetch.set(pageKey(following), ahead);
  }
  // Updates of the page in flight at once: storage batches concurrent commits (SQLite's group
  // commit, etcd's pipelining), so the pass is not one commit latency per object. The page's
  // progress is written only when all of it is done; a page redone changes nothing more.
  let next_ = 0;
  const worker = async (): Promise<void> => {
    for (let i = next_++; i < page.items.length; i = next_++) {
      if (ctx.signal.aborted) throw new Error('stopped');
      if (await clear(page.items[i]!)) progress.changed++;
      progress.processed++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CLEAR_CONCURRENCY, page.items.length) }, worker));
  if (ctx.clearFieldObjectsPerSecond) await pace(unitStarted + (page.items.length * 1000) / ctx.clearFieldObjectsPerSecond, ctx.signal);
  const next = page.metadata?.continue ?? '';
  const summary = `cleared ${paths.map((p) => p.join('.')).join(', ')} on ${progress.changed} of ${progress.processed} object(s)`;
  if (!next) return { ...t, phase: 'Succeeded', progress: { ...progress, continue: '' }, message: summary, lastAttemptTime: rfc3339(ctx.now) };
  return { ...t, phase: 'Running', progress: { ...progress, continue: next }, message: summary, lastAttemptTime: rfc3339(ctx.now) };
}

/** Waits until `untilMs` (Date.now() time), or until the flow stops. */
async function pace(untilMs: number, signal: AbortSignal): Promise<void> {
  const ms = untilMs - Date.now();
  if (ms > 0) await delay(ms, undefined, { signal }).catch(() => {});
}

/**
 * Clears the fields of one object with an update that carries the resourceVersion it read: a
 * concurrent write wins (409), the object is read again and cleared again, so no write is lost.
 */
async function clearOne(client: KubeClient, gvr: GVR, listed: KubeObject, paths: readonly string[][]): Promise<boolean> {
  // The listed object is this unit's own (decoded from the list's answer): cleared in place.
  let obj: KubeObject = listed;
  for (let attempt = 0; ; attempt++) {
    let changed = false;
    for (const p of paths) if (clearField(obj, p)) changed = true;
    if (!changed) return false;
    try {
      await client.update(gvr, obj.metadata?.namespace, obj);
      return true;
    } catch (e) {
      if (isStatus(e, 404)) return false;
      if (!isStatus(e, 409) || attempt >= CONFLICT_RETRIES) throw e;
    }
    try {
      obj = await client.get(gvr, listed.metadata?.namespace, listed.metadata?.name ?? '');
    } catch (e) {
      if (isStatus(e, 404)) return false;
      throw e;
    }
  }
}

async function objectsRemoved(t: FeatureTask, ctx: TaskContext, deleteThem: boolean): Promise<FeatureTask> {
  const gvr = parseResource(t.params?.['resource']);
  if (!gvr) return { ...t, phase: 'Blocked', message: `params need resource (group/version/resource), got ${JSON.stringify(t.params ?? {})}` };
  const namespace = t.params?.['namespace'] || undefined;
  const labelSelector = t.params?.['labelSelector'];
  const selectors = { ...(labelSelector ? { labelSelector } : {}), ...(t.params?.['fieldSelector'] ? { fieldSelector: t.params['fieldSelector'] } : {}) };
  if (deleteThem) await ctx.client.deleteCollection(gvr, namespace, { ...selectors, signal: ctx.signal });
  const list = await ctx.client.list(gvr, namespace, { ...selectors, limit: 1, signal: ctx.signal });
  const left = list.items.length + (list.metadata?.remainingItemCount ?? 0);
  const what = `${t.params?.['resource']}${namespace ? ` in ${namespace}` : ''}${labelSelector ? ` (${labelSelector})` : ''}`;
  if (list.items.length === 0) return { ...t, phase: 'Succeeded', message: `no ${what} left`, lastAttemptTime: rfc3339(ctx.now) };
  // WaitForObjectsRemoved never deletes: it is Blocked until someone removes them (research §5.5).
  return {
    ...t,
    phase: deleteThem ? 'Running' : 'Blocked',
    message: `${left}${list.metadata?.continue && !list.metadata.remainingItemCount ? '+' : ''} ${what} left`,
    lastAttemptTime: rfc3339(ctx.now),
  };
}

async function custom(t: FeatureTask, ctx: TaskContext): Promise<FeatureTask> {
  const name = t.params?.['name'] ?? '';
  const fn = ctx.custom[name];
  if (!fn) return { ...t, phase: 'Blocked', message: `no custom task ${JSON.stringify(name)} is registered on this leader` };
  const r = await fn({ client: ctx.client, feature: ctx.feature, target: ctx.target, params: t.params ?? {}, progress: t.progress ?? {}, signal: ctx.signal });
  return {
    ...t,
    phase: r.done ? 'Succeeded' : 'Running',
    ...(r.progress ? { progress: r.progress } : {}),
    ...(r.message ? { message: r.message } : {}),
    lastAttemptTime: rfc3339(ctx.now),
  };
}
