// Strategic merge patch (application/strategic-merge-patch+json), a port of the apply half of
// k8s.io/apimachinery/pkg/util/strategicpatch with patch metadata taken from the OpenAPI schema:
// `x-kubernetes-patch-strategy` (merge | replace | retainKeys | merge,retainKeys) and
// `x-kubernetes-patch-merge-key`. Where the schema says nothing, maps merge key by key and lists
// are replaced, i.e. a JSON merge patch. Directives: `$patch` (replace|delete in maps; replace|
// delete in merging lists), `$retainKeys`, `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>`.
import { StatusError, badRequest } from '../errors.js';
import { resolveSchema, type Definitions, type OpenAPISchema } from '../schema.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../types.js';
import { cannotUnmarshal } from '../../golang/json-errors.js';
import { deepCopyJSON } from '../deepcopy.js';

const DIRECTIVE_MARKER = '$patch';
const REPLACE = 'replace';
const DELETE = 'delete';
const MERGE = 'merge';
const RETAIN_KEYS_STRATEGY = 'retainKeys';
const RETAIN_KEYS_DIRECTIVE = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST_PREFIX = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER_PREFIX = '$setElementOrder';

// mergepatch's sentinel errors, which the patch handler turns into 400s (interpretStrategicMergePatchError).
export const SMP_ERRORS = {
  badJSONDoc: 'invalid JSON document',
  noListOfLists: 'lists of lists are not supported',
  badPatchFormatForPrimitiveList: 'invalid patch format of primitive list',
  badPatchFormatForRetainKeys: 'invalid patch format of retainKeys',
  badPatchFormatForSetElementOrderList: 'invalid patch format of setElementOrder list',
  unsupportedFormat: 'strategic merge patch format is not supported',
} as const;

/**
 * Upstream answers lists of lists with 422 and its other formatted errors (missing merge key,
 * unknown $patch value) with 500; kplane makes the latter 400s, since the patch is what is wrong.
 */
function noListOfLists(): StatusError {
  return new StatusError({ reason: 'Invalid', code: 422, message: 'the server rejected our request due to an error in our request', details: {} });
}

// ---------------------------------------------------------------------------------------------
// Go formatting, so messages read like upstream's (%v of maps and slices, reflect type names).

function goValue(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `map[${keys.map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

function goType(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (isJsonObject(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'bigint') return 'int64'; // an int64 past 2^53
  return typeof v;
}

const errNoMergeKey = (m: JsonObject, key: string): StatusError => badRequest(`map: ${goValue(m)} does not contain declared merge key: ${key}`);
const errBadPatchType = (t: JsonValue | undefined, m: JsonObject): StatusError => badRequest(`unknown patch type: ${goValue(t)} in map: ${goValue(m)}`);
const errBadArgType = (expected: JsonValue, actual: JsonValue | undefined): StatusError =>
  badRequest(`expected a ${goType(expected)}, but received a ${goType(actual)}`);

// ---------------------------------------------------------------------------------------------
// Patch metadata from the schema

interface PatchMeta {
  strategy: string;
  retainKeys: boolean;
  mergeKey: string;
  schema: OpenAPISchema | undefined;
}

class SchemaWalker {
  constructor(private readonly defs: Definitions) {}

  resolve(s: OpenAPISchema | undefined): OpenAPISchema | undefined {
    return resolveSchema(this.defs, s);
  }

  /** The schema of `key` inside an object schema, and the patch metadata declared on it. */
  field(parent: OpenAPISchema | undefined, key: string): PatchMeta {
    const p = this.resolve(parent);
    let raw: OpenAPISchema | undefined;
    if (p?.properties && Object.prototype.hasOwnProperty.call(p.properties, key)) raw = p.properties[key];
    else if (p && typeof p.additionalProperties === 'object') raw = p.additionalProperties;
    // Extensions may sit beside a $ref (upstream's v2 documents) or on the referenced definition.
    const resolved = this.resolve(raw);
    const strategies = String(raw?.['x-kubernetes-patch-strategy'] ?? resolved?.['x-kubernetes-patch-strategy'] ?? '');
    const mergeKey = String(raw?.['x-kubernetes-patch-merge-key'] ?? resolved?.['x-kubernetes-patch-merge-key'] ?? '');
    const { retainKeys, strategy } = splitStrategies(strategies === '' ? [] : strategies.split(','));
    return { strategy, retainKeys, mergeKey, schema: resolved };
  }

  items(list: OpenAPISchema | undefined): OpenAPISchema | undefined {
    return this.resolve(this.resolve(list)?.items);
  }
}

/** extractRetainKeysPatchStrategy. */
function splitStrategies(strategies: string[]): { retainKeys: boolean; strategy: string } {
  switch (strategies.length) {
    case 0:
      return { retainKeys: false, strategy: '' };
    case 1:
      return strategies[0] === RETAIN_KEYS_STRATEGY ? { retainKeys: true, strategy: '' } : { retainKeys: false, strategy: strategies[0]! };
    case 2:
      if (strategies[0] === RETAIN_KEYS_STRATEGY) return { retainKeys: true, strategy: strategies[1]! };
      if (strategies[1] === RETAIN_KEYS_STRATEGY) return { retainKeys: true, strategy: strategies[0]! };
  }
  throw badRequest(`unexpected patch strategy: [${strategies.join(' ')}]`);
}

// ---------------------------------------------------------------------------------------------
// Merging

type Kind = 'map' | 'scalar';

function kindOfElements(...lists: (JsonValue[] | undefined)[]): Kind | undefined {
  let prev: string | undefined;
  for (const list of lists) {
    for (const v of list ?? []) {
      const t = Array.isArray(v) ? 'slice' : isJsonObject(v) ? 'map' : v === null ? 'nil' : typeof v;
      if (prev === undefined) {
        if (t === 'slice') throw noListOfLists();
        prev = t;
      } else if (prev !== t) {
        throw badRequest(`list element types are not identical: ${lists.map((l) => goValue(l ?? [])).join(' ')}`);
      }
    }
  }
  if (prev === undefined) return undefined;
  return prev === 'map' ? 'map' : 'scalar';
}

/** Go's `==` on interface values holding JSON scalars. */
const scalarEqual = (a: JsonValue | undefined, b: JsonValue | undefined): boolean => a === b;

function indexIn(list: readonly JsonValue[], item: JsonValue, mergeKey: string, kind: Kind): number {
  const key = (v: JsonValue): JsonValue | undefined => (kind === 'map' ? (isJsonObject(v) ? v[mergeKey] : undefined) : v);
  const want = key(item);
  return list.findIndex((v) => scalarEqual(key(v), want));
}

function findByMergeKey(list: readonly JsonValue[], mergeKey: string, value: JsonValue | undefined): number {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (!isJsonObject(v)) throw badRequest(`value for key ${i} is not a map.`);
    if (Object.prototype.hasOwnProperty.call(v, mergeKey) && scalarEqual(v[mergeKey], value)) return i;
  }
  return -1;
}

function requireMergeKeys(mergeKey: string, ...lists: JsonValue[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isJsonObject(item)) throw errBadArgType({}, item);
      if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

function isDeleteElement(v: JsonValue): boolean {
  return isJsonObject(v) && v[DIRECTIVE_MARKER] === DELETE;
}

/** normalizeSliceOrder: sort by position in `order`; `$patch: delete` elements go last. */
function normalizeSliceOrder(toSort: JsonValue[], order: JsonValue[], mergeKey: string, kind: Kind): JsonValue[] {
  let keep = toSort;
  let toDelete: JsonValue[] = [];
  if (kind === 'map') {
    requireMergeKeys(mergeKey, toSort, order);
    keep = toSort.filter((v) => !isDeleteElement(v));
    toDelete = toSort.filter(isDeleteElement);
  }
  const positioned = keep.map((v, i) => ({ v, i, at: indexIn(order, v, mergeKey, kind) }));
  positioned.sort((a, b) => (a.at >= 0 && b.at >= 0 ? a.at - b.at : 0) || a.i - b.i);
  return [...positioned.map((p) => p.v), ...toDelete];
}

/** mergeSortedSlice: interleave server-only items into patch items by their live order. */
function mergeSortedSlice(left: JsonValue[], right: JsonValue[], serverOrder: JsonValue[], mergeKey: string, kind: Kind): JsonValue[] {
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]!);
    else if (j >= right.length) out.push(left[i++]!);
    else {
      const li = indexIn(serverOrder, left[i]!, mergeKey, kind);
      const ri = indexIn(serverOrder, right[j]!, mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]!);
      else out.push(right[j++]!);
    }
  }
  return out;
}

function partition(merged: JsonValue[], by: JsonValue[], mergeKey: string, kind: Kind): { patchItems: JsonValue[]; serverOnly: JsonValue[] } {
  const patchItems: JsonValue[] = [];
  const serverOnly: JsonValue[] = [];
  for (const v of merged) {
    let present: boolean;
    if (kind === 'map') {
      if (!isJsonObject(v)) throw errBadArgType({}, v);
      if (!Object.prototype.hasOwnProperty.call(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
      present = findByMergeKey(by, mergeKey, v[mergeKey]) >= 0;
    } else {
      present = by.some((b) => scalarEqual(b, v));
    }
    (present ? patchItems : serverOnly).push(v);
  }
  return { patchItems, serverOnly };
}

function normalizeElementOrder(
  patchItems: JsonValue[],
  serverOnly: JsonValue[],
  patchOrder: JsonValue[],
  serverOrder: JsonValue[],
  mergeKey: string,
  kind: Kind,
): JsonValue[] {
  const p = normalizeSliceOrder(patchItems, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind);
}

function dedupeScalars(list: JsonValue[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const v of list) if (!out.some((o) => scalarEqual(o, v))) out.push(v);
  return out;
}

class StrategicMerger {
  constructor(private readonly walker: SchemaWalker) {}

  mergeMap(original: JsonObject, patch: JsonObject, schema: OpenAPISchema | undefined): JsonObject {
    if (Object.prototype.hasOwnProperty.call(patch, DIRECTIVE_MARKER)) {
      const directive = patch[DIRECTIVE_MARKER];
      if (directive === REPLACE) {
        delete patch[DIRECTIVE_MARKER];
        return patch;
      }
      if (directive === DELETE) return {};
      throw errBadPatchType(directive, patch);
    }
    this.applyRetainKeys(original, patch);
    this.applySetElementOrder(original, patch, schema);

    for (const [rawKey, patchV] of Object.entries(patch)) {
      if (patchV === undefined) continue;
      let key = rawKey;
      let isDeleteList = false;
      if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX)) {
        key = extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST_PREFIX);
        isDeleteList = true;
      }
      if (patchV === null) {
        delete original[key];
        continue;
      }
      const current = original[key];
      const sameKind =
        current !== undefined &&
        (Array.isArray(current) ? Array.isArray(patchV) : isJsonObject(current) ? isJsonObject(patchV) : !Array.isArray(patchV) && !isJsonObject(patchV));
      if (current === undefined || current === null || !sameKind) {
        // Deleting from a list that is not there (or is not a list) leaves the object alone.
        if (isDeleteList) continue;
        original[key] = this.fresh(patchV, this.walker.field(schema, key));
        continue;
      }
      const meta = this.walker.field(schema, key);
      if (isJsonObject(current)) {
        original[key] = meta.strategy === REPLACE ? patchV : this.mergeMap(current, patchV as JsonObject, meta.schema);
      } else if (Array.isArray(current)) {
        original[key] = this.mergeSliceHandler(current, patchV as JsonValue[], meta, isDeleteList);
      } else {
        original[key] = patchV;
      }
    }
    return original;
  }

  /**
   * A value for a key the original lacks. Upstream stores the patch value as is and lets decoding
   * into the typed object drop nulls and directives; with JSON objects we must strip them here.
   */
  private fresh(patchV: JsonValue, meta: PatchMeta): JsonValue {
    if (isJsonObject(patchV)) return meta.strategy === REPLACE ? patchV : this.mergeMap({}, patchV, meta.schema);
    if (Array.isArray(patchV) && meta.strategy === MERGE) return this.mergeSlice([], patchV, meta, false);
    return patchV;
  }

  private mergeSliceHandler(original: JsonValue[], patch: JsonValue[], meta: PatchMeta, isDeleteList: boolean): JsonValue[] {
    return meta.strategy === MERGE ? this.mergeSlice(original, patch, meta, isDeleteList) : patch;
  }

  private mergeSlice(original: JsonValue[], patch: JsonValue[], meta: PatchMeta, isDeleteList: boolean): JsonValue[] {
    if (original.length === 0 && patch.length === 0) return original;
    const kind = kindOfElements(original, patch)!;
    const mergeKey = meta.mergeKey;
    let merged: JsonValue[];
    let base = original;
    let patchItems = patch;
    if (kind !== 'map') {
      if (isDeleteList) return original.filter((v) => !patch.some((d) => scalarEqual(d, v)));
      merged = dedupeScalars([...original, ...patch]);
    } else {
      if (mergeKey === '') throw badRequest('cannot merge lists without merge key for type map');
      ({ original: base, patch: patchItems } = this.mergeSliceWithSpecialElements(original, patch, mergeKey));
      merged = this.mergeSliceWithoutSpecialElements(base, patchItems, mergeKey, this.walker.items(meta.schema));
    }
    const key = kind === 'map' ? mergeKey : '';
    const parts = partition(merged, patchItems, key, kind);
    return normalizeElementOrder(parts.patchItems, parts.serverOnly, patchItems, base, key, kind);
  }

  private mergeSliceWithSpecialElements(original: JsonValue[], patch: JsonValue[], mergeKey: string): { original: JsonValue[]; patch: JsonValue[] } {
    const plain: JsonValue[] = [];
    let replace = false;
    let base = original;
    for (const v of patch) {
      const item = v as JsonObject;
      if (!Object.prototype.hasOwnProperty.call(item, DIRECTIVE_MARKER)) {
        plain.push(v);
        continue;
      }
      const directive = item[DIRECTIVE_MARKER];
      if (directive === DELETE) {
        if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
        const value = item[mergeKey];
        findByMergeKey(base, mergeKey, value); // rejects non-map elements as upstream does
        // deleteMatchingEntries removes every element carrying that merge key value.
        base = base.filter((o) => !(isJsonObject(o) && Object.prototype.hasOwnProperty.call(o, mergeKey) && scalarEqual(o[mergeKey], value)));
      } else if (directive === REPLACE) {
        replace = true;
      } else if (directive === MERGE) {
        throw badRequest('merging lists cannot yet be specified in the patch');
      } else {
        throw errBadPatchType(directive, item);
      }
    }
    return replace ? { original: plain, patch: [] } : { original: base, patch: plain };
  }

  private mergeSliceWithoutSpecialElements(original: JsonValue[], patch: JsonValue[], mergeKey: string, itemSchema: OpenAPISchema | undefined): JsonValue[] {
    const out = [...original];
    for (const v of patch) {
      const item = v as JsonObject;
      if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      const at = findByMergeKey(out, mergeKey, item[mergeKey]);
      if (at >= 0) out[at] = this.mergeMap(out[at] as JsonObject, item, itemSchema);
      else out.push(this.mergeMap({}, item, itemSchema));
    }
    return out;
  }

  /** $retainKeys: drop original keys not listed; every non-null patch key must be listed. */
  private applyRetainKeys(original: JsonObject, patch: JsonObject): void {
    if (!Object.prototype.hasOwnProperty.call(patch, RETAIN_KEYS_DIRECTIVE)) return;
    const list = patch[RETAIN_KEYS_DIRECTIVE];
    delete patch[RETAIN_KEYS_DIRECTIVE];
    if (!Array.isArray(list)) throw badRequest(SMP_ERRORS.badPatchFormatForRetainKeys);
    const keep = new Set(list.filter((v): v is string => typeof v === 'string'));
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || v === undefined || k.startsWith(DELETE_FROM_PRIMITIVE_LIST_PREFIX) || k.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
      if (!keep.has(k)) throw badRequest(SMP_ERRORS.badPatchFormatForRetainKeys);
    }
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }

  /** mergePatchIntoOriginal: merge each list named by a $setElementOrder directive and order it. */
  private applySetElementOrder(original: JsonObject, patch: JsonObject, schema: OpenAPISchema | undefined): void {
    for (const [directiveKey, order] of Object.entries(patch)) {
      if (!directiveKey.startsWith(SET_ELEMENT_ORDER_PREFIX)) continue;
      delete patch[directiveKey];
      if (!Array.isArray(order)) throw errBadArgType([], order);
      const key = extractKey(directiveKey, SET_ELEMENT_ORDER_PREFIX);
      const originalList = original[key];
      const patchList = patch[key];
      const foundOriginal = originalList !== undefined;
      const foundPatch = patchList !== undefined;
      if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType([], originalList);
      if (foundPatch && !Array.isArray(patchList)) throw errBadArgType([], patchList);
      const meta = this.walker.field(schema, key);
      validatePatchWithSetOrderList(patchList ?? [], order, meta.mergeKey);
      let merged: JsonValue[];
      if (foundOriginal && !foundPatch) merged = originalList;
      else if (!foundOriginal && foundPatch) merged = this.fresh(patchList, meta) as JsonValue[];
      else if (foundOriginal && foundPatch) merged = this.mergeSliceHandler(originalList, patchList, meta, false);
      else continue;
      const kind = kindOfElements(originalList, patchList);
      if (kind === undefined) {
        original[key] = merged;
      } else {
        const mergeKey = kind === 'map' ? meta.mergeKey : '';
        const parts = partition(merged, order, mergeKey, kind);
        original[key] = normalizeElementOrder(parts.patchItems, parts.serverOnly, order, originalList ?? [], mergeKey, kind);
      }
      delete patch[key];
    }
  }
}

function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    throw badRequest(
      prefix === DELETE_FROM_PRIMITIVE_LIST_PREFIX ? SMP_ERRORS.badPatchFormatForPrimitiveList : SMP_ERRORS.badPatchFormatForSetElementOrderList,
    );
  }
  return s.slice(slash + 1);
}

/** The patch list's relative order must agree with $setElementOrder, and be a subset of it. */
function validatePatchWithSetOrderList(patchList: JsonValue[], order: JsonValue[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? patchList.filter((v) => !isDeleteElement(v)) : patchList;
  if (mergeKey) for (const v of patchList) if (!isJsonObject(v)) throw errBadArgType({}, v);
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < order.length) {
    const item = nonDelete[p]!;
    if (isJsonObject(item) && Object.prototype.hasOwnProperty.call(item, DIRECTIVE_MARKER)) {
      p++;
      continue;
    }
    let equal: boolean;
    if (!mergeKey) equal = scalarEqual(item, order[s]);
    else {
      const o = order[s]!;
      if (!isJsonObject(item)) throw errBadArgType({}, item);
      if (!isJsonObject(o)) throw errBadArgType({}, o);
      if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      if (!Object.prototype.hasOwnProperty.call(o, mergeKey)) throw errNoMergeKey(o, mergeKey);
      equal = scalarEqual(item[mergeKey], o[mergeKey]);
    }
    if (equal) p++;
    s++;
  }
  if (p < nonDelete.length && s >= order.length) {
    throw badRequest(`The order in patch list:\n${goValue(patchList)}\n doesn't match ${SET_ELEMENT_ORDER_PREFIX} list:\n${goValue(order)}\n`);
  }
}

/**
 * Applies `patch` to `original` (neither is modified) using patch metadata from `schema`, the
 * schema of the whole object. Both must be JSON objects, as upstream decodes them into maps.
 */
export function strategicMergePatch(original: JsonValue, patch: JsonValue, schema: OpenAPISchema, defs: Definitions): JsonValue {
  // Go decodes a JSON null patch into a nil map: nothing to apply.
  if (patch === null) return deepCopyJSON(original);
  if (!isJsonObject(patch)) throw badRequest(cannotUnmarshal(patch, 'map[string]interface {}'));
  if (!isJsonObject(original)) throw badRequest(SMP_ERRORS.badJSONDoc);
  const merger = new StrategicMerger(new SchemaWalker(defs));
  return merger.mergeMap(deepCopyJSON(original), deepCopyJSON(patch), schema);
}
