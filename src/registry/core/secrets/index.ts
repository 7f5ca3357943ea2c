// core/v1 secrets: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { secretDefinitions, secretGoFieldTypes } from './definitions.js';
import { secretStrategy } from './strategy.js';

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
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.Secret',
};

export const secrets: ResourceRegistration = {
  descriptor: secretsResource,
  strategy: secretStrategy,
  definitions: secretDefinitions,
  protobuf: { kind: 'k8s.io.api.core.v1.Secret', list: 'k8s.io.api.core.v1.SecretList' },
  goFieldTypes: secretGoFieldTypes,
  goTypedBody: true,
};
