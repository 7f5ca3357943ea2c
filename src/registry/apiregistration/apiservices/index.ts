// apiregistration.k8s.io/v1 apiservices: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { APIREGISTRATION_DEF, apiServiceDefinitions } from './definitions.js';
import { apiServiceStrategy } from './strategy.js';
import { APIREGISTRATION_GROUP, APIREGISTRATION_VERSION } from './types.js';

export const apiServicesResource: ResourceDescriptor = {
  group: APIREGISTRATION_GROUP,
  version: APIREGISTRATION_VERSION,
  kind: 'APIService',
  listKind: 'APIServiceList',
  plural: 'apiservices',
  singular: 'apiservice',
  shortNames: [],
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'APIService', verbs: ['get', 'patch', 'update'] }],
  definitionName: APIREGISTRATION_DEF + 'APIService',
};

/** No protobuf form yet (JSON and YAML): kplane carries no apiregistration generated.proto. */
export const apiServices: ResourceRegistration = {
  descriptor: apiServicesResource,
  strategy: apiServiceStrategy,
  definitions: apiServiceDefinitions,
  goTypedBody: true,
};

export * from './types.js';
export { availableCell, serviceCell, validateAPIService } from './strategy.js';
