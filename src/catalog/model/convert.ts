// DeclarativeConfig ⇄ model, as operator-registry's alpha/declcfg/declcfg_to_model.go and
// model_to_declcfg.go do it. convertToModel checks every reference between blobs (throwing
// ModelConversionError with opm's message at the first problem), then validates the linked model
// (throwing the ValidationError tree). Both directions are linear in the number of blobs.
import { isDNS1123Label } from '../../apimachinery/validation/names.js';
import {
  SchemaBundle,
  SchemaChannel,
  SchemaPackage,
  type Bundle as DBundle,
  type Channel as DChannel,
  type ChannelEntry,
  type DeclarativeConfig,
  type PackageScopedReference,
  type Property,
} from '../declcfg/types.js';
import { goStringList } from '../../golang/fmt.js';
import { goQuote } from '../../golang/strconv.js';
import { ModelConversionError } from './errors.js';
import { parseProperties } from './properties.js';
import { pullSpecError } from './pullspec.js';
import type { Channel, Model, Package } from './types.js';
import { parseRelease, parseVersion } from './version.js';
import { validateModel } from './validate.js';
import { compareGoStrings } from '../../golang/json.js';

function fail(message: string): never {
  throw new ModelConversionError(message);
}

function decodeBase64(data: string): Uint8Array {
  return new Uint8Array(Buffer.from(data, 'base64'));
}

/** Go's %#v of a declcfg.PackageScopedReference. */
function refGoSyntax(r: PackageScopedReference): string {
  return `declcfg.PackageScopedReference{Schema:${goQuote(r.schema)}, Name:${goQuote(r.name ?? '')}}`;
}

function checkPullSpec(pullSpec: string, what: string): void {
  if (pullSpec === '') return;
  const err = pullSpecError(pullSpec);
  if (err !== undefined) fail(`${what}: invalid image pull spec ${goQuote(pullSpec)}: ${err}`);
}

/** The linked, validated model of cfg. Throws ModelConversionError or ValidationError as opm does. */
export function convertToModel(cfg: DeclarativeConfig): Model {
  const model: Model = new Map();
  const defaultChannels = new Map<string, string>();
  for (const p of cfg.packages) {
    if (!p.name) fail('config contains package with no name');
    if (model.has(p.name)) fail(`duplicate package ${goQuote(p.name)}`);
    const errs = isDNS1123Label(p.name);
    if (errs.length > 0) fail(`invalid package name ${goQuote(p.name)}: ${goStringList(errs)}`);
    const pkg: Package = { name: p.name, description: p.description ?? '', channels: new Map() };
    if (p.icon) pkg.icon = { data: decodeBase64(p.icon.base64data ?? ''), mediatype: p.icon.mediatype ?? '' };
    defaultChannels.set(p.name, p.defaultChannel ?? '');
    model.set(p.name, pkg);
  }

  // Entries declared by channels and not (yet) matched by a bundle blob. Like opm, each channel of a
  // package replaces the set of the channel before it, so only the last channel's entries are
  // checked here; an unmatched entry of an earlier channel fails validation instead (no image).
  const channelDefinedEntries = new Map<string, Set<string>>();
  for (const c of cfg.channels) {
    const pkg = model.get(c.package);
    if (!pkg) fail(`unknown package ${goQuote(c.package ?? '')} for channel ${goQuote(c.name ?? '')}`);
    if (!c.name) fail(`package ${goQuote(c.package)} contains channel with no name`);
    if (pkg.channels.has(c.name)) fail(`package ${goQuote(c.package)} has duplicate channel ${goQuote(c.name)}`);
    const ch: Channel = { package: pkg, name: c.name, bundles: new Map(), properties: c.properties ?? [] };
    const defined = new Set<string>();
    for (const entry of c.entries ?? []) {
      if (ch.bundles.has(entry.name)) {
        fail(`invalid package ${goQuote(c.package)}, channel ${goQuote(c.name)}: duplicate entry ${goQuote(entry.name)}`);
      }
      defined.add(entry.name);
      ch.bundles.set(entry.name, {
        package: pkg,
        channel: ch,
        name: entry.name,
        image: '',
        replaces: entry.replaces ?? '',
        skips: entry.skips ?? [],
        skipRange: entry.skipRange ?? '',
        properties: [],
        relatedImages: [],
        objects: [],
        csvJSON: '',
        version: '',
      });
    }
    channelDefinedEntries.set(c.package, defined);
    pkg.channels.set(c.name, ch);
    if (defaultChannels.get(c.package) === c.name) pkg.defaultChannel = ch;
  }

  // bundle names per package, to find duplicates and deprecated bundles
  const packageBundles = new Map<string, Set<string>>();
  for (const b of cfg.bundles) {
    if (!b.package) fail(`package name must be set for bundle ${goQuote(b.name ?? '')}`);
    const pkg = model.get(b.package);
    if (!pkg) fail(`unknown package ${goQuote(b.package)} for bundle ${goQuote(b.name ?? '')}`);
    let names = packageBundles.get(b.package);
    if (!names) packageBundles.set(b.package, (names = new Set()));
    if (names.has(b.name)) fail(`package ${goQuote(b.package)} has duplicate bundle ${goQuote(b.name)}`);
    names.add(b.name);

    let props;
    try {
      props = parseProperties(b.properties);
    } catch (err) {
      fail(`parse properties for bundle ${goQuote(b.name)}: ${(err as Error).message}`);
    }
    if (props.packages.length !== 1) {
      fail(`package ${goQuote(b.package)} bundle ${goQuote(b.name)} must have exactly 1 "${SchemaPackage}" property, found ${props.packages.length}`);
    }
    const pp = props.packages[0]!;
    if (b.package !== pp.packageName) {
      fail(`package ${goQuote(b.package)} does not match "${SchemaPackage}" property ${goQuote(pp.packageName)}`);
    }
    checkPullSpec(b.image ?? '', `package ${goQuote(b.package)} bundle ${goQuote(b.name)} image`);
    (b.relatedImages ?? []).forEach((rel, i) => {
      checkPullSpec(rel.image ?? '', `package ${goQuote(b.package)} bundle ${goQuote(b.name)} relatedImages[${i}].image`);
    });
    try {
      parseVersion(pp.version);
    } catch (err) {
      fail(`error parsing bundle ${goQuote(b.name)} version ${goQuote(pp.version)}: ${(err as Error).message}`);
    }
    if (pp.release) {
      try {
        parseRelease(pp.release);
      } catch (err) {
        fail(`error parsing bundle ${goQuote(b.name)} release version ${goQuote(pp.release)}: ${(err as Error).message}`);
      }
    }

    channelDefinedEntries.get(b.package)?.delete(b.name);
    let found = false;
    for (const ch of pkg.channels.values()) {
      const mb = ch.bundles.get(b.name);
      if (!mb) continue;
      found = true;
      mb.image = b.image ?? '';
      mb.properties = b.properties ?? [];
      mb.relatedImages = (b.relatedImages ?? []).map((r) => ({ name: r.name, image: r.image }));
      mb.csvJSON = b.csvJSON ?? '';
      mb.objects = b.objects ?? [];
      mb.propertiesP = props;
      mb.version = pp.version;
      if (pp.release) mb.release = pp.release;
    }
    if (!found) fail(`package ${goQuote(b.package)}, bundle ${goQuote(b.name)} not found in any channel entries`);
  }

  for (const [pkgName, entries] of channelDefinedEntries) {
    if (entries.size > 0) {
      fail(`no olm.bundle blobs found in package ${goQuote(pkgName)} for olm.channel entries ${goStringList([...entries].sort(compareGoStrings))}`);
    }
  }

  // A default channel no channel blob declares becomes an empty channel, which validation reports.
  for (const pkg of model.values()) {
    const name = defaultChannels.get(pkg.name) ?? '';
    if (name !== '' && pkg.defaultChannel === undefined) {
      const ch: Channel = { package: pkg, name, bundles: new Map(), properties: [] };
      pkg.defaultChannel = ch;
      pkg.channels.set(name, ch);
    }
  }

  const deprecatedPackages = new Set<string>();
  cfg.deprecations.forEach((d, i) => {
    if (!d.package) fail(`package name must be set for deprecation item ${i}`);
    const pkg = model.get(d.package);
    if (!pkg) fail(`cannot apply deprecations to an unknown package ${goQuote(d.package)}`);
    if (deprecatedPackages.has(d.package)) fail(`expected a maximum of one deprecation per package: ${goQuote(d.package)}`);
    deprecatedPackages.add(d.package);

    const refs = new Set<string>();
    (d.entries ?? []).forEach((entry, j) => {
      const ref: PackageScopedReference = entry.reference ?? { schema: '' };
      if (!ref.schema) fail(`schema must be set for deprecation entry [${j}] for package ${goQuote(d.package)}`);
      const key = JSON.stringify([ref.schema, ref.name ?? '']);
      if (refs.has(key)) fail(`duplicate deprecation entry ${refGoSyntax(ref)} for package ${goQuote(d.package)}`);
      refs.add(key);
      const deprecation = { message: entry.message ?? '' };
      switch (ref.schema) {
        case SchemaBundle: {
          const name = ref.name ?? '';
          if (!packageBundles.get(d.package)?.has(name)) {
            fail(`cannot deprecate bundle ${goQuote(name)} for package ${goQuote(d.package)}: bundle not found`);
          }
          for (const ch of pkg.channels.values()) {
            const mb = ch.bundles.get(name);
            if (mb) mb.deprecation = deprecation;
          }
          break;
        }
        case SchemaChannel: {
          const ch = pkg.channels.get(ref.name ?? '');
          if (!ch) fail(`cannot deprecate channel ${goQuote(ref.name ?? '')} for package ${goQuote(d.package)}: channel not found`);
          ch.deprecation = deprecation;
          break;
        }
        case SchemaPackage:
          if (ref.name) {
            fail(`package name must be empty for deprecated package ${goQuote(d.package)} (specified ${goQuote(ref.name)})`);
          }
          pkg.deprecation = deprecation;
          break;
        default:
          fail(`cannot deprecate object ${refGoSyntax(ref)} referenced by entry ${j} for package ${goQuote(d.package)}: object schema unknown`);
      }
    });
  });

  const err = validateModel(model);
  if (err) throw err;
  return model;
}

/** Go's sort of properties in ConvertFromModel: by type, then by the value's JSON text. */
function propertyKey(p: Property): string {
  return JSON.stringify(p.value ?? null);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The blobs of a model, as opm's ConvertFromModel writes them: packages by name, channels and
 * bundles by package then name, channel entries by name, each bundle's properties gathered from
 * every channel it is in, de-duplicated and sorted. Package properties and deprecations are not
 * kept by the model, so they do not come back (as in opm).
 */
export function convertFromModel(model: Model): DeclarativeConfig {
  const cfg: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (const pkg of model.values()) {
    cfg.packages.push({
      schema: SchemaPackage,
      name: pkg.name,
      defaultChannel: pkg.defaultChannel?.name ?? '',
      ...(pkg.icon ? { icon: { base64data: Buffer.from(pkg.icon.data).toString('base64'), mediatype: pkg.icon.mediatype } } : {}),
      ...(pkg.description ? { description: pkg.description } : {}),
    });
    const bundles = new Map<string, { blob: DBundle; props: Property[] }>();
    for (const ch of pkg.channels.values()) {
      const entries: ChannelEntry[] = [];
      for (const b of ch.bundles.values()) {
        entries.push({
          name: b.name,
          ...(b.replaces ? { replaces: b.replaces } : {}),
          ...(b.skips.length > 0 ? { skips: b.skips } : {}),
          ...(b.skipRange ? { skipRange: b.skipRange } : {}),
        });
        let acc = bundles.get(b.name);
        if (!acc) {
          const blob: DBundle = { schema: SchemaBundle, name: b.name, package: b.package.name, image: b.image };
          if (b.relatedImages.length > 0) blob.relatedImages = b.relatedImages.map((r) => ({ name: r.name, image: r.image }));
          if (b.csvJSON) blob.csvJSON = b.csvJSON;
          if (b.objects.length > 0) blob.objects = b.objects;
          bundles.set(b.name, (acc = { blob, props: [] }));
        }
        acc.props.push(...b.properties);
      }
      entries.sort((x, y) => compareStrings(x.name, y.name));
      const channel: DChannel = { schema: SchemaChannel, name: ch.name, package: ch.package.name, entries };
      if (ch.properties.length > 0) channel.properties = ch.properties;
      cfg.channels.push(channel);
    }
    for (const { blob, props } of bundles.values()) {
      const seen = new Set<string>();
      const keyed: { p: Property; key: string }[] = [];
      for (const p of props) {
        const key = propertyKey(p);
        const dedup = `${p.type}\u0000${key}`;
        if (seen.has(dedup)) continue;
        seen.add(dedup);
        keyed.push({ p, key });
      }
      keyed.sort((x, y) => compareStrings(x.p.type, y.p.type) || compareStrings(x.key, y.key));
      if (keyed.length > 0) blob.properties = keyed.map((k) => k.p);
      cfg.bundles.push(blob);
    }
  }
  cfg.packages.sort((a, b) => compareStrings(a.name, b.name));
  cfg.channels.sort((a, b) => compareStrings(a.package, b.package) || compareStrings(a.name, b.name));
  cfg.bundles.sort((a, b) => compareStrings(a.package, b.package) || compareStrings(a.name, b.name));
  return cfg;
}
