// Feeds an RbacCache from the API through a KubeClient: list, then watch from the list's
// resourceVersion, for each of the four kinds; a watch that ends is resumed from the last
// resourceVersion seen, a 410 relists (as client-go's reflector). The controllers' Informer lives
// a layer above auth, so the authorizer has this small one of its own.
import { isStatusError } from '../../apimachinery/errors.js';
import type { GVR, KubeClient } from '../../client/types.js';
import type { RbacCache, RbacKind } from './cache.js';
import { RBAC_GROUP } from './types.js';

const KINDS: readonly { kind: RbacKind; gvr: GVR }[] = [
  { kind: 'ClusterRole', gvr: { group: RBAC_GROUP, version: 'v1', resource: 'clusterroles' } },
  { kind: 'ClusterRoleBinding', gvr: { group: RBAC_GROUP, version: 'v1', resource: 'clusterrolebindings' } },
  { kind: 'Role', gvr: { group: RBAC_GROUP, version: 'v1', resource: 'roles' } },
  { kind: 'RoleBinding', gvr: { group: RBAC_GROUP, version: 'v1', resource: 'rolebindings' } },
];

export interface RbacInformer {
  /** Resolves once every kind has been listed once (the cache is complete). */
  synced(): Promise<void>;
  stop(): Promise<void>;
}

export function startRbacInformer(client: KubeClient, cache: RbacCache, opts: { log?: (msg: string) => void } = {}): RbacInformer {
  const abort = new AbortController();
  const signal = abort.signal;
  const log = opts.log ?? (() => {});
  const syncs: Promise<void>[] = [];
  const loops: Promise<void>[] = [];
  for (const { kind, gvr } of KINDS) {
    let markSynced!: () => void;
    syncs.push(new Promise<void>((ok) => (markSynced = ok)));
    loops.push(
      (async () => {
        let rv = '';
        let failures = 0;
        while (!signal.aborted) {
          try {
            if (!rv) {
              const list = await client.list(gvr, undefined, { signal });
              cache.replace(kind, list.items);
              rv = list.metadata.resourceVersion ?? '';
              markSynced();
            }
            for await (const ev of client.watch(gvr, undefined, {
              resourceVersion: rv,
              allowWatchBookmarks: true,
              timeoutSeconds: 300 + Math.floor(Math.random() * 300),
              signal,
            })) {
              const o = ev.object;
              rv = o.metadata?.resourceVersion ?? rv;
              if (ev.type === 'ADDED' || ev.type === 'MODIFIED') cache.upsert(kind, o);
              else if (ev.type === 'DELETED') cache.delete(kind, o);
            }
            failures = 0;
          } catch (e) {
            if (signal.aborted) break;
            if (isStatusError(e) && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone')) {
              rv = '';
              continue;
            }
            failures++;
            const delay = Math.min(200 * 2 ** (failures - 1), 10_000);
            log(`rbac: failed to list or watch ${gvr.resource}.${gvr.group}; retrying in ${delay} ms: ${e instanceof Error ? e.message : String(e)}`);
            await new Promise<void>((ok) => {
              const t = setTimeout(ok, delay);
              signal.addEventListener('abort', () => {
                clearTimeout(t);
                ok();
              });
            });
          }
        }
      })(),
    );
  }
  const all = Promise.all(syncs).then(() => {});
  return {
    synced: () => all,
    async stop() {
      abort.abort();
      await Promise.allSettled(loops);
    },
  };
}
