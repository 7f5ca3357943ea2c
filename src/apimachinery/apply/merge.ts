// Server-side apply and managedFields upkeep as kube-apiserver's field manager does them
// (k8s.io/apimachinery/pkg/util/managedfields/internal: fieldmanager.go and the managers it
// stacks): version check → last-applied annotation upkeep and client-side-apply takeover (manager
// "kubectl" only) → "before-first-apply" → capping Update entries → manager identifiers →
// timestamps → stripping metadata fields → the structured-merge-diff updater.
//
// Pure: no I/O, no clock unless `now` is left out. Objects in, objects and managedFields out.
import { badRequest, internalError } from '../errors.js';
import type { Definitions, OpenAPISchema } from '../schema.js';
import { rfc3339 } from '../times.js';
import { parseApiVersion, type JsonValue, type KubeObject, type ManagedFieldsEntry } from '../types.js';
import { typeOf, type TypeRef } from './atoms.js';
import { compareTyped } from './compare.js';
import { createdFieldsV1 } from './created.js';
import { ApplyConflicts, conflictError } from './conflict.js';
import { FieldSet, makePath } from './fieldpath.js';
import {
  ManagedFieldsError,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  parseManagerIdentifier,
  type Managed,
} from './managed-fields.js';
import { TypedError, fieldSetOf, validateTyped } from './typed.js';
import { applyOwnership, updateOwnership, type UpdaterOptions } from './updater.js';
import { goJson, valuesEqual } from './values.js';
import { parseJSONExact } from '../../golang/json-int64.js';
import { deepCopyJSON } from '../deepcopy.js';

/** The annotation kubectl's client-side apply keeps its last configuration in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** The manager `kubectl apply --server-side` uses; only it takes over from client-side apply. */
export const KUBECTL_APPLY_MANAGER = 'kubectl';
/** The manager kubectl's client-side apply records its PATCHes under. */
export const KUBECTL_CLIENT_SIDE_APPLY_MANAGER = 'kubectl-client-side-apply';
/** Owner of the fields an object already had when it was first applied to. */
export const BEFORE_FIRST_APPLY_MANAGER = 'before-first-apply';
/** Update entries beyond this many are merged, oldest first, into "ancient-changes". */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES_MANAGER = 'ancient-changes';
const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

// Fields nobody owns: type and identity metadata, and managedFields itself.
const STRIP_SET = FieldSet.of(
  makePath('apiVersion'),
  makePath('kind'),
  makePath('metadata'),
  makePath('metadata', 'name'),
  makePath('metadata', 'namespace'),
  makePath('metadata', 'creationTimestamp'),
  makePath('metadata', 'selfLink'),
  makePath('metadata', 'uid'),
  makePath('metadata', 'clusterName'),
  makePath('metadata', 'generation'),
  makePath('metadata', 'managedFields'),
  makePath('metadata', 'resourceVersion'),
);

interface Common {
  /** Schema of the kind (or a `$ref` to it); undefined treats the object as untyped ("deduced"). */
  readonly schema: OpenAPISchema | undefined;
  readonly defs: Definitions;
  /** group/version of the request, recorded in the entry. */
  readonly apiVersion: string;
  /** Subresource written through (e.g. "status"); entries are per subresource. */
  readonly subresource?: string | undefined;
  /** Clock for entry timestamps; defaults to the current time. */
  readonly now?: Date | string | undefined;
  /** The strategy's reset fields for this endpoint (e.g. `status` on the main resource): never owned. */
  readonly resetFields?: FieldSet | undefined;
}

export interface ApplyOptions extends Common {
  /** The stored object, or undefined when the apply creates it. */
  readonly live: KubeObject | undefined;
  /** The applied configuration (the request body). */
  readonly config: KubeObject;
  /** fieldManager of the request (required for apply upstream; "" is recorded as "unknown"). */
  readonly manager: string;
  /** Entries to start from; defaults to the live object's. */
  readonly managedFields?: readonly ManagedFieldsEntry[] | undefined;
  readonly force?: boolean | undefined;
  /** Kind the endpoint serves; when given, the configuration must name it. */
  readonly kind?: string | undefined;
}

export interface ApplyResult {
  /** The object to store, with metadata.managedFields set (absent when no one owns anything). */
  readonly object: KubeObject;
  readonly managedFields: ManagedFieldsEntry[] | undefined;
  /** Whether the object (apart from managedFields) differs from the live one. */
  readonly changed: boolean;
}

/**
 * Server-side apply. Throws a StatusError: 409 Conflict (with one FieldManagerConflict cause per
 * field and manager) when the configuration changes fields others own and `force` is not set;
 * 400 for a configuration of the wrong type or with managedFields; 500 when the stored
 * managedFields cannot be read or the configuration does not fit the schema, as upstream.
 */
export function apply(opts: ApplyOptions): ApplyResult {
  const type = typeOf(opts.schema, opts.defs);
  checkConfig(opts);
  const live = withoutManagedFields(opts.live ?? {});
  const config = opts.config as JsonValue;
  const issues = validateTyped(config, type);
  if (issues.length) {
    throw internalError(new Error(`failed to create typed patch object (${objectGVKNN(opts.config)}): ${new TypedError(issues).message}`));
  }
  let managed: Managed;
  try {
    managed = decodeManagedFields(opts.managedFields ?? opts.live?.metadata?.managedFields);
  } catch (e) {
    if (e instanceof ManagedFieldsError) throw internalError(new Error(`failed to decode managed fields: ${e.message}`));
    throw e;
  }
  const ctx: Context = { type, opts, now: rfc3339(opts.now ?? Date.now()) };
  const manager = opts.manager;

  let outcome: { object: JsonValue; managed: Managed };
  try {
    outcome = applyThroughLastApplied(live, config, managed, manager, opts.force === true, ctx);
  } catch (e) {
    if (e instanceof ApplyConflicts) throw conflictError(e.conflicts);
    throw e;
  }
  let object = outcome.object as KubeObject;
  if (manager === KUBECTL_APPLY_MANAGER && lastAppliedOf(object) !== undefined) object = withLastApplied(object, buildLastApplied(opts.config));
  const managedFields = encodeManagedFields(outcome.managed);
  return { object: withManagedFields(object, managedFields), managedFields, changed: !valuesEqual(live, object as JsonValue) };
}

export interface UpdateOptions extends Common {
  /** The stored object; undefined (or without uid) for a create. */
  readonly old: KubeObject | undefined;
  /** The object about to be stored. */
  readonly new: KubeObject;
  readonly manager: string;
  /**
   * Entries to start from. By default, as upstream: the new object's entries when the request
   * set valid, non-empty ones (a client may edit them; `[]` or `[{}]` resets them), else the old
   * object's. Subresource writes always start from the old object's.
   */
  readonly managedFields?: readonly ManagedFieldsEntry[] | undefined;
}

/**
 * managedFields after a non-apply write (create, update, patch): the manager takes the fields it
 * added or changed, removed fields drop from everyone. An object that exists without managedFields
 * stays without (tracking starts at creation or at the first apply). Never throws for bad input:
 * when the objects cannot be read through the schema the old entries are kept, as
 * UpdateNoErrors does.
 */
export function update(opts: UpdateOptions): ManagedFieldsEntry[] | undefined {
  const type = typeOf(opts.schema, opts.defs);
  const ctx: Context = { type, opts, now: rfc3339(opts.now ?? Date.now()) };
  const managed = opts.managedFields !== undefined ? decodeOrEmpty(opts.managedFields) : managedForUpdate(opts.old, opts.new, Boolean(opts.subresource));
  const newObj = withoutManagedFields(opts.new);
  if (managed.fields.size === 0 && opts.old === undefined) {
    try {
      return createdEntries(newObj, opts.manager, ctx);
    } catch {
      // the general path below decides, as it would have without this shortcut
    }
  }
  const oldObj = withoutManagedFields(opts.old ?? {});
  // skipNonApplied: an existing object without managedFields is not tracked until applied to.
  if (managed.fields.size === 0 && opts.old?.metadata?.uid) return undefined;
  try {
    return encodeManagedFields(updateManaged(oldObj, newObj, managed, opts.manager, ctx));
  } catch {
    return opts.old?.metadata?.managedFields ?? undefined;
  }
}

interface Context {
  readonly type: TypeRef;
  readonly opts: Common;
  readonly now: string;
}

/**
 * updateManaged + encodeManagedFields for a create (no old object, no entries to start from): the
 * manager owns every field of the new object but the reset and stripped ones, in one entry.
 */
function createdEntries(newObj: JsonValue, manager: string, ctx: Context): ManagedFieldsEntry[] | undefined {
  const fieldsV1 = createdFieldsV1(newObj, ctx.type, ctx.opts.resetFields, STRIP_SET);
  if (!fieldsV1) return undefined;
  const ident = updateIdentity(manager || 'unknown', ctx.opts.apiVersion, ctx.opts.subresource);
  const e: ManagedFieldsEntry = {};
  if (ident.manager) e.manager = ident.manager;
  e.operation = 'Update';
  e.apiVersion = ctx.opts.apiVersion;
  if (ctx.now) e.time = ctx.now;
  e.fieldsType = 'FieldsV1';
  e.fieldsV1 = fieldsV1;
  if (ident.subresource) e.subresource = ident.subresource;
  return [e];
}

// The manager and subresource an Update entry is written with: its identifier read back, as
// encodeManagedFields does (Go's JSON of the name, e.g. of invalid UTF-16, is what is recorded).
const identities = new Map<string, ReturnType<typeof parseManagerIdentifier>>();

function updateIdentity(manager: string, apiVersion: string, subresource: string | undefined): ReturnType<typeof parseManagerIdentifier> {
  const key = `${manager}\0${apiVersion}\0${subresource ?? ''}`;
  let ident = identities.get(key);
  if (!ident) {
    ident = parseManagerIdentifier(managerIdentifier({ manager, operation: 'Update', apiVersion, subresource }));
    if (identities.size >= 1000) identities.clear();
    identities.set(key, ident);
  }
  return ident;
}

function decodeOrEmpty(entries: readonly ManagedFieldsEntry[] | undefined | null): Managed {
  try {
    return decodeManagedFields(entries);
  } catch {
    return emptyManaged();
  }
}

// decodeLiveOrNew.
function managedForUpdate(old: KubeObject | undefined, next: KubeObject, isSubresource: boolean): Managed {
  const liveEntries = old?.metadata?.managedFields;
  if (isSubresource) return decodeOrEmpty(liveEntries);
  const newEntries = next.metadata?.managedFields;
  if (isResetManagedFields(newEntries)) return emptyManaged();
  try {
    const m = decodeManagedFields(newEntries);
    if (m.fields.size > 0) return m;
  } catch {
    // fall through: a client that does not understand managedFields must not wipe them
  }
  return decodeOrEmpty(liveEntries);
}

function checkConfig(opts: ApplyOptions): void {
  const c = opts.config;
  const kindMismatch = opts.kind !== undefined && c.kind !== opts.kind;
  if (c.apiVersion !== opts.apiVersion || kindMismatch) throw badRequest(`invalid object type: ${gvkString(c)}`);
  if (c.metadata?.managedFields !== undefined && c.metadata.managedFields !== null) throw badRequest('metadata.managedFields must be nil');
}

function gvkString(o: KubeObject): string {
  const { group, version } = parseApiVersion(o.apiVersion ?? '');
  return `${group}/${version}, Kind=${o.kind ?? ''}`;
}

function objectGVKNN(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}; ${gvkString(o)}`;
}

function updaterOptions(ctx: Context): UpdaterOptions {
  return { type: ctx.type, ignoredFields: ctx.opts.resetFields };
}

function stripped(set: FieldSet): FieldSet {
  return set.difference(STRIP_SET);
}

/**
 * The Update path below skipNonApplied: a temporary "current-operation" manager takes the changes;
 * if it took anything, its fields join the manager's entry and the entry's time is set. Then
 * Update entries are capped.
 */
function updateManaged(oldObj: JsonValue, newObj: JsonValue, managed: Managed, manager: string, ctx: Context): Managed {
  const id = managerIdentifier({ manager: manager || 'unknown', operation: 'Update', apiVersion: ctx.opts.apiVersion, subresource: ctx.opts.subresource });
  const fields = new Map(managed.fields);
  const times = new Map(managed.times);
  const self = '\0current-operation';
  updateOwnership(oldObj, newObj, ctx.opts.apiVersion, fields, self, updaterOptions(ctx));
  const taken = fields.get(self);
  if (taken) {
    fields.delete(self);
    const set = stripped(taken.set);
    if (!set.empty()) {
      const previous = fields.get(id);
      fields.set(id, { ...taken, set: previous ? set.union(previous.set) : set });
      times.set(id, ctx.now);
    }
  }
  return capUpdateManagers({ fields, times });
}

// capManagers: merge the oldest Update entries into one "ancient-changes" entry per version.
function capUpdateManagers(managed: Managed): Managed {
  const updaters = [...managed.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return managed;
  const secs = (id: string): number => {
    const t = managed.times.get(id);
    return t ? Math.floor(Date.parse(t) / 1000) : 0;
  };
  updaters.sort((a, b) => secs(a) - secs(b) || (a < b ? -1 : a > b ? 1 : 0));
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i]!;
    const vs = managed.fields.get(id)!;
    const time = managed.times.get(id);
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES_MANAGER, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.fields.delete(first);
    }
    managed.fields.set(bucket, { ...vs, set: vs.set.union(managed.fields.get(bucket)!.set) });
    managed.fields.delete(id);
    managed.times.set(bucket, time);
    length--;
  }
  return managed;
}

/**
 * lastAppliedManager: when `kubectl apply --server-side` meets conflicts, those on fields its
 * client-side last-applied annotation already set to the live value are its own (the object was
 * managed by client-side apply before); if no other conflict remains, the apply is forced.
 */
function applyThroughLastApplied(
  live: JsonValue,
  config: JsonValue,
  managed: Managed,
  manager: string,
  force: boolean,
  ctx: Context,
): { object: JsonValue; managed: Managed } {
  try {
    return applyManaged(live, config, managed, manager, force, ctx);
  } catch (e) {
    if (manager !== KUBECTL_APPLY_MANAGER || !(e instanceof ApplyConflicts)) throw e;
    const allowed = allowedConflictsFromLastApplied(live, ctx);
    if (!allowed) throw e;
    const remaining = e.conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw new ApplyConflicts(remaining);
    return applyManaged(live, config, managed, manager, true, ctx);
  }
}

function allowedConflictsFromLastApplied(live: JsonValue, ctx: Context): FieldSet | undefined {
  const raw = lastAppliedOf(live as KubeObject);
  if (!raw) return undefined;
  let lastApplied: JsonValue;
  try {
    lastApplied = parseJSONExact(raw) as JsonValue;
  } catch {
    return undefined;
  }
  if (lastApplied === null || typeof lastApplied !== 'object' || Array.isArray(lastApplied)) return undefined;
  if (lastApplied['apiVersion'] !== ctx.opts.apiVersion) return undefined;
  const set = fieldSetOf(lastApplied, ctx.type);
  const cmp = compareTyped(lastApplied, live, ctx.type);
  // Fields whose live value differs from the last-applied one were changed by someone else.
  return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
}

/** skipNonApplied + the Apply path: before the first apply, the existing fields get an owner. */
function applyManaged(
  live: JsonValue,
  config: JsonValue,
  managed: Managed,
  manager: string,
  force: boolean,
  ctx: Context,
): { object: JsonValue; managed: Managed } {
  let start = managed;
  if (start.fields.size === 0) start = updateManaged({}, live, start, BEFORE_FIRST_APPLY_MANAGER, ctx);
  const id = managerIdentifier({ manager: manager || 'unknown', operation: 'Apply', subresource: ctx.opts.subresource });
  const fields = new Map(start.fields);
  const times = new Map(start.times);
  const outcome = applyOwnership(live, config, ctx.opts.apiVersion, fields, id, force, updaterOptions(ctx));
  const mine = fields.get(id);
  if (mine) {
    const set = stripped(mine.set);
    if (set.empty()) fields.delete(id);
    else fields.set(id, { ...mine, set });
  }
  if (outcome.object !== undefined) times.set(id, ctx.now);
  return { object: outcome.object ?? live, managed: { fields, times } };
}

function lastAppliedOf(o: KubeObject): string | undefined {
  const v = o.metadata?.annotations?.[LAST_APPLIED_ANNOTATION];
  return v ? v : undefined;
}

// buildLastApplied: the configuration without the annotation, as Go's json.Encoder writes it.
function buildLastApplied(config: KubeObject): string {
  const copy = deepCopyJSON(config);
  const annotations = copy.metadata?.annotations;
  if (annotations) {
    delete annotations[LAST_APPLIED_ANNOTATION];
  }
  return goJson(copy as JsonValue) + '\n';
}

// SetLastApplied: dropped instead when it would push the annotations over their size limit.
function withLastApplied(o: KubeObject, value: string): KubeObject {
  const annotations = { ...(o.metadata?.annotations ?? {}), [LAST_APPLIED_ANNOTATION]: value };
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  if (size <= TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) return { ...o, metadata: { ...o.metadata, annotations } };
  const { [LAST_APPLIED_ANNOTATION]: _tooLarge, ...rest } = annotations;
  return { ...o, metadata: { ...o.metadata, annotations: rest } };
}

function withoutManagedFields(o: KubeObject): JsonValue {
  if (!o.metadata || !('managedFields' in o.metadata)) return o as JsonValue;
  const { managedFields: _dropped, ...metadata } = o.metadata;
  return { ...o, metadata } as unknown as JsonValue;
}

function withManagedFields(o: KubeObject, entries: ManagedFieldsEntry[] | undefined): KubeObject {
  const { managedFields: _old, ...metadata } = o.metadata ?? {};
  return { ...o, metadata: entries ? { ...metadata, managedFields: entries } : metadata };
}
