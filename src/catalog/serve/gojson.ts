// JSON text as Go's encoding/json writes it where the registry API carries JSON in strings: values
// decoded into Go maps come out with their keys sorted (whatever order they were built in here);
// json.Marshal escapes <, > and & unless the encoder was told not to (SetIndent/SetEscapeHTML(false),
// as opm's declcfg and property packages do). Strings and numbers are written by golang/json.ts.
import { compareGoStrings, goNumber, goString as goStringOf } from '../golang/json.js';

export interface GoJSONOptions {
  /** escape <, > and & as \u003c, \u003e, \u0026 (json.Marshal's default) */
  escapeHTML?: boolean;
}

export function goString(s: string, opts: GoJSONOptions = {}): string {
  return goStringOf(s, opts.escapeHTML ?? false);
}

/** A decoded JSON value re-encoded the way Go encodes an interface{} holding it (map keys sorted). */
export function goJSON(value: unknown, opts: GoJSONOptions = {}): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return goString(value, opts);
    case 'number':
      return Number.isFinite(value) ? goNumber(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => goJSON(v, opts)).join(',')}]`;
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(compareGoStrings);
      return `{${keys.map((k) => `${goString(k, opts)}:${goJSON(obj[k], opts)}`).join(',')}}`;
    }
    default:
      return 'null';
  }
}

/**
 * Writes a struct the way Go does: fields in declaration order, each given as [name, encoded value];
 * a field whose value is undefined is left out (omitempty decided by the caller).
 */
export function goStruct(fields: [string, string | undefined][]): string {
  const parts: string[] = [];
  for (const [name, text] of fields) if (text !== undefined) parts.push(`${JSON.stringify(name)}:${text}`);
  return `{${parts.join(',')}}`;
}
