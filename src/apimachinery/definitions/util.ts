// Small builders for definition nodes, so the tables in meta.ts, core.ts, ... read like the Go types
// they mirror. They only produce plain OpenAPISchema objects; nothing here is kplane-specific.

import type { Definitions, OpenAPISchema } from '../schema.js';
import { refTo } from '../schema.js';

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
export const CORE = 'io.k8s.api.core.v1.';

export type GVK = { group: string; version: string; kind: string };

export function str(description: string): OpenAPISchema {
  return { type: 'string', description };
}
export function bool(description: string): OpenAPISchema {
  return { type: 'boolean', description };
}
export function int32(description: string): OpenAPISchema {
  return { type: 'integer', format: 'int32', description };
}
export function int64(description: string): OpenAPISchema {
  return { type: 'integer', format: 'int64', description };
}
/** A `$ref` with its own description beside it, as kube-openapi emits in v2. */
export function ref(name: string, description: string): OpenAPISchema {
  return { ...refTo(name), description };
}
export function stringMap(description: string): OpenAPISchema {
  return { type: 'object', additionalProperties: { type: 'string' }, description };
}
export function arrayOf(items: OpenAPISchema, description: string, ext: Partial<OpenAPISchema> = {}): OpenAPISchema {
  return { type: 'array', items, description, ...ext };
}
export function stringList(description: string, ext: Partial<OpenAPISchema> = {}): OpenAPISchema {
  return arrayOf({ type: 'string' }, description, ext);
}

export const apiVersionField = str(
  'APIVersion is the versioned schema of this object, as `group/version` (or `v1` for the core group). Servers convert recognized versions and may reject others.',
);
export const kindField = str(
  'Kind is the REST kind of this object, in CamelCase. Servers may infer it from the endpoint the request was sent to. Cannot be updated.',
);
export function objectMetaField(description = 'Standard object metadata: name, namespace, labels, annotations, owners, ...'): OpenAPISchema {
  return ref(META + 'ObjectMeta', description);
}
export function listMetaField(description = 'Standard list metadata: resourceVersion and continue token.'): OpenAPISchema {
  return ref(META + 'ListMeta', description);
}

/** A top-level kind: `type: object` plus the GVK extension clients use to map kinds to schemas. */
export function kind(gvks: GVK | GVK[], description: string, properties: Record<string, OpenAPISchema>, extra: Partial<OpenAPISchema> = {}): OpenAPISchema {
  return {
    description,
    type: 'object',
    ...extra,
    properties,
    'x-kubernetes-group-version-kind': Array.isArray(gvks) ? gvks : [gvks],
  };
}

/** The `<Kind>List` companion of a kind, shaped like upstream's generated lists. */
export function listKind(gv: { group: string; version: string }, itemDef: string, itemKind: string, itemsDescription: string): OpenAPISchema {
  return kind(
    { group: gv.group, version: gv.version, kind: itemKind + 'List' },
    `${itemKind}List is a list of ${itemKind} objects.`,
    {
      apiVersion: apiVersionField,
      items: arrayOf(refTo(itemDef), itemsDescription),
      kind: kindField,
      metadata: listMetaField(),
    },
    { required: ['items'] },
  );
}

export function struct(description: string, properties: Record<string, OpenAPISchema>, extra: Partial<OpenAPISchema> = {}): OpenAPISchema {
  return { description, type: 'object', ...extra, properties };
}

export function mergeDefinitions(...parts: Definitions[]): Definitions {
  const out: Definitions = {};
  for (const p of parts) {
    for (const [name, schema] of Object.entries(p)) {
      if (name in out) throw new Error(`definition ${name} declared twice`);
      out[name] = schema;
    }
  }
  return out;
}
