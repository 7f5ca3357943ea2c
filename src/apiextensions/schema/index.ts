// Structural-schema machinery for CustomResourceDefinitions: pure functions, no I/O.
export type { Extensions, Generic, JSONSchemaProps, NestedValueValidation, Structural, StructuralOrBool, ValidationRule, ValueValidation } from './types.js';
export {
  MAX_SCHEMA_DEPTH,
  StructuralConversionError,
  newStructural,
  validateCRDSchemaNodes,
  validateOpenAPIV3Schema,
  validateStructural,
  type CRDSchemaValidationOptions,
  type StructuralValidationOptions,
} from './structural.js';
export { decodeObjectMeta, validateEmbeddedResources, validateObject, validateOpenAPI, type ValidateObjectOptions } from './validate.js';
export { coerceCheck, prune, pruneObjectMeta, type PruneOptions } from './prune.js';
export {
  applyDefaults,
  defaultAndPruneNulls,
  needsDefaulting,
  pruneNonNullableNullsWithoutDefaults,
  validateDefaults,
  type ValidateDefaultsOptions,
} from './defaults.js';
export { canonicalJSON, validateListSetsAndMaps, validateListTypeExtensions, validateMapListKeysMapSet } from './listtype.js';
export { SUPPORTED_STRING_FORMATS, effectiveFormat, formatChecker } from '../../apimachinery/openapi/formats.js';
