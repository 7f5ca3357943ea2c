// The request path's field manager (k8s.io/apiserver's handlers + managedfields.FieldManager):
// server-side apply for PATCH application/apply-patch+yaml, and managedFields upkeep for every
// other write (create, update, json/merge/strategic patch, subresources). The handlers call these
// inside the store's update function, so they run on the current stored object within the retry
// loop; the ownership engine itself is src/apimachinery/apply (pure, no I/O).
import { StatusError, badRequest, conflict, fieldIssue, invalid, type FieldIssue } from '../apimachinery/errors.js';
import { apply, update, FieldSet, makePath } from '../apimachinery/apply/index.js';
import { parseJson } from '../apimachinery/json.js';
import { refTo, resolveSchema, type Definitions, type OpenAPISchema } from '../apimachinery/schema.js';
import { normalizeTimes } from '../apimachinery/times.js';
import { apiVersionOf, type KubeObject } from '../apimachinery/types.js';
import { dropEmptyObjectMetaFields } from '../apimachinery/validation/objectmeta.js';
import { cannotUnmarshal } from '../golang/json-errors.js';
import { goYAMLDuplicateKeys } from '../golang/yaml-read.js';
import { cloneObject } from '../registry/codec.js';
import type { GenericStore } from '../registry/store.js';
import type { Strategy } from '../registry/strategy.js';
import { decodeYaml, type PatchType } from './negotiation.js';
import { queryBool } from './requestinfo.js';
import { stringifyJSON } from '../golang/json-int64.js';

/** Longest fieldManager (and user-agent-derived manager name) accepted, as upstream. */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/** What the field manager needs to know about the endpoint a write goes through. */
export interface FieldManagerScope {
  readonly strategy: Strategy;
  /** Schema of the kind (a `$ref` is fine); undefined treats objects as untyped. */
  readonly schema: OpenAPISchema | undefined;
  readonly definitions: Definitions;
  /** group/version the request is served at (`v1`, `coordination.k8s.io/v1`). */
  readonly apiVersion: string;
  readonly kind: string;
  /** For error messages (`configmaps`). */
  readonly groupResource: { readonly group: string; readonly resource: string };
  /** '' for the resource itself, else the subresource (`status`). */
  readonly subresource: string;
}

/** The scope of writes to `store`'s resource (or its `subresource`), as served at its own version. */
export function fieldManagerScope(definitions: Definitions, store: GenericStore, subresource: string): FieldManagerScope {
  const d = store.descriptor;
  return {
    strategy: store.strategy,
    schema: resolveSchema(definitions, refTo(d.definitionName)),
    definitions,
    apiVersion: apiVersionOf(d.group, d.version),
    kind: d.kind,
    groupResource: store.groupResource,
    subresource,
  };
}

/**
 * managerOrUserAgent: the request's fieldManager, else the User-Agent up to its first '/', without
 * unprintable characters and cut to 128 bytes (prefixFromUserAgent).
 */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  const prefix = (userAgent ?? '').split('/')[0]!;
  // The common case, printable ASCII that fits: nothing to drop or cut.
  if (prefix.length <= FIELD_MANAGER_MAX_LENGTH && PRINTABLE_ASCII.test(prefix)) return prefix;
  let out = '';
  let bytes = 0;
  for (const ch of prefix) {
    if (!isPrintable(ch)) continue;
    const n = Buffer.byteLength(ch);
    if (bytes + n > FIELD_MANAGER_MAX_LENGTH) break;
    out += ch;
    bytes += n;
  }
  return out;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
function isPrintable(ch: string): boolean {
  return ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
}

/**
 * ValidatePatchOptions' apply-specific rules: `force` only for apply, `fieldManager` required for
 * apply. 422 on PatchOptions.meta.k8s.io like upstream.
 */
/** The apply-specific part of ValidatePatchOptions (the rest is every write's: see the API server). */
export function patchOptionsIssues(query: URLSearchParams, patchType: PatchType): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (patchType !== 'apply') {
    if (query.has('force')) issues.push(fieldIssue.forbidden('force', 'may not be specified for non-apply patch'));
  } else if (!query.get('fieldManager')) {
    issues.push(fieldIssue.required('fieldManager', 'is required for apply patch'));
  }
  return issues;
}

export function validatePatchOptions(query: URLSearchParams, patchType: PatchType): void {
  const issues = patchOptionsIssues(query, patchType);
  if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', issues);
}

/** `force` of an apply request. */
export function forceOf(query: URLSearchParams): boolean {
  return queryBool(query.get('force'));
}

// Reset fields as FieldSets, built once per strategy and endpoint.
const resetCache = new WeakMap<Strategy, Map<string, FieldSet | undefined>>();

function resetFieldsOf(strategy: Strategy, subresource: string): FieldSet | undefined {
  let byEndpoint = resetCache.get(strategy);
  if (!byEndpoint) resetCache.set(strategy, (byEndpoint = new Map<string, FieldSet | undefined>()));
  if (byEndpoint.has(subresource)) return byEndpoint.get(subresource);
  const paths = strategy.resetFields?.[subresource];
  const set = paths?.length ? FieldSet.of(...paths.map((p) => makePath(...p))) : undefined;
  byEndpoint.set(subresource, set);
  return set;
}

/**
 * The object as the store will compare it: defaults filled and empty metadata collections dropped
 * (what upstream's typed round trip does before its field manager sees the object). Mutates `obj`.
 */
function normalise(scope: FieldManagerScope, obj: KubeObject): KubeObject {
  scope.strategy.defaults?.(obj);
  const meta = obj.metadata;
  if (meta) {
    // `managedFields: []` is a request to reset them: the field manager must still see it.
    const sent = meta.managedFields;
    dropEmptyObjectMetaFields(meta);
    if (sent !== undefined) meta.managedFields = sent;
  }
  return obj;
}

/**
 * UpdateNoErrors for a non-apply write: sets (or removes) `obj.metadata.managedFields` so that
 * `manager` owns what it added or changed relative to `live` (undefined for a create). A
 * subresource write is compared as the store will merge it. Mutates `obj`.
 */
export function trackUpdate(scope: FieldManagerScope, live: KubeObject | undefined, obj: KubeObject, manager: string): void {
  normalise(scope, obj);
  let next = obj;
  const sub = scope.subresource ? scope.strategy.subresources?.[scope.subresource] : undefined;
  if (sub && live) next = normalise(scope, sub.merge(cloneObject(obj), cloneObject(live)));
  setManagedFields(obj, updatedEntries(scope, live, next, manager));
  alignMetadata(obj, live);
}

/** The managedFields after `manager` wrote `next` over `live`, with the scope's schema and reset fields. */
function updatedEntries(scope: FieldManagerScope, live: KubeObject | undefined, next: KubeObject, manager: string): ReturnType<typeof update> {
  return update({
    schema: scope.schema,
    defs: scope.definitions,
    apiVersion: scope.apiVersion,
    subresource: scope.subresource || undefined,
    resetFields: resetFieldsOf(scope.strategy, scope.subresource),
    old: live,
    new: next,
    manager,
  });
}

function setManagedFields(obj: KubeObject, entries: ReturnType<typeof update>): void {
  const meta = (obj.metadata ??= {});
  if (entries?.length) meta.managedFields = entries;
  else delete meta.managedFields;
}

/**
 * managedFields for a write through a subresource with a kind of its own (scale): `next` is the
 * parent object as the write leaves it. The manager owns what it changed in the parent, recorded
 * with the parent's apiVersion and the subresource's name (upstream's ScaleHandler maps the
 * Scale's `.spec.replicas` onto the parent's replicas path the same way). The entries are set on
 * `view`, the object the store merges into the parent. Mutates `next` and `view`.
 */
export function trackViewUpdate(scope: FieldManagerScope, live: KubeObject, next: KubeObject, view: KubeObject, manager: string): void {
  normalise(scope, next);
  setManagedFields(view, updatedEntries(scope, live, next, manager));
}

export interface ApplyRequest {
  readonly body: Uint8Array;
  readonly manager: string;
  readonly force: boolean;
  readonly fieldValidation: 'Strict' | 'Warn' | 'Ignore';
}

/**
 * Server-side apply of a request body to `live` (undefined: the apply creates the object). Returns
 * the object to store, with its managedFields, and strict-decoding warnings (fieldValidation=Warn).
 * Throws 400 for a body that is not an object or names another kind, 409 for conflicts.
 */
export function applyRequest(scope: FieldManagerScope, live: KubeObject | undefined, req: ApplyRequest): { object: KubeObject; warnings: string[] } {
  const { config, duplicateFields } = decodeApplyBody(req.body);
  if (scope.schema) normalizeTimes(config, scope.schema, scope.definitions);
  const result = plainInternalErrors(() =>
    apply({
      schema: scope.schema,
      defs: scope.definitions,
      apiVersion: scope.apiVersion,
      kind: scope.kind,
      subresource: scope.subresource || undefined,
      resetFields: resetFieldsOf(scope.strategy, scope.subresource),
      live,
      config,
      manager: req.manager,
      force: req.force,
    }),
  );
  // Unchanged (object and managedFields): hand back the live object as it is, so the store sees
  // the same bytes and writes nothing.
  if (live && !result.changed && sameJson(result.managedFields, live.metadata?.managedFields))
    return { object: live, warnings: duplicateWarnings(req.body, duplicateFields, req.fieldValidation) };
  const object = alignMetadata(normalise(scope, result.object), live);
  // A create must not name a uid: no object with it exists (patcher.applyPatch).
  const uid = object.metadata?.uid;
  if (!live && uid) {
    throw conflict(
      scope.groupResource,
      object.metadata?.name ?? '',
      `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`,
    );
  }
  return { object, warnings: duplicateWarnings(req.body, duplicateFields, req.fieldValidation) };
}

/**
 * fieldValidation after a successful apply: duplicate keys fail (Strict) or warn (Warn). Upstream
 * reads an apply body, JSON or not, with sigs.k8s.io/yaml's strict YAMLToJSON, so they are go-yaml's
 * complaints by line: one error under Strict, one warning per line under Warn.
 */
const textDecoder = new TextDecoder('utf-8');

function duplicateWarnings(body: Uint8Array, duplicateFields: readonly string[], mode: ApplyRequest['fieldValidation']): string[] {
  if (!duplicateFields.length || mode === 'Ignore') return [];
  const lines = goYAMLDuplicateKeys(textDecoder.decode(body));
  // go-yaml sees none where our readers saw some only for keys it reads as different values.
  const problems = lines.length ? lines : duplicateFields.map((p) => `duplicate field "${p}"`);
  if (mode === 'Strict') {
    if (!lines.length) throw badRequest(`error strict decoding YAML: ${problems.join(', ')}`);
    throw badRequest(`error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  }
  return problems;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return stringifyJSON(a) === stringifyJSON(b);
}

/**
 * Metadata keys in the live object's order (new keys after): the store detects no-op writes by
 * comparing bytes, and the field manager rebuilds metadata with managedFields last. Mutates `obj`.
 */
function alignMetadata(obj: KubeObject, live: KubeObject | undefined): KubeObject {
  const m = obj.metadata;
  const lm = live?.metadata;
  if (!m || !lm) return obj;
  const keys = Object.keys(m);
  const common = keys.filter((k) => k in lm);
  const liveCommon = Object.keys(lm).filter((k) => k in m);
  if (common.every((k, i) => k === liveCommon[i])) return obj;
  const src = m as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of liveCommon) out[k] = src[k];
  for (const k of keys) if (!(k in out)) out[k] = src[k];
  obj.metadata = out;
  return obj;
}

/**
 * The field manager's own failures (a configuration that does not fit the schema, managedFields
 * that do not decode) are plain Go errors upstream: a 500 Status with the bare message and no reason.
 */
function plainInternalErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const prefix = 'Internal error occurred: ';
    if (e instanceof StatusError && e.code === 500 && e.reason === 'InternalError' && e.message.startsWith(prefix)) {
      throw new StatusError({ code: 500, message: e.message.slice(prefix.length) });
    }
    throw e;
  }
}

/** yaml.Unmarshal into map[string]interface{}: JSON takes the fast path; null and empty are `{}`. */
function decodeApplyBody(body: Uint8Array): { config: KubeObject; duplicateFields: string[] } {
  let value: unknown;
  let duplicateFields: string[] = [];
  const first = firstNonSpace(body);
  try {
    if (first === 0x7b /* { */) {
      try {
        const r = parseJson(body, { messagePrefix: '' });
        value = r.value;
        duplicateFields = r.duplicateFields;
      } catch {
        // YAML accepts more than JSON (comments, unquoted keys in flow maps): let it decide.
        const r = decodeYaml(body);
        value = r.value;
        duplicateFields = r.duplicateFields;
      }
    } else if (first === -1) {
      value = null;
    } else {
      const r = decodeYaml(body);
      value = r.value;
      duplicateFields = r.duplicateFields;
    }
  } catch (e) {
    if (e instanceof StatusError && e.code === 400 && !e.message.startsWith('the body')) throw badRequest(`error decoding YAML: ${e.message}`);
    if (e instanceof StatusError && e.message === 'the body of the request was empty') value = null;
    else throw e;
  }
  if (value === null || value === undefined) return { config: {}, duplicateFields };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: ${cannotUnmarshal(value, 'map[string]interface {}')}`);
  }
  return { config: value as KubeObject, duplicateFields };
}

function firstNonSpace(b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return -1;
}
