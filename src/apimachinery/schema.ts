// OpenAPI (v2-style) schema nodes, the single source of truth for the shape of built-in kinds:
// served in /openapi/v2 and /openapi/v3, and walked by strategic merge patch (patch strategies and
// merge keys), unknown-field detection (fieldValidation) and, later, server-side apply (list types).

export interface OpenAPISchema {
  $ref?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, OpenAPISchema>;
  additionalProperties?: OpenAPISchema | boolean;
  items?: OpenAPISchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  /** OpenAPI 3 (a custom resource's schema); /openapi/v2 drops it with the node's type. */
  nullable?: boolean;
  /** Junctors of a custom resource's schema (value validations), published in v3, dropped from v2. */
  allOf?: OpenAPISchema[];
  anyOf?: OpenAPISchema[];
  oneOf?: OpenAPISchema[];
  not?: OpenAPISchema;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
  'x-kubernetes-unions'?: unknown[];
  [ext: `x-${string}`]: unknown;
}

/**
 * Marks the definition of a custom resource's kind: /openapi/v2 publishes it as upstream's CRD
 * builder does for v2 (structuralToV2); neither document shows the marker.
 */
export const CUSTOM_RESOURCE_SCHEMA = 'x-kplane-custom-resource-schema';

/** Named definitions, keyed like upstream (`io.k8s.api.core.v1.ConfigMap`), refs as `#/definitions/<name>`. */
export type Definitions = Record<string, OpenAPISchema>;

const REF_PREFIX = '#/definitions/';

export function refTo(name: string): OpenAPISchema {
  return { $ref: REF_PREFIX + name };
}

/** Follows `$ref` chains; unknown refs resolve to undefined (treated as "any" by callers). */
export function resolveSchema(defs: Definitions, schema: OpenAPISchema | undefined): OpenAPISchema | undefined {
  let s = schema;
  for (let hops = 0; s?.$ref !== undefined && hops < 32; hops++) {
    const ref = s.$ref;
    const name = ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref.replace(/^#\/components\/schemas\//, '');
    s = defs[name];
  }
  return s;
}
