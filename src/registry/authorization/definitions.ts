// io.k8s.api.authorization.v1: shapes and descriptions follow upstream's generated OpenAPI.
import type { Definitions } from '../../apimachinery/schema.js';
import { refTo } from '../../apimachinery/schema.js';
import { META, apiVersionField, arrayOf, bool, kind, kindField, ref, str, stringList, struct } from '../../apimachinery/definitions/util.js';

const A = 'io.k8s.api.authorization.v1.';
const GV = { group: 'authorization.k8s.io', version: 'v1' };
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
const metadata = ref(
  META + 'ObjectMeta',
  'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
);
const statusField = ref(A + 'SubjectAccessReviewStatus', 'Status is filled in by the server and indicates whether the request is allowed or not');

const selectorAttributes = (what: string): ReturnType<typeof struct> =>
  struct(`${what}SelectorAttributes indicates a ${what.toLowerCase()} limited access.`, {
    rawSelector: str('rawSelector is the serialization of a selector that would be included in a query parameter.'),
    requirements: arrayOf(
      refTo(what === 'Label' ? META + 'LabelSelectorRequirement' : META + 'FieldSelectorRequirement'),
      'requirements is the parsed interpretation of a selector.',
      atomic,
    ),
  });

export const authorizationDefinitions: Definitions = {
  [A + 'FieldSelectorAttributes']: selectorAttributes('Field'),
  [A + 'LabelSelectorAttributes']: selectorAttributes('Label'),
  [META + 'FieldSelectorRequirement']: struct(
    'FieldSelectorRequirement is a selector that contains values, a key, and an operator that relates the key and values.',
    {
      key: str('key is the field selector key that the requirement applies to.'),
      operator: str("operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists, DoesNotExist."),
      values: stringList('values is an array of string values.', atomic),
    },
    { required: ['key', 'operator'] },
  ),
  [A + 'LocalSubjectAccessReview']: kind(
    { ...GV, kind: 'LocalSubjectAccessReview' },
    'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace. Having a namespace scoped resource makes it much easier to grant namespace scoped policy that includes permissions checking.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      spec: ref(
        A + 'SubjectAccessReviewSpec',
        'Spec holds information about the request being evaluated.  spec.namespace must be equal to the namespace you made the request against.  If empty, it is defaulted.',
      ),
      status: statusField,
    },
    { required: ['spec'] },
  ),
  [A + 'NonResourceAttributes']: struct(
    'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface',
    {
      path: str('Path is the URL path of the request'),
      verb: str('Verb is the standard HTTP verb'),
    },
  ),
  [A + 'NonResourceRule']: struct(
    'NonResourceRule holds information that describes a rule for the non-resource',
    {
      nonResourceURLs: stringList(
        'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path.  "*" means all.',
        atomic,
      ),
      verbs: stringList('Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, patch, head, options.  "*" means all.', atomic),
    },
    { required: ['verbs'] },
  ),
  [A + 'ResourceAttributes']: struct('ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface', {
    fieldSelector: ref(
      A + 'FieldSelectorAttributes',
      'fieldSelector describes the limitation on access based on field.  It can only limit access, not broaden it.',
    ),
    group: str('Group is the API Group of the Resource.  "*" means all.'),
    labelSelector: ref(
      A + 'LabelSelectorAttributes',
      'labelSelector describes the limitation on access based on labels.  It can only limit access, not broaden it.',
    ),
    name: str('Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.'),
    namespace: str(
      'Namespace is the namespace of the action being requested.  Currently, there is no distinction between no namespace and all namespaces "" (empty) is defaulted for LocalSubjectAccessReviews "" (empty) is empty for cluster-scoped resources "" (empty) means "all" for namespace scoped resources from a SubjectAccessReview or SelfSubjectAccessReview',
    ),
    resource: str('Resource is one of the existing resource types.  "*" means all.'),
    subresource: str('Subresource is one of the existing resource types.  "" means none.'),
    verb: str('Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy.  "*" means all.'),
    version: str('Version is the API Version of the Resource.  "*" means all.'),
  }),
  [A + 'ResourceRule']: struct(
    "ResourceRule is the list of actions the subject is allowed to perform on resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
    {
      apiGroups: stringList(
        'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed.  "*" means all.',
        atomic,
      ),
      resourceNames: stringList(
        'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.  "*" means all.',
        atomic,
      ),
      resources: stringList(
        'Resources is a list of resources this rule applies to.  "*" means all in the specified apiGroups.\n "*/foo" represents the subresource \'foo\' for all resources in the specified apiGroups.',
        atomic,
      ),
      verbs: stringList('Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, delete, proxy.  "*" means all.', atomic),
    },
    { required: ['verbs'] },
  ),
  [A + 'SelfSubjectAccessReview']: kind(
    { ...GV, kind: 'SelfSubjectAccessReview' },
    'SelfSubjectAccessReview checks whether or the current user can perform an action.  Not filling in a spec.namespace means "in all namespaces".  Self is a special case, because users should always be able to check whether they can perform an action',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      spec: ref(A + 'SelfSubjectAccessReviewSpec', 'Spec holds information about the request being evaluated.  user and groups must be empty'),
      status: statusField,
    },
    { required: ['spec'] },
  ),
  [A + 'SelfSubjectAccessReviewSpec']: struct(
    'SelfSubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set',
    {
      nonResourceAttributes: ref(A + 'NonResourceAttributes', 'NonResourceAttributes describes information for a non-resource access request'),
      resourceAttributes: ref(A + 'ResourceAttributes', 'ResourceAuthorizationAttributes describes information for a resource access request'),
    },
  ),
  [A + 'SelfSubjectRulesReview']: kind(
    { ...GV, kind: 'SelfSubjectRulesReview' },
    "SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace. The returned list of actions may be incomplete depending on the server's authorization mode, and any errors experienced during the evaluation. SelfSubjectRulesReview should be used by UIs to show/hide actions, or to quickly let an end user reason about their permissions. It should NOT Be used by external systems to drive authorization decisions as this raises confused deputy, cache lifetime/revocation, and correctness concerns. SubjectAccessReview, and LocalAccessReview are the correct way to defer authorization decisions to the API server.",
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      spec: ref(A + 'SelfSubjectRulesReviewSpec', 'Spec holds information about the request being evaluated.'),
      status: ref(A + 'SubjectRulesReviewStatus', 'Status is filled in by the server and indicates the set of actions a user can perform.'),
    },
    { required: ['spec'] },
  ),
  [A + 'SelfSubjectRulesReviewSpec']: struct('SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.', {
    namespace: str('Namespace to evaluate rules for. Required.'),
  }),
  [A + 'SubjectAccessReview']: kind(
    { ...GV, kind: 'SubjectAccessReview' },
    'SubjectAccessReview checks whether or not a user or group can perform an action.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata,
      spec: ref(A + 'SubjectAccessReviewSpec', 'Spec holds information about the request being evaluated'),
      status: statusField,
    },
    { required: ['spec'] },
  ),
  [A + 'SubjectAccessReviewSpec']: struct(
    'SubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set',
    {
      extra: {
        type: 'object',
        additionalProperties: { type: 'array', items: { type: 'string' } },
        description:
          'Extra corresponds to the user.Info.GetExtra() method from the authenticator.  Since that is input to the authorizer it needs a reflection here.',
      },
      groups: stringList("Groups is the groups you're testing for.", atomic),
      nonResourceAttributes: ref(A + 'NonResourceAttributes', 'NonResourceAttributes describes information for a non-resource access request'),
      resourceAttributes: ref(A + 'ResourceAttributes', 'ResourceAuthorizationAttributes describes information for a resource access request'),
      uid: str('UID information about the requesting user.'),
      user: str(
        'User is the user you\'re testing for. If you specify "User" but not "Groups", then is it interpreted as "What if User were not a member of any groups',
      ),
    },
  ),
  [A + 'SubjectAccessReviewStatus']: struct(
    'SubjectAccessReviewStatus',
    {
      allowed: bool('Allowed is required. True if the action would be allowed, false otherwise.'),
      denied: bool(
        'Denied is optional. True if the action would be denied, otherwise false. If both allowed is false and denied is false, then the authorizer has no opinion on whether to authorize the action. Denied may not be true if Allowed is true.',
      ),
      evaluationError: str(
        'EvaluationError is an indication that some error occurred during the authorization check. It is entirely possible to get an error and be able to continue determine authorization status in spite of it. For instance, RBAC can be missing a role, but enough roles are still present and bound to reason about the request.',
      ),
      reason: str('Reason is optional.  It indicates why a request was allowed or denied.'),
    },
    { required: ['allowed'] },
  ),
  [A + 'SubjectRulesReviewStatus']: struct(
    "SubjectRulesReviewStatus contains the result of a rules check. This check can be incomplete depending on the set of authorizers the server is configured with and any errors experienced during evaluation. Because authorization rules are additive, if a rule appears in a list it's safe to assume the subject has that permission, even if that list is incomplete.",
    {
      evaluationError: str(
        "EvaluationError can appear in combination with Rules. It indicates an error occurred during rule evaluation, such as an authorizer that doesn't support rule evaluation, and that ResourceRules and/or NonResourceRules may be incomplete.",
      ),
      incomplete: bool(
        "Incomplete is true when the rules returned by this call are incomplete. This is most commonly encountered when an authorizer, such as an external authorizer, doesn't support rules evaluation.",
      ),
      nonResourceRules: arrayOf(
        refTo(A + 'NonResourceRule'),
        "NonResourceRules is the list of actions the subject is allowed to perform on non-resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
        atomic,
      ),
      resourceRules: arrayOf(
        refTo(A + 'ResourceRule'),
        "ResourceRules is the list of actions the subject is allowed to perform on resources. The list ordering isn't significant, may contain duplicates, and possibly be incomplete.",
        atomic,
      ),
    },
    { required: ['resourceRules', 'nonResourceRules', 'incomplete'] },
  ),
};
