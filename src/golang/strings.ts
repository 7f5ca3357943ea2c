// Go's strings, where kplane must trim or split exactly as a Go program does.

/** unicode.IsSpace's characters (what strings.TrimSpace trims). */
const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

/** strings.TrimSpace (Unicode White_Space, which differs from String.prototype.trim on U+0085 and U+FEFF). */
export function goTrimSpace(s: string): string {
  return s.replace(GO_SPACE, '');
}

/** strings.SplitN for n > 0: at most n parts, the last holding the rest. */
export function goSplitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i === -1) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}
