// The registry index as it was before its bundles were packed (each one converted from the model
// when asked for, and encoded with protobufjs): kept for the tests only, as the reference the packed
// index's answers must equal byte for byte (packed-parity.test.ts).
import type { ApiBundle, ApiChannelEntry, ApiPackage, Encoders } from '../../api/api.js';
import { getEncoders } from '../../api/api.js';
import { PropertyGVK } from '../../declcfg/types.js';
import type { Bundle, Model } from '../../model/types.js';
import { checkBundleProperties, modelBundleToApi } from '../api-bundle.js';
import {
  RegistryQueryError,
  channelHead,
  compareBundleKeys,
  gvkKey,
  type BundleKey,
  type IndexBundle,
  type IndexChannel,
  type IndexPackage,
} from '../registry-index.js';

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface ReferenceBundleStore {
  get(key: BundleKey): Promise<ApiBundle>;
  keys(): BundleKey[];
}

/**
 * Bundles straight from the model: each is converted to its API form when asked for (the index keeps
 * the encoded answers it gives most), so start-up does not pay for 30,000 conversions up front.
 */
export class ModelBundleStore implements ReferenceBundleStore {
  private readonly bundles = new Map<string, Bundle>();
  private sortedKeys: BundleKey[] | undefined;

  put(key: BundleKey, b: Bundle): void {
    this.bundles.set(storeKey(key), b);
    this.sortedKeys = undefined;
  }

  get(key: BundleKey): Promise<ApiBundle> {
    const b = this.bundles.get(storeKey(key));
    if (!b) return Promise.reject(new RegistryQueryError(`bundle ${key.packageName}/${key.channelName}/${key.name} not found`));
    try {
      return Promise.resolve(modelBundleToApi(b));
    } catch (err) {
      return Promise.reject(new RegistryQueryError((err as Error).message));
    }
  }

  keys(): BundleKey[] {
    this.sortedKeys ??= [...this.bundles.values()]
      .map((b) => ({ packageName: b.package.name, channelName: b.channel.name, name: b.name }))
      .sort(compareBundleKeys);
    return this.sortedKeys;
  }
}

export function storeKey(k: BundleKey): string {
  return `${k.packageName}\u0000${k.channelName}\u0000${k.name}`;
}

/**
 * Builds the package index from a model and hands each bundle to `put`. What could make a bundle
 * unservable (opm's property checks in ConvertModelBundleToAPIBundle) is checked here, at start-up.
 */
export function referenceIndexFromModel(model: Model, put: (key: BundleKey, b: Bundle) => void): Map<string, IndexPackage> {
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
        const key: BundleKey = { packageName: p.name, channelName: ch.name, name: b.name };
        const provides = new Set<string>();
        for (const prop of b.properties) {
          if (prop.type !== PropertyGVK) continue;
          const g = (prop.value ?? {}) as { group?: unknown; version?: unknown; kind?: unknown };
          provides.add(gvkKey(String(g.group ?? ''), String(g.version ?? ''), String(g.kind ?? '')));
        }
        ic.bundles.set(b.name, { ...key, replaces: b.replaces, skips: b.skips, provides });
        put(key, b);
      }
      ip.channels.set(ch.name, ic);
    }
    pkgs.set(p.name, ip);
  }
  return pkgs;
}

const HEAD_CACHE_LIMIT = 4096;

export class ReferenceIndex {
  private readonly enc: Encoders;
  /** encoded trimmed bundles (replaces and skips cleared), by store key; heads first */
  private readonly trimmed = new Map<string, Buffer>();
  private readonly packageBytes = new Map<string, Buffer>();
  /** lookups built once, in (package, channel, bundle) name order, so queries cost what they return */
  private readonly byReplaced = new Map<string, IndexBundle[]>();
  private readonly byProvided = new Map<string, IndexBundle[]>();
  private readonly headsByProvided = new Map<string, IndexBundle[]>();

  constructor(
    readonly packages: Map<string, IndexPackage>,
    readonly store: ReferenceBundleStore,
  ) {
    this.enc = getEncoders();
    const add = (m: Map<string, IndexBundle[]>, k: string, b: IndexBundle): void => {
      const list = m.get(k);
      if (list) {
        if (list[list.length - 1] !== b) list.push(b);
      } else m.set(k, [b]);
    };
    for (const pkg of sortedValues(packages)) {
      for (const ch of sortedValues(pkg.channels)) {
        for (const b of sortedValues(ch.bundles)) {
          if (b.replaces !== '') add(this.byReplaced, b.replaces, b);
          for (const s of b.skips) add(this.byReplaced, s, b);
          for (const g of b.provides) add(this.byProvided, g, b);
        }
        const head = ch.bundles.get(ch.head);
        if (head) for (const g of head.provides) add(this.headsByProvided, g, head);
      }
    }
  }

  /** Encodes every channel head now, so the first GetBundleForChannel is as fast as the rest. */
  async warm(): Promise<void> {
    for (const p of this.packages.values()) {
      for (const ch of p.channels.values()) await this.trimmedBytes({ packageName: p.name, channelName: ch.name, name: ch.head });
    }
  }

  listPackages(): string[] {
    return [...this.packages.keys()].sort(cmp);
  }

  getPackage(name: string): Buffer {
    const cached = this.packageBytes.get(name);
    if (cached) return cached;
    const pkg = this.packages.get(name);
    if (!pkg) throw new RegistryQueryError(`package ${JSON.stringify(name)} not found`);
    const out: ApiPackage = {
      name: pkg.name,
      channels: [...pkg.channels.values()]
        .map((ch) => ({ name: ch.name, csvName: ch.head, ...(ch.deprecation ? { deprecation: ch.deprecation } : {}) }))
        .sort((a, b) => cmp(a.name, b.name)),
      defaultChannelName: pkg.defaultChannel,
      ...(pkg.deprecation ? { deprecation: pkg.deprecation } : {}),
    };
    const bytes = this.enc.package(out);
    this.packageBytes.set(name, bytes);
    return bytes;
  }

  private async trimmedBytes(key: BundleKey): Promise<Buffer> {
    const k = storeKey(key);
    const cached = this.trimmed.get(k);
    if (cached) return cached;
    const b = await this.store.get(key);
    const bytes = this.enc.bundle({ ...b, replaces: '', skips: [] });
    if (this.trimmed.size < HEAD_CACHE_LIMIT) this.trimmed.set(k, bytes);
    return bytes;
  }

  private lookupChannel(pkgName: string, channelName: string, pkgQuote: boolean): [IndexPackage, IndexChannel] {
    const pkg = this.packages.get(pkgName);
    if (!pkg) throw new RegistryQueryError(pkgQuote ? `package ${JSON.stringify(pkgName)} not found` : `package ${pkgName} not found`);
    const ch = pkg.channels.get(channelName);
    if (!ch) throw new RegistryQueryError(`package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)} not found`);
    return [pkg, ch];
  }

  async getBundle(pkgName: string, channelName: string, csvName: string): Promise<Buffer> {
    const [pkg, ch] = this.lookupChannel(pkgName, channelName, true);
    const b = ch.bundles.get(csvName);
    if (!b) {
      throw new RegistryQueryError(
        `package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)}, bundle ${JSON.stringify(csvName)} not found`,
      );
    }
    return this.trimmedBytes({ packageName: pkg.name, channelName: ch.name, name: b.name });
  }

  async getBundleForChannel(pkgName: string, channelName: string): Promise<Buffer> {
    const [pkg, ch] = this.lookupChannel(pkgName, channelName, true);
    return this.trimmedBytes({ packageName: pkg.name, channelName: ch.name, name: ch.head });
  }

  /** The head's encoded bytes when already known: lets the server answer without a promise. */
  cachedBundleForChannel(pkgName: string, channelName: string): Buffer | undefined {
    const ch = this.packages.get(pkgName)?.channels.get(channelName);
    return ch ? this.trimmed.get(storeKey({ packageName: pkgName, channelName, name: ch.head })) : undefined;
  }

  getChannelEntriesThatReplace(name: string): ApiChannelEntry[] {
    const entries: ApiChannelEntry[] = [];
    for (const b of this.byReplaced.get(name) ?? []) {
      if (b.replaces === name) entries.push(entry(b, b.replaces));
      for (const s of b.skips) if (s === name && s !== b.replaces) entries.push(entry(b, b.replaces));
    }
    if (entries.length === 0) throw new RegistryQueryError(`no channel entries found that replace ${name}`);
    return entries;
  }

  async getBundleThatReplaces(name: string, pkgName: string, channelName: string): Promise<Buffer> {
    const [pkg, ch] = this.lookupChannel(pkgName, channelName, false);
    // opm walks a Go map here, so with several candidates its pick is arbitrary; ours is the first by name.
    for (const b of sortedBundles(ch)) {
      if (b.replaces === name || b.skips.includes(name)) return this.trimmedBytes({ packageName: pkg.name, channelName: ch.name, name: b.name });
    }
    throw new RegistryQueryError(`no entry found for package ${JSON.stringify(pkgName)}, channel ${JSON.stringify(channelName)}`);
  }

  getChannelEntriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const key = gvkKey(group, version, kind);
    const entries: ApiChannelEntry[] = [];
    for (const b of this.byProvided.get(key) ?? []) entries.push(...this.channelEntriesForBundle(b, true));
    if (entries.length === 0) throw notProviding(group, version, kind, 'no channel entries found that provide');
    return entries;
  }

  getLatestChannelEntriesThatProvide(group: string, version: string, kind: string): ApiChannelEntry[] {
    const key = gvkKey(group, version, kind);
    const entries: ApiChannelEntry[] = [];
    for (const b of this.headsByProvided.get(key) ?? []) entries.push(...this.channelEntriesForBundle(b, false));
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
    for (const key of this.store.keys()) {
      const b = await this.store.get(key);
      yield this.enc.bundle(b.bundlePath !== '' ? { ...b, csvJson: '', object: [] } : b);
    }
  }

  private channelEntriesForBundle(b: IndexBundle, ignoreChannel: boolean): ApiChannelEntry[] {
    const out = [entry(b, b.replaces)];
    const inChannel = this.packages.get(b.packageName)?.channels.get(b.channelName)?.bundles;
    for (const s of b.skips) {
      // skips that repeat replaces are left out; so are skips outside the channel unless asked for
      if (s !== b.replaces && (ignoreChannel || inChannel?.has(s))) out.push(entry(b, s));
    }
    return out;
  }
}

function entry(b: IndexBundle, replaces: string): ApiChannelEntry {
  return { packageName: b.packageName, channelName: b.channelName, bundleName: b.name, replaces };
}

function notProviding(group: string, version: string, kind: string, prefix: string): RegistryQueryError {
  return new RegistryQueryError(`${prefix} group:${JSON.stringify(group)} version:${JSON.stringify(version)} kind:${JSON.stringify(kind)}`);
}

function sortedValues<V>(m: Map<string, V>): V[] {
  return [...m.entries()].sort((a, b) => cmp(a[0], b[0])).map((e) => e[1]);
}

function sortedBundles(ch: IndexChannel): IndexBundle[] {
  return sortedValues(ch.bundles);
}
