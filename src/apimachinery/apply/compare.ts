// TypedValue.Compare (structured-merge-diff typed/compare.go): which fields a write added,
// modified or removed. Leaves (scalars, atomic lists and maps, empty containers) compare by value;
// granular containers that appear or disappear are recorded too, which is why an Update entry
// owns `.` of a map it created.
import type { JsonValue } from '../types.js';
import { DEDUCED, shapeFor, type ListAtom, type MapAtom, type TypeRef } from './atoms.js';
import { FieldSet, fieldElement, type PathElement } from './fieldpath.js';
import { listItemElement } from './typed.js';
import { valuesEqual } from './values.js';

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

export function compareTyped(lhs: JsonValue | undefined, rhs: JsonValue | undefined, type: TypeRef): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  compareNode(lhs, rhs, type, [], c);
  return c;
}

export function isSame(c: Comparison): boolean {
  return c.added.empty() && c.modified.empty() && c.removed.empty();
}

type Shape = 'scalar' | 'list' | 'map' | undefined;

function compareNode(l: JsonValue | undefined, r: JsonValue | undefined, type: TypeRef, path: PathElement[], c: Comparison): void {
  const atom = type.atom;
  const sl = shapeFor(atom, l);
  const sr = shapeFor(atom, r);
  let leaf: boolean;
  if (r === undefined) leaf = handle(sl, l, r, type, path, c);
  else if (l === undefined || sl === sr) leaf = handle(sr, l, r, type, path, c);
  else {
    // Different shapes on each side: walk both, as upstream does, so that what only one side
    // holds is reported.
    handle(sl, l, r, type, path, c);
    leaf = handle(sr, l, r, type, path, c);
  }
  if (!leaf) {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  }
}

function doLeaf(l: JsonValue | undefined, r: JsonValue | undefined, path: PathElement[], c: Comparison): true {
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
  else if (!valuesEqual(l, r)) c.modified.insert(path);
  return true;
}

/** Returns whether the node was a leaf. */
function handle(shape: Shape, l: JsonValue | undefined, r: JsonValue | undefined, type: TypeRef, path: PathElement[], c: Comparison): boolean {
  const atom = type.atom;
  if (shape === 'list') {
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(r) ? r : undefined;
    if (atom.list!.atomic || (!ll?.length && !rl?.length)) return doLeaf(l, r, path, c);
    compareListItems(atom.list!, ll ?? [], rl ?? [], path, c);
    return false;
  }
  if (shape === 'map') {
    const lm = asMap(l);
    const rm = asMap(r);
    if (atom.map!.atomic || (isEmptyMap(lm) && isEmptyMap(rm))) return doLeaf(l, r, path, c);
    compareMapEntries(atom.map!, lm, rm, path, c);
    return false;
  }
  return doLeaf(l, r, path, c);
}

type Obj = { readonly [k: string]: JsonValue | undefined };

function asMap(v: JsonValue | undefined): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
}

function isEmptyMap(m: Obj | undefined): boolean {
  if (!m) return true;
  for (const k in m) if (m[k] !== undefined) return false;
  return true;
}

function compareMapEntries(map: MapAtom, l: Obj | undefined, r: Obj | undefined, path: PathElement[], c: Comparison): void {
  const visit = (key: string): void => {
    path.push(fieldElement(key));
    // Undeclared fields are read as deduced values, as in typed.ts.
    compareNode(l?.[key], r?.[key], map.fields.get(key) ?? map.elem ?? DEDUCED, path, c);
    path.pop();
  };
  if (l) for (const k in l) if (l[k] !== undefined) visit(k);
  if (r) for (const k in r) if (r[k] !== undefined && (l === undefined || l[k] === undefined)) visit(k);
}

/**
 * A list's items by their path element, in order of first appearance (also appended to `order`,
 * unless already in `seenOrder`); items without one are skipped. Items sharing an element are a
 * duplicate, which callers treat as one leaf.
 */
export function groupItems(list: ListAtom, items: readonly JsonValue[], order?: PathElement[], seenOrder?: Set<PathElement>): Map<PathElement, JsonValue[]> {
  const groups = new Map<PathElement, JsonValue[]>();
  for (const item of items) {
    let pe: PathElement;
    try {
      pe = listItemElement(list, item);
    } catch {
      continue; // validation reports these; comparison skips them as upstream does
    }
    const g = groups.get(pe);
    if (g) g.push(item);
    else {
      groups.set(pe, [item]);
      if (order && !seenOrder?.has(pe)) order.push(pe);
    }
  }
  return groups;
}

function compareListItems(list: ListAtom, l: readonly JsonValue[], r: readonly JsonValue[], path: PathElement[], c: Comparison): void {
  const order: PathElement[] = [];
  const lGroups = groupItems(list, l, order, undefined);
  const rGroups = groupItems(list, r, order, new Set(lGroups.keys()));
  for (const pe of order) {
    const lg = lGroups.get(pe) ?? [];
    const rg = rGroups.get(pe) ?? [];
    path.push(pe);
    if (lg.length <= 1 && rg.length <= 1) compareNode(lg[0], rg[0], list.elem, path, c);
    else if (lg.length >= 2 && rg.length >= 2) {
      // Duplicates on both sides: the whole group is one value.
      if (lg.length !== rg.length || lg.some((v, i) => !valuesEqual(v, rg[i]))) c.modified.insert(path);
    } else if (lg.length >= 2) {
      if (rg.length) compareNode(undefined, rg[0], list.elem, path, c);
      c.removed.insert(path);
    } else {
      if (lg.length) compareNode(lg[0], undefined, list.elem, path, c);
      c.added.insert(path);
    }
    path.pop();
  }
}
