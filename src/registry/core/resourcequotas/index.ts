// core/v1 resourcequotas: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { resourceQuotaDefinitions, resourceQuotaGoFieldTypes } from './definitions.js';
import { resourceQuotaStrategy } from './strategy.js';

export const resourceQuotasResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  listKind: 'ResourceQuotaList',
  plural: 'resourcequotas',
  singular: 'resourcequota',
  shortNames: ['quota'],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'ResourceQuota', verbs: ['get', 'patch', 'update'] }],
  definitionName: 'io.k8s.api.core.v1.ResourceQuota',
};

export const resourceQuotas: ResourceRegistration = {
  descriptor: resourceQuotasResource,
  strategy: resourceQuotaStrategy,
  definitions: resourceQuotaDefinitions,
  protobuf: { kind: 'k8s.io.api.core.v1.ResourceQuota', list: 'k8s.io.api.core.v1.ResourceQuotaList' },
  goFieldTypes: resourceQuotaGoFieldTypes,
  goTypedBody: true,
};
