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
    if (!map.atomic && !Array.isArray(v)) entries = mapEntries(map, v, ignored, strip);
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

// The declared fields of a map type by name, ranked by compareStrings of the names: entries of
// declared fields are put in order without comparing, and their path elements are made once.
const fieldsByMap = new WeakMap<MapAtom, Map<string, Field>>();

function fieldsOf(map: MapAtom): Map<string, Field> {
  let r = fieldsByMap.get(map);
  if (!r) {
    r = new Map([...map.fields.keys()].sort(compareStrings).map((n, i): [string, Field] => [n, { pe: 'f:' + n, rank: i, type: map.fields.get(n)! }]));
    fieldsByMap.set(map, r);
  }
  return r;
}

function mapEntries(map: MapAtom, m: Obj, ignored: FieldSet | undefined, strip: FieldSet | undefined): Entry[] | undefined {
  const fields = map.fields.size > 0 ? fieldsOf(map) : undefined;
  let slots: (Entry | undefined)[] | undefined;
  let others: Entry[] | undefined;
  for (const k in m) {
    const v = m[k];
    if (v === undefined) continue;
    const f = fields?.get(k);
    const pe = f ? f.pe : 'f:' + k;
    if (ignored?.members.has(pe)) continue;
    const sub = node(v, f ? f.type : (map.elem ?? DEDUCED), ignored?.children.get(pe), strip?.children.get(pe), !strip?.members.has(pe));
    if (!sub) continue;
    if (f === undefined) (others ??= []).push([pe, sub]);
    else (slots ??= new Array<Entry | undefined>(fields!.size))[f.rank] = [pe, sub];
  }
  if (!slots) return others && others.length > 1 ? others.sort(byElement) : others;
  const out: Entry[] = [];
  for (let i = 0; i < slots.length; i++) if (slots[i]) out.push(slots[i]!);
  // Undeclared keys among declared ones (a schema that allows both): compare them all.
  return others ? out.concat(others).sort(byElement) : out;
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
