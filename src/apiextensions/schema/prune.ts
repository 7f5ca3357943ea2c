// Pruning of unknown fields (pkg/apiserver/schema/pruning) and the ObjectMeta part of coercion for
// embedded resources (pkg/apiserver/schema/objectmeta Coerce), which drops unknown metadata fields.
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { child, index, isObject, printable, subtreeHas } from './path.js';
import type { Structural } from './types.js';
import { decodeObjectMeta } from './validate.js';

export interface PruneOptions {
  /**
   * `obj` is a whole resource: apiVersion, kind and metadata at its top are kept (as for an
   * embedded resource). Default false.
   */
  isResourceRoot?: boolean;
  /**
   * Also drop unknown fields inside the resource's own `metadata` (reported as `metadata.<f>`).
   * Upstream does that while decoding ObjectMeta, outside of pruning; default false.
   */
  pruneRootMetadata?: boolean;
  /** Drop unknown fields inside embedded resources' metadata, as upstream's coercion does. Default true. */
  pruneEmbeddedMetadata?: boolean;
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
const isEmbedded = (s: Structural): boolean => s.xEmbeddedResource;
const embeddedMemo = new WeakMap<Structural, boolean>();

type Seg = string | number;

/** Joins a path like upstream's UnknownFieldPathOptions: `a.b[2].c`, `[1].b` at an array root. */
function joinPath(segs: readonly Seg[], last?: string): string {
  let s = '';
  for (const x of segs) {
    if (typeof x === 'number') s += `[${x}]`;
    else s += s ? `.${x}` : x;
  }
  if (last !== undefined) s += s ? `.${last}` : last;
  return s;
}

/**
 * What pruning reads of one schema node, in one shape for every node (Structural objects come in
 * many shapes, which makes the walk's reads megamorphic). Made once per Structural node; schemas
 * are immutable and a changed CRD brings new Structural objects.
 */
interface PNode {
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly properties: ReadonlyMap<string, PNode> | undefined;
  /** additionalProperties is set (true, false or a schema). */
  readonly hasAdditional: boolean;
  readonly additional: PNode | undefined;
  readonly items: PNode | undefined;
}

const pnodes = new WeakMap<Structural, PNode>();
/** The node of a resource root that is not itself an embedded resource: treated as one. */
const rootPnodes = new WeakMap<Structural, PNode>();

function pnodeOf(s: Structural): PNode {
  let n = pnodes.get(s);
  if (n) return n;
  n = {
    preserveUnknown: s.xPreserveUnknownFields,
    embedded: s.xEmbeddedResource,
    properties: s.properties ? new Map([...s.properties].map(([k, p]) => [k, pnodeOf(p)] as const)) : undefined,
    hasAdditional: s.additionalProperties !== undefined,
    additional: s.additionalProperties?.structural ? pnodeOf(s.additionalProperties.structural) : undefined,
    items: s.items ? pnodeOf(s.items) : undefined,
  };
  pnodes.set(s, n);
  return n;
}

const EMPTY_ROOT: PNode = { preserveUnknown: false, embedded: true, properties: undefined, hasAdditional: false, additional: undefined, items: undefined };

function rootPnodeOf(s: Structural | undefined): PNode {
  if (!s) return EMPTY_ROOT;
  if (s.xEmbeddedResource) return pnodeOf(s);
  let n = rootPnodes.get(s);
  if (!n) rootPnodes.set(s, (n = { ...pnodeOf(s), embedded: true }));
  return n;
}

class Pruner {
  readonly pruned: string[] = [];
  readonly segs: Seg[] = [];

  record(k: string): void {
    this.pruned.push(joinPath(this.segs, k));
  }

  prune(x: unknown, s: PNode | undefined): void {
    if (s?.preserveUnknown) {
      this.skipPrune(x, s);
      return;
    }
    if (Array.isArray(x)) {
      if (!s) {
        this.pruneAll(x);
        return;
      }
      for (let i = 0; i < x.length; i++) {
        this.segs.push(i);
        this.prune(x[i], s.items);
        this.segs.pop();
      }
      return;
    }
    if (!isObject(x)) return;
    if (!s) {
      for (const k of Object.keys(x)) {
        this.record(k);
        delete x[k];
      }
      return;
    }
    const props = s.properties;
    // for-in tolerates deleting the current key, and avoids a key array per object
    for (const k in x) {
      if (s.embedded && META_FIELDS.has(k)) continue;
      const prop = props?.get(k);
      if (prop) {
        const v = x[k];
        if (typeof v === 'object' && v !== null) {
          this.segs.push(k);
          this.prune(v, prop);
          this.segs.pop();
        }
      } else if (s.hasAdditional) {
        this.segs.push(k);
        this.prune(x[k], s.additional);
        this.segs.pop();
      } else {
        if (!META_FIELDS.has(k) || this.segs.length > 0) this.record(k);
        delete x[k];
      }
    }
  }

  private skipPrune(x: unknown, s: PNode | undefined): void {
    if (!s) return;
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        this.segs.push(i);
        this.skipPrune(x[i], s.items);
        this.segs.pop();
      }
      return;
    }
    if (!isObject(x)) return;
    const props = s.properties;
    if (!props && !s.hasAdditional) return;
    for (const k of Object.keys(x)) {
      if (s.embedded && META_FIELDS.has(k)) continue;
      const prop = props?.get(k);
      if (prop) {
        this.segs.push(k);
        this.prune(x[k], prop);
        this.segs.pop();
      } else if (s.hasAdditional) {
        this.segs.push(k);
        this.prune(x[k], s.additional);
        this.segs.pop();
      }
    }
  }

  /**
   * prune(x, nil) below an array: every object loses all its fields. Iterative, because nothing in
   * the schema bounds how deeply arrays may nest here.
   */
  private pruneAll(root: unknown[]): void {
    const base = this.segs.length;
    const stack: { arr: unknown[]; i: number }[] = [{ arr: root, i: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.arr.length) {
        stack.pop();
        if (this.segs.length > base) this.segs.pop();
        continue;
      }
      const i = top.i++;
      const v = top.arr[i];
      if (Array.isArray(v)) {
        this.segs.push(i);
        stack.push({ arr: v, i: 0 });
      } else if (isObject(v)) {
        this.segs.push(i);
        for (const k of Object.keys(v)) {
          this.record(k);
          delete v[k];
        }
        this.segs.pop();
      }
    }
  }
}

/**
 * Removes fields `schema` does not specify, in place, as kube-apiserver does on decode
 * (x-kubernetes-preserve-unknown-fields stops pruning until properties/additionalProperties are
 * specified again; embedded resources keep apiVersion/kind/metadata). Returns the paths of what was
 * removed (`spec.foo`, `spec.items[0].bar`) for `fieldValidation=Warn|Strict` (`unknown field
 * "spec.foo"`), in the order upstream's unstructuredSchemaCoercer reports them: the root
 * metadata's (sorted, as its strict decoding of a map meets them), then the pruned fields (sorted,
 * as PruneWithOptions sorts them), then the embedded objects' metadata (which pruning skips and
 * objectmeta.Coerce reports after it; sorted). test/integration/apiserver/field_validation_test.go
 * pins this order.
 * Never throws.
 */
export function prune(obj: unknown, schema: Structural | undefined, opts: PruneOptions = {}): string[] {
  const p = new Pruner();
  p.prune(obj, opts.isResourceRoot ? rootPnodeOf(schema) : schema && pnodeOf(schema));
  let out = p.pruned;
  if (out.length > 1) out.sort();
  if ((opts.pruneEmbeddedMetadata ?? true) && subtreeHas(schema, isEmbedded, embeddedMemo)) {
    // objectmeta.Coerce walks a Go map (no fixed order): sorted here, so that the answer is stable.
    const embedded: string[] = [];
    pruneEmbeddedMetadata(obj, schema, '', embedded);
    if (embedded.length) out.push(...embedded.sort());
  }
  if (opts.pruneRootMetadata && isObject(obj) && isObject(obj['metadata'])) {
    const meta = pruneObjectMeta(obj['metadata'], 'metadata');
    if (meta.length) out = [...meta, ...out];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ObjectMeta

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);
const OWNER_REFERENCE_FIELDS = new Set(['apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion']);
const MANAGED_FIELDS_FIELDS = new Set(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']);

function isEmptyValue(v: unknown): boolean {
  if (v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

/**
 * The round trip of metadata through metav1.ObjectMeta: unknown fields (also inside
 * ownerReferences and managedFields entries) are dropped and reported as `<prefix>.<field>`, and
 * empty fields vanish as `omitempty` makes them. Malformed metadata is left alone for validation
 * to report. Returns the dropped paths.
 */
export function pruneObjectMeta(meta: Record<string, unknown>, prefix: string): string[] {
  if (decodeObjectMeta(meta).error !== undefined) return [];
  const out: string[] = [];
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      out.push(`${prefix}.${k}`);
      delete meta[k];
      continue;
    }
    const v = meta[k];
    if (isEmptyValue(v)) {
      delete meta[k];
      continue;
    }
    if ((k === 'ownerReferences' || k === 'managedFields') && Array.isArray(v)) {
      const known = k === 'ownerReferences' ? OWNER_REFERENCE_FIELDS : MANAGED_FIELDS_FIELDS;
      v.forEach((e, i) => {
        if (!isObject(e)) return;
        for (const f of Object.keys(e)) {
          if (!known.has(f)) {
            out.push(`${prefix}.${k}[${i}].${f}`);
            delete e[f];
          }
        }
      });
    }
  }
  // A strict decode of the metadata map meets its keys sorted (Go marshals maps so).
  return out.length > 1 ? out.sort() : out;
}

/** Walks like objectmeta.Coerce: field.Path spelling (`a[key]` for map keys) for metadata paths. */
function pruneEmbeddedMetadata(x: unknown, s: Structural | undefined, p: string, out: string[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    if (s.items) for (let i = 0; i < x.length; i++) pruneEmbeddedMetadata(x[i], s.items, index(p, i), out);
    return;
  }
  if (!isObject(x)) return;
  if (s.xEmbeddedResource && p !== '' && isObject(x['metadata'])) out.push(...pruneObjectMeta(x['metadata'], child(p, 'metadata')));
  if (!s.properties && !s.additionalProperties?.structural) return;
  for (const k in x) {
    const prop = s.properties?.get(k);
    if (prop) pruneEmbeddedMetadata(x[k], prop, child(p, k), out);
    else if (s.additionalProperties?.structural) pruneEmbeddedMetadata(x[k], s.additionalProperties.structural, `${p}[${k}]`, out);
  }
}

/**
 * The checks of objectmeta.Coerce without dropping: embedded (and, with isResourceRoot, the root)
 * apiVersion/kind must be strings and metadata must decode. Returns the first problem, as upstream.
 */
export function coerceCheck(x: unknown, s: Structural | undefined, p: string, isResourceRoot: boolean): FieldIssue | undefined {
  let schema = s;
  if (isResourceRoot) {
    schema ??= { type: '', description: '', title: '', nullable: false, xPreserveUnknownFields: false, xEmbeddedResource: false, xIntOrString: false };
    if (!schema.xEmbeddedResource) schema = { ...schema, xEmbeddedResource: true };
  }
  return coerceWalk(x, schema, p);
}

function coerceWalk(x: unknown, s: Structural | undefined, p: string): FieldIssue | undefined {
  if (!s) return undefined;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const e = coerceWalk(x[i], s.items, index(p, i));
      if (e) return e;
    }
    return undefined;
  }
  if (!isObject(x)) return undefined;
  for (const k in x) {
    const v = x[k];
    if (s.xEmbeddedResource) {
      if ((k === 'apiVersion' || k === 'kind') && typeof v !== 'string') return fieldIssue.invalid(child(p, k), printable(v), 'must be a string');
      if (k === 'metadata') {
        const d = decodeObjectMeta(v);
        if (d.error !== undefined) return fieldIssue.invalid(child(p, 'metadata'), printable(v), d.error);
      }
    }
    const prop = s.properties?.get(k);
    const e = prop ? coerceWalk(v, prop, child(p, k)) : s.additionalProperties ? coerceWalk(v, s.additionalProperties.structural, `${p}[${k}]`) : undefined;
    if (e) return e;
  }
  return undefined;
}
