// OpenAPI definitions of apiextensions.k8s.io/v1 (names, shapes, required fields and list types as
// in upstream's swagger; descriptions are our own) and of autoscaling/v1 Scale, which the `scale`
// subresource of custom resources speaks.
import type { Definitions, OpenAPISchema } from '../apimachinery/schema.js';
import { refTo } from '../apimachinery/schema.js';
import {
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  int64,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../apimachinery/definitions/util.js';

export const AX = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
export const SCALE_DEFINITION = 'io.k8s.api.autoscaling.v1.Scale';
const AS = 'io.k8s.api.autoscaling.v1.';
const GV = { group: 'apiextensions.k8s.io', version: 'v1' };

const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
const anyJSON = (description: string): OpenAPISchema => ({ description });
const schemaRef = (description: string): OpenAPISchema => ref(AX + 'JSONSchemaProps', description);
const schemaMap = (description: string): OpenAPISchema => ({ type: 'object', additionalProperties: refTo(AX + 'JSONSchemaProps'), description });

export const apiextensionsDefinitions: Definitions = {
  [AX + 'CustomResourceDefinition']: kind(
    { ...GV, kind: 'CustomResourceDefinition' },
    'CustomResourceDefinition defines a new resource type; the server serves its objects under /apis/<group>/<version>/<plural>. Its name is <plural>.<group>.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(AX + 'CustomResourceDefinitionSpec', 'What the new resource type is: group, names, scope and versions.'),
      status: ref(AX + 'CustomResourceDefinitionStatus', 'What the server made of the definition: accepted names, conditions, stored versions.'),
    },
    { required: ['spec'] },
  ),
  [AX + 'CustomResourceDefinitionList']: listKind(GV, AX + 'CustomResourceDefinition', 'CustomResourceDefinition', 'The custom resource definitions.'),

  [AX + 'CustomResourceDefinitionSpec']: struct(
    'CustomResourceDefinitionSpec describes the resource type a definition introduces.',
    {
      conversion: ref(AX + 'CustomResourceConversion', 'How objects are converted between the versions of the resource.'),
      group: str(
        'API group of the resource, served at /apis/<group>/...; must be a DNS subdomain with at least one dot and match the definition name <plural>.<group>.',
      ),
      names: ref(AX + 'CustomResourceDefinitionNames', 'Resource and kind names of the resource.'),
      preserveUnknownFields: bool(
        'Legacy: keep fields the schema does not describe. Must be false in v1; use x-kubernetes-preserve-unknown-fields in the schema instead.',
      ),
      scope: str('Whether objects live in a namespace ("Namespaced") or in the cluster ("Cluster").'),
      versions: arrayOf(
        refTo(AX + 'CustomResourceDefinitionVersion'),
        'Versions of the resource. Exactly one is the storage version; served versions are listed in discovery by kube version priority.',
        atomic,
      ),
    },
    { required: ['group', 'names', 'scope', 'versions'] },
  ),

  [AX + 'CustomResourceDefinitionNames']: struct(
    'CustomResourceDefinitionNames are the names a resource is known by.',
    {
      categories: stringList('Groups of resources this one belongs to, such as "all"; `kubectl get <category>` lists them together.', atomic),
      kind: str('Kind of the objects, in CamelCase, e.g. "CronTab".'),
      listKind: str('Kind of lists of the objects; defaults to "<kind>List".'),
      plural: str('Plural name used in URLs, lower case, e.g. "crontabs"; must match the first part of the definition name.'),
      shortNames: stringList('Short aliases clients may use for the resource, e.g. "ct".', atomic),
      singular: str('Singular name, lower case; defaults to the lower-cased kind.'),
    },
    { required: ['plural', 'kind'] },
  ),

  [AX + 'CustomResourceDefinitionVersion']: struct(
    'CustomResourceDefinitionVersion describes one version of a custom resource.',
    {
      additionalPrinterColumns: arrayOf(
        refTo(AX + 'CustomResourceColumnDefinition'),
        'Extra columns of Table output (kubectl get). Without any, an Age column is shown.',
        atomic,
      ),
      deprecated: bool('Whether the version is deprecated; requests to it receive a warning.'),
      deprecationWarning: str('Replaces the default warning returned to clients of a deprecated version.'),
      name: str('Version name, served at /apis/<group>/<name>/...; a DNS-1035 label such as "v1" or "v2beta1".'),
      schema: ref(AX + 'CustomResourceValidation', 'Schema used to validate, prune and default objects of this version.'),
      selectableFields: arrayOf(refTo(AX + 'SelectableField'), 'Fields that field selectors may use, besides metadata.name and metadata.namespace.', atomic),
      served: bool('Whether the version is served by the REST API.'),
      storage: bool('Whether objects are persisted in this version. Exactly one version must be the storage version.'),
      subresources: ref(AX + 'CustomResourceSubresources', 'Subresources (status, scale) served for this version.'),
    },
    { required: ['name', 'served', 'storage'] },
  ),

  [AX + 'CustomResourceValidation']: struct('CustomResourceValidation holds the schema of a version.', {
    openAPIV3Schema: schemaRef('The OpenAPI v3 schema objects must satisfy; it must be structural.'),
  }),

  [AX + 'CustomResourceColumnDefinition']: struct(
    'CustomResourceColumnDefinition describes one column of Table output.',
    {
      description: str('Human-readable description of the column.'),
      format: str('OpenAPI format of the column, e.g. "int32" or "date-time"; "name" marks the primary key column.'),
      jsonPath: str('Simple JSONPath, evaluated against each object, that produces the cell value.'),
      name: str('Header of the column.'),
      priority: int32('Importance of the column: 0 is shown by default, higher numbers only in wide output.'),
      type: str('OpenAPI type of the cell: integer, number, string, boolean or date.'),
    },
    { required: ['name', 'type', 'jsonPath'] },
  ),

  [AX + 'SelectableField']: struct(
    'SelectableField names a field usable in field selectors.',
    { jsonPath: str('Simple JSONPath of a string, integer or boolean field, e.g. ".spec.color".') },
    { required: ['jsonPath'] },
  ),

  [AX + 'CustomResourceSubresources']: struct('CustomResourceSubresources lists the subresources served for custom resources.', {
    scale: ref(AX + 'CustomResourceSubresourceScale', 'Serves /scale, reading and writing an autoscaling/v1 Scale mapped onto the object.'),
    status: ref(AX + 'CustomResourceSubresourceStatus', 'Serves /status: the main resource ignores status changes and /status ignores everything else.'),
  }),
  [AX + 'CustomResourceSubresourceStatus']: {
    description: 'CustomResourceSubresourceStatus enables the status subresource. It has no fields.',
    type: 'object',
  },
  [AX + 'CustomResourceSubresourceScale']: struct(
    'CustomResourceSubresourceScale maps the scale subresource onto fields of the object.',
    {
      labelSelectorPath: str('JSONPath (under .spec or .status) of the label selector, in string form, reported as Scale status.selector.'),
      specReplicasPath: str('JSONPath under .spec of the desired replica count (Scale spec.replicas).'),
      statusReplicasPath: str('JSONPath under .status of the observed replica count (Scale status.replicas).'),
    },
    { required: ['specReplicasPath', 'statusReplicasPath'] },
  ),

  [AX + 'CustomResourceConversion']: struct(
    'CustomResourceConversion says how objects move between versions.',
    {
      strategy: str('"None" rewrites only apiVersion; "Webhook" calls an external converter.'),
      webhook: ref(AX + 'WebhookConversion', 'The converter to call; required for strategy Webhook.'),
    },
    { required: ['strategy'] },
  ),
  [AX + 'WebhookConversion']: struct(
    'WebhookConversion describes a conversion webhook.',
    {
      clientConfig: ref(AX + 'WebhookClientConfig', 'How to reach the webhook.'),
      conversionReviewVersions: stringList('ConversionReview versions the webhook understands, in order of preference.', atomic),
    },
    { required: ['conversionReviewVersions'] },
  ),
  [AX + 'WebhookClientConfig']: struct('WebhookClientConfig tells how to connect to a webhook.', {
    caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle that signs the webhook serving certificate.' },
    service: ref(AX + 'ServiceReference', 'An in-cluster service serving the webhook.'),
    url: str('HTTPS URL of the webhook, for webhooks outside the cluster.'),
  }),
  [AX + 'ServiceReference']: struct(
    'ServiceReference points at a Service.',
    {
      name: str('Name of the service.'),
      namespace: str('Namespace of the service.'),
      path: str('URL path requests are sent to.'),
      port: int32('Port of the service; defaults to 443.'),
    },
    { required: ['namespace', 'name'] },
  ),

  [AX + 'CustomResourceDefinitionStatus']: struct('CustomResourceDefinitionStatus is what the server made of a definition.', {
    acceptedNames: ref(AX + 'CustomResourceDefinitionNames', 'Names actually served; they differ from spec.names when those conflict with another definition.'),
    conditions: arrayOf(refTo(AX + 'CustomResourceDefinitionCondition'), 'Conditions such as NamesAccepted and Established.', {
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
    storedVersions: stringList('Every version that has ever been the storage version; objects may still be stored in any of them.', atomic),
  }),
  [AX + 'CustomResourceDefinitionCondition']: struct(
    'CustomResourceDefinitionCondition is one observation about a definition.',
    {
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed status.'),
      message: str('Human-readable details.'),
      reason: str('Machine-readable CamelCase reason for the last transition.'),
      status: str('"True", "False" or "Unknown".'),
      type: str('Condition type, e.g. "Established" or "NamesAccepted".'),
    },
    { required: ['type', 'status'] },
  ),

  [AX + 'JSONSchemaProps']: struct('JSONSchemaProps is a JSON-Schema (OpenAPI v3 subset) node.', {
    $ref: str('Not allowed in CRD schemas.'),
    $schema: str('Not allowed in CRD schemas.'),
    additionalItems: ref(AX + 'JSONSchemaPropsOrBool', 'Not allowed in CRD schemas.'),
    additionalProperties: ref(AX + 'JSONSchemaPropsOrBool', 'Schema of the values of a map (an object without properties).'),
    allOf: arrayOf(refTo(AX + 'JSONSchemaProps'), 'Every schema must match.', atomic),
    anyOf: arrayOf(refTo(AX + 'JSONSchemaProps'), 'At least one schema must match.', atomic),
    default: ref(AX + 'JSON', 'Default value, filled in when the field is missing (and on read from storage).'),
    definitions: schemaMap('Not allowed in CRD schemas.'),
    dependencies: { type: 'object', additionalProperties: refTo(AX + 'JSONSchemaPropsOrStringArray'), description: 'Not allowed in CRD schemas.' },
    description: str('Description of the value.'),
    enum: arrayOf(refTo(AX + 'JSON'), 'Allowed values.', atomic),
    example: ref(AX + 'JSON', 'An example value.'),
    exclusiveMaximum: bool('The maximum itself is excluded.'),
    exclusiveMinimum: bool('The minimum itself is excluded.'),
    externalDocs: ref(AX + 'ExternalDocumentation', 'Further documentation.'),
    format: str('Format of a string (e.g. date-time, int-or-string, uuid) or number.'),
    id: str('Not allowed in CRD schemas.'),
    items: ref(AX + 'JSONSchemaPropsOrArray', 'Schema of the items of an array.'),
    maxItems: int64('Largest number of items.'),
    maxLength: int64('Longest string length.'),
    maxProperties: int64('Largest number of properties.'),
    maximum: { type: 'number', format: 'double', description: 'Largest value.' },
    minItems: int64('Smallest number of items.'),
    minLength: int64('Shortest string length.'),
    minProperties: int64('Smallest number of properties.'),
    minimum: { type: 'number', format: 'double', description: 'Smallest value.' },
    multipleOf: { type: 'number', format: 'double', description: 'The value must be a multiple of this.' },
    not: schemaRef('The schema must not match.'),
    nullable: bool('null is an allowed value.'),
    oneOf: arrayOf(refTo(AX + 'JSONSchemaProps'), 'Exactly one schema must match.', atomic),
    pattern: str('Regular expression a string must match.'),
    patternProperties: schemaMap('Not allowed in CRD schemas.'),
    properties: schemaMap('Schemas of the fields of an object.'),
    required: stringList('Fields that must be present.', atomic),
    title: str('Title of the value.'),
    type: str('Type: object, array, string, integer, number or boolean.'),
    uniqueItems: bool('Not allowed to be true in CRD schemas.'),
    'x-kubernetes-embedded-resource': bool('The value is a complete object with apiVersion, kind and metadata.'),
    'x-kubernetes-int-or-string': bool('The value is an integer or a string.'),
    'x-kubernetes-list-map-keys': stringList('Keys identifying items of a map list.', atomic),
    'x-kubernetes-list-type': str('How a list is merged: atomic, set or map.'),
    'x-kubernetes-map-type': str('How a map is merged: granular or atomic.'),
    'x-kubernetes-preserve-unknown-fields': bool('Keep fields the schema does not describe.'),
    'x-kubernetes-validations': arrayOf(refTo(AX + 'ValidationRule'), 'CEL rules the value must satisfy.', {
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['rule'],
      'x-kubernetes-patch-merge-key': 'rule',
      'x-kubernetes-patch-strategy': 'merge',
    }),
  }),
  [AX + 'JSON']: anyJSON('JSON is any JSON value.'),
  [AX + 'JSONSchemaPropsOrArray']: anyJSON('JSONSchemaPropsOrArray is a schema or an array of schemas.'),
  [AX + 'JSONSchemaPropsOrBool']: anyJSON('JSONSchemaPropsOrBool is a schema or a boolean.'),
  [AX + 'JSONSchemaPropsOrStringArray']: anyJSON('JSONSchemaPropsOrStringArray is a schema or a list of strings.'),
  [AX + 'ExternalDocumentation']: struct('ExternalDocumentation points at documentation elsewhere.', {
    description: str('What the documentation is.'),
    url: str('Where it is.'),
  }),
  [AX + 'ValidationRule']: struct(
    'ValidationRule is a CEL expression the value must satisfy.',
    {
      fieldPath: str('Field the error is reported at, relative to the node the rule is on.'),
      message: str('Message reported when the rule fails.'),
      messageExpression: str('CEL expression producing the message.'),
      optionalOldSelf: bool('Run a transition rule also when there is no old value (oldSelf is then an empty optional).'),
      reason: str('Reason reported when the rule fails: FieldValueInvalid (default), FieldValueForbidden, FieldValueRequired or FieldValueDuplicate.'),
      rule: str('The CEL expression; `self` is the value, `oldSelf` the value before an update.'),
    },
    { required: ['rule'] },
  ),

  [AS + 'Scale']: kind({ group: 'autoscaling', version: 'v1', kind: 'Scale' }, 'Scale is the replica count of a scalable resource.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(AS + 'ScaleSpec', 'Desired replicas.'),
    status: ref(AS + 'ScaleStatus', 'Observed replicas; read-only.'),
  }),
  [AS + 'ScaleSpec']: struct('ScaleSpec is the desired scale.', { replicas: int32('Desired number of instances.') }),
  [AS + 'ScaleStatus']: struct(
    'ScaleStatus is the observed scale.',
    {
      replicas: int32('Observed number of instances.'),
      selector: str('Label selector of the instances, in string form (as `kubectl get -l` takes it).'),
    },
    { required: ['replicas'] },
  ),
};
