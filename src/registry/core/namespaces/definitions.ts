// io.k8s.api.core.v1.Namespace: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { GoFieldTypes } from '../../../apimachinery/gotypes.js';
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
  META,
  apiVersionField,
  arrayOf,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const namespaceDefinitions: Definitions = {
  [CORE + 'Namespace']: kind(gvk('Namespace'), 'Namespace is a scope for the names of namespaced objects.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(CORE + 'NamespaceSpec', 'Desired behaviour of the namespace.'),
    status: ref(CORE + 'NamespaceStatus', 'Observed state of the namespace. Read-only.'),
  }),

  [CORE + 'NamespaceSpec']: struct('NamespaceSpec holds the attributes of a namespace.', {
    finalizers: stringList('Opaque values that must all be removed (through the finalize subresource) before the namespace is deleted from storage.', {
      'x-kubernetes-list-type': 'atomic',
    }),
  }),

  [CORE + 'NamespaceStatus']: struct('NamespaceStatus is the observed state of a namespace.', {
    conditions: arrayOf(refTo(CORE + 'NamespaceCondition'), "Latest observations of the namespace's state, one per condition type.", {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    phase: str('Lifecycle phase: "Active", or "Terminating" once deletion has started.'),
  }),

  [CORE + 'NamespaceCondition']: struct(
    "NamespaceCondition is one observation of a namespace's state.",
    {
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed status.'),
      message: str('Human-readable details of the last transition.'),
      reason: str('One-word CamelCase reason for the last transition.'),
      status: str('"True", "False" or "Unknown".'),
      type: str('Condition type, e.g. NamespaceDeletionContentFailure.'),
    },
    { required: ['type', 'status'] },
  ),

  [CORE + 'NamespaceList']: listKind(V1, CORE + 'Namespace', 'Namespace', 'The namespaces.'),
};

/** Go types of its fields that the definitions lose (see apimachinery/gotypes.ts). */
export const namespaceGoFieldTypes: GoFieldTypes = {
  [CORE + 'NamespaceSpec']: { finalizers: '[]v1.FinalizerName' },
  [CORE + 'NamespaceStatus']: { phase: 'v1.NamespacePhase' },
  [CORE + 'NamespaceCondition']: { type: 'v1.NamespaceConditionType', status: 'v1.ConditionStatus' },
};
