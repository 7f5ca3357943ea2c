// core/v1 serviceaccounts: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { coreReferenceDefinitions, coreReferenceGoFieldTypes } from '../references.js';
import { serviceAccountDefinitions } from './definitions.js';
import { serviceAccountStrategy } from './strategy.js';

// serviceaccounts/token (TokenRequest) is added by withTokenRequest (token.ts) when the control
// plane has a token issuer, as upstream installs TokenREST only with one.
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
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.core.v1.ServiceAccount',
};

export const serviceAccounts: ResourceRegistration = {
  descriptor: serviceAccountsResource,
  strategy: serviceAccountStrategy,
  definitions: { ...serviceAccountDefinitions, ...coreReferenceDefinitions },
  protobuf: { kind: 'k8s.io.api.core.v1.ServiceAccount', list: 'k8s.io.api.core.v1.ServiceAccountList' },
  goFieldTypes: coreReferenceGoFieldTypes,
  returnDeletedObject: true,
  goTypedBody: true,
};
