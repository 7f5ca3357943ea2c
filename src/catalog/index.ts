// kplane/catalog: file-based operator catalogs (operator-registry's declcfg) as a library — what
// `kplane catalog` is built from. Load and write catalogs, link them into a model and validate it,
// render bundles and semver templates into catalogs, and serve a catalog over opm's registry gRPC
// API. The image toolkit (pull, build, push) and bundle parsing stay behind the CLI for now.
export * from './declcfg/types.js';
export { loadFS, loadFile, parseBlobs, catalogFiles, LoadError } from './declcfg/load.js';
export { writeJSON, writeYAML, writeFormat, writeFS, writeMermaid, WriteError, MermaidError } from './declcfg/write.js';
export type { OutputFormat, MermaidOptions } from './declcfg/write.js';
export { convertToModel, convertFromModel } from './model/convert.js';
export { validateModel } from './model/validate.js';
export { ModelConversionError, ValidationError } from './model/errors.js';
export type { Model, Package as ModelPackage, Channel as ModelChannel, Bundle as ModelBundle } from './model/types.js';
export { render, renderBundleImage, bundleImageRenderer, RenderError } from './render.js';
export type { RenderOptions } from './render.js';
export { renderSemverTemplate, readSemverTemplate, TemplateError } from './template/semver.js';
export type { RenderSemverOptions, SemverTemplate, BundleRenderer } from './template/semver.js';
export { serveCatalog } from './serve/index.js';
export type { ServeCatalogOptions, RunningCatalogServer } from './serve/index.js';
