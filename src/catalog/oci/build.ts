// Builds bundle and catalog images as OCI images, without a container engine: one gzipped layer
// with the bundle's manifests/ and metadata/ (or the catalog under configs/), a config whose labels
// are what opm's generated Dockerfiles set, all written into an OCI image layout. Output is
// deterministic (sorted entries, owner 0:0, mtime 0, fixed created time), so the same directory
// gives the same digest on every machine.
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { defaultCacheDir } from './cache.js';
import { sha256 } from './client.js';
import { OciError } from './errors.js';
import { OciLayout } from './layout.js';
import { MediaType, formatPlatform } from './manifest.js';
import type { Descriptor, ImageConfig, ImageIndex, ImageManifest, Platform } from './manifest.js';
import { writeTar } from './tar.js';
import type { TarWriteEntry } from './tar.js';

/** The label opm's catalog Dockerfile sets: where the file-based catalog lives in the image. */
export const CONFIGS_LABEL = 'operators.operatorframework.io.index.configs.v1';

export interface BuildOptions {
  /** Extra labels, over the ones taken from the bundle (or the catalog label). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The OCI layout to write into (default: the local image store, <cacheDir>/images). */
  readonly layoutDir?: string;
  readonly cacheDir?: string;
  /** The name of the image in the layout (org.opencontainers.image.ref.name), e.g. the registry reference. */
  readonly tag?: string;
  /** One image, or an image index with one image per platform (default: linux/amd64 alone). */
  readonly platforms?: readonly Platform[];
  /** The config's created time (default $SOURCE_DATE_EPOCH, else 1970-01-01T00:00:00Z). */
  readonly created?: string;
}

export interface BuiltImage {
  readonly layoutDir: string;
  readonly tag: string | undefined;
  /** The manifest digest (the index digest when several platforms were built). */
  readonly digest: string;
  readonly mediaType: string;
  readonly labels: Record<string, string>;
}

/** The local image store, where `bundle build --tag REF` keeps images for a later `bundle push REF`. */
export function localStoreDir(cacheDir?: string): string {
  return join(cacheDir ?? defaultCacheDir(), 'images');
}

/** The labels of a registry+v1 bundle: every annotation of metadata/annotations.yaml. */
export function bundleLabels(bundleDir: string): Record<string, string> {
  const file = join(bundleDir, 'metadata', 'annotations.yaml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new OciError(
      'BUILD',
      `${bundleDir} is not a bundle directory: ${file} is missing (a registry+v1 bundle has manifests/ and metadata/annotations.yaml)`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new OciError('BUILD', `${file}: not valid YAML (${(e as Error).message})`);
  }
  const annotations = (doc as { annotations?: unknown } | null)?.annotations;
  if (!annotations || typeof annotations !== 'object' || Array.isArray(annotations)) throw new OciError('BUILD', `${file}: no "annotations" map`);
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(annotations as Record<string, unknown>)) labels[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return labels;
}

export function buildBundleImage(bundleDir: string, opts: BuildOptions = {}): BuiltImage {
  const labels = { ...bundleLabels(bundleDir), ...opts.labels };
  if (!isDir(join(bundleDir, 'manifests'))) throw new OciError('BUILD', `${bundleDir} is not a bundle directory: manifests/ is missing`);
  const entries: TarWriteEntry[] = [...collect(join(bundleDir, 'manifests'), 'manifests'), ...collect(join(bundleDir, 'metadata'), 'metadata')];
  // operator-sdk's bundle Dockerfile also ships the scorecard tests when the bundle has them.
  if (isDir(join(bundleDir, 'tests', 'scorecard')))
    entries.push({ path: 'tests', type: 'dir' }, ...collect(join(bundleDir, 'tests', 'scorecard'), 'tests/scorecard'));
  return writeImage(entries, labels, opts);
}

/** A catalog image: the file-based catalog at /configs, labelled as opm's catalog Dockerfile does. */
export function buildCatalogImage(catalogDir: string, opts: BuildOptions = {}): BuiltImage {
  if (!isDir(catalogDir)) throw new OciError('BUILD', `catalog directory ${catalogDir} does not exist`);
  const entries = collect(catalogDir, 'configs');
  if (entries.length <= 1) throw new OciError('BUILD', `catalog directory ${catalogDir} is empty`);
  return writeImage(entries, { [CONFIGS_LABEL]: '/configs', ...opts.labels }, opts);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The directory and everything under it, as tar entries under `prefix`, in sorted order. */
function collect(dir: string, prefix: string): TarWriteEntry[] {
  const out: TarWriteEntry[] = [{ path: prefix, type: 'dir', mode: 0o755 }];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const rel = `${prefix}/${name}`;
    const st = lstatSync(p);
    if (st.isDirectory()) out.push(...collect(p, rel));
    else if (st.isSymbolicLink()) out.push({ path: rel, type: 'symlink', linkpath: readlinkSync(p) });
    else if (st.isFile()) out.push({ path: rel, type: 'file', mode: st.mode & 0o111 ? 0o755 : 0o644, content: readFileSync(p) });
  }
  return out;
}

function createdTime(opts: BuildOptions): string {
  if (opts.created) return opts.created;
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  return new Date(Number.isFinite(epoch) && process.env.SOURCE_DATE_EPOCH ? epoch * 1000 : 0).toISOString().replace('.000Z', 'Z');
}

function writeImage(entries: TarWriteEntry[], labels: Record<string, string>, opts: BuildOptions): BuiltImage {
  const layoutDir = opts.layoutDir ?? localStoreDir(opts.cacheDir);
  const layout = OciLayout.openOrInit(layoutDir);
  const tar = writeTar(entries);
  const diffId = sha256(tar);
  const gz = gzipSync(tar, { level: 9 });
  const layer: Descriptor = { mediaType: MediaType.ociLayerGzip, digest: layout.writeBlob(gz), size: gz.length };
  const created = createdTime(opts);
  const platforms = opts.platforms?.length ? opts.platforms : [{ os: 'linux', architecture: 'amd64' }];
  const images: Descriptor[] = platforms.map((platform) => {
    const config: ImageConfig = {
      created,
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant ? { variant: platform.variant } : {}),
      config: { Labels: labels },
      rootfs: { type: 'layers', diff_ids: [diffId] },
      history: [{ created, created_by: 'kplane catalog bundle build' }],
    };
    const configBytes = Buffer.from(JSON.stringify(config));
    const manifest: ImageManifest = {
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: MediaType.ociConfig, digest: layout.writeBlob(configBytes), size: configBytes.length },
      layers: [layer],
    };
    const body = Buffer.from(JSON.stringify(manifest));
    return { mediaType: MediaType.ociManifest, digest: layout.writeBlob(body), size: body.length, platform };
  });
  let top: Descriptor;
  if (images.length === 1) {
    const { platform: _unused, ...single } = images[0]!;
    top = single;
  } else {
    const seen = new Set<string>();
    for (const p of platforms) {
      if (seen.has(formatPlatform(p))) throw new OciError('BUILD', `platform ${formatPlatform(p)} given twice`);
      seen.add(formatPlatform(p));
    }
    const index: ImageIndex = { schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: images };
    const body = Buffer.from(JSON.stringify(index));
    top = { mediaType: MediaType.ociIndex, digest: layout.writeBlob(body), size: body.length };
  }
  if (opts.tag !== undefined) layout.tag(top, opts.tag);
  return { layoutDir, tag: opts.tag, digest: top.digest, mediaType: top.mediaType, labels };
}
