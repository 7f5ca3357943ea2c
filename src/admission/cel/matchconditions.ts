// matchConditions of webhooks and policies (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions):
// every condition must be true for the webhook to be called or the policy to apply. The first false
// one decides "no match" (even after errors); otherwise errors follow the failure policy: Fail makes
// them the answer, Ignore makes them "no match".
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

/** matcher.Match. `act` carries the request's variables; match conditions get their own budget. */
export function matchConditions(m: CompiledMatchConditions, vars: Record<string, unknown>, deadline: number): MatchResult {
  const act: Activation = { vars, remaining: RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS, deadline };
  const errors: string[] = [];
  for (const c of m.conditions) {
    let value: unknown;
    if ('error' in c.compiled) {
      errors.push(`compilation error: ${c.compiled.error}`);
      continue;
    }
    try {
      const r = evaluateExpression(c.compiled, act);
      if ('error' in r) {
        errors.push(r.error);
        continue;
      }
      value = r.value;
    } catch (e) {
      if (!(e instanceof OutOfBudget)) throw e;
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
