// The semver template as opm v1.26.3 rendered it (`opm alpha render-veneer semver`,
// alpha/veneer/semver/semver.go at tag v1.26.3). Catalogs made with opm v1.23.1–v1.26.4 were
// rendered by this algorithm; the versions differ only around it:
//  - v1.23.1 rendered only the Candidate images (a bundle listed only in Fast/Stable was "not
//    found") and refused any build metadata; v1.24.0 instead refused versions that differ only by
//    build metadata and added the duplicate-name check; v1.25.0 renders every listed image;
//  - v1.26.3 rejects unknown keys (DisallowUnknownFields, #1043), where earlier versions ignored
//    them; v1.26.4 only renamed "veneer" to "template";
//  - v1.26.5 dropped AvoidSkipPatch and took the Y-stream algorithm that became today's.
// So for valid input the output is that of every release from v1.25.0 to v1.26.4, and of v1.23.1
// and v1.24.0 when Candidate lists every bundle; errors are v1.26.3's. Bundles keep v1.26's
// property order too (bundle objects in manifest order, see legacyBundle).
//
// The algorithm: no schema check; minor channels by default; every channel is linked on its own:
// with AvoidSkipPatch each entry replaces the previous one; otherwise the head of each Y-stream
// replaces the previous Y-stream's head and skips the rest of its own Y-stream. The default
// channel is picked by a "high-water mark" that rises when an archetype is more stable OR a
// version is higher (so a later candidate can outrank an earlier stable: kept as opm has it).

import type { Bundle, Channel, ChannelEntry, DeclarativeConfig } from '../declcfg/types.js';
import { PropertyBundleObject, PropertyPackage, emptyConfig } from '../declcfg/types.js';
import { compareGoStrings } from '../../golang/json.js';
import type { Version } from '../../golang/semver.js';
import {
  ARCHETYPES,
  CHANNEL_PRIORITY,
  GO_STRING,
  TemplateError,
  ZERO_VERSION,
  channelIn,
  channelNameFromMajor,
  channelNameFromMinor,
  decodeTemplate,
  goStruct,
  imagesOf,
  minorOf,
  namesByVersion,
  renderAll,
  renderOne,
  uniqueImages,
  versionsFromStandardChannels,
  wrapErrors,
  type BundleRenderer,
  type ChannelArchetype,
  type RenderState,
} from './common.js';
import type { GoType } from './godecode.js';

const entryType = goStruct('semver.semverVeneerBundleEntry', [{ name: 'image', type: GO_STRING }]);
const listOf = (goName: string): GoType =>
  goStruct(goName, [{ name: 'bundles', type: { kind: 'slice', goName: '[]semver.semverVeneerBundleEntry', elem: entryType } }]);
/** v1.26.3's semverVeneer struct. */
const LEGACY_TYPE = goStruct('semver.semverVeneer', [
  { name: 'schema', type: GO_STRING },
  { name: 'generateMajorChannels', type: { kind: 'bool' } },
  { name: 'generateMinorChannels', type: { kind: 'bool' } },
  { name: 'avoidSkipPatch', type: { kind: 'bool' } },
  { name: 'candidate', type: listOf('semver.candidateBundles') },
  { name: 'fast', type: listOf('semver.fastBundles') },
  { name: 'stable', type: listOf('semver.stableBundles') },
]);

export interface LegacySemverTemplate {
  schema: string;
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  avoidSkipPatch: boolean;
  bundles: Record<ChannelArchetype, string[]>;
}

/** v1.26.3's readFile: YAML as go-yaml reads it (duplicate keys allowed), unknown fields refused. */
export function readLegacySemverTemplate(input: string): LegacySemverTemplate {
  const d = decodeTemplate(input, LEGACY_TYPE, { strictYAML: false, disallowUnknownFields: true });
  return {
    schema: (d?.['schema'] as string | undefined) ?? '',
    // defaults: minor channels only, skips rather than replaces
    generateMajorChannels: (d?.['generateMajorChannels'] as boolean | undefined) ?? false,
    generateMinorChannels: (d?.['generateMinorChannels'] as boolean | undefined) ?? true,
    avoidSkipPatch: (d?.['avoidSkipPatch'] as boolean | undefined) ?? false,
    bundles: { candidate: imagesOf(d, 'candidate'), fast: imagesOf(d, 'fast'), stable: imagesOf(d, 'stable') },
  };
}

export async function renderLegacySemverTemplate(input: string, opts: { renderBundle: BundleRenderer; concurrency?: number }): Promise<DeclarativeConfig> {
  const t = wrapErrors('semver-render: unable to read file', () => readLegacySemverTemplate(input));
  const images = uniqueImages(ARCHETYPES.map((a) => t.bundles[a]));
  const rendered = await renderAll(images, opts.concurrency ?? 4, (image) => renderOne(opts.renderBundle, image));
  const out = emptyConfig();
  for (const r of rendered) out.bundles.push(...r.map(legacyBundle));
  if (out.bundles.length === 0) throw new TemplateError('semver-render: no bundles specified or no bundles could be rendered');

  const state: RenderState = { pkg: '', defaultChannel: '' };
  // v1.26 matches template images against the rendered bundles' images as written
  const versions = wrapErrors('semver-render: unable to post-process bundle info', () => versionsFromStandardChannels(t, out, state, (image) => image));

  out.channels = generateLegacyChannels(t, versions, state);
  out.packages[0]!.defaultChannel = state.defaultChannel;
  return out;
}

/**
 * A bundle as v1.26.3's render made it, from today's rendering:
 *  - olm.bundle.object properties last in the bundle's own object order (manifest file order:
 *    renderBundleObjects rebuilt them from Bundle.Objects); today's opm sorts them by value
 *    before moving them last, so a CRD's object usually precedes the CSV's;
 *  - olm.package without `release` (spec.release of the CSV arrived in v1.62).
 * The other properties are sorted by type and value in both.
 */
export function legacyBundle(b: Bundle): Bundle {
  let props = b.properties ?? [];
  if (props.some((p) => p.type === PropertyPackage && hasRelease(p.value))) {
    props = props.map((p) => {
      if (p.type !== PropertyPackage || !hasRelease(p.value)) return p;
      const { release: _release, ...rest } = p.value as Record<string, unknown>;
      return { type: p.type, value: rest };
    });
    b.properties = props;
  }
  if (b.objects === undefined || b.objects.length === 0 || !props.some((p) => p.type === PropertyBundleObject)) return b;
  b.properties = [
    ...props.filter((p) => p.type !== PropertyBundleObject),
    ...b.objects.map((o) => ({ type: PropertyBundleObject, value: { data: Buffer.from(o, 'utf8').toString('base64') } })),
  ];
  return b;
}

function hasRelease(v: unknown): boolean {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && 'release' in v;
}

interface LegacyHighWater {
  kind: ChannelArchetype;
  version: Version;
  name: string;
}

/** v1.26's comparison: a more stable archetype OR a higher version (not lexicographic). */
function legacyGT(h: LegacyHighWater, ih: LegacyHighWater): boolean {
  return CHANNEL_PRIORITY[h.kind] > CHANNEL_PRIORITY[ih.kind] || h.version.gt(ih.version);
}

/**
 * Channels per archetype (candidate, fast, stable), major channels before minor ones; opm emits
 * each group in Go map order, here they are sorted by name (the catalog writers sort anyway).
 */
export function generateLegacyChannels(
  t: Pick<LegacySemverTemplate, 'generateMajorChannels' | 'generateMinorChannels' | 'avoidSkipPatch'>,
  versions: Record<ChannelArchetype, Map<string, Version>>,
  state: RenderState,
): Channel[] {
  const out: Channel[] = [];
  let hwc: LegacyHighWater = { kind: ARCHETYPES[0]!, version: ZERO_VERSION, name: '' };
  for (const arch of ARCHETYPES) {
    const bundles = versions[arch];
    if (bundles.size === 0) continue;
    const majors = new Map<string, Channel>();
    const minors = new Map<string, Channel>();
    const add = (group: Map<string, Channel>, cName: string, name: string, v: Version): void => {
      channelIn(group, cName, state.pkg).ch.entries.push({ name });
      const cand: LegacyHighWater = { kind: arch, version: v, name: cName };
      if (legacyGT(cand, hwc)) hwc = cand;
    };
    for (const name of namesByVersion(bundles)) {
      const v = bundles.get(name)!;
      if (t.generateMajorChannels) add(majors, channelNameFromMajor(arch, v), name, v);
      if (t.generateMinorChannels) add(minors, channelNameFromMinor(arch, v), name, v);
    }
    out.push(...linkLegacyChannels(majors, bundles, t.avoidSkipPatch));
    out.push(...linkLegacyChannels(minors, bundles, t.avoidSkipPatch));
  }
  state.defaultChannel = hwc.name;
  return out;
}

/** Links each channel on its own (v1.26's linkChannels). */
export function linkLegacyChannels(unlinked: ReadonlyMap<string, Channel>, versions: ReadonlyMap<string, Version>, avoidSkipPatch: boolean): Channel[] {
  const out: Channel[] = [];
  for (const name of [...unlinked.keys()].sort(compareGoStrings)) {
    const ch = unlinked.get(name)!;
    // a name without a version reads as 0.0.0, Go's zero value for a missing map key
    const vOf = (e: ChannelEntry): Version => versions.get(e.name) ?? ZERO_VERSION;
    ch.entries.sort((a, b) => vOf(a).compare(vOf(b)));
    const entries = ch.entries;
    if (avoidSkipPatch) {
      // a plain replaces chain through every version
      for (let i = 1; i < entries.length; i++) entries[i] = { name: entries[i]!.name, replaces: entries[i - 1]!.name };
    } else {
      // from the top: the head of each Y-stream skips its own Y-stream and replaces the next
      // lower Y-stream's head
      let curIndex = entries.length - 1;
      let curMinor = minorOf(vOf(entries[curIndex]!));
      let curSkips = new Set<string>();
      for (let i = entries.length - 2; i >= 0; i--) {
        const thisName = entries[i]!.name;
        const thisMinor = minorOf(vOf(entries[i]!));
        if (thisMinor.eq(curMinor)) {
          entries[i] = { name: thisName };
          curSkips.add(thisName);
        } else {
          entries[curIndex] = withSkips({ name: entries[curIndex]!.name, replaces: thisName }, curSkips);
          curSkips = new Set();
          curIndex = i;
          curMinor = thisMinor;
        }
      }
      entries[curIndex] = withSkips({ name: entries[curIndex]!.name }, curSkips);
    }
    out.push(ch);
  }
  return out;
}

/** sets.String.List(): sorted; an empty list is left out (omitempty). */
function withSkips(e: ChannelEntry, skips: ReadonlySet<string>): ChannelEntry {
  if (skips.size > 0) e.skips = [...skips].sort(compareGoStrings);
  return e;
}
