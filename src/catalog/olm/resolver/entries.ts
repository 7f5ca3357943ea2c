// The resolver's candidate model (OLM's cache.Entry, pkg/controller/registry/resolver/cache): one
// entry per bundle and channel of every catalog snapshot, plus a virtual catalog of the operators
// already installed in the namespace. Properties are read as OLM's registry source reads an
// api.Bundle (source_registry.go newOperatorFromBundle): the bundle's properties, or its provided
// APIs when it has none, plus the legacy `dependencies` translated into `*.required` properties.
import type { ApiBundle, TypedValue } from '../../api/api.js';
import { parse as parseStrict, parseRange, parseTolerant, type Range, type Version } from '../../../golang/semver.js';
import type { CatalogKey, CatalogSnapshot, InstalledOperator } from './types.js';

/** The virtual catalog's name (cache.existingOperatorKey). */
export const EXISTING = '@existing';

/**
 * A candidate. Everything read from properties is parsed on first use: a resolution looks at the few
 * thousand entries its Subscriptions can reach, not at the tens of thousands a catalog holds.
 */
export class Entry {
  /** an installed operator a Subscription points at (status.installedCSV): it may be replaced */
  subscribed = false;
  private props: ParsedProperty[] | undefined;
  private propsError: Error | undefined;
  private ver: Version | undefined | null = null;
  private range: Range | undefined | null = null;
  private pkgs: { packageName: string; version: string }[] | undefined;
  private apis: { group: string; version: string; kind: string }[] | undefined;
  private pkgVersions: (Version | undefined)[] | undefined;

  constructor(
    readonly name: string,
    readonly packageName: string,
    /** '' for an installed operator */
    readonly channel: string,
    readonly catalog: CatalogKey,
    readonly virtual: boolean,
    /** whether the channel is its package's default channel */
    readonly defaultChannel: boolean,
    readonly replaces: string,
    readonly skips: readonly string[],
    /** the bundle as the catalog sent it (absent for an installed operator) */
    readonly bundle: ApiBundle | undefined,
    private readonly versionText: string,
    private readonly skipRangeText: string,
    private readonly readProperties: () => ParsedProperty[],
  ) {}

  get package(): string {
    return this.packageName;
  }

  /** properties, with values parsed once; what could not be read is in propertiesError */
  get properties(): readonly ParsedProperty[] {
    if (!this.props) {
      try {
        this.props = this.readProperties();
      } catch (err) {
        this.props = [];
        this.propsError = err as Error;
      }
    }
    return this.props;
  }

  get propertiesError(): Error | undefined {
    void this.properties;
    return this.propsError;
  }

  get version(): Version | undefined {
    if (this.ver === null) {
      try {
        this.ver = this.versionText ? parseTolerant(this.versionText) : undefined;
      } catch {
        this.ver = undefined;
      }
    }
    return this.ver;
  }

  get skipRange(): Range | undefined {
    if (this.range === null) {
      try {
        this.range = this.skipRangeText ? parseRange(this.skipRangeText) : undefined;
      } catch {
        this.range = undefined; // OLM ignores a skipRange that does not parse
      }
    }
    return this.range;
  }

  /** the olm.package properties */
  get packages(): readonly { packageName: string; version: string }[] {
    if (!this.pkgs) {
      this.pkgs = [];
      for (const p of this.properties) {
        if (p.type !== 'olm.package' || p.value === undefined) continue;
        const v = obj(p.value);
        this.pkgs.push({ packageName: str(v.packageName), version: str(v.version) });
      }
    }
    return this.pkgs;
  }

  /** the olm.package properties' versions, strictly parsed (undefined where they do not parse) */
  get packageVersions(): readonly (Version | undefined)[] {
    if (!this.pkgVersions) {
      this.pkgVersions = this.packages.map((p) => {
        try {
          return parseStrict(p.version);
        } catch {
          return undefined;
        }
      });
    }
    return this.pkgVersions;
  }

  /** the olm.gvk properties: the APIs it provides */
  get gvks(): readonly { group: string; version: string; kind: string }[] {
    if (!this.apis) {
      this.apis = [];
      for (const p of this.properties) {
        if (p.type !== 'olm.gvk' || p.value === undefined) continue;
        const v = obj(p.value);
        this.apis.push({ group: str(v.group), version: str(v.version), kind: str(v.kind) });
      }
    }
    return this.apis;
  }
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
  return new Entry(
    b.csvName,
    b.packageName,
    b.channelName,
    catalog,
    false,
    b.channelName === defaultChannel,
    b.replaces,
    b.skips,
    b,
    b.version,
    b.skipRange,
    () => bundleProperties(b),
  );
}

function bundleProperties(b: ApiBundle): ParsedProperty[] {
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
  for (const p of props) {
    properties.push(parseProperty(p));
    seen.add(`${p.type}\0${p.value}`);
  }
  for (const p of extra) {
    // a legacy dependency the properties already hold (as text, or as the same JSON in another key order)
    if (seen.has(`${p.type}\0${p.value}`)) continue;
    const parsed = parseProperty(p);
    if (
      parsed.value !== undefined &&
      properties.some((q) => q.type === p.type && q.value !== undefined && canonicalJSON(q.value) === canonicalJSON(parsed.value))
    )
      continue;
    properties.push(parsed);
  }
  return properties;
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
  if (op.package) {
    let version = op.version ?? '';
    try {
      version = op.version ? parseTolerant(op.version).toString() : '';
    } catch {
      // kept as written
    }
    properties.push(
      parseProperty({
        type: 'olm.package',
        value: goJSON([
          ['packageName', op.package],
          ['version', version],
        ]),
      }),
    );
  }
  for (const g of op.providedApis) properties.push(parseProperty({ type: 'olm.gvk', value: gvkText(g) }));
  return new Entry(op.csvName, op.package ?? '', '', { name: EXISTING, namespace }, true, false, '', [], undefined, op.version ?? '', '', () => properties);
}

/** The olm.package properties of an entry (packageName, version), for predicates and invariants. */
export const packageProperties = (e: Entry): readonly { packageName: string; version: string }[] => e.packages;

/** The olm.gvk properties of an entry. */
export const gvkProperties = (e: Entry): readonly { group: string; version: string; kind: string }[] => e.gvks;

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
      // Indexed by what the catalog says without parsing properties: opm serves a bundle's
      // olm.package property as packageName and its olm.gvk properties as providedApis (the
      // predicates still test the properties). An installed operator's properties are its own.
      push(this.byPackage, e.package, e);
      const apis = e.bundle ? e.bundle.providedApis : e.gvks;
      for (const g of new Set(apis.map(gvkKey))) push(this.byGvk, g, e);
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
