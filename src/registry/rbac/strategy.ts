// The four RBAC kinds' strategies (pkg/registry/rbac/<kind>/strategy.go): validation as
// pkg/apis/rbac/validation, defaults as the v1 defaulters, tables as kubectl prints them.
import type { KubeObject } from '../../apimachinery/types.js';
import { nameIsPathSegment } from '../../apimachinery/validation/names.js';
import type { Strategy, TableColumn } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';
import { defaultBinding, roleRefOf, validateAggregationRule, validateBinding, validateRoleRefUnchanged, validateRules } from './validation.js';

const base = {
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  // minimalNameRequirements: path.IsValidPathSegmentName, through core's ValidateObjectMeta.
  nameValidator: nameIsPathSegment,
  finalizerNames: 'kube',
  prepareForCreate() {},
  prepareForUpdate() {},
} as const;

export const roleStrategy: Strategy = {
  ...base,
  namespaced: true,
  validate: (o) => validateRules(o, true),
  validateUpdate: (o) => validateRules(o, true),
};

export const clusterRoleStrategy: Strategy = {
  ...base,
  namespaced: false,
  validate: (o) => [...validateRules(o, false), ...validateAggregationRule(o)],
  validateUpdate: (o) => [...validateRules(o, false), ...validateAggregationRule(o)],
};

/** printers.go: roleBindingsColumnDefinitions / clusterRoleBindingsColumnDefinitions. */
function bindingColumns(what: 'roleBinding' | 'clusterRoleBinding', roleRefDescription: string): TableColumn[] {
  return [
    nameColumn,
    { name: 'Role', type: 'string', description: roleRefDescription, priority: 0 },
    ageColumn,
    { name: 'Users', type: 'string', description: `Users in the ${what}`, priority: 1 },
    { name: 'Groups', type: 'string', description: `Groups in the ${what}`, priority: 1 },
    { name: 'ServiceAccounts', type: 'string', description: `ServiceAccounts in the ${what}`, priority: 1 },
  ];
}

/** printRoleBinding: `Kind/name`, age, then users, groups and `namespace/name` ServiceAccounts. */
function bindingCells(o: KubeObject): unknown[] {
  const ref = roleRefOf(o);
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of (Array.isArray(o.subjects) ? o.subjects : []) as { kind?: string; name?: string; namespace?: string }[]) {
    if (s.kind === 'ServiceAccount') sas.push(`${s.namespace ?? ''}/${s.name ?? ''}`);
    else if (s.kind === 'User') users.push(s.name ?? '');
    else if (s.kind === 'Group') groups.push(s.name ?? '');
  }
  return [
    o.metadata?.name ?? '',
    `${ref.kind ?? ''}/${ref.name ?? ''}`,
    ageSince(o.metadata?.creationTimestamp),
    users.join(', '),
    groups.join(', '),
    sas.join(', '),
  ];
}

export const roleBindingStrategy: Strategy = {
  ...base,
  namespaced: true,
  defaults: defaultBinding,
  validate: (o) => validateBinding(o, true),
  validateUpdate: (o, old) => [...validateBinding(o, true), ...validateRoleRefUnchanged(o, old)],
  tableColumns: bindingColumns(
    'roleBinding',
    'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  ),
  tableCells: bindingCells,
};

export const clusterRoleBindingStrategy: Strategy = {
  ...base,
  namespaced: false,
  defaults: defaultBinding,
  validate: (o) => validateBinding(o, false),
  validateUpdate: (o, old) => [...validateBinding(o, false), ...validateRoleRefUnchanged(o, old)],
  tableColumns: bindingColumns(
    'clusterRoleBinding',
    'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.',
  ),
  tableCells: bindingCells,
};
