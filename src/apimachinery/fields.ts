// Field selectors (k8s.io/apimachinery/pkg/fields): `a=b`, `a==b`, `a!=b`, comma-separated, with
// `\`, `,` and `=` escaped by a backslash in values. Messages are upstream's.
import { badRequest } from './errors.js';

export type FieldOperator = '=' | '!=';

export interface FieldRequirement {
  readonly field: string;
  /** `==` parses to `=`, as upstream's hasTerm does. */
  readonly operator: FieldOperator;
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

export const EVERYTHING_FIELDS: FieldSelector = Object.freeze({ requirements: Object.freeze([]) });

// Order matters: `!=` and `==` must win over the `=` they contain.
const TERM_OPERATORS = ['!=', '==', '='] as const;

export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export type FieldSelectorResult = { ok: true; selector: FieldSelector } | { ok: false; message: string };

/** UnescapeValue; the error texts (including Go printing the rune as a number) are upstream's. */
export function unescapeFieldValue(s: string): { ok: true; value: string } | { ok: false; message: string } {
  if (!/[\\,=]/.test(s)) return { ok: true, value: s };
  let v = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') return { ok: false, message: `invalid field selector: invalid escape sequence: \\${c}` };
      v += c;
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') return { ok: false, message: `invalid field selector: unescaped character in value: ${c.codePointAt(0)!}` };
    else v += c;
  }
  if (inSlash) return { ok: false, message: 'invalid field selector: invalid escape sequence: \\' };
  return { ok: true, value: v };
}

/** Comma-separated terms; an escaped comma stays in its term, backslash included. */
function splitTerms(selector: string): string[] {
  if (selector.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** The left side has no escaping, so the first operator found splits the term. */
function splitTerm(term: string): { lhs: string; op: (typeof TERM_OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

export function tryParseFieldSelector(selector: string): FieldSelectorResult {
  const parts = splitTerms(selector).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const requirements: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const t = splitTerm(part);
    if (!t) return { ok: false, message: `invalid selector: '${selector}'; can't understand '${part}'` };
    const unescaped = unescapeFieldValue(t.rhs);
    if (!unescaped.ok) return unescaped;
    requirements.push({ field: t.lhs, operator: t.op === '!=' ? '!=' : '=', value: unescaped.value });
  }
  return { ok: true, selector: { requirements } };
}

/** fields.ParseSelector; a bad selector is a 400 with upstream's message. */
export function parseFieldSelector(selector: string): FieldSelector {
  const r = tryParseFieldSelector(selector);
  if (!r.ok) throw badRequest(r.message);
  return r.selector;
}

/** A missing field reads as "" (upstream's Fields.Get), so `a=` matches objects without `a`. */
export function matchesFields(selector: FieldSelector, fields: Readonly<Record<string, string>>): boolean {
  for (const r of selector.requirements) {
    const actual = Object.prototype.hasOwnProperty.call(fields, r.field) ? fields[r.field]! : '';
    if ((actual === r.value) !== (r.operator === '=')) return false;
  }
  return true;
}

export function fieldSelectorToString(selector: FieldSelector): string {
  return selector.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
}

export const isEmptyFieldSelector = (s: FieldSelector): boolean => s.requirements.length === 0;

/** The value an `=` term demands for `field`, if any. */
export function fieldRequiresExactMatch(selector: FieldSelector, field: string): string | undefined {
  return selector.requirements.find((r) => r.field === field && r.operator === '=')?.value;
}

/** `metadata.name=x`: kubectl delete --wait and single-object watches select this way. */
export const exactMetadataName = (selector: FieldSelector): string | undefined => fieldRequiresExactMatch(selector, 'metadata.name');

/** The message built-in kinds and CRDs give for a field they cannot select on. */
export const fieldLabelNotSupportedMessage = (label: string): string => `field label not supported: ${label}`;

/** runtime.DefaultMetaV1FieldSelectorConversion's message, for kinds with no field label list. */
export const unknownDefaultFieldSelectorMessage = (label: string): string =>
  `${JSON.stringify(label)} is not a known field selector: only "metadata.name", "metadata.namespace"`;

/**
 * Check every field against what a resource supports (the ConvertFieldLabel step of list/watch);
 * the first unsupported one is a 400 with upstream's `field label not supported: <name>`.
 */
export function checkSupportedFields(
  selector: FieldSelector,
  supported: ReadonlySet<string> | readonly string[],
  message: (label: string) => string = fieldLabelNotSupportedMessage,
): void {
  const has = Array.isArray(supported) ? (f: string) => supported.includes(f) : (f: string) => (supported as ReadonlySet<string>).has(f);
  for (const r of selector.requirements) if (!has(r.field)) throw badRequest(message(r.field));
}

/** Rename or rewrite terms (field label conversion); a term mapped to an empty field and value is dropped. */
export function transformFieldSelector(selector: FieldSelector, fn: (field: string, value: string) => { field: string; value: string }): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const r of selector.requirements) {
    const t = fn(r.field, r.value);
    if (t.field === '' && t.value === '') continue;
    requirements.push({ field: t.field, operator: r.operator, value: t.value });
  }
  return { requirements };
}
