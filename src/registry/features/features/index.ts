// features.kplane.io/v1alpha1 features: everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { FEATURES_DEF, featureDefinitions } from './definitions.js';
import { featureStrategy } from './strategy.js';
import { FEATURES_GROUP, FEATURES_VERSION } from './types.js';

export const featuresResource: ResourceDescriptor = {
  group: FEATURES_GROUP,
  version: FEATURES_VERSION,
  kind: 'Feature',
  listKind: 'FeatureList',
  plural: 'features',
  singular: 'feature',
  shortNames: ['feat'],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [
    { name: 'status', kind: 'Feature', verbs: ['get', 'patch', 'update'] },
    { name: 'uses', kind: 'FeatureUse', verbs: ['create', 'update'], definitionName: FEATURES_DEF + 'FeatureUse' },
  ],
  definitionName: FEATURES_DEF + 'Feature',
};

/** No protobuf form: kplane's own group has no generated.proto (JSON and YAML only, as a CRD's). */
export const features: ResourceRegistration = {
  descriptor: featuresResource,
  strategy: featureStrategy,
  definitions: featureDefinitions,
};

export * from './types.js';
export { foldUse, usesAgreeCondition, validateUse } from './strategy.js';
export { featureDesiredAdmission, type DynamicFeatureLookup } from './desired.js';
