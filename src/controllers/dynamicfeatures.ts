// Dynamic features (KEP-0007): each component that lists a feature in `--dynamic-features` watches
// its class's Feature objects and turns its own gate when a cluster admin sets `spec.desired`
// (unset: back to the command line or the default). The gate answers the new value from the next
// `enabled()` on; `onChange` lets the reporter post the new use at once instead of at its resync.
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { KubeClient } from '../client/types.js';
import type { FeatureGate } from '../featuregate/feature-gate.js';
import { asLogger } from '../golang/klog.js';
import { KPLANE_FEATURE_CLASS, type FeatureObject } from '../registry/features/features/index.js';
import { FEATURES } from './featurereporter.js';

export interface DynamicFeaturesOptions {
  /** The features the operator allowed to turn at runtime (each must be marked dynamic). */
  readonly features: readonly string[];
  readonly namespace?: string;
  /** Called after the gate changed (the names that turned). */
  readonly onChange?: (names: readonly string[]) => void;
  /** How long to wait before listing again after a watch ends or fails (default 1 s). */
  readonly retryMs?: number;
  readonly log?: (msg: string) => void;
}

export interface DynamicFeatures {
  start(): void;
  /** Resolves once the first list was applied. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

/** The names a gate refuses for `--dynamic-features`, with the reason: unknown, or not marked dynamic. */
export function invalidDynamicFeatures(gate: FeatureGate, names: readonly string[]): string[] {
  const errs: string[] = [];
  for (const n of names) {
    if (!gate.getAll().has(n) || n === 'AllAlpha' || n === 'AllBeta') errs.push(`unrecognized feature gate: ${n}`);
    else if (!gate.isDynamic(n)) errs.push(`feature gate ${n} is not dynamic`);
  }
  return errs;
}

const desiredValue = (f: FeatureObject | undefined): boolean | undefined => {
  const d = (f as { spec?: { desired?: unknown } } | undefined)?.spec?.desired;
  return d === 'Enabled' ? true : d === 'Disabled' ? false : undefined;
};

export function dynamicFeatures(client: KubeClient, gate: FeatureGate, opts: DynamicFeaturesOptions): DynamicFeatures {
  const namespace = opts.namespace ?? KPLANE_FEATURE_CLASS;
  const log = asLogger(opts.log);
  const names = new Set(opts.features.filter((n) => gate.isDynamic(n)));
  const abort = new AbortController();
  let running: Promise<void> | undefined;
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  const apply = (name: string, f: FeatureObject | undefined, changed: string[]): void => {
    if (!names.has(name)) return;
    const value = desiredValue(f);
    if (gate.dynamicValue(name) === value) return;
    gate.setDynamicValue(name, value);
    log.info('Feature turned at runtime', 'feature', `${namespace}/${name}`, 'value', value === undefined ? 'configured' : String(value));
    changed.push(name);
  };
  const notify = (changed: string[]): void => {
    if (changed.length > 0) opts.onChange?.(changed);
  };

  const loop = async (): Promise<void> => {
    while (!abort.signal.aborted) {
      try {
        const list = await client.list<KubeObject & FeatureObject>(FEATURES, namespace);
        const changed: string[] = [];
        const byName = new Map(list.items.map((f) => [f.metadata?.name ?? '', f]));
        for (const n of names) apply(n, byName.get(n), changed);
        notify(changed);
        markSynced();
        const events = client.watch<KubeObject & FeatureObject>(FEATURES, namespace, {
          resourceVersion: list.metadata?.resourceVersion ?? '0',
          allowWatchBookmarks: true,
          signal: abort.signal,
        });
        for await (const ev of events) {
          if (ev.type === 'BOOKMARK') continue;
          const c: string[] = [];
          apply(ev.object.metadata?.name ?? '', ev.type === 'DELETED' ? undefined : ev.object, c);
          notify(c);
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        if (!(e instanceof StatusError && e.code === 410)) log.error(e, 'Watching features for dynamic values failed', 'namespace', namespace);
      }
      if (abort.signal.aborted) return;
      await new Promise((r) => setTimeout(r, opts.retryMs ?? 1_000).unref());
    }
  };

  return {
    start() {
      if (names.size === 0) {
        markSynced();
        return;
      }
      running ??= loop();
    },
    synced,
    async stop() {
      abort.abort();
      markSynced();
      await running;
    },
  };
}
