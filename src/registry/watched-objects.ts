// The objects of one resource kept in memory by a list, then a watch of its store (the watch
// cache), relisting after a broken watch: the small informer that admission's configurations, the
// aggregator's APIServices and the service resolver's Services are read from.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../apimachinery/types.js';
import type { GenericStore } from './store.js';

const keyOf = (o: KubeObject): string => (o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata?.name ?? ''));

/** The objects of one resource, by name (`namespace/name` when namespaced), kept current by list+watch; `changed` runs after each change. */
export class WatchedObjects<T extends KubeObject> {
  readonly items = new Map<string, T>();
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: () => GenericStore | undefined,
    private readonly what: string,
    private readonly changed: () => void,
    private readonly log?: (msg: string) => void,
  ) {}

  /** Lists once (so the plugins know every object before the server is ready), then watches. */
  async start(): Promise<void> {
    const store = this.store();
    if (!store) return;
    const rv = await this.relist(store);
    this.loop = this.watchLoop(store, rv);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.loop?.catch(() => {});
  }

  private async relist(store: GenericStore): Promise<string> {
    const list = await store.list(undefined);
    this.items.clear();
    for (const o of list.items) this.items.set(keyOf(o), o as T);
    this.changed();
    return list.metadata.resourceVersion ?? '';
  }

  private async watchLoop(store: GenericStore, fromRV: string): Promise<void> {
    let rv = fromRV;
    let failures = 0;
    const signal = this.stop.signal;
    while (!signal.aborted) {
      try {
        for await (const ev of store.watch(undefined, { resourceVersion: rv, allowWatchBookmarks: true, signal })) {
          const o = ev.object as T;
          if (o.metadata?.resourceVersion) rv = o.metadata.resourceVersion;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.items.set(keyOf(o), o);
          else if (ev.type === 'DELETED') this.items.delete(keyOf(o));
          else continue;
          this.changed();
        }
      } catch (e) {
        if (signal.aborted) return;
        this.log?.(`${this.what}: watch ended (${e instanceof Error ? e.message : String(e)}); relisting`);
      }
      if (signal.aborted) return;
      // 200 ms, doubling to 10 s while relisting fails (as the RBAC informer): storage that is down
      // costs a log line every few seconds, not five a second; close() does not wait for the pause.
      await sleep(Math.min(200 * 2 ** failures, 10_000), undefined, { signal, ref: false }).catch(() => {});
      if (signal.aborted) return;
      try {
        rv = await this.relist(store);
        failures = 0;
      } catch (e) {
        failures++;
        this.log?.(`${this.what}: relist failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
