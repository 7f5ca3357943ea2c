// /openapi/v3: one OpenAPI 3.0 document per group-version (plus the small discovery documents
// `api`, `apis`, `apis/<group>`), and the index at /openapi/v3 that lists them with a content hash.
// Modern kubectl (explain, apply/edit/patch metadata) and client-go read these as JSON; the hash
// lets clients cache documents by URL, as kube-openapi's handler3 does: the `hash` is the
// upper-case hex SHA-512 of the document bytes, `serverRelativeURL` is `/openapi/v3/<gv>?hash=<HASH>`.

import { createHash } from 'node:crypto';
import type { ResourceDescriptor } from '../resource.js';
import { CUSTOM_RESOURCE_SCHEMA, type Definitions, type OpenAPISchema } from '../schema.js';
import type { Operation, Param, Route, RouteOptions } from './routes.js';
import { buildRoutes, splitCommonParams } from './routes.js';
import { DEFINITIONS_REF_PREFIX, addSharedKindGroupVersions, reachableDefinitions, routeSchemas } from './v2.js';
import { stringifyJSON } from '../../golang/json-int64.js';

export const SCHEMAS_REF_PREFIX = '#/components/schemas/';

export interface OpenAPIV3Input extends RouteOptions {
  readonly resources: readonly ResourceDescriptor[];
  readonly definitions: Definitions;
  readonly version: { readonly gitVersion: string };
}

/** OpenAPI 3 schema nodes: v2 nodes, with `allOf` also used to give a `$ref` a description. */
export type V3Schema = Omit<OpenAPISchema, 'properties' | 'items' | 'additionalProperties' | 'allOf' | 'anyOf' | 'oneOf' | 'not'> & {
  properties?: Record<string, V3Schema>;
  items?: V3Schema;
  additionalProperties?: V3Schema | boolean;
  allOf?: V3Schema[];
  anyOf?: V3Schema[];
  oneOf?: V3Schema[];
  not?: V3Schema;
};

export interface V3Parameter {
  name: string;
  in: 'query' | 'path';
  description?: string;
  required?: boolean;
  schema: { type: string; uniqueItems: true };
}

export interface V3Operation {
  tags: string[];
  description: string;
  operationId: string;
  parameters?: V3Parameter[];
  requestBody?: { content: Record<string, { schema: V3Schema }>; required?: true };
  responses: Record<string, { description: string; content?: Record<string, { schema: V3Schema }> }>;
  'x-kubernetes-action'?: string;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}

export type V3PathItem = { parameters?: V3Parameter[] } & { [method in Operation['method']]?: V3Operation };

export interface OpenAPIV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, V3PathItem>;
  components: {
    schemas: Record<string, V3Schema>;
    securitySchemes: Record<string, { type: string; description: string; name: string; in: string }>;
  };
}

export interface OpenAPIV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

export interface ServedV3Document {
  /** `api/v1`, `apis/coordination.k8s.io/v1`, `api`, `apis`, `apis/coordination.k8s.io`. */
  readonly key: string;
  readonly document: OpenAPIV3Document;
  readonly json: Buffer;
  /** Upper-case hex SHA-512 of `json`, as kube-openapi computes it. */
  readonly hash: string;
  readonly serverRelativeURL: string;
}

export interface OpenAPIV3Service {
  readonly index: OpenAPIV3Index;
  readonly indexJson: Buffer;
  readonly indexHash: string;
  /** By key (`api/v1`, ...), the part of the URL after `/openapi/v3/`. */
  readonly documents: ReadonlyMap<string, ServedV3Document>;
}

export function openAPIHash(bytes: Uint8Array): string {
  return createHash('sha512').update(bytes).digest('hex').toUpperCase();
}

/** Which v3 document a route belongs to: `/api/v1/...` → `api/v1`, `/apis/<g>/` → `apis/<g>`. */
export function v3DocumentKey(path: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  if (parts[0] === 'api') return parts.length >= 2 ? `api/${parts[1]}` : 'api';
  if (parts[0] === 'apis') {
    if (parts.length >= 3) return `apis/${parts[1]}/${parts[2]}`;
    return parts.length === 2 ? `apis/${parts[1]}` : 'apis';
  }
  return parts[0] ?? '';
}

/**
 * Converts a v2 definition node to OpenAPI 3: refs move to components/schemas, and a `$ref` that
 * has siblings (a description, extensions) is wrapped in `allOf`, since 3.0 ignores siblings of
 * `$ref` — the same rewrite kube-openapi applies.
 */
export function toV3Schema(s: OpenAPISchema): V3Schema {
  const { $ref, properties, items, additionalProperties, allOf, anyOf, oneOf, not, [CUSTOM_RESOURCE_SCHEMA]: _marker, ...rest } = s;
  const out: V3Schema = { ...rest };
  if (properties !== undefined) out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, toV3Schema(v)]));
  if (items !== undefined) out.items = toV3Schema(items);
  if (additionalProperties !== undefined)
    out.additionalProperties = typeof additionalProperties === 'boolean' ? additionalProperties : toV3Schema(additionalProperties);
  // Junctors (a custom resource's value validations) carry no refs, but are converted all the same.
  if (allOf !== undefined) out.allOf = allOf.map(toV3Schema);
  if (anyOf !== undefined) out.anyOf = anyOf.map(toV3Schema);
  if (oneOf !== undefined) out.oneOf = oneOf.map(toV3Schema);
  if (not !== undefined) out.not = toV3Schema(not);
  if ($ref !== undefined) {
    const ref = $ref.startsWith(DEFINITIONS_REF_PREFIX) ? SCHEMAS_REF_PREFIX + $ref.slice(DEFINITIONS_REF_PREFIX.length) : $ref;
    if (Object.keys(out).length === 0) return { $ref: ref };
    out.allOf = [{ $ref: ref }, ...(out.allOf ?? [])];
  }
  return out;
}

const schemaRef = (name: string): V3Schema => ({ $ref: SCHEMAS_REF_PREFIX + name });

function v3Param(p: Param): V3Parameter {
  const out: V3Parameter = { name: p.name, in: p.in === 'path' ? 'path' : 'query', schema: { type: p.type ?? 'string', uniqueItems: true } };
  if (p.description !== undefined) out.description = p.description;
  if (p.required) out.required = true;
  // Key order as kube-openapi writes it: name, in, description, required, schema.
  return {
    name: out.name,
    in: out.in,
    ...(out.description !== undefined ? { description: out.description } : {}),
    ...(out.required ? { required: true } : {}),
    schema: out.schema,
  };
}

function v3Operation(o: Operation, params: readonly Param[]): V3Operation {
  const out: V3Operation = { tags: [...o.tags], description: o.description, operationId: o.operationId, responses: {} };
  const query = params.filter((p) => p.in !== 'body');
  if (query.length > 0) out.parameters = query.map(v3Param);
  const body = params.find((p) => p.in === 'body');
  if (body?.schema !== undefined) {
    const schema = body.schema;
    // kube-openapi's builder3 marks the body required when the v2 body parameter is (create,
    // replace, patch; not delete), which client generators read as a mandatory argument.
    out.requestBody = { content: Object.fromEntries([...o.consumes].sort().map((ct) => [ct, { schema: schemaRef(schema) }])) };
    if (body.required) out.requestBody.required = true;
  }
  for (const r of o.responses) {
    const schema = r.schema;
    out.responses[r.code] =
      schema === undefined
        ? { description: r.description }
        : { description: r.description, content: Object.fromEntries([...o.produces].sort().map((ct) => [ct, { schema: schemaRef(schema) }])) };
  }
  if (o.action !== undefined) out['x-kubernetes-action'] = o.action;
  if (o.gvk !== undefined) out['x-kubernetes-group-version-kind'] = { group: o.gvk.group, version: o.gvk.version, kind: o.gvk.kind };
  return out;
}

function v3Document(routes: readonly Route[], schemas: Record<string, V3Schema>, gitVersion: string): OpenAPIV3Document {
  const paths: Record<string, V3PathItem> = {};
  for (const route of [...routes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const { common, operations } = splitCommonParams(route);
    const item: V3PathItem = {};
    for (const o of operations) item[o.method] = v3Operation(o, o.params);
    if (common.length > 0) item.parameters = common.map(v3Param);
    paths[route.path] = item;
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: gitVersion },
    paths,
    components: {
      schemas,
      securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' } },
    },
  };
}

/** The OpenAPI 3 documents, by key (`api/v1`, `apis/<group>/<version>`, `api`, `apis`, `apis/<group>`). */
export function buildOpenAPIV3(input: OpenAPIV3Input): Map<string, OpenAPIV3Document> {
  const routes = buildRoutes(input.resources, input);
  const defs = addSharedKindGroupVersions(
    input.definitions,
    input.resources.map((r) => ({ group: r.group, version: r.version })),
  );
  const byKey = new Map<string, Route[]>();
  for (const r of routes) {
    const key = v3DocumentKey(r.path);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const docs = new Map<string, OpenAPIV3Document>();
  for (const key of [...byKey.keys()].sort()) {
    const docRoutes = byKey.get(key)!;
    const kinds = input.resources.filter((r) => v3DocumentKey(`/${r.group === '' ? 'api' : `apis/${r.group}`}/${r.version}/`) === key);
    const roots = new Set([
      ...routeSchemas(docRoutes),
      ...kinds.flatMap((r) => (r.verbs.includes('list') ? [r.definitionName, r.definitionName + 'List'] : [r.definitionName])),
    ]);
    const schemas: Record<string, V3Schema> = {};
    for (const name of [...reachableDefinitions(defs, roots)].sort()) schemas[name] = toV3Schema(defs[name]!);
    docs.set(key, v3Document(docRoutes, schemas, input.version.gitVersion));
  }
  return docs;
}

/** Documents serialized and hashed, plus the /openapi/v3 index pointing at them. */
export function buildOpenAPIV3Service(input: OpenAPIV3Input): OpenAPIV3Service {
  const documents = new Map<string, ServedV3Document>();
  const index: OpenAPIV3Index = { paths: {} };
  for (const [key, document] of buildOpenAPIV3(input)) {
    const json = Buffer.from(stringifyJSON(document));
    const hash = openAPIHash(json);
    const serverRelativeURL = `/openapi/v3/${key}?hash=${hash}`;
    documents.set(key, { key, document, json, hash, serverRelativeURL });
    index.paths[key] = { serverRelativeURL };
  }
  const indexJson = Buffer.from(JSON.stringify(index));
  return { index, indexJson, indexHash: openAPIHash(indexJson), documents };
}
