// rbac.authorization.k8s.io/v1 rolebindings: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { rbacDefinitions } from '../definitions.js';
import { roleBindingStrategy } from '../strategy.js';

export const roleBindingsResource: ResourceDescriptor = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'RoleBinding',
  listKind: 'RoleBindingList',
  plural: 'rolebindings',
  singular: 'rolebinding',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.rbac.v1.RoleBinding',
};

export const roleBindings: ResourceRegistration = {
  descriptor: roleBindingsResource,
  strategy: roleBindingStrategy,
  definitions: rbacDefinitions,
  protobuf: { kind: 'k8s.io.api.rbac.v1.RoleBinding', list: 'k8s.io.api.rbac.v1.RoleBindingList' },
  goTypedBody: true,
};
