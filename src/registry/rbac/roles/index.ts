// rbac.authorization.k8s.io/v1 roles: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { rbacDefinitions } from '../definitions.js';
import { roleStrategy } from '../strategy.js';

export const rolesResource: ResourceDescriptor = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'Role',
  listKind: 'RoleList',
  plural: 'roles',
  singular: 'role',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.rbac.v1.Role',
};

export const roles: ResourceRegistration = {
  descriptor: rolesResource,
  strategy: roleStrategy,
  definitions: rbacDefinitions,
  protobuf: { kind: 'k8s.io.api.rbac.v1.Role', list: 'k8s.io.api.rbac.v1.RoleList' },
  goTypedBody: true,
};
