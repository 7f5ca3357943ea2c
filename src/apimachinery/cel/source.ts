// Source-level helpers for CEL expressions that cel-js does not parse as cel-go does: reading past
// literals and comments, the has() rewrite and optional entries below, and parseCel, which applies
// both. (admission/cel/construct.ts rewrites object constructions with the same helpers.)
//
// has() on a field of any expression: cel-go's macro takes `has(e.f)` for any operand `e`
// (`has(object.spec.containers[0].image)`), cel-js's only for a chain of fields from a variable,
// and refuses the rest ("has() invalid argument"). Such an argument is rewritten, before parsing,
// to the optional selection it means: `(e.?f.hasValue())`, true when `e` has the field, and the
// same error as has() when `e` itself fails (a missing key, an index out of range). Chains from a
// variable are left to cel-js's macro. The rewrite records where each of its characters comes
// from (celSourceMap), so that an error found in the rewritten text points into the expression as
// written.

import type { Environment } from '@marcbachmann/cel-js';
import type { SourceMap } from './expressions.js';
import { markOptionalEntries } from './optional.js';

/** Rewritten text and, for each of its characters, the index of the source character it stands for. */
export class Rewrite {
  text = '';
  readonly from: number[] = [];
  /** Source text `[a, b)`, as it is. */
  copy(src: string, a: number, b: number): this {
    this.text += src.slice(a, b);
    for (let k = a; k < b; k++) this.from.push(k);
    return this;
  }
  /** Text of the rewrite's own, standing for the source at `at`. */
  insert(text: string, at: number): this {
    this.text += text;
    for (let k = 0; k < text.length; k++) this.from.push(at);
    return this;
  }
  /** `r`'s text `[a, b)` (all of it by default), its source offsets shifted by `by`. */
  append(r: Rewrite, by = 0, a = 0, b = r.text.length): this {
    this.text += r.text.slice(a, b);
    for (let k = a; k < b; k++) this.from.push(r.from[k]! + by);
    return this;
  }
  /** As a SourceMap of `src` (an offset past the end maps to the source's end). */
  map(src: string): SourceMap {
    return { text: this.text, sourceOffset: (i) => (i < this.from.length ? this.from[i]! : src.length) };
  }
}

export const isIdentStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z_]/.test(c);
export const isIdent = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);

/** Index just past the string literal starting at `i` (after its prefix), or -1 if `src[i]` is not a quote. */
function skipString(src: string, i: number, raw: boolean): number {
  const q = src[i];
  if (q !== '"' && q !== "'") return -1;
  const triple = src.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  let j = i + close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') {
      j += 2;
      continue;
    }
    if (src.startsWith(close, j)) return j + close.length;
    j++;
  }
  return src.length;
}

/** Where the literal (with an optional r/b prefix) starting at `i` ends, or -1 when none starts there. */
export function literalEnd(src: string, i: number): number {
  const m = /^(?:[rR][bB]?|[bB][rR]?)?/.exec(src.slice(i, i + 2))![0];
  return skipString(src, i + m.length, /[rR]/.test(m));
}

export const skipSpace = (src: string, i: number): number => {
  while (i < src.length && /\s/.test(src[i]!)) i++;
  return i;
};

/** Where the comment or literal at `i` ends, or -1 when none starts there. */
function skipOpaque(src: string, i: number): number {
  if (src[i] === '/' && src[i + 1] === '/') {
    const nl = src.indexOf('\n', i);
    return nl < 0 ? src.length : nl;
  }
  // A literal's prefix letter is part of an identifier when one runs into it.
  return isIdent(src[i - 1]) ? -1 : literalEnd(src, i);
}

/**
 * Calls `visit` with each character of `src` from `from` outside comments and literals, and the
 * bracket depth before it (relative to `from`), until `visit` answers true; answers that index, or -1.
 */
function scan(src: string, from: number, visit: (c: string, i: number, depth: number) => boolean): number {
  let depth = 0;
  for (let i = from; i < src.length; ) {
    const skip = skipOpaque(src, i);
    if (skip > i) {
      i = skip;
      continue;
    }
    const c = src[i]!;
    if (visit(c, i, depth)) return i;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    i++;
  }
  return -1;
}

/** The index of the `)` closing the `(` at `open`, or -1 when it is not closed. */
function closingParen(src: string, open: number): number {
  const i = scan(src, open, (c, _i, depth) => depth === 1 && (c === ')' || c === ']' || c === '}'));
  return i >= 0 && src[i] === ')' ? i : -1;
}

const VARIABLE_CHAIN = /^\s*\.?\s*[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*\s*$/;

/** `has(e.f)` with `e` not a chain from a variable as `   (e.?f.hasValue())` (see the file comment); other text unchanged. */
export function rewriteHas(src: string): string {
  return src.includes('has') ? rewriteHasMapped(src).text : src;
}

/** rewriteHas, with where each character of the result comes from in `src`. */
function rewriteHasMapped(src: string): Rewrite {
  const out = new Rewrite();
  for (let i = 0; i < src.length; ) {
    const skip = skipOpaque(src, i);
    if (skip > i) {
      out.copy(src, i, skip);
      i = skip;
      continue;
    }
    if (src.startsWith('has', i) && !isIdent(src[i - 1]) && !isIdent(src[i + 3]) && out.text.trimEnd().slice(-1) !== '.') {
      const open = skipSpace(src, i + 3);
      const close = src[open] === '(' ? closingParen(src, open) : -1;
      const arg = close > 0 ? rewriteHasMapped(src.slice(open + 1, close)) : undefined;
      const selection = arg && splitSelection(arg.text);
      if (arg && selection) {
        // `has` becomes spaces: the operand keeps its columns.
        const by = open + 1;
        out.insert(' '.repeat(open - i), i).insert('(', open);
        out.append(arg, by, 0, selection.dot);
        out.insert('.?', arg.from[selection.dot]! + by);
        out.append(arg, by, selection.fieldStart, selection.fieldEnd);
        out.insert('.hasValue())', close);
        i = close + 1;
        continue;
      }
    }
    out.copy(src, i, i + 1);
    i++;
  }
  return out;
}

/**
 * What parseCel parses for `expression` (after `rewritten`, when the caller rewrote it first), as a
 * map back to `expression`: for error positions (celErrorText, checkConstantPatterns). Undefined
 * when nothing was rewritten.
 */
export function celSourceMap(expression: string, rewritten?: SourceMap): SourceMap | undefined {
  const parsed = rewritten?.text ?? expression;
  if (!parsed.includes('has')) return rewritten;
  const has = rewriteHasMapped(parsed);
  if (has.text === parsed) return rewritten;
  if (!rewritten) return has.map(expression);
  const inner = has.map(parsed);
  return { text: has.text, sourceOffset: (i) => rewritten.sourceOffset(inner.sourceOffset(i)) };
}

/** `e.f` as its operand's end (the dot) and its field, when `e` is not a chain from a variable (cel-js's macro takes those). */
function splitSelection(arg: string): { dot: number; fieldStart: number; fieldEnd: number } | undefined {
  let lastDot = -1;
  scan(arg, 0, (c, i, depth) => {
    if (c === '.' && depth === 0 && isIdentStart(arg[skipSpace(arg, i + 1)])) lastDot = i;
    return false;
  });
  if (lastDot < 0) return undefined;
  const start = skipSpace(arg, lastDot + 1);
  let end = start;
  while (isIdent(arg[end])) end++;
  if (skipSpace(arg, end) !== arg.length) return undefined;
  const operand = arg.slice(0, lastDot);
  if (VARIABLE_CHAIN.test(operand) || operand.trim() === '') return undefined;
  return { dot: lastDot, fieldStart: start, fieldEnd: end };
}

/**
 * Optional entries of list and map literals (`[a, ?b]`, `{?k: v}`): each such `?` is blanked, so
 * that the evaluator's parser reads the literal, and its index returned for markOptionalEntries
 * (optional.ts). A `?` is an entry's when it follows the `[` of a list literal (not of an index),
 * a `{`, or a `,` directly inside either; `.?`, `[?k]` and the conditional operator are left.
 */
export function blankOptionalEntries(src: string): { src: string; marks: number[] } {
  if (!src.includes('?')) return { src, marks: [] };
  const marks: number[] = [];
  // The open brackets: true for a literal's (list or braces), false for an index's or a call's.
  const open: boolean[] = [];
  let prev = '';
  for (let i = 0; i < src.length; ) {
    const skip = skipOpaque(src, i);
    if (skip > i) {
      prev = src[i] === '/' ? prev : 'x';
      i = skip;
      continue;
    }
    const c = src[i]!;
    if (c === '[') open.push(!(prev === ')' || prev === ']' || prev === '}' || prev === 'x' || (isIdent(prev) && !afterIn(src, i))));
    else if (c === '{') open.push(true);
    else if (c === '(') open.push(false);
    else if (c === ')' || c === ']' || c === '}') open.pop();
    else if (c === '?' && open.at(-1) === true && (prev === '[' || prev === '{' || prev === ',')) marks.push(i);
    if (!/\s/.test(c)) prev = c;
    i++;
  }
  if (marks.length === 0) return { src, marks };
  // Indices are UTF-16 offsets, as the parser's positions are.
  let out = src;
  for (const q of marks) out = `${out.slice(0, q)} ${out.slice(q + 1)}`;
  return { src: out, marks };
}

/** Whether the word before `i` is the operator `in` (`x in [...]` opens a list, `a[...]` an index). */
const afterIn = (src: string, i: number): boolean => /(?:^|[^A-Za-z0-9_.])in\s*$/.test(src.slice(Math.max(0, i - 8), i));

/** Parses a CEL expression as cel-go reads it: has() on any operand, optional entries (see above). */
export function parseCel(env: Environment, expression: string): ReturnType<Environment['parse']> {
  const { src, marks } = blankOptionalEntries(rewriteHas(expression));
  const program = env.parse(src);
  markOptionalEntries(program.ast, marks);
  return program;
}
