// fmt's %v and %q for the values opm's messages print (decoded JSON: string, float64, bool, nil,
// []interface{}, map[string]interface{}).
import { goQuote } from '../semver.js';
import { compareGoStrings } from '../golang/json.js';
import { formatG } from './goyaml.js';

export { goQuote };

/** fmt's %v of a float64 (%g, shortest): 5, 1.5, 1e+06, 1e-05. */
export function goFloatV(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  return formatG(f);
}

/** fmt's %v of a decoded JSON value. */
export function goFmtV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goFloatV(v);
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
