// Unknown-field detection for fieldValidation=Strict|Warn: the paths a body sets that its schema
// does not declare, reported as upstream's strict decoder does (`unknown field "spec.foo"`).
import { resolveSchema, type Definitions, type OpenAPISchema } from './schema.js';
import { isJsonObject, type JsonValue } from './types.js';
import { strictUnknownField } from '../golang/json-errors.js';

/** Fields every embedded object carries even when its schema lists nothing else. */
const EMBEDDED_RESOURCE_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Dotted paths (`spec.containers[0].foo`) of fields `value` sets that `schema` does not know, in
 * document order. A schema node that declares no properties, allows additionalProperties, sets
 * `x-kubernetes-preserve-unknown-fields`, or cannot be resolved accepts any field.
 */
export function findUnknownFields(value: unknown, schema: OpenAPISchema | undefined, defs: Definitions): string[] {
  const out: string[] = [];
  walk(value as JsonValue, schema, defs, '', out);
  return out;
}

/**
 * Like `findUnknownFields`, and also deletes those fields from `value` (in place), as upstream's
 * typed decoding drops what a built-in type does not declare. Returns the removed paths.
 */
export function pruneUnknownFields(value: unknown, schema: OpenAPISchema | undefined, defs: Definitions): string[] {
  const out: string[] = [];
  walk(value as JsonValue, schema, defs, '', out, true);
  return out;
}

export function unknownFieldMessages(paths: readonly string[]): string[] {
  return paths.map(strictUnknownField);
}

function child(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function walk(value: JsonValue | undefined, schemaRef: OpenAPISchema | undefined, defs: Definitions, path: string, out: string[], prune = false): void {
  if (value === null || value === undefined) return;
  const schema = resolveSchema(defs, schemaRef);
  if (!schema) return;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => walk(v, schema.items, defs, `${path}[${i}]`, out, prune));
    return;
  }
  if (!isJsonObject(value)) return;
  const props = schema.properties;
  const additional = schema.additionalProperties;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const p = child(path, key);
    if (props && Object.prototype.hasOwnProperty.call(props, key)) {
      walk(v, props[key], defs, p, out, prune);
    } else if (typeof additional === 'object') {
      walk(v, additional, defs, p, out, prune);
    } else if (additional === true || preserve || (embedded && EMBEDDED_RESOURCE_FIELDS.has(key))) {
      continue;
    } else if (props) {
      // Only a node that lists its properties can call a field unknown; `{type: object}` alone is free-form.
      out.push(p);
      if (prune) delete (value as Record<string, JsonValue>)[key];
    }
  }
}
