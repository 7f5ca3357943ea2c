// Fields of a kind that exist only while a feature is on (upstream's dropDisabledFields pattern,
// declared instead of written per strategy): a write drops a gated field while its feature is off
// unless the stored object already has it (ratcheting, so that turning a feature off never loses
// data), and the served OpenAPI leaves it out while the feature is off.
import type { Definitions, OpenAPISchema } from '../apimachinery/schema.js';
import type { KubeObject } from '../apimachinery/types.js';

/** One field gated by a feature: `path` is field names from the object's root, e.g. `['spec', 'strategy']`. */
export interface GatedField {
  readonly feature: string;
  readonly path: readonly string[];
}

/** What the store and the OpenAPI documents ask: the control plane's own gate (FeatureGate has it). */
export interface FeatureLookup {
  enabled(feature: string): boolean;
}

/** The value at `path`, or undefined when a step is missing (null counts as not set: Go's nil pointer). */
function valueAt(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur === null ? undefined : cur;
}

/** Whether an object has the gated field set (upstream's `<field>InUse(old)`); false for no object. */
export function gatedFieldInUse(obj: KubeObject | undefined, path: readonly string[]): boolean {
  return obj !== undefined && valueAt(obj, path) !== undefined;
}

/**
 * Clears the gated fields whose feature is off from `obj`, except those `old` (the stored object
 * of an update; undefined on create) already has set: `if !enabled && !inUse(old) { clear }`.
 * Mutates `obj`; returns the paths it cleared (dotted), for tests and logs.
 */
export function dropDisabledFields(obj: KubeObject, old: KubeObject | undefined, fields: readonly GatedField[], gate: FeatureLookup): string[] {
  const dropped: string[] = [];
  for (const f of fields) {
    if (f.path.length === 0 || gate.enabled(f.feature) || gatedFieldInUse(old, f.path)) continue;
    const parent = valueAt(obj, f.path.slice(0, -1));
    if (parent === undefined || parent === null || typeof parent !== 'object' || Array.isArray(parent)) continue;
    const leaf = f.path[f.path.length - 1]!;
    if (!Object.hasOwn(parent, leaf)) continue;
    delete (parent as Record<string, unknown>)[leaf];
    dropped.push(f.path.join('.'));
  }
  return dropped;
}

const REF_PREFIX = '#/definitions/';

/** The definition a property schema points at: `$ref`, or the single `allOf` entry kube-openapi writes. */
function refName(s: OpenAPISchema | undefined): string | undefined {
  const ref = s?.$ref ?? (s?.allOf?.length === 1 ? s.allOf[0]?.$ref : undefined);
  return ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

/**
 * The definitions without the gated fields whose feature is off: `roots` names each kind's
 * definition with its gated fields; the path is followed through `$ref`s to the definition that
 * declares the last field, which is copied without it (and without it in `required`). Returns
 * `defs` itself when nothing is left out. Only the served documents are pruned: request bodies
 * still decode with the field (and the write drops it), as upstream's Go types keep it.
 */
export function pruneDisabledDefinitions(
  defs: Definitions,
  roots: readonly { readonly definition: string; readonly fields: readonly GatedField[] }[],
  gate: FeatureLookup,
): Definitions {
  let out: Definitions | undefined;
  for (const { definition, fields } of roots) {
    for (const f of fields) {
      if (f.path.length === 0 || gate.enabled(f.feature)) continue;
      const cur = out ?? defs;
      let name: string | undefined = definition;
      for (const seg of f.path.slice(0, -1)) {
        name = name === undefined ? undefined : refName(cur[name]?.properties?.[seg]);
      }
      const holder = name === undefined ? undefined : cur[name];
      const leaf = f.path[f.path.length - 1]!;
      if (name === undefined || !holder?.properties || !Object.hasOwn(holder.properties, leaf)) continue;
      const { [leaf]: _gone, ...properties } = holder.properties;
      const pruned: OpenAPISchema = { ...holder, properties };
      if (holder.required) {
        const required = holder.required.filter((r) => r !== leaf);
        if (required.length) pruned.required = required;
        else delete pruned.required;
      }
      out ??= { ...defs };
      out[name] = pruned;
    }
  }
  return out ?? defs;
}
