// research §5.4's transition table, row by row, on the pure state machine.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FeatureStatus, FeatureUse } from '../../registry/features/features/types.js';
import { headTask, reconcileFeature, usesVerdict, type KnownFeature, type MachineInput } from './machine.js';

const now = new Date('2026-08-01T10:00:00Z');
const on: KnownFeature = { intended: 'Enabled', source: 'CommandLine', stability: 'Beta', default: 'Disabled', lockedToDefault: false, version: '1.33' };
const off: KnownFeature = { ...on, intended: 'Disabled', source: 'Default' };
const clear = { name: 'clear-leases', type: 'ClearField', params: { resource: 'coordination.k8s.io/v1/leases', fieldPath: '.spec.strategy' } };
const use = (value: 'Enabled' | 'Disabled', identity = 'a'): FeatureUse => ({ component: 'kube-apiserver', identity, value });

const input = (status: FeatureStatus, known: KnownFeature | undefined, uses: FeatureUse[] = []): MachineInput => ({
  status,
  generation: 1,
  known,
  leaderVersion: 'v1.33.0',
  tasks: { disable: [clear] },
  uses,
  leader: 'apiserver-x',
  evaluationPeriodSeconds: 60,
  now,
});
const cond = (s: FeatureStatus, type: string) => s.conditions?.find((c) => c.type === type);
const tasksOf = (s: FeatureStatus) => (s.transition?.tasks ?? []).map((t) => `${t.type}:${t.phase}`);
const done = (s: FeatureStatus): FeatureStatus => ({
  ...s,
  transition: { ...s.transition!, tasks: s.transition!.tasks!.map((t) => ({ ...t, phase: 'Succeeded' })) },
});

describe('feature state machine (research §5.4)', () => {
  const rows: { row: string; status: FeatureStatus; known: KnownFeature; state: string; tasks: string[]; event?: string }[] = [
    { row: '0: no state, intended Enabled', status: {}, known: on, state: 'TurningOn', tasks: ['WaitForUses:Pending'], event: 'FeatureTransitionStarted' },
    {
      row: '0: no state, intended Disabled',
      status: {},
      known: off,
      state: 'TurningOff',
      tasks: ['ClearField:Pending', 'WaitForUses:Pending'],
      event: 'FeatureTransitionStarted',
    },
    {
      row: '1: Off, intended Enabled',
      status: { state: 'Off' },
      known: on,
      state: 'TurningOn',
      tasks: ['WaitForUses:Pending'],
      event: 'FeatureTransitionStarted',
    },
    {
      row: '4: On, intended Disabled',
      status: { state: 'On' },
      known: off,
      state: 'TurningOff',
      tasks: ['ClearField:Pending', 'WaitForUses:Pending'],
      event: 'FeatureTransitionStarted',
    },
    { row: 'On, intended Enabled: settled', status: { state: 'On' }, known: on, state: 'On', tasks: [] },
    { row: 'Off, intended Disabled: settled', status: { state: 'Off' }, known: off, state: 'Off', tasks: [] },
    {
      row: 'an unknown state is started over',
      status: { state: 'Sideways' },
      known: on,
      state: 'TurningOn',
      tasks: ['WaitForUses:Pending'],
      event: 'FeatureTransitionStarted',
    },
  ];
  for (const r of rows) {
    it(`row ${r.row} → ${r.state}`, () => {
      const out = reconcileFeature(input(r.status, r.known));
      assert.equal(out.status.state, r.state);
      assert.deepEqual(tasksOf(out.status), r.tasks);
      assert.deepEqual(
        out.events.map((e) => e.reason),
        r.event ? [r.event] : [],
      );
      assert.equal(out.status.intended, r.known.intended);
      assert.equal(out.status.source, r.known.source);
      assert.equal(cond(out.status, 'Progressing')?.status, r.state.startsWith('Turning') ? 'True' : 'False');
      if (r.state.startsWith('Turning')) assert.equal(out.status.transition?.leader, 'apiserver-x');
    });
  }

  it('rows 2 and 5: every task succeeded → On / Off, transition cleared, Settled', () => {
    for (const [known, state] of [
      [on, 'On'],
      [off, 'Off'],
    ] as const) {
      const started = reconcileFeature(input({ state: state === 'On' ? 'Off' : 'On' }, known)).status;
      const out = reconcileFeature(input(done(started), known));
      assert.equal(out.status.state, state);
      assert.equal(out.status.transition, undefined);
      assert.deepEqual(
        out.events.map((e) => e.reason),
        ['FeatureTransitionCompleted'],
      );
      assert.equal(cond(out.status, 'Settled')?.status, 'True');
    }
  });

  it('rows 3 and 6: a reversal mid-transition drops the remaining tasks and turns the other way', () => {
    const off1 = reconcileFeature(input({ state: 'On' }, off)).status;
    const back = reconcileFeature(input(off1, on));
    assert.equal(back.status.state, 'TurningOn');
    assert.deepEqual(tasksOf(back.status), ['WaitForUses:Pending']);
    const again = reconcileFeature(input(back.status, off));
    assert.equal(again.status.state, 'TurningOff');
    assert.deepEqual(tasksOf(again.status), ['ClearField:Pending', 'WaitForUses:Pending']);
  });

  it('a transition in progress keeps its tasks and progress; a new leader takes it over', () => {
    const started = reconcileFeature(input({ state: 'On' }, off)).status;
    started.transition!.tasks![0] = { ...started.transition!.tasks![0]!, phase: 'Running', progress: { continue: 'abc', processed: 500, changed: 7 } };
    const out = reconcileFeature({ ...input(started, off), leader: 'apiserver-y' });
    assert.equal(out.status.state, 'TurningOff');
    assert.deepEqual(out.status.transition!.tasks![0]!.progress, { continue: 'abc', processed: 500, changed: 7 });
    assert.equal(out.status.transition!.leader, 'apiserver-y');
    assert.equal(out.status.transition!.startTime, started.transition!.startTime);
    assert.equal(headTask(out.status)?.name, 'clear-leases');
    assert.deepEqual(out.events, []);
  });

  it('row 7: a blocked or repeatedly failing head task sets TasksBlocked', () => {
    const started = reconcileFeature(input({ state: 'On' }, off)).status;
    started.transition!.tasks![0] = { ...started.transition!.tasks![0]!, phase: 'Failed', attempts: 5, message: 'boom' };
    assert.equal(cond(reconcileFeature(input(started, off)).status, 'TasksBlocked')?.status, 'True');
    started.transition!.tasks![0] = { ...started.transition!.tasks![0], phase: 'Failed', attempts: 1 };
    assert.equal(cond(reconcileFeature(input(started, off)).status, 'TasksBlocked')?.status, 'False');
    started.transition!.tasks![0] = { ...started.transition!.tasks![0], phase: 'Blocked', message: 'waiting' };
    assert.match(cond(reconcileFeature(input(started, off)).status, 'TasksBlocked')?.message ?? '', /clear-leases: waiting/);
  });

  it('row 9: settled with a use of the other value → UsesAgree=False, Settled=False, an event, no state change', () => {
    const out = reconcileFeature(input({ state: 'On' }, on, [use('Enabled', 'a'), use('Disabled', 'b')]));
    assert.equal(out.status.state, 'On');
    assert.equal(cond(out.status, 'UsesAgree')?.status, 'False');
    assert.equal(cond(out.status, 'Settled')?.status, 'False');
    assert.deepEqual(
      out.events.map((e) => e.reason),
      ['FeatureUsesDisagree'],
    );
    // Said once: the next evaluation with the same uses raises no new event.
    const said = out.events[0]!.message;
    assert.equal(said, 'uses disagree: 1 Enabled, 1 Disabled');
    assert.deepEqual(reconcileFeature({ ...input(out.status, on, [use('Enabled', 'a'), use('Disabled', 'b')]), lastDisagreement: said }).events, []);
    // Uses that agree with each other but not with the intended value disagree too.
    assert.equal(cond(reconcileFeature(input({ state: 'On' }, on, [use('Disabled')])).status, 'UsesAgree')?.status, 'False');
  });

  it('row 10: a feature the leader does not know is kept as is, Unavailable since the leader’s version', () => {
    const status: FeatureStatus = {
      state: 'TurningOff',
      intended: 'Disabled',
      transition: { target: 'Off', tasks: [{ name: 'x', type: 'Future', phase: 'Pending' }] },
    };
    const out = reconcileFeature(input(status, undefined));
    assert.equal(out.status.stability, 'Unavailable');
    assert.equal(out.status.unavailableSinceVersion, 'v1.33.0');
    assert.equal(out.status.state, 'TurningOff');
    assert.deepEqual(out.status.transition, status.transition);
    assert.deepEqual(out.events, []);
  });

  it('row 11: undeclared (unknown to the leader, no live use) for the retention window: deleted; a use resets the clock', () => {
    const hour = 3600_000;
    const first = reconcileFeature({ ...input({ state: 'On' }, undefined), unavailableRetentionMs: 2 * hour });
    const available = cond(first.status, 'Available');
    assert.equal(available?.status, 'False');
    assert.equal(available?.reason, 'NotDeclared');
    assert.equal(first.delete, undefined);
    const later = (ms: number) => reconcileFeature({ ...input(first.status, undefined), now: new Date(now.getTime() + ms), unavailableRetentionMs: 2 * hour });
    assert.equal(later(hour).delete, undefined);
    assert.equal(cond(later(hour).status, 'Available')?.lastTransitionTime, available?.lastTransitionTime);
    assert.equal(later(2 * hour).delete, true);
    // Default window: 7 days.
    assert.equal(reconcileFeature({ ...input(first.status, undefined), now: new Date(now.getTime() + 6 * 24 * hour) }).delete, undefined);
    assert.equal(reconcileFeature({ ...input(first.status, undefined), now: new Date(now.getTime() + 7 * 24 * hour) }).delete, true);
    // A live component reports a use (it declares the feature): kept, the clock is gone.
    const used = reconcileFeature({
      ...input(first.status, undefined, [use('Enabled')]),
      now: new Date(now.getTime() + 3 * hour),
      unavailableRetentionMs: 2 * hour,
    });
    assert.equal(used.delete, undefined);
    assert.equal(cond(used.status, 'Available'), undefined);
    // Known again (an upgrade back): the condition goes.
    assert.equal(cond(reconcileFeature(input(first.status, on)).status, 'Available'), undefined);
  });

  it('row 12: a locked feature is driven to its default like any other (the gate answers the default)', () => {
    const locked: KnownFeature = { ...on, lockedToDefault: true, default: 'Enabled', source: 'Default', stability: 'Universal' };
    const out = reconcileFeature(input({ state: 'Off' }, locked));
    assert.equal(out.status.state, 'TurningOn');
    assert.equal(out.status.lockedToDefault, true);
  });

  it('WaitForUses verdict: every live use on the target, every live API server reported', () => {
    assert.equal(usesVerdict([use('Disabled', 'a')], 'Disabled', ['a']).done, true);
    assert.equal(usesVerdict([], 'Disabled', []).done, true);
    const wrong = usesVerdict([use('Disabled', 'a'), use('Enabled', 'b')], 'Disabled', ['a', 'b']);
    assert.equal(wrong.done, false);
    assert.match(wrong.message, /1 use\(s\) still report Enabled \(component=kube-apiserver identity=b\)/);
    const silent = usesVerdict([use('Disabled', 'a')], 'Disabled', ['a', 'c']);
    assert.match(silent.message, /1 live API server\(s\) have not reported \(c\)/);
  });
});
