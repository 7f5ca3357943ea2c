// x-kubernetes-list-type / x-kubernetes-list-map-keys / x-kubernetes-map-type: the schema rules of
// CRD validation (pkg/apis/apiextensions/validation) and the uniqueness invariants on objects
// (pkg/apiserver/schema/listtype). Messages and paths are upstream's.
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { child, index, isObject, key, printable, subtreeHas } from './path.js';
import type { JSONSchemaProps, Structural } from './types.js';

function itemsOf(s: JSONSchemaProps): JSONSchemaProps | undefined {
  return s.items !== undefined && !Array.isArray(s.items) ? s.items : undefined;
}

/**
 * The list/map-type rules ValidateCustomResourceDefinitionOpenAPISchema applies to one schema node:
 * types must fit the extension, values must be known, map keys must name scalar item properties
 * without duplicates, and (requireAtomicSetType) set items must be atomic.
 */
export function validateListTypeExtensions(schema: JSONSchemaProps, p: string, opts: { requireAtomicSetType?: boolean } = {}): FieldIssue[] {
  const errs: FieldIssue[] = [];
  const mapType = schema['x-kubernetes-map-type'];
  const listType = schema['x-kubernetes-list-type'];
  const mapKeys = schema['x-kubernetes-list-map-keys'] ?? [];
  const items = itemsOf(schema);

  if (mapType !== undefined && schema.type !== 'object') {
    if (!schema.type) errs.push(fieldIssue.required(child(p, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(fieldIssue.invalid(child(p, 'type'), schema.type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(fieldIssue.notSupported(child(p, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }

  if (listType !== undefined && schema.type !== 'array') {
    if (!schema.type) errs.push(fieldIssue.required(child(p, 'type'), 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(fieldIssue.invalid(child(p, 'type'), schema.type, 'must be array if x-kubernetes-list-type is specified'));
  } else if ((opts.requireAtomicSetType ?? true) && listType === 'set' && items) {
    if (items.type === 'array') {
      const it = items['x-kubernetes-list-type'];
      // atomic is the implicit default, so only an explicit non-atomic value is wrong
      if (it !== undefined && it !== 'atomic') {
        errs.push(
          fieldIssue.invalid(child(child(p, 'items'), 'x-kubernetes-list-type'), it, 'must be atomic as item of a list with x-kubernetes-list-type=set'),
        );
      }
    } else if (items.type === 'object') {
      // granular is the implicit default for maps, so unset is wrong too
      if (items['x-kubernetes-map-type'] !== 'atomic') {
        errs.push(
          fieldIssue.invalid(
            child(child(p, 'items'), 'x-kubernetes-map-type'),
            items['x-kubernetes-list-type'] ?? null,
            'must be atomic as item of a list with x-kubernetes-list-type=set',
          ),
        );
      }
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    errs.push(fieldIssue.notSupported(child(p, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }

  if (mapKeys.length > 0) {
    if (listType === undefined) errs.push(fieldIssue.required(child(p, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map')
      errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-list-type'), listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }

  if (listType === 'map') {
    if (mapKeys.length === 0) errs.push(fieldIssue.required(child(p, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (schema.items === undefined) errs.push(fieldIssue.required(child(p, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (schema.items !== undefined && !items)
      errs.push(fieldIssue.invalid(child(p, 'items'), schema.items, 'must only have a single schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') {
      errs.push(fieldIssue.invalid(child(child(p, 'items'), 'type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const ks = items.properties?.[k];
        if (ks) {
          if (ks.type === 'array' || ks.type === 'object') {
            // upstream reports the item type as the bad value here
            errs.push(
              fieldIssue.invalid(
                child(key(child(child(p, 'items'), 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
        } else {
          errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  return errs;
}

/**
 * validateMapListKeysMapSet: items of set and map lists must not be nullable, and map keys must be
 * required or defaulted and not nullable (so every element has a well-defined key).
 */
export function validateMapListKeysMapSet(schema: JSONSchemaProps, p: string): FieldIssue[] {
  const items = itemsOf(schema);
  const lt = schema['x-kubernetes-list-type'];
  if (!items || (lt !== 'set' && lt !== 'map')) return [];
  const errs: FieldIssue[] = [];
  if (items.nullable) errs.push(fieldIssue.forbidden(child(child(p, 'items'), 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${lt}`));
  if (lt === 'map') {
    const required = new Set(items.required ?? []);
    for (const k of schema['x-kubernetes-list-map-keys'] ?? []) {
      const ks = items.properties?.[k];
      if (!ks) continue; // reported by validateListTypeExtensions
      const kp = key(child(child(p, 'items'), 'properties'), k);
      if (!required.has(k) && ks.default === undefined) {
        errs.push(
          fieldIssue.required(child(kp, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'),
        );
      }
      if (ks.nullable) errs.push(fieldIssue.forbidden(child(kp, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------
// Objects

/** Bounds recursion on hostile input; deeper values are not checked for list invariants. */
const MAX_DEPTH = 10000;

/**
 * ValidateListSetsAndMaps: arrays with `x-kubernetes-list-type: set` must not repeat an element,
 * and with `map` must not repeat a key tuple (an element missing a key counts as its own value).
 * `fieldPath` is the path of `obj` ('' at the resource root).
 */
export function validateListSetsAndMaps(obj: unknown, s: Structural | undefined, fieldPath = ''): FieldIssue[] {
  const errs: FieldIssue[] = [];
  if (isObject(obj)) walkObject(fieldPath, s, obj, errs, 0);
  return errs;
}

const hasListInvariant = (s: Structural): boolean => s.xListType === 'set' || s.xListType === 'map';
const listMemo = new WeakMap<Structural, boolean>();

function walkObject(p: string, s: Structural | undefined, obj: Record<string, unknown>, errs: FieldIssue[], depth: number): void {
  if (!s || depth > MAX_DEPTH || !subtreeHas(s, hasListInvariant, listMemo)) return;
  // Paths are built only on the way to a subtree that has list invariants.
  const ap = s.additionalProperties?.structural;
  if (ap && subtreeHas(ap, hasListInvariant, listMemo)) for (const k in obj) walk(key(p, k), ap, obj[k], errs, depth + 1);
  if (s.properties) {
    for (const k in obj) {
      const sub = s.properties.get(k);
      if (sub && subtreeHas(sub, hasListInvariant, listMemo)) walk(child(p, k), sub, obj[k], errs, depth + 1);
    }
  }
}

function walk(p: string, s: Structural, v: unknown, errs: FieldIssue[], depth: number): void {
  if (!subtreeHas(s, hasListInvariant, listMemo)) return;
  if (Array.isArray(v)) walkArray(p, s, v, errs, depth);
  else if (isObject(v)) walkObject(p, s, v, errs, depth);
}

function walkArray(p: string, s: Structural, arr: unknown[], errs: FieldIssue[], depth: number): void {
  if (s.xListType === 'set') {
    for (const i of nonUnique(arr)) errs.push(fieldIssue.duplicate(index(p, i), arr[i]));
  } else if (s.xListType === 'map') {
    validateListMap(p, s, arr, errs);
  }
  if (s.items && depth <= MAX_DEPTH && subtreeHas(s.items, hasListInvariant, listMemo))
    for (let i = 0; i < arr.length; i++) walk(index(p, i), s.items, arr[i], errs, depth + 1);
}

/** Stands for "this element has no value for the key"; distinct from a null key. */
const UNSPECIFIED = Symbol('unspecifiedKeyValue');

/**
 * validateListSet: indices of the second appearance of every repeated element. Scalars compare by
 * value and type; compound values by their JSON with sorted keys, as Go's json.Marshal of maps.
 */
function nonUnique(arr: readonly unknown[]): number[] {
  if (arr.length <= 1) return [];
  const scalars = new Map<unknown, number>();
  let compounds: Map<string, number> | undefined;
  const out: number[] = [];
  for (let i = 0; i < arr.length; i++) {
    const x = arr[i];
    if (typeof x === 'object' && x !== null) {
      const k = boundedCanonicalJSON(x, MAX_COMPARE_DEPTH);
      // Values nested beyond the bound are treated as unique rather than risk the stack.
      if (k === undefined) continue;
      compounds ??= new Map();
      const times = compounds.get(k);
      if (times === undefined) compounds.set(k, 1);
      else {
        compounds.set(k, times + 1);
        if (times === 1) out.push(i);
      }
    } else {
      const times = scalars.get(x);
      if (times === undefined) scalars.set(x, 1);
      else {
        scalars.set(x, times + 1);
        if (times === 1) out.push(i);
      }
    }
  }
  return out;
}

/** A scalar as JSON (an int64 past 2^53 is a bigint: golang/json-int64.ts). */
const scalarJSON = (v: unknown): string => (typeof v === 'bigint' ? v.toString() : (JSON.stringify(v) ?? 'null'));

/** Compound list elements nested deeper than this are not compared (see nonUnique). */
const MAX_COMPARE_DEPTH = 512;

function boundedCanonicalJSON(v: unknown, depth: number): string | undefined {
  if (v === null || typeof v !== 'object') return scalarJSON(v);
  if (depth <= 0) return undefined;
  const parts: string[] = [];
  if (Array.isArray(v)) {
    for (const x of v) {
      const p = boundedCanonicalJSON(x, depth - 1);
      if (p === undefined) return undefined;
      parts.push(p);
    }
    return `[${parts.join(',')}]`;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o).sort()) {
    if (o[k] === undefined) continue;
    const p = boundedCanonicalJSON(o[k], depth - 1);
    if (p === undefined) return undefined;
    parts.push(`${JSON.stringify(k)}:${p}`);
  }
  return `{${parts.join(',')}}`;
}

/** JSON with object keys sorted, so that equal maps serialize equally. Only for values of bounded depth. */
export function canonicalJSON(v: unknown): string {
  if (v === null || typeof v !== 'object') return scalarJSON(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON(o[k])}`).join(',')}}`;
}

function validateListMap(p: string, s: Structural, arr: unknown[], errs: FieldIssue[]): void {
  for (let i = 0; i < arr.length; i++) {
    const x = arr[i];
    if (x !== null && !isObject(x)) {
      errs.push(fieldIssue.invalid(index(p, i), printable(x), 'must be an object for an array of list-type map'));
      return;
    }
  }
  if (arr.length <= 1) return;
  const keyFields = s.xListMapKeys ?? [];
  if (keyFields.length === 1) {
    const kf = keyFields[0]!;
    const keys: unknown[] = arr.map((x) => (x === null || !Object.prototype.hasOwnProperty.call(x, kf) ? UNSPECIFIED : (x as Record<string, unknown>)[kf]));
    for (const i of nonUnique(keys)) {
      errs.push(fieldIssue.duplicate(index(p, i), keys[i] === UNSPECIFIED ? {} : { [kf]: keys[i] }));
    }
    return;
  }
  const keys = arr.map((x) => {
    const k: Record<string, unknown> = {};
    if (x === null) return k;
    const o = x as Record<string, unknown>;
    for (const f of keyFields) if (Object.prototype.hasOwnProperty.call(o, f)) k[f] = o[f];
    return k;
  });
  for (const i of nonUnique(keys)) errs.push(fieldIssue.duplicate(index(p, i), keys[i]));
}
