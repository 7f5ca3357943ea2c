// Compilation of `x-kubernetes-validations` at CRD create/update time (upstream
// apiextensions-apiserver validation.go + pkg/apiserver/schema/cel/compilation.go): every rule and
// messageExpression is parsed and type-checked against the CEL types of its schema node, its cost
// is estimated, and the result is a tree of compiled nodes that evaluate() walks.
//
// Coupling to the evaluator's AST (why @marcbachmann/cel-js is pinned to an exact version): after
// parsing we (1) rename `matches` calls to the RE2 implementation (rcall args[0]), (2) wrap each
// macro-expanded comprehension's `args.condition` (reached through ASTNode.meta.alternate) so every
// iteration charges the runtime meter, and (3) read `checkedType` for has() field checks. The
// tests "regular expressions run in linear time" and "a pathological rule is stopped by the
// per-call cost limit" fail if an upgrade changes any of these.
import type { ASTNode, Environment, ParseResult } from '@marcbachmann/cel-js';
import { fieldIssue, omitValue, type FieldIssue } from '../../apimachinery/errors.js';
import { child, index, key } from '../schema/path.js';
import { newStructural } from '../schema/structural.js';
import type { JSONSchemaProps, Structural, ValidationRule } from '../schema/types.js';
import { PER_CALL_LIMIT, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, costErrorMessage, countNodes, estimateCost } from './cost.js';
import { baseEnvironment } from '../../apimachinery/cel/library.js';
import { celErrorText, checkConstantPatterns, meterComprehensions, useRE2, walk, type AnyNode } from '../../apimachinery/cel/expressions.js';

export { celErrorText };
import { TypeBuilder, fieldsConverter, maxSize, type Converter, type DeclType } from './types.js';
import { celSourceMap, parseCel } from '../../apimachinery/cel/source.js';

export interface CompileOptions {
  /** Field path of the schema root, e.g. `spec.versions[0].schema.openAPIV3Schema`. */
  path?: string;
  /** The schema is the root of a resource: `self.apiVersion`, `self.kind`, `self.metadata.name` are known. Default true. */
  isResourceRoot?: boolean;
  /** Per-rule static cost limit (upstream StaticEstimatedCostLimit). */
  staticCostLimit?: number;
  /** Whole-schema static cost limit (upstream StaticEstimatedCRDCostLimit). */
  crdCostLimit?: number;
  /** Runtime cost limit of one rule evaluation (upstream PerCallLimit). */
  perCallLimit?: number;
}

/** A compiled program: call with `{ self, oldSelf }`. */
export type Program = ParseResult;

export interface CompiledRule {
  readonly index: number;
  readonly rule: ValidationRule;
  readonly program: Program;
  readonly messageProgram?: Program;
  /** The rule references `oldSelf` (a transition rule). */
  readonly usesOldSelf: boolean;
  readonly optionalOldSelf: boolean;
  /** rule.fieldPath as a kube field path relative to the node (`spec.foo`, `[key]`). */
  readonly fieldPath?: string;
  /** Static estimate of one evaluation's cost. */
  readonly cost: number;
  /** Static estimate of the messageExpression's cost. */
  readonly messageCost: number;
  /** Node-count base charged at the start of each evaluation (runtime meter). */
  readonly baseCost: number;
}

export interface CompiledNode {
  readonly schema: Structural;
  /** upstream sts.Type: the bad value of runtime errors. */
  readonly type: string;
  readonly rules: readonly CompiledRule[];
  readonly convert: Converter;
  readonly properties?: ReadonlyMap<string, CompiledNode>;
  readonly items?: CompiledNode;
  readonly additionalProperties?: CompiledNode;
}

export interface CompiledSchema {
  /** Undefined when the schema has no rules at all: evaluate() is then a no-op. */
  readonly root?: CompiledNode;
  readonly ruleCount: number;
  /** Sum over all rules of cost × how many times the rule can run per object. */
  readonly totalCost: number;
  readonly perCallLimit: number;
}

export interface CompileResult {
  compiled: CompiledSchema;
  issues: FieldIssue[];
}

// ---------- Go %#v of a ValidationRule, as upstream prints the bad value of compile errors ----------

function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u([0-9a-f]{4})/g, (_m, h: string) => `\\u${h}`);
}

function goRule(r: ValidationRule): string {
  const reason = r.reason === undefined ? '(*apiextensions.FieldValueErrorReason)(nil)' : `(*apiextensions.FieldValueErrorReason)(${goQuote(r.reason)})`;
  const oos = r.optionalOldSelf === undefined ? '(*bool)(nil)' : `(*bool)(${r.optionalOldSelf})`;
  return (
    `apiextensions.ValidationRule{Rule:${goQuote(r.rule ?? '')}, Message:${goQuote(r.message ?? '')}, ` +
    `MessageExpression:${goQuote(r.messageExpression ?? '')}, Reason:${reason}, FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${oos}}`
  );
}

/** field.Invalid whose bad value prints as Go's %#v of the rule (the struct is not JSON). */
function invalidRule(field: string, r: ValidationRule, detail: string): FieldIssue {
  return { type: 'FieldValueInvalid', field, badValue: omitValue, detail: `${goRule(r)}: ${detail}` };
}

/**
 * The fields of `self` and `oldSelf` that the programs read, when they only ever select fields of
 * them (`self.a`, `has(oldSelf.b)`); undefined when either variable is used any other way (passed
 * to a function, compared, iterated, optionally selected) or the AST holds something unexpected.
 * Every object reachable from the ASTs is searched (also `meta`, whatever its enumerability), so
 * an occurrence the evaluator could reach is not missed.
 */
export function selectedSelfFields(asts: readonly unknown[]): Set<string> | undefined {
  const fields = new Set<string>();
  const selected = new Set<object>();
  const uses: object[] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [...asts];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null || seen.has(x)) continue;
    seen.add(x);
    if (Array.isArray(x)) {
      for (const e of x) stack.push(e);
      continue;
    }
    const n = x as { op?: unknown; args?: unknown; meta?: unknown };
    if (n.op === 'id' && (n.args === 'self' || n.args === 'oldSelf')) uses.push(n);
    if (n.op === '.' && Array.isArray(n.args) && n.args.length === 2 && typeof n.args[1] === 'string') {
      const recv = n.args[0] as { op?: unknown; args?: unknown } | undefined;
      if (recv && recv.op === 'id' && (recv.args === 'self' || recv.args === 'oldSelf')) {
        selected.add(recv);
        fields.add(n.args[1]);
      }
    }
    if (n.meta !== undefined) stack.push(n.meta);
    for (const k of Object.keys(n)) if (k !== 'checkedType') stack.push((n as Record<string, unknown>)[k]);
  }
  for (const u of uses) if (!selected.has(u)) return undefined;
  return fields;
}

function referencesOldSelf(ast: ASTNode): boolean {
  let found = false;
  walk(ast, (n) => {
    if (n.op === 'id' && n.args === 'oldSelf') found = true;
  });
  return found;
}

type Compiled = { program: Program } | { error: string };

/**
 * has(x.f) and x.?f on a message type with no field f: cel-go refuses them at compile time
 * ("undefined field"); the evaluator would answer false (or none). has() on an operand that is not
 * a chain from a variable is an optional selection by then (apimachinery/cel/source.ts). Needs the
 * checked types, so runs after check().
 */
function checkHasFields(ast: ASTNode, fieldsOf: ReadonlyMap<string, ReadonlySet<string>>): { start: number; field: string } | undefined {
  let bad: { start: number; field: string } | undefined;
  const selects = (sel: AnyNode & { start?: number }): void => {
    if (!Array.isArray(sel.args)) return;
    const [recv, field] = sel.args as [{ checkedType?: { name?: string }; end?: number }, string];
    const fields = recv.checkedType?.name ? fieldsOf.get(recv.checkedType.name) : undefined;
    if (fields && !fields.has(field)) bad = { start: recv.end ?? sel.start ?? 0, field };
  };
  walk(ast, (n) => {
    if (bad) return;
    if (n.op === '.?') return selects(n);
    const args = n.meta?.macro?.args;
    if (n.op !== 'call' || !Array.isArray(n.args) || n.args[0] !== 'has' || !args?.[0]) return;
    const sel = args[0] as AnyNode & { start?: number; end?: number };
    if (sel.op === '.') selects(sel);
  });
  return bad;
}

function compileExpr(env: Environment, src: string, want: 'bool' | 'string', prefix: string, fieldsOf: ReadonlyMap<string, ReadonlySet<string>>): Compiled {
  let program: Program;
  try {
    program = parseCel(env, src);
  } catch (e) {
    return { error: `${prefix}compilation failed: ${celErrorText(src, e, celSourceMap(src))}` };
  }
  useRE2(program.ast);
  const checked = program.check();
  if (!checked.valid) return { error: `${prefix}compilation failed: ${celErrorText(src, checked.error, celSourceMap(src))}` };
  if (checked.type !== want && checked.type !== 'dyn') {
    return { error: want === 'bool' ? 'cel expression must evaluate to a bool' : 'messageExpression must evaluate to a string' };
  }
  const badHas = checkHasFields(program.ast, fieldsOf);
  if (badHas) {
    return {
      error: `${prefix}compilation failed: ${celErrorText(src, { summary: `undefined field '${badHas.field}'`, range: { start: badHas.start, end: badHas.start } }, celSourceMap(src))}`,
    };
  }
  const badPattern = checkConstantPatterns(program.ast, src, celSourceMap(src));
  if (badPattern) return { error: `${prefix}${badPattern}` };
  meterComprehensions(program.ast);
  return { program };
}

// ---------- fieldPath (upstream ValidFieldPath) ----------

const UNESCAPE: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

function tokenize(p: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '.' || c === '[' || c === ']') {
      out.push(c);
      i++;
    } else if (c === "'") {
      let j = i + 1;
      while (j < p.length && !(p[j] === "'" && p[j - 1] !== '\\')) j++;
      out.push(p.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < p.length && !'.[]'.includes(p[j]!)) j++;
      out.push(p.slice(i, j));
      i = j;
    }
  }
  return out;
}

/** Validates `jsonPath` against `schema`; returns the normalized kube field path or an error text. */
export function validFieldPath(jsonPath: string, schema: Structural): { path: string } | { error: string } {
  let s: Structural | undefined = schema;
  let out = '';
  const toks = tokenize(jsonPath);
  const append = (name: string): string | undefined => {
    if (!s) return 'does not refer to a valid field';
    if (s.properties) {
      const next = s.properties.get(name);
      if (!next) return 'does not refer to a valid field';
      out = child(out, name);
      s = next;
    } else if (s.additionalProperties) {
      out = key(out, name);
      s = s.additionalProperties.structural;
    } else return 'does not refer to a valid field';
    return undefined;
  };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t === '[') {
      const q = toks[++i];
      if (q === undefined) return { error: 'unexpected end of JSON path' };
      if (q.length < 2 || q[0] !== "'" || q[q.length - 1] !== "'") return { error: `expected single quoted string but got ${q}` };
      let bad: string | undefined;
      const name = q.slice(1, -1).replace(/\\./g, (m) => {
        const r = UNESCAPE[m[1]!];
        if (r === undefined) bad = `invalid string literal: invalid escape char ${m}`;
        return r ?? '';
      });
      if (bad) return { error: bad };
      const err = append(name);
      if (err) return { error: err };
      const close = toks[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (t === '.') {
      const name = toks[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const err = append(name);
      if (err) return { error: err };
    } else return { error: `expected [ or . but got: ${t}` };
  }
  return { path: out };
}

// ---------- the schema walk ----------

interface WalkState {
  issues: FieldIssue[];
  typesEnv: Environment;
  tb: TypeBuilder;
  fieldsOf: Map<string, Set<string>>;
  ruleCount: number;
  totalCost: number;
  contributors: Array<{ path: string; cost: number }>;
  opts: Required<Omit<CompileOptions, 'path' | 'isResourceRoot'>>;
}

const SUPPORTED_REASONS = new Set(['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']);

function compileNodeRules(s: Structural, decl: DeclType, p: string, cardinality: number, uncorrelatable: string | undefined, st: WalkState): CompiledRule[] {
  const rules = s.xValidations;
  if (!rules?.length) return [];
  const env = st.typesEnv.clone();
  env.registerVariable('self', decl.type);
  env.registerVariable('oldSelf', decl.type);
  let optEnv: Environment | undefined;
  const out: CompiledRule[] = [];
  rules.forEach((rule, i) => {
    const rp = index(child(p, 'x-kubernetes-validations'), i);
    const src = rule.rule ?? '';
    if (!src.trim()) return; // reported by the shape validation (structural.ts)
    if (rule.reason !== undefined && !SUPPORTED_REASONS.has(rule.reason)) return; // likewise
    st.ruleCount++;
    let e = env;
    if (rule.optionalOldSelf) {
      if (!optEnv) {
        optEnv = st.typesEnv.clone();
        optEnv.registerVariable('self', decl.type);
        optEnv.registerVariable('oldSelf', `optional<${decl.type}>`);
      }
      e = optEnv;
    }
    const r = compileExpr(e, src, 'bool', '', st.fieldsOf);
    let ok = true;
    if ('error' in r) {
      st.issues.push(invalidRule(child(rp, 'rule'), rule, r.error));
      ok = false;
    }
    let messageProgram: Program | undefined;
    let messageCost = 0;
    if (rule.messageExpression !== undefined && rule.messageExpression.trim()) {
      const m = compileExpr(e, rule.messageExpression, 'string', 'messageExpression ', st.fieldsOf);
      if ('error' in m) {
        st.issues.push(invalidRule(child(rp, 'messageExpression'), rule, m.error));
        ok = false;
      } else {
        messageProgram = m.program;
        messageCost = estimateCost(m.program.ast, s);
        if (messageCost > st.opts.staticCostLimit) {
          st.issues.push(
            fieldIssue.forbidden(child(rp, 'messageExpression'), costErrorMessage('estimated messageExpression cost', messageCost, st.opts.staticCostLimit)),
          );
        }
      }
    }
    let fieldPath: string | undefined;
    if (rule.fieldPath !== undefined && rule.fieldPath.trim()) {
      const v = validFieldPath(rule.fieldPath, s);
      if ('error' in v) {
        st.issues.push(fieldIssue.invalid(child(rp, 'fieldPath'), rule.fieldPath, `fieldPath must be a valid path: ${v.error}`));
      } else fieldPath = v.path;
    }
    if (!ok || 'error' in r) return;
    const usesOldSelf = referencesOldSelf(r.program.ast);
    if (usesOldSelf && uncorrelatable !== undefined) {
      st.issues.push(fieldIssue.invalid(child(rp, 'rule'), src, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
    }
    if (rule.optionalOldSelf && !usesOldSelf) {
      st.issues.push(fieldIssue.invalid(child(rp, 'optionalOldSelf'), true, 'may not be set if oldSelf is not used in rule'));
    }
    const cost = estimateCost(r.program.ast, s);
    if (cost > st.opts.staticCostLimit) {
      st.issues.push(fieldIssue.forbidden(child(rp, 'rule'), costErrorMessage('estimated rule cost', cost, st.opts.staticCostLimit)));
    }
    const total = (cost + messageCost) * cardinality;
    st.totalCost += total;
    st.contributors.push({ path: child(rp, 'rule'), cost: total });
    out.push({
      index: i,
      rule,
      program: r.program,
      ...(messageProgram ? { messageProgram } : {}),
      usesOldSelf,
      optionalOldSelf: rule.optionalOldSelf === true,
      ...(fieldPath !== undefined ? { fieldPath } : {}),
      cost,
      messageCost,
      baseCost: countNodes(r.program.ast),
    });
  });
  return out;
}

function hasRules(s: Structural | undefined, memo: WeakMap<Structural, boolean>): boolean {
  if (!s) return false;
  const hit = memo.get(s);
  if (hit !== undefined) return hit;
  let r = !!s.xValidations?.length || hasRules(s.items, memo) || hasRules(s.additionalProperties?.structural, memo);
  if (!r && s.properties)
    for (const c of s.properties.values())
      if (hasRules(c, memo)) {
        r = true;
        break;
      }
  memo.set(s, r);
  return r;
}

function compileNode(
  s: Structural,
  decl: DeclType,
  p: string,
  cardinality: number,
  uncorrelatable: string | undefined,
  st: WalkState,
  memo: WeakMap<Structural, boolean>,
): CompiledNode | undefined {
  if (!hasRules(s, memo)) return undefined;
  const rules = compileNodeRules(s, decl, p, cardinality, uncorrelatable, st);
  const node: {
    schema: Structural;
    type: string;
    rules: CompiledRule[];
    convert: Converter;
    properties?: Map<string, CompiledNode>;
    items?: CompiledNode;
    additionalProperties?: CompiledNode;
  } = { schema: s, type: s.type, rules, convert: decl.convert };
  // self and oldSelf are converted once per visit; when the rules only select some of their
  // fields, only those are converted (the rest would be converted for nothing).
  if (decl.fields && rules.length) {
    const used = selectedSelfFields(rules.flatMap((r) => (r.messageProgram ? [r.program.ast, r.messageProgram.ast] : [r.program.ast])));
    if (used) node.convert = fieldsConverter(decl, used);
  }
  if (s.properties) {
    const props = new Map<string, CompiledNode>();
    for (const [name, c] of s.properties) {
      if (!hasRules(c, memo)) continue;
      const d = st.tb.decl(c, `${name}`, c.xEmbeddedResource); // built (memoized) before registration
      const cn = compileNode(c, d, key(child(p, 'properties'), name), cardinality, uncorrelatable, st, memo);
      if (cn) props.set(name, cn);
    }
    if (props.size) node.properties = props;
  }
  if (s.items && hasRules(s.items, memo)) {
    const d = st.tb.decl(s.items, '', s.items.xEmbeddedResource);
    const listType = s.xListType ?? 'atomic';
    const unc = uncorrelatable ?? (listType === 'map' ? undefined : p);
    const cn = compileNode(s.items, d, child(p, 'items'), cardinality * maxSize(s), unc, st, memo);
    if (cn) node.items = cn;
  }
  const ap = s.additionalProperties?.structural;
  if (ap && hasRules(ap, memo)) {
    const d = st.tb.decl(ap, '', ap.xEmbeddedResource);
    const cn = compileNode(ap, d, child(p, 'additionalProperties'), cardinality * maxSize(s), uncorrelatable, st, memo);
    if (cn) node.additionalProperties = cn;
  }
  return node;
}

/**
 * Compiles every `x-kubernetes-validations` rule of a CRD version's schema. Issues carry
 * upstream's field paths under `opts.path` (…`x-kubernetes-validations[j].rule` etc.) and messages:
 * compile errors (422 Invalid, `compilation failed: ERROR: <input>:1:…`), messageExpression errors,
 * invalid fieldPath, optionalOldSelf without oldSelf, oldSelf in uncorrelatable lists, and cost
 * (Forbidden, `estimated rule cost exceeds budget by factor of …`, and the whole-schema total).
 */
export function compileRules(schema: Structural | JSONSchemaProps, opts: CompileOptions = {}): CompileResult {
  const s: Structural = isStructural(schema) ? schema : newStructural(schema);
  const path = opts.path ?? 'openAPIV3Schema';
  const st: WalkState = {
    issues: [],
    typesEnv: baseEnvironment().clone(),
    tb: new TypeBuilder(),
    fieldsOf: new Map(),
    ruleCount: 0,
    totalCost: 0,
    contributors: [],
    opts: {
      staticCostLimit: opts.staticCostLimit ?? STATIC_ESTIMATED_COST_LIMIT,
      crdCostLimit: opts.crdCostLimit ?? STATIC_ESTIMATED_CRD_COST_LIMIT,
      perCallLimit: opts.perCallLimit ?? PER_CALL_LIMIT,
    },
  };
  const memo = new WeakMap<Structural, boolean>();
  if (!hasRules(s, memo)) return { compiled: { ruleCount: 0, totalCost: 0, perCallLimit: st.opts.perCallLimit }, issues: [] };

  const rootDecl = st.tb.decl(s, 'Object', opts.isResourceRoot ?? true);
  st.tb.register(st.typesEnv);
  for (const m of st.tb.messages) st.fieldsOf.set(m.name, new Set(Object.keys(m.fields)));

  const root = compileNode(s, rootDecl, path, 1, undefined, st, memo);
  if (st.totalCost > st.opts.crdCostLimit) {
    for (const c of st.contributors) {
      if (c.cost > st.opts.crdCostLimit / 100)
        st.issues.push(fieldIssue.forbidden(c.path, 'contributed to estimated rule & messageExpression cost total exceeding cost limit'));
    }
    st.issues.push(
      fieldIssue.forbidden(
        path,
        costErrorMessage(
          'x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema',
          st.totalCost,
          st.opts.crdCostLimit,
        ),
      ),
    );
  }
  return {
    compiled: { ...(root ? { root } : {}), ruleCount: st.ruleCount, totalCost: st.totalCost, perCallLimit: st.opts.perCallLimit },
    issues: st.issues,
  };
}

function isStructural(s: Structural | JSONSchemaProps): s is Structural {
  return (s as Structural).properties instanceof Map || 'xPreserveUnknownFields' in s;
}
