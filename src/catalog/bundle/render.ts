// A parsed registry+v1 bundle as an olm.bundle blob, as opm's bundleToDeclcfg makes it
// (alpha/action/render.go, pkg/registry/registry_to_model.go): properties sorted by type then by
// raw value, one olm.bundle.object per manifest (base64 of Go's json.Marshal of the object), and
// related images from the CSV, the bundle image and the operator's container images.
import { SchemaBundle, type Bundle, type Property, type RelatedImage } from '../declcfg/types.js';
import { compareGoStrings, field, goMarshal, htmlEscaped, isObject, stringField } from '../../golang/json.js';
import { unmarshalSyntaxError } from '../../golang/json-decode.js';
import { cannotUnmarshal, UNEXPECTED_END_OF_JSON } from '../../golang/json-errors.js';
import { goQuote } from '../../golang/strconv.js';
import { migrate } from './migrations.js';
import { packageJSON, parseBundleDir, providedAPIs, requiredAPIs, type ParsedBundle, type RawProperty } from './parse.js';

/** property.ParseError */
export class PropertyParseError extends Error {
  override readonly name = 'PropertyParseError';
  readonly code = 'KPL_ERR_CATALOG_PROPERTY';
  constructor(index: number, type: string, cause: string) {
    super(`parse property[${index}] of type ${goQuote(type)}: ${cause}`);
  }
}

export interface RenderBundleDirOptions {
  /** the bundle's image reference ("" or absent for a plain directory, as opm) */
  image?: string;
  /** opm's --migrate-level; applied by the caller through migrate() when rendering a whole config */
  migrateLevel?: string;
  /** receives the parser's warnings (opm logs them at debug level) */
  warn?: (msg: string) => void;
}

/**
 * Renders the bundle directory dir (holding manifests/ and metadata/) into its olm.bundle blob,
 * with bundle objects last and related images sorted, exactly as `opm render DIR` prints it.
 */
export async function renderBundleDir(dir: string, opts: RenderBundleDirOptions = {}): Promise<Bundle> {
  const parsed = await parseBundleDir(dir, opts.warn);
  const bundle = bundleToDeclcfg(parsed, opts.image ?? '');
  finishBundle(bundle);
  if (opts.migrateLevel) migrate({ packages: [], channels: [], bundles: [bundle], deprecations: [], others: [] }, opts.migrateLevel);
  return bundle;
}

/** action.bundleToDeclcfg */
export function bundleToDeclcfg(b: ParsedBundle, image: string): Bundle {
  let props: RawProperty[];
  let objects: string[];
  try {
    ({ objects, props } = objectsAndProperties(b));
  } catch (e) {
    throw new Error(`get properties for bundle ${goQuote(b.name)}: ${(e as Error).message}`, { cause: e });
  }
  let relatedImages: RelatedImage[];
  try {
    relatedImages = getRelatedImages(b, image);
  } catch (e) {
    throw new Error(`get related images for bundle ${goQuote(b.name)}: ${(e as Error).message}`, { cause: e });
  }
  const bundle: Bundle = {
    schema: SchemaBundle,
    name: b.name,
    package: b.package,
    image,
    properties: props.map(toProperty),
    relatedImages,
    // Not written; kept for the csv-metadata migration and for serving (api.Bundle csvJson / object).
    csvJSON: goMarshal(b.csv.object),
    objects,
  };
  return bundle;
}

function toProperty(p: RawProperty): Property {
  const value = p.raw === undefined ? null : (JSON.parse(p.raw) as unknown);
  return { type: p.type, value: p.escaped ? htmlEscaped(value) : value };
}

/** action.Render.Run's per-bundle tidying: bundle objects and CSV metadata last, related images by image. */
export function finishBundle(b: Bundle): void {
  if (b.properties) {
    const others = b.properties.filter((p) => p.type !== 'olm.bundle.object' && p.type !== 'olm.csv.metadata');
    const objs = b.properties.filter((p) => p.type === 'olm.bundle.object' || p.type === 'olm.csv.metadata');
    b.properties = [...others, ...objs];
  }
  if (b.relatedImages) b.relatedImages.sort((x, y) => compareGoStrings(x.image, y.image));
}

interface GVK {
  group: string;
  kind: string;
  version: string;
}

function gvkJSON(g: GVK): string {
  const q = (s: string): string => goMarshal(s, false);
  return `{"group":${q(g.group)},"kind":${q(g.kind)},"version":${q(g.version)}}`;
}

/** Decodes a raw property value into string fields, as json.Unmarshal into a small struct. */
function decodeFields<K extends string>(raw: string | undefined, names: readonly K[], goType: string): Record<K, string> {
  if (raw === undefined) throw new Error(UNEXPECTED_END_OF_JSON);
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    // json.Unmarshal's SyntaxError, not V8's wording.
    throw new Error(unmarshalSyntaxError(raw) ?? (e as Error).message, { cause: e });
  }
  if (v !== null && !isObject(v)) throw new Error(cannotUnmarshal(v, goType));
  const out = {} as Record<K, string>;
  for (const n of names) out[n] = stringField(v, n, goType.replace(/^property\./, ''));
  return out;
}

/** registry.ObjectsAndPropertiesFromBundle */
export function objectsAndProperties(b: ParsedBundle): { objects: string[]; props: RawProperty[] } {
  const provided = new Map<string, GVK>();
  const required = new Map<string, GVK>();
  let packageProvided: RawProperty | undefined;
  const others: RawProperty[] = [];

  b.properties.forEach((p, i) => {
    try {
      if (p.type === 'olm.gvk') {
        const v = decodeFields(p.raw, ['group', 'kind', 'version'], 'property.GVK');
        provided.set(gvkJSON(v), v);
      } else if (p.type === 'olm.package') {
        const v = decodeFields(p.raw, ['packageName', 'version', 'release'], 'property.Package');
        packageProvided = { type: 'olm.package', raw: packageJSON(v.packageName, v.version, v.release, false) };
      } else {
        others.push(p);
      }
    } catch (e) {
      if (e instanceof PropertyParseError) throw e;
      throw new PropertyParseError(i, p.type, (e as Error).message);
    }
  });

  const packageRequired: RawProperty[] = [];
  b.dependencies.forEach((p, i) => {
    try {
      if (p.type === 'olm.gvk') {
        const v = decodeFields(p.raw, ['group', 'kind', 'version'], 'property.GVK');
        required.set(gvkJSON(v), v);
      } else if (p.type === 'olm.package') {
        const v = decodeFields(p.raw, ['packageName', 'version', 'release'], 'property.Package');
        const q = (s: string): string => goMarshal(s, false);
        packageRequired.push({ type: 'olm.package.required', raw: `{"packageName":${q(v.packageName)},"versionRange":${q(v.version)}}` });
      } else {
        others.push(p);
      }
    } catch (e) {
      throw new PropertyParseError(i, p.type, (e as Error).message);
    }
  });

  let version: string;
  let release: string;
  try {
    version = b.csv.version();
  } catch (e) {
    throw new Error(`get version: ${(e as Error).message}`, { cause: e });
  }
  try {
    release = b.csv.release();
  } catch (e) {
    throw new Error(`get release: ${(e as Error).message}`, { cause: e });
  }
  let providedAPIKeys;
  try {
    providedAPIKeys = providedAPIs(b.csv, b.objects);
  } catch (e) {
    throw new Error(`get provided apis: ${(e as Error).message}`, { cause: e });
  }
  for (const k of providedAPIKeys.values()) {
    const g = { group: k.group, kind: k.kind, version: k.version };
    provided.set(gvkJSON(g), g);
  }
  let requiredAPIKeys;
  try {
    requiredAPIKeys = requiredAPIs(b.csv);
  } catch (e) {
    throw new Error(`get required apis: ${(e as Error).message}`, { cause: e });
  }
  for (const k of requiredAPIKeys.values()) {
    const g = { group: k.group, kind: k.kind, version: k.version };
    required.set(gvkJSON(g), g);
  }

  const props: RawProperty[] = [];
  const objects: string[] = [];
  for (const obj of b.objects) {
    const data = goMarshal(obj);
    props.push({ type: 'olm.bundle.object', raw: `{"data":"${Buffer.from(data, 'utf8').toString('base64')}"}` });
    objects.push(data);
  }
  props.push(packageProvided ?? { type: 'olm.package', raw: packageJSON(b.package, version, release, false) });
  for (const g of provided.values()) props.push({ type: 'olm.gvk', raw: gvkJSON(g) });
  for (const g of required.values()) props.push({ type: 'olm.gvk.required', raw: gvkJSON(g) });
  props.push(...packageRequired, ...others);

  props.sort((x, y) => compareGoStrings(x.type, y.type) || compareGoStrings(x.raw ?? '', y.raw ?? ''));
  return { objects, props };
}

/** action.getRelatedImages: the CSV's list, then the bundle image and operator images not yet listed. */
export function getRelatedImages(b: ParsedBundle, image: string): RelatedImage[] {
  const related: RelatedImage[] = b.csv.relatedImages().map((r) => ({ name: r.name, image: r.image }));
  const all = new Set(related.map((r) => r.image));
  if (image !== '' && !all.has(image)) related.push({ name: '', image });
  for (const img of b.csv.operatorImages()) {
    if (!all.has(img)) related.push({ name: '', image: img });
    all.add(img);
  }
  return related;
}

/** The kind of a decoded manifest (for callers that only hold the JSON texts). */
export function kindOf(objJSON: string): string {
  try {
    const k = field(JSON.parse(objJSON), 'kind');
    return typeof k === 'string' ? k : '';
  } catch {
    return '';
  }
}
