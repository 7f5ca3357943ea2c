// core/v1 pods (with /status): the subset a node simulator needs, as kwok uses it.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { podDefinitions } from './definitions.js';
import { podStrategy } from './strategy.js';
import { bindingDefinitions } from './binding.js';
import { coreReferenceDefinitions, coreReferenceGoFieldTypes } from '../references.js';

export const podsResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  listKind: 'PodList',
  plural: 'pods',
  singular: 'pod',
  shortNames: ['po'],
  categories: ['all'],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [
    { name: 'binding', kind: 'Binding', verbs: ['create'] },
    { name: 'status', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
  ],
  definitionName: 'io.k8s.api.core.v1.Pod',
};

export const pods: ResourceRegistration = {
  descriptor: podsResource,
  strategy: podStrategy,
  definitions: { ...podDefinitions, ...bindingDefinitions, ...coreReferenceDefinitions },
  goFieldTypes: coreReferenceGoFieldTypes,
  goTypedBody: true,
};
