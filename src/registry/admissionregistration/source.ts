// The webhook configurations as the admission plugins read them: a list, then a watch of the
// store (its watch cache), kept compiled in memory, so a request never reads storage for them
// (upstream's configuration manager over a shared informer). Relists after a broken watch.
import { setTimeout as sleep } from 'node:timers/promises';
import { compileConfigurations, releaseWebhooks, type CompiledWebhook, type WebhookSource } from '../../admission/webhook/dispatcher.js';
import type { WebhookConfiguration } from '../../admission/webhook/types.js';
import type { GenericStore } from '../store.js';

export class WebhookConfigurationCache implements WebhookSource {
  private readonly items = new Map<string, WebhookConfiguration>();
  private compiled: CompiledWebhook[] = [];
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: () => GenericStore | undefined,
    private readonly log?: (msg: string) => void,
  ) {}

  webhooks(): readonly CompiledWebhook[] {
    return this.compiled;
  }

  /** Lists once (so the plugins know every configuration before the server is ready), then watches. */
  async start(): Promise<void> {
    const store = this.store();
    if (!store) return;
    const rv = await this.relist(store);
    this.loop = this.watchLoop(store, rv);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.loop?.catch(() => {});
    releaseWebhooks(this.compiled);
    this.compiled = [];
  }

  private async relist(store: GenericStore): Promise<string> {
    const list = await store.list(undefined);
    this.items.clear();
    for (const o of list.items) this.items.set(o.metadata?.name ?? '', o);
    this.rebuild();
    return list.metadata.resourceVersion ?? '';
  }

  private rebuild(): void {
    const old = this.compiled;
    this.compiled = compileConfigurations([...this.items.values()], old);
    releaseWebhooks(old, this.compiled);
  }

  private async watchLoop(store: GenericStore, fromRV: string): Promise<void> {
    let rv = fromRV;
    let failures = 0;
    const signal = this.stop.signal;
    while (!signal.aborted) {
      try {
        for await (const ev of store.watch(undefined, { resourceVersion: rv, allowWatchBookmarks: true, signal })) {
          const o = ev.object as WebhookConfiguration;
          if (o.metadata?.resourceVersion) rv = o.metadata.resourceVersion;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.items.set(o.metadata?.name ?? '', o);
          else if (ev.type === 'DELETED') this.items.delete(o.metadata?.name ?? '');
          else continue;
          this.rebuild();
        }
      } catch (e) {
        if (signal.aborted) return;
        this.log?.(`webhook configurations: watch ended (${e instanceof Error ? e.message : String(e)}); relisting`);
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
        this.log?.(`webhook configurations: relist failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
