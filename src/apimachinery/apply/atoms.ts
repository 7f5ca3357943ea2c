// OpenAPI schema → the shapes structured-merge-diff works with ("atoms"), as
// k8s.io/kube-openapi/pkg/schemaconv converts them for the apiserver:
// - `x-kubernetes-list-type` decides lists: atomic, set, or map keyed by `x-kubernetes-list-map-keys`;
//   without it, `x-kubernetes-patch-strategy: merge` makes a map keyed by the merge key (a set when
//   there is none), `retainKeys` alone keeps the list atomic; anything else is atomic.
// - `x-kubernetes-map-type: atomic` makes an object a leaf; on a `$ref` it overrides the target.
// - an object without properties (or with `additionalProperties: true`, or under
//   `x-kubernetes-preserve-unknown-fields`) takes unknown keys as "deduced" values: maps granular,
//   lists atomic. A schema without a type may be a scalar, a list or a map.
// - Quantity is a scalar; RawExtension is untyped (atomic at every level).
import { resolveSchema, type Definitions, type OpenAPISchema } from '../schema.js';

export interface ListAtom {
  readonly atomic: boolean;
  /** Key fields of a list-map; empty for a set (when not atomic). */
  readonly keys: readonly string[];
  readonly elem: TypeRef;
}

export interface MapAtom {
  readonly atomic: boolean;
  /** Declared fields (struct properties). */
  readonly fields: ReadonlyMap<string, TypeRef>;
  /** Type of undeclared keys; undefined when the schema does not allow them. */
  readonly elem: TypeRef | undefined;
  /** Declared defaults, used for missing list-map key fields. */
  readonly defaults: ReadonlyMap<string, unknown>;
}

/** The possible shapes of one node; a value picks the one that fits it. */
export interface Atom {
  readonly scalar: boolean;
  readonly list?: ListAtom;
  readonly map?: MapAtom;
}

/** A lazily resolved atom: schemas are recursive, so children resolve on first use. */
export interface TypeRef {
  readonly atom: Atom;
}

const resolved = (atom: Atom): TypeRef => ({ atom });

function lazy(make: () => Atom): TypeRef {
  let a: Atom | undefined;
  return {
    get atom() {
      return (a ??= make());
    },
  };
}

const NO_FIELDS: ReadonlyMap<string, TypeRef> = new Map();
const NO_DEFAULTS: ReadonlyMap<string, unknown> = new Map();

/** `__untyped_atomic_`: any value, always a leaf. */
export const UNTYPED: TypeRef = lazy(() => ({
  scalar: true,
  list: { atomic: true, keys: [], elem: UNTYPED },
  map: { atomic: true, fields: NO_FIELDS, elem: UNTYPED, defaults: NO_DEFAULTS },
}));

/** `__untyped_deduced_`: maps are granular (each key a field), lists atomic. */
export const DEDUCED: TypeRef = lazy(() => ({
  scalar: true,
  list: { atomic: true, keys: [], elem: UNTYPED },
  map: { atomic: false, fields: NO_FIELDS, elem: DEDUCED, defaults: NO_DEFAULTS },
}));

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'io.k8s.apimachinery.pkg.runtime.RawExtension';
const REF_PREFIX = '#/definitions/';

interface Converter {
  readonly defs: Definitions;
  readonly byName: Map<string, TypeRef>;
  readonly inline: WeakMap<OpenAPISchema, TypeRef>;
  readonly inlinePreserving: WeakMap<OpenAPISchema, TypeRef>;
}

const converters = new WeakMap<Definitions, Converter>();

function converterFor(defs: Definitions): Converter {
  let c = converters.get(defs);
  if (!c) {
    c = { defs, byName: new Map(), inline: new WeakMap(), inlinePreserving: new WeakMap() };
    converters.set(defs, c);
  }
  return c;
}

/**
 * The type of a whole object: `schema` is the kind's schema (or a `$ref` to it), `defs` the table
 * its references point into. No schema at all means "deduced", as upstream does for unknown kinds.
 */
export function typeOf(schema: OpenAPISchema | undefined, defs: Definitions): TypeRef {
  if (!schema) return DEDUCED;
  return refOf(converterFor(defs), schema, false);
}

function refName(ref: string): string {
  return ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref.replace(/^#\/components\/schemas\//, '');
}

// makeOpenAPIRef: a named type, possibly with the map type overridden where it is referenced.
function refOf(c: Converter, s: OpenAPISchema, preserveUnknown: boolean): TypeRef {
  if (s.$ref !== undefined) {
    const named = named_(c, refName(s.$ref));
    const mapType = s['x-kubernetes-map-type'];
    if (mapType === undefined) return named;
    return lazy(() => {
      const a = named.atom;
      return a.map ? { ...a, map: { ...a.map, atomic: mapType === 'atomic' } } : a;
    });
  }
  const cache = preserveUnknown ? c.inlinePreserving : c.inline;
  let t = cache.get(s);
  if (!t) {
    t = lazy(() => parseSchema(c, s, preserveUnknown || s['x-kubernetes-preserve-unknown-fields'] === true));
    cache.set(s, t);
  }
  return t;
}

function named_(c: Converter, name: string): TypeRef {
  let t = c.byName.get(name);
  if (t) return t;
  if (name === QUANTITY) t = resolved({ scalar: true });
  else if (name === RAW_EXTENSION) t = UNTYPED;
  else
    t = lazy(() => {
      const def = resolveSchema(c.defs, c.defs[name]);
      // An unknown reference is "any value": treat it like an untyped object.
      if (!def) return DEDUCED.atom;
      return parseSchema(c, def, def['x-kubernetes-preserve-unknown-fields'] === true);
    });
  c.byName.set(name, t);
  return t;
}

function parseSchema(c: Converter, s: OpenAPISchema, preserveUnknown: boolean): Atom {
  switch (s.type) {
    case undefined:
      return { scalar: true, list: parseList(c, s, preserveUnknown), map: parseObject(c, s, preserveUnknown) };
    case 'object':
      return { scalar: false, map: parseObject(c, s, preserveUnknown) };
    case 'array':
      return { scalar: false, list: parseList(c, s, preserveUnknown) };
    default:
      return { scalar: true };
  }
}

function parseObject(c: Converter, s: OpenAPISchema, preserveUnknown: boolean): MapAtom {
  const props = s.properties ?? {};
  const names = Object.keys(props);
  const fields = new Map<string, TypeRef>();
  const defaults = new Map<string, unknown>();
  for (const name of names) {
    const p = props[name]!;
    fields.set(name, refOf(c, p, preserveUnknown));
    if (p.default !== undefined) defaults.set(name, p.default);
  }
  let elem: TypeRef | undefined;
  const ap = s.additionalProperties;
  if (ap === undefined) elem = preserveUnknown || names.length === 0 ? DEDUCED : undefined;
  else if (typeof ap === 'object') elem = refOf(c, ap, preserveUnknown);
  else elem = ap ? DEDUCED : undefined;
  return { atomic: s['x-kubernetes-map-type'] === 'atomic', fields: names.length ? fields : NO_FIELDS, elem, defaults: defaults.size ? defaults : NO_DEFAULTS };
}

function parseList(c: Converter, s: OpenAPISchema, preserveUnknown: boolean): ListAtom {
  const elem = s.items ? refOf(c, s.items, preserveUnknown) : UNTYPED;
  const { atomic, keys } = listRelationship(s);
  return { atomic, keys, elem };
}

/** getListElementRelationship: list type first, then the strategic-merge-patch strategy. */
export function listRelationship(s: OpenAPISchema): { atomic: boolean; keys: readonly string[] } {
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (listType === 'set') return { atomic: false, keys: [] };
    if (listType === 'map') return { atomic: false, keys: s['x-kubernetes-list-map-keys'] ?? [] };
    return { atomic: true, keys: [] };
  }
  const strategy = s['x-kubernetes-patch-strategy'];
  if (strategy === 'merge' || strategy === 'merge,retainKeys') {
    const key = s['x-kubernetes-patch-merge-key'];
    return { atomic: false, keys: key ? [key] : [] };
  }
  return { atomic: true, keys: [] };
}

/** deduceAtom: the shape of `atom` that fits `v` (all of them when none fits or v is absent). */
export function shapeFor(atom: Atom, v: unknown): 'scalar' | 'list' | 'map' | undefined {
  if (v === null || v === undefined) return atom.map ? 'map' : atom.scalar ? 'scalar' : atom.list ? 'list' : undefined;
  if (Array.isArray(v)) return atom.list ? 'list' : fallback(atom);
  if (typeof v === 'object') return atom.map ? 'map' : fallback(atom);
  return atom.scalar ? 'scalar' : fallback(atom);
}

// handleAtom's order when the value fits none of the shapes: map, scalar, list.
function fallback(atom: Atom): 'scalar' | 'list' | 'map' | undefined {
  return atom.map ? 'map' : atom.scalar ? 'scalar' : atom.list ? 'list' : undefined;
}
