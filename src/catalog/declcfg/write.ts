// Writers for file-based catalogs, byte for byte as operator-registry's declcfg writes them:
// WriteJSON (json.Encoder, 4-space indent, no HTML escaping), WriteYAML (each blob through
// sigs.k8s.io/yaml's JSONToYAML after a `---` line) and the mermaid channel graph.
// Blob order (writeToEncoder): packages by name; in each, its olm.package blobs, its channels by
// name, its bundles by name, its other blobs by schema (stable), its deprecations; then the other
// blobs that name no package, as given.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { goQuote } from '../../golang/strconv.js';
import { parse as parseSemver, parseRange, Version } from '../../golang/semver.js';
import { compareGoStrings, goJSON, hasNilBytes, isNilSlice } from '../../golang/json.js';
import { jsonToYAML } from '../../golang/yaml-write.js';
import {
  PropertyPackage,
  SchemaBundle,
  SchemaChannel,
  SchemaPackage,
  type Bundle,
  type Channel,
  type ChannelEntry,
  type DeclarativeConfig,
  type Deprecation,
  type Meta,
  type Package,
  type Property,
} from './types.js';

// ---- blobs as Go marshals the declcfg structs (field order, omitempty) ----

function properties(props: readonly Property[] | undefined): unknown[] | undefined {
  if (props === undefined || props.length === 0) return undefined;
  return props.map((p) => ({ type: p.type ?? '', value: p.value === undefined ? null : p.value }));
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

export function packageBlob(p: Package): Record<string, unknown> {
  return {
    schema: p.schema ?? '',
    name: p.name ?? '',
    defaultChannel: p.defaultChannel ?? '',
    icon: p.icon == null ? undefined : { base64data: hasNilBytes(p.icon) ? null : (p.icon.base64data ?? null), mediatype: p.icon.mediatype ?? '' },
    description: nonEmpty(p.description),
    properties: properties(p.properties),
  };
}

function entryBlob(e: ChannelEntry): Record<string, unknown> {
  return {
    name: e.name ?? '',
    replaces: nonEmpty(e.replaces),
    skips: e.skips === undefined || e.skips.length === 0 ? undefined : e.skips,
    skipRange: nonEmpty(e.skipRange),
  };
}

export function channelBlob(c: Channel): Record<string, unknown> {
  return {
    schema: c.schema ?? '',
    name: c.name ?? '',
    package: c.package ?? '',
    entries: c.entries == null || isNilSlice(c.entries) ? null : c.entries.map(entryBlob),
    properties: properties(c.properties),
  };
}

export function bundleBlob(b: Bundle): Record<string, unknown> {
  return {
    schema: b.schema ?? '',
    name: nonEmpty(b.name),
    package: nonEmpty(b.package),
    image: b.image ?? '',
    properties: properties(b.properties),
    relatedImages:
      b.relatedImages === undefined || b.relatedImages.length === 0 ? undefined : b.relatedImages.map((r) => ({ name: r.name ?? '', image: r.image ?? '' })),
  };
}

export function deprecationBlob(d: Deprecation): Record<string, unknown> {
  return {
    schema: d.schema ?? '',
    package: d.package ?? '',
    entries:
      d.entries == null || isNilSlice(d.entries)
        ? null
        : d.entries.map((e) => ({
            reference: { schema: e.reference?.schema ?? '', name: nonEmpty(e.reference?.name) },
            message: e.message ?? '',
          })),
  };
}

export function metaBlob(m: Meta): Record<string, unknown> {
  return m.blob;
}

// ---- ordering ----

function byName<T extends { name: string }>(a: T, b: T): number {
  return compareGoStrings(a.name, b.name);
}

/** opm's configsByPackage: the blobs of each package (packages named "" are dropped), and the others naming none. */
export function configsByPackage(cfg: DeclarativeConfig): {
  packageNames: string[];
  byPackage: Map<string, DeclarativeConfig>;
  rootOthers: Meta[];
} {
  const byPackage = new Map<string, DeclarativeConfig>();
  const rootOthers: Meta[] = [];
  const of = (name: string): DeclarativeConfig | undefined => {
    if (name === '' || name === undefined) return undefined;
    let c = byPackage.get(name);
    if (c === undefined) {
      c = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
      byPackage.set(name, c);
    }
    return c;
  };
  for (const p of cfg.packages) of(p.name)?.packages.push(p);
  for (const c of cfg.channels) of(c.package)?.channels.push(c);
  for (const b of cfg.bundles) of(b.package)?.bundles.push(b);
  for (const o of cfg.others) {
    if (o.package === '' || o.package === undefined) rootOthers.push(o);
    else of(o.package)?.others.push(o);
  }
  for (const d of cfg.deprecations) of(d.package)?.deprecations.push(d);
  const packageNames = [...byPackage.keys()].sort(compareGoStrings);
  return { packageNames, byPackage, rootOthers };
}

/** Every blob in the order opm's writers emit them (writeToEncoder). */
export function orderedBlobs(cfg: DeclarativeConfig): Record<string, unknown>[] {
  const { packageNames, byPackage, rootOthers } = configsByPackage(cfg);
  const out: Record<string, unknown>[] = [];
  for (const name of packageNames) {
    const c = byPackage.get(name)!;
    for (const p of c.packages) out.push(packageBlob(p));
    for (const ch of [...c.channels].sort(byName)) out.push(channelBlob(ch));
    for (const b of [...c.bundles].sort(byName)) out.push(bundleBlob(b));
    for (const o of [...c.others].sort((a, b) => compareGoStrings(a.schema, b.schema))) out.push(metaBlob(o));
    for (const d of c.deprecations) out.push(deprecationBlob(d));
  }
  for (const o of rootOthers) out.push(metaBlob(o));
  return out;
}

/** The blobs sorted as opm orders them, as a DeclarativeConfig (packages by name, channels and bundles by name). */
export function sortByPackage(cfg: DeclarativeConfig): DeclarativeConfig {
  const { packageNames, byPackage, rootOthers } = configsByPackage(cfg);
  const out: DeclarativeConfig = { packages: [], channels: [], bundles: [], deprecations: [], others: [] };
  for (const name of packageNames) {
    const c = byPackage.get(name)!;
    out.packages.push(...c.packages);
    out.channels.push(...[...c.channels].sort(byName));
    out.bundles.push(...[...c.bundles].sort(byName));
    out.others.push(...[...c.others].sort((a, b) => compareGoStrings(a.schema, b.schema)));
    out.deprecations.push(...c.deprecations);
  }
  out.others.push(...rootOthers);
  return out;
}

// ---- JSON and YAML ----

/** opm's WriteJSON: one 4-space-indented JSON object per blob, each followed by a newline. */
export function writeJSON(cfg: DeclarativeConfig): string {
  const parts: string[] = [];
  for (const blob of orderedBlobs(cfg)) parts.push(goJSON(blob, { indent: '    ' }), '\n');
  return parts.join('');
}

/** One blob as opm's WriteJSON writes it. */
export function blobJSON(blob: Record<string, unknown>): string {
  return goJSON(blob, { indent: '    ' }) + '\n';
}

/** opm's WriteYAML: each blob as a YAML document after a `---` line. */
export function writeYAML(cfg: DeclarativeConfig): string {
  const parts: string[] = [];
  for (const blob of orderedBlobs(cfg)) parts.push('---\n', jsonToYAML(blob));
  return parts.join('');
}

/** One blob as opm's WriteYAML writes it (with its `---` line). */
export function blobYAML(blob: Record<string, unknown>): string {
  return '---\n' + jsonToYAML(blob);
}

export type OutputFormat = 'json' | 'yaml';

/** writeJSON or writeYAML by name. */
export function writeFormat(cfg: DeclarativeConfig, format: OutputFormat): string {
  return format === 'json' ? writeJSON(cfg) : writeYAML(cfg);
}

// ---- files ----

export class WriteError extends Error {
  override readonly name = 'WriteError';
}

/**
 * opm's WriteFS: each package's blobs into `<dir>/<package>/catalog<ext>`, blobs naming no
 * package into `<dir>/catalog<ext>`. Package names must be single local path elements.
 * Returns the files written (relative to dir).
 */
export function writeFS(cfg: DeclarativeConfig, dir: string, format: OutputFormat): string[] {
  const ext = format === 'json' ? '.json' : '.yaml';
  const { packageNames, byPackage, rootOthers } = configsByPackage(cfg);
  const written: string[] = [];
  mkdirSync(dir, { recursive: true });
  for (const name of packageNames) {
    if (!isLocalPath(name)) throw new WriteError(`invalid package name ${goQuote(name)}: must be a single local path element`);
    mkdirSync(join(dir, name), { recursive: true });
    const rel = `${name}/catalog${ext}`;
    writeFileSync(join(dir, rel), writeFormat(byPackage.get(name)!, format));
    written.push(rel);
  }
  if (rootOthers.length > 0) {
    const rel = `catalog${ext}`;
    writeFileSync(join(dir, rel), writeFormat({ packages: [], channels: [], bundles: [], deprecations: [], others: rootOthers }, format));
    written.push(rel);
  }
  return written;
}

/** Go's filepath.IsLocal on Unix: relative, non-empty, and not escaping through "..". */
function isLocalPath(path: string): boolean {
  if (path === '' || path.startsWith('/')) return false;
  let clean = path;
  if (path.split('/').some((p) => p === '.' || p === '..')) clean = posix.normalize(path).replace(/\/$/, '');
  return !(clean === '..' || clean.startsWith('../'));
}

// ---- mermaid ----

export interface MermaidOptions {
  /** the lowest edge (bundle name) to draw; an unknown name is an error */
  minEdgeName?: string;
  /** draw only this package's channels */
  specifiedPackageName?: string;
  /** mark skipped entries and links (default true) */
  drawV0Semantics?: boolean;
  /** where warnings go (opm prints them on stderr) */
  warn?: (line: string) => void;
}

export class MermaidError extends Error {
  override readonly name = 'MermaidError';
}

const ZERO = new Version(0n, 0n, 0n);

function packageVersion(b: Bundle): Version {
  const pkgs = (b.properties ?? []).filter((p) => p.type === PropertyPackage);
  if (pkgs.length !== 1) {
    throw new MermaidError(`bundle ${goQuote(b.name)} has multiple ${goQuote(PropertyPackage)} properties, expected exactly 1`);
  }
  const value = pkgs[0]!.value;
  const version =
    typeof value === 'object' && value !== null && typeof (value as { version?: unknown }).version === 'string' ? (value as { version: string }).version : '';
  try {
    return parseSemver(version);
  } catch (err) {
    throw new MermaidError(`bundle ${goQuote(b.name)} has invalid version ${goQuote(version)}: ${(err as Error).message}`);
  }
}

function bundleVersions(cfg: DeclarativeConfig): Map<string, Version> {
  const out = new Map<string, Version>();
  for (const b of cfg.bundles) if (!out.has(b.name)) out.set(b.name, packageVersion(b));
  return out;
}

function stableSort<T>(xs: T[], less: (a: T, b: T) => boolean): T[] {
  return xs
    .map((x, i) => [x, i] as const)
    .sort((a, b) => (less(a[0], b[0]) ? -1 : less(b[0], a[0]) ? 1 : a[1] - b[1]))
    .map(([x]) => x);
}

interface FilteredChannel {
  name: string;
  package: string;
  entries: ChannelEntry[];
}

function filterChannel(
  opts: MermaidOptions,
  c: Channel,
  versions: Map<string, Version>,
  minVersion: Version,
  minEdgePackage: string,
): FilteredChannel | undefined {
  const minEdge = opts.minEdgeName ?? '';
  const pkgFilter = opts.specifiedPackageName ?? '';
  if (minEdge === '' && pkgFilter === '') return { name: c.name, package: c.package, entries: c.entries ?? [] };
  if (pkgFilter !== '' && c.package !== pkgFilter) return undefined;
  if (minEdgePackage !== '' && c.package !== minEdgePackage) return undefined;
  const v = (name: string): Version => versions.get(name) ?? ZERO;
  const out: ChannelEntry[] = [];
  for (const ce of c.entries ?? []) {
    const f: ChannelEntry = { name: ce.name };
    const hasRefs = (ce.replaces ?? '') !== '' || (ce.skips ?? []).length > 0 || (ce.skipRange ?? '') !== '';
    if (minEdge === '') {
      if (ce.skipRange) f.skipRange = ce.skipRange;
      if (ce.replaces) f.replaces = ce.replaces;
      if (ce.skips && ce.skips.length > 0) f.skips = [...ce.skips];
      out.push(f);
      continue;
    }
    if (ce.name === minEdge) {
      out.push(f);
      continue;
    }
    if (ce.replaces && v(ce.replaces).gte(minVersion)) f.replaces = ce.replaces;
    if (ce.skips && ce.skips.length > 0) {
      const kept = ce.skips.filter((s) => v(s).gte(minVersion));
      if (kept.length > 0) f.skips = kept;
    }
    if (ce.skipRange) {
      try {
        if (parseRange(ce.skipRange)(minVersion)) f.skipRange = ce.skipRange;
      } catch {
        // an unparsable range does not filter
      }
    }
    const keeps = (f.replaces ?? '') !== '' || (f.skips ?? []).length > 0 || (f.skipRange ?? '') !== '';
    if (keeps || (!hasRefs && v(f.name).gte(minVersion))) out.push(f);
  }
  return out.length > 0 ? { name: c.name, package: c.package, entries: out } : undefined;
}

/** opm's MermaidWriter.WriteChannels (`render-template -o mermaid`, `opm alpha render-graph`). */
export function writeMermaid(cfg: DeclarativeConfig, opts: MermaidOptions = {}): string {
  const drawV0 = opts.drawV0Semantics ?? true;
  const warn = opts.warn ?? ((line: string) => void process.stderr.write(line));
  const channels = stableSort(cfg.channels, (a, b) => compareGoStrings(a.name, b.name) < 0);
  const versions = bundleVersions(cfg);
  const v = (name: string): Version => versions.get(name) ?? ZERO;

  let minVersion = ZERO;
  const minEdge = opts.minEdgeName ?? '';
  if (minEdge !== '') {
    const mv = versions.get(minEdge);
    if (mv === undefined) throw new MermaidError(`unknown minimum edge name: ${goQuote(minEdge)}`);
    minVersion = mv;
  }
  let minEdgePackage = '';
  if (minEdge !== '') {
    outer: for (const c of cfg.channels) {
      for (const ce of c.entries ?? []) {
        if (ce.name === minEdge) {
          minEdgePackage = c.package;
          break outer;
        }
      }
    }
  }

  const depByPackage = new Set<string>();
  const depByChannel = new Set<string>();
  const depByBundle = new Set<string>();
  for (const d of cfg.deprecations) {
    for (const e of d.entries ?? []) {
      if (e.reference.schema === SchemaPackage) depByPackage.add(d.package);
      else if (e.reference.schema === SchemaChannel) depByChannel.add(e.reference.name ?? '');
      else if (e.reference.schema === SchemaBundle) depByBundle.add(e.reference.name ?? '');
    }
  }

  const pkgs = new Map<string, string[]>();
  let deprecatedPackage = '';
  const deprecatedChannelIDs: string[] = [];
  const decorated: Record<'deprecated' | 'deprecatedskipped' | 'skipped', string[]> = {
    deprecated: [],
    deprecatedskipped: [],
    skipped: [],
  };
  let linkID = 0;
  const skippedLinkIDs: string[] = [];

  for (const c of channels) {
    const fc = filterChannel(opts, c, versions, minVersion, minEdgePackage);
    if (fc === undefined) continue;
    let b = pkgs.get(c.package);
    if (b === undefined) {
      b = [];
      pkgs.set(c.package, b);
    }
    const channelID = `${fc.package}-${fc.name}`;
    b.push(`    %% channel ${goQuote(fc.name)}\n`);
    b.push(`    subgraph ${channelID}[${goQuote(fc.name)}]\n`);
    if (depByPackage.has(fc.package)) deprecatedPackage = fc.package;
    if (depByChannel.has(fc.name)) deprecatedChannelIDs.push(channelID);

    const sorted = stableSort(fc.entries, (x, y) => v(x.name).gt(v(y.name)));
    const skipped = new Set<string>();
    const semantics = (edge: string, id: number, captureNew: boolean): void => {
      if (!drawV0) return;
      if (skipped.has(edge)) skippedLinkIDs.push(String(id));
      else if (captureNew) skipped.add(edge);
    };

    for (const ce of sorted) {
      const entryID = `${channelID}-${ce.name}`;
      b.push(`      ${entryID}[${goQuote(ce.name)}]\n`);
      if (depByBundle.has(ce.name) && skipped.has(ce.name)) decorated.deprecatedskipped.push(entryID);
      else if (depByBundle.has(ce.name)) decorated.deprecated.push(entryID);
      else if (skipped.has(ce.name)) decorated.skipped.push(entryID);

      for (const s of ce.skips ?? []) {
        b.push(`      ${channelID}-${s}[${goQuote(s)}]-- skip --> ${entryID}[${goQuote(ce.name)}]\n`);
        semantics(s, linkID, true);
        linkID++;
      }
      if (ce.skipRange) {
        let range: ((v: Version) => boolean) | undefined;
        try {
          range = parseRange(ce.skipRange);
        } catch (err) {
          warn(`warning: ignoring invalid SkipRange for package/edge ${goQuote(c.package)}/${goQuote(ce.name)}: ${(err as Error).message}\n`);
        }
        if (range !== undefined) {
          for (const edge of fc.entries) {
            if (range(v(edge.name))) {
              b.push(`      ${channelID}-${edge.name}[${goQuote(edge.name)}]-- "skipRange(${ce.skipRange})" --> ${entryID}[${goQuote(ce.name)}]\n`);
              semantics(ce.name, linkID, false);
              linkID++;
            }
          }
        }
      }
      if (ce.replaces) {
        b.push(`      ${channelID}-${ce.replaces}[${goQuote(ce.replaces)}]-- replace --> ${entryID}[${goQuote(ce.name)}]\n`);
        semantics(ce.name, linkID, false);
        linkID++;
      }
    }
    b.push('    end\n');
  }

  const out: string[] = [
    'graph LR\n',
    '  classDef deprecated fill:#E8960F\n',
    '  classDef skipped stroke:#FF0000,stroke-width:4px\n',
    '  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n',
  ];
  for (const name of [...pkgs.keys()].sort(compareGoStrings)) {
    out.push(`  %% package ${goQuote(name)}\n`, `  subgraph ${goQuote(name)}\n`, ...pkgs.get(name)!, '  end\n');
  }
  if (deprecatedPackage !== '') out.push(`style ${deprecatedPackage} fill:#989695\n`);
  for (const id of deprecatedChannelIDs) out.push(`style ${id} fill:#DCD0FF\n`);
  for (const key of ['deprecated', 'deprecatedskipped', 'skipped'] as const) {
    const ids = decorated[key];
    if (ids.length > 0) out.push(`class ${[...ids].sort(compareGoStrings).join(',')} ${key}\n`);
  }
  if (skippedLinkIDs.length > 0) {
    out.push(`linkStyle ${skippedLinkIDs.join(',')} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n`);
  }
  return out.join('');
}
