// metadata.managedFields ⇄ field sets per manager, after
// k8s.io/apimachinery/pkg/util/managedfields/internal/managedfields.go. A manager is identified by
// the JSON of its entry without fieldsType, fieldsV1 and time (and without apiVersion for Apply),
// so one applier keeps one entry across versions while updaters get one entry per version.
import type { ManagedFieldsEntry } from '../types.js';
import { FieldSet, FieldsV1Error } from './fieldpath.js';
import { compareStrings, goJson } from './values.js';

/** The fields one manager owns, at the API version it last wrote them with. */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Decoded managedFields: sets and times, keyed by manager identifier. */
export interface Managed {
  readonly fields: Map<string, VersionedSet>;
  readonly times: Map<string, string | undefined>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export class ManagedFieldsError extends Error {
  override readonly name = 'ManagedFieldsError';
}

type Identity = Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>;

/** BuildManagerIdentifier: JSON in Go's field order, empty fields left out. */
export function managerIdentifier(entry: Identity): string {
  const parts: string[] = [];
  if (entry.manager) parts.push(`"manager":${goJson(entry.manager)}`);
  if (entry.operation) parts.push(`"operation":${goJson(entry.operation)}`);
  if (entry.apiVersion && entry.operation !== 'Apply') parts.push(`"apiVersion":${goJson(entry.apiVersion)}`);
  if (entry.subresource) parts.push(`"subresource":${goJson(entry.subresource)}`);
  return `{${parts.join(',')}}`;
}

/** The entry fields a manager identifier stands for (the inverse of managerIdentifier). */
export function parseManagerIdentifier(id: string): Identity & { time?: string } {
  try {
    const o = JSON.parse(id) as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof o[k] === 'string' ? o[k] : undefined);
    const out: Identity & { time?: string } = {};
    const manager = str('manager');
    const operation = str('operation');
    const apiVersion = str('apiVersion');
    const subresource = str('subresource');
    const time = str('time');
    if (manager !== undefined) out.manager = manager;
    if (operation === 'Apply' || operation === 'Update') out.operation = operation;
    if (apiVersion !== undefined) out.apiVersion = apiVersion;
    if (subresource !== undefined) out.subresource = subresource;
    if (time !== undefined) out.time = time;
    return out;
  } catch {
    return { manager: id };
  }
}

// Go's %v of a ManagedFieldsEntry, for error messages that quote one.
function goEntry(e: ManagedFieldsEntry): string {
  const fields = e.fieldsV1 ? `&FieldsV1{Raw:*[${JSON.stringify(e.fieldsV1).length} bytes]}` : '<nil>';
  return `{${e.manager ?? ''} ${e.operation ?? ''} ${e.apiVersion ?? ''} ${e.time ?? '<nil>'} ${e.fieldsType ?? ''} ${fields} ${e.subresource ?? ''}}`;
}

/** DecodeManagedFields; throws ManagedFieldsError with upstream's messages. */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[] | undefined | null): Managed {
  const managed = emptyManaged();
  (entries ?? []).forEach((e, i) => {
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType !== 'FieldsV1') {
      throw new ManagedFieldsError(
        e.fieldsType ? `invalid fieldsType ${goJson(e.fieldsType)} in managed fields entry ${i}` : `missing fieldsType in managed fields entry ${i}`,
      );
    }
    const id = managerIdentifier(e);
    let set: FieldSet;
    try {
      set = FieldSet.fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      if (!(err instanceof FieldsV1Error)) throw err;
      throw new ManagedFieldsError(`error decoding versioned set from ${goEntry(e)}: error decoding set: ${err.message}`);
    }
    managed.fields.set(id, { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' });
    managed.times.set(id, e.time);
  });
  return managed;
}

function seconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/**
 * encodeManagedFields: one entry per manager, sorted as upstream (Apply before Update, then by
 * time, manager, apiVersion, subresource). Undefined when nobody owns anything.
 */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] | undefined {
  if (managed.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.fields) {
    const ident = parseManagerIdentifier(id);
    const e: ManagedFieldsEntry = {};
    if (ident.manager) e.manager = ident.manager;
    e.operation = vs.applied ? 'Apply' : (ident.operation ?? 'Update');
    e.apiVersion = vs.apiVersion;
    const time = managed.times.has(id) ? managed.times.get(id) : ident.time;
    if (time) e.time = time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = vs.set.toFieldsV1();
    if (ident.subresource) e.subresource = ident.subresource;
    out.push(e);
  }
  return out.sort(compareEntries);
}

function compareEntries(p: ManagedFieldsEntry, q: ManagedFieldsEntry): number {
  return (
    compareStrings(p.operation ?? '', q.operation ?? '') ||
    Math.sign(seconds(p.time) - seconds(q.time)) ||
    compareStrings(p.manager ?? '', q.manager ?? '') ||
    compareStrings(p.apiVersion ?? '', q.apiVersion ?? '') ||
    compareStrings(p.subresource ?? '', q.subresource ?? '')
  );
}

/** isResetManagedFields: `[]` or `[{}]` in a request means "drop all managed fields". */
export function isResetManagedFields(entries: readonly ManagedFieldsEntry[] | undefined | null): boolean {
  if (!entries) return false;
  if (entries.length === 0) return true;
  if (entries.length === 1) return Object.values(entries[0]!).every((v) => v === undefined);
  return false;
}

/** A deep copy of the managed state, so that a failed attempt leaves the input untouched. */
export function cloneManaged(m: Managed): Managed {
  return { fields: new Map(m.fields), times: new Map(m.times) };
}
