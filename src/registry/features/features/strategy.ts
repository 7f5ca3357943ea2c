// The Feature strategy: spec is an administrator's (only `desired`), status is the server flow's
// and changes only through /status, uses change only through /uses (folded in by the server, one
// entry per reporting instance, without a managedFields entry per reporter).
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { rfc3339 } from '../../../apimachinery/times.js';
import { nameIsPathSegment } from '../../../apimachinery/validation/names.js';
import { keepStoredField, type Strategy, type SubresourceStrategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import {
  CONDITION_STATUSES,
  CONDITION_USES_AGREE,
  FEATURE_SOURCES,
  FEATURE_STABILITIES,
  FEATURE_STATES,
  FEATURE_VALUES,
  MAX_COMPONENT_LENGTH,
  MAX_CONDITIONS,
  MAX_IDENTITY_LENGTH,
  MAX_TASKS,
  MAX_USES,
  MAX_VERSION_LENGTH,
  TASK_PHASES,
  type FeatureCondition,
  type FeatureObject,
  type FeatureStatus,
  type FeatureUse,
} from './types.js';

const asFeature = (o: KubeObject): FeatureObject => o;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validateEnum(issues: FieldIssue[], path: string, v: unknown, values: readonly string[], required = false): void {
  if (v === undefined || v === null || v === '') {
    if (required) issues.push(fieldIssue.required(path, ''));
    return;
  }
  if (typeof v !== 'string' || !values.includes(v)) issues.push(fieldIssue.notSupported(path, v, values));
}

function validateString(issues: FieldIssue[], path: string, v: unknown, maxLength: number, required: boolean): void {
  if (v === undefined || v === null || v === '') {
    if (required) issues.push(fieldIssue.required(path, ''));
    return;
  }
  if (typeof v !== 'string') issues.push(fieldIssue.typeInvalid(path, v, 'must be a string'));
  else if (v.length > maxLength) issues.push(fieldIssue.tooLong(path, v, maxLength));
}

function validateTime(issues: FieldIssue[], path: string, v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) issues.push(fieldIssue.invalid(path, v, 'must be an RFC 3339 time'));
}

function validateCount(issues: FieldIssue[], path: string, v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v)) issues.push(fieldIssue.typeInvalid(path, v, 'must be an integer'));
  else if (v < 0) issues.push(fieldIssue.invalid(path, v, 'must be greater than or equal to 0'));
}

function validateSpec(o: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = (o as Record<string, unknown>)['spec'];
  if (spec === undefined || spec === null) return issues;
  if (!isObject(spec)) return [fieldIssue.typeInvalid('spec', spec, 'must be an object')];
  validateEnum(issues, 'spec.desired', spec['desired'], FEATURE_VALUES);
  return issues;
}

/** One use as a component posts it (`path` '' for a FeatureUse body) or as stored in status.uses[i]. */
export function validateUse(u: unknown, path: string): FieldIssue[] {
  const at = (f: string): string => (path ? `${path}.${f}` : f);
  if (!isObject(u)) return [fieldIssue.typeInvalid(path || 'use', u, 'must be an object')];
  const issues: FieldIssue[] = [];
  validateString(issues, at('component'), u['component'], MAX_COMPONENT_LENGTH, true);
  validateString(issues, at('identity'), u['identity'], MAX_IDENTITY_LENGTH, true);
  validateString(issues, at('version'), u['version'], MAX_VERSION_LENGTH, false);
  validateEnum(issues, at('value'), u['value'], FEATURE_VALUES, true);
  validateTime(issues, at('reportTime'), u['reportTime']);
  return issues;
}

const useKey = (u: Record<string, unknown>): string | undefined =>
  typeof u['component'] === 'string' && typeof u['identity'] === 'string' ? `${u['component']}\u0000${u['identity']}` : undefined;
const USE_FIELDS = ['component', 'identity', 'version', 'value', 'reportTime'] as const;

/**
 * The entries of `old` (the stored uses) by (component, identity): an entry of an update equal to
 * the stored one in every field a use has was valid when stored, and is not checked again
 * (ratcheting, as upstream's validation of unchanged values). A Feature holds up to 1,000 uses and
 * a report changes one: checking every entry on every write was the write's largest cost after
 * the copy.
 */
function storedUses(old: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const uses = isObject(old) && isObject(old['status']) ? old['status']['uses'] : undefined;
  if (!Array.isArray(uses)) return out;
  for (const u of uses) {
    const k = isObject(u) ? useKey(u) : undefined;
    if (k !== undefined) out.set(k, u as Record<string, unknown>);
  }
  return out;
}

function validateUses(uses: unknown, issues: FieldIssue[], old?: unknown): void {
  if (uses === undefined || uses === null) return;
  if (!Array.isArray(uses)) {
    issues.push(fieldIssue.typeInvalid('status.uses', uses, 'must be a list'));
    return;
  }
  if (uses.length > MAX_USES) issues.push(fieldIssue.tooMany('status.uses', uses.length, MAX_USES));
  const before = storedUses(old);
  const seen = new Set<string>();
  uses.forEach((u, i) => {
    const path = `status.uses[${i}]`;
    const k = isObject(u) ? useKey(u) : undefined;
    const prev = k !== undefined ? before.get(k) : undefined;
    const unchanged = prev !== undefined && USE_FIELDS.every((f) => (u as Record<string, unknown>)[f] === prev[f]);
    const found = unchanged ? [] : validateUse(u, path);
    issues.push(...found);
    if (found.length === 0) {
      const use = u as FeatureUse;
      const key = `${use.component}\u0000${use.identity}`;
      if (seen.has(key)) issues.push(fieldIssue.duplicate(path, { component: use.component, identity: use.identity }));
      seen.add(key);
    }
  });
}

function validateConditions(conditions: unknown, issues: FieldIssue[]): void {
  if (conditions === undefined || conditions === null) return;
  if (!Array.isArray(conditions)) {
    issues.push(fieldIssue.typeInvalid('status.conditions', conditions, 'must be a list'));
    return;
  }
  if (conditions.length > MAX_CONDITIONS) issues.push(fieldIssue.tooMany('status.conditions', conditions.length, MAX_CONDITIONS));
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const path = `status.conditions[${i}]`;
    if (!isObject(c)) {
      issues.push(fieldIssue.typeInvalid(path, c, 'must be an object'));
      return;
    }
    validateString(issues, `${path}.type`, c['type'], 316, true);
    validateEnum(issues, `${path}.status`, c['status'], CONDITION_STATUSES, true);
    validateString(issues, `${path}.reason`, c['reason'], 1024, false);
    validateString(issues, `${path}.message`, c['message'], 32768, false);
    validateTime(issues, `${path}.lastTransitionTime`, c['lastTransitionTime']);
    validateCount(issues, `${path}.observedGeneration`, c['observedGeneration']);
    if (typeof c['type'] === 'string') {
      if (seen.has(c['type'])) issues.push(fieldIssue.duplicate(`${path}.type`, c['type']));
      seen.add(c['type']);
    }
  });
}

function validateTransition(t: unknown, issues: FieldIssue[]): void {
  if (t === undefined || t === null) return;
  if (!isObject(t)) {
    issues.push(fieldIssue.typeInvalid('status.transition', t, 'must be an object'));
    return;
  }
  validateEnum(issues, 'status.transition.target', t['target'], ['On', 'Off']);
  validateTime(issues, 'status.transition.startTime', t['startTime']);
  validateString(issues, 'status.transition.leader', t['leader'], MAX_IDENTITY_LENGTH, false);
  const tasks = t['tasks'];
  if (tasks === undefined || tasks === null) return;
  if (!Array.isArray(tasks)) {
    issues.push(fieldIssue.typeInvalid('status.transition.tasks', tasks, 'must be a list'));
    return;
  }
  if (tasks.length > MAX_TASKS) issues.push(fieldIssue.tooMany('status.transition.tasks', tasks.length, MAX_TASKS));
  const names = new Set<string>();
  tasks.forEach((task, i) => {
    const path = `status.transition.tasks[${i}]`;
    if (!isObject(task)) {
      issues.push(fieldIssue.typeInvalid(path, task, 'must be an object'));
      return;
    }
    validateString(issues, `${path}.name`, task['name'], 253, true);
    // Any type is stored (a newer leader's type must survive an older one); only its shape is checked.
    validateString(issues, `${path}.type`, task['type'], 253, true);
    validateEnum(issues, `${path}.phase`, task['phase'], TASK_PHASES);
    validateCount(issues, `${path}.attempts`, task['attempts']);
    validateTime(issues, `${path}.lastAttemptTime`, task['lastAttemptTime']);
    const params = task['params'];
    if (params !== undefined && params !== null) {
      if (!isObject(params)) issues.push(fieldIssue.typeInvalid(`${path}.params`, params, 'must be an object'));
      else
        for (const [k, v] of Object.entries(params))
          if (typeof v !== 'string') issues.push(fieldIssue.typeInvalid(`${path}.params[${k}]`, v, 'must be a string'));
    }
    const progress = task['progress'];
    if (progress !== undefined && progress !== null) {
      if (!isObject(progress)) issues.push(fieldIssue.typeInvalid(`${path}.progress`, progress, 'must be an object'));
      else {
        validateCount(issues, `${path}.progress.processed`, progress['processed']);
        validateCount(issues, `${path}.progress.changed`, progress['changed']);
        if (progress['continue'] !== undefined && typeof progress['continue'] !== 'string') {
          issues.push(fieldIssue.typeInvalid(`${path}.progress.continue`, progress['continue'], 'must be a string'));
        }
      }
    }
    if (typeof task['name'] === 'string') {
      if (names.has(task['name'])) issues.push(fieldIssue.duplicate(`${path}.name`, task['name']));
      names.add(task['name']);
    }
  });
}

/**
 * What a status write may hold: the §5.2 shape with its enums, for the leader of the next step.
 * With `old` (an update), uses equal to stored ones are not checked again.
 */
function validateStatus(o: KubeObject, old?: KubeObject): FieldIssue[] {
  const status = (o as Record<string, unknown>)['status'];
  if (status === undefined || status === null) return [];
  if (!isObject(status)) return [fieldIssue.typeInvalid('status', status, 'must be an object')];
  const issues: FieldIssue[] = [];
  validateEnum(issues, 'status.state', status['state'], FEATURE_STATES);
  validateEnum(issues, 'status.intended', status['intended'], FEATURE_VALUES);
  validateEnum(issues, 'status.default', status['default'], FEATURE_VALUES);
  validateEnum(issues, 'status.source', status['source'], FEATURE_SOURCES);
  validateEnum(issues, 'status.stability', status['stability'], FEATURE_STABILITIES);
  validateString(issues, 'status.version', status['version'], MAX_VERSION_LENGTH, false);
  validateString(issues, 'status.unavailableSinceVersion', status['unavailableSinceVersion'], MAX_VERSION_LENGTH, false);
  validateCount(issues, 'status.observedGeneration', status['observedGeneration']);
  validateTime(issues, 'status.useEvaluationTime', status['useEvaluationTime']);
  validateTime(issues, 'status.lastAnnouncedTime', status['lastAnnouncedTime']);
  for (const f of ['lockedToDefault', 'dynamic']) {
    if (status[f] !== undefined && status[f] !== null && typeof status[f] !== 'boolean')
      issues.push(fieldIssue.typeInvalid(`status.${f}`, status[f], 'must be a boolean'));
  }
  validateTransition(status['transition'], issues);
  validateUses(status['uses'], issues, old);
  validateConditions(status['conditions'], issues);
  return issues;
}

const statusOf = (o: KubeObject): FeatureStatus => asFeature(o).status ?? {};

/** `1/2 clear-leases.coordination.k8s.io Running 500/1200` (processed, then changed): the head task. */
function taskCell(s: FeatureStatus): string {
  const tasks = Array.isArray(s.transition?.tasks) ? s.transition.tasks : [];
  const head = tasks.find((t) => t.phase !== 'Succeeded');
  if (!head) return '<none>';
  const done = tasks.filter((t) => t.phase === 'Succeeded').length;
  const p = head.progress;
  const progress = p && (p.processed !== undefined || p.changed !== undefined) ? ` processed=${p.processed ?? 0} changed=${p.changed ?? 0}` : '';
  return `${done}/${tasks.length} ${head.name} ${head.phase ?? 'Pending'}${progress}`;
}

function bumpGeneration(o: KubeObject, old: KubeObject): void {
  const gen = old.metadata?.generation ?? 1;
  const changed = JSON.stringify((o as Record<string, unknown>)['spec'] ?? null) !== JSON.stringify((old as Record<string, unknown>)['spec'] ?? null);
  (o.metadata ??= {}).generation = changed ? gen + 1 : gen;
}

/**
 * UsesAgree: True when every reported use has the same value and, once a value is intended
 * (status.intended, the leader's), that value. The uses subresource recomputes it on each report
 * from the stored intended value; the leader recomputes it over the uses of live components.
 */
export function usesAgreeCondition(
  uses: readonly FeatureUse[],
  previous: FeatureCondition | undefined,
  now: Date,
  generation: number | undefined,
  intended?: string,
): FeatureCondition {
  const values = new Set(uses.map((u) => u.value));
  const agreeAmong = values.size <= 1;
  const agree = agreeAmong && (intended === undefined || uses.length === 0 || values.has(intended as FeatureUse['value']));
  const status = agree ? 'True' : 'False';
  const reason = uses.length === 0 ? 'NoUses' : agree ? 'UsesAgree' : 'UsesDisagree';
  const message =
    uses.length === 0
      ? 'no component reported a use'
      : agree
        ? `${uses.length} use(s) report ${[...values][0]}`
        : agreeAmong
          ? `${uses.length} use(s) report ${[...values][0]}, intended ${intended}`
          : `uses disagree: ${['Enabled', 'Disabled'].map((v) => `${uses.filter((u) => u.value === v).length} ${v}`).join(', ')}`;
  return {
    type: CONDITION_USES_AGREE,
    status,
    reason,
    message,
    lastTransitionTime: previous && previous.status === status && previous.lastTransitionTime ? previous.lastTransitionTime : rfc3339(now),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/**
 * Folds one reported use into a Feature: the entry of the same (component, identity) is replaced
 * when its version or value differ and kept (with its first report time) when equal. Returns the
 * new object and the use as stored, or `changed: false` when the report is already there.
 */
export function foldUse(feature: KubeObject, use: FeatureUse, now: Date): { object: KubeObject; stored: FeatureUse; changed: boolean; created: boolean } {
  const old = (feature as KubeObject & FeatureObject).status;
  const at = (old?.uses ?? []).findIndex((u) => u.component === use.component && u.identity === use.identity);
  const prev = at >= 0 ? old!.uses![at] : undefined;
  if (prev && prev.value === use.value && (prev.version ?? '') === (use.version ?? '')) {
    return { object: feature, stored: prev, changed: false, created: false };
  }
  // A copy of the path that changes only (status, its uses and conditions): the entries are
  // replaced, never changed in place, so the rest is shared with `feature`. A Feature holds up to
  // 1,000 uses, and a batch of reports folds one after another: a deep copy each was the cost.
  const next = { ...feature, status: { ...old, uses: [...(old?.uses ?? [])], conditions: [...(old?.conditions ?? [])] } } as KubeObject & FeatureObject;
  const status = next.status!;
  const uses = status.uses!;
  const stored: FeatureUse = {
    component: use.component,
    identity: use.identity,
    ...(use.version ? { version: use.version } : {}),
    value: use.value,
    reportTime: rfc3339(now),
  };
  if (at >= 0) uses[at] = stored;
  else uses.push(stored);
  const conditions = (status.conditions ??= []);
  const ci = conditions.findIndex((c) => c.type === CONDITION_USES_AGREE);
  const cond = usesAgreeCondition(uses, ci >= 0 ? conditions[ci] : undefined, now, next.metadata?.generation, status.intended);
  if (ci >= 0) conditions[ci] = cond;
  else conditions.push(cond);
  return { object: next, stored, changed: true, created: at < 0 };
}

const usesSubresource: SubresourceStrategy = {
  // What a uses write changes: status.uses and the UsesAgree condition, nothing else.
  merge(incoming, current) {
    // Copies of what changes only (the object and its status; uses and conditions are replaced,
    // never changed in place): a deep copy of a Feature with hundreds of uses on every report was
    // the report's largest cost.
    const next = { ...current, metadata: { ...current.metadata }, status: { ...asFeature(current).status } } as KubeObject & FeatureObject;
    const inStatus = asFeature(incoming).status ?? {};
    const status = next.status!;
    if (inStatus.uses) status.uses = inStatus.uses;
    else delete status.uses;
    const agree = inStatus.conditions?.find((c) => c.type === CONDITION_USES_AGREE);
    const others = (status.conditions ?? []).filter((c) => c.type !== CONDITION_USES_AGREE);
    status.conditions = agree ? [...others, agree] : others;
    if (status.conditions.length === 0) delete status.conditions;
    return next;
  },
  validateUpdate: (o, old) => validateStatus(o, old),
  report: {
    validate: (body) => validateUse(body, ''),
    fold(body, current, now) {
      const b = body as Record<string, unknown>;
      const use: FeatureUse = {
        component: b['component'] as string,
        identity: b['identity'] as string,
        ...(typeof b['version'] === 'string' && b['version'] ? { version: b['version'] } : {}),
        value: b['value'] as FeatureUse['value'],
      };
      const out = foldUse(current, use, now);
      if (statusOf(out.object).uses!.length > MAX_USES) {
        return { issues: [fieldIssue.tooMany('status.uses', statusOf(out.object).uses!.length, MAX_USES)] };
      }
      return { object: out.object, answer: { apiVersion: body.apiVersion, kind: body.kind, ...out.stored }, created: out.created, changed: out.changed };
    },
  },
};

const cell = (v: unknown): string => (typeof v === 'string' ? v : '');

export const featureStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  // The name is the gate's exact name (CamelCase): path-segment rules, as RBAC's names.
  nameValidator: nameIsPathSegment,
  prepareForCreate(o) {
    delete (o as Record<string, unknown>)['status'];
    (o.metadata ??= {}).generation = 1;
  },
  prepareForUpdate(o, old) {
    keepStoredField(o, old, 'status');
    bumpGeneration(o, old);
  },
  validate: validateSpec,
  validateUpdate: (o) => validateSpec(o),
  resetFields: { '': [['status']], status: [['spec']], uses: [['spec']] },
  subresources: {
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
      validateUpdate: (o, old) => validateStatus(o, old),
    },
    uses: usesSubresource,
  },
  tableColumns: [
    nameColumn,
    { name: 'State', type: 'string', description: 'On, Off, TurningOn or TurningOff.', priority: 0 },
    { name: 'Intended', type: 'string', description: 'The value the server flow drives the feature toward.', priority: 0 },
    { name: 'Source', type: 'string', description: 'Where the intended value comes from: Default, CommandLine or API.', priority: 0 },
    { name: 'Stability', type: 'string', description: "The feature's stage at the leader's version.", priority: 0 },
    { name: 'Uses Agree', type: 'string', description: 'Whether every reported use has the same value (the UsesAgree condition).', priority: 0 },
    ageColumn,
    { name: 'Uses', type: 'integer', description: 'How many component instances reported a use.', priority: 1 },
    { name: 'Version', type: 'string', description: "The leader's (emulated) version.", priority: 1 },
    { name: 'Task', type: 'string', description: "The transition's current task: tasks done of all, its name, phase and progress.", priority: 1 },
  ],
  tableCells(o) {
    const s = statusOf(o);
    return [
      o.metadata?.name ?? '',
      cell(s.state),
      cell(s.intended),
      cell(s.source),
      cell(s.stability),
      cell(s.conditions?.find((c) => c.type === CONDITION_USES_AGREE)?.status),
      ageSince(o.metadata?.creationTimestamp),
      Array.isArray(s.uses) ? s.uses.length : 0,
      cell(s.version),
      taskCell(s),
    ];
  },
};
