// Go's url.ParseRequestURI as kube's CEL reads it: the URL library's url()/isURL() and the `uri`
// format (format-sets.ts) share it.

/** A parsed URL and the text it came from (an absolute path has no scheme nor host). */
export class KubeURL {
  constructor(
    readonly url: URL,
    readonly raw: string,
  ) {}
}

/** An absolute URI or an absolute path; no fragments are stripped here. */
export function parseURL(s: string): KubeURL | undefined {
  if (s.startsWith('/')) {
    try {
      return new KubeURL(new URL(s, 'http://placeholder.invalid'), s);
    } catch {
      return undefined;
    }
  }
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return undefined;
  try {
    return new KubeURL(new URL(s), s);
  } catch {
    return undefined;
  }
}
