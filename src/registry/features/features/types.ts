// features.kplane.io/v1alpha1 Feature and FeatureUse: the shapes, enum values and limits shared by
// the strategy, the OpenAPI definitions and the components that report uses (KEP-0007 step 2).

export const FEATURES_GROUP = 'features.kplane.io';
export const FEATURES_VERSION = 'v1alpha1';
export const FEATURES_API_VERSION = `${FEATURES_GROUP}/${FEATURES_VERSION}`;
/** The namespace (component class) of kplane's own features. */
export const KPLANE_FEATURE_CLASS = 'kube-system';

export type FeatureValue = 'Enabled' | 'Disabled';
export const FEATURE_VALUES: readonly FeatureValue[] = ['Enabled', 'Disabled'];
/** status.state: clients treat a value they do not know as Off (new values may be added). */
export const FEATURE_STATES = ['On', 'Off', 'TurningOn', 'TurningOff'] as const;
export const FEATURE_SOURCES = ['Default', 'CommandLine', 'API'] as const;
export const FEATURE_STABILITIES = ['Unavailable', 'Alpha', 'Beta', 'GA', 'Deprecated', 'Universal'] as const;
export const TASK_TYPES = ['WaitForUses', 'ClearField', 'WaitForObjectsRemoved', 'DeleteCollection', 'Custom'] as const;
export const TASK_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Blocked'] as const;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** Condition types the server flow publishes (others may be added). */
export const CONDITION_USES_AGREE = 'UsesAgree';

/** How many uses one Feature keeps: one per reporting instance; past it a new reporter gets a 422. */
export const MAX_USES = 1000;
/** Longest component, identity and version a use may carry. */
export const MAX_COMPONENT_LENGTH = 253;
export const MAX_IDENTITY_LENGTH = 253;
export const MAX_VERSION_LENGTH = 64;
export const MAX_TASKS = 64;
export const MAX_CONDITIONS = 32;

/** One component instance's use of a feature: the value its gate answers. */
export interface FeatureUse {
  component: string;
  /** The reporting instance (an API server's identity Lease holder, a pod name). */
  identity: string;
  version?: string;
  value: FeatureValue;
  /** When this instance first reported this value (kept while it reports the same). */
  reportTime?: string;
}

export interface FeatureTask {
  name: string;
  type: string;
  params?: Record<string, string>;
  phase?: string;
  attempts?: number;
  lastAttemptTime?: string;
  progress?: { continue?: string; processed?: number; changed?: number };
  message?: string;
}

export interface FeatureCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface FeatureStatus {
  observedGeneration?: number;
  stability?: string;
  version?: string;
  default?: FeatureValue;
  lockedToDefault?: boolean;
  dynamic?: boolean;
  source?: string;
  intended?: FeatureValue;
  state?: string;
  transition?: { target?: string; startTime?: string; leader?: string; tasks?: FeatureTask[] };
  uses?: FeatureUse[];
  useEvaluationTime?: string;
  lastAnnouncedTime?: string;
  unavailableSinceVersion?: string;
  conditions?: FeatureCondition[];
}

export interface FeatureObject {
  apiVersion?: string;
  kind?: string;
  metadata?: import('../../../apimachinery/types.js').ObjectMeta;
  spec?: { desired?: FeatureValue };
  status?: FeatureStatus;
}
