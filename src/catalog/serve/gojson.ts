// JSON text as Go's encoding/json writes it, where the registry API carries JSON in strings:
// objects decoded into Go maps come out with sorted keys; json.Marshal escapes <, > and & unless
// the encoder was told not to (SetEscapeHTML(false), as opm's declcfg and property packages do);
// U+2028 and U+2029 are always escaped.

export interface GoJSONOptions {
  /** escape <, > and & as \u003c, \u003e, \u0026 (json.Marshal's default) */
  escapeHTML?: boolean;
}

const HTML = /[<>&\u2028\u2029]/g;
const LINE_SEPARATORS = /[\u2028\u2029]/g;
const HEX: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

export function goString(s: string, opts: GoJSONOptions = {}): string {
  const text = JSON.stringify(s);
  return text.replace(opts.escapeHTML ? HTML : LINE_SEPARATORS, (c) => HEX[c]!);
}

/** A decoded JSON value re-encoded the way Go encodes an interface{} holding it (map keys sorted). */
export function goJSON(value: unknown, opts: GoJSONOptions = {}): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return goString(value, opts);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => goJSON(v, opts)).join(',')}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareBytes);
      return `{${keys.map((k) => `${goString(k, opts)}:${goJSON(obj[k], opts)}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/** Go sorts map keys by their UTF-8 bytes; for strings without astral characters that is UTF-16 order. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Writes a struct the way Go does: fields in declaration order, each given as
 * [name, value, omitEmpty]; an omitempty field is left out when it is "", 0, false, null or an
 * empty array or map. Values are already-encoded JSON text (see goJSON/goString) or undefined.
 */
export function goStruct(fields: [string, string | undefined][]): string {
  const parts: string[] = [];
  for (const [name, text] of fields) if (text !== undefined) parts.push(`${JSON.stringify(name)}:${text}`);
  return `{${parts.join(',')}}`;
}
