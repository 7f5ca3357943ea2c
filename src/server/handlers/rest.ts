// What upstream's handlers/rest.go and its decoding steps do to an object on its way in: the
// kind check, Go-typed decoding, unknown/duplicate fields (fieldValidation), the field manager's
// scope, system fields wiped on create, and owner references deduplicated.
import { badRequest, fieldIssue, invalid, undecodable } from '../../apimachinery/errors.js';
import { goTypeError } from '../../apimachinery/gotypes.js';
import { resolveSchema, refTo, type Definitions } from '../../apimachinery/schema.js';
import { normalizeTimes } from '../../apimachinery/times.js';
import { apiVersionOf, type KubeObject } from '../../apimachinery/types.js';
import { pruneUnknownFields } from '../../apimachinery/unknown-fields.js';
import { subresourceKind } from '../../apimachinery/resource.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { fieldManagerScope, type FieldManagerScope } from '../fieldmanager.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { decodeBody, type DecodedBody } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { readBody } from './body.js';
import type { ServerContext } from './context.js';
import { strictFieldProblems, type DuplicateFields } from '../strict-fields.js';
import { stringifyJSON } from '../../golang/json-int64.js';

/**
 * A body (or a patch's result) with a field of the wrong type for the kind's Go struct: the
 * decoder's 400 for a create or update, as upstream; after a patch a 422 on `patch`, as upstream's
 * patch handler reports a result that does not decode.
 */
export function checkGoTypes(definitions: Definitions, r: RegisteredResource, obj: KubeObject, patched = false): void {
  if (!r.registration.goTypedBody) return;
  const why = goTypeError(obj, r.descriptor.definitionName, definitions, r.scheme.goFieldTypes);
  if (why === undefined) return;
  if (!patched) {
    const d = r.descriptor;
    throw undecodable(d.kind, d.version, d.kind, why);
  }
  throw invalid({ group: '', kind: '' }, '', [fieldIssue.invalid('patch', stringifyJSON(obj), why)]);
}

/**
 * The body of a subresource that speaks its own kind (serviceaccounts/token → TokenRequest,
 * features/uses → FeatureUse) decoded as a typed body: the endpoint's group/version/kind fill what
 * the body leaves out, the kind must match, and a field of the wrong JSON type is the Go decoder's
 * 400. Returns the decoded body (its object is `decoded.object`) and the kind with its definition.
 */
export async function decodeSubresourceBody(
  c: ServerContext,
  s: RequestScope,
  r: RegisteredResource,
): Promise<{ decoded: DecodedBody; kind: ReturnType<typeof subresourceKind> }> {
  const kind = subresourceKind(r.descriptor, r.descriptor.subresources.find((x) => x.name === s.subresource)!);
  const body = await readBody(s.req, c.maxRequestBodyBytes);
  const decoded = decodeBody(header(s.req, 'content-type'), body, { numberTexts: true, scheme: r.scheme });
  defaultGroupVersionKind(decoded.object, kind);
  checkKind(decoded.object, kind);
  const why = goTypeError(decoded.object, kind.definitionName, c.registry.definitions, r.scheme.goFieldTypes);
  if (why !== undefined) throw undecodable(kind.kind, kind.version, kind.kind, why);
  return { decoded, kind };
}

export function schemaOf(definitions: Definitions, r: RegisteredResource): ReturnType<typeof resolveSchema> {
  return resolveSchema(definitions, refTo(r.descriptor.definitionName));
}

/** What the field manager (server-side apply, managedFields) needs to know about an endpoint. */
export function fieldScope(definitions: Definitions, r: RegisteredResource, subresource: string): FieldManagerScope {
  return fieldManagerScope(definitions, r.store, subresource);
}

/**
 * fieldValidation: unknown and duplicate fields → error (Strict), Warning headers (Warn) or nothing,
 * worded and ordered as upstream's decoders give them (strict-fields.ts).
 */
export function checkFields(definitions: Definitions, r: RegisteredResource, obj: KubeObject, duplicates: DuplicateFields, mode: string): string[] {
  const prune = r.registration.pruneUnknownFields;
  const schema = prune ? undefined : schemaOf(definitions, r);
  // Fields the schema does not declare are never stored (upstream's typed decoding drops them).
  const unknown = prune ? prune(obj) : schema ? pruneUnknownFields(obj, schema, definitions) : [];
  // Time/MicroTime come back in Go's marshalled form (seconds; six fractional digits), as after kube's decode.
  if (schema) normalizeTimes(obj, schema, definitions);
  // The common case (no problem) without building strictFieldProblems's input: spreading the decoded
  // body (whose shape varies with the content type) costs a slow object clone on every write.
  if (mode === 'Ignore' || (!unknown.length && !duplicates.duplicateFields.length && !duplicates.patchProblems?.length)) return [];
  return strictFieldProblems({ ...duplicates, unknown, customResource: prune !== undefined }, mode);
}

/** rest.WipeObjectMetaSystemFields, run on a create before the field manager and admission. */
export function wipeObjectMetaSystemFields(obj: KubeObject): void {
  const m = obj.metadata;
  if (!m) return;
  // Only what is there: a delete changes the object's shape, which the create path need not pay.
  if (m.creationTimestamp !== undefined) delete m.creationTimestamp;
  if (m.uid !== undefined) delete m.uid;
  if (m.deletionTimestamp !== undefined) delete m.deletionTimestamp;
  if (m.deletionGracePeriodSeconds !== undefined) delete m.deletionGracePeriodSeconds;
  if (m.selfLink !== undefined) delete m.selfLink;
}

/**
 * dedupOwnerReferencesAndAddWarning (handlers/rest.go): an owner reference equal to an earlier one
 * with the same uid is dropped, and the request gets a warning naming the uids.
 */
export function dedupOwnerReferences(obj: KubeObject, afterMutatingAdmission: boolean, warnings: string[]): void {
  const refs = obj.metadata?.ownerReferences;
  if (!refs || refs.length < 2) return;
  const kept: typeof refs = [];
  const duplicates: string[] = [];
  const seen = new Set<string>();
  const canonical = (x: object): string =>
    JSON.stringify(
      Object.entries(x)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  for (const ref of refs) {
    if (seen.has(ref.uid) && kept.some((k) => canonical(k) === canonical(ref))) {
      duplicates.push(ref.uid);
      continue;
    }
    seen.add(ref.uid);
    kept.push(ref);
  }
  if (!duplicates.length) return;
  obj.metadata!.ownerReferences = kept;
  const after = afterMutatingAdmission ? ' after mutating admission happens' : '';
  warnings.push(
    `.metadata.ownerReferences contains duplicate entries${after}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ${duplicates.join(', ')}`,
  );
}

/** The body's apiVersion/kind must name the resource's kind (or be omitted where kube allows). */
export function checkKind(obj: KubeObject, r: RegisteredResource | { group: string; version: string; kind: string }): void {
  const d = 'descriptor' in r ? r.descriptor : r;
  const want = apiVersionOf(d.group, d.version);
  if (obj.kind === undefined || obj.kind === '') {
    throw badRequest(`Object 'Kind' is missing in '${truncate(stringifyJSON(obj))}'`);
  }
  if (obj.apiVersion === undefined || obj.apiVersion === '') {
    throw badRequest(`Object 'apiVersion' is missing in '${truncate(stringifyJSON(obj))}'`);
  }
  if (obj.kind !== d.kind) {
    throw undecodable(
      String(obj.kind),
      String(obj.apiVersion),
      d.kind,
      `the kind in the data (${String(obj.kind)}) does not match the expected kind (${d.kind})`,
    );
  }
  if (obj.apiVersion !== want) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${want})`);
  }
}

function truncate(s: string): string {
  return s.length > 200 ? s.slice(0, 200) + '...' : s;
}
