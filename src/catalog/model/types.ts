// The catalog model: packages → channels → bundles, linked both ways, as operator-registry's
// alpha/model defines it. Built from a DeclarativeConfig by ./convert.ts; validated by
// ./validate.ts; read by the gRPC server and (later) the install resolver.
import type { Property, RelatedImage } from '../declcfg/types.js';

export interface Deprecation {
  message: string;
}

export interface Icon {
  /** raw bytes of the image */
  data: Uint8Array;
  mediatype: string;
}

export interface Package {
  name: string;
  description: string;
  icon?: Icon;
  defaultChannel?: Channel;
  channels: Map<string, Channel>;
  deprecation?: Deprecation;
}

export interface Channel {
  package: Package;
  name: string;
  bundles: Map<string, Bundle>;
  deprecation?: Deprecation;
  properties: Property[];
}

/** Typed views of a bundle's properties (opm's property.Properties). */
export interface ParsedProperties {
  packages: { packageName: string; version: string; release?: string }[];
  packagesRequired: { packageName: string; versionRange: string }[];
  gvks: { group: string; kind: string; version: string }[];
  gvksRequired: { group: string; kind: string; version: string }[];
  /** base64 data of each olm.bundle.object */
  bundleObjects: { data: string }[];
  channels: { channelName: string }[];
  csvMetadatas: Record<string, unknown>[];
  others: Property[];
}

export interface Bundle {
  package: Package;
  channel: Channel;
  name: string;
  image: string;
  replaces: string;
  skips: string[];
  skipRange: string;
  properties: Property[];
  relatedImages: RelatedImage[];
  deprecation?: Deprecation;
  /** every manifest as JSON text, when known */
  objects: string[];
  /** the CSV as JSON text, when known */
  csvJSON: string;
  propertiesP?: ParsedProperties;
  /** the olm.package property's version, as written */
  version: string;
  release?: string;
}

/** package name → package */
export type Model = Map<string, Package>;
