// ClearField's writes in process (KEP-0007, issue 24): the feature flow of an API server lists and
// updates the objects of a gated kind through the registry's store instead of its loopback client.
// An update still gets what one through the API gets around the store: managedFields as the field
// manager leaves them after an update that removes fields, and admission, mutating then
// validating, as the loopback user; the store runs the strategy, drops disabled gated fields,
// validates, and writes with a compare-and-swap, reading again on a conflict. What it skips is the
// request: filters, authentication and authorization (the loopback user is system:masters),
// audit, request metrics, and JSON encoding and decoding of body and answer on both sides.
import { notFound, StatusError } from '../apimachinery/errors.js';
import type { JsonObject, KubeList, KubeObject, ManagedFieldsEntry } from '../apimachinery/types.js';
import type { AdmissionAttributes, AdmissionChain } from '../admission/index.js';
import type { GVR } from '../client/types.js';
import type { DirectResource, DirectWrites } from '../controllers/featureflow/index.js';
import { decodeContinue, encodeContinue } from '../registry/continue-token.js';
import type { ApiRegistry } from '../registry/registry.js';

export interface RegistryWritesOptions {
  readonly registry: ApiRegistry;
  readonly admission: AdmissionChain;
  /** Who admission sees: the loopback user (system:apiserver in system:masters). */
  readonly user: { readonly name: string; readonly groups: readonly string[] };
}

/** ClearField's writes through the stores of `registry`. */
export function registryWrites(opts: RegistryWritesOptions): DirectWrites {
  const byGVR = new Map<string, DirectResource | undefined>();
  return {
    resource(gvr) {
      const key = `${gvr.group}/${gvr.version}/${gvr.resource}`;
      if (!byGVR.has(key)) byGVR.set(key, storeResource(opts, gvr));
      return byGVR.get(key);
    },
  };
}

function storeResource(opts: RegistryWritesOptions, gvr: GVR): DirectResource | undefined {
  const r = opts.registry.lookup(gvr.group, gvr.version, gvr.resource);
  if (!r) return undefined;
  const { store, descriptor: d } = r;
  const userInfo = { name: opts.user.name, groups: [...opts.user.groups] };
  const attributes = (namespace: string | undefined, name: string, object: KubeObject, oldObject: KubeObject): AdmissionAttributes => ({
    operation: 'UPDATE',
    resource: { group: d.group, version: d.version, resource: d.plural },
    subresource: '',
    kind: { group: d.group, version: d.version, kind: d.kind },
    namespace: namespace ?? '',
    name,
    object,
    oldObject,
    dryRun: false,
    userInfo,
  });
  return {
    async list({ limit, continue: cont }) {
      // Each page at the latest revision (upstream's "inconsistent" continuation, revision -1)
      // rather than at the first page's: ClearField wants the newest objects anyway, and a read
      // at an old revision costs more the more was written since (every object cleared so far).
      // Read and decoded in chunks, with the event loop free between them, so that requests
      // served meanwhile do not wait for a whole page.
      let token = cont ? latest(cont) : undefined;
      let page: KubeList | undefined;
      for (;;) {
        const want = Math.min(LIST_CHUNK, limit - (page?.items.length ?? 0));
        const chunk = await store.list(undefined, { limit: want, ...(token ? { continue: token } : {}) });
        token = chunk.metadata?.continue ? latest(chunk.metadata.continue) : undefined;
        if (page) page.items.push(...chunk.items);
        else page = chunk;
        if (!token || page.items.length >= limit) break;
        await new Promise((r) => setImmediate(r));
      }
      page.metadata = { ...page.metadata, continue: token ?? '' };
      if (!token) delete page.metadata.continue;
      delete page.metadata.remainingItemCount;
      return page;
    },
    async clear(namespace, name, paths) {
      let wrote = false;
      try {
        await store.update(
          namespace,
          name,
          async (current) => {
            // Gone since it was listed: nothing to clear (and no create through the update).
            if (!current) throw notFound(store.groupResource, name);
            const incoming = withoutFields(current, paths);
            wrote = incoming !== undefined;
            if (!incoming) return current;
            await opts.admission.admit(attributes(namespace, name, incoming, current));
            return incoming;
          },
          { validate: (o, old) => opts.admission.validate(attributes(namespace, name, o, old ?? o)) },
        );
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return false;
        throw e;
      }
      return wrote;
    },
  };
}

/** Objects a page is read and decoded in at a time (a page is ClearField's pageSize, 500 by default). */
const LIST_CHUNK = 100;

/** The same continue token, read at the latest revision. */
function latest(token: string): string {
  return encodeContinue(-1, decodeContinue(token).start);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `obj` without the fields at `paths` (undefined when it has none of them): a new object that
 * shares what it does not change with `obj`, which stays as it was (the old object admission sees).
 * Its managedFields are what the field manager makes of an update that only removes fields
 * (structured-merge-diff's Updater.Update): the removed fields, and what is under them, leave
 * every manager's set, a manager left with nothing loses its entry, and the writer gains none
 * (it added or changed nothing), so no entry's time moves.
 */
export function withoutFields(obj: KubeObject, paths: readonly (readonly string[])[]): KubeObject | undefined {
  const out = without(obj, paths);
  if (!out) return undefined;
  // The store changes the metadata it is given (system fields): never the old object's.
  const meta: Obj = { ...(obj.metadata as Obj | undefined) };
  out['metadata'] = meta;
  const managed = obj.metadata?.managedFields;
  if (managed?.length) {
    const fieldPaths = paths.map((p) => p.map((s) => `f:${s}`));
    const entries = managed.flatMap((e): ManagedFieldsEntry[] => {
      const fields = isObj(e.fieldsV1) ? without(e.fieldsV1, fieldPaths, true) : undefined;
      if (!fields) return [e];
      return Object.keys(fields).length ? [{ ...e, fieldsV1: fields as JsonObject }] : [];
    });
    if (entries.length) meta['managedFields'] = entries;
    else delete meta['managedFields'];
  }
  return out;
}

/**
 * `node` without the key paths (one copy of each object along them), or undefined when none is
 * there. With `pruneEmpty` (a FieldsV1 set), a parent left empty goes too: `{}` there would mean
 * the parent itself is in the set, which it was not (it only led to the removed fields; `"."`
 * marks a member).
 */
function without(node: Obj, paths: readonly (readonly string[])[], pruneEmpty = false): Obj | undefined {
  let copy: Obj | undefined;
  const below = new Map<string, (readonly string[])[]>();
  for (const [head, ...rest] of paths) {
    if (head === undefined || !Object.hasOwn(node, head)) continue;
    if (rest.length === 0) {
      copy ??= { ...node };
      delete copy[head];
      below.delete(head);
    } else if (!copy || Object.hasOwn(copy, head)) {
      below.set(head, [...(below.get(head) ?? []), rest]);
    }
  }
  for (const [head, rest] of below) {
    const child = node[head];
    const cut = isObj(child) ? without(child, rest, pruneEmpty) : undefined;
    if (!cut) continue;
    copy ??= { ...node };
    if (pruneEmpty && Object.keys(cut).length === 0) delete copy[head];
    else copy[head] = cut;
  }
  return copy;
}
