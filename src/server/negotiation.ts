// Content negotiation: request bodies in (JSON, YAML, protobuf; patch types) and responses out
// (JSON, YAML, protobuf; Table and PartialObjectMetadata transformations via Accept parameters).
import { isMap, isScalar, isSeq, parseAllDocuments, stringify as yamlStringify, visit, type Document } from 'yaml';
import { StatusError, badRequest, notAcceptable, undecodable, unsupportedMediaType } from '../apimachinery/errors.js';
import { mayHoldLongIntegers, parseJson } from '../apimachinery/json.js';
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE, type ProtobufKinds } from '../apimachinery/protobuf/index.js';
import type { Scheme } from '../apimachinery/scheme.js';
import type { KubeObject } from '../apimachinery/types.js';
import { cannotUnmarshal } from '../golang/json-errors.js';
import { goYAMLDuplicateKeys, MAX_DEPTH, nestingExceeds } from '../golang/yaml-read.js';
import { parseGoFloat } from '../golang/strconv.js';
import { int64OrFloat } from '../golang/json.js';
import { isJsonObject } from '../apimachinery/types.js';
import { parseJSONExact, stringifyJSON } from '../golang/json-int64.js';

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

/** A Content-Type's media type, lower-cased (mime.ParseMediaType's; its parameters are not read here). */
function parseMediaType(value: string): { type: string; subtype: string } | undefined {
  const semi = value.indexOf(';');
  const mt = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  const slash = mt.indexOf('/');
  if (slash <= 0 || slash === mt.length - 1) return undefined;
  return { type: mt.slice(0, slash), subtype: mt.slice(slash + 1) };
}

/**
 * The Accept header as kube's negotiation reads it (munnerz/goautoneg's ParseAccept): clauses split
 * on ',' and trimmed of spaces; a clause needs `type/subtype` (or a bare `*`); parameters are
 * `key=value` with exactly one '='; names and values keep their case and quotes (kube compares
 * them as given: `Application/JSON` matches nothing); `q` is read as strconv.ParseFloat(v, 32)
 * reads it (unparsable is 0) and a clause with q=0 is kept, only sorted last. The clauses are
 * sorted with goautoneg's Less by Go's insertion sort (what sort.Sort does for up to 12 items):
 * higher q first, then concrete types before `*`. An absent or empty header is `*` + `/*`.
 */
export function parseAccept(header: string | undefined): readonly MediaRange[] {
  if (header === undefined || header.trim() === '') return ANY;
  let parsed = acceptCache.get(header);
  if (parsed === undefined) {
    parsed = parseAcceptClauses(header);
    if (acceptCache.size >= 256) acceptCache.clear();
    acceptCache.set(header, parsed);
  }
  return parsed;
}

const ANY: readonly MediaRange[] = Object.freeze([Object.freeze({ type: '*', subtype: '*', params: Object.freeze({}), q: 1 })]);
/** Clients send the same few Accept headers over and over: parsed once each. */
const acceptCache = new Map<string, readonly MediaRange[]>();

/** goautoneg's nextSplitElement: the text before the first `sep` and the text after it. */
function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
}

const trimSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

function parseAcceptClauses(header: string): readonly MediaRange[] {
  const out: MediaRange[] = [];
  let remaining = header;
  while (remaining.length > 0) {
    let part: string;
    [part, remaining] = splitOnce(remaining, ',');
    const [range, paramText] = splitOnce(trimSpaces(part), ';');
    const [t, afterType] = splitOnce(range, '/');
    const type = trimSpaces(t);
    let subtype: string;
    if (afterType.length === 0) {
      if (type !== '*') continue;
      subtype = '*';
    } else {
      const [st, extra] = splitOnce(afterType, '/');
      if (extra.length > 0) continue;
      subtype = trimSpaces(st);
    }
    const params: Record<string, string> = {};
    let q = 1;
    let rest = paramText;
    while (rest.length > 0) {
      let p: string;
      [p, rest] = splitOnce(rest, ';');
      const [k, afterKey] = splitOnce(p, '=');
      if (afterKey.length === 0) continue;
      const [v, extra] = splitOnce(afterKey, '=');
      if (extra.length !== 0) continue;
      const key = trimSpaces(k);
      if (key === 'q')
        q = parseGoFloat(v, 32).value; // goautoneg drops the error
      else params[key] = trimSpaces(v);
    }
    out.push({ type, subtype, params, q });
  }
  // goautoneg's Less, by insertion sort as Go's sort.Sort does for short slices.
  const less = (a: MediaRange, b: MediaRange): boolean => a.q > b.q || (a.type !== '*' && b.type === '*') || (a.subtype !== '*' && b.subtype === '*');
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j]!, out[j - 1]!); j--) [out[j], out[j - 1]] = [out[j - 1]!, out[j]!];
  }
  return out;
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
export const NOT_ACCEPTABLE_STREAM =
  'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch';

/** The serializers of a resource endpoint, in kube's order: the first is the default. */
const SERIALIZERS: readonly { readonly format: OutputFormat; readonly type: string; readonly subtype: string; readonly stream: boolean }[] = [
  { format: 'json', type: 'application', subtype: 'json', stream: true },
  { format: 'yaml', type: 'application', subtype: 'yaml', stream: false },
  { format: 'protobuf', type: 'application', subtype: 'vnd.kubernetes.protobuf', stream: true },
];

/**
 * Picks the response encoding from Accept as kube's NegotiateMediaTypeOptions does: the first
 * clause (in goautoneg's order) that names a serializer (exactly, as `type/*` or as `*` + `/*`, tried
 * in the order JSON, YAML, protobuf) and whose parameters the endpoint allows. `protobufOk` says
 * whether the kind has a protobuf form (custom resources: JSON and YAML only, unless transformed);
 * `allowTransforms: false` is for endpoints with no
 * conversions (kube's default endpoint restrictions).
 */
export function chooseOutput(accept: string | undefined, opts: { protobufOk: boolean; allowTransforms?: boolean }): OutputChoice {
  for (const r of parseAccept(accept)) {
    for (const s of SERIALIZERS) {
      if (!((r.type === s.type && (r.subtype === s.subtype || r.subtype === '*')) || (r.type === '*' && r.subtype === '*'))) continue;
      const choice = acceptOptions(r.params, s, opts);
      if (choice !== undefined) return choice;
    }
  }
  throw notAcceptable(NOT_ACCEPTABLE);
}

/** acceptMediaTypeOptions with the endpoint's restrictions: the choice, or undefined to try on. */
function acceptOptions(
  params: Readonly<Record<string, string>>,
  s: (typeof SERIALIZERS)[number],
  opts: { protobufOk: boolean; allowTransforms?: boolean },
): OutputChoice | undefined {
  let convert = false;
  let pretty = false;
  for (const [k, v] of Object.entries(params)) {
    if (k === 'as' || k === 'g' || k === 'v') convert = true;
    else if (k === 'stream' && v !== '' && (!s.stream || v !== 'watch')) return undefined;
    else if (k === 'sv' && v !== '' && (opts.allowTransforms === false || v !== 'v1')) return undefined;
    else if (k === 'pretty') pretty = v === '1';
  }
  if (!convert) {
    if (s.format === 'protobuf' && !opts.protobufOk) return undefined;
    return { format: s.format, transform: 'none', transformVersion: 'v1', pretty };
  }
  // AllowsMediaTypeTransform: Table as JSON or YAML; PartialObjectMetadata(List) in any format.
  if (opts.allowTransforms === false) return undefined;
  const v = params.v ?? '';
  if (params.g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  const as = params.as;
  if (as === 'Table') return s.format === 'protobuf' ? undefined : { format: s.format, transform: 'Table', transformVersion: v, pretty };
  // Allowed whether or not the answer is a list ("should delineate between lists and non-list
  // endpoints", upstream's TODO): a mismatch is the handler's 406 (partialMetadataMismatch).
  if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { format: s.format, transform: as, transformVersion: v, pretty };
  return undefined;
}

/**
 * asPartialObjectMetadata / asPartialObjectMetadataList: the 406 for a transform that does not fit
 * the answer (a list asked for as one object's metadata, or the reverse), naming the Go type the
 * handler holds (`goType`, e.g. `*core.ConfigMapList`); undefined when it fits.
 */
export function partialMetadataMismatch(choice: OutputChoice, list: boolean, goType: string): StatusError | undefined {
  if (choice.transform === 'PartialObjectMetadata' && list)
    return notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${goType})`);
  if (choice.transform === 'PartialObjectMetadataList' && !list)
    return notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${goType})`);
  return undefined;
}

export function contentTypeOf(format: OutputFormat): string {
  return format === 'json' ? JSON_MEDIA_TYPE : format === 'yaml' ? YAML_MEDIA_TYPE : PROTOBUF_MEDIA_TYPE;
}

const textDecoder = new TextDecoder('utf-8', { fatal: false });

export interface DecodedBody {
  object: KubeObject;
  duplicateFields: string[];
  /** go-yaml's texts for a YAML body's duplicate keys (see strict-fields.ts). */
  yamlDuplicates?: string[];
  /** A JSON body: its problems go in document order (see strict-fields.ts). */
  jsonBody?: true;
  /** A JSON body's text when it has duplicate keys, to place them among unknown fields. */
  jsonText?: string;
}

/**
 * Decodes a create/update body by its Content-Type; `numberTexts: false` when nothing will check the
 * body's numbers as written (kinds without the typed-body check). `scheme`: the serving control
 * plane's kind table, which protobuf bodies are decoded with (none: a protobuf body is a 415).
 */
export function decodeBody(contentType: string | undefined, body: Uint8Array, opts: { numberTexts?: boolean; scheme?: ProtobufKinds } = {}): DecodedBody {
  // NegotiateInputSerializer: no Content-Type is JSON; one that does not parse, or names a media type
  // without a serializer (application/x-yaml, text/yaml), is a 415.
  const mt = contentType ? parseMediaType(contentType) : undefined;
  if (contentType && !mt) throw unsupportedMediaType(contentType, BODY_MEDIA_TYPES);
  const full = mt ? `${mt.type}/${mt.subtype}` : JSON_MEDIA_TYPE;
  if (body.length === 0) throw badRequest('the body of the request was empty');
  let value: unknown;
  let duplicateFields: string[] = [];
  let yamlDuplicates: string[] | undefined;
  let jsonBody = false;
  if (full === JSON_MEDIA_TYPE) {
    const r = parseJson(body, opts);
    value = r.value;
    duplicateFields = r.duplicateFields;
    jsonBody = true;
  } else if (full === YAML_MEDIA_TYPE) {
    const r = decodeYaml(body);
    value = r.value;
    duplicateFields = r.duplicateFields;
    yamlDuplicates = r.yamlDuplicates;
  } else if (full === PROTOBUF_MEDIA_TYPE && opts.scheme) {
    value = decodeObject(body, opts.scheme);
  } else {
    throw unsupportedMediaType(contentType ?? '', BODY_MEDIA_TYPES);
  }
  if (!isJsonObject(value)) {
    throw badRequest(`Object 'Kind' is missing in '${truncate(textDecoder.decode(body.subarray(0, 200)))}'`);
  }
  checkObjectMeta(value);
  return {
    object: value,
    duplicateFields,
    ...(yamlDuplicates ? { yamlDuplicates } : {}),
    ...(jsonBody ? { jsonBody: true as const } : {}),
    // Unknown fields are found later, against the kind's schema: the text places the duplicates
    // among them (decoded again only for a body that has some).
    ...(jsonBody && duplicateFields.length ? { jsonText: textDecoder.decode(body) } : {}),
  };
}

/** Go's decoder refuses an ObjectMeta that is not an object (null decodes to an empty one): a 400 with its words. */
export function checkObjectMeta(value: Record<string, unknown>): void {
  const meta = value['metadata'];
  if (meta === undefined || meta === null || isJsonObject(meta)) return;
  const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
  const version = typeof value['apiVersion'] === 'string' ? value['apiVersion'].split('/').pop()! : '';
  throw undecodable(kind, version, kind, cannotUnmarshal(meta, 'v1.ObjectMeta', { struct: kind, field: 'metadata' }));
}

export function decodeYaml(body: Uint8Array): { value: unknown; duplicateFields: string[]; yamlDuplicates?: string[] } {
  const text = textDecoder.decode(body);
  // Refused before the yaml library recurses that deep (see nestingExceeds): go-yaml's limit and words.
  if (nestingExceeds(text)) throw badRequest(`error converting YAML to JSON: yaml: exceeded max depth of ${MAX_DEPTH}`);
  const docs = parseAllDocuments(text, { uniqueKeys: false });
  const list = Array.isArray(docs) ? docs : [docs];
  const doc = list.find((d) => d.contents !== null) ?? list[0];
  if (!doc) throw badRequest('the body of the request was empty');
  if (doc.errors.length) {
    throw badRequest(`error converting YAML to JSON: yaml: ${doc.errors[0]!.message.split('\n')[0]}`);
  }
  const duplicateFields: string[] = [];
  findYamlDuplicates(doc.contents, '', duplicateFields, 0);
  if (mayHoldLongIntegers(text)) keepYamlIntegersExact(doc);
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // Unresolved aliases and alias bombs surface only here; they are the client's error.
    throw badRequest(`error converting YAML to JSON: yaml: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
  }
  if (!duplicateFields.length) return { value: js, duplicateFields };
  // Upstream's YAMLToJSON reports them as go-yaml does, by line; only then is the text read that way.
  const yamlDuplicates = goYAMLDuplicateKeys(text);
  return { value: js, duplicateFields, ...(yamlDuplicates.length ? { yamlDuplicates } : {}) };
}

/**
 * Integers of a YAML document past 2^53 and within int64 become bigints, as in JSON bodies (golang/
 * json-int64.ts): sigs.k8s.io/yaml converts YAML to JSON, which the k8s decoder reads as int64.
 */
function keepYamlIntegersExact(doc: Document): void {
  visit(doc, {
    Scalar(_key, node) {
      // A key too: sigs.k8s.io/yaml writes an integer key with all its digits.
      const v = node.value;
      if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v) && node.source !== undefined) {
        const exact = yamlInteger(node.source);
        if (exact !== undefined) node.value = int64OrFloat(exact);
      }
    },
  });
}

/** A YAML integer's value exactly (decimal, or hex and octal as YAML writes them); undefined for other text. */
function yamlInteger(literal: string): bigint | undefined {
  const neg = literal.startsWith('-');
  const digits = neg || literal.startsWith('+') ? literal.slice(1) : literal;
  if (!/^(?:[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$/.test(digits)) return undefined;
  const big = BigInt(digits);
  return neg ? -big : big;
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
export function encodeBody(obj: unknown, format: OutputFormat, scheme: ProtobufKinds, pretty = false): Uint8Array | string {
  if (format === 'json') return pretty ? stringifyJSON(obj, 2) + '\n' : stringifyJSON(obj) + '\n';
  if (format === 'yaml') return toYaml(obj);
  return encodeObject(obj as KubeObject, scheme);
}

export function toYaml(obj: unknown): string {
  // Through JSON first so undefined fields vanish exactly as in the JSON output.
  const plain: unknown = parseJSONExact(stringifyJSON(obj));
  return stringifyYaml(plain);
}

function stringifyYaml(v: unknown): string {
  return yamlStringify(v, { lineWidth: 0, aliasDuplicateObjects: false });
}

export function canProtobuf(obj: KubeObject, scheme: Scheme): boolean {
  return typeof obj.apiVersion === 'string' && typeof obj.kind === 'string' && scheme.isProtobufKind(obj.apiVersion, obj.kind);
}

export { encoder as utf8Encoder };
