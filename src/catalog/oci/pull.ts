// pullImage: an image reference (registry or oci:DIR[:TAG]) → its unpacked filesystem, its digest and
// its labels, through the content cache: blobs are fetched once and checked against their digests,
// and an image already unpacked is not unpacked again.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ContentCache } from './cache.js';
import { registryClient } from './client.js';
import type { RegistryClient } from './client.js';
import type { ClientOptions } from './client.js';
import { OciError, isOciError } from './errors.js';
import { OciLayout } from './layout.js';
import { currentPlatform, parseManifest, selectPlatform } from './manifest.js';
import type { Descriptor, ImageConfig, ImageManifest, Platform } from './manifest.js';
import type { PullProgress } from './progress.js';
import { formatReference, manifestReference, parseReference } from './reference.js';
import type { RegistryReference } from './reference.js';
import { applyLayer } from './unpack.js';

export interface PullOptions extends ClientOptions {
  /** The content cache (default: defaultCacheDir(), i.e. ~/.cache/kplane). */
  readonly cacheDir?: string;
  readonly progress?: ((e: PullProgress) => void) | undefined;
  /** Which image of a manifest list / index (default: this machine's, then linux/amd64). */
  readonly platform?: Platform;
  /** Unpack into this new or empty directory instead of the shared, cached root (filled only on success). */
  readonly dest?: string;
}

export interface PulledImage {
  /** The unpacked filesystem (shared with other pulls of the same image when `dest` is not given: do not modify). */
  readonly root: string;
  /** What the reference points to: the manifest digest, or the index digest for a manifest list. */
  readonly digest: string;
  /** The platform image's own manifest digest (equals `digest` unless the reference is an index). */
  readonly manifestDigest: string;
  readonly labels: Record<string, string>;
  readonly config: ImageConfig;
}

/** Something that hands out verified blobs: the registry through the cache, or an OCI layout. */
interface BlobSource {
  readonly what: string;
  manifest(digestOrTag: string | undefined, mediaType?: string): Promise<{ body: Buffer; mediaType: string | undefined; digest: string }>;
  /** Ensures the blob is in a local file (downloading it if needed) and returns that file. */
  blobFile(d: Descriptor, onBytes: (n: number) => void): Promise<string>;
  isLocal(d: Descriptor): boolean;
  /** A stored layer turned out not to hash to its digest: what to tell the user (and tidy up). */
  damaged(e: OciError): OciError;
  readBlob(d: Descriptor): Promise<Buffer>;
}

export async function pullImage(ref: string, opts: PullOptions = {}): Promise<PulledImage> {
  const parsed = parseReference(ref);
  const cache = new ContentCache(opts.cacheDir);
  const source: BlobSource = parsed.kind === 'layout' ? layoutSource(parsed.dir, parsed.tag) : registrySource(parsed, cache, opts);
  const top = await source.manifest(undefined);
  let parsedTop = parseManifest(top.body, top.mediaType, source.what);
  let manifestDigest = top.digest;
  let depth = 0;
  while (parsedTop.kind === 'index') {
    if (++depth > 4) throw new OciError('UNSUPPORTED', `${source.what}: image indexes nested too deep`);
    const chosen = selectPlatform(parsedTop.index, opts.platform ?? currentPlatform(), source.what);
    const child = await source.manifest(chosen.digest, chosen.mediaType);
    parsedTop = parseManifest(child.body, chosen.mediaType, source.what);
    manifestDigest = child.digest;
  }
  const manifest: ImageManifest = parsedTop.manifest;
  const configBytes = await source.readBlob(manifest.config);
  let config: ImageConfig;
  try {
    config = JSON.parse(configBytes.toString('utf8')) as ImageConfig;
  } catch (e) {
    throw new OciError('UNSUPPORTED', `${source.what}: the image config is not JSON (${(e as Error).message})`);
  }
  const labels: Record<string, string> = { ...(config.config?.Labels ?? {}) };
  const cachedRoot = cache.rootPath(manifestDigest);
  if (!opts.dest && existsSync(cachedRoot)) {
    opts.progress?.({ kind: 'unpacked', root: cachedRoot });
    return { root: cachedRoot, digest: top.digest, manifestDigest, labels, config };
  }

  const final = opts.dest ? resolve(opts.dest) : cachedRoot;
  if (opts.dest && existsSync(final) && readdirSync(final).length > 0) {
    throw new OciError('OUTPUT', `cannot unpack ${source.what} into ${opts.dest}: the directory is not empty; give a new or empty one`);
  }
  opts.progress?.({
    kind: 'resolved',
    ref: formatReference(parsed),
    digest: top.digest,
    layers: manifest.layers.map((l) => ({ digest: l.digest, size: l.size, cached: source.isLocal(l) })),
  });
  // Up to three layers download at once (as docker does); they are applied in order afterwards.
  const files: string[] = new Array<string>(manifest.layers.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < manifest.layers.length) {
      const i = next++;
      const layer = manifest.layers[i]!;
      const cached = source.isLocal(layer);
      files[i] = await source.blobFile(layer, (n) => opts.progress?.({ kind: 'layer', digest: layer.digest, size: layer.size, bytes: n, done: false, cached }));
      opts.progress?.({ kind: 'layer', digest: layer.digest, size: layer.size, bytes: layer.size, done: true, cached });
    }
  };
  await Promise.all(Array.from({ length: Math.min(3, manifest.layers.length) }, worker));

  // Unpack beside the final place and rename into it: a failed pull leaves neither a half-filled
  // --output directory nor a half-unpacked cached root.
  let target: string;
  if (opts.dest) {
    mkdirSync(dirname(final), { recursive: true });
    target = mkdtempSync(`${final}.tmp-`);
  } else target = cache.scratch();
  try {
    for (let i = 0; i < files.length; i++)
      await applyLayer(target, { path: files[i]!, digest: manifest.layers[i]!.digest, mediaType: manifest.layers[i]!.mediaType });
  } catch (e) {
    rmSync(target, { recursive: true, force: true });
    throw isOciError(e, 'DIGEST_MISMATCH') ? source.damaged(e) : e;
  }
  if (opts.dest) rmSync(final, { recursive: true, force: true }); // empty, or absent
  try {
    renameSync(target, final);
  } catch (e) {
    rmSync(target, { recursive: true, force: true });
    // Another pull of the same image won the race to the cache: use its root.
    if (opts.dest || !existsSync(cachedRoot)) throw e;
  }
  const root = final;
  opts.progress?.({ kind: 'unpacked', root });
  return { root, digest: top.digest, manifestDigest, labels, config };
}

function registrySource(ref: RegistryReference, cache: ContentCache, opts: PullOptions): BlobSource {
  let client: RegistryClient | undefined;
  const registry = (): RegistryClient => (client ??= registryClient(ref.host, opts));
  const what = formatReference(ref);
  const fetchManifest = async (reference: string, mediaType?: string) => {
    // A manifest asked for by digest is immutable: the cache answers without the registry.
    const cached = reference.includes(':') ? cache.readChecked(reference) : undefined;
    if (cached) return { body: cached, mediaType, digest: reference };
    const m = await registry().getManifest(ref.repository, reference);
    cache.put(m.digest, m.body, `manifest of ${what}`);
    return m;
  };
  return {
    what,
    manifest: (digest, mediaType) => fetchManifest(digest ?? manifestReference(ref), mediaType),
    isLocal: (d) => cache.has(d.digest),
    damaged: (e) => {
      // Blobs are checked before they enter the cache, so this copy was damaged on disk since: drop it.
      const digest = /layer (\S+)/.exec(e.message)?.[1];
      if (digest) rmSync(cache.blobPath(digest), { force: true });
      return new OciError('DIGEST_MISMATCH', `${e.message} in the cache ${cache.dir}; it was removed: pull again to download it afresh`);
    },
    async blobFile(d, onBytes) {
      if (cache.has(d.digest)) return cache.blobPath(d.digest);
      const blob = await registry().getBlob(ref.repository, d.digest);
      return cache.putStream(d.digest, blob.body, { what: `layer ${d.digest} of ${what}`, size: d.size, onBytes });
    },
    async readBlob(d) {
      const cached = cache.readChecked(d.digest);
      if (cached) return cached;
      const blob = await registry().getBlob(ref.repository, d.digest);
      await cache.putStream(d.digest, blob.body, { what: `blob ${d.digest} of ${what}`, size: d.size });
      return cache.read(d.digest);
    },
  };
}

function layoutSource(dir: string, tag: string | undefined): BlobSource {
  const layout = OciLayout.open(dir);
  const what = `oci:${dir}${tag ? `:${tag}` : ''}`;
  return {
    what,
    async manifest(digest, mediaType) {
      const d = digest ? { digest, mediaType: mediaType ?? '' } : layout.resolve(tag);
      return { body: layout.readBlob(d.digest, what), mediaType: d.mediaType || undefined, digest: d.digest };
    },
    isLocal: () => true,
    damaged: (e) => new OciError('DIGEST_MISMATCH', `${e.message}: OCI layout ${dir} is damaged; build or copy it again`),
    async blobFile(d) {
      // The layer is hashed while it is unpacked (a mismatch then throws, and nothing is kept).
      if (!layout.has(d.digest)) throw new OciError('NOT_FOUND', `${what}: layer ${d.digest} is missing from OCI layout ${dir}`);
      return layout.blobPath(d.digest);
    },
    readBlob: async (d) => layout.readBlob(d.digest, what),
  };
}
