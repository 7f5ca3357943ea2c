// The Feature state machine of KEP-0007 (research §5.4), as pure functions: what the leader writes
// to a Feature's status given the status it read, the value it intends, the tasks the feature
// declares and the uses of live components. Task *execution* (listing, clearing, waiting) is in
// tasks.ts; this file only decides states, task lists, conditions and events, so that it can be
// tested table by table without a server.
import { rfc3339 } from '../../apimachinery/times.js';
import {
  CONDITION_USES_AGREE,
  type FeatureCondition,
  type FeatureStatus,
  type FeatureTask,
  type FeatureUse,
  type FeatureValue,
} from '../../registry/features/features/types.js';
import { usesAgreeCondition } from '../../registry/features/features/strategy.js';

export const WAIT_FOR_USES = 'WaitForUses';
export const CLEAR_FIELD = 'ClearField';
export const WAIT_FOR_OBJECTS_REMOVED = 'WaitForObjectsRemoved';
export const DELETE_COLLECTION = 'DeleteCollection';
export const CUSTOM = 'Custom';
/** The task types this leader runs; a task of another type blocks the transition (research A12). */
export const KNOWN_TASK_TYPES: ReadonlySet<string> = new Set([WAIT_FOR_USES, CLEAR_FIELD, WAIT_FOR_OBJECTS_REMOVED, DELETE_COLLECTION, CUSTOM]);

export const CONDITION_PROGRESSING = 'Progressing';
export const CONDITION_SETTLED = 'Settled';
export const CONDITION_TASKS_BLOCKED = 'TasksBlocked';
/** After this many failed attempts a task counts as blocked (TasksBlocked=True); it is still retried. */
export const MAX_ATTEMPTS_BEFORE_BLOCKED = 5;

/** A task as a feature author declares it: the leader copies it into status.transition.tasks. */
export interface TaskTemplate {
  readonly name: string;
  readonly type: string;
  readonly params?: Readonly<Record<string, string>>;
}

/** What a feature does on the way on and on the way off (WaitForUses is appended by the flow). */
export interface FeatureTasks {
  readonly enable?: readonly TaskTemplate[];
  readonly disable?: readonly TaskTemplate[];
}

/** What the leader's gate says of a feature it knows. */
export interface KnownFeature {
  readonly intended: FeatureValue;
  readonly source: 'Default' | 'CommandLine' | 'API';
  /** Listed in `--dynamic-features` (and marked dynamic): spec.desired may set it. */
  readonly dynamic?: boolean;
  readonly stability: string;
  readonly default: FeatureValue;
  readonly lockedToDefault: boolean;
  readonly version: string;
}

export interface FlowEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface MachineInput {
  readonly status: FeatureStatus;
  readonly generation?: number;
  /** undefined: the leader does not know the feature (declared by no live server, or a downgrade). */
  readonly known: KnownFeature | undefined;
  /** The leader's version, written as unavailableSinceVersion for a feature it does not know. */
  readonly leaderVersion: string;
  readonly tasks: FeatureTasks;
  /** The uses of live components (the leader dropped those of API servers whose identity Lease went stale). */
  readonly uses: readonly FeatureUse[];
  /** The leader's identity Lease name, written as transition.leader. */
  readonly leader: string;
  readonly evaluationPeriodSeconds: number;
  readonly now: Date;
  /** The disagreement this leader last raised an event for (one event per new disagreement). */
  readonly lastDisagreement?: string;
  /**
   * Row 11 (research A14): how long a Feature no live component declares is kept (stability
   * Unavailable) before the leader deletes it. Default DEFAULT_UNAVAILABLE_RETENTION_MS.
   */
  readonly unavailableRetentionMs?: number;
}

export interface MachineOutput {
  readonly status: FeatureStatus;
  readonly events: readonly FlowEvent[];
  /** Row 11: the retention window of an undeclared feature is over: the leader deletes the object. */
  readonly delete?: boolean;
}

/** Row 11's retention window: 7 days, a week of downgrade to come back from without losing the object. */
export const DEFAULT_UNAVAILABLE_RETENTION_MS = 7 * 24 * 3600_000;
/** The condition that times an undeclared feature's retention: False since no live component declares it. */
export const CONDITION_AVAILABLE = 'Available';

export const targetOf = (v: FeatureValue): 'On' | 'Off' => (v === 'Enabled' ? 'On' : 'Off');
const turning = (target: 'On' | 'Off'): 'TurningOn' | 'TurningOff' => (target === 'On' ? 'TurningOn' : 'TurningOff');

/** The task list of a transition toward `target`: the author's tasks, then WaitForUses (always last). */
export function transitionTasks(target: 'On' | 'Off', tasks: FeatureTasks, evaluationPeriodSeconds: number): FeatureTask[] {
  const declared = (target === 'On' ? tasks.enable : tasks.disable) ?? [];
  return [
    ...declared
      .filter((t) => t.type !== WAIT_FOR_USES)
      .map((t) => ({ name: t.name, type: t.type, ...(t.params ? { params: { ...t.params } } : {}), phase: 'Pending' })),
    { name: 'wait-for-uses', type: WAIT_FOR_USES, params: { evaluationPeriodSeconds: String(evaluationPeriodSeconds) }, phase: 'Pending' },
  ];
}

/** A transition's remaining tasks (research's T): those not Succeeded. */
export const remaining = (tasks: readonly FeatureTask[] | undefined): FeatureTask[] => (tasks ?? []).filter((t) => t.phase !== 'Succeeded');

/** The task the leader runs next: the first not Succeeded (tasks run strictly in order). */
export const headTask = (status: FeatureStatus): FeatureTask | undefined => remaining(status.transition?.tasks)[0];

function setCondition(status: FeatureStatus, c: Omit<FeatureCondition, 'lastTransitionTime'>, now: Date, generation: number | undefined): void {
  const conditions = (status.conditions ??= []);
  const i = conditions.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? conditions[i] : undefined;
  const next: FeatureCondition = {
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

const condition = (status: FeatureStatus, type: string): FeatureCondition | undefined => status.conditions?.find((c) => c.type === type);

/**
 * One evaluation of research §5.4's table (rows 1–6, 9, 10, 12; rows 7 and 8 are the task runner's,
 * row 11, retention, is not built). Returns a new status; the input is not changed.
 */
export function reconcileFeature(input: MachineInput): MachineOutput {
  // The uses are replaced by the live ones below: cloning the stored ones (up to 1,000 entries)
  // only to drop them was most of this function's cost.
  const { uses: _stored, ...rest } = input.status;
  const status: FeatureStatus = structuredClone(rest);
  const events: FlowEvent[] = [];
  const { now, generation } = input;
  status.uses = input.uses.map((u) => ({ ...u }));

  // Row 10: a feature this leader does not know keeps its object and its transition, untouched.
  // Row 11: while no live component reports a use of it either (nobody declares it), the
  // Available condition is False since then; after the retention window the object is deleted.
  if (!input.known) {
    status.stability = 'Unavailable';
    status.unavailableSinceVersion ||= input.leaderVersion;
    if (status.uses.length > 0) {
      status.conditions = (status.conditions ?? []).filter((c) => c.type !== CONDITION_AVAILABLE);
      return { status, events };
    }
    setCondition(
      status,
      {
        type: CONDITION_AVAILABLE,
        status: 'False',
        reason: 'NotDeclared',
        message: `no live component declares this feature; it is deleted ${Math.round((input.unavailableRetentionMs ?? DEFAULT_UNAVAILABLE_RETENTION_MS) / 1000)}s after this condition's lastTransitionTime unless one does again`,
      },
      now,
      generation,
    );
    const since = Date.parse(condition(status, CONDITION_AVAILABLE)?.lastTransitionTime ?? '');
    const expired = Number.isFinite(since) && now.getTime() - since >= (input.unavailableRetentionMs ?? DEFAULT_UNAVAILABLE_RETENTION_MS);
    return { status, events, ...(expired ? { delete: true } : {}) };
  }
  const k = input.known;
  delete status.unavailableSinceVersion;
  if (status.conditions?.some((c) => c.type === CONDITION_AVAILABLE)) status.conditions = status.conditions.filter((c) => c.type !== CONDITION_AVAILABLE);
  status.stability = k.stability;
  status.version = k.version;
  status.default = k.default;
  status.lockedToDefault = k.lockedToDefault;
  status.dynamic = k.dynamic === true;
  status.source = k.source;
  status.intended = k.intended;
  if (generation !== undefined) status.observedGeneration = generation;

  const target = targetOf(k.intended);
  const start = (why: string): void => {
    status.state = turning(target);
    status.transition = { target, startTime: rfc3339(now), leader: input.leader, tasks: transitionTasks(target, input.tasks, input.evaluationPeriodSeconds) };
    delete status.useEvaluationTime;
    events.push({ type: 'Normal', reason: 'FeatureTransitionStarted', message: `${status.state}: ${why}` });
  };

  switch (status.state) {
    case 'On':
    case 'Off':
      // Rows 1 and 4; row 9 (a use with the other value while settled) only shows in UsesAgree.
      if (status.state !== target) start(`intended ${k.intended} (${k.source}), state was ${status.state}`);
      else delete status.transition;
      break;
    case 'TurningOn':
    case 'TurningOff':
      if (status.transition?.target !== target) {
        // Rows 3 and 6: a reversal drops the remaining tasks and starts the other way.
        start(`intended ${k.intended} (${k.source}) reverses ${status.state}`);
      } else if (remaining(status.transition.tasks).length === 0) {
        // Rows 2 and 5.
        const took = status.transition.startTime ? ` after ${Math.max(0, Math.round((now.getTime() - Date.parse(status.transition.startTime)) / 1000))}s` : '';
        events.push({
          type: 'Normal',
          reason: 'FeatureTransitionCompleted',
          message: `${target}: ${status.transition.tasks?.length ?? 0} task(s) succeeded${took}`,
        });
        status.state = target;
        delete status.transition;
        delete status.useEvaluationTime;
      } else if (status.transition.leader !== input.leader) {
        // A new leader continues where the old one stopped (progress is in the tasks).
        status.transition.leader = input.leader;
      }
      break;
    default:
      // Row 0 / an unknown state (a newer leader's): start toward the target, so that data left
      // behind and disagreeing uses become visible (research A11).
      start(`intended ${k.intended} (${k.source})`);
  }

  // Conditions. UsesAgree: every live use reports the intended value.
  const prevAgree = condition(status, CONDITION_USES_AGREE);
  const agree = usesAgreeCondition(status.uses, prevAgree, now, generation, k.intended);
  setCondition(status, agree, now, generation);
  // Row 9's event, once per disagreement: the uses subresource may have turned the condition False
  // before the leader looked, so the leader remembers what it said rather than trusting the flip.
  if (agree.status === 'False' && input.lastDisagreement !== agree.message) {
    events.push({ type: 'Warning', reason: 'FeatureUsesDisagree', message: agree.message ?? '' });
  }
  const transitional = status.state === 'TurningOn' || status.state === 'TurningOff';
  setCondition(
    status,
    transitional
      ? { type: CONDITION_PROGRESSING, status: 'True', reason: status.state, message: progressMessage(status) }
      : { type: CONDITION_PROGRESSING, status: 'False', reason: 'AsExpected', message: `state ${status.state}` },
    now,
    generation,
  );
  setCondition(
    status,
    !transitional && agree.status === 'True'
      ? { type: CONDITION_SETTLED, status: 'True', reason: 'Settled', message: `state ${status.state} and every use agrees` }
      : {
          type: CONDITION_SETTLED,
          status: 'False',
          reason: transitional ? 'TransitionInProgress' : 'UsesDisagree',
          message: transitional ? progressMessage(status) : (agree.message ?? ''),
        },
    now,
    generation,
  );
  const blocked = remaining(status.transition?.tasks).find(
    (t) => t.phase === 'Blocked' || (t.phase === 'Failed' && (t.attempts ?? 0) >= MAX_ATTEMPTS_BEFORE_BLOCKED),
  );
  setCondition(
    status,
    blocked
      ? {
          type: CONDITION_TASKS_BLOCKED,
          status: 'True',
          reason: blocked.phase === 'Blocked' ? 'TaskBlocked' : 'TaskFailing',
          message: `task ${blocked.name}: ${blocked.message ?? blocked.phase}`,
        }
      : { type: CONDITION_TASKS_BLOCKED, status: 'False', reason: 'AsExpected', message: 'no task is blocked' },
    now,
    generation,
  );
  return { status, events };
}

function progressMessage(status: FeatureStatus): string {
  const tasks = status.transition?.tasks ?? [];
  const head = remaining(tasks)[0];
  const done = tasks.length - remaining(tasks).length;
  return `${done} of ${tasks.length} task(s) done${head ? `; ${head.name} (${head.type}) ${head.phase ?? 'Pending'}${head.message ? `: ${head.message}` : ''}` : ''}`;
}

/** What WaitForUses decides at one evaluation (research §5.4's algorithm, with live API servers). */
export interface UsesVerdict {
  readonly done: boolean;
  readonly message: string;
}

/**
 * Whether the uses agree with `value`: every live use reports it, and every live API server (by
 * identity) has reported at all (a server that has not reported yet may still run the old value).
 */
export function usesVerdict(uses: readonly FeatureUse[], value: FeatureValue, liveApiServers: readonly string[]): UsesVerdict {
  const wrong = uses.filter((u) => u.value !== value);
  const reported = new Set(uses.map((u) => u.identity));
  const silent = liveApiServers.filter((id) => !reported.has(id));
  if (wrong.length === 0 && silent.length === 0) return { done: true, message: `every use (${uses.length}) reports ${value}` };
  const parts: string[] = [];
  if (wrong.length) {
    const first = wrong[0]!;
    parts.push(
      `${wrong.length} use(s) still report ${first.value} (component=${first.component} identity=${first.identity}${first.version ? ` version=${first.version}` : ''})`,
    );
  }
  if (silent.length) parts.push(`${silent.length} live API server(s) have not reported (${silent[0]})`);
  return { done: false, message: parts.join('; ') };
}
