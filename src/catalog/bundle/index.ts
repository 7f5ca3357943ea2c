// Registry+v1 bundles rendered as olm.bundle blobs (opm render's bundle half).
export { renderBundleDir, bundleToDeclcfg, finishBundle, type RenderBundleDirOptions } from './render.js';
export { parseBundleDir, BundleParseError, type ParsedBundle } from './parse.js';
export { migrate, migrationsFor, migrationsHelpText, UnknownMigrationError, AllMigrations, NoMigrations } from './migrations.js';
