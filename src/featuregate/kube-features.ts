// The generic API server's features that kplane implements and can turn off, with upstream's names
// and versioned specs (k8s.io/apiserver/pkg/features, as of the API level kplane serves, 1.33).
// Capabilities of kplane's own that upstream has no gate for get a `Kplane` prefix, a name
// upstream will not take: KplaneWatchCache, KplaneCELCostLimits.
import { Alpha, Beta, FeatureGate, GA, type FeatureGateOptions, type VersionedSpecs } from './feature-gate.js';
import { Version } from './version.js';

/** The Kubernetes minor version kplane's API matches: its gates' binary version. */
export const KUBE_BINARY_VERSION = Version.majorMinor(1, 33);

/** Each API server keeps an identity Lease `apiserver-<hash>` in kube-system (KEP-1965). */
export const APIServerIdentity = 'APIServerIdentity';
/** gzip of GET and LIST responses (compression filter). */
export const APIResponseCompression = 'APIResponseCompression';
/** Consistent lists (no resourceVersion) served from the watch cache once it has caught up. */
export const ConsistentListFromCache = 'ConsistentListFromCache';
/** Lease `spec.strategy` and `spec.preferredHolder` (coordinated leader election, KEP-4444). */
export const CoordinatedLeaderElection = 'CoordinatedLeaderElection';
/**
 * kplane's own: lists and watches served from memory (the watch cache). Off is `--watch-cache=false`;
 * the cache runs only when both the flag and the gate allow it (upstream's pattern for a flag
 * and a gate of one capability, as --enable-priority-and-fairness with APIPriorityAndFairness).
 */
export const KplaneWatchCache = 'KplaneWatchCache';
/**
 * kplane's own: the cost limits of CRD validation rules (x-kubernetes-validations), the static
 * estimates checked when a CRD is written and the runtime per-call limit and per-request budget.
 * Off lifts them; evaluation keeps its wall-clock guard.
 */
export const KplaneCELCostLimits = 'KplaneCELCostLimits';
/**
 * admissionregistration.k8s.io's MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (KEP-3962):
 * served, and their admission plugin active, only with the gate on, as upstream (alpha in 1.32,
 * beta in 1.34, off by default in both).
 */
export const MutatingAdmissionPolicy = 'MutatingAdmissionPolicy';
/** `sendInitialEvents=true` watches (streaming lists). */
export const WatchList = 'WatchList';

const v = (s: string): Version => Version.parse(s);

export const KUBE_FEATURES: Readonly<Record<string, VersionedSpecs>> = {
  // Dynamic (kplane's mark, KEP-0007): each response asks the gate whether it may be gzipped, and
  // nothing is stored or cached that depends on the answer, so it may turn at runtime.
  [APIResponseCompression]: [
    { version: v('1.8'), default: false, preRelease: Alpha, dynamic: true },
    { version: v('1.16'), default: true, preRelease: Beta, dynamic: true },
  ],
  [APIServerIdentity]: [
    { version: v('1.20'), default: false, preRelease: Alpha },
    { version: v('1.26'), default: true, preRelease: Beta },
  ],
  [ConsistentListFromCache]: [
    { version: v('1.28'), default: false, preRelease: Alpha },
    { version: v('1.31'), default: true, preRelease: Beta },
    { version: v('1.34'), default: true, preRelease: GA, lockToDefault: true },
  ],
  [CoordinatedLeaderElection]: [
    { version: v('1.31'), default: false, preRelease: Alpha },
    { version: v('1.33'), default: false, preRelease: Beta },
  ],
  [KplaneCELCostLimits]: [{ version: v('1.30'), default: true, preRelease: Beta }],
  [KplaneWatchCache]: [{ version: v('1.30'), default: true, preRelease: Beta }],
  [MutatingAdmissionPolicy]: [
    { version: v('1.32'), default: false, preRelease: Alpha },
    { version: v('1.34'), default: false, preRelease: Beta },
  ],
  [WatchList]: [
    { version: v('1.27'), default: false, preRelease: Alpha },
    { version: v('1.32'), default: true, preRelease: Beta },
    { version: v('1.33'), default: false, preRelease: Beta },
    { version: v('1.34'), default: true, preRelease: Beta },
  ],
};

/**
 * A gate with kplane's features at `emulationVersion` (default: the binary version). kplane
 * overrides one default, as OverrideDefault is meant for: WatchList stays on at 1.33 (upstream
 * turned it off for 1.33 only, for its JSON and protobuf streaming encoders; kplane's watch lists
 * worked before and clients that ask for them keep getting them).
 */
export function newKubeFeatureGate(emulationVersion: Version = KUBE_BINARY_VERSION, opts: FeatureGateOptions = {}): FeatureGate {
  const g = new FeatureGate(emulationVersion, opts);
  g.addVersioned(KUBE_FEATURES);
  if (!emulationVersion.lessThan(Version.majorMinor(1, 32))) g.overrideDefault(WatchList, true);
  return g;
}
