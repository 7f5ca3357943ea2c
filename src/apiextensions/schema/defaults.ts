// Structural defaulting (pkg/apiserver/schema/defaulting: algorithm.go, prunenulls.go) and the
// CRD-time check that defaults are pruned and valid (defaulting/validation.go, without CEL).
import { fieldIssue, issueString, type FieldIssue } from '../../apimachinery/errors.js';
import type { JsonValue } from '../../apimachinery/types.js';
import { child, deepCopyJSON, deepEqualJSON, isObject, key } from './path.js';
import { coerceCheck, prune } from './prune.js';
import type { Structural } from './types.js';
import { validateEmbeddedResources, validateOpenAPI } from './validate.js';

const isNonNullableNull = (x: unknown, s: Structural | undefined): boolean => x === null && s !== undefined && !s.nullable;

/**
 * Default: fills in defaults for missing properties (and for nulls where null is not allowed),
 * also inside items and additionalProperties, in place. Defaults are deep-copied so objects never
 * share them. Recursion follows the schema, which is finite.
 */
export function applyDefaults(x: unknown, s: Structural | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = s.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items) && items.default !== undefined) x[i] = deepCopyJSON(items.default);
      applyDefaults(x[i], items);
    }
    return;
  }
  if (!isObject(x)) return;
  const props = s.properties;
  if (props) {
    for (const [k, prop] of props) {
      if (prop.default === undefined) continue;
      const has = Object.prototype.hasOwnProperty.call(x, k);
      if (!has || isNonNullableNull(x[k], prop)) x[k] = deepCopyJSON(prop.default);
    }
  }
  const ap = s.additionalProperties?.structural;
  if (!props && !ap) return;
  for (const k in x) {
    const prop = props?.get(k);
    if (prop) applyDefaults(x[k], prop);
    else if (ap) {
      if (isNonNullableNull(x[k], ap) && ap.default !== undefined) x[k] = deepCopyJSON(ap.default);
      applyDefaults(x[k], ap);
    }
  }
}

/**
 * PruneNonNullableNullsWithoutDefaults: drops object fields that are null where the schema does not
 * allow null and has no default (so that defaulting or validation does not trip over them).
 */
export function pruneNonNullableNullsWithoutDefaults(x: unknown, s: Structural | undefined): void {
  // Nothing below an unspecified schema can be pruned, so the walk stops there (bounding recursion).
  if (!s) return;
  if (Array.isArray(x)) {
    if (s.items) for (const v of x) pruneNonNullableNullsWithoutDefaults(v, s.items);
    return;
  }
  if (!isObject(x)) return;
  for (const k of Object.keys(x)) {
    const sub = s.properties?.get(k) ?? s.additionalProperties?.structural;
    const v = x[k];
    if (v === null && sub && !sub.nullable && sub.default === undefined) delete x[k];
    else pruneNonNullableNullsWithoutDefaults(v, sub);
  }
}

/**
 * What defaulting needs of one schema node, in one shape for every node (Structural objects come
 * in many shapes, which makes a walk's property reads megamorphic). Made once per Structural node
 * (schemas are immutable; a changed CRD brings new Structural objects, hence new nodes).
 */
interface DNode {
  readonly nullable: boolean;
  readonly default: JsonValue | undefined;
  readonly properties: ReadonlyMap<string, DNode> | undefined;
  /** The properties that have a default. */
  readonly defaulted: readonly (readonly [string, DNode])[];
  readonly items: DNode | undefined;
  readonly additionalProperties: DNode | undefined;
}

const dnodes = new WeakMap<Structural, DNode>();

function dnodeOf(s: Structural): DNode {
  let n = dnodes.get(s);
  if (n) return n;
  const properties = s.properties ? new Map([...s.properties].map(([k, p]) => [k, dnodeOf(p)] as const)) : undefined;
  n = {
    nullable: s.nullable,
    default: s.default,
    properties,
    defaulted: properties ? [...properties].filter(([, p]) => p.default !== undefined) : [],
    items: s.items ? dnodeOf(s.items) : undefined,
    additionalProperties: s.additionalProperties?.structural ? dnodeOf(s.additionalProperties.structural) : undefined,
  };
  dnodes.set(s, n);
  return n;
}

/**
 * applyDefaults then pruneNonNullableNullsWithoutDefaults, in one walk (what a custom resource
 * strategy does to every object it is given): the result is the same because defaulting a key
 * and dropping a null one only look at that key, so each subtree can be finished in turn.
 */
export function defaultAndPruneNulls(x: unknown, s: Structural | undefined): void {
  if (s) defaultNode(x, dnodeOf(s));
}

function defaultNode(x: unknown, s: DNode): void {
  if (Array.isArray(x)) {
    const items = s.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (x[i] === null && !items.nullable && items.default !== undefined) x[i] = deepCopyJSON(items.default);
      if (typeof x[i] === 'object' && x[i] !== null) defaultNode(x[i], items);
    }
    return;
  }
  if (!isObject(x)) return;
  const defaulted = s.defaulted;
  for (let i = 0; i < defaulted.length; i++) {
    const [k, prop] = defaulted[i]!;
    if (!Object.prototype.hasOwnProperty.call(x, k) || (x[k] === null && !prop.nullable)) x[k] = deepCopyJSON(prop.default!);
  }
  const props = s.properties;
  const ap = s.additionalProperties;
  if (!props && !ap) return;
  // for-in tolerates deleting the current key
  for (const k in x) {
    const prop = props?.get(k);
    const sub = prop ?? ap;
    if (!sub) continue;
    let v = x[k];
    if (v === null) {
      if (sub.nullable) continue;
      if (sub.default === undefined) {
        delete x[k];
        continue;
      }
      // a property's default was filled above; an additionalProperties one is filled here
      if (!prop) x[k] = v = deepCopyJSON(sub.default);
    }
    if (typeof v === 'object' && v !== null) defaultNode(v, sub);
  }
}

/**
 * Whether applyDefaults or pruneNonNullableNullsWithoutDefaults would change `x` (without changing
 * it): read paths use this to serve a stored object as it is, without a copy, in the common case
 * that its defaults were filled when it was written.
 */
export function needsDefaulting(x: unknown, s: Structural | undefined): boolean {
  return s ? nodeNeedsDefaulting(x, dnodeOf(s)) : false;
}

function nodeNeedsDefaulting(x: unknown, s: DNode): boolean {
  if (Array.isArray(x)) {
    const items = s.items;
    if (!items) return false;
    for (const v of x) if ((v === null && !items.nullable && items.default !== undefined) || nodeNeedsDefaulting(v, items)) return true;
    return false;
  }
  if (!isObject(x)) return false;
  const defaulted = s.defaulted;
  for (let i = 0; i < defaulted.length; i++) {
    const [k, prop] = defaulted[i]!;
    if (!Object.prototype.hasOwnProperty.call(x, k) || (x[k] === null && !prop.nullable)) return true;
  }
  const props = s.properties;
  const ap = s.additionalProperties;
  if (!props && !ap) return false;
  for (const k in x) {
    const sub = props?.get(k) ?? ap;
    if (!sub) continue;
    const v = x[k];
    // A null the schema does not allow: defaulted (applyDefaults) or dropped (the prune).
    if (v === null) {
      if (!sub.nullable) return true;
      continue;
    }
    if (typeof v === 'object' && nodeNeedsDefaulting(v, sub)) return true;
  }
  return false;
}

export interface ValidateDefaultsOptions {
  /** The schema is a resource's root schema (openAPIV3Schema). Default true. */
  isResourceRoot?: boolean;
  /** Defaults must already be pruned (apiextensions.k8s.io/v1). Default true. */
  requirePrunedDefaults?: boolean;
}

/** Where a value sits relative to the enclosing resource root: property names or array positions. */
type Seg = string | null;

/**
 * ValidateDefaults: every default must be pruned (`must not have unknown fields`), have valid
 * embedded TypeMeta/ObjectMeta, and validate against its own schema. Defaults inside metadata are
 * checked within a surrounding `validation/v1, Kind=Validation` object
 * (`must result in valid metadata: ...`). CEL rules are not evaluated here.
 */
export function validateDefaults(s: Structural, fieldPath: string, opts: ValidateDefaultsOptions = {}): FieldIssue[] {
  let schema = s;
  if ((opts.isResourceRoot ?? true) && !schema.xEmbeddedResource) schema = { ...schema, xEmbeddedResource: true };
  const errs: FieldIssue[] = [];
  walk(fieldPath, schema, schema, [], false, opts.requirePrunedDefaults ?? true, errs);
  return errs;
}

function surround(segs: readonly Seg[], focus: JsonValue): Record<string, unknown> | undefined {
  let x: unknown = focus;
  for (let i = segs.length - 1; i >= 0; i--) {
    const sg = segs[i];
    x = sg === null ? [x] : { [sg!]: x };
  }
  if (!isObject(x)) return undefined;
  if (!('kind' in x)) x['kind'] = 'Validation';
  if (!('apiVersion' in x)) x['apiVersion'] = 'validation/v1';
  return x;
}

function aggregate(errs: readonly FieldIssue[]): string {
  const msgs = errs.map(issueString);
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

function walk(p: string, s: Structural, root: Structural, segs: Seg[], insideMeta: boolean, requirePruned: boolean, errs: FieldIssue[]): void {
  if (s.xEmbeddedResource) {
    insideMeta = false;
    segs = [];
    root = s;
  }
  const def = s.default;
  if (def !== undefined) {
    const dp = child(p, 'default');
    if (insideMeta) {
      const obj = surround(segs, deepCopyJSON(def));
      if (!obj) {
        // cannot happen: insideMeta means we are below a property of an object root
        errs.push(fieldIssue.invalid(p, '', 'failed to validate default value inside metadata: object root default value must be of object type'));
      } else {
        const ce = coerceCheck(obj, root, '', true);
        if (ce) errs.push(fieldIssue.invalid(dp, def, `must result in valid metadata: ${issueString(ce)}`));
        else {
          const me = validateEmbeddedResources(obj, root, '', true);
          if (me.length > 0) errs.push(fieldIssue.invalid(dp, def, `must result in valid metadata: ${aggregate(me)}`));
          else errs.push(...validateOpenAPI(def, s, { fieldPath: dp }));
        }
      }
    } else {
      if (requirePruned) {
        const pruned = deepCopyJSON(def);
        prune(pruned, s, { isResourceRoot: s.xEmbeddedResource, pruneEmbeddedMetadata: false });
        if (!deepEqualJSON(pruned, def)) errs.push(fieldIssue.invalid(dp, def, 'must not have unknown fields'));
      }
      const ce = coerceCheck(def, s, dp, s.xEmbeddedResource);
      if (ce) errs.push(ce);
      else {
        const me = validateEmbeddedResources(def, s, dp, s.xEmbeddedResource);
        if (me.length > 0) errs.push(...me);
        else errs.push(...validateOpenAPI(def, s, { fieldPath: dp }));
      }
    }
  }
  // additionalProperties are not followed: defaults are forbidden there
  if (s.items) walk(child(p, 'items'), s.items, root, [...segs, null], insideMeta, requirePruned, errs);
  if (s.properties) {
    for (const [k, sub] of s.properties) {
      const subInside = insideMeta || (s.xEmbeddedResource && (k === 'metadata' || k === 'apiVersion' || k === 'kind'));
      walk(key(child(p, 'properties'), k), sub, root, [...segs, k], subInside, requirePruned, errs);
    }
  }
}
