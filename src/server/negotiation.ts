// Content negotiation: request bodies in (JSON, YAML, protobuf; patch types) and responses out
// (JSON, YAML, protobuf; Table and PartialObjectMetadata transformations via Accept parameters).
import { isMap, isPair, isScalar, isSeq, parseAllDocuments, stringify as yamlStringify, visit, type Document } from 'yaml';
import { badRequest, notAcceptable, undecodable, unsupportedMediaType } from '../apimachinery/errors.js';
import { inexactJsonIntegers, isInexactInteger, mayHoldLongIntegers, parseJson, type InexactInteger } from '../apimachinery/json.js';
import { decodeObject, encodeObject, isProtobufKind, PROTOBUF_MEDIA_TYPE } from '../apimachinery/protobuf/index.js';
import type { JsonValue, KubeObject } from '../apimachinery/types.js';
import { isJsonObject } from '../apimachinery/types.js';

export const JSON_MEDIA_TYPE = 'application/json';
export const YAML_MEDIA_TYPE = 'application/yaml';
export const BODY_MEDIA_TYPES = [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE] as const;
export const PATCH_MEDIA_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

export function parseMediaType(value: string): MediaRange | undefined {
  const [full, ...paramParts] = value.split(';');
  const mt = (full ?? '').trim().toLowerCase();
  const slash = mt.indexOf('/');
  if (slash <= 0 || slash === mt.length - 1) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of paramParts) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    if (k === 'q') q = Number(v);
    else params[k] = v;
  }
  return { type: mt.slice(0, slash), subtype: mt.slice(slash + 1), params, q: Number.isFinite(q) ? q : 0 };
}

export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header || !header.trim()) return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const out: MediaRange[] = [];
  for (const part of header.split(',')) {
    const r = parseMediaType(part);
    if (r && r.q > 0) out.push(r);
  }
  // Stable sort by q: equal q keeps the client's order, as kube's negotiation does.
  return out.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map((x) => x.r);
}

export type OutputFormat = 'json' | 'yaml' | 'protobuf';
export type Transform = 'none' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

export interface OutputChoice {
  format: OutputFormat;
  transform: Transform;
  /** meta.k8s.io version asked for with the transform (v1 or v1beta1). */
  transformVersion: string;
  pretty: boolean;
}

const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';
/** NegotiateOutputMediaTypeStream's 406: the media types with a stream serializer (YAML has none). */
export const NOT_ACCEPTABLE_STREAM = 'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch';

/**
 * Picks the response encoding from Accept. `protobufOk` says whether the object kind has a
 * protobuf form; `list` says whether the response is a collection (for PartialObjectMetadataList).
 */
export function chooseOutput(accept: string | undefined, opts: { protobufOk: boolean; list: boolean; allowTransforms?: boolean }): OutputChoice {
  for (const r of parseAccept(accept)) {
    let format: OutputFormat | undefined;
    const full = `${r.type}/${r.subtype}`;
    if (full === JSON_MEDIA_TYPE || full === '*/*' || full === 'application/*') format = 'json';
    else if (full === YAML_MEDIA_TYPE) format = 'yaml';
    else if (full === PROTOBUF_MEDIA_TYPE) format = opts.protobufOk || r.params.as ? 'protobuf' : undefined;
    if (!format) continue;
    const as = r.params.as;
    if (!as) {
      if (format === 'protobuf' && !opts.protobufOk) continue;
      return { format, transform: 'none', transformVersion: 'v1', pretty: false };
    }
    if (opts.allowTransforms === false) continue;
    const g = r.params.g ?? '';
    const v = r.params.v ?? '';
    if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
    if (as === 'Table') {
      if (format === 'protobuf') continue; // Table is served as JSON/YAML here
      return { format, transform: 'Table', transformVersion: v, pretty: false };
    }
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') {
      if (format === 'protobuf') continue;
      const want: Transform = opts.list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata';
      if (as !== want) continue;
      return { format, transform: want, transformVersion: v, pretty: false };
    }
  }
  throw notAcceptable(NOT_ACCEPTABLE);
}

export function contentTypeOf(format: OutputFormat): string {
  return format === 'json' ? JSON_MEDIA_TYPE : format === 'yaml' ? YAML_MEDIA_TYPE : PROTOBUF_MEDIA_TYPE;
}

const textDecoder = new TextDecoder('utf-8', { fatal: false });

export interface DecodedBody {
  object: KubeObject;
  duplicateFields: string[];
}

/** Decodes a create/update body by its Content-Type. */
export function decodeBody(contentType: string | undefined, body: Uint8Array): DecodedBody {
  // NegotiateInputSerializer: no Content-Type is JSON; one that does not parse, or names a media type
  // without a serializer (application/x-yaml, text/yaml), is a 415.
  const mt = contentType ? parseMediaType(contentType) : undefined;
  if (contentType && !mt) throw unsupportedMediaType(contentType, BODY_MEDIA_TYPES);
  const full = mt ? `${mt.type}/${mt.subtype}` : JSON_MEDIA_TYPE;
  if (body.length === 0) throw badRequest('the body of the request was empty');
  let value: unknown;
  let duplicateFields: string[] = [];
  if (full === JSON_MEDIA_TYPE) {
    const r = parseJson(body);
    value = r.value;
    duplicateFields = r.duplicateFields;
  } else if (full === YAML_MEDIA_TYPE) {
    const r = decodeYaml(body);
    value = r.value;
    duplicateFields = r.duplicateFields;
  } else if (full === PROTOBUF_MEDIA_TYPE) {
    value = decodeObject(body);
  } else {
    throw unsupportedMediaType(contentType ?? '', BODY_MEDIA_TYPES);
  }
  if (!isJsonObject(value)) {
    throw badRequest(`Object 'Kind' is missing in '${truncate(textDecoder.decode(body.subarray(0, 200)))}'`);
  }
  checkObjectMeta(value);
  return { object: value as KubeObject, duplicateFields };
}

/** Go's decoder refuses an ObjectMeta that is not an object (null decodes to an empty one): a 400 with its words. */
export function checkObjectMeta(value: Record<string, unknown>): void {
  const meta = value['metadata'];
  if (meta === undefined || meta === null || isJsonObject(meta)) return;
  const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
  const version = typeof value['apiVersion'] === 'string' ? value['apiVersion'].split('/').pop()! : '';
  throw undecodable(kind, version, kind, `json: cannot unmarshal ${goJsonType(meta as JsonValue)} into Go struct field ${kind}.metadata of type v1.ObjectMeta`);
}

/** The JSON type as Go's encoding/json names it in its errors. */
export function goJsonType(v: JsonValue): string {
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
}


export function decodeYaml(body: Uint8Array): { value: unknown; duplicateFields: string[] } {
  const text = textDecoder.decode(body);
  const docs = parseAllDocuments(text, { uniqueKeys: false });
  const list = Array.isArray(docs) ? docs : [docs];
  const doc = list.find((d) => d.contents !== null) ?? list[0];
  if (!doc) throw badRequest('the body of the request was empty');
  if (doc.errors.length) {
    throw badRequest(`error converting YAML to JSON: yaml: ${doc.errors[0]!.message.split('\n')[0]}`);
  }
  const duplicateFields: string[] = [];
  findYamlDuplicates(doc.contents, '', duplicateFields, 0);
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // Unresolved aliases and alias bombs surface only here; they are the client's error.
    throw badRequest(`error converting YAML to JSON: yaml: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
  }
  return { value: js, duplicateFields };
}

/**
 * The integers of a request body (JSON, or YAML when the content type says so) that a double would
 * round while Go would keep them as int64. Bodies that do not parse give none: their decoder says why.
 */
export function inexactIntegers(contentType: string | undefined, body: Uint8Array): InexactInteger[] {
  const text = textDecoder.decode(body);
  if (!mayHoldLongIntegers(text)) return [];
  const json = inexactJsonIntegers(text);
  if (json) return json;
  const mt = contentType ? parseMediaType(contentType) : undefined;
  if (!mt || !/(^|[+/-])yaml$/.test(mt.subtype)) return [];
  const found: InexactInteger[] = [];
  for (const doc of parseAllDocuments(text, { uniqueKeys: false }) as Document[]) {
    if (doc.errors.length) return [];
    visit(doc, {
      Scalar(key, node, ancestors) {
        // A key is a string to Go's YAML decoder (sigs.k8s.io/yaml), whatever it looks like.
        if (key === 'key') return;
        const v = node.value;
        if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) && node.source !== undefined && isInexactInteger(node.source)) {
          found.push({ path: yamlPath([...ancestors, node]), literal: node.source });
        }
      },
    });
  }
  return found;
}

/** The dotted path of a YAML node from its ancestors (maps and sequences; pairs name the key). */
function yamlPath(ancestors: readonly unknown[]): string {
  let s = '';
  for (let i = 0; i < ancestors.length; i++) {
    const a = ancestors[i];
    if (isPair(a)) {
      const key = isScalar(a.key) ? String(a.key.value) : String(a.key);
      s += s === '' ? key : `.${key}`;
    } else if (isSeq(a)) {
      const next = ancestors[i + 1];
      const idx = a.items.indexOf(next as never);
      if (idx >= 0) s += `[${idx}]`;
    }
  }
  return s;
}

/** Duplicate mapping keys, reported with their field paths like the JSON decoder does. */
function findYamlDuplicates(node: unknown, path: string, out: string[], depth: number): void {
  if (depth > 10_000) throw badRequest('yaml: exceeded max depth of 10000');
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const item of node.items) {
      const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
      const p = path ? `${path}.${key}` : key;
      if (seen.has(key)) out.push(p);
      seen.add(key);
      findYamlDuplicates(item.value, p, out, depth + 1);
    }
  } else if (isSeq(node)) {
    node.items.forEach((it, i) => findYamlDuplicates(it, `${path}[${i}]`, out, depth + 1));
  }
}

function truncate(s: string): string {
  return s.length > 100 ? s.slice(0, 100) + '...' : s;
}

export function patchTypeOf(contentType: string | undefined): PatchType {
  const mt = contentType ? parseMediaType(contentType) : undefined;
  const full = mt ? `${mt.type}/${mt.subtype}` : '';
  switch (full) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      throw unsupportedMediaType(contentType ?? '', PATCH_MEDIA_TYPES);
  }
}

const encoder = new TextEncoder();

/** Encodes a response object. JSON is the fast path (no re-serialisation beyond JSON.stringify). */
export function encodeBody(obj: unknown, format: OutputFormat, pretty = false): Uint8Array | string {
  if (format === 'json') return pretty ? JSON.stringify(obj, null, 2) + '\n' : JSON.stringify(obj) + '\n';
  if (format === 'yaml') return toYaml(obj);
  return encodeObject(obj as KubeObject);
}

export function toYaml(obj: unknown): string {
  // Through JSON first so undefined fields vanish exactly as in the JSON output.
  const plain: unknown = JSON.parse(JSON.stringify(obj));
  return stringifyYaml(plain);
}

function stringifyYaml(v: unknown): string {
  return yamlStringify(v, { lineWidth: 0, aliasDuplicateObjects: false });
}

export function canProtobuf(obj: KubeObject): boolean {
  return typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' && isProtobufKind(obj.apiVersion, obj.kind);
}

export { encoder as utf8Encoder };
