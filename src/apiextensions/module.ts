// apiextensions.k8s.io/v1: CustomResourceDefinitions, and the custom resources they define,
// served from the same registry and generic store as built-in kinds (see serving.ts).
import type { GoFieldTypes } from '../apimachinery/gotypes.js';
import { ALL_VERBS, type ResourceDescriptor } from '../apimachinery/resource.js';
import { KplaneCELCostLimits } from '../featuregate/kube-features.js';
import type { FeatureLookup } from '../registry/gated-fields.js';
import type { ApiModule } from '../registry/registry.js';
import { conversionWebhookMetrics } from './conversion.js';
import { crdStrategy } from './crd-strategy.js';
import { AX, apiextensionsDefinitions } from './definitions.js';
import { celValidationRules, type ValidationRulesEngine } from './rules.js';
import { CRDServing } from './serving.js';

export const customResourceDefinitionsResource: ResourceDescriptor = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'CustomResourceDefinition', verbs: ['get', 'patch', 'update'] }],
  definitionName: AX + 'CustomResourceDefinition',
};

/** apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go and types_jsonschema.go: what the OpenAPI form loses. */
const crdGoFieldTypes: GoFieldTypes = {
  [AX + 'CustomResourceDefinitionSpec']: { scope: 'v1.ResourceScope' },
  [AX + 'CustomResourceConversion']: { strategy: 'v1.ConversionStrategyType' },
  [AX + 'CustomResourceDefinitionCondition']: { type: 'v1.CustomResourceDefinitionConditionType', status: 'v1.ConditionStatus' },
  [AX + 'JSONSchemaProps']: {
    $schema: 'v1.JSONSchemaURL',
    dependencies: 'v1.JSONSchemaDependencies',
    definitions: 'v1.JSONSchemaDefinitions',
    'x-kubernetes-validations': 'v1.ValidationRules',
  },
  [AX + 'ValidationRule']: { reason: 'v1.FieldValueErrorReason' },
};

export interface ApiExtensionsOptions {
  /** CEL for `x-kubernetes-validations` (default: src/apiextensions/cel); null: rules are shape-checked but not evaluated. */
  readonly rules?: ValidationRulesEngine | null;
  readonly log?: (msg: string) => void;
}

/** CustomResourceDefinitions and their custom resources. */
export function apiextensions(opts: ApiExtensionsOptions = {}): ApiModule {
  let serving: CRDServing | undefined;
  // The control plane's gate, known from bootstrap on (before the server reports ready): the
  // default engine asks it for KplaneCELCostLimits at each CRD check and compile.
  let features: FeatureLookup | undefined;
  const rules = opts.rules === null ? undefined : (opts.rules ?? celValidationRules({ costLimits: () => features?.enabled(KplaneCELCostLimits) ?? true }));
  return {
    name: 'apiextensions.k8s.io',
    definitions: apiextensionsDefinitions,
    // goTypedBody: bodies (and patch results) are checked as upstream's decoder reads them into
    // v1.CustomResourceDefinition, JSONSchemaProps' custom unmarshalers included (gotypes.ts).
    resources: [{ descriptor: customResourceDefinitionsResource, strategy: crdStrategy({ rules }), goTypedBody: true, goFieldTypes: crdGoFieldTypes }],
    async bootstrap(ctx) {
      features = ctx.registry.features;
      const crds = ctx.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
      if (!crds) return;
      serving = new CRDServing(ctx.registry, crds.store, ctx.client, {
        rules,
        ...(opts.log ? { log: opts.log } : {}),
        ...(ctx.metrics ? { observeConversion: conversionWebhookMetrics(ctx.metrics) } : {}),
        ...(ctx.serviceResolver ? { serviceResolver: ctx.serviceResolver } : {}),
      });
      await serving.start();
    },
    async shutdown() {
      await serving?.stop();
    },
  };
}
