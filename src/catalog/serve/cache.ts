// `--cache-dir`: opm serve's JSON cache layout, so a catalog image can ship a pre-built cache and the
// server start without loading the catalog:
//   DIR/digest                               hash of the catalog files and the cache contents
//   DIR/cache/packages.json                  the package index (packages, channels, heads, edges)
//   DIR/cache/<pkg>_<channel>_<bundle>.json  one API bundle each, read when asked for
//   DIR/cache/metas/<schema>/[<pkg>/]<fnv64a>.json  custom-schema blobs
// Only the index stays in memory; bundles are read from disk on demand (channel heads are kept encoded).
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ApiBundle, Deprecation } from '../api/api.js';
import type { Bundle } from '../model/types.js';
import { modelBundleToApi } from './api-bundle.js';
import type { ServedCatalog } from './catalog.js';
import { goMarshal } from '../../golang/json.js';
import type { Logger } from './log.js';
import { loadCatalog } from './load.js';
import { MetaStore } from './metas.js';
import { RegistryIndex, RegistryQueryError, indexFromModel, type BundleKey, type BundleStore, type IndexPackage } from './registry-index.js';

const DIGEST_FILE = 'digest';
const CACHE_DIR = 'cache';
const PACKAGES_FILE = 'packages.json';
const METAS_DIR = 'metas';
const MODE_DIR = 0o750;
const MODE_FILE = 0o640;

export class CacheError extends Error {
  override readonly name = 'CacheError';
}

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'file exists',
};

/** A Node file-system error in Go's *PathError words ("open PATH: no such file or directory"). */
export function goFSError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string' && typeof e.path === 'string' && typeof e.syscall === 'string') {
    return `${e.syscall} ${e.path}: ${ERRNO_TEXT[e.code] ?? e.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CacheError(`detect cache format: read cache directory: ${goFSError(err)}`);
  }
}

function bundleFile(base: string, k: BundleKey): string {
  return join(base, CACHE_DIR, `${k.packageName}_${k.channelName}_${k.name}.json`);
}

/** FNV-1a, 64 bit: opm names meta files by it. */
export function fnv64a(data: Uint8Array): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of data) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16);
}

async function listFiles(root: string, dir: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await listFiles(root, p, out);
    else if (e.isFile()) out.push(relative(root, p));
  }
}

/** Hash of every file (path and bytes) of the catalog, then of the cache contents. */
async function computeDigest(configDir: string, cacheBase: string): Promise<string> {
  const h = createHash('sha256');
  for (const root of [configDir, join(cacheBase, CACHE_DIR)]) {
    const files: string[] = [];
    await listFiles(root, root, files);
    files.sort();
    // read ahead a batch at a time (tens of thousands of bundle files), hash in order
    for (let i = 0; i < files.length; i += 64) {
      const batch = files.slice(i, i + 64);
      const datas = await Promise.all(batch.map((f) => readFile(join(root, f))));
      batch.forEach((f, j) => {
        h.update(`${f}\u0000${datas[j]!.length}\u0000`);
        h.update(datas[j]!);
      });
    }
    h.update('\u0001');
  }
  return h.digest('hex').slice(0, 16);
}

interface CachedBundle {
  package: string;
  channel: string;
  name: string;
  replaces: string;
  skips: string[] | null;
  /** ours, not opm's: lets the provider queries run on the index alone */
  providedApis: string[];
}
interface CachedChannel {
  Name: string;
  Head: string;
  Bundles: Record<string, CachedBundle>;
  deprecation?: Deprecation;
}
interface CachedPackage {
  name: string;
  description: string;
  defaultChannel: string;
  Channels: Record<string, CachedChannel>;
  deprecation?: Deprecation;
}

function packagesToJSON(pkgs: Map<string, IndexPackage>): Record<string, CachedPackage> {
  const out: Record<string, CachedPackage> = {};
  for (const p of pkgs.values()) {
    const channels: Record<string, CachedChannel> = {};
    for (const ch of p.channels.values()) {
      const bundles: Record<string, CachedBundle> = {};
      for (const b of ch.bundles.values()) {
        bundles[b.name] = {
          package: b.packageName,
          channel: b.channelName,
          name: b.name,
          replaces: b.replaces,
          skips: b.skips.length ? b.skips : null,
          providedApis: [...b.provides],
        };
      }
      channels[ch.name] = { Name: ch.name, Head: ch.head, Bundles: bundles, ...(ch.deprecation ? { deprecation: ch.deprecation } : {}) };
    }
    out[p.name] = {
      name: p.name,
      description: p.description,
      defaultChannel: p.defaultChannel,
      Channels: channels,
      ...(p.deprecation ? { deprecation: p.deprecation } : {}),
    };
  }
  return out;
}

function packagesFromJSON(data: Record<string, CachedPackage>): Map<string, IndexPackage> {
  const pkgs = new Map<string, IndexPackage>();
  for (const p of Object.values(data)) {
    const ip: IndexPackage = {
      name: p.name,
      description: p.description ?? '',
      defaultChannel: p.defaultChannel ?? '',
      channels: new Map(),
      ...(p.deprecation ? { deprecation: p.deprecation } : {}),
    };
    for (const ch of Object.values(p.Channels ?? {})) {
      const bundles = new Map(
        Object.values(ch.Bundles ?? {}).map((b) => [
          b.name,
          {
            packageName: b.package,
            channelName: b.channel,
            name: b.name,
            replaces: b.replaces ?? '',
            skips: b.skips ?? [],
            provides: new Set(b.providedApis ?? []),
          },
        ]),
      );
      ip.channels.set(ch.Name, { name: ch.Name, head: ch.Head, bundles, ...(ch.deprecation ? { deprecation: ch.deprecation } : {}) });
    }
    pkgs.set(p.name, ip);
  }
  return pkgs;
}

/** API bundle → the JSON opm writes for it (protobuf struct tags: camelCase, empty fields left out). */
function bundleToJSON(b: ApiBundle): string {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    if (v === '' || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    o[k] = v;
  }
  return JSON.stringify(o);
}

function bundleFromJSON(text: string): ApiBundle {
  const o = JSON.parse(text) as Partial<ApiBundle>;
  return {
    csvName: o.csvName ?? '',
    packageName: o.packageName ?? '',
    channelName: o.channelName ?? '',
    csvJson: o.csvJson ?? '',
    object: o.object ?? [],
    bundlePath: o.bundlePath ?? '',
    providedApis: o.providedApis ?? [],
    requiredApis: o.requiredApis ?? [],
    version: o.version ?? '',
    skipRange: o.skipRange ?? '',
    dependencies: o.dependencies ?? [],
    properties: o.properties ?? [],
    replaces: o.replaces ?? '',
    skips: o.skips ?? [],
    ...(o.deprecation ? { deprecation: o.deprecation } : {}),
  };
}

class DiskBundleStore implements BundleStore {
  constructor(private readonly base: string) {}

  async get(key: BundleKey): Promise<ApiBundle> {
    try {
      return bundleFromJSON(await readFile(bundleFile(this.base, key), 'utf8'));
    } catch (err) {
      throw new RegistryQueryError(goFSError(err));
    }
  }
}

export interface CacheOptions {
  cacheDir: string;
  configDir: string;
  logger: Logger;
}

export class JsonCache {
  constructor(private readonly opts: CacheOptions) {}

  /** An empty or missing dir, or one holding a JSON cache, is usable; anything else is refused as opm does. */
  async checkUsable(): Promise<void> {
    const entries = await entriesOf(this.opts.cacheDir);
    if (entries.length === 0) {
      this.opts.logger.info('cache directory is empty, using preferred backend', { backend: 'json' });
      return;
    }
    if (await this.isPresent()) {
      this.opts.logger.info('found existing cache contents', { backend: 'json' });
      return;
    }
    throw new CacheError(`cache directory has unexpected contents: ${entries.join(',')}`);
  }

  private async isPresent(): Promise<boolean> {
    const dir = join(this.opts.cacheDir, CACHE_DIR);
    try {
      const [d] = await Promise.all([stat(dir), stat(join(this.opts.cacheDir, DIGEST_FILE))]);
      return d.isDirectory();
    } catch {
      return false;
    }
  }

  async checkIntegrity(): Promise<void> {
    let existing: string;
    try {
      existing = (await readFile(join(this.opts.cacheDir, DIGEST_FILE), 'utf8')).trim();
    } catch (err) {
      throw new CacheError(`read existing cache digest: ${goFSError(err)}`);
    }
    let computed: string;
    try {
      computed = await computeDigest(this.opts.configDir, this.opts.cacheDir);
    } catch (err) {
      throw new CacheError(`compute digest: ${goFSError(err)}`);
    }
    if (existing !== computed) {
      this.opts.logger.warn('cache requires rebuild', { existingDigest: existing, computedDigest: computed });
      throw new CacheError(`cache requires rebuild: cache reports digest as ${JSON.stringify(existing)}, but computed digest is ${JSON.stringify(computed)}`);
    }
  }

  /** Loads and validates the catalog and writes the cache from scratch. */
  async build(): Promise<void> {
    const { cacheDir, configDir, logger } = this.opts;
    logger.info('building cache');
    const dir = join(cacheDir, CACHE_DIR);
    await rm(dir, { recursive: true, force: true });
    await rm(join(cacheDir, DIGEST_FILE), { force: true });
    await mkdir(dir, { recursive: true, mode: MODE_DIR });

    const { cfg, model } = await loadCatalog(configDir);
    const keys: [BundleKey, Bundle][] = [];
    const pkgs = indexFromModel(model, (key, b) => keys.push([key, b]));
    // a few files in flight at a time: thousands of bundles must not mean thousands of open files
    for (let i = 0; i < keys.length; i += 64) {
      await Promise.all(keys.slice(i, i + 64).map(([key, b]) => writeFile(bundleFile(cacheDir, key), bundleToJSON(modelBundleToApi(b)), { mode: MODE_FILE })));
    }
    for (const [schema, pkg, blobs] of MetaStore.fromMetas(cfg.others).entries()) {
      const metaDir = pkg === '' ? join(dir, METAS_DIR, schema) : join(dir, METAS_DIR, schema, pkg);
      await mkdir(metaDir, { recursive: true, mode: MODE_DIR });
      for (const blob of blobs) {
        const data = Buffer.from(goMarshal(blob, false) + '\n');
        await writeFile(join(metaDir, `${fnv64a(data)}.json`), data, { mode: MODE_FILE });
      }
    }
    await writeFile(join(dir, PACKAGES_FILE), JSON.stringify(packagesToJSON(pkgs)), { mode: MODE_FILE });
    await writeFile(join(cacheDir, DIGEST_FILE), await computeDigest(configDir, cacheDir), { mode: MODE_FILE });
  }

  async load(): Promise<ServedCatalog> {
    const { cacheDir } = this.opts;
    const dir = join(cacheDir, CACHE_DIR);
    let pkgs: Map<string, IndexPackage>;
    try {
      pkgs = packagesFromJSON(JSON.parse(await readFile(join(dir, PACKAGES_FILE), 'utf8')) as Record<string, CachedPackage>);
    } catch (err) {
      throw new CacheError(`get package index: ${goFSError(err)}`);
    }
    const metas = new MetaStore();
    const metasRoot = join(dir, METAS_DIR);
    for (const schema of await entriesOf(metasRoot)) {
      const files: string[] = [];
      await listFiles(join(metasRoot, schema), join(metasRoot, schema), files);
      for (const f of files.sort()) {
        if (!f.endsWith('.json')) continue;
        const parts = f.split('/');
        const pkg = parts.length > 1 ? parts[0]! : '';
        metas.add(schema, pkg, JSON.parse(await readFile(join(metasRoot, schema, f), 'utf8')) as Record<string, unknown>);
      }
    }
    const index = new RegistryIndex(pkgs, new DiskBundleStore(cacheDir));
    await index.warm();
    return { index, metas };
  }

  /** opm's LoadOrRebuild: rebuild when the digest does not match, then load. */
  async loadOrRebuild(): Promise<ServedCatalog> {
    try {
      await this.checkIntegrity();
    } catch {
      try {
        await this.build();
      } catch (err) {
        throw new CacheError(`failed to rebuild cache: ${(err as Error).message}`);
      }
    }
    return this.load();
  }
}
