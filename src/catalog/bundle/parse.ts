// Reading a registry+v1 bundle (manifests/ and metadata/) the way opm's bundle parser does
// (pkg/registry/parse.go, bundle.go): every file of manifests/ is decoded (first document only;
// undecodable files and files without a kind are skipped), only the first CSV is kept, and the
// metadata/ files are tried in name order as the annotations, dependencies and properties files.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { CSV, apiKeyId, apiKeyString, type APIKey } from './csv.js';
import { compareGoStrings, field, goMarshal, isObject, parseRawJSON, type RawValue } from '../../golang/json.js';
import { cannotUnmarshal } from '../../golang/json-errors.js';
import { firstDocument, type FirstDocument } from './goyaml.js';

/** A property or dependency as opm holds it: a type and the raw JSON of its value (undefined: nil). */
export interface RawProperty {
  type: string;
  raw: string | undefined;
  /** raw came from json.Marshal (YAML files): <, > and & are escaped in it, and stay so when written */
  escaped?: boolean;
}

export interface BundleAnnotations {
  packageName: string;
  channels: string;
  defaultChannelName: string;
}

/** registry.Bundle, as far as rendering needs it. */
export interface ParsedBundle {
  name: string;
  package: string;
  channels: string[];
  annotations: BundleAnnotations;
  /** manifests in file-name order (the first CSV only) */
  objects: Record<string, unknown>[];
  csv: CSV;
  /** properties.yaml, then the derived ones, de-duplicated */
  properties: RawProperty[];
  dependencies: RawProperty[];
}

/** An error of the bundle parser, worded as opm's. */
export class BundleParseError extends Error {
  override readonly name = 'BundleParseError';
  readonly code = 'KPL_ERR_CATALOG_BUNDLE';
}

/** Parses the bundle rooted at dir (the directory holding manifests/ and metadata/). */
export async function parseBundleDir(dir: string, warn: (msg: string) => void = () => {}): Promise<ParsedBundle> {
  const { objects, csv } = await readManifests(join(dir, 'manifests'), warn);
  const name = csv.name;
  try {
    allProvidedAPIsInBundle(csv, objects);
  } catch (e) {
    throw new BundleParseError(`error checking provided apis in bundle ${name}: ${(e as Error).message}`);
  }
  const meta = await readMetadata(join(dir, 'metadata'), warn);
  let derived: RawProperty[];
  try {
    derived = derivedProperties(csv, objects, meta.annotations, warn);
  } catch (e) {
    throw new BundleParseError(`failed to derive properties: ${(e as Error).message}`);
  }
  return {
    name,
    package: meta.annotations.packageName,
    channels: meta.annotations.channels === '' ? [] : meta.annotations.channels.split(','),
    annotations: meta.annotations,
    objects,
    csv,
    properties: propertySet([...meta.properties, ...derived]),
    dependencies: meta.dependencies,
  };
}

async function readDirSorted(dir: string): Promise<Array<{ name: string; isDir: boolean }>> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new BundleParseError(`open .: ${err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'ENOTDIR' ? 'not a directory' : err.message}`);
  }
  return entries.map((e) => ({ name: e.name, isDir: e.isDirectory() })).sort((a, b) => compareGoStrings(a.name, b.name));
}

async function decodeFile(path: string): Promise<FirstDocument> {
  const text = await readFile(path, 'utf8');
  return firstDocument(text);
}

async function readManifests(dir: string, warn: (msg: string) => void): Promise<{ objects: Record<string, unknown>[]; csv: CSV }> {
  const objects: Record<string, unknown>[] = [];
  let csv: CSV | undefined;
  for (const f of await readDirSorted(dir)) {
    if (f.isDir || f.name.startsWith('.')) continue;
    let obj: Record<string, unknown>;
    try {
      obj = toUnstructured(await decodeFile(join(dir, f.name)));
    } catch (e) {
      warn(`failed to decode: ${(e as Error).message}`);
      continue;
    }
    if (obj['kind'] === 'ClusterServiceVersion') {
      if (csv) continue; // only the first CSV of the bundle is kept
      csv = new CSV(obj);
    }
    objects.push(obj);
  }
  if (objects.length === 0) throw new BundleParseError('no bundle objects found');
  if (!csv) throw new BundleParseError('no csv in bundle');
  const md = csv.object['metadata'];
  if (md !== undefined && md !== null && !isObject(md)) throw new BundleParseError(cannotUnmarshal(md, 'v1.ObjectMeta', { struct: '', field: 'metadata' }));
  if (isObject(md) && md['name'] !== undefined && md['name'] !== null && typeof md['name'] !== 'string') {
    throw new BundleParseError(cannotUnmarshal(md['name'], 'string', { struct: '', field: 'metadata.name' }));
  }
  return { objects, csv };
}

/** unstructured.Unstructured's decoding: an object with a non-empty string kind. */
function toUnstructured(doc: FirstDocument): Record<string, unknown> {
  if (doc.kind === 'empty') throw new Error('EOF');
  const value = doc.kind === 'json' ? doc.value.value : doc.value;
  if (value !== null && !isObject(value)) throw new Error(cannotUnmarshal(value, 'map[string]interface {}'));
  const kind = value === null ? undefined : value['kind'];
  if (typeof kind !== 'string' || kind === '') throw new Error(`Object 'Kind' is missing in '${doc.kind === 'json' ? doc.value.raw : goMarshal(value)}'`);
  return value as Record<string, unknown>;
}

/** The version part of an object's apiVersion (schema.ParseGroupVersion). */
function apiVersionVersion(obj: Record<string, unknown>): string {
  const av = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : '';
  const i = av.indexOf('/');
  return i < 0 ? av : av.slice(i + 1);
}

/** Bundle.ProvidedAPIs: versions of the bundle's v1 and v1beta1 CRDs, and the CSV's owned API services. */
export function providedAPIs(csv: CSV, objects: Record<string, unknown>[]): Map<string, APIKey> {
  const provided = new Map<string, APIKey>();
  const add = (k: APIKey): void => {
    provided.set(apiKeyId(k), k);
  };
  const crds = objects.filter((o) => o['kind'] === 'CustomResourceDefinition');
  // opm lists the v1 CRDs before the v1beta1 ones; as a set the order does not show.
  for (const want of ['v1', 'v1beta1']) {
    for (const o of crds) {
      if (apiVersionVersion(o) !== want) continue;
      const spec = o['spec'];
      const group = strIn(spec, 'group', want);
      const names = isObject(spec) ? spec['names'] : undefined;
      const kind = strIn(names, 'kind', want);
      const plural = strIn(names, 'plural', want);
      const versions = isObject(spec) ? spec['versions'] : undefined;
      if (versions !== undefined && versions !== null && !Array.isArray(versions)) throw new Error(`error decoding ${want} CRD: spec.versions must be a list`);
      for (const v of Array.isArray(versions) ? versions : []) add({ group, version: strIn(v, 'name', want), kind, plural });
      if (want === 'v1beta1') {
        const single = strIn(spec, 'version', want);
        if (single !== '') add({ group, version: single, kind, plural });
      }
    }
  }
  let owned;
  try {
    [owned] = csv.apiServiceDefinitions();
  } catch (e) {
    throw new Error(`error getting apiservice definitions: ${(e as Error).message}`, { cause: e });
  }
  for (const api of owned) add({ group: api.group, version: api.version, kind: api.kind, plural: api.name });
  return provided;
}

/** A string member of a CRD (case-sensitive, as the k8s decoder reads). */
function strIn(obj: unknown, key: string, crdVersion: string): string {
  if (!isObject(obj)) return '';
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`error decoding ${crdVersion} CRD: ${cannotUnmarshal(v, 'string')}`);
  return v;
}

/** Bundle.RequiredAPIs: the CSV's required CRDs (plural.group names) and API services. */
export function requiredAPIs(csv: CSV): Map<string, APIKey> {
  const required = new Map<string, APIKey>();
  const [, crds] = csv.crdDefinitions();
  for (const api of crds) {
    const dot = api.name.indexOf('.');
    if (dot < 0) throw new Error(`couldn't parse plural.group from crd name: ${api.name}`);
    const k = { group: api.name.slice(dot + 1), version: api.version, kind: api.kind, plural: api.name.slice(0, dot) };
    required.set(apiKeyId(k), k);
  }
  const [, apis] = csv.apiServiceDefinitions();
  for (const api of apis) {
    const k = { group: api.group, version: api.version, kind: api.kind, plural: api.name };
    required.set(apiKeyId(k), k);
  }
  return required;
}

/** Bundle.AllProvidedAPIsInBundle: every owned CRD of the CSV is among the bundle's CRDs. */
function allProvidedAPIsInBundle(csv: CSV, objects: Record<string, unknown>[]): void {
  const provided = providedAPIs(csv, objects);
  const [owned] = csv.crdDefinitions();
  for (const def of owned) {
    const dot = def.name.indexOf('.');
    if (dot < 0) throw new Error(`couldn't parse plural.group from crd name: ${def.name}`);
  }
  for (const def of owned) {
    const dot = def.name.indexOf('.');
    const key = { group: def.name.slice(dot + 1), version: def.version, kind: def.kind, plural: def.name.slice(0, dot) };
    if (!provided.has(apiKeyId(key))) {
      // fmt prints a map with its keys sorted (by struct fields in order)
      const found = [...provided.values()].sort(
        (a, b) =>
          compareGoStrings(a.group, b.group) ||
          compareGoStrings(a.version, b.version) ||
          compareGoStrings(a.kind, b.kind) ||
          compareGoStrings(a.plural, b.plural),
      );
      throw new Error(`couldn't find ${apiKeyString(key)} in bundle. found: map[${found.map((k) => `${apiKeyString(k)}:{}`).join(' ')}]`);
    }
  }
}

interface Metadata {
  annotations: BundleAnnotations;
  dependencies: RawProperty[];
  properties: RawProperty[];
}

async function readMetadata(dir: string, warn: (msg: string) => void): Promise<Metadata> {
  let annotations: BundleAnnotations | undefined;
  let dependencies: RawProperty[] | undefined;
  let properties: RawProperty[] | undefined;
  for (const f of await readDirSorted(dir)) {
    let doc: FirstDocument;
    try {
      if (f.isDir) continue; // reading a directory fails: opm skips it
      doc = await decodeFile(join(dir, f.name));
    } catch {
      continue;
    }
    if (annotations === undefined) {
      const a = tryDecode(() => decodeAnnotations(doc));
      if (a && (a.packageName !== '' || a.channels !== '' || a.defaultChannelName !== '')) annotations = a;
    }
    if (dependencies === undefined) {
      const d = tryDecode(() => decodePropertyList(doc, 'dependencies'));
      if (d && d.length > 0) dependencies = d;
    }
    if (properties === undefined) {
      const p = tryDecode(() => decodePropertyList(doc, 'properties'));
      if (p && p.length > 0) properties = p;
    }
  }
  if (!annotations) throw new BundleParseError('Could not find annotations file');
  if (!dependencies) warn('Could not find optional dependencies file');
  if (!properties) warn('Could not find optional properties file');
  return { annotations, dependencies: dependencies ?? [], properties: properties ?? [] };
}

function tryDecode<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/**
 * A string struct field. From YAML, sigs.k8s.io/yaml first turns a number or boolean bound for a
 * string field into its text; from JSON that is a type error.
 */
function goString(v: unknown, fromYAML: boolean): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (fromYAML && (typeof v === 'number' || typeof v === 'boolean')) return String(v);
  throw new Error(cannotUnmarshal(v, 'string'));
}

function docValue(doc: FirstDocument): unknown {
  if (doc.kind === 'empty') throw new Error('EOF');
  return doc.kind === 'json' ? doc.value.value : doc.value;
}

function decodeAnnotations(doc: FirstDocument): BundleAnnotations {
  const v = docValue(doc);
  const fromYAML = doc.kind === 'yaml';
  if (v !== null && !isObject(v)) throw new Error('not an object');
  const a = field(v, 'annotations');
  if (a !== undefined && a !== null && !isObject(a)) throw new Error('annotations is not an object');
  return {
    packageName: goString(field(a, 'operators.operatorframework.io.bundle.package.v1'), fromYAML),
    channels: goString(field(a, 'operators.operatorframework.io.bundle.channels.v1'), fromYAML),
    defaultChannelName: goString(field(a, 'operators.operatorframework.io.bundle.channel.default.v1'), fromYAML),
  };
}

/** A DependenciesFile or PropertiesFile: a list of {type, value} with value kept as raw JSON. */
function decodePropertyList(doc: FirstDocument, key: 'dependencies' | 'properties'): RawProperty[] {
  const v = docValue(doc);
  if (v !== null && !isObject(v)) throw new Error('not an object');
  const list = field(v, key);
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new Error(`${key} is not a list`);
  // Raw texts: from JSON the source text of each value; from YAML the json.Marshal of the converted value.
  let rawItems: readonly RawValue[] | undefined;
  if (doc.kind === 'json') {
    const members = doc.value.members ?? [];
    let listRaw: RawValue | undefined;
    const lower = key.toLowerCase();
    for (const [k, m] of members) if (k === key || k.toLowerCase() === lower) listRaw = m;
    rawItems = listRaw?.items;
  }
  return list.map((item, i) => {
    if (item !== null && !isObject(item)) throw new Error('item is not an object');
    const type = goString(field(item, 'type'), doc.kind === 'yaml');
    let raw: string | undefined;
    if (doc.kind === 'json') {
      const members = rawItems?.[i]?.members ?? [];
      for (const [k, m] of members) if (k === 'value' || k.toLowerCase() === 'value') raw = m.raw;
    } else {
      const value = field(item, 'value');
      if (value !== undefined) raw = goMarshal(value);
    }
    return doc.kind === 'yaml' ? { type, raw, escaped: true } : { type, raw };
  });
}

/** registry.propertySet: drops repeats of the same type and raw value. */
export function propertySet(props: RawProperty[]): RawProperty[] {
  const seen = new Set<string>();
  const out: RawProperty[] = [];
  for (const p of props) {
    const k = `type: ${p.type}, value: ${p.raw ?? ''}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(p);
  }
  return out;
}

/** bundleParser.derivedProperties: olm.package from the annotations, the CSV's olm.properties, olm.gvk per provided API. */
function derivedProperties(csv: CSV, objects: Record<string, unknown>[], annotations: BundleAnnotations, warn: (m: string) => void): RawProperty[] {
  const derived: RawProperty[] = [];
  const fromCSV = csv.annotations['olm.properties'];
  if (fromCSV !== undefined) {
    try {
      derived.push(...parseRawPropertyArray(fromCSV));
    } catch (e) {
      warn(`failed to unmarshal csv annotation properties: ${(e as Error).message}`);
    }
  }
  if (annotations.packageName !== '') {
    const version = csv.version();
    const release = csv.release();
    derived.unshift({ type: 'olm.package', raw: packageJSON(annotations.packageName, version, release, true) });
  }
  let provided;
  try {
    provided = providedAPIs(csv, objects);
  } catch (e) {
    throw new Error(`error getting provided apis: ${(e as Error).message}`, { cause: e });
  }
  for (const api of provided.values()) {
    derived.push({
      type: 'olm.gvk',
      raw: `{"group":${JSON.stringify(api.group)},"kind":${JSON.stringify(api.kind)},"version":${JSON.stringify(api.version)}}`,
    });
  }
  return propertySet(derived);
}

/** The olm.package value (property.Package / registry.PackageProperty; release omitted when empty). */
export function packageJSON(name: string, version: string, release: string, escapeHTML: boolean): string {
  const q = (s: string): string => goMarshal(s, escapeHTML);
  return `{"packageName":${q(name)},"version":${q(version)}${release !== '' ? `,"release":${q(release)}` : ''}}`;
}

/** json.Unmarshal of the CSV's olm.properties annotation into []Property (values kept raw). */
function parseRawPropertyArray(text: string): RawProperty[] {
  const parsed = parseRawJSON(text, true);
  if (parsed.value === null) return [];
  if (!Array.isArray(parsed.value)) throw new Error(cannotUnmarshal(parsed.value, '[]registry.Property'));
  return (parsed.items ?? []).map((item) => {
    if (item.value !== null && !isObject(item.value)) throw new Error(cannotUnmarshal(item.value, 'registry.Property'));
    let type = '';
    let raw: string | undefined;
    for (const [k, m] of item.members ?? []) {
      if (k === 'type' || k.toLowerCase() === 'type') type = goString(m.value, false);
      if (k === 'value' || k.toLowerCase() === 'value') raw = m.raw;
    }
    return { type, raw };
  });
}
