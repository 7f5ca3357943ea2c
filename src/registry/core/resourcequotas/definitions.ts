// io.k8s.api.core.v1.ResourceQuota: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { GoFieldTypes } from '../../../apimachinery/gotypes.js';
import type { Definitions, OpenAPISchema } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
  apiVersionField,
  arrayOf,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const resourceList = (description: string): OpenAPISchema => ({ type: 'object', additionalProperties: refTo(QUANTITY), description });

export const resourceQuotaDefinitions: Definitions = {
  [CORE + 'ResourceQuota']: kind(
    { group: '', kind: 'ResourceQuota', version: 'v1' },
    'ResourceQuota sets aggregate quota restrictions enforced per namespace.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(CORE + 'ResourceQuotaSpec', 'The desired quota.'),
      status: ref(
        CORE + 'ResourceQuotaStatus',
        'The quota as enforced now: the hard limits and what is used of them. Written by the quota controller and admission.',
      ),
    },
  ),

  [CORE + 'ResourceQuotaSpec']: struct('ResourceQuotaSpec defines the desired hard limits to enforce for Quota.', {
    hard: resourceList('The hard limit for each named resource, e.g. `count/configmaps`.'),
    scopeSelector: ref(CORE + 'ScopeSelector', 'A selector of scopes every tracked object must match; an intersection with `scopes`.'),
    scopes: stringList('Filters every tracked object must match. Objects that match no scope are not counted.', { 'x-kubernetes-list-type': 'atomic' }),
  }),

  [CORE + 'ScopeSelector']: struct(
    'A scope selector represents the AND of the selectors represented by the scoped-resource selector requirements.',
    {
      matchExpressions: arrayOf(refTo(CORE + 'ScopedResourceSelectorRequirement'), 'A list of scope selector requirements by scope of the resources.', {
        'x-kubernetes-list-type': 'atomic',
      }),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  ),

  [CORE + 'ScopedResourceSelectorRequirement']: struct(
    'A scoped-resource selector requirement: a scope name, an operator and possibly values.',
    {
      operator: str('The relationship to the set of values: In, NotIn, Exists or DoesNotExist.'),
      scopeName: str('The name of the scope that the selector applies to.'),
      values: stringList('The values: non-empty for In and NotIn, empty for Exists and DoesNotExist.', { 'x-kubernetes-list-type': 'atomic' }),
    },
    { required: ['scopeName', 'operator'] },
  ),

  [CORE + 'ResourceQuotaStatus']: struct('ResourceQuotaStatus defines the enforced hard limits and observed use.', {
    hard: resourceList('The enforced hard limit for each named resource.'),
    used: resourceList('The current observed total usage of the resource in the namespace.'),
  }),

  [CORE + 'ResourceQuotaList']: listKind(V1, CORE + 'ResourceQuota', 'ResourceQuota', 'The resource quotas.'),

  [QUANTITY]: {
    type: 'string',
    description:
      'Quantity is a fixed-point representation of a number, written as a decimal with an optional SI (k, M, G, ...), binary SI (Ki, Mi, ...) or exponent (e3) suffix.',
  },
};

/** Go types of its fields that the definitions lose (see apimachinery/gotypes.ts). */
export const resourceQuotaGoFieldTypes: GoFieldTypes = {
  [CORE + 'ResourceQuotaSpec']: { scopes: '[]v1.ResourceQuotaScope' },
  [CORE + 'ScopedResourceSelectorRequirement']: { operator: 'v1.ScopeSelectorOperator', scopeName: 'v1.ResourceQuotaScope' },
};
