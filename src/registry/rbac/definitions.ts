// io.k8s.api.rbac.v1: shapes and descriptions follow upstream's generated OpenAPI (types.go's docs).
import type { Definitions } from '../../apimachinery/schema.js';
import { refTo } from '../../apimachinery/schema.js';
import { META, apiVersionField, arrayOf, kind, kindField, listKind, ref, str, stringList, struct } from '../../apimachinery/definitions/util.js';

const R = 'io.k8s.api.rbac.v1.';
const GV = { group: 'rbac.authorization.k8s.io', version: 'v1' };
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
const metadata = ref(META + 'ObjectMeta', "Standard object's metadata.");

export const rbacDefinitions: Definitions = {
  [R + 'AggregationRule']: struct('AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole', {
    clusterRoleSelectors: arrayOf(
      refTo(META + 'LabelSelector'),
      "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules. If any of the selectors match, then the ClusterRole's permissions will be added",
      atomic,
    ),
  }),
  [R + 'ClusterRole']: kind(
    { ...GV, kind: 'ClusterRole' },
    'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.',
    {
      aggregationRule: ref(
        R + 'AggregationRule',
        'AggregationRule is an optional field that describes how to build the Rules for this ClusterRole. If AggregationRule is set, then the Rules are controller managed and direct changes to Rules will be stomped by the controller.',
      ),
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      rules: arrayOf(refTo(R + 'PolicyRule'), 'Rules holds all the PolicyRules for this ClusterRole', atomic),
    },
  ),
  [R + 'ClusterRoleBinding']: kind(
    { ...GV, kind: 'ClusterRoleBinding' },
    'ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the global namespace, and adds who information via Subject.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      roleRef: ref(
        R + 'RoleRef',
        'RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.',
      ),
      subjects: arrayOf(refTo(R + 'Subject'), 'Subjects holds references to the objects the role applies to.', atomic),
    },
    { required: ['roleRef'] },
  ),
  [R + 'ClusterRoleBindingList']: listKind(GV, R + 'ClusterRoleBinding', 'ClusterRoleBinding', 'Items is a list of ClusterRoleBindings'),
  [R + 'ClusterRoleList']: listKind(GV, R + 'ClusterRole', 'ClusterRole', 'Items is a list of ClusterRoles'),
  [R + 'PolicyRule']: struct(
    'PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.',
    {
      apiGroups: stringList(
        'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed. "" represents the core API group and "*" represents all API groups.',
        atomic,
      ),
      nonResourceURLs: stringList(
        'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path Since non-resource URLs are not namespaced, this field is only applicable for ClusterRoles referenced from a ClusterRoleBinding. Rules can either apply to API resources (such as "pods" or "secrets") or non-resource URL paths (such as "/api"),  but not both.',
        atomic,
      ),
      resourceNames: stringList(
        'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.',
        atomic,
      ),
      resources: stringList("Resources is a list of resources this rule applies to. '*' represents all resources.", atomic),
      verbs: stringList("Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs.", atomic),
    },
    { required: ['verbs'] },
  ),
  [R + 'Role']: kind({ ...GV, kind: 'Role' }, 'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata,
    rules: arrayOf(refTo(R + 'PolicyRule'), 'Rules holds all the PolicyRules for this Role', atomic),
  }),
  [R + 'RoleBinding']: kind(
    { ...GV, kind: 'RoleBinding' },
    'RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a ClusterRole in the global namespace. It adds who information via Subjects and namespace information by which namespace it exists in.  RoleBindings in a given namespace only have effect in that namespace.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      roleRef: ref(
        R + 'RoleRef',
        'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.',
      ),
      subjects: arrayOf(refTo(R + 'Subject'), 'Subjects holds references to the objects the role applies to.', atomic),
    },
    { required: ['roleRef'] },
  ),
  [R + 'RoleBindingList']: listKind(GV, R + 'RoleBinding', 'RoleBinding', 'Items is a list of RoleBindings'),
  [R + 'RoleList']: listKind(GV, R + 'Role', 'Role', 'Items is a list of Roles'),
  [R + 'RoleRef']: struct(
    'RoleRef contains information that points to the role being used',
    {
      apiGroup: str('APIGroup is the group for the resource being referenced'),
      kind: str('Kind is the type of resource being referenced'),
      name: str('Name is the name of resource being referenced'),
    },
    { required: ['apiGroup', 'kind', 'name'], 'x-kubernetes-map-type': 'atomic' },
  ),
  [R + 'Subject']: struct(
    'Subject contains a reference to the object or user identities a role binding applies to.  This can either hold a direct API object reference, or a value for non-objects such as user and group names.',
    {
      apiGroup: str(
        'APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects. Defaults to "rbac.authorization.k8s.io" for User and Group subjects.',
      ),
      kind: str(
        'Kind of object being referenced. Values defined by this API group are "User", "Group", and "ServiceAccount". If the Authorizer does not recognized the kind value, the Authorizer should report an error.',
      ),
      name: str('Name of the object being referenced.'),
      namespace: str(
        'Namespace of the referenced object.  If the object kind is non-namespace, such as "User" or "Group", and this value is not empty the Authorizer should report an error.',
      ),
    },
    { required: ['kind', 'name'], 'x-kubernetes-map-type': 'atomic' },
  ),
};
