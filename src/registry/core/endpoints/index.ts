// core/v1 endpoints: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { endpointsDefinitions } from './definitions.js';
import { endpointsStrategy } from './strategy.js';

export const endpointsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  listKind: 'EndpointsList',
  plural: 'endpoints',
  singular: 'endpoints',
  shortNames: ['ep'],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.Endpoints',
};

export const endpoints: ResourceRegistration = {
  descriptor: endpointsResource,
  strategy: endpointsStrategy,
  definitions: endpointsDefinitions,
  goTypedBody: true,
};
