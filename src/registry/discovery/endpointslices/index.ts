// discovery.k8s.io/v1 endpointslices: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { endpointSliceDefinitions } from './definitions.js';
import { endpointSliceStrategy } from './strategy.js';

export const endpointSlicesResource: ResourceDescriptor = {
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  listKind: 'EndpointSliceList',
  plural: 'endpointslices',
  singular: 'endpointslice',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.discovery.v1.EndpointSlice',
};

export const endpointSlices: ResourceRegistration = {
  descriptor: endpointSlicesResource,
  strategy: endpointSliceStrategy,
  definitions: endpointSliceDefinitions,
  goTypedBody: true,
};
