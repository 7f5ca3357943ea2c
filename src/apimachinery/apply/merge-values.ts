// Value-level operations of structured-merge-diff's typed package that apply needs:
// Merge (typed/merge.go, rule "keep RHS"), RemoveItems (typed/remove.go) and
// Set.EnsureNamedFieldsAreMembers (fieldpath/set.go).
import type { JsonObject, JsonValue } from '../types.js';
import { DEDUCED, shapeFor, type ListAtom, type MapAtom, type TypeRef } from './atoms.js';
import { FieldSet, decodePathElement, fieldElement, type PathElement } from './fieldpath.js';
import { listItemElement } from './typed.js';

type Obj = { readonly [k: string]: JsonValue | undefined };

function asMap(v: JsonValue | undefined): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

function isEmptyMap(m: Obj | undefined): boolean {
  if (!m) return true;
  for (const k in m) if (m[k] !== undefined) return false;
  return true;
}

/**
 * Merges a partial object (the applied configuration) onto a full one. Nothing is removed: leaves
 * and atomic containers take the configuration's value; struct fields and map keys merge one by
 * one; list-map and set items merge by identity, ordered as upstream does (the configuration's
 * order for the items it names, live-only items kept in place). An explicit null in the
 * configuration clears a leaf: the key is left out rather than stored as null, which is what the
 * typed round trip does to built-in objects upstream.
 */
export function mergeTyped(lhs: JsonValue | undefined, rhs: JsonValue | undefined, type: TypeRef): JsonValue | undefined {
  if (rhs === undefined) return lhs;
  const atom = type.atom;
  const shape = shapeFor(atom, rhs);
  if (shape === 'list') {
    const l = Array.isArray(lhs) ? lhs : undefined;
    const r = Array.isArray(rhs) ? rhs : undefined;
    if (atom.list!.atomic || (!l?.length && !r?.length)) return rhs;
    const out = mergeListItems(atom.list!, l ?? [], r ?? []);
    return out.length ? out : undefined;
  }
  if (shape === 'map') {
    const l = asMap(lhs);
    const r = asMap(rhs);
    if (atom.map!.atomic || (isEmptyMap(l) && isEmptyMap(r))) return rhs;
    const out = mergeMapEntries(atom.map!, l, r);
    return isEmptyMap(out) ? undefined : out;
  }
  return rhs;
}

function mergeMapEntries(map: MapAtom, l: Obj | undefined, r: Obj | undefined): JsonObject {
  const out: JsonObject = {};
  const put = (key: string): void => {
    const v = mergeTyped(l?.[key], r?.[key], map.fields.get(key) ?? map.elem ?? DEDUCED);
    if (v !== undefined && v !== null) out[key] = v;
  };
  if (l) for (const k in l) if (l[k] !== undefined) put(k);
  if (r) for (const k in r) if (r[k] !== undefined && (l === undefined || l[k] === undefined)) put(k);
  return out;
}

interface Indexed {
  readonly pes: PathElement[];
  /** First item per identity; null marks an identity the live list holds more than once. */
  readonly observed: Map<PathElement, JsonValue>;
  readonly items: JsonValue[];
}

function indexItems(list: ListAtom, items: readonly JsonValue[]): Indexed {
  const pes: PathElement[] = [];
  const kept: JsonValue[] = [];
  const observed = new Map<PathElement, JsonValue>();
  for (const item of items) {
    let pe: PathElement;
    try {
      pe = listItemElement(list, item);
    } catch {
      continue; // the configuration was validated; a bad live item is dropped as upstream does
    }
    // Duplicated live items are not merged with the configuration (upstream makes them null).
    observed.set(pe, observed.has(pe) ? null : item);
    pes.push(pe);
    kept.push(item);
  }
  return { pes, observed, items: kept };
}

// visitListItems in typed/merge.go, step for step: shared items follow the configuration's
// order, live-only items stay where they were relative to them.
function mergeListItems(list: ListAtom, lhs: readonly JsonValue[], rhs: readonly JsonValue[]): JsonValue[] {
  const L = indexItems(list, lhs);
  const R = indexItems(list, rhs);
  const out: JsonValue[] = [];
  const shared = R.pes.filter((pe) => L.observed.has(pe));
  let sharedAt = 0;
  let nextShared: PathElement | undefined = shared[sharedAt++];
  const merged = new Set<PathElement>();
  const push = (v: JsonValue | undefined): void => {
    if (v !== undefined) out.push(v);
  };
  // A null live value marks a duplicated identity: the configuration's item replaces it.
  const item = (l: JsonValue | undefined, r: JsonValue | undefined): JsonValue | undefined =>
    mergeTyped(l === null && r !== undefined ? undefined : l, r, list.elem);
  let li = 0;
  let ri = 0;
  while (li < L.pes.length || ri < R.pes.length) {
    if (li < L.pes.length && ri < R.pes.length) {
      const pe = L.pes[li]!;
      if (pe === R.pes[ri]) {
        merged.add(pe);
        push(item(L.observed.get(pe), R.observed.get(pe)));
        li++;
        ri++;
        nextShared = shared[sharedAt++];
        continue;
      }
      if (R.observed.has(pe) && nextShared !== undefined && nextShared !== pe) {
        li++; // a shared item, but not the one due in this round
        continue;
      }
    }
    if (li < L.pes.length) {
      const pe = L.pes[li]!;
      if (!R.observed.has(pe)) {
        push(mergeTyped(L.items[li], undefined, list.elem));
        li++;
        continue;
      } else if (merged.has(pe)) li++;
    }
    if (ri < R.pes.length) {
      const pe = R.pes[ri]!;
      merged.add(pe);
      push(item(L.observed.get(pe), R.observed.get(pe)));
      ri++;
      if (nextShared !== undefined && nextShared === pe) nextShared = shared[sharedAt++];
    }
  }
  return out;
}

/**
 * RemoveItems: drops every field and list item whose path is a member of `toRemove`, descending
 * where `toRemove` has paths below. A map or list left empty by the removal is dropped from its
 * parent (upstream leaves a null that the typed round trip then drops). Atomic containers cannot be
 * entered, so a path below one removes the whole container.
 */
export function removeItems(v: JsonValue | undefined, toRemove: FieldSet, type: TypeRef): JsonValue | undefined {
  if (v === undefined || toRemove.empty()) return v;
  const atom = type.atom;
  const shape = shapeFor(atom, v);
  if (shape === 'list') {
    if (!Array.isArray(v) || v.length === 0) return v;
    if (atom.list!.atomic) return undefined;
    const out: JsonValue[] = [];
    for (const item of v) {
      let pe: PathElement;
      try {
        pe = listItemElement(atom.list!, item);
      } catch {
        out.push(item);
        continue;
      }
      if (toRemove.members.has(pe)) continue;
      const below = toRemove.children.get(pe);
      const kept = below ? removeItems(item, below, atom.list!.elem) : item;
      out.push(kept === undefined ? {} : kept);
    }
    return out.length ? out : undefined;
  }
  if (shape === 'map') {
    const m = asMap(v);
    if (!m || isEmptyMap(m)) return v;
    if (atom.map!.atomic) return undefined;
    const out: JsonObject = {};
    for (const k in m) {
      const val = m[k];
      if (val === undefined) continue;
      const pe = fieldElement(k);
      if (toRemove.members.has(pe)) continue;
      const below = toRemove.children.get(pe);
      const kept = below ? removeItems(val, below, atom.map!.fields.get(k) ?? atom.map!.elem ?? DEDUCED) : val;
      if (kept !== undefined) out[k] = kept;
    }
    return isEmptyMap(out) ? undefined : out;
  }
  return v;
}

/**
 * EnsureNamedFieldsAreMembers: a declared struct field that has paths below it becomes a member
 * too, so that pruning can remove the whole field once nothing under it is owned any more.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: TypeRef | undefined): FieldSet {
  const atom = type?.atom;
  const out = new FieldSet();
  for (const m of set.members) out.members.add(m);
  for (const [pe, child] of set.children) {
    let childType: TypeRef | undefined;
    const d = pe[0] === 'f' ? decodePathElement(pe) : undefined;
    if (d?.kind === 'field' && atom?.map) {
      const declared = atom.map.fields.get(d.name);
      if (declared) out.members.add(pe);
      childType = declared ?? atom.map.elem;
    } else if (pe[0] === 'k' && atom?.list) childType = atom.list.elem;
    out.children.set(pe, ensureNamedFieldsAreMembers(child, childType));
  }
  return out;
}
