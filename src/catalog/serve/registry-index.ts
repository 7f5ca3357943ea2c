// The served catalog: an index of packages, channels and bundle edges (opm's pkg/cache packageIndex),
// and the API bundles behind it, either packed in memory as encoded bytes (packed-bundles.ts) or in a
// BundleStore (the cache directory's JSON files). Every query answers as opm's cache does, with its
// error texts; answers are encoded protobuf bytes, and channel heads are kept ready to send.
//
// The index is compact: bundles are numbered in (package, channel, name) order and their names,
// replaces, skips and the provider and replacement lookups live in typed arrays over one table of
// interned strings, so 30,000 bundles cost the heap a few tens of thousands of objects (their names),
// not several per bundle.
import type { ApiBundle, ApiChannelEntry, ApiPackage, Deprecation, Encoders } from '../api/api.js';
import { getEncoders } from '../api/api.js';
import { PropertyGVK } from '../declcfg/types.js';
import { channelHead as modelChannelHead } from '../model/graph.js';
import type { Bundle, Channel, Model } from '../model/types.js';
import { checkBundleProperties } from './api-bundle.js';
import { PackedBundleError, PackedBundles } from './packed-bundles.js';

/** A query that found nothing or could not answer: gRPC status UNKNOWN with this text, as opm returns plain errors. */
export class RegistryQueryError extends Error {
  override readonly name = 'RegistryQueryError';
}

export interface BundleKey {
  packageName: string;
  channelName: string;
  name: string;
}

/** A bundle as the index is built from it (indexFromModel, the cache's packages.json). */
export interface IndexBundle extends BundleKey {
  replaces: string;
  skips: string[];
  /** "group/version/kind" of each provided API (olm.gvk), for the provider queries */
  provides: Set<string>;
  /** its record in the PackedBundles the index serves from, when it serves from one */
  slot?: number;
}

export interface IndexChannel {
  name: string;
  head: string;
  bundles: Map<string, IndexBundle>;
  deprecation?: Deprecation;
}

export interface IndexPackage {
  name: string;
  description: string;
  defaultChannel: string;
  channels: Map<string, IndexChannel>;
  deprecation?: Deprecation;
}

/** API bundles kept outside the index (the cache directory), read when asked for. */
export interface BundleStore {
  get(key: BundleKey): Promise<ApiBundle>;
}

/** opm's bundle key order: channel name, then package name, then bundle name. */
export function compareBundleKeys(a: BundleKey, b: BundleKey): number {
  return cmp(a.channelName, b.channelName) || cmp(a.packageName, b.packageName) || cmp(a.name, b.name);
}
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export const gvkKey = (group: string, version: string, kind: string): string => `${group}/${version}/${kind}`;

/** The channel head's name (model/graph.ts, opm's Channel.Head), its errors as query errors. */
export function channelHead(ch: Channel): string {
  try {
    return modelChannelHead(ch).name;
  } catch (err) {
    throw new RegistryQueryError((err as Error).message);
  }
}

/**
 * Builds the package index from a model and hands each bundle to `visit` (which may pack it and note
 * its slot). What could make a bundle unservable (opm's property checks in
 * ConvertModelBundleToAPIBundle) is checked here, at start-up.
 */
export function indexFromModel(model: Model, visit: (key: BundleKey, b: Bundle, ib: IndexBundle) => void): Map<string, IndexPackage> {
  const pkgs = new Map<string, IndexPackage>();
  for (const p of model.values()) {
    const ip: IndexPackage = {
      name: p.name,
      description: p.description,
      defaultChannel: p.defaultChannel?.name ?? '',
      channels: new Map(),
      ...(p.deprecation ? { deprecation: { message: p.deprecation.message } } : {}),
    };
    for (const ch of p.channels.values()) {
      const ic: IndexChannel = {
        name: ch.name,
        head: channelHead(ch),
        bundles: new Map(),
        ...(ch.deprecation ? { deprecation: { message: ch.deprecation.message } } : {}),
      };
      for (const b of ch.bundles.values()) {
        checkBundleProperties(b);
        const provides = new Set<string>();
        for (const prop of b.properties) {
          if (prop.type !== PropertyGVK) continue;
          const g = (prop.value ?? {}) as { group?: unknown; version?: unknown; kind?: unknown };
          provides.add(gvkKey(String(g.group ?? ''), String(g.version ?? ''), String(g.kind ?? '')));
        }
        const ib: IndexBundle = { packageName: p.name, channelName: ch.name, name: b.name, replaces: b.replaces, skips: b.skips, provides };
        ic.bundles.set(b.name, ib);
        visit(ib, b, ib);
      }
      ip.channels.set(ch.name, ic);
    }
    pkgs.set(p.name, ip);
  }
  return pkgs;
}

/** At most this many channel heads are kept encoded (and, serving from a store, other bundles read). */
const HEAD_CACHE_LIMIT = 4096;

interface PackageRec {
  name: string;
  defaultChannel: string;
  channels: Map<string, ChannelRec>;
  deprecation?: Deprecation;
  /** the encoded api.Package, once asked for */
  bytes?: Buffer;
}

interface ChannelRec {
  pkg: PackageRec;
  name: string;
  head: string;
  /** the head's bundle number, or -1 when the channel has no bundle of that name */
  headId: number;
  /** its bundles are numbers first..end-1, in name order */
  first: number;
  end: number;
  /** bundle name → number */
  ids: Map<string, number>;
  deprecation?: Deprecation;
  /** the head's trimmed bytes, once encoded */
  headBytes?: Buffer;
}

/**
 * Lists of bundle numbers by key, flattened: key k's numbers are ids[at[k]..at[k+1]]. Made from
 * pairs (keys[i], bundles[i]) in order; a number repeated under a key is kept once.
 */
function flatLists(keyCount: number, keys: Uint32Array, bundles: Uint32Array, n: number): { at: Uint32Array; ids: Uint32Array } {
  const at = new Uint32Array(keyCount + 1);
  const last = new Int32Array(keyCount).fill(-1);
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    if (last[k] === bundles[i]) continue;
    last[k] = bundles[i]!;
    at[k + 1]!++;
  }
  for (let k = 0; k < keyCount; k++) at[k + 1]! += at[k]!;
  const ids = new Uint32Array(at[keyCount]!);
  const next = at.slice(0, keyCount);
  last.fill(-1);
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    if (last[k] === bundles[i]) continue;
    last[k] = bundles[i]!;
    ids[next[k]!++] = bundles[i]!;
  }
  return { at, ids };
}

/** Growable lists of (key, bundle number) pairs. */
class Pairs {
  keys = new Uint32Array(1024);
  bundles = new Uint32Array(1024);
  length = 0;
  push(key: number, id: number): void {
    if (this.length === this.keys.length) {
      const keys = new Uint32Array(this.length * 2);
      keys.set(this.keys);
      this.keys = keys;
      const bundles = new Uint32Array(this.length * 2);
      bundles.set(this.bundles);
      this.bundles = bundles;
    }
    this.keys[this.length] = key;
    this.bundles[this.length++] = id;
  }

  flatten(keyCount: number): { at: Uint32Array; ids: Uint32Array } {
    return flatLists(keyCount, this.keys, this.bundles, this.length);
  }
}

export class RegistryIndex {
  private readonly enc: Encoders;
  private readonly packed: PackedBundles | undefined;
  private readonly store: BundleStore | undefined;
  private readonly packages = new Map<string, PackageRec>();
  private readonly packageNames: string[];
  /** every channel, in (package, channel) name order */
  private readonly channels: ChannelRec[] = [];
  private headsCached = 0;
  /** serving from a store: trimmed bytes of bundles other than heads, by number, up to the limit */
  private readonly trimmedCache = new Map<number, Buffer>();

  /** interned names (bundles, replaces, skips) and their numbers */
  private readonly strs: string[] = [];
  private readonly strIds = new Map<string, number>();

  // per bundle, by number
  private readonly channelOf: Uint32Array;
  private readonly nameOf: Uint32Array;
  private readonly replacesOf: Uint32Array;
  /** skips of bundle i: skipIds[skipsAt[i]..skipsAt[i+1]] */
  private readonly skipsAt: Uint32Array;
  private readonly skipIds: Uint32Array;
  /** its record in `packed` */
  private readonly slotOf: Uint32Array;
  /** bundle numbers in opm's key order (channel, package, name): ListBundles */
  private readonly listOrder: Uint32Array;

  /** by name number: the bundles that replace or skip it, in (package, channel, bundle) name order */
  private readonly replacedAt: Uint32Array;
  private readonly replacedIds: Uint32Array;
  /** by API ("group/version/kind") number: the bundles that provide it, and the channel heads that do */
  private readonly gvkIds = new Map<string, number>();
  private readonly providedAt: Uint32Array;
  private readonly providedIds: Uint32Array;
  private readonly headsAt: Uint32Array;
  private readonly headsIds: Uint32Array;

  /**
   * Indexes packages (which are not kept) over their bundles: packed ones (every IndexBundle then has
   * its slot) or a store read by key.
   */
  constructor(packages: Map<string, IndexPackage>, bundles: PackedBundles | BundleStore) {
    this.enc = getEncoders();
    if (bundles instanceof PackedBundles) this.packed = bundles;
    else this.store = bundles;

    let count = 0;
    let skipCount = 0;
    for (const p of packages.values()) {
      for (const ch of p.channels.values()) {
        count += ch.bundles.size;
        for (const b of ch.bundles.values()) skipCount += b.skips.length;
      }
    }
    this.channelOf = new Uint32Array(count);
    this.nameOf = new Uint32Array(count);
    this.replacesOf = new Uint32Array(count);
    this.skipsAt = new Uint32Array(count + 1);
    this.skipIds = new Uint32Array(skipCount);
    this.slotOf = new Uint32Array(this.packed ? count : 0);

    // (name, bundle) for each replaces and skip, (API, bundle) for each provided API and head that provides it
    const replaced = new Pairs();
    const provided = new Pairs();
    const heads = new Pairs();
    let id = 0;
    let skipAt = 0;
    for (const ip of sortedValues(packages)) {
      const pkg: PackageRec = {
        name: ip.name,
        defaultChannel: ip.defaultChannel,
        channels: new Map(),
        ...(ip.deprecation ? { deprecation: { message: ip.deprecation.message } } : {}),
      };
      this.packages.set(ip.name, pkg);
      for (const ic of sortedValues(ip.channels)) {
        const ch: ChannelRec = {
          pkg,
          name: ic.name,
          head: ic.head,
          headId: -1,
          first: id,
          end: id,
          ids: new Map(),
          ...(ic.deprecation ? { deprecation: { message: ic.deprecation.message } } : {}),
        };
        const chIndex = this.channels.length;
        this.channels.push(ch);
        pkg.channels.set(ic.name, ch);
        for (const [bundleName, b] of sortedEntries(ic.bundles)) {
          const name = this.intern(b.name);
          ch.ids.set(bundleName === b.name ? this.strs[name]! : this.strs[this.intern(bundleName)]!, id);
          this.channelOf[id] = chIndex;
          this.nameOf[id] = name;
          const replaces = this.intern(b.replaces);
          this.replacesOf[id] = replaces;
          if (b.replaces !== '') replaced.push(replaces, id);
          this.skipsAt[id] = skipAt;
          for (const s of b.skips) {
            const skip = this.intern(s);
            this.skipIds[skipAt++] = skip;
            replaced.push(skip, id);
          }
          for (const g of b.provides) provided.push(this.gvk(g), id);
          if (this.packed) {
            if (b.slot === undefined) throw new Error(`bundle ${b.packageName}/${b.channelName}/${b.name} has no packed record`);
            this.slotOf[id] = b.slot;
          }
          id++;
        }
        ch.end = id;
        const head = ic.bundles.get(ic.head);
        if (head) {
          ch.headId = ch.ids.get(ic.head)!;
          for (const g of head.provides) heads.push(this.gvk(g), ch.headId);
        }
      }
    }
    this.skipsAt[count] = skipAt;
    this.packageNames = [...this.packages.keys()].sort(cmp);
    // in bundle number order, i.e. (package, channel, bundle) name order
    ({ at: this.replacedAt, ids: this.replacedIds } = replaced.flatten(this.strs.length));
    ({ at: this.providedAt, ids: this.providedIds } = provided.flatten(this.gvkIds.size));
    ({ at: this.headsAt, ids: this.headsIds } = heads.flatten(this.gvkIds.size));

    // opm's key order is channel, package, bundle name: the channels in (channel, package) order, each
    // one's bundles already in name order
    this.listOrder = new Uint32Array(count);
    let at = 0;
    for (const ch of this.channels.slice().sort((a, b) => cmp(a.name, b.name) || cmp(a.pkg.name, b.pkg.name))) {
      for (let i = ch.first; i < ch.end; i++) this.listOrder[at++] = i;
    }
  }

  private intern(s: string): number {
    let n = this.strIds.get(s);
    if (n === undefined) {
      n = this.strs.length;
      this.strs.push(s);
      this.strIds.set(s, n);
    }
    return n;
  }

  private gvk(key: string): number {
    let n = this.gvkIds.get(key);
    if (n === undefined) this.gvkIds.set(key, (n = this.gvkIds.size));
    return n;
  }

  /** Encodes every channel head now (up to the limit), so the first GetBundleForChannel is as fast as the rest. */
  async warm(): Promise<void> {
    for (const ch of this.channels) {
      if (this.headsCached >= HEAD_CACHE_LIMIT) return;
      await this.headBytes(ch);
    }
  }

  listPackages(): string[] {
    return this.packageNames.slice();
  }

  getPackage(name: string): Buffer {
    const pkg = this.packages.get(name);
    if (!pkg) throw new RegistryQueryError(`package ${JSON.stringify(name)} not found`);
    if (pkg.bytes) return pkg.bytes;
    const out: ApiPackage = {
      name: pkg.name,
      channels: [...pkg.channels.values()]
        .map((ch) => ({ name: ch.name, csvName: ch.head, ...(ch.deprecation ? { deprecation: ch.deprecation } : {}) }))
        .sort((a, b) => cmp(a.name, b.name)),
      defaultChannelName: pkg.defaultChannel,
      ...(pkg.deprecation ? { deprecation: pkg.deprecation } : {}),
    };
    pkg.bytes = this.enc.package(out);
    return pkg.bytes;
  }

  private keyOf(id: number): BundleKey {
    const ch = this.channels[this.channelOf[id]!]!;
    return { packageName: ch.pkg.name, channelName: ch.name, name: this.strs[this.nameOf[id]!]! };
  }

  /** Bundle `id` with replaces and skips cleared, encoded. */
  private trimmedBytes(id: number): Buffer | Promise<Buffer> {
    if (this.packed) {
      try {
        return this.packed.trimmed(this.slotOf[id]!);
      } catch (err) {
        throw queryError(err);
      }
    }
    const cached = this.trimmedCache.get(id);
    if (cached) return cached;
    return this.readTrimmed(this.keyOf(id)).then((bytes) => {
      if (this.headsCached + this.trimmedCache.size < HEAD_CACHE_LIMIT) this.trimmedCache.set(id, bytes);
      return bytes;
    });
  }

  private async readTrimmed(key: BundleKey): Promise<Buffer> {
    const b = await this.store!.get(key);
    return this.enc.bundle({ ...b, replaces: '', skips: [] });
  }

  private async headBytes(ch: ChannelRec): Promise<Buffer> {
    if (ch.headBytes) return ch.headBytes;
    let bytes: Buffer;
    if (ch.headId >= 0) bytes = await this.trimmedBytes(ch.headId);
    else if (this.store) bytes = await this.readTrimmed({ packageName: ch.pkg.name, channelName: ch.name, name: ch.head });
    else throw new RegistryQueryError(`bundle ${ch.pkg.name}/${ch.name}/${ch.head} not found`);
    if (this.headsCached < HEAD_CACHE_LIMIT) {
      ch.headBytes = bytes;
      this.headsCached++;
      if (ch.headId >= 0) this.trimmedCache.delete(ch.headId);
    }
    return bytes;
  }

  private lookupChannel(pkgName: string, channelName: string, pkgQuote: boolean): ChannelRec {
    const pkg = this.packages.get(pkgName);
    if (!pkg) throw new RegistryQueryError(pkgQuote ? `package ${JSON.stringify(pkgName)} not found` : `package ${pkgName} not found`);
    const ch = pkg.channels.get(channelName);
    if (!ch) throw new RegistryQueryError(`package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)} not found`);
    return ch;
  }

  async getBundle(pkgName: string, channelName: string, csvName: string): Promise<Buffer> {
    const ch = this.lookupChannel(pkgName, channelName, true);
    const id = ch.ids.get(csvName);
    if (id === undefined) {
      throw new RegistryQueryError(`package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)}, bundle ${JSON.stringify(csvName)} not found`);
    }
    return id === ch.headId ? this.headBytes(ch) : this.trimmedBytes(id);
  }

  async getBundleForChannel(pkgName: string, channelName: string): Promise<Buffer> {
    return this.headBytes(this.lookupChannel(pkgName, channelName, true));
  }

  /** The head's encoded bytes when already known: lets the server answer without a promise. */
  cachedBundleForChannel(pkgName: string, channelName: string): Buffer | undefined {
    return this.packages.get(pkgName)?.channels.get(channelName)?.headBytes;
  }

  private entry(id: number, replaces: number): ApiChannelEntry {
    const ch = this.channels[this.channelOf[id]!]!;
    return { packageName: ch.pkg.name, channelName: ch.name, bundleName: this.strs[this.nameOf[id]!]!, replaces: this.strs[replaces]! };
  }

  getChannelEntriesThatReplace(name: string): ApiChannelEntry[] {
    const entries: ApiChannelEntry[] = [];
    const n = this.strIds.get(name);
    if (n !== undefined) {
      for (let i = this.replacedAt[n]!; i < this.replacedAt[n + 1]!; i++) {
        const id = this.replacedIds[i]!;
        const replaces = this.replacesOf[id]!;
        if (replaces === n) entries.push(this.entry(id, replaces));
        for (let j = this.skipsAt[id]!; j < this.skipsAt[id + 1]!; j++) {
          if (this.skipIds[j] === n && n !== replaces) entries.push(this.entry(id, replaces));
        }
      }
    }
    if (entries.length === 0) throw new RegistryQueryError(`no channel entries found that replace ${name}`);
    return entries;
  }

  async getBundleThatReplaces(name: string, pkgName: string, channelName: string): Promise<Buffer> {
    const ch = this.lookupChannel(pkgName, channelName, false);
    const n = this.strIds.get(name);
    // opm walks a Go map here, so with several candidates its pick is arbitrary; ours is the first by name.
    if (n !== undefined) {
      for (let id = ch.first; id < ch.end; id++) {
        if (this.replacesOf[id] === n || this.skips(id, n)) {
          return id === ch.headId ? this.headBytes(ch) : this.trimmedBytes(id);
        }
      }
    }
    throw new RegistryQueryError(`no entry found for package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)}`);
  }

  /** Whether bundle `id` skips name number n. */
  private skips(id: number, n: number): boolean {
    for (let j = this.skipsAt[id]!; j < this.skipsAt[id + 1]!; j++) if (this.skipIds[j] === n) return true;
    return false;
  }

  getChannelEntriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const g = this.gvkIds.get(gvkKey(group, version, kind));
    const entries: ApiChannelEntry[] = [];
    if (g !== undefined) {
      for (let i = this.providedAt[g]!; i < this.providedAt[g + 1]!; i++) this.channelEntriesForBundle(this.providedIds[i]!, true, entries);
    }
    if (entries.length === 0) throw notProviding(group, version, kind, 'no channel entries found that provide');
    return entries;
  }

  getLatestChannelEntriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const g = this.gvkIds.get(gvkKey(group, version, kind));
    const entries: ApiChannelEntry[] = [];
    if (g !== undefined) {
      for (let i = this.headsAt[g]!; i < this.headsAt[g + 1]!; i++) this.channelEntriesForBundle(this.headsIds[i]!, false, entries);
    }
    if (entries.length === 0) throw notProviding(group, version, kind, 'no channel entries found that provide');
    return entries;
  }

  async getDefaultBundleThatProvides(group: string, version: string, kind: string): Promise<Buffer> {
    const latest = this.getLatestChannelEntriesThatProvide(group, version, kind);
    // Several packages may provide the API; the lexically first package whose default channel does wins.
    latest.sort((a, b) => cmp(a.packageName, b.packageName));
    for (const e of latest) {
      const pkg = this.packages.get(e.packageName);
      if (pkg && e.channelName === pkg.defaultChannel) return this.getBundle(e.packageName, e.channelName, e.bundleName);
    }
    throw notProviding(group, version, kind, 'no entry found that provides');
  }

  /** ListBundles: every bundle in opm's key order, with replaces and skips; csvJson and objects are dropped when the bundle has an image. */
  async *listBundles(): AsyncGenerator<Buffer> {
    const packed = this.packed;
    for (const id of this.listOrder) {
      if (packed) {
        try {
          yield packed.listed(this.slotOf[id]!);
        } catch (err) {
          throw queryError(err);
        }
        continue;
      }
      const b = await this.store!.get(this.keyOf(id));
      yield this.enc.bundle(b.bundlePath !== '' ? { ...b, csvJson: '', object: [] } : b);
    }
  }

  /** The entries of bundle `id`: one for its replaces, one per skip (those repeating replaces left out; so are skips outside the channel unless asked for). */
  private channelEntriesForBundle(id: number, ignoreChannel: boolean, out: ApiChannelEntry[]): void {
    const replaces = this.replacesOf[id]!;
    out.push(this.entry(id, replaces));
    const inChannel = this.channels[this.channelOf[id]!]!.ids;
    for (let j = this.skipsAt[id]!; j < this.skipsAt[id + 1]!; j++) {
      const s = this.skipIds[j]!;
      if (s !== replaces && (ignoreChannel || inChannel.has(this.strs[s]!))) out.push(this.entry(id, s));
    }
  }
}

function queryError(err: unknown): unknown {
  return err instanceof PackedBundleError ? new RegistryQueryError(err.message) : err;
}

function notProviding(group: string, version: string, kind: string, prefix: string): RegistryQueryError {
  return new RegistryQueryError(`${prefix} group:${JSON.stringify(group)} version:${JSON.stringify(version)} kind:${JSON.stringify(kind)}`);
}

function sortedEntries<V>(m: Map<string, V>): [string, V][] {
  return [...m.entries()].sort((a, b) => cmp(a[0], b[0]));
}

function sortedValues<V>(m: Map<string, V>): V[] {
  return sortedEntries(m).map((e) => e[1]);
}
