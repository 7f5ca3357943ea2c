// io.k8s.api.core.v1 kinds served by kplane (and the reference types they use). Shapes follow
// upstream's generated OpenAPI; descriptions are our own.

import type { Definitions } from '../../apimachinery/schema.js';
import { refTo } from '../../apimachinery/schema.js';
import {
  CORE,
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  stringMap,
  struct,
} from './util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const coreDefinitions: Definitions = {
  [CORE + 'Namespace']: kind(gvk('Namespace'), 'Namespace is a scope for the names of namespaced objects.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(CORE + 'NamespaceSpec', 'Desired behaviour of the namespace.'),
    status: ref(CORE + 'NamespaceStatus', 'Observed state of the namespace. Read-only.'),
  }),

  [CORE + 'NamespaceSpec']: struct('NamespaceSpec holds the attributes of a namespace.', {
    finalizers: stringList(
      'Opaque values that must all be removed (through the finalize subresource) before the namespace is deleted from storage.',
      { 'x-kubernetes-list-type': 'atomic' },
    ),
  }),

  [CORE + 'NamespaceStatus']: struct('NamespaceStatus is the observed state of a namespace.', {
    conditions: arrayOf(refTo(CORE + 'NamespaceCondition'), 'Latest observations of the namespace\'s state, one per condition type.', {
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    }),
    phase: str('Lifecycle phase: "Active", or "Terminating" once deletion has started.'),
  }),

  [CORE + 'NamespaceCondition']: struct(
    'NamespaceCondition is one observation of a namespace\'s state.',
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

  [CORE + 'ConfigMap']: kind(gvk('ConfigMap'), 'ConfigMap holds non-confidential configuration data as key/value pairs.', {
    apiVersion: apiVersionField,
    binaryData: {
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
      description: 'Binary values, base64-encoded in JSON. Keys may contain alphanumerics, "-", "_" and "." and must not also appear in data.',
    },
    data: stringMap('UTF-8 string values. Keys may contain alphanumerics, "-", "_" and "." and must not also appear in binaryData.'),
    immutable: bool('If true, data and binaryData can no longer be changed (only metadata); the object can only be deleted and recreated.'),
    kind: kindField,
    metadata: objectMetaField(),
  }),

  [CORE + 'ConfigMapList']: listKind(V1, CORE + 'ConfigMap', 'ConfigMap', 'The config maps.'),

  [CORE + 'Secret']: kind(gvk('Secret'), 'Secret holds confidential data, such as passwords, tokens or keys, as key/value pairs.', {
    apiVersion: apiVersionField,
    data: {
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
      description: 'Secret values, base64-encoded in JSON. Keys may contain alphanumerics, "-", "_" and ".".',
    },
    immutable: bool('If true, data can no longer be changed (only metadata); the object can only be deleted and recreated.'),
    kind: kindField,
    metadata: objectMetaField(),
    stringData: stringMap('Write-only convenience for plain-text values: merged into data on write (winning over data) and never returned.'),
    type: str('Type of the secret, used for programmatic handling, e.g. "Opaque" (the default) or "kubernetes.io/tls".'),
  }),

  [CORE + 'SecretList']: listKind(V1, CORE + 'Secret', 'Secret', 'The secrets.'),

  [CORE + 'ServiceAccount']: kind(gvk('ServiceAccount'), 'ServiceAccount is an identity for processes (such as pods) that talk to the API.', {
    apiVersion: apiVersionField,
    automountServiceAccountToken: bool('Whether pods using this service account get an API token mounted automatically. A pod may override it.'),
    imagePullSecrets: arrayOf(refTo(CORE + 'LocalObjectReference'), 'Secrets in the same namespace used to pull images for pods of this account.', {
      'x-kubernetes-list-type': 'atomic',
    }),
    kind: kindField,
    metadata: objectMetaField(),
    secrets: arrayOf(refTo(CORE + 'ObjectReference'), 'Secrets in the same namespace that pods of this account may use.', {
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    }),
  }),

  [CORE + 'ServiceAccountList']: listKind(V1, CORE + 'ServiceAccount', 'ServiceAccount', 'The service accounts.'),

  [CORE + 'ObjectReference']: struct(
    'ObjectReference points to an object (or a field within it).',
    {
      apiVersion: str('API version of the referent.'),
      fieldPath: str('Path of a field within the referent, when the reference is to part of it, e.g. "spec.containers{name}".'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      resourceVersion: str('resourceVersion of the referent this reference was made at, if any.'),
      uid: str('UID of the referent.'),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  ),

  [CORE + 'LocalObjectReference']: struct(
    'LocalObjectReference names an object in the same namespace.',
    { name: str('Name of the referent.') },
    { 'x-kubernetes-map-type': 'atomic' },
  ),

  [CORE + 'Event']: kind(
    gvk('Event'),
    'Event reports something that happened to an object. Events are kept for a limited time and are informational only.',
    {
      action: str('What was done (or failed) to the object.'),
      apiVersion: apiVersionField,
      count: int32('How many times this event has occurred.'),
      eventTime: ref(META + 'MicroTime', 'When this event was first observed.'),
      firstTimestamp: ref(META + 'Time', 'When the event was first recorded.'),
      involvedObject: ref(CORE + 'ObjectReference', 'The object this event is about.'),
      kind: kindField,
      lastTimestamp: ref(META + 'Time', 'When the most recent occurrence was recorded.'),
      message: str('Human-readable description of what happened.'),
      metadata: objectMetaField(),
      reason: str('Short machine-readable CamelCase reason for the event.'),
      related: ref(CORE + 'ObjectReference', 'A second object involved, if any.'),
      reportingComponent: str('Name of the controller that emitted the event, e.g. "kubernetes.io/kubelet".'),
      reportingInstance: str('ID of the emitting controller instance.'),
      series: ref(CORE + 'EventSeries', 'Data about the series this event belongs to; unset for a one-off event.'),
      source: ref(CORE + 'EventSource', 'The component that reported the event.'),
      type: str('Type of the event: "Normal" or "Warning".'),
    },
    { required: ['metadata', 'involvedObject'] },
  ),

  [CORE + 'EventList']: listKind(V1, CORE + 'Event', 'Event', 'The events.'),

  [CORE + 'EventSource']: struct('EventSource names the reporter of an event.', {
    component: str('Component that generated the event.'),
    host: str('Node on which the event was generated.'),
  }),

  [CORE + 'EventSeries']: struct('EventSeries describes a series of recurring events.', {
    count: int32('Occurrences in the series up to the last heartbeat.'),
    lastObservedTime: ref(META + 'MicroTime', 'When the last occurrence was observed.'),
  }),
};
