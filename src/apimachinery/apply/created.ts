// The FieldsV1 an Update entry gets when a write creates an object (no old object, no managedFields
// to start from), built in one walk of the new object. It is what merge.ts's generic path computes
// as compareTyped({}, obj).added, filtered by the reset fields (recursively) and the strip set
// (members only), and written out by FieldSet.toFieldsV1 — without building the comparison, the
// intermediate sets and the trie. created.test.ts checks both paths agree byte for byte.
import type { JsonObject, JsonValue } from '../types.js';
import { DEDUCED, shapeFor, type ListAtom, type MapAtom, type TypeRef } from './atoms.js';
import { comparePathElements, type FieldSet, type PathElement } from './fieldpath.js';
import { listItemElement } from './typed.js';

type Obj = { readonly [k: string]: JsonValue | undefined };
type Entry = readonly [PathElement, JsonObject];

/**
 * The FieldsV1 of every field `obj` sets, as a create records them for its manager; undefined when
 * nothing is left after `ignored` (removed with everything below) and `strip` (removed as members
 * only). The root itself is never a member.
 */
export function createdFieldsV1(obj: JsonValue, type: TypeRef, ignored: FieldSet | undefined, strip: FieldSet | undefined): JsonObject | undefined {
  return node(obj, type, ignored, strip, false);
}

const byElement = (a: Entry, b: Entry): number => comparePathElements(a[0], b[0]);

// compareNode(undefined, v) of compare.ts: a leaf (scalar, atomic or empty container) is one path;
// a granular container is its own path (`.`) plus its entries'. `member` says whether this node's
// path survives the filters (the parent checked them).
function node(v: JsonValue | undefined, type: TypeRef, ignored: FieldSet | undefined, strip: FieldSet | undefined, member: boolean): JsonObject | undefined {
  const atom = type.atom;
  const shape = shapeFor(atom, v);
  let entries: Entry[] | undefined;
  if (shape === 'list') {
    const list = atom.list!;
    if (!list.atomic && Array.isArray(v) && v.length > 0) entries = listEntries(list, v, ignored, strip);
  } else if (shape === 'map') {
    const map = atom.map!;
    if (!map.atomic && v !== null && typeof v === 'object' && !Array.isArray(v)) entries = mapEntries(map, v, ignored, strip);
  }
  if (entries === undefined || entries.length === 0) return member ? {} : undefined;
  if (entries.length > 1) entries.sort(byElement);
  const out: JsonObject = {};
  if (member) out['.'] = {};
  for (const [pe, sub] of entries) out[pe] = sub;
  return out;
}

function mapEntries(map: MapAtom, m: Obj, ignored: FieldSet | undefined, strip: FieldSet | undefined): Entry[] | undefined {
  let out: Entry[] | undefined;
  for (const k in m) {
    const v = m[k];
    if (v === undefined) continue;
    const pe = 'f:' + k;
    if (ignored?.members.has(pe)) continue;
    const sub = node(v, map.fields.get(k) ?? map.elem ?? DEDUCED, ignored?.children.get(pe), strip?.children.get(pe), !strip?.members.has(pe));
    if (sub) (out ??= []).push([pe, sub]);
  }
  // An empty map is a leaf, a map whose entries were all filtered out a path without children:
  // both come out as `{}` (or nothing when the path itself was filtered).
  return out;
}

// compareListItems with nothing on the left: items are grouped by their path element (items that
// have none are skipped); a duplicated element is one leaf.
function listEntries(list: ListAtom, items: readonly JsonValue[], ignored: FieldSet | undefined, strip: FieldSet | undefined): Entry[] {
  const groups = new Map<PathElement, JsonValue[]>();
  for (const item of items) {
    let pe: PathElement;
    try {
      pe = listItemElement(list, item);
    } catch {
      continue;
    }
    const g = groups.get(pe);
    if (g) g.push(item);
    else groups.set(pe, [item]);
  }
  const out: Entry[] = [];
  for (const [pe, g] of groups) {
    if (ignored?.members.has(pe)) continue;
    const member = !strip?.members.has(pe);
    const sub = g.length === 1 ? node(g[0], list.elem, ignored?.children.get(pe), strip?.children.get(pe), member) : member ? {} : undefined;
    if (sub) out.push([pe, sub]);
  }
  return out;
}
