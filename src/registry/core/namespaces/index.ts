// core/v1 namespaces: everything the control plane needs to serve the kind.
import type { ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { namespaceDefinitions, namespaceGoFieldTypes } from './definitions.js';
import { namespaceStrategy } from './strategy.js';

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

export const namespaces: ResourceRegistration = {
  descriptor: namespacesResource,
  strategy: namespaceStrategy,
  definitions: namespaceDefinitions,
  protobuf: { kind: 'k8s.io.api.core.v1.Namespace', list: 'k8s.io.api.core.v1.NamespaceList' },
  goFieldTypes: namespaceGoFieldTypes,
  returnDeletedObject: true,
  goTypedBody: true,
};
