// rbac.authorization.k8s.io/v1 clusterrolebindings: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { rbacDefinitions } from '../definitions.js';
import { clusterRoleBindingStrategy } from '../strategy.js';

export const clusterRoleBindingsResource: ResourceDescriptor = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRoleBinding',
  listKind: 'ClusterRoleBindingList',
  plural: 'clusterrolebindings',
  singular: 'clusterrolebinding',
  shortNames: [],
  categories: [],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.rbac.v1.ClusterRoleBinding',
};

export const clusterRoleBindings: ResourceRegistration = {
  descriptor: clusterRoleBindingsResource,
  strategy: clusterRoleBindingStrategy,
  definitions: rbacDefinitions,
  protobuf: { kind: 'k8s.io.api.rbac.v1.ClusterRoleBinding', list: 'k8s.io.api.rbac.v1.ClusterRoleBindingList' },
  goTypedBody: true,
};
