// features.kplane.io/v1alpha1: the Feature kind and the FeatureUse a component posts to
// `features/<name>/uses`. The shape is research §5.2 (KEP-0007), with the differences that KEP
// lists; descriptions are our own.
import type { Definitions, OpenAPISchema } from '../../../apimachinery/schema.js';
import {
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  int64,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringMap,
  struct,
} from '../../../apimachinery/definitions/util.js';
import { FEATURES_GROUP, FEATURES_VERSION } from './types.js';

export const FEATURES_DEF = 'io.kplane.features.v1alpha1.';
const GV = { group: FEATURES_GROUP, version: FEATURES_VERSION };

const enumOf = (values: readonly string[], description: string): OpenAPISchema => ({ ...str(description), enum: [...values] });

const useFields: Record<string, OpenAPISchema> = {
  component: str('The component (kube-apiserver, kube-controller-manager, a third-party controller).'),
  identity: str('The reporting instance (an API server identity Lease holder, a pod name). One use is kept per component and identity.'),
  reportTime: ref(META + 'Time', 'When this instance first reported this value. Set by the server.'),
  value: enumOf(['Enabled', 'Disabled'], "The value the component's gate answers."),
  version: str("The component's version."),
};

export const featureDefinitions: Definitions = {
  [FEATURES_DEF + 'Feature']: kind(
    { ...GV, kind: 'Feature' },
    'Feature is one feature of one component class (the namespace; kube-system for the control plane) as the cluster runs it: the value intended, the state of turning it on or off, and the value each component instance reports using.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(FEATURES_DEF + 'FeatureSpec', 'What an administrator wants for the feature.'),
      status: ref(
        FEATURES_DEF + 'FeatureStatus',
        'The feature as the server flow sees it. Written through the status subresource only; uses through the uses subresource.',
      ),
    },
  ),
  [FEATURES_DEF + 'FeatureSpec']: struct('FeatureSpec is the desired value of a dynamic feature.', {
    desired: enumOf(
      ['Enabled', 'Disabled'],
      'The value an administrator sets for a feature the server runs as dynamic (--dynamic-features). Unset: the command line or the default decides.',
    ),
  }),
  [FEATURES_DEF + 'FeatureStatus']: struct('FeatureStatus is the feature as the leading API server evaluates it, and the uses components report.', {
    conditions: arrayOf(ref(FEATURES_DEF + 'FeatureCondition', ''), 'UsesAgree, Progressing, Settled, TasksBlocked.', {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
    }),
    default: enumOf(['Enabled', 'Disabled'], "The feature's default at the leader's version."),
    dynamic: bool('Whether spec.desired is honoured for this feature.'),
    intended: enumOf(['Enabled', 'Disabled'], 'The value the server flow drives the feature toward.'),
    lastAnnouncedTime: ref(META + 'Time', 'When a server that knows the feature last announced it.'),
    lockedToDefault: bool('Whether the feature is locked to its default.'),
    observedGeneration: int64('The generation of spec this status reflects.'),
    source: enumOf(['Default', 'CommandLine', 'API'], 'Where the intended value comes from: the default, --feature-gates, or spec.desired.'),
    stability: enumOf(
      ['Unavailable', 'Alpha', 'Beta', 'GA', 'Deprecated', 'Universal'],
      "The feature's stage at the leader's version; Unavailable when the leader does not know it (after a downgrade).",
    ),
    state: enumOf(
      ['On', 'Off', 'TurningOn', 'TurningOff'],
      'Whether the feature is on, off, or being turned on or off. New values may be added: a client treats a value it does not know as Off.',
    ),
    transition: ref(FEATURES_DEF + 'FeatureTransition', 'The transition under way, while state is TurningOn or TurningOff.'),
    unavailableSinceVersion: str('The version of the first leader that did not know the feature.'),
    useEvaluationTime: ref(META + 'Time', 'When the uses are next compared with the intended value.'),
    uses: arrayOf(ref(FEATURES_DEF + 'FeatureUseStatus', ''), 'The value each component instance reports using, one entry per (component, identity).', {
      'x-kubernetes-list-map-keys': ['component', 'identity'],
      'x-kubernetes-list-type': 'map',
    }),
    version: str("The leader's (emulated) version the stage and default are read at."),
  }),
  [FEATURES_DEF + 'FeatureTransition']: struct('FeatureTransition is a feature being turned on or off: its tasks, run strictly in order.', {
    leader: str('The identity of the API server running the transition.'),
    startTime: ref(META + 'Time', 'When the transition started.'),
    target: enumOf(['On', 'Off'], 'The state the transition ends in.'),
    tasks: arrayOf(ref(FEATURES_DEF + 'FeatureTask', ''), 'The tasks, in the order they run.', {
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
    }),
  }),
  [FEATURES_DEF + 'FeatureTask']: struct(
    'FeatureTask is one step of a transition (WaitForUses, ClearField, WaitForObjectsRemoved, DeleteCollection, Custom) and its progress.',
    {
      attempts: int32('How many times the task was attempted.'),
      lastAttemptTime: ref(META + 'Time', 'When the task was last attempted.'),
      message: str('What the task last reported, for people.'),
      name: str('The task name, unique within the transition.'),
      params: stringMap("The task's parameters (a resource, a field path, an evaluation period)."),
      phase: enumOf(['Pending', 'Running', 'Succeeded', 'Failed', 'Blocked'], 'Where the task is.'),
      progress: ref(FEATURES_DEF + 'FeatureTaskProgress', 'How far the task got; a new leader resumes from it.'),
      type: str('The task type. A leader that does not know a type blocks on it, never skips it.'),
    },
    { required: ['name', 'type'] },
  ),
  [FEATURES_DEF + 'FeatureTaskProgress']: struct('FeatureTaskProgress is how far a task got.', {
    changed: int64('Objects the task changed.'),
    continue: str('The list continue token to resume from.'),
    processed: int64('Objects the task looked at.'),
  }),
  [FEATURES_DEF + 'FeatureCondition']: struct(
    'FeatureCondition is one aspect of the feature (metav1.Condition).',
    {
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed status.'),
      message: str('Details for people.'),
      observedGeneration: int64('The generation the condition was set for.'),
      reason: str('Why, in CamelCase.'),
      status: enumOf(['True', 'False', 'Unknown'], 'True, False or Unknown.'),
      type: str('The condition type, in CamelCase.'),
    },
    { required: ['type', 'status'] },
  ),
  [FEATURES_DEF + 'FeatureUse']: kind(
    { ...GV, kind: 'FeatureUse' },
    'FeatureUse is the value one component instance uses for a feature. POST or PUT it to features/<name>/uses; the same report again changes nothing.',
    { apiVersion: apiVersionField, kind: kindField, metadata: objectMetaField('Optional; the name, when given, is the Feature reported on.'), ...useFields },
    { required: ['component', 'identity', 'value'] },
  ),
  [FEATURES_DEF + 'FeatureUseStatus']: struct('FeatureUseStatus is one reported use as the Feature keeps it.', useFields, {
    required: ['component', 'identity', 'value'],
  }),
  [FEATURES_DEF + 'FeatureList']: listKind(GV, FEATURES_DEF + 'Feature', 'Feature', 'The features.'),
};
