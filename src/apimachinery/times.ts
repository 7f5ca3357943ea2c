// metav1.Time and metav1.MicroTime as a typed decode + encode round trip leaves them: Time in
// RFC 3339 UTC with whole seconds (Go's Time.MarshalJSON truncates), MicroTime in UTC with exactly
// six fractional digits. Walks the OpenAPI schema to find the fields.
import { parseTimeError } from '../golang/time.js';
import { badRequest } from './errors.js';
import { formatMicroTime, formatTime, parseRfc3339 } from './protobuf/time.js';
import { resolveSchema, type Definitions, type OpenAPISchema } from './schema.js';
import { isJsonObject, type JsonValue } from './types.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const TIME_REFS = new Set([`#/definitions/${META}Time`, `#/components/schemas/${META}Time`]);
const MICRO_REFS = new Set([`#/definitions/${META}MicroTime`, `#/components/schemas/${META}MicroTime`]);

/**
 * Rewrites, in place, every Time and MicroTime string of `value` that parses as RFC 3339 into the
 * form kube-apiserver returns. A string that does not parse is a 400, as in kube's decoder.
 */
export function normalizeTimes(value: unknown, schema: OpenAPISchema | undefined, defs: Definitions): void {
  walk(value as JsonValue, schema, defs, 0);
}

function kindOf(schema: OpenAPISchema | undefined): 'time' | 'micro' | undefined {
  const ref = schema?.$ref;
  if (ref === undefined) return undefined;
  if (TIME_REFS.has(ref)) return 'time';
  if (MICRO_REFS.has(ref)) return 'micro';
  return undefined;
}

function normalized(v: JsonValue, kind: 'time' | 'micro'): JsonValue {
  if (typeof v !== 'string') return v;
  const t = parseRfc3339(v);
  if (!t) {
    // Go's decoder refuses a time it cannot parse, failing the whole request with 400: time.Parse's error.
    const err = parseTimeError(v, kind === 'micro');
    if (err !== undefined) throw badRequest(err);
    return v; // what Go parses but parseRfc3339 does not (a zone offset of 24 hours): left as written
  }
  try {
    return kind === 'time' ? formatTime(t.seconds) : formatMicroTime(t.seconds, t.nanos);
  } catch {
    return v; // outside Go's year range: leave it to validation
  }
}

function walk(value: JsonValue | undefined, schemaRef: OpenAPISchema | undefined, defs: Definitions, depth: number): void {
  if (value === null || value === undefined || typeof value !== 'object' || depth > 64) return;
  const schema = resolveSchema(defs, schemaRef);
  if (!schema) return;
  if (Array.isArray(value)) {
    const kind = kindOf(schema.items);
    for (let i = 0; i < value.length; i++) {
      if (kind) value[i] = normalized(value[i]!, kind);
      else walk(value[i], schema.items, defs, depth + 1);
    }
    return;
  }
  if (!isJsonObject(value)) return;
  const obj = value as Record<string, JsonValue>;
  for (const [key, v] of Object.entries(obj)) {
    const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!sub) continue;
    const kind = kindOf(sub);
    if (kind) obj[key] = normalized(v, kind);
    else walk(v, sub, defs, depth + 1);
  }
}

let rfcSecond = Number.NaN;
let rfcText = '';

/**
 * RFC 3339 in UTC with second precision (the second the time falls in), as metav1.Time serialises.
 * Mostly called for the current time (every create stamps its creationTimestamp, every write its
 * managedFields entry, every logged call its start), so the text is kept for the second it was
 * made for. Throws RangeError for an invalid time or a year outside 0–9999, as Go's MarshalJSON fails.
 */
export function rfc3339(at: Date | number | string): string {
  const ms = typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : at.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== rfcSecond) {
    rfcText = formatTime(second);
    rfcSecond = second;
  }
  return rfcText;
}
