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
