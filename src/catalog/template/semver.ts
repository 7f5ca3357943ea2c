// The semver template (`schema: olm.semver`), as opm renders it today (operator-registry HEAD,
// alpha/template/semver): a list of bundle images per archetype (Candidate, Fast, Stable) becomes
// a package, one channel per archetype and major (`stable-v1`) and/or minor (`stable-v1.2`)
// version, and edges:
//  - within a Y-stream only the highest Z gets edges (#1749: no edges to the same-Y max-Z);
//  - that entry replaces the previous Y-stream's max-Z, also across minor channels (#1065), and
//    skips every earlier version of the same archetype, kind and major (cumulative skips), except
//    the one it replaces;
//  - nothing crosses an archetype, a channel kind or a major version (edge-scoped, #1813);
//  - the default channel is the most stable archetype's highest version, ties between a major
//    and a minor channel going to DefaultChannelTypePreference (#1095);
//  - the package takes its description and icon from the default channel head's CSV (#1933).
// `legacy: true` selects opm v1.26.3's algorithm instead (./semver-legacy.ts).

import type { Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Package } from '../declcfg/types.js';
import { emptyConfig } from '../declcfg/types.js';
import { compareGoStrings } from '../../golang/json.js';
import { goQuote } from '../../golang/strconv.js';
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
  majorOf,
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
import { decodeJSONInto } from './godecode.js';
import { renderLegacySemverTemplate } from './semver-legacy.js';

export { TemplateError, imagesOf, versionsFromStandardChannels, type BundleRenderer, type RenderState } from './common.js';

export const SEMVER_SCHEMA = 'olm.semver';

export interface RenderSemverOptions {
  /** opm v1.26.3's algorithm (render-veneer, AvoidSkipPatch) instead of today's */
  legacy?: boolean;
  renderBundle: BundleRenderer;
  /** bundle renders in flight at once (default 4) */
  concurrency?: number;
}

/** Renders a semver template (YAML or JSON text) into a file-based catalog. */
export async function renderSemverTemplate(input: string, opts: RenderSemverOptions): Promise<DeclarativeConfig> {
  if (opts.legacy === true) return renderLegacySemverTemplate(input, opts);
  return renderCurrent(input, opts);
}

// ---- reading -------------------------------------------------------------------------------------

export type StreamType = '' | 'minor' | 'major';
const STREAM_PRIORITY: Readonly<Record<StreamType, number>> = { minor: 2, major: 1, '': 0 };

const BUNDLE_LIST = goStruct('semver.channelBundles', [
  { name: 'bundles', type: { kind: 'slice', goName: '[]semver.bundleEntry', elem: goStruct('semver.bundleEntry', [{ name: 'image', type: GO_STRING }]) } },
]);
/** SemverTemplateData, field for field. */
const TEMPLATE_TYPE = goStruct('semver.SemverTemplateData', [
  { name: 'schema', type: GO_STRING },
  { name: 'generateMajorChannels', type: { kind: 'bool' } },
  { name: 'generateMinorChannels', type: { kind: 'bool' } },
  { name: 'defaultChannelTypePreference', type: { kind: 'string', goName: 'semver.StreamType' } },
  { name: 'candidate', type: BUNDLE_LIST },
  { name: 'fast', type: BUNDLE_LIST },
  { name: 'stable', type: BUNDLE_LIST },
]);

export interface SemverTemplate {
  schema: string;
  generateMajorChannels: boolean;
  generateMinorChannels: boolean;
  defaultChannelTypePreference: StreamType;
  bundles: Record<ChannelArchetype, string[]>;
}

/** opm's readFile: strict YAML, strict fields, schema check, defaults and their contradictions. */
export function readSemverTemplate(input: string): SemverTemplate {
  const d = decodeTemplate(input, TEMPLATE_TYPE, { strictYAML: true, disallowUnknownFields: true });
  const t: SemverTemplate = {
    schema: (d?.['schema'] as string | undefined) ?? '',
    generateMajorChannels: (d?.['generateMajorChannels'] as boolean | undefined) ?? false,
    generateMinorChannels: (d?.['generateMinorChannels'] as boolean | undefined) ?? false,
    defaultChannelTypePreference: ((d?.['defaultChannelTypePreference'] as string | undefined) ?? '') as StreamType,
    bundles: { candidate: imagesOf(d, 'candidate'), fast: imagesOf(d, 'fast'), stable: imagesOf(d, 'stable') },
  };
  if (t.schema !== SEMVER_SCHEMA) throw new TemplateError(`readFile: input file has unknown schema, should be ${goQuote(SEMVER_SCHEMA)}`);
  // with neither option set, minor channels are generated
  if (!t.generateMajorChannels && !t.generateMinorChannels) t.generateMinorChannels = true;
  switch (t.defaultChannelTypePreference as string) {
    case '':
      if (t.generateMinorChannels) t.defaultChannelTypePreference = 'minor';
      else if (t.generateMajorChannels) t.defaultChannelTypePreference = 'major';
      break;
    case 'minor':
      if (!t.generateMinorChannels) {
        throw new TemplateError(
          "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
        );
      }
      break;
    case 'major':
      if (!t.generateMajorChannels) {
        throw new TemplateError(
          "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
        );
      }
      break;
    default:
      throw new TemplateError(`unknown DefaultChannelTypePreference: ${goQuote(t.defaultChannelTypePreference)}\nValid values are 'major' or 'minor'`);
  }
  return t;
}

// ---- rendering -----------------------------------------------------------------------------------

async function renderCurrent(input: string, opts: RenderSemverOptions): Promise<DeclarativeConfig> {
  const t = wrapErrors('render: unable to read file', () => readSemverTemplate(input));

  // each image once; the rendered bundle's own image is what the template entries are matched by
  const images = uniqueImages(ARCHETYPES.map((a) => t.bundles[a]));
  const renderedImage = new Map<string, string>();
  const rendered = await renderAll(images, opts.concurrency ?? 4, async (image) => {
    const bundles = await renderOne(opts.renderBundle, image);
    if (bundles.length !== 1) throw new TemplateError(`bundle reference ${goQuote(image)} resulted in ${bundles.length} bundles, expected 1`);
    return bundles;
  });
  const out = emptyConfig();
  images.forEach((img, i) => {
    renderedImage.set(img, rendered[i]![0]!.image);
    out.bundles.push(...rendered[i]!);
  });
  if (out.bundles.length === 0) throw new TemplateError('render: no bundles specified or no bundles could be rendered');

  const state: RenderState = { pkg: '', defaultChannel: '' };
  const versions = wrapErrors('render: unable to post-process bundle info', () =>
    versionsFromStandardChannels(t, out, state, (img) => renderedImage.get(img) ?? ''),
  );
  out.channels = generateChannels(t, versions, state);
  out.packages[0]!.defaultChannel = state.defaultChannel;
  populatePackageMetadata(out, state.defaultChannel);
  return out;
}

interface HighWater {
  archetype: ChannelArchetype;
  kind: StreamType;
  version: Version;
  name: string;
}

/** Prefer the more stable archetype, then the higher version, then the preferred kind, then minor over major. */
function highWaterGT(h: HighWater, ih: HighWater, pref: StreamType): boolean {
  if (CHANNEL_PRIORITY[h.archetype] !== CHANNEL_PRIORITY[ih.archetype]) return CHANNEL_PRIORITY[h.archetype] > CHANNEL_PRIORITY[ih.archetype];
  if (h.version.ne(ih.version)) return h.version.gt(ih.version);
  if (h.kind !== ih.kind) {
    if (h.kind === pref) return true;
    if (ih.kind === pref) return false;
    return STREAM_PRIORITY[h.kind] > STREAM_PRIORITY[ih.kind];
  }
  return false;
}

/** A channel entry with what linking needs to know about it. */
export interface EntryTuple {
  arch: ChannelArchetype;
  kind: StreamType;
  /** the channel holding it */
  parent: string;
  name: string;
  version: Version;
  /** its index in the parent's entries */
  index: number;
}

/** Builds the channels (entries in ascending version order), then links them; sorted by name. */
export function generateChannels(
  t: Pick<SemverTemplate, 'generateMajorChannels' | 'generateMinorChannels' | 'defaultChannelTypePreference'>,
  versions: Record<ChannelArchetype, Map<string, Version>>,
  state: RenderState,
): Channel[] {
  let hwc: HighWater = { archetype: ARCHETYPES[0]!, kind: '', version: ZERO_VERSION, name: '' };
  const unlinked = new Map<string, Channel>();
  const edges: EntryTuple[] = [];
  for (const arch of ARCHETYPES) {
    const bundles = versions[arch];
    if (bundles.size === 0) continue;
    for (const name of namesByVersion(bundles)) {
      const v = bundles.get(name)!;
      // opm walks a Go map of {kind: channel} here; the outcome does not depend on its order
      const targets: [StreamType, string][] = [];
      if (t.generateMajorChannels) targets.push(['major', channelNameFromMajor(arch, v)]);
      if (t.generateMinorChannels) targets.push(['minor', channelNameFromMinor(arch, v)]);
      for (const [kind, cName] of targets) {
        const { ch, created } = channelIn(unlinked, cName, state.pkg);
        if (created) {
          const cand: HighWater = { archetype: arch, kind, version: v, name: cName };
          if (highWaterGT(cand, hwc, t.defaultChannelTypePreference)) hwc = cand;
        }
        ch.entries.push({ name });
        edges.push({ arch, kind, parent: cName, name, version: v, index: ch.entries.length - 1 });
      }
    }
  }
  state.defaultChannel = hwc.name;
  return linkChannels(unlinked, edges);
}

/**
 * Walks all entries ordered by archetype, kind and version. At each change of Y (or of anything
 * larger) the entry before the change is the max-Z of its Y-stream: it replaces the previous
 * Y-stream's max-Z and skips everything accumulated so far. Archetype, kind and X changes reset.
 */
export function linkChannels(unlinked: ReadonlyMap<string, Channel>, entries: EntryTuple[]): Channel[] {
  entries.sort((a, b) => {
    if (CHANNEL_PRIORITY[a.arch] !== CHANNEL_PRIORITY[b.arch]) return CHANNEL_PRIORITY[a.arch] - CHANNEL_PRIORITY[b.arch];
    if (STREAM_PRIORITY[a.kind] !== STREAM_PRIORITY[b.kind]) return STREAM_PRIORITY[a.kind] - STREAM_PRIORITY[b.kind];
    return a.version.compare(b.version);
  });
  const entryOf = (t: EntryTuple): ChannelEntry => unlinked.get(t.parent)!.entries[t.index]!;
  const finish = (t: EntryTuple, replaces: string, skips: Set<string>): void => {
    const e = entryOf(t);
    setReplaces(e, replaces);
    const list = [...skips].filter((s) => s !== replaces).sort(compareGoStrings);
    if (list.length > 0) e.skips = list;
  };

  let prevZMax = '';
  let curSkips = new Set<string>();
  for (let i = 1; i < entries.length; i++) {
    const prev = entries[i - 1]!;
    const cur = entries[i]!;
    const archChange = cur.arch !== prev.arch;
    const kindChange = cur.kind !== prev.kind;
    const xChange = !majorOf(prev.version).eq(majorOf(cur.version));
    const yChange = !minorOf(prev.version).eq(minorOf(cur.version));
    if (archChange || kindChange || xChange || yChange) finish(prev, prevZMax, curSkips);
    if (archChange || kindChange || xChange) {
      curSkips = new Set();
      prevZMax = '';
    } else {
      if (yChange) prevZMax = prev.name;
      curSkips.add(prev.name);
    }
  }
  if (entries.length > 1) {
    const last = entries[entries.length - 1]!;
    const penultimate = entries[entries.length - 2]!;
    const sameStream = last.arch === penultimate.arch && last.kind === penultimate.kind && majorOf(penultimate.version).eq(majorOf(last.version));
    if (sameStream) finish(last, prevZMax, curSkips);
  }
  return [...unlinked.values()].sort((a, b) => compareGoStrings(a.name, b.name));
}

/** Sets `replaces` keeping the entry's key order name, replaces, skips (Go's struct order). */
function setReplaces(e: ChannelEntry, replaces: string): void {
  if (replaces === '') delete e.replaces;
  else e.replaces = replaces;
}

// ---- package metadata from the default channel head -------------------------------------------

const ICON_TYPE = goStruct('registry.Icon', [
  { name: 'mediatype', type: GO_STRING },
  { name: 'base64data', type: { kind: 'string', goName: '[]uint8' } },
]);

/**
 * Description and icon of the package come from the CSV of the default channel's head (its last
 * entry). Anything missing or malformed is skipped silently, as opm does.
 */
export function populatePackageMetadata(cfg: DeclarativeConfig, defaultChannel: string): void {
  const pkg: Package | undefined = cfg.packages[0];
  if (pkg === undefined) return;
  const ch = cfg.channels.find((c) => c.name === defaultChannel);
  if (ch === undefined || ch.entries.length === 0) return;
  const head = ch.entries[ch.entries.length - 1]!.name;
  const b: Bundle | undefined = cfg.bundles.find((x) => x.name === head);
  if (b === undefined || b.csvJSON === undefined || b.csvJSON === '') return;
  let csv: unknown;
  try {
    csv = JSON.parse(b.csvJSON) as unknown;
  } catch {
    return;
  }
  const spec = csvSpec(csv);
  if (spec === undefined) return; // the CSV does not decode, or has no spec (json.RawMessage(nil))
  if (spec !== null && (typeof spec !== 'object' || Array.isArray(spec))) return;
  const specMap = (spec ?? {}) as Record<string, unknown>;

  const desc = specMap['description'];
  if (typeof desc === 'string' && desc !== '') pkg.description = desc;
  const icon = headIcon(specMap['icon']);
  if (icon !== undefined) pkg.icon = icon;
  // keep declcfg.Package's field order: schema, name, defaultChannel, icon, description, properties
  const { schema, name, defaultChannel: dc, icon: ic, description, properties, ...rest } = pkg;
  cfg.packages[0] = {
    schema,
    name,
    defaultChannel: dc,
    ...(ic !== undefined ? { icon: ic } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(properties !== undefined ? { properties } : {}),
    ...rest,
  };
}

/** Go's case-insensitive field lookup over an object's keys, the last match winning (as decoding does). */
function goField(obj: Record<string, unknown>, name: string): unknown {
  let v: unknown;
  for (const k of Object.keys(obj)) if (k.replaceAll('\u017f', 's').toLowerCase() === name.toLowerCase()) v = obj[k];
  return v;
}

const isStr = (v: unknown): boolean => v === null || typeof v === 'string';
const isInt = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isInteger(v));
const isStrMap = (v: unknown): boolean => v === null || (typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => isStr(x)));
const isStrList = (v: unknown): boolean => v === null || (Array.isArray(v) && v.every(isStr));
const isList = (v: unknown): boolean => v === null || Array.isArray(v);
const isTime = (v: unknown): boolean => v === null || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v));

/** ObjectMeta fields and what json.Unmarshal accepts for them. */
const OBJECT_META: Record<string, (v: unknown) => boolean> = {
  name: isStr,
  generateName: isStr,
  namespace: isStr,
  selfLink: isStr,
  uid: isStr,
  resourceVersion: isStr,
  generation: isInt,
  creationTimestamp: isTime,
  deletionTimestamp: isTime,
  deletionGracePeriodSeconds: isInt,
  labels: isStrMap,
  annotations: isStrMap,
  ownerReferences: isList,
  finalizers: isStrList,
  managedFields: isList,
};

/**
 * The spec of a CSV, if the CSV decodes into opm's registry.ClusterServiceVersion (TypeMeta,
 * ObjectMeta, raw spec): a metadata field of the wrong type (say a boolean annotation) makes the
 * whole decode fail, and opm then leaves the package without description and icon.
 */
function csvSpec(csv: unknown): unknown {
  if (csv === null || typeof csv !== 'object' || Array.isArray(csv)) return undefined;
  const o = csv as Record<string, unknown>;
  if (!isStr(goField(o, 'apiVersion') ?? null) || !isStr(goField(o, 'kind') ?? null)) return undefined;
  const meta = goField(o, 'metadata');
  if (meta !== undefined && meta !== null) {
    if (typeof meta !== 'object' || Array.isArray(meta)) return undefined;
    for (const [field, ok] of Object.entries(OBJECT_META)) {
      const v = goField(meta as Record<string, unknown>, field);
      if (v !== undefined && !ok(v)) return undefined;
    }
  }
  return goField(o, 'spec');
}

/** registry.ClusterServiceVersion.GetIcons()[0], or undefined when absent or malformed. */
function headIcon(icons: unknown): Icon | undefined {
  if (icons === undefined || icons === null || !Array.isArray(icons) || icons.length === 0) return undefined;
  const decoded: Icon[] = [];
  for (const raw of icons) {
    let d: Record<string, unknown> | undefined;
    try {
      d = decodeJSONInto(raw, ICON_TYPE);
    } catch {
      return undefined; // one bad icon fails the whole list in Go
    }
    const data = goBase64Decode((d?.['base64data'] as string | undefined) ?? '');
    if (data === undefined) return undefined;
    // declcfg.Icon holds the decoded bytes, so they are written re-encoded in standard base64
    decoded.push({ base64data: data.toString('base64'), mediatype: (d?.['mediatype'] as string | undefined) ?? '' });
  }
  return decoded[0];
}

/** encoding/json's []byte decoding: standard base64 with padding; CR and LF are ignored. */
function goBase64Decode(s: string): Buffer | undefined {
  const t = s.replace(/[\r\n]/g, '');
  if (t.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(={0,2})$/.test(t)) return undefined;
  return Buffer.from(t, 'base64');
}
