// rbac.authorization.k8s.io/v1 clusterroles: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { rbacDefinitions } from '../definitions.js';
import { clusterRoleStrategy } from '../strategy.js';

export const clusterRolesResource: ResourceDescriptor = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRole',
  listKind: 'ClusterRoleList',
  plural: 'clusterroles',
  singular: 'clusterrole',
  shortNames: [],
  categories: [],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.rbac.v1.ClusterRole',
};

export const clusterRoles: ResourceRegistration = {
  descriptor: clusterRolesResource,
  strategy: clusterRoleStrategy,
  definitions: rbacDefinitions,
  protobuf: { kind: 'k8s.io.api.rbac.v1.ClusterRole', list: 'k8s.io.api.rbac.v1.ClusterRoleList' },
  goTypedBody: true,
};
