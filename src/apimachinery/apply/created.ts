// The FieldsV1 an Update entry gets when a write creates an object (no old object, no managedFields
// to start from), built in one walk of the new object. It is what merge.ts's generic path computes
// as compareTyped({}, obj).added, filtered by the reset fields (recursively) and the strip set
// (members only), and written out by FieldSet.toFieldsV1 — without building the comparison, the
// intermediate sets and the trie. created.test.ts checks both paths agree byte for byte.
import type { JsonObject, JsonValue } from '../types.js';
import { DEDUCED, shapeFor, type ListAtom, type MapAtom, type TypeRef } from './atoms.js';
import { groupItems } from './compare.js';
import { comparePathElements, type FieldSet, type PathElement } from './fieldpath.js';
import { compareStrings } from './values.js';

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
// path survives the filters (the parent checked them). Entries come back in upstream's order.
function node(v: JsonValue | undefined, type: TypeRef, ignored: FieldSet | undefined, strip: FieldSet | undefined, member: boolean): JsonObject | undefined {
  // A scalar or null is a leaf whatever the type says (no shape of it has entries).
  if (v === null || typeof v !== 'object') return member ? {} : undefined;
  const atom = type.atom;
  const shape = shapeFor(atom, v);
  let entries: Entry[] | undefined;
  if (shape === 'list') {
    const list = atom.list!;
    if (!list.atomic && Array.isArray(v) && v.length > 0) entries = listEntries(list, v, ignored, strip);
  } else if (shape === 'map') {
    const map = atom.map!;
    if (!map.atomic && !Array.isArray(v)) return mapNode(map, v, ignored, strip, member);
  }
  if (entries === undefined || entries.length === 0) return member ? {} : undefined;
  const out: JsonObject = {};
  if (member) out['.'] = {};
  for (let i = 0; i < entries.length; i++) out[entries[i]![0]] = entries[i]![1];
  return out;
}

/** A declared field of a map type: its path element, its rank in upstream's order of `f:` elements, its type. */
interface Field {
  readonly pe: PathElement;
  readonly rank: number;
  readonly type: TypeRef;
}

interface Fields {
  readonly byName: ReadonlyMap<string, Field>;
  readonly byRank: readonly Field[];
}

// The declared fields of a map type, ranked by compareStrings of their names: entries of declared
// fields are put in order without comparing, and their path elements are made once.
const fieldsByMap = new WeakMap<MapAtom, Fields>();

function fieldsOf(map: MapAtom): Fields {
  let r = fieldsByMap.get(map);
  if (!r) {
    const byRank = [...map.fields.keys()].sort(compareStrings).map((n, i): Field => ({ pe: 'f:' + n, rank: i, type: map.fields.get(n)! }));
    r = { byName: new Map(byRank.map((f) => [f.pe.slice(2), f])), byRank };
    fieldsByMap.set(map, r);
  }
  return r;
}

// A granular map: its entries written straight into the node, declared fields by rank (no
// comparisons, no entry pairs); undeclared keys among them are sorted in with the declared ones.
function mapNode(map: MapAtom, m: Obj, ignored: FieldSet | undefined, strip: FieldSet | undefined, member: boolean): JsonObject | undefined {
  const fields = map.fields.size > 0 ? fieldsOf(map) : undefined;
  let slots: (JsonObject | undefined)[] | undefined;
  let others: Entry[] | undefined;
  for (const k in m) {
    const v = m[k];
    if (v === undefined) continue;
    const f = fields?.byName.get(k);
    const pe = f ? f.pe : 'f:' + k;
    if (ignored?.members.has(pe)) continue;
    const sub = node(v, f ? f.type : (map.elem ?? DEDUCED), ignored?.children.get(pe), strip?.children.get(pe), !strip?.members.has(pe));
    if (!sub) continue;
    if (f === undefined) (others ??= []).push([pe, sub]);
    else (slots ??= new Array<JsonObject | undefined>(fields!.byRank.length))[f.rank] = sub;
  }
  if (!slots && !others) return member ? {} : undefined;
  const out: JsonObject = {};
  if (member) out['.'] = {};
  if (!others) {
    const byRank = fields!.byRank;
    for (let i = 0; i < slots!.length; i++) if (slots![i]) out[byRank[i]!.pe] = slots![i]!;
    return out;
  }
  let entries = others;
  if (slots) {
    const declared: Entry[] = [];
    for (let i = 0; i < slots.length; i++) if (slots[i]) declared.push([fields!.byRank[i]!.pe, slots[i]!]);
    entries = declared.concat(others);
  }
  if (entries.length > 1) entries.sort(byElement);
  for (let i = 0; i < entries.length; i++) out[entries[i]![0]] = entries[i]![1];
  return out;
}

// compareListItems with nothing on the left: items are grouped by their path element (items that
// have none are skipped); a duplicated element is one leaf.
function listEntries(list: ListAtom, items: readonly JsonValue[], ignored: FieldSet | undefined, strip: FieldSet | undefined): Entry[] {
  const out: Entry[] = [];
  for (const [pe, g] of groupItems(list, items)) {
    if (ignored?.members.has(pe)) continue;
    const member = !strip?.members.has(pe);
    const sub = g.length === 1 ? node(g[0], list.elem, ignored?.children.get(pe), strip?.children.get(pe), member) : member ? {} : undefined;
    if (sub) out.push([pe, sub]);
  }
  return out.length > 1 ? out.sort(byElement) : out;
}
