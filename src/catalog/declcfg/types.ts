// File-based catalog (FBC) blobs, as operator-registry's declcfg package defines them.
// Field order in these interfaces is the order opm writes them in JSON; keep it.
// Loaded catalogs are re-encoded as opm re-encodes them (through Go maps: keys sorted, numbers as
// float64); values built in memory (rendered bundles) keep their order, see declcfg/write.ts.

export const SchemaPackage = 'olm.package';
export const SchemaChannel = 'olm.channel';
export const SchemaBundle = 'olm.bundle';
export const SchemaDeprecation = 'olm.deprecations';

export const PropertyPackage = 'olm.package';
export const PropertyPackageRequired = 'olm.package.required';
export const PropertyGVK = 'olm.gvk';
export const PropertyGVKRequired = 'olm.gvk.required';
export const PropertyBundleObject = 'olm.bundle.object';
export const PropertyCSVMetadata = 'olm.csv.metadata';
export const PropertyConstraint = 'olm.constraint';
export const PropertyChannel = 'olm.channel';

export interface Property {
  type: string;
  value: unknown;
}

export interface Icon {
  /** base64 text, as in the blob's `base64data` */
  base64data: string;
  mediatype: string;
}

export interface Package {
  schema: typeof SchemaPackage;
  name: string;
  defaultChannel: string;
  icon?: Icon;
  description?: string;
  properties?: Property[];
}

export interface ChannelEntry {
  name: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
}

export interface Channel {
  schema: typeof SchemaChannel;
  name: string;
  package: string;
  entries: ChannelEntry[];
  properties?: Property[];
}

export interface RelatedImage {
  name: string;
  image: string;
}

export interface Bundle {
  schema: typeof SchemaBundle;
  name: string;
  package: string;
  image: string;
  properties?: Property[];
  relatedImages?: RelatedImage[];
  /** not written: the CSV as JSON text, when the bundle was rendered from manifests */
  csvJSON?: string;
  /** not written: every manifest of the bundle as JSON text */
  objects?: string[];
}

export interface PackageScopedReference {
  schema: string;
  name?: string;
}

export interface DeprecationEntry {
  reference: PackageScopedReference;
  message: string;
}

export interface Deprecation {
  schema: typeof SchemaDeprecation;
  package: string;
  entries: DeprecationEntry[];
}

/** Any other blob: its schema, package and name, and the blob itself (key order kept). */
export interface Meta {
  schema: string;
  package: string;
  name: string;
  blob: Record<string, unknown>;
}

export interface DeclarativeConfig {
  packages: Package[];
  channels: Channel[];
  bundles: Bundle[];
  deprecations: Deprecation[];
  others: Meta[];
}

export function emptyConfig(): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
}

/** Appends src's blobs to dst (opm's DeclarativeConfig.Merge). */
export function mergeConfig(dst: DeclarativeConfig, src: DeclarativeConfig): DeclarativeConfig {
  dst.packages.push(...src.packages);
  dst.channels.push(...src.channels);
  dst.bundles.push(...src.bundles);
  dst.others.push(...src.others);
  dst.deprecations.push(...src.deprecations);
  return dst;
}
