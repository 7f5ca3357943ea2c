// /openapi/v2: the Swagger 2.0 document kube-apiserver serves, built from resource descriptors and
// definitions. kubectl 1.20 reads it (as gnostic protobuf, see gnostic.ts) for explain, client-side
// validation and to detect server-side dry-run (a `dryRun` query parameter on the PATCH operation
// of a path whose operations carry `x-kubernetes-group-version-kind`).

import type { ResourceDescriptor } from '../resource.js';
import { CUSTOM_RESOURCE_SCHEMA, type Definitions, type OpenAPISchema } from '../schema.js';
import type { Operation, Param, Route, RouteOptions } from './routes.js';
import { META_PREFIX, buildRoutes, splitCommonParams } from './routes.js';

export interface OpenAPIV2Input extends RouteOptions {
  readonly resources: readonly ResourceDescriptor[];
  readonly definitions: Definitions;
  readonly version: { readonly gitVersion: string };
}

export interface SwaggerParameter {
  name: string;
  in: 'query' | 'path' | 'body';
  description?: string;
  required?: boolean;
  type?: string;
  uniqueItems?: boolean;
  schema?: OpenAPISchema;
}

export interface SwaggerOperation {
  consumes: string[];
  description: string;
  operationId: string;
  parameters?: SwaggerParameter[];
  produces: string[];
  responses: Record<string, { description: string; schema?: OpenAPISchema }>;
  schemes: string[];
  tags: string[];
  'x-kubernetes-action'?: string;
  'x-kubernetes-group-version-kind'?: { group: string; kind: string; version: string };
}

export type SwaggerPathItem = { parameters?: SwaggerParameter[] } & { [method in Operation['method']]?: SwaggerOperation };

export interface SwaggerDocument {
  swagger: '2.0';
  info: { title: string; version: string };
  paths: Record<string, SwaggerPathItem>;
  definitions: Definitions;
  securityDefinitions: Record<string, { description: string; in: string; name: string; type: string }>;
  security: Record<string, string[]>[];
}

export const DEFINITIONS_REF_PREFIX = '#/definitions/';

/** Kinds upstream registers in every served group-version, so their GVK lists name all of them. */
const SHARED_KINDS = ['DeleteOptions', 'WatchEvent'] as const;

/**
 * Returns definitions in which DeleteOptions and WatchEvent also carry the GVKs of the given
 * group-versions, as upstream does for every served group-version. The input is not modified.
 */
export function addSharedKindGroupVersions(defs: Definitions, gvs: Iterable<{ group: string; version: string }>): Definitions {
  const list = [...gvs];
  const out: Definitions = { ...defs };
  for (const kindName of SHARED_KINDS) {
    const name = META_PREFIX + kindName;
    const def = out[name];
    if (def === undefined) continue;
    const all = [...(def['x-kubernetes-group-version-kind'] ?? [])];
    const seen = new Set(all.map((g) => `${g.group}/${g.version}`));
    for (const gv of list) {
      if (seen.has(`${gv.group}/${gv.version}`)) continue;
      seen.add(`${gv.group}/${gv.version}`);
      all.push({ group: gv.group, kind: kindName, version: gv.version });
    }
    all.sort((a, b) => (a.group === b.group ? a.version.localeCompare(b.version) : a.group.localeCompare(b.group)));
    out[name] = { ...def, 'x-kubernetes-group-version-kind': all };
  }
  return out;
}

/** Names of the definitions reachable from `roots` through `$ref`s (refs in `prefix` form). */
export function reachableDefinitions(defs: Definitions, roots: Iterable<string>, prefix = DEFINITIONS_REF_PREFIX): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  const visit = (s: OpenAPISchema | undefined): void => {
    if (s === undefined) return;
    if (s.$ref !== undefined && s.$ref.startsWith(prefix)) stack.push(s.$ref.slice(prefix.length));
    for (const p of Object.values(s.properties ?? {})) visit(p);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties);
    visit(s.items);
  };
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    const def = defs[name];
    if (def === undefined) throw new Error(`OpenAPI: definition ${name} is referenced but not defined`);
    seen.add(name);
    visit(def);
  }
  return seen;
}

/** Definition names a set of routes refers to directly (bodies and responses). */
export function routeSchemas(routes: readonly Route[]): Set<string> {
  const names = new Set<string>();
  for (const r of routes) {
    for (const o of r.operations) {
      for (const p of o.params) if (p.schema !== undefined) names.add(p.schema);
      for (const res of o.responses) if (res.schema !== undefined) names.add(res.schema);
    }
  }
  return names;
}

function v2Param(p: Param): SwaggerParameter {
  if (p.in === 'body') {
    const out: SwaggerParameter = { in: 'body', name: p.name };
    if (p.required) out.required = true;
    out.schema = { $ref: DEFINITIONS_REF_PREFIX + p.schema };
    return out;
  }
  const out: SwaggerParameter = { description: p.description ?? '', in: p.in, name: p.name };
  if (p.required) out.required = true;
  out.type = p.type ?? 'string';
  out.uniqueItems = true;
  return out;
}

function v2Operation(o: Operation, params: readonly Param[]): SwaggerOperation {
  const out: SwaggerOperation = {
    consumes: [...o.consumes],
    description: o.description,
    operationId: o.operationId,
    produces: [...o.produces],
    responses: {},
    schemes: ['https'],
    tags: [...o.tags],
  };
  if (params.length > 0) out.parameters = params.map(v2Param);
  for (const r of o.responses) {
    out.responses[r.code] =
      r.schema === undefined ? { description: r.description } : { description: r.description, schema: { $ref: DEFINITIONS_REF_PREFIX + r.schema } };
  }
  if (o.action !== undefined) out['x-kubernetes-action'] = o.action;
  if (o.gvk !== undefined) out['x-kubernetes-group-version-kind'] = { group: o.gvk.group, kind: o.gvk.kind, version: o.gvk.version };
  return out;
}

/** Renders routes as Swagger path items, with shared parameters hoisted onto the path. */
export function v2Paths(routes: readonly Route[]): Record<string, SwaggerPathItem> {
  const paths: Record<string, SwaggerPathItem> = {};
  for (const route of [...routes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const { common, operations } = splitCommonParams(route);
    const item: SwaggerPathItem = {};
    for (const o of operations) item[o.method] = v2Operation(o, o.params);
    if (common.length > 0) item.parameters = common.map(v2Param);
    paths[route.path] = item;
  }
  return paths;
}

/**
 * A custom resource's kind as upstream's CRD builder publishes it in v2 (buildKubeNative with
 * ToStructuralOpenAPIV2, addEmbeddedProperties, then PruneDefaults), for the sake of kubectl's
 * client-side validation, which treats every listed property set as closed and cannot cope with
 * some shapes: a root that preserves unknown fields is a bare object; junctors are dropped; nodes
 * that are nullable lose their type (and properties, items); nodes that preserve unknown fields lose
 * their properties and items, and objects among them their type; an array left without items loses
 * its type; nullable properties leave `required`, and a nullable additionalProperties empties it;
 * embedded resources keep apiVersion, kind and metadata (required: kind, apiVersion) unless they
 * preserve unknown fields; defaults are pruned.
 */
export function structuralToV2(def: OpenAPISchema): OpenAPISchema {
  const { [CUSTOM_RESOURCE_SCHEMA]: _marker, ...rest } = def;
  if (rest['x-kubernetes-preserve-unknown-fields']) {
    return {
      type: 'object',
      ...(rest['x-kubernetes-group-version-kind'] ? { 'x-kubernetes-group-version-kind': rest['x-kubernetes-group-version-kind'] } : {}),
    };
  }
  const walk = (s: OpenAPISchema): OpenAPISchema => {
    if (s.$ref !== undefined) return s;
    const { allOf: _allOf, anyOf: _anyOf, oneOf: _oneOf, not: _not, default: _default, ...out } = s;
    const preserve = out['x-kubernetes-preserve-unknown-fields'] === true;
    if (out.nullable) {
      delete out.type;
      delete out.nullable;
      delete out.items;
      delete out.properties;
    }
    if (preserve) {
      delete out.items;
      delete out.properties;
      if (out.type === 'object') delete out.type;
      // What the published form requires of an embedded resource goes with its properties.
      if (out['x-kubernetes-embedded-resource'] && out.required) {
        const required = out.required.filter((f) => f !== 'kind' && f !== 'apiVersion');
        if (required.length) out.required = required;
        else delete out.required;
      }
    }
    if (out.type === 'array' && out.items === undefined) delete out.type;
    if (out.properties) {
      const props = out.properties;
      if (out.required) {
        const required = out.required.filter((f) => !props[f]?.nullable);
        if (required.length) out.required = required;
        else delete out.required;
      }
      out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, walk(v)]));
    }
    if (typeof out.additionalProperties === 'object' && out.additionalProperties.nullable) delete out.required;
    if (out.items) out.items = walk(out.items);
    if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = walk(out.additionalProperties);
    // The published (v3) form already lists an embedded resource's apiVersion, kind and metadata;
    // they come back where the rules above removed them, unless unknown fields are preserved.
    if (out['x-kubernetes-embedded-resource'] && !preserve) {
      const { apiVersion, kind, metadata } = s.properties ?? {};
      out.properties = { ...out.properties, ...(apiVersion && { apiVersion }), ...(kind && { kind }), ...(metadata && { metadata }) };
      const required = [...(out.required ?? [])];
      for (const f of ['kind', 'apiVersion']) if (!required.includes(f)) required.push(f);
      out.required = required;
    }
    return out;
  };
  return walk(rest);
}

export function buildOpenAPIV2(input: OpenAPIV2Input): SwaggerDocument {
  const routes = buildRoutes(input.resources, input);
  const defs = addSharedKindGroupVersions(
    input.definitions,
    input.resources.map((r) => ({ group: r.group, version: r.version })),
  );
  // Every served kind is published even if no route names it (e.g. a kind served only through a
  // subresource), so that GVK lookups by clients find it.
  // A kind without list (the reviews, create-only) has no List kind to publish.
  const roots = new Set([
    ...routeSchemas(routes),
    ...input.resources.flatMap((r) => [r.definitionName, ...(defs[r.definitionName + 'List'] ? [r.definitionName + 'List'] : [])]),
  ]);
  const keep = [...reachableDefinitions(defs, roots)].sort();
  const definitions: Definitions = {};
  for (const name of keep) definitions[name] = defs[name]![CUSTOM_RESOURCE_SCHEMA] ? structuralToV2(defs[name]!) : defs[name]!;
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: input.version.gitVersion },
    paths: v2Paths(routes),
    definitions,
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    security: [{ BearerToken: [] }],
  };
}
