// The catalog's image toolkit: pull (registry or OCI layout, cached, verified), build bundle and
// catalog images, push them. Everything the rest of src/catalog needs is re-exported here.
export { pullImage } from './pull.js';
export type { PullOptions, PulledImage } from './pull.js';
export { buildBundleImage, buildCatalogImage, bundleLabels, localStoreDir, CONFIGS_LABEL } from './build.js';
export type { BuildOptions, BuiltImage } from './build.js';
export { pushImage } from './push.js';
export type { PushOptions, PushSource, PushedImage } from './push.js';
export { progressPrinter } from './progress.js';
export type { PullProgress, ProgressMode } from './progress.js';
export { OciError, isOciError } from './errors.js';
export type { OciErrorCode } from './errors.js';
export { parseReference, formatReference } from './reference.js';
export type { ImageReference } from './reference.js';
export type { Credentials, AuthOptions } from './auth.js';
export { defaultCacheDir } from './cache.js';
export { currentPlatform, parsePlatform } from './manifest.js';
export type { Platform } from './manifest.js';
