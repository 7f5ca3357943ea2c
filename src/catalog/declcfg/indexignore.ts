// .indexignore files, as opm reads them (github.com/joelanford/ignore over go-git's gitignore
// patterns): every .indexignore in the tree adds its patterns, scoped to its own directory; a path
// is ignored when the LAST pattern that matches it (deeper and later files win) is not a `!` one.
// Unlike git, a pattern matching a directory name matches every path through that directory, and a
// later `!pattern` brings back anything it matches, even inside an ignored directory: a plain
// `!*.yaml` after `veneer.yaml` brings veneer.yaml back, so keep such exclusions after it.
import { readFile } from 'node:fs/promises';
import { goTrimSpace } from '../../golang/strings.js';

export const INDEX_IGNORE_FILENAME = '.indexignore';

export interface IgnorePattern {
  /** directory components of the .indexignore that holds it, from the root */
  domain: string[];
  pattern: string[];
  inclusion: boolean;
  dirOnly: boolean;
  isGlob: boolean;
  /** the line it was read from */
  source: string;
}

/** go-git's gitignore.ParsePattern. */
export function parsePattern(line: string, domain: string[]): IgnorePattern {
  let p = line;
  const res: IgnorePattern = { domain: [...domain], pattern: [], inclusion: false, dirOnly: false, isGlob: false, source: line };
  if (p.startsWith('!')) {
    res.inclusion = true;
    p = p.slice(1);
  }
  if (!p.endsWith('\\ ')) p = p.replace(/ +$/, '');
  if (p.endsWith('/')) {
    res.dirOnly = true;
    p = p.slice(0, -1);
  }
  if (p.includes('/')) res.isGlob = true;
  res.pattern = p.split('/');
  return res;
}

/** The patterns of one .indexignore file's text (lines trimmed; blank lines and # comments skipped). */
export function parsePatterns(text: string, domain: string[]): IgnorePattern[] {
  const out: IgnorePattern[] = [];
  for (const raw of text.split('\n')) {
    const line = goTrimSpace(raw);
    if (line === '' || line.startsWith('#')) continue;
    out.push(parsePattern(line, domain));
  }
  return out;
}

type MatchResult = 'none' | 'exclude' | 'include';

function matchPattern(p: IgnorePattern, path: string[], isDir: boolean): MatchResult {
  if (path.length <= p.domain.length) return 'none';
  for (let i = 0; i < p.domain.length; i++) if (path[i] !== p.domain[i]) return 'none';
  const rest = path.slice(p.domain.length);
  const ok = p.isGlob ? globMatch(p, rest, isDir) : simpleNameMatch(p, rest, isDir);
  if (!ok) return 'none';
  return p.inclusion ? 'include' : 'exclude';
}

function simpleNameMatch(p: IgnorePattern, path: string[], isDir: boolean): boolean {
  for (let i = 0; i < path.length; i++) {
    const m = goPathMatch(p.pattern[0]!, path[i]!);
    if (m === undefined) return false;
    if (!m) continue;
    if (p.dirOnly && !isDir && i === path.length - 1) return false;
    return true;
  }
  return false;
}

function globMatch(p: IgnorePattern, pathIn: string[], isDir: boolean): boolean {
  let path = pathIn;
  let matched = false;
  let canTraverse = false;
  for (let i = 0; i < p.pattern.length; i++) {
    const pattern = p.pattern[i]!;
    if (pattern === '') {
      canTraverse = false;
      continue;
    }
    if (pattern === '**') {
      if (i === p.pattern.length - 1) break;
      canTraverse = true;
      continue;
    }
    if (pattern.includes('**')) return false;
    if (path.length === 0) return false;
    if (canTraverse) {
      canTraverse = false;
      while (path.length > 0) {
        const e = path[0]!;
        path = path.slice(1);
        const m = goPathMatch(pattern, e);
        if (m === undefined) return false;
        if (m) {
          matched = true;
          break;
        } else if (path.length === 0) {
          matched = false;
        }
      }
    } else {
      const m = goPathMatch(pattern, path[0]!);
      if (m !== true) return false;
      matched = true;
      path = path.slice(1);
    }
  }
  if (matched && p.dirOnly && !isDir && path.length === 0) matched = false;
  return matched;
}

const REGEX_CACHE = new Map<string, RegExp | null>();

/**
 * Go's path/filepath.Match: `*` any run of non-separators, `?` one non-separator, `[...]` a class
 * (`^` negates, ranges, `\` escapes). Returns undefined for a malformed pattern (ErrBadPattern).
 */
export function goPathMatch(pattern: string, name: string): boolean | undefined {
  let re = REGEX_CACHE.get(pattern);
  if (re === undefined) {
    re = compileGlob(pattern);
    REGEX_CACHE.set(pattern, re);
  }
  if (re === null) return undefined;
  return re.test(name);
}

function escapeRegexChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? '\\' + c : c;
}

function compileGlob(pattern: string): RegExp | null {
  const chars = Array.from(pattern);
  let src = '^';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*') src += '[^/]*';
    else if (c === '?') src += '[^/]';
    else if (c === '\\') {
      i++;
      if (i >= chars.length) return null;
      src += escapeRegexChar(chars[i]!);
    } else if (c === '[') {
      i++;
      let negate = false;
      if (chars[i] === '^') {
        negate = true;
        i++;
      }
      let cls = '';
      let n = 0;
      for (;;) {
        if (i >= chars.length) return null;
        if (chars[i] === ']' && n > 0) break;
        let lo = chars[i]!;
        if (lo === '\\') {
          i++;
          if (i >= chars.length) return null;
          lo = chars[i]!;
        } else if (lo === '-' || lo === ']') {
          if (lo === ']' || n === 0) return null;
        }
        i++;
        let hi = lo;
        if (chars[i] === '-') {
          i++;
          if (i >= chars.length) return null;
          hi = chars[i]!;
          if (hi === '\\') {
            i++;
            if (i >= chars.length) return null;
            hi = chars[i]!;
          } else if (hi === ']' || hi === '-') return null;
          i++;
          if (hi.codePointAt(0)! < lo.codePointAt(0)!) return null;
        }
        cls += lo === hi ? escapeRegexChar(lo) : `${escapeRegexChar(lo)}-${escapeRegexChar(hi)}`;
        n++;
      }
      // a class never matches the separator
      src += negate ? `(?![/])[^${cls}]` : `(?![/])[${cls}]`;
    } else src += escapeRegexChar(c);
  }
  try {
    return new RegExp(src + '$', 'u');
  } catch {
    return null;
  }
}

/** Matches slash-separated paths against the patterns of every .indexignore read (last match wins). */
export class IgnoreMatcher {
  constructor(readonly patterns: IgnorePattern[] = []) {}

  /** Whether path (relative to the root, `/`-separated) is ignored. */
  match(path: string, isDir = false): boolean {
    const parts = path.split('/');
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const r = matchPattern(this.patterns[i]!, parts, isDir);
      if (r !== 'none') return r === 'exclude';
    }
    return false;
  }

  /** Adds the patterns of an .indexignore found at relPath ("" or "sub/dir/.indexignore"). */
  addFile(relPath: string, text: string): void {
    const dir = relPath.includes('/') ? relPath.slice(0, relPath.lastIndexOf('/')) : '';
    this.patterns.push(...parsePatterns(text, dir === '' ? [] : dir.split('/')));
  }

  /** A matcher for the files listed, reading each .indexignore among them in the order given. */
  static async fromFiles(root: string, relPaths: readonly string[]): Promise<IgnoreMatcher> {
    const m = new IgnoreMatcher();
    for (const rel of relPaths) {
      const base = rel.slice(rel.lastIndexOf('/') + 1);
      if (base !== INDEX_IGNORE_FILENAME) continue;
      m.addFile(rel, await readFile(`${root}/${rel}`, 'utf8'));
    }
    return m;
  }
}
