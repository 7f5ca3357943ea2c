// core/v1 configmaps: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { configMapDefinitions } from './definitions.js';
import { configMapStrategy } from './strategy.js';

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
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.ConfigMap',
};

export const configMaps: ResourceRegistration = {
  descriptor: configMapsResource,
  strategy: configMapStrategy,
  definitions: configMapDefinitions,
  protobuf: { kind: 'k8s.io.api.core.v1.ConfigMap', list: 'k8s.io.api.core.v1.ConfigMapList' },
  goTypedBody: true,
};
