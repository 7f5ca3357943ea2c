// What both semver template algorithms share: the bundle renderer's contract, reading the
// olm.package property of a rendered bundle, build-metadata collision checks, channel names, and
// the Go error-aggregation format opm prints.

import type { Bundle, Channel, DeclarativeConfig, Package } from '../declcfg/types.js';
import { PropertyPackage, SchemaChannel, SchemaPackage } from '../declcfg/types.js';
import { goQuote } from '../../golang/strconv.js';
import { Version, parse as parseVersion } from '../../golang/semver.js';
import { GoDecodeError, decodeJSONInto, unmarshalYAMLInto, type GoType } from './godecode.js';

/**
 * Renders one bundle reference from a template. A Bundle is the usual answer; a DeclarativeConfig
 * (what `opm render` gives for a ref) is accepted too, and must then hold exactly one bundle.
 */
export type BundleRenderer = (image: string) => Promise<Bundle | DeclarativeConfig>;

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

export type ChannelArchetype = 'candidate' | 'fast' | 'stable';
/** In order of increasing stability. */
export const ARCHETYPES: readonly ChannelArchetype[] = ['candidate', 'fast', 'stable'];
export const CHANNEL_PRIORITY: Readonly<Record<ChannelArchetype, number>> = { candidate: 0, fast: 1, stable: 2 };

export function channelNameFromMinor(prefix: string, v: Version): string {
  return `${prefix}-v${v.major}.${v.minor}`;
}
export function channelNameFromMajor(prefix: string, v: Version): string {
  return `${prefix}-v${v.major}`;
}

export function newPackage(name: string): Package {
  return { schema: SchemaPackage, name, defaultChannel: '' };
}

/** k8s.io/apimachinery's errors.NewAggregate(errs).Error(): one message, or "[a, b]" deduplicated. */
export function aggregateMessage(msgs: readonly string[]): string {
  if (msgs.length === 1) return msgs[0]!;
  const seen: string[] = [];
  for (const m of msgs) if (!seen.includes(m)) seen.push(m);
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** Calls the renderer and normalises its answer to one bundle, with opm's message otherwise. */
export async function renderOne(render: BundleRenderer, image: string): Promise<Bundle[]> {
  const r = await render(image);
  if ('bundles' in r && Array.isArray(r.bundles)) return r.bundles;
  return [r as Bundle];
}

/**
 * Renders every image (at most `concurrency` at once) and returns the results in input order. On
 * failure no further renders start, and the error of the earliest failing image is thrown, so
 * the reported error does not depend on timing.
 */
export async function renderAll<T>(images: readonly string[], concurrency: number, one: (image: string) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(images.length);
  const errors = new Map<number, unknown>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < images.length && errors.size === 0) {
      const i = next++;
      try {
        results[i] = await one(images[i]!);
      } catch (err) {
        errors.set(i, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, images.length)) }, worker));
  if (errors.size > 0) throw errors.get(Math.min(...errors.keys()));
  return results;
}

export const GO_STRING: GoType = { kind: 'string', goName: 'string' };

/** A Go struct type; `short` is its name without the package. */
export function goStruct(goName: string, fields: { name: string; type: GoType }[]): GoType {
  return { kind: 'struct', goName, short: goName.slice(goName.lastIndexOf('.') + 1), fields };
}

const PACKAGE_PROPERTY = goStruct('property.Package', [
  { name: 'packageName', type: GO_STRING },
  { name: 'version', type: GO_STRING },
  { name: 'release', type: GO_STRING },
]);

export interface PackageProperty {
  packageName: string;
  version: string;
}

/** The olm.package properties of a bundle, decoded as property.Parse does (errors name the index). */
export function packageProperties(b: Bundle): PackageProperty[] {
  const out: PackageProperty[] = [];
  (b.properties ?? []).forEach((p, i) => {
    if (p.type !== PropertyPackage) return;
    let v: Record<string, unknown> | undefined;
    try {
      v = decodeJSONInto(p.value, PACKAGE_PROPERTY);
    } catch (err) {
      throw new TemplateError(`parse property[${i}] of type ${goQuote(p.type)}: ${(err as Error).message}`);
    }
    out.push({ packageName: String(v?.['packageName'] ?? ''), version: String(v?.['version'] ?? '') });
  });
  return out;
}

/** Parses a bundle's version from its single olm.package property, with opm's messages. */
export function bundleVersion(b: Bundle): { pkg: string; version: Version } {
  let props: PackageProperty[];
  try {
    props = packageProperties(b);
  } catch (err) {
    throw new TemplateError(`parse properties for bundle ${goQuote(b.name)}: ${(err as Error).message}`);
  }
  if (props.length !== 1) throw new TemplateError(`bundle ${goQuote(b.name)} has multiple ${goQuote(PropertyPackage)} properties, expected exactly 1`);
  const p = props[0]!;
  let version: Version;
  try {
    version = parseVersion(p.version);
  } catch (err) {
    throw new TemplateError(`bundle ${goQuote(b.name)} has invalid version ${goQuote(p.version)}: ${(err as Error).message}`);
  }
  return { pkg: p.packageName, version };
}

/**
 * Versions in one template channel must differ by more than build metadata, which semver says
 * carries no precedence. opm walks a Go map here, so which of the colliding bundles it names
 * varies from run to run; we walk in template order, which names every later duplicate.
 */
export function validateVersions(versions: ReadonlyMap<string, Version>): void {
  if (versions.size === 0) return;
  const seen = new Set<string>();
  const errs: string[] = [];
  for (const v of versions.values()) {
    const stripped = v.withoutBuild().toString();
    if (seen.has(stripped)) errs.push(`bundle version ${goQuote(v.toString())} cannot be compared to ${goQuote(stripped)}`);
    else seen.add(stripped);
  }
  if (errs.length > 0)
    throw new TemplateError(`encountered bundle versions which differ only by build metadata, which cannot be ordered: ${aggregateMessage(errs)}`);
}

/** Template images, each once, in order of first appearance (candidate, then fast, then stable). */
export function uniqueImages(channels: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of channels) {
    for (const img of list) {
      if (seen.has(img)) continue;
      seen.add(img);
      out.push(img);
    }
  }
  return out;
}

// ---- reading and post-processing a template ------------------------------------------------------

/** Runs f, prefixing the message of anything it throws as opm wraps errors (`prefix: message`). */
export function wrapErrors<T>(prefix: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new TemplateError(`${prefix}: ${(err as Error).message}`);
  }
}

/** Decodes template YAML into a Go type, opm's decode errors becoming TemplateErrors. */
export function decodeTemplate(
  input: string,
  type: GoType,
  opts: { strictYAML: boolean; disallowUnknownFields: boolean },
): Record<string, unknown> | undefined {
  try {
    return unmarshalYAMLInto(input, type, opts);
  } catch (err) {
    if (err instanceof GoDecodeError) throw new TemplateError(err.message);
    throw err;
  }
}

/** Image lists of the decoded bundle-list fields. */
export function imagesOf(decoded: Record<string, unknown> | undefined, arch: ChannelArchetype): string[] {
  const ch = decoded?.[arch] as { bundles?: { image?: string }[] } | undefined;
  return (ch?.bundles ?? []).map((b) => b.image ?? '');
}

export interface RenderState {
  /** the package name, learned from the first bundle */
  pkg: string;
  /** the most stable channel head's channel */
  defaultChannel: string;
}

/**
 * Bundle name → version for each archetype, checking that every listed image rendered, belongs
 * to one package, has one valid version, appears once per archetype, and that versions differ by
 * more than build metadata. Adds the olm.package blob for the first package seen.
 */
export function versionsFromStandardChannels(
  t: { bundles: Record<ChannelArchetype, string[]> },
  cfg: DeclarativeConfig,
  state: RenderState,
  renderedImageOf: (templateImage: string) => string,
): Record<ChannelArchetype, Map<string, Version>> {
  const out = {} as Record<ChannelArchetype, Map<string, Version>>;
  for (const arch of ARCHETYPES) {
    const entries = versionsFromChannel(t.bundles[arch], cfg, state, renderedImageOf);
    validateVersions(entries);
    out[arch] = entries;
  }
  return out;
}

function versionsFromChannel(
  images: readonly string[],
  cfg: DeclarativeConfig,
  state: RenderState,
  renderedImageOf: (img: string) => string,
): Map<string, Version> {
  const entries = new Map<string, Version>();
  for (const image of images) {
    const want = renderedImageOf(image);
    const b = cfg.bundles.find((x) => x.image === want);
    if (b === undefined) throw new TemplateError(`supplied bundle image name ${goQuote(image)} not found in rendered bundle images`);
    const { pkg, version } = bundleVersion(b);
    if (state.pkg !== '') {
      if (pkg !== state.pkg) throw new TemplateError(`bundle ${goQuote(pkg)} does not belong to this package: ${goQuote(state.pkg)}`);
    } else {
      cfg.packages.push(newPackage(pkg));
      state.pkg = pkg;
    }
    if (entries.has(b.name)) throw new TemplateError(`duplicate bundle name ${goQuote(b.name)}`);
    entries.set(b.name, version);
  }
  return entries;
}

// ---- building channels ---------------------------------------------------------------------------

/** Bundle names in ascending version order. */
export function namesByVersion(bundles: ReadonlyMap<string, Version>): string[] {
  return [...bundles.keys()].sort((a, b) => bundles.get(a)!.compare(bundles.get(b)!));
}

/** The channel named `name` in `group`, created empty (and `created` true) if missing. */
export function channelIn(group: Map<string, Channel>, name: string, pkg: string): { ch: Channel; created: boolean } {
  const ch = group.get(name);
  if (ch !== undefined) return { ch, created: false };
  const created: Channel = { schema: SchemaChannel, name, package: pkg, entries: [] };
  group.set(name, created);
  return { ch: created, created: true };
}

export const ZERO_VERSION = new Version(0n, 0n, 0n);

export function majorOf(v: Version): Version {
  return new Version(v.major, 0n, 0n);
}
export function minorOf(v: Version): Version {
  return new Version(v.major, v.minor, 0n);
}
