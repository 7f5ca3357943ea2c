// core/v1 services: everything the control plane needs to serve the kind, with the allocators
// its REST uses (one set per control plane: the module builds them from its options).
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import type { ServiceAllocators } from './alloc.js';
import { serviceDefinitions } from './definitions.js';
import { serviceStrategy } from './strategy.js';

export const servicesResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Service',
  listKind: 'ServiceList',
  plural: 'services',
  singular: 'service',
  shortNames: ['svc'],
  categories: ['all'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'Service', verbs: ['get', 'patch', 'update'] }],
  definitionName: 'io.k8s.api.core.v1.Service',
};

export function services(alloc: ServiceAllocators): ResourceRegistration {
  return {
    descriptor: servicesResource,
    strategy: serviceStrategy(alloc),
    definitions: serviceDefinitions,
    protobuf: { kind: 'k8s.io.api.core.v1.Service', list: 'k8s.io.api.core.v1.ServiceList' },
    goTypedBody: true,
  };
}
