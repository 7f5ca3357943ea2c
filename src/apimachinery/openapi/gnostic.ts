// /openapi/v2 as gnostic protobuf (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`),
// the form kubectl up to 1.26 or so downloads. The message layout is gnostic's openapi.v2.Document
// (see openapiv2.proto beside this file). Values with no fixed shape (vendor extensions, defaults,
// enum members) are carried as YAML text in `Any.yaml`, which is where kubectl reads
// `x-kubernetes-group-version-kind` and the patch/list extensions from.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { stringify as toYaml } from 'yaml';
import type { OpenAPISchema } from '../schema.js';
import type { SwaggerDocument, SwaggerOperation, SwaggerParameter, SwaggerPathItem } from './v2.js';

export const GNOSTIC_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** The newer spelling kube-openapi also accepts (and answers with). */
export const GNOSTIC_V2_CONTENT_TYPE_ALT = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

let documentType: protobuf.Type | undefined;

/** The compiled `openapi.v2.Document` type (loaded once from openapiv2.proto). */
export function gnosticDocumentType(): protobuf.Type {
  if (documentType === undefined) {
    const text = readFileSync(fileURLToPath(new URL('./openapiv2.proto', import.meta.url)), 'utf8');
    // keepCase: the objects below use the .proto's snake_case field names (`_ref`, `operation_id`).
    const root = protobuf.parse(text, { keepCase: true }).root;
    documentType = root.lookupType('openapi.v2.Document');
  }
  return documentType;
}

type Msg = Record<string, unknown>;

function anyOf(value: unknown): Msg {
  return { yaml: toYaml(value) };
}

function vendorExtensions(obj: object): Msg[] {
  const out: Msg[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('x-') && v !== undefined) out.push({ name: k, value: anyOf(v) });
  }
  return out;
}

// Keys of a schema that map 1:1 onto scalar Schema fields (JSON name → proto field).
const SCALAR_FIELDS: readonly [string, string][] = [
  ['$ref', '_ref'],
  ['format', 'format'],
  ['title', 'title'],
  ['description', 'description'],
  ['multipleOf', 'multiple_of'],
  ['maximum', 'maximum'],
  ['exclusiveMaximum', 'exclusive_maximum'],
  ['minimum', 'minimum'],
  ['exclusiveMinimum', 'exclusive_minimum'],
  ['maxLength', 'max_length'],
  ['minLength', 'min_length'],
  ['pattern', 'pattern'],
  ['maxItems', 'max_items'],
  ['minItems', 'min_items'],
  ['uniqueItems', 'unique_items'],
  ['maxProperties', 'max_properties'],
  ['minProperties', 'min_properties'],
  ['discriminator', 'discriminator'],
  ['readOnly', 'read_only'],
];

export function schemaToGnostic(s: OpenAPISchema): Msg {
  // Schemas of custom resources may carry JSON-schema keywords the shared type does not list.
  const loose = s as Record<string, unknown>;
  const out: Msg = {};
  for (const [json, proto] of SCALAR_FIELDS) if (loose[json] !== undefined) out[proto] = loose[json];
  if (s.default !== undefined) out['default'] = anyOf(s.default);
  if (loose['example'] !== undefined) out['example'] = anyOf(loose['example']);
  if (s.required !== undefined && s.required.length > 0) out['required'] = [...s.required];
  if (s.enum !== undefined) out['enum'] = s.enum.map(anyOf);
  if (s.additionalProperties !== undefined) {
    out['additional_properties'] =
      typeof s.additionalProperties === 'boolean' ? { boolean: s.additionalProperties } : { schema: schemaToGnostic(s.additionalProperties) };
  }
  if (s.type !== undefined) out['type'] = { value: [s.type] };
  if (s.items !== undefined) out['items'] = { schema: [schemaToGnostic(s.items)] };
  const allOf = loose['allOf'];
  if (Array.isArray(allOf)) out['all_of'] = allOf.map((x) => schemaToGnostic(x as OpenAPISchema));
  if (s.properties !== undefined) {
    out['properties'] = { additional_properties: Object.entries(s.properties).map(([name, value]) => ({ name, value: schemaToGnostic(value) })) };
  }
  const ext = vendorExtensions(s);
  if (ext.length > 0) out['vendor_extension'] = ext;
  return out;
}

function parameterToGnostic(p: SwaggerParameter): Msg {
  if (p.in === 'body') {
    const body: Msg = { name: p.name, in: 'body' };
    if (p.description !== undefined) body['description'] = p.description;
    if (p.required) body['required'] = true;
    if (p.schema !== undefined) body['schema'] = schemaToGnostic(p.schema);
    return { parameter: { body_parameter: body } };
  }
  const sub: Msg = { name: p.name, in: p.in };
  if (p.required) sub['required'] = true;
  if (p.description !== undefined) sub['description'] = p.description;
  if (p.type !== undefined) sub['type'] = p.type;
  if (p.uniqueItems) sub['unique_items'] = true;
  const nonBody = p.in === 'query' ? { query_parameter_sub_schema: sub } : { path_parameter_sub_schema: sub };
  return { parameter: { non_body_parameter: nonBody } };
}

function operationToGnostic(o: SwaggerOperation): Msg {
  const out: Msg = {
    tags: o.tags,
    description: o.description,
    operation_id: o.operationId,
    produces: o.produces,
    consumes: o.consumes,
    schemes: o.schemes,
    responses: {
      response_code: Object.entries(o.responses).map(([code, r]) => {
        const response: Msg = { description: r.description };
        if (r.schema !== undefined) response['schema'] = { schema: schemaToGnostic(r.schema) };
        return { name: code, value: { response } };
      }),
    },
  };
  if (o.parameters !== undefined) out['parameters'] = o.parameters.map(parameterToGnostic);
  const ext = vendorExtensions(o);
  if (ext.length > 0) out['vendor_extension'] = ext;
  return out;
}

function pathItemToGnostic(item: SwaggerPathItem): Msg {
  const out: Msg = {};
  for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
    const op = item[method];
    if (op !== undefined) out[method] = operationToGnostic(op);
  }
  if (item.parameters !== undefined) out['parameters'] = item.parameters.map(parameterToGnostic);
  return out;
}

/** The gnostic `openapi.v2.Document` message (as a plain object) for a Swagger document. */
export function swaggerToGnosticObject(doc: SwaggerDocument): Msg {
  return {
    swagger: doc.swagger,
    info: { title: doc.info.title, version: doc.info.version },
    paths: { path: Object.entries(doc.paths).map(([name, item]) => ({ name, value: pathItemToGnostic(item) })) },
    definitions: { additional_properties: Object.entries(doc.definitions).map(([name, s]) => ({ name, value: schemaToGnostic(s) })) },
    security: doc.security.map((req) => ({
      additional_properties: Object.entries(req).map(([name, scopes]) => ({ name, value: { value: scopes } })),
    })),
    security_definitions: {
      additional_properties: Object.entries(doc.securityDefinitions).map(([name, d]) => ({
        name,
        value: { api_key_security: { type: d.type, name: d.name, in: d.in, description: d.description } },
      })),
    },
  };
}

/** Encodes a Swagger document as gnostic protobuf bytes. */
export function encodeGnosticV2(doc: SwaggerDocument): Uint8Array {
  const type = gnosticDocumentType();
  const message = type.fromObject(swaggerToGnosticObject(doc));
  return type.encode(message).finish();
}
