// Descriptors of the built-in resources, matching what kube-apiserver's discovery reports for them
// (verbs, short names, categories, subresources), grouped by group-version.

import type { ResourceDescriptor } from '../apimachinery/resource.js';

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

// ---- core/v1

// Namespaces have no deletecollection upstream: deleting every namespace in one call is not offered.
export const namespacesResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  categories: [],
  namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [
    { name: 'finalize', kind: 'Namespace', verbs: ['update'] },
    { name: 'status', kind: 'Namespace', verbs: ['get', 'patch', 'update'] },
  ],
  definitionName: 'io.k8s.api.core.v1.Namespace',
};

export const configMapsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.ConfigMap',
};

export const secretsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.Secret',
};

// Upstream also serves serviceaccounts/token (TokenRequest); kplane does not issue tokens yet.
export const serviceAccountsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  listKind: 'ServiceAccountList',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.ServiceAccount',
};

export const eventsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.Event',
};

// ---- events.k8s.io/v1

export const eventsV1EventsResource: ResourceDescriptor = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.events.v1.Event',
};

// ---- coordination.k8s.io/v1

export const leasesResource: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL,
  subresources: [],
  definitionName: 'io.k8s.api.coordination.v1.Lease',
};

export const coreV1Resources: readonly ResourceDescriptor[] = [
  configMapsResource,
  eventsResource,
  namespacesResource,
  secretsResource,
  serviceAccountsResource,
];
export const eventsV1Resources: readonly ResourceDescriptor[] = [eventsV1EventsResource];
export const coordinationV1Resources: readonly ResourceDescriptor[] = [leasesResource];

/** Every built-in resource, core first, then groups by name (the order discovery lists them in). */
export const builtinResources: readonly ResourceDescriptor[] = [...coreV1Resources, ...coordinationV1Resources, ...eventsV1Resources];
