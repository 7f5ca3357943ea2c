// CEL expressions in kube's shape, shared by every user of CEL in kplane (CRD validation rules,
// admission policies and webhook matchConditions, JWT claim expressions): cel-go's error text,
// the AST rewrites every program gets after parsing (RE2 `matches`, metered comprehensions,
// constant regular expressions checked), the node count the runtime meter charges, and upstream's
// cost limits (k8s.io/apiserver/pkg/apis/cel/config.go).
import type { ASTNode } from '@marcbachmann/cel-js';
import { compileRegexp } from '../../golang/regexp.js';
import { RE2_MATCHES, charge } from './library.js';
import { countNodes, walk, type AnyNode } from './ast.js';
import { checkFormatStrings } from './strings-format.js';

export { countNodes, walk, type AnyNode } from './ast.js';

/** Upstream limits (k8s.io/apiserver/pkg/apis/cel/config.go). */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/** celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
export const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

/** CEL's reserved words (cel-go's parser): not usable as identifiers, escaped as `__word__` in field names. */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

// ---------- error text in cel-go's shape ----------

interface CelLikeError {
  summary?: string;
  message?: string;
  range?: { start: number; end: number };
  node?: { start?: number; pos?: number };
  code?: string;
}

/** A rewritten expression (admission/cel/construct.ts): the text parsed, and the source offset of an offset in it. */
export interface SourceMap {
  readonly text: string;
  sourceOffset(i: number): number;
}

/** cel-go's common.Errors.ToDisplayString for one error: `ERROR: <input>:L:C: msg\n | src\n | ...^`. */
export function celErrorText(src: string, e: unknown, rewritten?: SourceMap): string {
  const err = (e ?? {}) as CelLikeError;
  let msg = err.summary ?? (err.message ?? String(e)).split('\n')[0] ?? '';
  msg = translateMessage(msg, err.code);
  // The error's positions are the parsed text's: a rewrite's when the source was rewritten.
  const parsed = rewritten?.text ?? src;
  let off = Math.max(0, Math.min(parsed.length, err.range?.start ?? err.node?.start ?? err.node?.pos ?? 0));
  // cel-go locates a select at its dot.
  if (err.code === 'no_such_key' && parsed[off - 1] === '.') off--;
  // cel-go points binary-operator errors at the operator, not at the left operand.
  const node = err.node as { op?: string; args?: unknown } | undefined;
  if (node?.op && OPS[node.op] && Array.isArray(node.args) && node.args.length === 2) {
    const [l, r] = node.args as Array<{ end?: number; start?: number }>;
    if (l?.end !== undefined && r?.start !== undefined) {
      const i = parsed.slice(l.end, r.start).indexOf(node.op);
      if (i >= 0) off = l.end + i;
    }
  }
  if (rewritten) off = Math.min(src.length, rewritten.sourceOffset(off));
  const before = src.slice(0, off);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = off - lineStart;
  const lineText = src.slice(lineStart).split('\n')[0] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${msg}\n | ${lineText}\n | ${'.'.repeat(col)}^`;
}

const OPS: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '==': '_==_',
  '!=': '_!=_',
  in: '@in',
};

function translateMessage(msg: string, code: string | undefined): string {
  msg = msg.split(RE2_MATCHES).join('matches');
  const bin = /^no such overload: (\S+) (\S+) (\S+)$/.exec(msg);
  if (bin && OPS[bin[2]!]) return `found no matching overload for '${OPS[bin[2]!]}' applied to '(${bin[1]}, ${bin[3]})'`;
  if (code === 'no_such_key') {
    const m = /^No such key: (.*)$/.exec(msg);
    if (m) return `undefined field '${m[1]}'`;
  }
  const unk = /^Unknown variable: (.*)$/.exec(msg);
  if (unk) return `undeclared reference to '${unk[1]}' (in container '')`;
  if (code && /^(unexpected|expected|invalid_token|unterminated)/.test(code)) return `Syntax error: ${msg}`;
  return msg;
}

// ---------- AST helpers: ast.ts ----------

/** Replaces the evaluator's backtracking-RegExp `matches` with the RE2 one, before type checking. */
export function useRE2(ast: ASTNode): void {
  walk(ast, (n) => {
    if ((n.op === 'rcall' || n.op === 'call') && Array.isArray(n.args) && n.args[0] === 'matches') n.args[0] = RE2_MATCHES;
  });
}

/** Wraps every comprehension's loop condition so each iteration charges the runtime meter. */
export function meterComprehensions(ast: ASTNode): void {
  walk(ast, (n) => {
    if (n.op !== 'comprehension') return;
    const c = n.args as { step: unknown; condition?: (accu: unknown) => boolean };
    const stepCost = countNodes(c.step) + 1;
    const orig = c.condition;
    c.condition = orig
      ? (accu) => {
          charge(stepCost);
          return orig(accu);
        }
      : () => {
          charge(stepCost);
          return true;
        };
  });
}

/**
 * Constant patterns Go's regexp refuses, as kube's CEL finds them: for matches, cel-go's regex
 * literal validator (a compile error, "invalid matches argument", at the pattern); for find and
 * findAll, kube's regex optimisation compiles the pattern when the program is built, so the
 * error is Go's own, "program instantiation failed: error parsing regexp: …". Then cel-go's
 * string.format validator (strings-format.ts checkFormatStrings): a constant format string whose
 * clauses do not fit its literal arguments' types is a compile error. Call after type checking.
 */
export function checkConstantPatterns(ast: ASTNode, src: string, rewritten?: SourceMap): string | undefined {
  const constants: { name: string; pattern: string; start: number }[] = [];
  walk(ast, (n) => {
    if (n.op !== 'rcall' && n.op !== 'call') return;
    const a = n.args as unknown[];
    const name = a[0];
    if (name !== RE2_MATCHES && name !== 'find' && name !== 'findAll') return;
    const args = (n.op === 'rcall' ? a[2] : a[1]) as (AnyNode & { start?: number })[] | undefined;
    // The pattern is the receiver's first argument, or the global form's second.
    const p = n.op === 'rcall' ? args?.[0] : args?.[1];
    if (p?.op === 'value' && typeof p.args === 'string') constants.push({ name, pattern: p.args, start: p.start ?? 0 });
  });
  const badMatches = constants.find((c) => c.name === RE2_MATCHES && compileRegexp(c.pattern).error !== undefined);
  if (badMatches)
    return `compilation failed: ${celErrorText(src, { summary: 'invalid matches argument', range: { start: badMatches.start, end: badMatches.start } }, rewritten)}`;
  for (const c of constants) {
    const error = compileRegexp(c.pattern).error;
    if (error !== undefined) return `program instantiation failed: ${error}`;
  }
  // cel-go's string.format validator: a constant format string against its literal arguments.
  const badFormat = checkFormatStrings(ast, rewritten?.text ?? src);
  if (badFormat)
    return `compilation failed: ${celErrorText(src, { summary: badFormat.message, range: { start: badFormat.at, end: badFormat.at } }, rewritten)}`;
  return undefined;
}
