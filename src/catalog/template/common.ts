// What both semver template algorithms share: the bundle renderer's contract, reading the
// olm.package property of a rendered bundle, build-metadata collision checks, channel names, and
// the Go error-aggregation format opm prints.

import type { Bundle, DeclarativeConfig, Package } from '../declcfg/types.js';
import { PropertyPackage, SchemaPackage } from '../declcfg/types.js';
import { goQuote } from '../golang/strconv.js';
import { parse as parseVersion, type Version } from '../semver.js';
import { decodeJSONInto, type GoType } from './godecode.js';

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
  if ('bundles' in r && Array.isArray((r as DeclarativeConfig).bundles)) return (r as DeclarativeConfig).bundles;
  return [r as Bundle];
}

/**
 * Renders every image (at most `concurrency` at once) and returns the results in input order. On
 * failure no further renders start, and the error of the earliest failing image is thrown, so
 * the reported error does not depend on timing.
 */
export async function renderAll<T>(images: readonly string[], concurrency: number, one: (image: string) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(images.length);
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

const PACKAGE_PROPERTY: GoType = {
  kind: 'struct',
  goName: 'property.Package',
  short: 'Package',
  fields: [
    { name: 'packageName', type: { kind: 'string', goName: 'string' } },
    { name: 'version', type: { kind: 'string', goName: 'string' } },
    { name: 'release', type: { kind: 'string', goName: 'string' } },
  ],
};

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
  if (errs.length > 0) throw new TemplateError(`encountered bundle versions which differ only by build metadata, which cannot be ordered: ${aggregateMessage(errs)}`);
}

/** Template images, each once, in order of first appearance (candidate, then fast, then stable). */
export function uniqueImages(channels: readonly (readonly string[])[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of channels) for (const img of list) if (!seen.has(img)) (seen.add(img), out.push(img));
  return out;
}
