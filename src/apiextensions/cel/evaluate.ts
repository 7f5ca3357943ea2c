// Evaluation of compiled `x-kubernetes-validations` against a custom resource (upstream
// apiextensions-apiserver pkg/apiserver/schema/cel/validation.go Validator.Validate): walks the
// object along the schema, runs each node's rules with `self` (and `oldSelf` for transition rules,
// which are skipped when there is no old value unless optionalOldSelf), and reports kube's field
// errors. A per-call cost limit, a per-request cost budget and a wall-clock guard keep any rule
// from hanging the server.
import { Optional } from '@marcbachmann/cel-js';
import { fieldIssue, omitValue, type FieldIssue } from '../../apimachinery/errors.js';
import { child, index, key } from '../schema/path.js';
import { deepEqualJSON } from '../schema/path.js';
import type { CompiledNode, CompiledRule, CompiledSchema, Program } from './compile.js';
import { RUNTIME_CEL_COST_BUDGET } from './cost.js';
import { CostExceeded, armMeter, meter } from '../../apimachinery/cel/library.js';

export interface EvaluateOptions {
  /** Field path of the object root; issues at the root itself are reported as `<nil>`, as upstream. */
  path?: string;
  /** Runtime cost budget of the whole request (upstream RuntimeCELCostBudget). */
  budget?: number;
  /** Wall-clock guard for all rules of the request, in milliseconds. Default 1000. */
  timeoutMs?: number;
}

/** upstream celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

interface State {
  issues: FieldIssue[];
  remaining: number;
  perCallLimit: number;
  deadline: number;
  stopped: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Runs every compiled rule over `obj` (and `oldObj` on update). Returns the failures as field
 * issues, in upstream's shapes: `Invalid value: "object": failed rule: …` style messages (object
 * and array values omitted), rule `message`/`messageExpression`, `reason` and `fieldPath`.
 */
export function evaluate(compiled: CompiledSchema, obj: unknown, oldObj?: unknown, opts: EvaluateOptions = {}): FieldIssue[] {
  if (!compiled.root) return [];
  const st: State = {
    issues: [],
    remaining: opts.budget ?? RUNTIME_CEL_COST_BUDGET,
    perCallLimit: compiled.perCallLimit,
    deadline: performance.now() + (opts.timeoutMs ?? 1000),
    stopped: false,
  };
  validate(compiled.root, opts.path ?? '', obj, oldObj ?? undefined, st);
  return st.issues;
}

function validate(n: CompiledNode, p: string, obj: unknown, old: unknown, st: State): void {
  if (obj === null || obj === undefined || st.stopped) return;
  if (old === null) old = undefined;
  if (n.rules.length) runRules(n, p, obj, old, st);
  if (st.stopped) return;
  if (Array.isArray(obj)) {
    const items = n.items;
    if (!items) return;
    const oldItems = correlateList(n, old);
    for (let i = 0; i < obj.length && !st.stopped; i++) validate(items, index(p, i), obj[i], oldItems?.(obj[i]), st);
    return;
  }
  if (!isObject(obj)) return;
  const oldMap = isObject(old) ? old : undefined;
  if (n.additionalProperties) {
    for (const k of Object.keys(obj)) {
      if (st.stopped) return;
      validate(n.additionalProperties, key(p, k), obj[k], oldMap?.[k], st);
    }
  }
  if (n.properties) {
    for (const k of Object.keys(obj)) {
      if (st.stopped) return;
      const c = n.properties.get(k);
      if (c) validate(c, child(p, k), obj[k], oldMap?.[k], st);
    }
  }
}

/** Only list-type=map lists correlate old items (by their keys), as upstream. */
function correlateList(n: CompiledNode, old: unknown): ((item: unknown) => unknown) | undefined {
  if (!Array.isArray(old) || n.schema.xListType !== 'map') return undefined;
  const keys = n.schema.xListMapKeys ?? [];
  return (item) => {
    if (!isObject(item)) return undefined;
    for (const o of old) {
      if (!isObject(o)) continue;
      let same = true;
      for (const k of keys)
        if (!deepEqualJSON(o[k], item[k])) {
          same = false;
          break;
        }
      if (same) return o;
    }
    return undefined;
  };
}

function errText(e: unknown): string {
  if (e instanceof Error) {
    const s = (e as { summary?: string }).summary ?? e.message.split('\n')[0] ?? '';
    // cel-go spells these in lower case.
    return s
      .replace(/^No such key: index out of bounds, index (-?\d+).*$/, 'index out of bounds: $1')
      .replace(/^No such key/, 'no such key')
      .replace(/^No such overload/, 'no such overload');
  }
  return String(e);
}

function ruleErrorString(r: CompiledRule): string {
  return r.rule.message ? r.rule.message.trim() : r.rule.rule.trim();
}

function ruleMessageOrDefault(r: CompiledRule): string {
  return r.rule.message ? r.rule.message.trim() : `failed rule: ${ruleErrorString(r)}`;
}

type RunResult = { value: unknown; cost: number } | { error: unknown; cost: number; exceeded: boolean };

function run(program: Program, ctx: Record<string, unknown>, baseCost: number, st: State): RunResult {
  const limit = Math.min(st.perCallLimit, st.remaining);
  armMeter(limit, st.deadline);
  meter.used = baseCost;
  try {
    const value: unknown = program(ctx);
    // An error absorbed by && / || after the meter tripped still counts as exceeded.
    if (meter.exceeded) return { error: new CostExceeded(), cost: meter.used, exceeded: true };
    return { value, cost: meter.used };
  } catch (e) {
    return { error: e, cost: meter.used, exceeded: meter.exceeded || e instanceof CostExceeded };
  }
}

function runRules(n: CompiledNode, p: string, obj: unknown, old: unknown, st: State): void {
  const fieldPath = p || '<nil>';
  if (st.remaining <= 0) {
    st.issues.push(fieldIssue.invalid(fieldPath, n.type, OUT_OF_BUDGET));
    st.stopped = true;
    return;
  }
  let self: unknown;
  let oldSelf: unknown;
  let converted = false;
  let ctx: Record<string, unknown> | undefined;
  let optCtx: Record<string, unknown> | undefined;
  for (const r of n.rules) {
    if (r.usesOldSelf && old === undefined && !r.optionalOldSelf) continue; // transition rules need an old value
    if (!converted) {
      self = n.convert(obj);
      oldSelf = old === undefined ? undefined : n.convert(old);
      converted = true;
    }
    let c: Record<string, unknown>;
    if (r.optionalOldSelf) c = optCtx ??= { self, oldSelf: old === undefined ? Optional.none() : Optional.of(oldSelf) };
    else c = ctx ??= { self, oldSelf };
    const res = run(r.program, c, r.baseCost, st);
    if ('error' in res) {
      if (res.exceeded) {
        if (res.cost > st.remaining || performance.now() > st.deadline) {
          st.issues.push(fieldIssue.invalid(fieldPath, n.type, OUT_OF_BUDGET));
        } else {
          st.issues.push(
            fieldIssue.invalid(
              fieldPath,
              n.type,
              `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r)}`,
            ),
          );
        }
        st.stopped = true;
        return;
      }
      st.remaining -= res.cost;
      const msg = errText(res.error);
      if (msg.startsWith('no such overload')) {
        st.issues.push(
          fieldIssue.invalid(
            fieldPath,
            n.type,
            `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r)}`,
          ),
        );
      } else {
        st.issues.push(fieldIssue.invalid(fieldPath, n.type, `${msg} evaluating rule: ${ruleErrorString(r)}`));
      }
      continue;
    }
    st.remaining -= res.cost;
    if (res.value === true) continue;

    const current = r.fieldPath ? child(p, r.fieldPath) : fieldPath;
    let detail: string | undefined;
    if (r.messageProgram) {
      const m = run(r.messageProgram, c, 0, st);
      if ('error' in m && m.exceeded) {
        st.issues.push(
          fieldIssue.invalid(
            current,
            n.type,
            m.cost > st.remaining
              ? 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'
              : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(r.rule.messageExpression)}`,
          ),
        );
        st.stopped = true;
        return;
      }
      st.remaining -= m.cost;
      if ('value' in m && typeof m.value === 'string') {
        const t = m.value.trim();
        if (t && !t.includes('\n') && Buffer.byteLength(t) <= MAX_MESSAGE_EXPRESSION_BYTES) detail = t;
      }
    }
    detail ??= ruleMessageOrDefault(r);
    const value = n.type === 'object' || n.type === 'array' ? omitValue : obj;
    switch (r.rule.reason) {
      case 'FieldValueForbidden':
        st.issues.push(fieldIssue.forbidden(current, detail));
        break;
      case 'FieldValueRequired':
        st.issues.push(fieldIssue.required(current, detail));
        break;
      case 'FieldValueDuplicate':
        st.issues.push(fieldIssue.duplicate(current, value));
        break;
      default:
        st.issues.push(fieldIssue.invalid(current, value, detail));
    }
  }
}
