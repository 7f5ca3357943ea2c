// The ownership engine of structured-merge-diff (merge/update.go): Update for ordinary writes,
// Apply for server-side apply, with conflicts, forcing and pruning. Works on one version: kplane
// serves each resource from a single schema, so upstream's conversions between the versions
// managers wrote with are the identity here.
import type { JsonValue } from '../types.js';
import type { TypeRef } from './atoms.js';
import { compareTyped, type Comparison } from './compare.js';
import { ApplyConflicts, type Conflict } from './conflict.js';
import { FieldSet } from './fieldpath.js';
import type { VersionedSet } from './managed-fields.js';
import { ensureNamedFieldsAreMembers, mergeTyped, removeItems } from './merge-values.js';
import { fieldSetOf } from './typed.js';
import { compareStrings, valuesEqual } from './values.js';

export type ManagerSets = Map<string, VersionedSet>;

export interface UpdaterOptions {
  readonly type: TypeRef;
  /** Fields no manager may own through this endpoint (the strategy's reset fields, e.g. status). */
  readonly ignoredFields?: FieldSet | undefined;
}

function filtered(set: FieldSet, ignored: FieldSet | undefined): FieldSet {
  return ignored ? set.recursiveDifference(ignored) : set;
}

/**
 * Updater.update: other managers lose fields that changed (a conflict unless forced) or were
 * removed; managers left with nothing are dropped. `managers` is modified in place.
 */
function takeChanges(
  oldObj: JsonValue | undefined,
  newObj: JsonValue | undefined,
  managers: ManagerSets,
  workflow: string,
  force: boolean,
  opts: UpdaterOptions,
): Comparison {
  const raw = compareTyped(oldObj, newObj, opts.type);
  const cmp: Comparison = {
    added: filtered(raw.added, opts.ignoredFields),
    modified: filtered(raw.modified, opts.ignoredFields),
    removed: filtered(raw.removed, opts.ignoredFields),
  };
  const changed = cmp.modified.union(cmp.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue;
    const c = vs.set.intersection(changed);
    if (!c.empty()) conflicts.set(manager, c);
  }
  if (!force && conflicts.size > 0) {
    const list: Conflict[] = [];
    for (const manager of [...conflicts.keys()].sort(compareStrings)) {
      for (const path of conflicts.get(manager)!.paths()) list.push({ manager, path });
    }
    throw new ApplyConflicts(list);
  }
  for (const [manager, c] of conflicts) {
    const vs = managers.get(manager)!;
    managers.set(manager, { ...vs, set: vs.set.difference(c) });
  }
  if (!cmp.removed.empty()) {
    for (const [manager, vs] of managers) {
      if (manager === workflow) continue;
      managers.set(manager, { ...vs, set: vs.set.difference(cmp.removed) });
    }
  }
  for (const [manager, vs] of managers) if (vs.set.empty()) managers.delete(manager);
  return cmp;
}

/**
 * Updater.Update: `manager` takes every field the write added or changed and loses the ones it
 * removed; nobody else keeps a field whose value changed under them.
 */
export function updateOwnership(
  oldObj: JsonValue | undefined,
  newObj: JsonValue,
  apiVersion: string,
  managers: ManagerSets,
  manager: string,
  opts: UpdaterOptions,
): void {
  const cmp = takeChanges(oldObj, newObj, managers, manager, true, opts);
  const previous = managers.get(manager)?.set ?? new FieldSet();
  const set = filtered(previous.difference(cmp.removed).union(cmp.modified).union(cmp.added), opts.ignoredFields);
  if (set.empty()) managers.delete(manager);
  else managers.set(manager, { set, apiVersion, applied: false });
}

export interface ApplyOutcome {
  /** The merged object, or undefined when it equals the live object. */
  readonly object: JsonValue | undefined;
}

/**
 * Updater.Apply: merge the configuration onto the live object, make the applier own exactly the
 * configuration's fields, prune what it owned before and no longer applies (unless someone else
 * owns it), then settle ownership of whatever changed, failing on conflicts unless forced.
 * `managers` is modified only when the apply succeeds.
 */
export function applyOwnership(
  live: JsonValue | undefined,
  config: JsonValue,
  apiVersion: string,
  managers: ManagerSets,
  manager: string,
  force: boolean,
  opts: UpdaterOptions,
): ApplyOutcome {
  const next: ManagerSets = new Map(managers);
  let merged: JsonValue = mergeTyped(live, config, opts.type) ?? {};
  const lastSet = next.get(manager);
  const set = filtered(fieldSetOf(config, opts.type), opts.ignoredFields);
  next.set(manager, { set, apiVersion, applied: true });
  merged = prune(merged, next, manager, lastSet?.set, opts.type);
  takeChanges(live, merged, next, manager, force, opts);
  managers.clear();
  for (const [k, v] of next) managers.set(k, v);
  return { object: live !== undefined && valuesEqual(live, merged) ? undefined : merged };
}

/**
 * prune: removes a field, list or map item iff the applier applied it last time, does not apply it
 * now, and no other manager owns it (addBackOwnedItems / addBackDanglingItems upstream).
 */
function prune(merged: JsonValue, managers: ManagerSets, applier: string, lastSet: FieldSet | undefined, type: TypeRef): JsonValue {
  if (!lastSet || lastSet.empty()) return merged;
  // Re-applying a superset of last time prunes nothing (every path of lastSet is still owned by
  // the applier); skipping the walk keeps the common "apply the same file again" case cheap.
  if (lastSet.difference(managers.get(applier)!.set).empty()) return merged;
  const named = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, type);
  let pruned = removeItems(merged, named(lastSet), type) ?? {};

  let owned = new FieldSet();
  for (const vs of managers.values()) owned = owned.union(vs.set);
  const mergedSet = named(fieldSetOf(merged, type));
  const prunedSet = named(fieldSetOf(pruned, type));
  pruned = removeItems(merged, mergedSet.difference(prunedSet.union(named(owned))), type) ?? {};

  const stillPruned = named(fieldSetOf(pruned, type));
  return removeItems(merged, mergedSet.difference(stillPruned).intersection(named(lastSet)), type) ?? {};
}
