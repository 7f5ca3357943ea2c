// The resolver's candidate model (OLM's cache.Entry, pkg/controller/registry/resolver/cache): one
// entry per bundle and channel of every catalog snapshot, plus a virtual catalog of the operators
// already installed in the namespace. Properties are read as OLM's registry source reads an
// api.Bundle (source_registry.go newOperatorFromBundle): the bundle's properties, or its provided
// APIs when it has none, plus the legacy `dependencies` translated into `*.required` properties.
import type { ApiBundle, TypedValue } from '../../api/api.js';
import { parseRange, parseTolerant, type Range, type Version } from '../../semver.js';
import type { CatalogKey, CatalogSnapshot, InstalledOperator } from './types.js';

/** The virtual catalog's name (cache.existingOperatorKey). */
export const EXISTING = '@existing';

export interface Entry {
  readonly name: string;
  readonly package: string;
  /** '' for an installed operator */
  readonly channel: string;
  readonly catalog: CatalogKey;
  readonly virtual: boolean;
  /** whether the channel is its package's default channel */
  readonly defaultChannel: boolean;
  readonly version: Version | undefined;
  readonly replaces: string;
  readonly skips: readonly string[];
  readonly skipRange: Range | undefined;
  /** properties, with values parsed once */
  readonly properties: readonly ParsedProperty[];
  /** the bundle as the catalog sent it (absent for an installed operator) */
  readonly bundle: ApiBundle | undefined;
  /** an installed operator a Subscription points at (status.installedCSV): it may be replaced */
  subscribed: boolean;
}

export interface ParsedProperty {
  readonly type: string;
  /** the JSON text, as the catalog sent it */
  readonly text: string;
  /** the parsed value; undefined when the text is not JSON */
  readonly value: unknown;
}

export const keyString = (k: CatalogKey): string => `${k.name}/${k.namespace}`;
export const sameKey = (a: CatalogKey, b: CatalogKey): boolean => a.name === b.name && a.namespace === b.namespace;

function parseProperty(p: TypedValue): ParsedProperty {
  let value: unknown;
  try {
    value = JSON.parse(p.value) as unknown;
  } catch {
    value = undefined;
  }
  return { type: p.type, text: p.value, value };
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Go's json.Marshal of a struct with the given string fields, in order. */
const goJSON = (fields: [string, string][]): string => `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;

/** legacyDependenciesToProperties: api.Dependency → *.required properties. */
function legacyDependencies(deps: readonly TypedValue[]): TypedValue[] {
  const out: TypedValue[] = [];
  for (const d of deps) {
    switch (d.type) {
      case 'olm.gvk': {
        const v = obj(parseOrThrow(d.value, "failed to translate legacy dependencies to properties: failed to unmarshal legacy 'olm.gvk' dependency"));
        out.push({
          type: 'olm.gvk.required',
          value: goJSON([
            ['group', str(v.group)],
            ['version', str(v.version)],
            ['kind', str(v.kind)],
          ]),
        });
        break;
      }
      case 'olm.package': {
        const v = obj(parseOrThrow(d.value, "failed to translate legacy dependencies to properties: failed to unmarshal legacy 'olm.package' dependency"));
        out.push({
          type: 'olm.package.required',
          value: goJSON([
            ['packageName', str(v.packageName)],
            ['versionRange', str(v.version)],
          ]),
        });
        break;
      }
      case 'olm.label':
        out.push({ type: 'olm.label.required', value: d.value });
        break;
      case 'olm.constraint':
        out.push({ type: 'olm.constraint', value: d.value });
        break;
    }
  }
  return out;
}

function parseOrThrow(text: string, context: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${context}: ${(err as Error).message}`, { cause: err });
  }
}

const gvkText = (g: { group: string; version: string; kind: string }): string =>
  goJSON([
    ['group', g.group],
    ['kind', g.kind],
    ['version', g.version],
  ]);

/**
 * newOperatorFromBundle: the properties OLM resolves with. One difference: a property the catalog
 * sends twice (opm serves olm.package.required both as a property and as a legacy dependency, which
 * OLM turns into a second, identical property) is kept once, so a dependency is explained once.
 */
export function entryFromBundle(b: ApiBundle, catalog: CatalogKey, defaultChannel: string): Entry {
  let props: TypedValue[] = b.properties;
  if (props.length === 0) {
    props = b.providedApis.map((g) => ({ type: 'olm.gvk', value: gvkText(g) })).sort((x, y) => (x.value < y.value ? -1 : x.value > y.value ? 1 : 0));
  }
  const extra =
    b.dependencies.length > 0
      ? legacyDependencies(b.dependencies)
      : b.requiredApis.map((g) => ({
          type: 'olm.gvk.required',
          value: goJSON([
            ['group', g.group],
            ['version', g.version],
            ['kind', g.kind],
          ]),
        }));
  const seen = new Set<string>();
  const properties: ParsedProperty[] = [];
  for (const p of [...props, ...extra]) {
    const parsed = parseProperty(p);
    // the same property twice (as text, or as the same JSON value written in another key order)
    const key = `${p.type}\0${parsed.value === undefined ? p.value : canonicalJSON(parsed.value)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    properties.push(parsed);
  }
  let version: Version | undefined;
  try {
    version = parseTolerant(b.version);
  } catch {
    version = undefined;
  }
  let skipRange: Range | undefined;
  if (b.skipRange) {
    try {
      skipRange = parseRange(b.skipRange);
    } catch {
      skipRange = undefined; // OLM ignores a skipRange that does not parse
    }
  }
  return {
    name: b.csvName,
    package: b.packageName,
    channel: b.channelName,
    catalog,
    virtual: false,
    defaultChannel: b.channelName === defaultChannel,
    version,
    replaces: b.replaces,
    skips: b.skips,
    skipRange,
    properties,
    bundle: b,
    subscribed: false,
  };
}

function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJSON(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** An installed CSV as an entry of the namespace's virtual catalog (newEntryFromV1Alpha1CSV). */
export function entryFromInstalled(op: InstalledOperator, namespace: string): Entry {
  const properties: ParsedProperty[] = [];
  let version: Version | undefined;
  try {
    version = op.version ? parseTolerant(op.version) : undefined;
  } catch {
    version = undefined;
  }
  if (op.package) {
    const text = goJSON([
      ['packageName', op.package],
      ['version', version?.toString() ?? op.version ?? ''],
    ]);
    properties.push(parseProperty({ type: 'olm.package', value: text }));
  }
  for (const g of op.providedApis) properties.push(parseProperty({ type: 'olm.gvk', value: gvkText(g) }));
  return {
    name: op.csvName,
    package: op.package ?? '',
    channel: '',
    catalog: { name: EXISTING, namespace },
    virtual: true,
    defaultChannel: false,
    version,
    replaces: '',
    skips: [],
    skipRange: undefined,
    properties,
    bundle: undefined,
    subscribed: false,
  };
}

/** The olm.package properties of an entry (packageName, version), for predicates and invariants. */
export function packageProperties(e: Entry): { packageName: string; version: string }[] {
  const out: { packageName: string; version: string }[] = [];
  for (const p of e.properties) {
    if (p.type !== 'olm.package' || p.value === undefined) continue;
    const v = obj(p.value);
    out.push({ packageName: str(v.packageName), version: str(v.version) });
  }
  return out;
}

/** The olm.gvk properties of an entry. */
export function gvkProperties(e: Entry): { group: string; version: string; kind: string }[] {
  const out: { group: string; version: string; kind: string }[] = [];
  for (const p of e.properties) {
    if (p.type !== 'olm.gvk' || p.value === undefined) continue;
    const v = obj(p.value);
    out.push({ group: str(v.group), version: str(v.version), kind: str(v.kind) });
  }
  return out;
}

export const gvkKey = (g: { group: string; version: string; kind: string }): string => `${g.group}/${g.version}/${g.kind}`;

/** One catalog snapshot's entries, in the order the catalog sent them. */
export interface Snapshot {
  readonly key: CatalogKey;
  readonly priority: number;
  readonly virtual: boolean;
  readonly entries: Entry[];
  /** package → channel → entries, in snapshot order */
  readonly channels: Map<string, Map<string, Entry[]>>;
}

/** Every entry of every snapshot in scope, indexed by package and by provided API. */
export class EntryIndex {
  readonly snapshots: Snapshot[] = [];
  readonly byPackage = new Map<string, Entry[]>();
  readonly byGvk = new Map<string, Entry[]>();
  readonly all: Entry[] = [];
  private readonly sorted = new Map<Entry[], Entry[] | Error>();

  constructor(namespace: string, catalogs: readonly CatalogSnapshot[], installed: readonly InstalledOperator[]) {
    this.add(
      { name: EXISTING, namespace },
      0,
      true,
      installed.map((op) => entryFromInstalled(op, namespace)),
    );
    for (const c of catalogs) {
      const dc = c.defaultChannels;
      this.add(
        c.key,
        c.priority,
        false,
        c.bundles.map((b) => entryFromBundle(b, c.key, dc[b.packageName] ?? '')),
      );
    }
  }

  private add(key: CatalogKey, priority: number, virtual: boolean, entries: Entry[]): void {
    const channels = new Map<string, Map<string, Entry[]>>();
    for (const e of entries) {
      let chs = channels.get(e.package);
      if (!chs) channels.set(e.package, (chs = new Map<string, Entry[]>()));
      let list = chs.get(e.channel);
      if (!list) chs.set(e.channel, (list = []));
      list.push(e);
      this.all.push(e);
      const pkgs = new Set([e.package, ...packageProperties(e).map((p) => p.packageName)]);
      for (const p of pkgs) push(this.byPackage, p, e);
      for (const g of new Set(gvkProperties(e).map(gvkKey))) push(this.byGvk, g, e);
    }
    this.snapshots.push({ key, priority, virtual, entries, channels });
  }

  snapshot(key: CatalogKey): Snapshot | undefined {
    return this.snapshots.find((s) => sameKey(s.key, key));
  }

  /** The channel's entries in upgrade order, head first (sortChannel), computed once per channel. */
  sortedChannel(entries: Entry[]): Entry[] {
    let s = this.sorted.get(entries);
    if (!s) {
      try {
        s = sortChannel(entries);
      } catch (err) {
        s = err as Error;
      }
      this.sorted.set(entries, s);
    }
    if (s instanceof Error) throw s;
    return s;
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

const goQuote = (s: string): string => JSON.stringify(s);

/**
 * sortChannel: a channel's entries along its replaces chain, head first; entries that some entry
 * skips are left out. A channel needs exactly one head (an entry nothing replaces or skips) and one
 * chain; OLM's errors otherwise.
 */
export function sortChannel(bundles: readonly Entry[]): Entry[] {
  if (bundles.length === 0) return [];
  const packageName = bundles[0]!.package;
  const channelName = bundles[0]!.channel;
  const lookup = new Map<string, Entry>();
  for (const b of bundles) lookup.set(b.name, b);
  const replacedBy = new Set<Entry>();
  const replaces = new Map<Entry, Entry>();
  const skipped = new Set<string>();
  for (const b of bundles) {
    if (b.replaces) {
      const r = lookup.get(b.replaces);
      if (r) {
        replacedBy.add(r);
        replaces.set(b, r);
      }
    }
    for (const s of b.skips) {
      const r = lookup.get(s);
      if (r) {
        replacedBy.add(r);
        skipped.add(s);
      }
    }
  }
  const heads = bundles.filter((b) => !replacedBy.has(b));
  if (heads.length === 0) {
    throw new Error(`no channel heads (entries not replaced by another entry) found in channel ${goQuote(channelName)} of package ${goQuote(packageName)}`);
  }
  const chains: Entry[][] = [];
  for (const head of heads) {
    const chain: Entry[] = [];
    const visited = new Set<Entry>();
    let current = head;
    for (;;) {
      visited.add(current);
      if (!skipped.has(current.name)) chain.push(current);
      const next = replaces.get(current);
      if (!next) break;
      if (visited.has(next)) {
        throw new Error(
          `a cycle exists in the chain of replacement beginning with ${goQuote(head.name)} in channel ${goQuote(channelName)} of package ${goQuote(packageName)}`,
        );
      }
      current = next;
    }
    chains.push(chain);
  }
  if (chains.length > 1) {
    const names = chains.map((c) => (c.length === 0 ? '[]' : c.length === 1 ? c[0]!.name : `${c[0]!.name}...${c[c.length - 1]!.name}`));
    throw new Error(
      `a unique replacement chain within a channel is required to determine the relative order between channel entries, but ${names.length} replacement chains were found in channel ${goQuote(channelName)} of package ${goQuote(packageName)}: ${names.join(', ')}`,
    );
  }
  return chains[0]!;
}
