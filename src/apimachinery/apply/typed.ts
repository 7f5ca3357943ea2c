// Values read through a schema, after structured-merge-diff's typed package: which fields an object
// sets (ToFieldSet), how list items are identified (listItemToPathElement), and validation of the
// shape, unknown fields and list uniqueness (validate.go).
import type { Definitions, OpenAPISchema } from '../schema.js';
import type { JsonObject, JsonValue } from '../types.js';
import { DEDUCED, shapeFor, typeOf, type ListAtom, type MapAtom, type TypeRef } from './atoms.js';
import { FieldSet, fieldElement, keyElement, pathElementToString, valueElement, type FieldPath, type PathElement } from './fieldpath.js';
import { goJson } from './values.js';

/** One problem found walking a value against its schema (typed.ValidationError). */
export interface TypedIssue {
  /** Printed path, e.g. `.spec.ports[port=80,protocol="TCP"]`; empty at the root. */
  readonly path: string;
  readonly message: string;
}

/** ValidationErrors as an Error; the message has upstream's layout. */
export class TypedError extends Error {
  override readonly name = 'TypedError';
  constructor(readonly issues: readonly TypedIssue[]) {
    super(formatIssues(issues));
  }
}

function formatIssues(issues: readonly TypedIssue[]): string {
  const one = (i: TypedIssue): string => (i.path ? `${i.path}: ${i.message}` : i.message);
  if (issues.length === 1) return one(issues[0]!);
  return ['errors:', ...issues.map((i) => '  ' + one(i))].join('\n');
}

/**
 * listItemToPathElement: a list-map item is named by its key fields (a missing key field takes
 * its schema default, or is left out), a set item by its value. Throws the message upstream gives.
 */
export function listItemElement(list: ListAtom, item: JsonValue | undefined): PathElement {
  if (list.atomic) throw new Error('invalid indexing of non-associative list');
  if (list.keys.length > 0) {
    if (item === null || item === undefined) throw new Error('associative list with keys may not have a null element');
    if (typeof item !== 'object' || Array.isArray(item)) throw new Error('associative list with keys may not have non-map elements');
    // One key field (the common case): keyElement's text without the key object and the sort.
    if (list.keys.length === 1 && list.keys[0] !== '__proto__') {
      const name = list.keys[0]!;
      const v = keyFieldValue(list, item, name);
      if (v === undefined) throw omitsAllKeys(list);
      return `k:{${goJson(name)}:${goJson(v)}}`;
    }
    const key: Record<string, JsonValue> = {};
    let found = 0;
    for (const name of list.keys) {
      const v = keyFieldValue(list, item, name);
      if (v !== undefined) {
        key[name] = v;
        found++;
      }
    }
    if (found === 0) throw omitsAllKeys(list);
    return keyElement(key);
  }
  if (item === null || item === undefined) throw new Error("associative list without keys has an element that's an explicit null");
  if (Array.isArray(item)) throw new Error('not supported: associative list with lists as elements');
  if (typeof item === 'object') throw new Error("associative list without keys has an element that's a map type");
  return valueElement(item);
}

/** A list-map item's key field, or its schema default when the item leaves it out. */
function keyFieldValue(list: ListAtom, item: JsonObject, name: string): JsonValue | undefined {
  const v = item[name];
  if (v !== undefined) return v;
  const m = list.elem.atom.map;
  if (!m) throw new Error(`couldn't find default value for ${name}: associative list may not have non-map types`);
  // A default of null means "no default", as a nil interface does upstream.
  return (m.defaults.get(name) ?? undefined) as JsonValue | undefined;
}

function omitsAllKeys(list: ListAtom): Error {
  return new Error(
    `associative list with keys has an element that omits all key fields [${list.keys.map((k) => goJson(k)).join(' ')}] (and doesn't have default values for any key fields)`,
  );
}

function tryItemElement(list: ListAtom, item: JsonValue): PathElement | undefined {
  try {
    return listItemElement(list, item);
  } catch {
    return undefined;
  }
}

/**
 * ToFieldSet: every leaf the value sets, plus the nodes upstream records as owned on their own:
 * list items, map entries that are not declared struct fields, and fields set to null or `{}`.
 * Atomic lists and maps are single leaves.
 */
export function fieldSetOf(value: JsonValue | undefined, type: TypeRef): FieldSet {
  const set = new FieldSet();
  collect(value, type, set, []);
  return set;
}

function collect(v: JsonValue | undefined, type: TypeRef, set: FieldSet, path: PathElement[]): void {
  const atom = type.atom;
  switch (shapeFor(atom, v)) {
    case 'scalar':
      set.insert(path);
      return;
    case 'list': {
      const list = atom.list!;
      if (list.atomic) {
        set.insert(path);
        return;
      }
      if (Array.isArray(v)) collectListItems(v, list, set, path);
      return;
    }
    case 'map': {
      const map = atom.map!;
      if (map.atomic) {
        set.insert(path);
        return;
      }
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) collectMapEntries(v, map, set, path);
      return;
    }
    default:
      return;
  }
}

function collectListItems(items: JsonValue[], list: ListAtom, set: FieldSet, path: PathElement[]): void {
  const pes = items.map((item) => tryItemElement(list, item));
  // A duplicated item is owned as a whole: its path is recorded once and nothing below it.
  const seen = new Set<PathElement>();
  const duplicates = new Set<PathElement>();
  for (const pe of pes) {
    if (pe === undefined) continue;
    if (seen.has(pe)) {
      if (!duplicates.has(pe)) set.insert([...path, pe]);
      duplicates.add(pe);
    } else seen.add(pe);
  }
  for (let i = 0; i < items.length; i++) {
    const pe = pes[i];
    if (pe === undefined || duplicates.has(pe)) continue;
    path.push(pe);
    collect(items[i], list.elem, set, path);
    set.insert(path);
    path.pop();
  }
}

function collectMapEntries(m: JsonObject, map: MapAtom, set: FieldSet, path: PathElement[]): void {
  for (const key in m) {
    const val = m[key];
    if (val === undefined) continue;
    const declared = map.fields.get(key);
    path.push(fieldElement(key));
    collect(val, declared ?? map.elem ?? DEDUCED, set, path);
    if (val === null || (typeof val === 'object' && !Array.isArray(val) && isEmptyObject(val)) || !declared) set.insert(path);
    path.pop();
  }
}

function isEmptyObject(o: JsonObject): boolean {
  for (const k in o) if (o[k] !== undefined) return false;
  return true;
}

export interface ValidateOptions {
  /** Accept duplicate items in sets and list-maps (upstream does so for stored objects). */
  readonly allowDuplicates?: boolean;
  /** Treat fields a struct does not declare as deduced values instead of reporting them. */
  readonly allowUnknownFields?: boolean;
}

/** validate.go: shapes, undeclared fields, list item identities and (unless allowed) duplicates. */
export function validateTyped(value: JsonValue | undefined, type: TypeRef, opts: ValidateOptions = {}): TypedIssue[] {
  const issues: TypedIssue[] = [];
  check(value, type, opts, [], issues);
  return issues;
}

function check(v: JsonValue | undefined, type: TypeRef, opts: ValidateOptions, path: PathElement[], issues: TypedIssue[]): void {
  if (v === undefined || v === null) return;
  const atom = type.atom;
  const shape = shapeFor(atom, v);
  const at = (message: string): void => {
    issues.push({ path: path.map(pathElementToString).join(''), message });
  };
  if (shape === 'scalar') {
    if (typeof v === 'object') at(`expected any scalar, got ${goJson(v)}`);
    return;
  }
  if (shape === 'list') {
    if (!Array.isArray(v)) return at(`expected list, got ${goJson(v)}`);
    const list = atom.list!;
    const observed = new Set<PathElement>();
    for (let i = 0; i < v.length; i++) {
      let pe: PathElement;
      if (list.atomic) pe = 'i:' + String(i);
      else {
        try {
          pe = listItemElement(list, v[i]);
        } catch (e) {
          return at(`element ${i}: ${(e as Error).message}`);
        }
        if (observed.has(pe) && !opts.allowDuplicates) at(`duplicate entries for key ${pathElementToString(pe)}`);
        observed.add(pe);
      }
      path.push(pe);
      check(v[i], list.elem, opts, path, issues);
      path.pop();
    }
    return;
  }
  if (shape === 'map') {
    if (typeof v !== 'object' || Array.isArray(v)) return at(`expected map, got ${goJson(v)}`);
    const map = atom.map!;
    for (const key in v) {
      const val = v[key];
      if (val === undefined) continue;
      let t = map.fields.get(key) ?? map.elem;
      path.push(fieldElement(key));
      if (!t) {
        if (!opts.allowUnknownFields) {
          at('field not declared in schema');
          path.pop();
          return;
        }
        t = DEDUCED;
      }
      check(val, t, opts, path, issues);
      path.pop();
    }
  }
}

/** A value with its type, resolved once; the entry point for callers that hold a schema. */
export function typeFor(schema: OpenAPISchema | undefined, defs: Definitions): TypeRef {
  return typeOf(schema, defs);
}

/** The set of fields `object` sets, read through `schema` (see fieldSetOf). */
export function toFieldSet(object: JsonValue, schema: OpenAPISchema | undefined, defs: Definitions): FieldSet {
  return fieldSetOf(object, typeOf(schema, defs));
}

/** Throws a TypedError when a set or list-map of `object` holds two items with the same identity. */
export function validateListUniqueness(object: JsonValue, schema: OpenAPISchema | undefined, defs: Definitions): void {
  const issues = validateTyped(object, typeOf(schema, defs), { allowUnknownFields: true }).filter((i) => i.message.startsWith('duplicate entries'));
  if (issues.length) throw new TypedError(issues);
}

/** Paths of a set printed one per line, handy in assertions and messages. */
export function describePaths(paths: Iterable<FieldPath>): string[] {
  return [...paths].map((p) => p.map(pathElementToString).join(''));
}
