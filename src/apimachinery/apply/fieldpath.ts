// Sets of field paths and their FieldsV1 encoding, after sigs.k8s.io/structured-merge-diff/fieldpath.
//
// A path element is held as its FieldsV1 key, which is canonical: `f:<name>` (a struct field or
// map key), `k:<json>` (an item of a list-map, by its key fields sorted by name), `v:<json>` (an
// item of a set), `i:<index>` (an item of a plain list). Equal elements have equal strings, so sets
// are plain Maps and Sets of strings; the upstream order (fields < keys < values < indices) is
// only needed when a set is written out or iterated.
import { goAtoi, NumError } from '../../golang/strconv.js';
import type { JsonObject, JsonValue } from '../types.js';
import { compareStrings, compareValues, goJson, valueToString } from './values.js';
import { parseJSONExact } from '../../golang/json-int64.js';

/** One step of a field path, as its FieldsV1 key (`f:spec`, `k:{"uid":"…"}`, `v:"a"`, `i:0`). */
export type PathElement = string;
/** A field path from the root of an object. */
export type FieldPath = readonly PathElement[];

export function fieldElement(name: string): PathElement {
  return 'f:' + name;
}

/** A list-map item, identified by its key fields (upstream sorts them by name). */
export function keyElement(fields: Readonly<Record<string, JsonValue>>): PathElement {
  const names = Object.keys(fields).sort(compareStrings);
  return `k:{${names.map((n) => `${goJson(n)}:${goJson(fields[n]!)}`).join(',')}}`;
}

export function valueElement(v: JsonValue): PathElement {
  return 'v:' + goJson(v);
}

export function indexElement(i: number): PathElement {
  return 'i:' + String(i);
}

export type DecodedPathElement =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'key'; readonly fields: readonly (readonly [string, JsonValue])[] }
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'index'; readonly index: number };

const decodedCache = new Map<string, DecodedPathElement>();

/** The structure behind a canonical path element (elements made by this module never fail). */
export function decodePathElement(pe: PathElement): DecodedPathElement {
  let d = decodedCache.get(pe);
  if (d) return d;
  const body = pe.slice(2);
  switch (pe[0]) {
    case 'f':
      d = { kind: 'field', name: body };
      break;
    case 'k': {
      const obj = parseJSONExact(body) as JsonObject;
      d = { kind: 'key', fields: Object.keys(obj).map((k) => [k, obj[k] as JsonValue] as const) };
      break;
    }
    case 'v':
      d = { kind: 'value', value: parseJSONExact(body) as JsonValue };
      break;
    default:
      d = { kind: 'index', index: Number(body) };
  }
  if (decodedCache.size > 10_000) decodedCache.clear();
  decodedCache.set(pe, d);
  return d;
}

const typeRank: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** PathElement.Compare: fields, then keys, then values, then indices; each in its own order. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  const ta = typeRank[a[0]!]!;
  const tb = typeRank[b[0]!]!;
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (ta === 0) return compareStrings(a, b);
  const da = decodePathElement(a);
  const db = decodePathElement(b);
  if (da.kind === 'key' && db.kind === 'key') {
    for (let i = 0; i < da.fields.length && i < db.fields.length; i++) {
      const c = compareStrings(da.fields[i]![0], db.fields[i]![0]) || compareValues(da.fields[i]![1], db.fields[i]![1]);
      if (c !== 0) return c;
    }
    return Math.sign(da.fields.length - db.fields.length);
  }
  if (da.kind === 'value' && db.kind === 'value') return compareValues(da.value, db.value);
  if (da.kind === 'index' && db.kind === 'index') return Math.sign(da.index - db.index);
  return 0;
}

/** PathElement.String: `.name`, `[uid="x"]`, `[="a"]`, `[3]`, as in conflict messages. */
export function pathElementToString(pe: PathElement): string {
  const d = decodePathElement(pe);
  switch (d.kind) {
    case 'field':
      return '.' + d.name;
    case 'key':
      return `[${d.fields.map(([n, v]) => `${n}=${valueToString(v)}`).join(',')}]`;
    case 'value':
      return `[=${valueToString(d.value)}]`;
    case 'index':
      return `[${d.index}]`;
  }
}

/** Path.String: e.g. `.metadata.ownerReferences[uid="1"].name`. */
export function pathToString(path: FieldPath): string {
  let s = '';
  for (const pe of path) s += pathElementToString(pe);
  return s;
}

/** A readable step for makePath: a field name, an index, a list-map key, or a set value. */
export type PathPart = string | number | { readonly key: Readonly<Record<string, JsonValue>> } | { readonly value: JsonValue };

/** e.g. `makePath('metadata', 'ownerReferences', { key: { uid: 'x' } }, 'name')`. */
export function makePath(...parts: PathPart[]): FieldPath {
  return parts.map((p) => {
    if (typeof p === 'string') return fieldElement(p);
    if (typeof p === 'number') return indexElement(p);
    return 'key' in p ? keyElement(p.key) : valueElement(p.value);
  });
}

/**
 * A set of field paths (fieldpath.Set): `members` are paths that end here, `children` hold the
 * paths that go deeper. A path can be both a member and a prefix of other members, which FieldsV1
 * writes as `".": {}` beside the children. Operations never mutate their operands; only `insert`
 * mutates `this`, for building.
 */
export class FieldSet {
  readonly members = new Set<PathElement>();
  readonly children = new Map<PathElement, FieldSet>();

  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: FieldPath): this {
    if (path.length === 0) return this;
    let s: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) s = s.descend(path[i]!);
    s.members.add(path[path.length - 1]!);
    return this;
  }

  /** The child set under `pe`, created if missing (for building). */
  descend(pe: PathElement): FieldSet {
    let c = this.children.get(pe);
    if (!c) {
      c = new FieldSet();
      this.children.set(pe, c);
    }
    return c;
  }

  has(path: FieldPath): boolean {
    if (path.length === 0) return false;
    let s: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && s; i++) s = s.children.get(path[i]!);
    return s !== undefined && s.members.has(path[path.length - 1]!);
  }

  /** The paths below `pe`, without the `pe` prefix (an empty set if none). */
  withPrefix(pe: PathElement): FieldSet {
    return this.children.get(pe) ?? EMPTY;
  }

  empty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  /** Number of paths in the set. */
  size(): number {
    let n = this.members.size;
    for (const c of this.children.values()) n += c.size();
    return n;
  }

  union(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    if (this.empty()) return other;
    const out = new FieldSet();
    for (const m of this.members) out.members.add(m);
    for (const m of other.members) out.members.add(m);
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      out.children.set(pe, o ? c.union(o) : c);
    }
    for (const [pe, o] of other.children) if (!this.children.has(pe)) out.children.set(pe, o);
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (other.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.empty()) out.children.set(pe, i);
    }
    return out;
  }

  /** Paths of this set not in `other`; members and children are compared separately, as upstream. */
  difference(other: FieldSet): FieldSet {
    if (other.empty()) return this;
    const out = new FieldSet();
    for (const m of this.members) if (!other.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (!o) {
        out.children.set(pe, c);
        continue;
      }
      const d = c.difference(o);
      if (!d.empty()) out.children.set(pe, d);
    }
    return out;
  }

  /** Like difference, but a member of `other` also removes every path below it. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (!other.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      if (other.members.has(pe)) continue;
      const o = other.children.get(pe);
      if (!o) {
        out.children.set(pe, c);
        continue;
      }
      const d = c.recursiveDifference(o);
      if (!d.empty()) out.children.set(pe, d);
    }
    return out;
  }

  /** The paths that are not a prefix of another path in the set. */
  leaves(): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) {
      const c = this.children.get(m);
      if (!c || c.empty()) out.members.add(m);
    }
    for (const [pe, c] of this.children) {
      const l = c.leaves();
      if (!l.empty()) out.children.set(pe, l);
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    if (this === other) return true;
    if (this.members.size !== other.members.size) return false;
    for (const m of this.members) if (!other.members.has(m)) return false;
    const mine = [...this.children].filter(([, c]) => !c.empty());
    const theirs = [...other.children].filter(([, c]) => !c.empty());
    if (mine.length !== theirs.length) return false;
    for (const [pe, c] of mine) {
      const o = other.children.get(pe);
      if (!o || !c.equals(o)) return false;
    }
    return true;
  }

  /** Every path, in upstream's order: this level's members first, then each child's paths. */
  *paths(prefix: FieldPath = []): Generator<FieldPath> {
    for (const m of [...this.members].sort(comparePathElements)) yield [...prefix, m];
    for (const pe of [...this.children.keys()].sort(comparePathElements)) yield* this.children.get(pe)!.paths([...prefix, pe]);
  }

  /** Set.String: one printed path per line. */
  toString(): string {
    return [...this.paths()].map(pathToString).join('\n');
  }

  /** The FieldsV1 trie, keys in upstream's order (so the JSON is byte-identical to kube's). */
  toFieldsV1(): JsonObject {
    return this.emit(false) ?? {};
  }

  // Bottom-up, so that each node is visited once: undefined for a subtree without paths.
  private emit(includeSelf: boolean): JsonObject | undefined {
    let below: Map<PathElement, JsonObject> | undefined;
    for (const [pe, c] of this.children) {
      const sub = c.emit(this.members.has(pe));
      if (sub) (below ??= new Map()).set(pe, sub);
    }
    if (this.members.size === 0 && !below) return undefined;
    const keys: PathElement[] = [...this.members];
    if (below) for (const pe of below.keys()) if (!this.members.has(pe)) keys.push(pe);
    if (keys.length > 1) keys.sort(comparePathElements);
    const out: JsonObject = {};
    if (includeSelf) out['.'] = {};
    for (const pe of keys) out[pe] = below?.get(pe) ?? {};
    return out;
  }

  /** Reads a FieldsV1 trie; throws FieldsV1Error on malformed keys, as upstream's FromJSON. */
  static fromFieldsV1(fields: JsonValue | undefined): FieldSet {
    if (fields === undefined || fields === null) return new FieldSet();
    if (typeof fields !== 'object' || Array.isArray(fields)) throw new FieldsV1Error(`ReadMapCB: expect { or n, but found ${firstChar(fields)}`);
    // Stored objects are decoded on every write; sets are never mutated once built, so the same
    // FieldsV1 object can share its set.
    let set = decoded.get(fields);
    if (!set) {
      set = readFieldsV1(fields).children ?? new FieldSet();
      decoded.set(fields, set);
    }
    return set;
  }
}

const EMPTY = new FieldSet();
const decoded = new WeakMap<JsonObject, FieldSet>();

function firstChar(v: JsonValue): string {
  return JSON.stringify(v).slice(0, 1);
}

/** A FieldsV1 document that cannot be read as a set of paths. */
export class FieldsV1Error extends Error {
  override readonly name = 'FieldsV1Error';
}

// readIterV1: a node's value is an object whose "." key marks the node itself as a member; an
// empty (or null) object is a member with nothing below it.
function readFieldsV1(node: JsonObject): { children: FieldSet | undefined; isMember: boolean } {
  let children: FieldSet | undefined;
  let isMember = false;
  for (const key of Object.keys(node)) {
    const v = node[key];
    if (v === undefined) continue;
    if (key === '.') {
      isMember = true;
      continue;
    }
    const pe = parseFieldsV1Key(key);
    if (pe === undefined) continue; // unknown element types are skipped, for forward compatibility
    if (v !== null && (typeof v !== 'object' || Array.isArray(v))) {
      throw new FieldsV1Error(`ReadMapCB: expect { or n, but found ${firstChar(v)}`);
    }
    const child = v === null ? { children: undefined, isMember: true } : readFieldsV1(v);
    if (child.isMember) (children ??= new FieldSet()).members.add(pe);
    if (child.children) {
      const existing = (children ??= new FieldSet()).children.get(pe);
      children.children.set(pe, existing ? existing.union(child.children) : child.children);
    }
  }
  if (!children) isMember = true;
  return { children, isMember };
}

/**
 * DeserializePathElement: the canonical element for a FieldsV1 key, undefined for an unknown type.
 * Messages follow upstream (`missing colon: …`, `key must be 2 characters long:`, json-iterator's
 * `ReadObjectCB: …` for a bad key object), prefixed as readIterV1 reports them.
 */
export function parseFieldsV1Key(key: string): PathElement | undefined {
  const fail = (msg: string): never => {
    throw new FieldsV1Error(`parsing key as path element: ${msg}`);
  };
  if (key.length < 2) fail('key must be 2 characters long:');
  if (key[1] !== ':') fail(`missing colon: ${key}`);
  const body = key.slice(2);
  switch (key[0]) {
    case 'f':
      return key;
    case 'v': {
      const v = parseJson(body);
      if (v === undefined) fail(`ReadAny: unexpected input or trailing data: ${body}`);
      return valueElement(v as JsonValue);
    }
    case 'k': {
      const v = parseJson(body);
      if (v === undefined || v === null || typeof v !== 'object' || Array.isArray(v))
        return fail(`ReadObjectCB: expect { or n, but found ${body.slice(0, 1) || 'EOF'}: ${body}`);
      return keyElement(v as Record<string, JsonValue>);
    }
    case 'i': {
      const i = goAtoi(body);
      if (i instanceof NumError) return fail(i.message);
      return indexElement(Number(i));
    }
    default:
      return undefined;
  }
}

function parseJson(s: string): JsonValue | undefined {
  try {
    return parseJSONExact(s) as JsonValue;
  } catch {
    return undefined;
  }
}
