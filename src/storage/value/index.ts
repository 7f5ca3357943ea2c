export {
  loadEncryptionConfig,
  readEncryptionConfig,
  decodeEncryptionConfig,
  validateEncryptionConfiguration,
  buildTransformers,
  EncryptionConfigError,
} from './config.js';
export type { EncryptionConfiguration, ResourceTransformers, GroupResource } from './config.js';
export { KeyTransformers, transformStorage } from './transforming-storage.js';
export type { StoredResource } from './transforming-storage.js';
export { TransformError, PrefixTransformers, identityTransformer } from './transformer.js';
export type { Transformer, TransformContext, TransformationMetrics } from './transformer.js';
export { createTransformationMetrics } from './metrics.js';
