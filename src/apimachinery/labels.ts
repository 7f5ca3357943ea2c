// Label selectors (k8s.io/apimachinery/pkg/labels): the `-l` string syntax with every operator,
// metav1.LabelSelector objects, matching, and the canonical string form. Messages are upstream's.
import { NumError, parseGoInt } from '../golang/strconv.js';
import { badRequest, fieldIssue, issueString, type FieldIssue } from './errors.js';
import { isQualifiedName, isValidLabelValue } from './validation/names.js';

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

export interface LabelSelector {
  /** AND of requirements, sorted by key. */
  readonly requirements: readonly LabelRequirement[];
  /** labels.Nothing(): from a nil metav1.LabelSelector; matches no object. */
  readonly matchesNothing?: boolean;
}

export const EVERYTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]) });
export const NOTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]), matchesNothing: true });

const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

export type LabelSelectorResult = { ok: true; selector: LabelSelector } | { ok: false; message: string; issues: FieldIssue[] };

// ---------------------------------------------------------------------------------------------
// Requirements

/** Go's %#v of a []string, which field.Invalid prints for value lists. */
function goStringSlice(values: readonly string[] | undefined): string {
  if (values === undefined) return '[]string(nil)';
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** strconv.ParseInt(v, 10, 64); undefined when it fails. */
function parseInt64(v: string): bigint | undefined {
  const n = parseGoInt(v, 10, 64);
  return n instanceof NumError ? undefined : n;
}

interface RequirementCheck {
  issues: FieldIssue[];
  messages: string[];
}

function invalidWithSlice(check: RequirementCheck, field: string, values: readonly string[] | undefined, detail: string): void {
  check.issues.push(fieldIssue.invalid(field, values ?? null, detail));
  check.messages.push(`${field}: Invalid value: ${goStringSlice(values)}: ${detail}`);
}

function invalidString(check: RequirementCheck, field: string, value: string, detail: string): void {
  const issue = fieldIssue.invalid(field, value, detail);
  check.issues.push(issue);
  check.messages.push(issueString(issue));
}

/**
 * labels.NewRequirement's checks. `keyPath` is where key problems are reported: `key` for
 * LabelSelector objects, upstream's nil path (`<nil>`) when parsing a string.
 */
function checkRequirement(key: string, op: LabelOperator, values: readonly string[] | undefined, keyPath = 'key'): RequirementCheck {
  const check: RequirementCheck = { issues: [], messages: [] };
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) invalidString(check, keyPath, key, keyErrs.join('; '));
  const vals = values ?? [];
  switch (op) {
    case 'in':
    case 'notin':
      if (vals.length === 0) invalidWithSlice(check, 'values', values, "for 'in', 'notin' operators, values set can't be empty");
      break;
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) invalidWithSlice(check, 'values', values, 'exact-match compatibility requires one single value');
      break;
    case 'exists':
    case '!':
      if (vals.length !== 0) invalidWithSlice(check, 'values', values, 'values set must be empty for exists and does not exist');
      break;
    case 'gt':
    case 'lt':
      if (vals.length !== 1) invalidWithSlice(check, 'values', values, "for 'Gt', 'Lt' operators, exactly one value is required");
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) invalidString(check, `values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer");
      });
      break;
    default: {
      const issue = fieldIssue.notSupported('operator', op, [...BINARY_OPERATORS, 'exists', '!']);
      check.issues.push(issue);
      check.messages.push(issueString(issue));
    }
  }
  vals.forEach((v, i) => {
    const errs = isValidLabelValue(v);
    if (errs.length) invalidString(check, `values[${i}][${key}]`, v, errs.join('; '));
  });
  return check;
}

/** utilerrors.Aggregate: one message as is, several as `[a, b]`. */
const aggregate = (messages: readonly string[]): string => (messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`);

export function newRequirement(key: string, operator: LabelOperator, values: readonly string[]): LabelRequirement {
  const check = checkRequirement(key, operator, values);
  if (check.messages.length) throw badRequest(aggregate(check.messages));
  return { key, operator, values: [...values] };
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return has && r.values.includes(value!);
    case 'notin':
    case '!=':
      return !has || !r.values.includes(value!);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const actual = parseInt64(value!);
      const bound = parseInt64(r.values[0]!);
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (selector.matchesNothing) return false;
  const ls = labels ?? {};
  for (const r of selector.requirements) if (!requirementMatches(r, ls)) return false;
  return true;
}

export const isEmptySelector = (s: LabelSelector): boolean => !s.matchesNothing && s.requirements.length === 0;

const sortedCopy = (values: readonly string[]): string[] => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export function requirementToString(r: LabelRequirement): string {
  let s = r.operator === '!' ? `!${r.key}` : r.key;
  switch (r.operator) {
    case 'exists':
    case '!':
      return s;
    case 'in':
      s += ' in ';
      break;
    case 'notin':
      s += ' notin ';
      break;
    case 'gt':
      s += '>';
      break;
    case 'lt':
      s += '<';
      break;
    default:
      s += r.operator;
  }
  const vals = r.values.length === 1 ? r.values[0]! : sortedCopy(r.values).join(',');
  return r.operator === 'in' || r.operator === 'notin' ? `${s}(${vals})` : s + vals;
}

/** Canonical form: requirements (sorted by key) joined by `,`; values of set operators sorted. */
export function labelSelectorToString(selector: LabelSelector): string {
  return selector.requirements.map(requirementToString).join(',');
}

/** The value a selector demands for `label` (`label=v`, `label==v` or `label in (v)`), if any. */
export function labelRequiresExactMatch(selector: LabelSelector, label: string): string | undefined {
  const r = selector.requirements.find((x) => x.key === label);
  if (!r) return undefined;
  return (r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1 ? r.values[0] : undefined;
}

const byKey = (a: LabelRequirement, b: LabelRequirement): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Set.AsSelector: every label must equal its value. */
export function selectorFromSet(set: Readonly<Record<string, string>> | undefined): LabelSelector {
  if (!set || Object.keys(set).length === 0) return EVERYTHING;
  return {
    requirements: Object.entries(set)
      .map(([key, v]) => ({ key, operator: '=' as const, values: [v] }))
      .sort(byKey),
  };
}

// ---------------------------------------------------------------------------------------------
// metav1.LabelSelector

export interface LabelSelectorRequirementObject {
  key: string;
  operator: string;
  values?: string[];
}
export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementObject[];
}

const OBJECT_OPERATORS: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** metav1.LabelSelectorAsSelector: null/undefined selects nothing, `{}` selects everything. */
export function tryLabelSelectorFromObject(ls: LabelSelectorObject | null | undefined): LabelSelectorResult {
  if (ls === null || ls === undefined) return { ok: true, selector: NOTHING };
  const matchLabels = Object.entries(ls.matchLabels ?? {});
  const exprs = ls.matchExpressions ?? [];
  if (matchLabels.length + exprs.length === 0) return { ok: true, selector: EVERYTHING };
  const reqs: LabelRequirement[] = [];
  for (const [key, v] of matchLabels) {
    const check = checkRequirement(key, '=', [v]);
    if (check.messages.length) return { ok: false, message: aggregate(check.messages), issues: check.issues };
    reqs.push({ key, operator: '=', values: [v] });
  }
  for (const e of exprs) {
    const op = OBJECT_OPERATORS[e.operator];
    if (!op) {
      const message = `${JSON.stringify(e.operator)} is not a valid label selector operator`;
      return { ok: false, message, issues: [fieldIssue.notSupported('operator', e.operator, Object.keys(OBJECT_OPERATORS))] };
    }
    const check = checkRequirement(e.key, op, e.values);
    if (check.messages.length) return { ok: false, message: aggregate(check.messages), issues: check.issues };
    reqs.push({ key: e.key, operator: op, values: [...(e.values ?? [])] });
  }
  return { ok: true, selector: { requirements: reqs.sort(byKey) } };
}

export function labelSelectorFromObject(ls: LabelSelectorObject | null | undefined): LabelSelector {
  const r = tryLabelSelectorFromObject(ls);
  if (!r.ok) throw badRequest(r.message);
  return r.selector;
}

// ---------------------------------------------------------------------------------------------
// String syntax: a port of upstream's lexer and recursive-descent parser, so that the same inputs
// fail with the same messages.

const enum Tok {
  Error,
  EndOfString,
  ClosedPar,
  Comma,
  DoesNotExist,
  DoubleEquals,
  Equals,
  GreaterThan,
  Identifier,
  In,
  LessThan,
  NotEquals,
  NotIn,
  OpenPar,
}

const STRING_TO_TOKEN: Record<string, Tok> = {
  ')': Tok.ClosedPar,
  ',': Tok.Comma,
  '!': Tok.DoesNotExist,
  '==': Tok.DoubleEquals,
  '=': Tok.Equals,
  '>': Tok.GreaterThan,
  in: Tok.In,
  '<': Tok.LessThan,
  '!=': Tok.NotEquals,
  notin: Tok.NotIn,
  '(': Tok.OpenPar,
};
const tokenOf = (s: string): Tok | undefined => (Object.prototype.hasOwnProperty.call(STRING_TO_TOKEN, s) ? STRING_TO_TOKEN[s] : undefined);

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecialSymbol = (ch: string): boolean => '=!(),><'.includes(ch);

interface Scanned {
  tok: Tok;
  literal: string;
}

function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let pos = 0;
  // Upstream reads bytes and treats NUL as the end of input.
  const read = (): string => (pos < s.length ? s[pos++]! : '\0');
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '\0') {
      out.push({ tok: Tok.EndOfString, literal: '' });
      return out;
    }
    if (isSpecialSymbol(ch)) {
      let buffer = ch;
      let last: Scanned | undefined;
      const first = tokenOf(buffer);
      if (first !== undefined) last = { tok: first, literal: buffer };
      for (;;) {
        const next = read();
        if (next === '\0') break;
        if (!isSpecialSymbol(next)) {
          pos--;
          break;
        }
        buffer += next;
        const t = tokenOf(buffer);
        if (t !== undefined) last = { tok: t, literal: buffer };
        else if (last) {
          pos--;
          break;
        }
      }
      out.push(last ?? { tok: Tok.Error, literal: `error expected: keyword found '${buffer}'` });
      continue;
    }
    let buffer = ch;
    for (;;) {
      const next = read();
      if (next === '\0') break;
      if (isSpecialSymbol(next) || isWhitespace(next)) {
        pos--;
        break;
      }
      buffer += next;
    }
    out.push({ tok: tokenOf(buffer) ?? Tok.Identifier, literal: buffer });
  }
}

class ParseFailure {
  constructor(
    readonly message: string,
    readonly issues: FieldIssue[] = [],
  ) {}
}

class Parser {
  private position = 0;
  constructor(private readonly items: Scanned[]) {}

  /** In value context the keywords `in`/`notin` are ordinary identifiers. */
  private item(i: number, values: boolean): Scanned {
    const it = this.items[i]!;
    return values && (it.tok === Tok.In || it.tok === Tok.NotIn) ? { tok: Tok.Identifier, literal: it.literal } : it;
  }
  private lookahead(values: boolean): Scanned {
    return this.item(this.position, values);
  }
  private consume(values: boolean): Scanned {
    return this.item(this.position++, values);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, literal } = this.lookahead(true);
      switch (tok) {
        case Tok.Identifier:
        case Tok.DoesNotExist: {
          let r: LabelRequirement;
          try {
            r = this.parseRequirement();
          } catch (e) {
            if (e instanceof ParseFailure) throw new ParseFailure(`unable to parse requirement: ${e.message}`, e.issues);
            throw e;
          }
          reqs.push(r);
          const t = this.consume(true);
          if (t.tok === Tok.EndOfString) return reqs;
          if (t.tok === Tok.Comma) {
            const t2 = this.lookahead(true);
            if (t2.tok !== Tok.Identifier && t2.tok !== Tok.DoesNotExist) throw new ParseFailure(`found '${t2.literal}', expected: identifier after ','`);
            break;
          }
          throw new ParseFailure(`found '${t.literal}', expected: ',' or 'end of string'`);
        }
        case Tok.EndOfString:
          return reqs;
        default:
          throw new ParseFailure(`found '${literal}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return build(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return build(key, op, sortedCopy([...new Set(values)]));
  }

  private parseKeyAndInferOperator(): { key: string; operator: LabelOperator | '' } {
    let operator: LabelOperator | '' = '';
    let t = this.consume(true);
    if (t.tok === Tok.DoesNotExist) {
      operator = '!';
      t = this.consume(true);
    }
    if (t.tok !== Tok.Identifier) throw new ParseFailure(`found '${t.literal}', expected: identifier`);
    const keyErrs = isQualifiedName(t.literal);
    if (keyErrs.length) {
      // Upstream validates the key against a nil field path here, which prints as `<nil>`.
      const issue = fieldIssue.invalid('<nil>', t.literal, keyErrs.join('; '));
      throw new ParseFailure(issueString(issue), [issue]);
    }
    const next = this.lookahead(true).tok;
    if ((next === Tok.EndOfString || next === Tok.Comma) && operator !== '!') operator = 'exists';
    return { key: t.literal, operator };
  }

  private parseOperator(): LabelOperator {
    const t = this.consume(false);
    switch (t.tok) {
      case Tok.In:
        return 'in';
      case Tok.Equals:
        return '=';
      case Tok.DoubleEquals:
        return '==';
      case Tok.GreaterThan:
        return 'gt';
      case Tok.LessThan:
        return 'lt';
      case Tok.NotIn:
        return 'notin';
      case Tok.NotEquals:
        return '!=';
      default:
        throw new ParseFailure(`found '${t.literal}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  private parseValues(): string[] {
    const t = this.consume(true);
    if (t.tok !== Tok.OpenPar) throw new ParseFailure(`found '${t.literal}' expected: '('`);
    const la = this.lookahead(true);
    switch (la.tok) {
      case Tok.Identifier:
      case Tok.Comma: {
        const s = this.parseIdentifiersList();
        if (this.consume(true).tok !== Tok.ClosedPar) throw new ParseFailure(`found '${la.literal}', expected: ')'`);
        return s;
      }
      case Tok.ClosedPar:
        this.consume(true);
        return [''];
      default:
        throw new ParseFailure(`found '${la.literal}', expected: ',', ')' or identifier`);
    }
  }

  private parseIdentifiersList(): string[] {
    const s = new Set<string>();
    for (;;) {
      const t = this.consume(true);
      switch (t.tok) {
        case Tok.Identifier: {
          s.add(t.literal);
          const t2 = this.lookahead(true);
          if (t2.tok === Tok.Comma) continue;
          if (t2.tok === Tok.ClosedPar) return [...s];
          throw new ParseFailure(`found '${t2.literal}', expected: ',' or ')'`);
        }
        case Tok.Comma: {
          // Empty values between commas ("(,a)", "(a,,b)", "(a,)") are the empty string.
          if (s.size === 0) s.add('');
          const t2 = this.lookahead(true);
          if (t2.tok === Tok.ClosedPar) {
            s.add('');
            return [...s];
          }
          if (t2.tok === Tok.Comma) {
            // Upstream consumes the second comma here, so "(x,,)" ends on ")" where an identifier
            // or a comma must come: a parse error, as in kube.
            this.consume(true);
            s.add('');
          }
          break;
        }
        default:
          throw new ParseFailure(`found '${t.literal}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): string[] {
    const la = this.lookahead(true);
    if (la.tok === Tok.EndOfString || la.tok === Tok.Comma) return [''];
    const t = this.consume(true);
    if (t.tok === Tok.Identifier) return [t.literal];
    throw new ParseFailure(`found '${t.literal}', expected: identifier`);
  }
}

function build(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const check = checkRequirement(key, operator, values);
  if (check.messages.length) throw new ParseFailure(aggregate(check.messages), check.issues);
  return { key, operator, values };
}

/** labels.Parse without throwing: the selector, or upstream's message plus any field issues. */
export function tryParseLabelSelector(selector: string): LabelSelectorResult {
  try {
    const reqs = new Parser(lex(selector)).parse();
    return { ok: true, selector: { requirements: reqs.sort(byKey) } };
  } catch (e) {
    if (e instanceof ParseFailure) return { ok: false, message: e.message, issues: e.issues };
    throw e;
  }
}

/** labels.Parse; a bad selector is a 400 with upstream's message. */
export function parseLabelSelector(selector: string): LabelSelector {
  const r = tryParseLabelSelector(selector);
  if (!r.ok) throw badRequest(r.message);
  return r.selector;
}
