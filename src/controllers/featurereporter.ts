// A component's side of the Feature API (KEP-0007): it announces the features it knows (creates
// the Feature objects of its class that do not exist yet, never deleting any it does not know) and
// reports the value its gate answers for each under its own identity, through features/<name>/uses.
// It runs off the request path: once at start, then every resync, when it posts only what changed
// (its value, or its entry gone from the object, as after a leader clears the uses).
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { GVR, KubeClient } from '../client/types.js';
import { Alpha, Beta, Deprecated, GA, type FeatureGate, type FeatureSpec } from '../featuregate/feature-gate.js';
import { asLogger } from '../golang/klog.js';
import {
  FEATURES_API_VERSION,
  FEATURES_GROUP,
  FEATURES_VERSION,
  KPLANE_FEATURE_CLASS,
  foldUse,
  type FeatureObject,
  type FeatureStatus,
  type FeatureUse,
  type FeatureValue,
} from '../registry/features/features/index.js';
import { rfc3339 } from '../apimachinery/times.js';

/** The component names kplane's own processes report their uses under (upstream's binaries' names). */
export const KUBE_APISERVER_COMPONENT = 'kube-apiserver';
export const KUBE_CONTROLLER_MANAGER_COMPONENT = 'kube-controller-manager';

export const FEATURES: GVR = { group: FEATURES_GROUP, version: FEATURES_VERSION, resource: 'features' };
const RESYNC_INTERVAL_MS = 30_000;
/** component-base's pseudo-features: they set others, nobody uses them. */
const PSEUDO_FEATURES = new Set(['AllAlpha', 'AllBeta']);

export interface FeatureReporterOptions {
  /** The component reporting (`kube-apiserver`, `kube-controller-manager`, a third party's name). */
  readonly component: string;
  /** This instance (an API server's identity Lease holder, a pod name). */
  readonly identity: string;
  /** The component's version, as it shows in each use. */
  readonly version: string;
  /** The component class: the namespace of its Feature objects (default kube-system). */
  readonly namespace?: string;
  /** Create the Feature objects that do not exist yet (default true). */
  readonly announce?: boolean;
  /** Which features to report (default: every feature the gate knows, AllAlpha/AllBeta left out). */
  readonly features?: (gate: FeatureGate) => readonly string[];
  readonly resyncIntervalMs?: number;
  /** Whether a feature may turn at runtime (listed in `--dynamic-features` and marked dynamic): status.dynamic of a new Feature. */
  readonly dynamic?: (name: string) => boolean;
  readonly log?: (msg: string) => void;
  readonly now?: () => Date;
}

export interface FeatureReporter {
  start(): void;
  /** One round now (what the loop runs): announce what is missing, report what changed. */
  sync(): Promise<void>;
  /** A round as soon as possible (after the one running, if any): a dynamic feature turned. */
  trigger(): void;
  stop(): Promise<void>;
}

/** research §6 A16: component-base's stage as the Feature's stability. */
export function stabilityOf(spec: FeatureSpec): string {
  switch (spec.preRelease) {
    case Alpha:
      return 'Alpha';
    case Beta:
      return 'Beta';
    case GA:
      return spec.lockToDefault ? 'Universal' : 'GA';
    case Deprecated:
      return 'Deprecated';
    default:
      return 'Unavailable';
  }
}

const valueOf = (b: boolean): FeatureValue => (b ? 'Enabled' : 'Disabled');

export function featureReporter(client: KubeClient, gate: FeatureGate, opts: FeatureReporterOptions): FeatureReporter {
  const namespace = opts.namespace ?? KPLANE_FEATURE_CLASS;
  const log = asLogger(opts.log);
  const now = opts.now ?? ((): Date => new Date());
  const pick = opts.features ?? ((g: FeatureGate): string[] => [...g.getAll().keys()].filter((n) => !PSEUDO_FEATURES.has(n)).sort());
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let again = false;

  // The first announcer fills what it knows of the feature; the server flow's leader (a later
  // step of KEP-0007) owns status from then on.
  const initialStatus = (name: string, value: boolean, at: Date): FeatureStatus => {
    const spec = gate.getAll().get(name);
    const def = spec?.default ?? false;
    return {
      stability: spec ? stabilityOf(spec) : 'Unavailable',
      version: gate.emulationVersion().toString(),
      default: valueOf(def),
      lockedToDefault: spec?.lockToDefault === true,
      dynamic: opts.dynamic?.(name) ?? false,
      source: gate.dynamicValue(name) !== undefined ? 'API' : gate.explicitlySet(name) ? 'CommandLine' : 'Default',
      intended: valueOf(value),
      state: value ? 'On' : 'Off',
      lastAnnouncedTime: rfc3339(at),
    };
  };

  const useOf = (value: boolean): FeatureUse => ({ component: opts.component, identity: opts.identity, version: opts.version, value: valueOf(value) });

  // The announcer's own use goes in with the first status (folded as the uses subresource folds
  // it): a Feature this component creates costs two writes, not three.
  const announce = async (name: string, value: boolean): Promise<FeatureObject | undefined> => {
    let created: KubeObject;
    try {
      created = await client.create(FEATURES, namespace, { apiVersion: FEATURES_API_VERSION, kind: 'Feature', metadata: { name, namespace }, spec: {} });
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) return undefined; // another component announced it first
      throw e;
    }
    const at = now();
    try {
      return await client.updateStatus(FEATURES, namespace, foldUse({ ...created, status: initialStatus(name, value, at) }, useOf(value), at).object);
    } catch (e) {
      // The flow's leader wrote the first status meanwhile: it owns status, this use goes in alone.
      if (e instanceof StatusError && e.code === 409) return undefined;
      throw e;
    }
  };

  const report = async (name: string, value: boolean): Promise<void> => {
    await client.update(
      FEATURES,
      namespace,
      { apiVersion: FEATURES_API_VERSION, kind: 'FeatureUse', metadata: { name }, ...useOf(value) },
      { subresource: 'uses' },
    );
  };

  const sync = async (): Promise<void> => {
    const list = await client.list<KubeObject & FeatureObject>(FEATURES, namespace);
    const byName = new Map(list.items.map((f) => [f.metadata?.name ?? '', f]));
    for (const name of pick(gate)) {
      if (stopped) return;
      const value = gate.enabled(name);
      try {
        let feature: FeatureObject | undefined = byName.get(name);
        if (!feature && opts.announce !== false) feature = await announce(name, value);
        const mine = feature?.status?.uses?.find((u) => u.component === opts.component && u.identity === opts.identity);
        if (mine && mine.value === valueOf(value) && (mine.version ?? '') === opts.version) continue;
        await report(name, value);
      } catch (e) {
        // A Feature not announced (announce off, or deleted meanwhile) is reported next round.
        if (e instanceof StatusError && e.code === 404) continue;
        log.error(e, 'Failed to report a feature use', 'feature', `${namespace}/${name}`);
      }
    }
  };

  const round = (): void => {
    if (stopped) return;
    running = sync()
      .catch((e: unknown) => log.error(e, 'Failed to report feature uses', 'namespace', namespace))
      .finally(() => {
        running = undefined;
        if (stopped) return;
        timer = setTimeout(round, again ? 0 : (opts.resyncIntervalMs ?? RESYNC_INTERVAL_MS));
        again = false;
        timer.unref();
      });
  };

  return {
    start: round,
    sync,
    trigger() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      if (timer) clearTimeout(timer);
      round();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
