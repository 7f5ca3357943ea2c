// fmt's %v for the values opm's messages print (decoded JSON: string, float64, bool, nil,
// []interface{}, map[string]interface{}; and []string).
import { compareGoStrings } from './json.js';
import { formatFloat64 } from './strconv.js';

/** fmt's %v of a decoded JSON value. */
export function goFmtV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatFloat64(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goFmtV).join(' ')}]`;
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj).sort(compareGoStrings);
  return `map[${keys.map((k) => `${k}:${goFmtV(obj[k])}`).join(' ')}]`;
}

/** fmt's %v of a []string: [a b c]. */
export function goStringList(xs: readonly string[]): string {
  return `[${xs.join(' ')}]`;
}
