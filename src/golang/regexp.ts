// Go's regexp package: RE2 syntax, leftmost-first matching, linear time. kube-apiserver compiles
// CRD `pattern`s with regexp.Compile (kube-openapi's validator) and CEL's matches/find/findAll
// with it too, so every user-supplied pattern in kplane goes through here, never through RegExp:
// JavaScript reads `(?i)` mid-pattern, `\pL`, `\x{41}`, `\Q…\E` or `[[:alpha:]]` differently or
// not at all, and backtracks.
//
// re2js is a port of RE2/J, itself a port of Go's regexp/syntax: same syntax, same Perl flags
// (regexp.Compile's syntax.Perl), same limits and nearly the same error texts. What differs is
// patched here:
// - Go's errors always end in ": `expr`"; re2js leaves the part out where the expression is
//   empty (a trailing backslash) or is the whole pattern (too large, nests too deeply).
// - Go accepts a capture name used twice, `(?P<x>a)|(?P<x>b)`; re2js refuses it.
// - FindAllString skips an empty match that abuts the previous match; RE2/J's Matcher.find, as
//   Java's, does not.
// re2js's lookbehind extension stays off (it needs a flag), so `(?<=` is refused as in Go.
import { RE2JS, RE2JSSyntaxException } from 're2js';

/** A compiled pattern; `test` is regexp.MatchString (unanchored). */
export type Regexp = RE2JS;

/** A pattern regexp.Compile refuses; `message` is Go's err.Error(), e.g. "error parsing regexp: …". */
export class RegexpSyntaxError extends Error {
  override readonly name = 'RegexpSyntaxError';
}

export type CompiledRegexp = { readonly re: Regexp; readonly error?: undefined } | { readonly re?: undefined; readonly error: string };

const ERR_DUPLICATE_NAMED_CAPTURE = 'duplicate capture group name';
// Errors for which Go reports the whole pattern (re2js: nothing).
const WHOLE_PATTERN = new Set(['expression too large', 'expression nests too deeply']);

// The same few patterns run on every write (CRD schemas, CEL rules): compiled once, refusals too.
const cache = new Map<string, CompiledRegexp>();
const CACHE_LIMIT = 4096;

/** regexp.Compile, cached: the pattern compiled, or Go's error text. Never throws. */
export function compileRegexp(pattern: string): CompiledRegexp {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let out: CompiledRegexp;
  try {
    out = { re: compileUncached(pattern) };
  } catch (e) {
    out = { error: goErrorText(pattern, e) };
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, out);
  return out;
}

/** regexp.MustCompile's shape: the compiled pattern, or a {@link RegexpSyntaxError} with Go's text. */
export function mustCompileRegexp(pattern: string): Regexp {
  const c = compileRegexp(pattern);
  if (c.error !== undefined) throw new RegexpSyntaxError(c.error);
  return c.re;
}

function compileUncached(pattern: string): Regexp {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    if (!(e instanceof RE2JSSyntaxException) || e.error !== ERR_DUPLICATE_NAMED_CAPTURE) throw e;
    // Names only label groups; matching does not read them. Go would have parsed the pattern with
    // the names in place, so any other error still surfaces from the unnamed copy.
    return RE2JS.compile(withoutCaptureNames(pattern));
  }
}

function goErrorText(pattern: string, e: unknown): string {
  if (e instanceof RE2JSSyntaxException) {
    const expr = e.input ?? (WHOLE_PATTERN.has(e.error) ? pattern : '');
    return `error parsing regexp: ${e.error}: \`${expr}\``;
  }
  return e instanceof Error ? e.message : String(e);
}

const NAMED_GROUP = /\(\?P?<([A-Za-z0-9_]+)>/y;

/** The pattern with `(?P<name>` and `(?<name>` turned into plain `(` (same group numbers). */
export function withoutCaptureNames(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    let next = i + 1;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        next = end < 0 ? pattern.length : end + 2;
      } else next = i + 2;
    } else if (c === '[') {
      next = classEnd(pattern, i);
    } else if (c === '(') {
      NAMED_GROUP.lastIndex = i;
      const m = NAMED_GROUP.exec(pattern);
      if (m) {
        out += '(';
        i += m[0].length;
        continue;
      }
    }
    out += pattern.slice(i, next);
    i = next;
  }
  return out;
}

/** Index just past the character class opening at `start` (Go's parseClass: `]` first is a literal). */
function classEnd(p: string, start: number): number {
  let j = start + 1;
  if (p[j] === '^') j++;
  let first = true;
  while (j < p.length) {
    const c = p[j]!;
    if (c === ']' && !first) return j + 1;
    first = false;
    if (c === '\\') j += 2;
    else if (c === '[' && p[j + 1] === ':' && p.indexOf(':]', j + 2) >= 0) j = p.indexOf(':]', j + 2) + 2;
    else j++;
  }
  return p.length;
}

/** regexp.FindString: the leftmost match, or '' when there is none. */
export function findString(re: Regexp, s: string): string {
  const m = re.matcher(s);
  return m.find() ? (m.group() ?? '') : '';
}

/**
 * regexp.FindAllString(s, n): successive non-overlapping matches, at most n of them when n >= 0.
 * An empty match right where the previous match ended is skipped, as Go does.
 */
export function findAllString(re: Regexp, s: string, n: number): string[] {
  const out: string[] = [];
  if (n === 0) return out;
  const m = re.matcher(s);
  let prevEnd = -1;
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    const abuts = start === end && start === prevEnd;
    prevEnd = end;
    if (abuts) continue;
    out.push(m.group() ?? '');
    if (n > 0 && out.length >= n) break;
  }
  return out;
}
