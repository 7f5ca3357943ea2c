// io.k8s.api.admissionregistration.v1: the webhook configurations. Shapes follow upstream's
// generated OpenAPI; descriptions are our own.
import type { Definitions, OpenAPISchema } from '../../apimachinery/schema.js';
import {
  META,
  apiVersionField,
  arrayOf,
  int32,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../../apimachinery/definitions/util.js';

const AR = 'io.k8s.api.admissionregistration.v1.';
const GV = { group: 'admissionregistration.k8s.io', version: 'v1' };
const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
/** A list of objects keyed by `name` (webhooks, matchConditions). */
const mapByName: Partial<OpenAPISchema> = {
  'x-kubernetes-list-map-keys': ['name'],
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': 'name',
  'x-kubernetes-patch-strategy': 'merge',
};

const common = {
  admissionReviewVersions: stringList('AdmissionReview versions the webhook accepts, in order of preference; kplane sends the first it knows (v1).', atomic),
  clientConfig: ref(AR + 'WebhookClientConfig', 'How to reach the webhook.'),
  failurePolicy: str('What an error calling the webhook does: Fail (default) refuses the request, Ignore lets it through.'),
  matchConditions: arrayOf(ref(AR + 'MatchCondition', ''), 'CEL conditions that must all hold for the webhook to be called.', mapByName),
  matchPolicy: str('Exact matches only the rules as written; Equivalent (default) also matches other versions of the same resource.'),
  name: str("The webhook's name, a fully qualified domain name, unique within the configuration."),
  namespaceSelector: ref(META + 'LabelSelector', 'Selects the namespaces (by their labels) whose objects are sent to the webhook; empty: all.'),
  objectSelector: ref(META + 'LabelSelector', 'Selects the objects (by their labels, old or new) sent to the webhook; empty: all.'),
  rules: arrayOf(ref(AR + 'RuleWithOperations', ''), 'The operations and resources the webhook cares about.', atomic),
  sideEffects: str('Whether calling the webhook has side effects: None or NoneOnDryRun (dry-run requests are only sent to these).'),
  timeoutSeconds: int32('How long to wait for the webhook (1 to 30 seconds, default 10); then the failure policy decides.'),
};

export const admissionRegistrationDefinitions: Definitions = {
  [AR + 'ValidatingWebhookConfiguration']: kind({ ...GV, kind: 'ValidatingWebhookConfiguration' }, 'Webhooks that may refuse a request, called in parallel.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    webhooks: arrayOf(ref(AR + 'ValidatingWebhook', ''), 'The webhooks.', mapByName),
  }),
  [AR + 'ValidatingWebhookConfigurationList']: listKind(GV, AR + 'ValidatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'The configurations.'),
  [AR + 'MutatingWebhookConfiguration']: kind(
    { ...GV, kind: 'MutatingWebhookConfiguration' },
    'Webhooks that may change or refuse a request, called one after another.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      webhooks: arrayOf(ref(AR + 'MutatingWebhook', ''), 'The webhooks.', mapByName),
    },
  ),
  [AR + 'MutatingWebhookConfigurationList']: listKind(GV, AR + 'MutatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'The configurations.'),
  [AR + 'ValidatingWebhook']: struct('A webhook that may refuse requests.', common, {
    required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'],
  }),
  [AR + 'MutatingWebhook']: struct(
    'A webhook that may change or refuse requests.',
    {
      ...common,
      reinvocationPolicy: str('Never (default), or IfNeeded: called again when a later webhook changed the object.'),
    },
    { required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'] },
  ),
  [AR + 'WebhookClientConfig']: struct('Where the webhook is: a URL or a Service, and the CA that signed its certificate.', {
    caBundle: {
      type: 'string',
      format: 'byte',
      description: "PEM certificates that sign the webhook's serving certificate; absent: the system's trust roots.",
    },
    service: ref(AR + 'ServiceReference', 'A Service in front of the webhook.'),
    url: str("The webhook's https URL (no user information, query or fragment)."),
  }),
  [AR + 'ServiceReference']: struct(
    'A Service reference.',
    {
      name: str("The Service's name."),
      namespace: str("The Service's namespace."),
      path: str('The URL path requests are sent to.'),
      port: int32('The port (default 443).'),
    },
    { required: ['namespace', 'name'] },
  ),
  [AR + 'RuleWithOperations']: struct('Operations and resources a webhook is called for.', {
    apiGroups: stringList('API groups; `*` for all, "" for core.', atomic),
    apiVersions: stringList('API versions; `*` for all.', atomic),
    operations: stringList('CREATE, UPDATE, DELETE, CONNECT or `*`.', atomic),
    resources: stringList('Resources, `resource/subresource`, with `*` wildcards.', atomic),
    scope: str('Cluster, Namespaced or `*` (default).'),
  }),
  [AR + 'MatchCondition']: struct(
    'A CEL condition.',
    { expression: str('The CEL expression.'), name: str("The condition's name.") },
    { required: ['name', 'expression'] },
  ),
};

// ---------- ValidatingAdmissionPolicy and its binding ----------

const namedRule = struct('Operations and resources (optionally by name) a policy applies to.', {
  apiGroups: stringList('API groups; `*` for all, "" for core.', atomic),
  apiVersions: stringList('API versions; `*` for all.', atomic),
  operations: stringList('CREATE, UPDATE, DELETE, CONNECT or `*`.', atomic),
  resourceNames: stringList('Names the rule applies to; empty: all.', atomic),
  resources: stringList('Resources, `resource/subresource`, with `*` wildcards.', atomic),
  scope: str('Cluster, Namespaced or `*` (default).'),
});

export const validatingAdmissionPolicyDefinitions: Definitions = {
  [AR + 'ValidatingAdmissionPolicy']: kind(
    { ...GV, kind: 'ValidatingAdmissionPolicy' },
    'CEL validations that may refuse a request, applied through bindings.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(AR + 'ValidatingAdmissionPolicySpec', 'What the policy checks.'),
      status: ref(AR + 'ValidatingAdmissionPolicyStatus', 'What the server found checking the policy.'),
    },
  ),
  [AR + 'ValidatingAdmissionPolicyList']: listKind(GV, AR + 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicy', 'The policies.'),
  [AR + 'ValidatingAdmissionPolicySpec']: struct('A policy.', {
    auditAnnotations: arrayOf(ref(AR + 'AuditAnnotation', ''), 'Audit annotations CEL computes for matching requests.', atomic),
    failurePolicy: str('What an error evaluating the policy does: Fail (default) or Ignore.'),
    matchConditions: arrayOf(ref(AR + 'MatchCondition', ''), 'CEL conditions that must all hold for the policy to apply.', mapByName),
    matchConstraints: ref(AR + 'MatchResources', 'The requests the policy can apply to.'),
    paramKind: ref(AR + 'ParamKind', 'The kind of the parameter objects bindings point at.'),
    validations: arrayOf(ref(AR + 'Validation', ''), 'CEL expressions that must all be true.', atomic),
    variables: arrayOf(ref(AR + 'Variable', ''), 'Named CEL expressions the others read as `variables.<name>`.', atomic),
  }),
  [AR + 'ValidatingAdmissionPolicyStatus']: struct('What the server found checking a policy.', {
    conditions: arrayOf(ref(META + 'Condition', ''), 'Conditions.', { 'x-kubernetes-list-map-keys': ['type'], 'x-kubernetes-list-type': 'map' }),
    observedGeneration: { type: 'integer', format: 'int64', description: 'The generation checked.' },
    typeChecking: ref(AR + 'TypeChecking', 'Warnings of the type check.'),
  }),
  [META + 'Condition']: struct(
    'One aspect of the current state of an object.',
    {
      lastTransitionTime: { type: 'string', format: 'date-time', description: 'When the condition last changed status.' },
      message: str('Details for humans.'),
      observedGeneration: { type: 'integer', format: 'int64', description: 'The generation the condition was set for.' },
      reason: str('Why, in CamelCase.'),
      status: str('True, False or Unknown.'),
      type: str('The type, in CamelCase.'),
    },
    { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
  ),
  [AR + 'TypeChecking']: struct('Type check results.', {
    expressionWarnings: arrayOf(ref(AR + 'ExpressionWarning', ''), 'Warnings, one per expression.', atomic),
  }),
  [AR + 'ExpressionWarning']: struct(
    'A warning about one expression.',
    { fieldRef: str('Path of the expression, e.g. spec.validations[0].expression.'), warning: str('The warning.') },
    { required: ['fieldRef', 'warning'] },
  ),
  [AR + 'MatchResources']: struct('Which requests match, by resource, namespace and object labels.', {
    excludeResourceRules: arrayOf(ref(AR + 'NamedRuleWithOperations', ''), 'Requests to leave out.', atomic),
    matchPolicy: str('Exact or Equivalent (default).'),
    namespaceSelector: ref(META + 'LabelSelector', 'Selects namespaces by their labels; empty: all.'),
    objectSelector: ref(META + 'LabelSelector', 'Selects objects by their labels; empty: all.'),
    resourceRules: arrayOf(ref(AR + 'NamedRuleWithOperations', ''), 'Requests to include.', atomic),
  }),
  [AR + 'NamedRuleWithOperations']: namedRule,
  [AR + 'ParamKind']: struct('A group/version and kind.', { apiVersion: str('group/version.'), kind: str('The kind.') }),
  [AR + 'Validation']: struct(
    'A CEL expression that must be true.',
    {
      expression: str('The CEL expression.'),
      message: str('The message of a refusal.'),
      messageExpression: str('A CEL expression giving the message of a refusal.'),
      reason: str("The refusal's reason: Unauthorized, Forbidden, Invalid (default) or RequestEntityTooLarge."),
    },
    { required: ['expression'] },
  ),
  [AR + 'Variable']: struct(
    'A named CEL expression.',
    { expression: str('The CEL expression.'), name: str('The name.') },
    { required: ['name', 'expression'], 'x-kubernetes-map-type': 'atomic' },
  ),
  [AR + 'AuditAnnotation']: struct(
    'An audit annotation computed by CEL.',
    { key: str('The key (prefixed with the policy name).'), valueExpression: str('CEL giving the value (string or null).') },
    { required: ['key', 'valueExpression'] },
  ),
  [AR + 'ValidatingAdmissionPolicyBinding']: kind(
    { ...GV, kind: 'ValidatingAdmissionPolicyBinding' },
    'Applies a ValidatingAdmissionPolicy to requests, with parameters.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(AR + 'ValidatingAdmissionPolicyBindingSpec', 'The binding.'),
    },
  ),
  [AR + 'ValidatingAdmissionPolicyBindingList']: listKind(GV, AR + 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBinding', 'The bindings.'),
  [AR + 'ValidatingAdmissionPolicyBindingSpec']: struct('A binding.', {
    matchResources: ref(AR + 'MatchResources', 'Narrows the requests the policy applies to.'),
    paramRef: ref(AR + 'ParamRef', 'The parameter object(s).'),
    policyName: str('The policy bound.'),
    validationActions: stringList('Deny, Warn and/or Audit.', { 'x-kubernetes-list-type': 'set' }),
  }),
  [AR + 'ParamRef']: struct('Which parameter objects a binding uses.', {
    name: str('One object by name.'),
    namespace: str('Their namespace (for namespaced kinds; empty: the request’s).'),
    parameterNotFoundAction: str('Allow or Deny when no parameter object is found.'),
    selector: ref(META + 'LabelSelector', 'Every object matching these labels.'),
  }),
};
