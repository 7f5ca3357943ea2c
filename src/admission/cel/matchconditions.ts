// matchConditions of webhooks and policies (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions):
// every condition must be true for the webhook to be called or the policy to apply. The first false
// one decides "no match" (even after errors); otherwise errors follow the failure policy: Fail makes
// them the answer, Ignore makes them "no match".
import { settled, type Checks } from './authz.js';
import { compileExpression, evaluateExpression, OutOfBudget, type Activation, type Compiled, type Declarations } from './compile.js';

/** celconfig.RuntimeCELCostBudgetMatchConditions. */
export const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS = 1_000_000;

export interface MatchConditionSpec {
  readonly name?: string;
  readonly expression?: string;
}

export interface CompiledMatchConditions {
  readonly conditions: readonly { readonly name: string; readonly compiled: Compiled }[];
  readonly failOpen: boolean;
}

export type MatchResult = { readonly matches: true } | { readonly matches: false; readonly failedCondition?: string } | { readonly error: string };

/** Whose matchConditions these are, as upstream's admission metrics label them. */
export interface MatchConditionLabels {
  readonly name: string;
  /** `webhook` or `policy`. */
  readonly kind: string;
  /** `validating` / `admit` for webhooks, `validate` / `admit` for policies. */
  readonly type: string;
  readonly operation: string;
}

/**
 * apiserver_admission_match_condition_evaluation_errors_total (a condition that errored),
 * _exclusions_total (a webhook not called because a condition was false; the dispatcher counts it)
 * and _evaluation_seconds (each evaluation).
 */
export interface MatchConditionObserver {
  evaluationError(l: MatchConditionLabels): void;
  exclusion(l: MatchConditionLabels): void;
  seconds(l: MatchConditionLabels, seconds: number): void;
}

/** Where an evaluation's metrics go, and with which labels. */
export interface MatchConditionMetrics {
  readonly observer: MatchConditionObserver;
  readonly labels: MatchConditionLabels;
}

/** The metrics of one evaluation, when there is an observer. */
export const matchConditionMetrics = (observer: MatchConditionObserver | undefined, labels: MatchConditionLabels): MatchConditionMetrics | undefined =>
  observer ? { observer, labels } : undefined;

/**
 * Observations kept back until the evaluation they come from is the one that counts: an evaluation
 * that left authorizer checks pending runs again (cel/authz.ts `settled`), and only the last run's
 * observations are passed on.
 */
class HeldObservations implements MatchConditionObserver {
  private held: (() => void)[] = [];

  constructor(private readonly to: MatchConditionObserver) {}

  evaluationError(l: MatchConditionLabels): void {
    this.held.push(() => this.to.evaluationError(l));
  }

  exclusion(l: MatchConditionLabels): void {
    this.held.push(() => this.to.exclusion(l));
  }

  seconds(l: MatchConditionLabels, seconds: number): void {
    this.held.push(() => this.to.seconds(l, seconds));
  }

  /** Forgets what was observed: the evaluation runs again. */
  drop(): void {
    this.held = [];
  }

  /** Passes what was observed on. */
  release(): void {
    for (const f of this.held) f();
    this.held = [];
  }
}

/**
 * `settled` (authz.ts) for an evaluation that reports match-condition metrics: it runs again while
 * `authorizer` checks wait for their answers (`waited` told the milliseconds, which deadlines do not
 * count), and only the last run's observations reach `observer`. `evaluate` gets the observer to
 * report to (undefined when there is none).
 */
export function settledObserving<T>(
  checks: Checks,
  observer: MatchConditionObserver | undefined,
  evaluate: (observer: MatchConditionObserver | undefined) => T,
  waited: (ms: number) => void,
): T | Promise<T> {
  const held = observer && new HeldObservations(observer);
  const r = settled(
    checks,
    () => {
      held?.drop();
      return evaluate(held);
    },
    waited,
  );
  if (!(r instanceof Promise)) {
    held?.release();
    return r;
  }
  return r.then((v) => {
    held?.release();
    return v;
  });
}

export function compileMatchConditions(
  specs: readonly MatchConditionSpec[] | undefined,
  failurePolicy: string | undefined,
  d: Declarations,
): CompiledMatchConditions | undefined {
  if (!specs?.length) return undefined;
  return {
    conditions: specs.map((s) => ({ name: s.name ?? '', compiled: compileExpression(s.expression ?? '', 'bool', d) })),
    failOpen: failurePolicy === 'Ignore',
  };
}

/**
 * matcher.Match. `act` carries the request's variables; match conditions get their own budget. With
 * `metrics`, each condition's error and the evaluation's time are observed, as upstream's matcher does.
 */
export function matchConditions(m: CompiledMatchConditions, vars: Record<string, unknown>, deadline: number, metrics?: MatchConditionMetrics): MatchResult {
  const started = metrics ? performance.now() : 0;
  const r = evaluate(m, vars, deadline, metrics);
  if (metrics) metrics.observer.seconds(metrics.labels, (performance.now() - started) / 1000);
  return r;
}

function evaluate(m: CompiledMatchConditions, vars: Record<string, unknown>, deadline: number, metrics: MatchConditionMetrics | undefined): MatchResult {
  const act: Activation = { vars, remaining: RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS, deadline };
  const errors: string[] = [];
  const failed = (text: string): void => {
    errors.push(text);
    metrics?.observer.evaluationError(metrics.labels);
  };
  for (const c of m.conditions) {
    let value: unknown;
    if ('error' in c.compiled) {
      failed(`compilation error: ${c.compiled.error}`);
      continue;
    }
    try {
      const r = evaluateExpression(c.compiled, act);
      if ('error' in r) {
        failed(r.error);
        continue;
      }
      value = r.value;
    } catch (e) {
      if (!(e instanceof OutOfBudget)) throw e;
      // Upstream's filter fails as a whole here: not counted as a condition's error.
      return m.failOpen ? { matches: false } : { error: e.message };
    }
    if (value === false) return { matches: false, failedCondition: c.name };
  }
  if (errors.length) {
    if (m.failOpen) return { matches: false };
    // utilerrors.NewAggregate's text.
    return { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
  }
  return { matches: true };
}
