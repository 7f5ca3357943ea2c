// `opm render` as a library (alpha/action/render.go): each reference is a bundle directory, a
// file-based catalog directory, a bundle image or a catalog image; every one becomes a
// DeclarativeConfig (bundle objects moved last, related images sorted, migrations applied) and
// the results are concatenated in argument order.
import { stat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { finishBundle, bundleToDeclcfg, kindOf } from './bundle/render.js';
import { compareGoStrings, goMarshal } from '../golang/json.js';
import { yamlToValue } from './bundle/goyaml.js';
import { parseBundleDir, type ParsedBundle } from './bundle/parse.js';
import { migrate, migrationsFor } from './bundle/migrations.js';
import { loadFS } from './declcfg/load.js';
import { goQuote as q } from '../golang/strconv.js';
import { emptyConfig, mergeConfig, type Bundle, type DeclarativeConfig } from './declcfg/types.js';
import { defaultCacheDir, pullImage, type PullOptions } from './oci/index.js';
import { readCachedRender, writeCachedRender } from './bundle/cache.js';

/** Which kinds of reference may be rendered (action.RefType); RefAll (0) allows every kind. */
export const RefBundleImage = 1;
export const RefDCImage = 2;
export const RefDCDir = 4;
export const RefBundleDir = 8;
export const RefAll = 0;

export function refAllowed(mask: number, refType: number): boolean {
  return mask === RefAll || (mask & refType) === refType;
}

/** The labels opm reads off an image to tell what it holds. */
export const ConfigsLocationLabel = 'operators.operatorframework.io.index.configs.v1';
export const DbLocationLabel = 'operators.operatorframework.io.index.database.v1';
export const PackageLabel = 'operators.operatorframework.io.bundle.package.v1';

/** action.ErrNotAllowed, and every render failure (the message is opm's). */
export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly code: 'KPL_ERR_CATALOG_RENDER' | 'KPL_ERR_CATALOG_NOT_ALLOWED';
  constructor(message: string, notAllowed = false) {
    super(message);
    this.code = notAllowed ? 'KPL_ERR_CATALOG_NOT_ALLOWED' : 'KPL_ERR_CATALOG_RENDER';
  }
}

/** Pulls an image: H5's pullImage, or a stand-in in tests. */
export type ImagePuller = (ref: string, opts: PullOptions) => Promise<{ root: string; labels: Record<string, string>; manifestDigest?: string }>;

/** Loads a file-based catalog directory (declcfg.LoadFS). */
export type CatalogLoader = (dir: string) => Promise<DeclarativeConfig>;

export interface RenderOptions {
  /** opm's --migrate-level ("none", "bundle-object-to-csv-metadata" or "all"); none when absent */
  migrateLevel?: string;
  /** which kinds of reference are allowed (default RefAll) */
  allowedRefMask?: number;
  /** --alpha-image-ref-template: image reference given to bundle directories ({{.Package}}, {{.Name}}, {{.Version}}) */
  imageRefTemplate?: string;
  /** options for pulling images (cache dir, plain HTTP, credentials, progress) */
  pull?: PullOptions;
  /** replaces the image puller (tests) */
  pullImage?: ImagePuller;
  /** replaces the catalog loader (default: declcfg/load.ts's loadFS) */
  loadCatalog?: CatalogLoader;
  /** the bundle parser's warnings (opm discards them) */
  warn?: (msg: string) => void;
  /**
   * keep rendered bundle images in <cache dir>/renders, keyed by manifest digest and reference, and
   * reuse them (default true; the output is the same either way)
   */
  renderCache?: boolean;
}

/** action.Render.Run */
export async function render(refs: readonly string[], opts: RenderOptions = {}): Promise<DeclarativeConfig> {
  // An unknown level fails before anything is read, as opm's command does.
  if (opts.migrateLevel) migrationsFor(opts.migrateLevel);
  const out = emptyConfig();
  for (const ref of refs) {
    let cfg: DeclarativeConfig;
    try {
      cfg = await renderReference(ref, opts);
    } catch (e) {
      throw new RenderError(`render reference ${q(ref)}: ${(e as Error).message}`, e instanceof RenderError && e.code === 'KPL_ERR_CATALOG_NOT_ALLOWED');
    }
    for (const b of cfg.bundles) finishBundle(b);
    if (opts.migrateLevel) {
      try {
        migrate(cfg, opts.migrateLevel);
      } catch (e) {
        throw new RenderError(`migrate: ${(e as Error).message}`);
      }
    }
    mergeConfig(out, cfg);
  }
  return out;
}

/**
 * One bundle image rendered as opm's semver template renders its entries (only bundle images
 * allowed, the given migrations applied): the renderBundle the template needs.
 */
export async function renderBundleImage(image: string, opts: RenderOptions = {}): Promise<Bundle> {
  const cfg = await render([image], { ...opts, allowedRefMask: RefBundleImage });
  const b = cfg.bundles[0];
  if (!b) throw new RenderError(`render reference ${q(image)}: no bundle in image`);
  return b;
}

/** The renderBundle function for the semver template, bound to these options. */
export function bundleImageRenderer(opts: RenderOptions = {}): (image: string) => Promise<Bundle> {
  return (image) => renderBundleImage(image, opts);
}

async function renderReference(ref: string, opts: RenderOptions): Promise<DeclarativeConfig> {
  const mask = opts.allowedRefMask ?? RefAll;
  let st;
  try {
    st = await stat(ref);
  } catch {
    return renderImage(ref, opts);
  }
  if (!st.isDirectory()) throw new RenderError(`ref ${q(ref)} is not a directory: not allowed`, true);
  if (await isBundleDir(ref)) {
    if (!refAllowed(mask, RefBundleDir)) throw new RenderError(`cannot render bundle directory ${q(ref)}: not allowed`, true);
    const parsed = await parseBundleDir(ref, opts.warn);
    let image = '';
    if (opts.imageRefTemplate !== undefined) {
      try {
        image = executeImageRefTemplate(opts.imageRefTemplate, parsed);
      } catch (e) {
        throw new Error(`failed templating image reference from bundle for ${q(ref)}: ${(e as Error).message}`, { cause: e });
      }
    }
    return { ...emptyConfig(), bundles: [bundleToDeclcfg(parsed, image)] };
  }
  if (!refAllowed(mask, RefDCDir)) throw new RenderError('cannot render declarative config directory: not allowed', true);
  return (opts.loadCatalog ?? defaultLoadCatalog)(ref);
}

/** A directory holding both manifests/ and metadata/ directories is a bundle (action.isBundle). */
async function isBundleDir(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true });
  const dirs = new Set(entries.filter((e) => e.isDirectory()).map((e) => e.name));
  return dirs.has('manifests') && dirs.has('metadata');
}

async function renderImage(ref: string, opts: RenderOptions): Promise<DeclarativeConfig> {
  const mask = opts.allowedRefMask ?? RefAll;
  const pull = opts.pullImage ?? pullImage;
  let pulled;
  try {
    pulled = await pull(ref, opts.pull ?? {});
  } catch (e) {
    throw new Error(`failed to pull image ${q(ref)}: ${(e as Error).message}`, { cause: e });
  }
  const labels = pulled.labels;
  const configsDir = labels[ConfigsLocationLabel];
  if (configsDir !== undefined) {
    if (!refAllowed(mask, RefDCImage)) throw new RenderError('cannot render declarative config image: not allowed', true);
    return (opts.loadCatalog ?? defaultLoadCatalog)(join(pulled.root, configsDir));
  }
  if (labels[PackageLabel] !== undefined) {
    if (!refAllowed(mask, RefBundleImage)) throw new RenderError('cannot render bundle image: not allowed', true);
    const digest = opts.renderCache === false ? undefined : pulled.manifestDigest;
    const cacheDir = opts.pull?.cacheDir ?? defaultCacheDir();
    if (digest) {
      const hit = await readCachedRender(cacheDir, digest, ref);
      if (hit) return { ...emptyConfig(), bundles: [hit] };
    }
    const parsed = await parseBundleDir(pulled.root, opts.warn);
    const bundle = bundleToDeclcfg(parsed, ref);
    if (digest) await writeCachedRender(cacheDir, digest, ref, bundle);
    return { ...emptyConfig(), bundles: [bundle] };
  }
  if (labels[DbLocationLabel] !== undefined) {
    throw new RenderError(`render ${q(ref)}: sqlite-based index images are no longer supported, migrate to a file-based catalog: not allowed`, true);
  }
  const keys = Object.keys(labels).sort(compareGoStrings);
  if (keys.length > 0)
    throw new Error(`render ${q(ref)}: image type could not be determined, found labels\n${keys.map((k) => `  ${k}=${labels[k]}`).join('\n')}`);
  throw new Error(`render ${q(ref)}: image type could not be determined: image has no labels`);
}

async function defaultLoadCatalog(dir: string): Promise<DeclarativeConfig> {
  const cfg = await loadFS(dir);
  fillBundleObjects(cfg);
  return cfg;
}

/**
 * declcfg's readBundleObjects: a loaded bundle's olm.bundle.object properties give its objects and
 * CSV (used by the csv-metadata migration); filled here when the loader left them empty.
 */
export function fillBundleObjects(cfg: DeclarativeConfig): void {
  bundles: for (const b of cfg.bundles) {
    if (b.objects !== undefined && b.objects.length > 0) continue;
    const objects: string[] = [];
    for (const p of b.properties ?? []) {
      if (p.type !== 'olm.bundle.object') continue;
      const data = (p.value as { data?: unknown } | null)?.data;
      if (typeof data !== 'string') continue;
      try {
        // yaml.ToJSON of the decoded data: JSON with sorted keys, whatever the data's own form
        objects.push(goMarshal(yamlToValue(Buffer.from(data, 'base64').toString('utf8'))));
      } catch {
        continue bundles; // opm's loader fails on it; the loader reports that, not render
      }
    }
    if (objects.length === 0) continue;
    b.objects = objects;
    if (!b.csvJSON) b.csvJSON = objects.find((o) => kindOf(o) === 'ClusterServiceVersion') ?? '';
  }
}

/**
 * The --alpha-image-ref-template subset of Go's text/template: literal text and {{.Package}},
 * {{.Name}}, {{.Version}} (the bundle's first olm.package property gives the version).
 */
export function executeImageRefTemplate(tmpl: string, b: ParsedBundle): string {
  let version = '';
  const pkg = b.properties.find((p) => p.type === 'olm.package');
  if (pkg?.raw !== undefined) {
    const v = (JSON.parse(pkg.raw) as { version?: unknown } | null)?.version;
    if (typeof v === 'string') version = v;
  }
  const data: Record<string, string> = { Package: b.package, Name: b.name, Version: version };
  return tmpl.replace(/\{\{-?\s*([^}]*?)\s*-?\}\}/g, (_m, expr: string) => {
    const f = /^\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expr);
    if (!f) throw new Error(`template: image-ref-template: unsupported action {{${expr}}}`);
    const value = data[f[1]!];
    if (value === undefined) throw new Error(`template: image-ref-template: can't evaluate field ${f[1]} in type action.imageReferenceTemplateData`);
    return value;
  });
}
