// CRD `pattern`s are Go RE2 expressions. JS RegExp covers nearly all of RE2 once a few spellings
// are translated; compiled patterns are cached because the same few patterns run on every write.

export interface CompiledPattern {
  re?: RegExp;
  /** Why the pattern does not compile (JS engine wording, not Go's). */
  error?: string;
}

const cache = new Map<string, CompiledPattern>();
const CACHE_LIMIT = 4096;

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

function translate(pattern: string): { source: string; flags: string } {
  let src = pattern;
  let flags = '';
  // A leading flag group such as (?i) or (?is) applies to the whole expression.
  const m = /^\(\?([imsU]+)\)/.exec(src);
  if (m) {
    src = src.slice(m[0].length);
    for (const f of m[1]!) if (f === 'i' || f === 'm' || f === 's') flags += f;
  }
  src = src
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])')
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, neg: string, name: string) => {
      const cls = POSIX[name];
      if (!cls) return whole;
      return neg ? `^${cls}` : cls;
    });
  return { source: src, flags };
}

/** Compiles a Go regular expression into a JS RegExp (unanchored, like regexp.MatchString). */
export function compileGoRegExp(pattern: string): CompiledPattern {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const { source, flags } = translate(pattern);
  let out: CompiledPattern;
  try {
    out = { re: new RegExp(source, flags + 'u') };
  } catch {
    // Unicode mode rejects identity escapes like \- that RE2 accepts; retry without it.
    try {
      out = { re: new RegExp(source, flags) };
    } catch (e) {
      out = { error: e instanceof Error ? e.message : String(e) };
    }
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, out);
  return out;
}
