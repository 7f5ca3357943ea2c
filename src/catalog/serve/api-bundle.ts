// A model bundle as the registry API's Bundle message (opm's api.ConvertModelBundleToAPIBundle).
import type { ApiBundle, GroupVersionKind, TypedValue } from '../api/api.js';
import type { Bundle } from '../model/types.js';
import {
  PropertyBundleObject,
  PropertyCSVMetadata,
  PropertyGVK,
  PropertyGVKRequired,
  PropertyPackage,
  PropertyPackageRequired,
  type Property,
} from '../declcfg/types.js';
import { parse as parseYAML } from 'yaml';
import { csvFromMetadata } from './csv.js';
import { goMarshal, goString } from '../../golang/json.js';

export class BundleConversionError extends Error {
  override readonly name = 'BundleConversionError';
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A property value as text: the compact JSON opm holds (keys sorted by its loader, HTML not escaped). */
export function propertyValueText(value: unknown): string {
  return goMarshal(value, false);
}

function gvkOf(value: unknown): GroupVersionKind {
  const o = obj(value);
  return { group: str(o.group), version: str(o.version), kind: str(o.kind) };
}

/** opm's parseProperties checks: exactly one olm.package, at most one olm.csv.metadata. */
export function checkBundleProperties(b: Bundle): void {
  let packages = 0;
  let csvMetadatas = 0;
  for (const p of b.properties) {
    if (p.type === PropertyPackage) packages++;
    else if (p.type === PropertyCSVMetadata) csvMetadatas++;
  }
  if (packages !== 1) {
    throw new BundleConversionError(`parse properties: expected exactly 1 property of type "${PropertyPackage}", found ${packages}`);
  }
  if (csvMetadatas > 1) {
    throw new BundleConversionError(`parse properties: expected at most 1 property of type "${PropertyCSVMetadata}", found ${csvMetadatas}`);
  }
}

export function modelBundleToApi(b: Bundle): ApiBundle {
  checkBundleProperties(b);
  const props = b.properties;
  const packages = props.filter((p) => p.type === PropertyPackage);
  const csvMetadatas = props.filter((p) => p.type === PropertyCSVMetadata);

  let csvJson = b.csvJSON;
  let objects = b.objects;
  if (objects.length === 0) {
    // a loader that did not fill objects/csvJSON: take them from the olm.bundle.object properties
    objects = objectsFromProperties(b.package.name, b.name, b.properties);
    if (csvJson === '') csvJson = csvOf(objects);
  }
  if (csvJson === '' && csvMetadatas.length === 1) {
    const icon = b.package.icon;
    csvJson = csvFromMetadata({
      metadata: csvMetadatas[0]!.value,
      name: b.name,
      version: b.version,
      ...(icon ? { icon: { base64data: Buffer.from(icon.data).toString('base64'), mediatype: icon.mediatype } } : {}),
      relatedImages: b.relatedImages,
      packageDescription: b.package.description,
    });
    if (objects.length === 0) objects = [csvJson];
  }

  const providedApis: GroupVersionKind[] = [];
  const requiredApis: GroupVersionKind[] = [];
  const dependencies: TypedValue[] = [];
  const properties: TypedValue[] = [];
  for (const p of props) {
    switch (p.type) {
      case PropertyGVK:
        providedApis.push(gvkOf(p.value));
        break;
      case PropertyGVKRequired:
        requiredApis.push(gvkOf(p.value));
        dependencies.push({ type: PropertyGVK, value: propertyValueText(p.value) });
        break;
      case PropertyPackageRequired: {
        // opm rebuilds it as an olm.package property: {"packageName":..,"version":<the range>}
        const o = obj(p.value);
        dependencies.push({
          type: PropertyPackage,
          value: `{"packageName":${goString(str(o.packageName))},"version":${goString(str(o.versionRange))}}`,
        });
        break;
      }
    }
    // Bundle objects and CSV metadata stay out of the properties: clients project properties into
    // CSV annotations, and inlined manifests would at least double the CSV's size (as opm explains).
    if (p.type !== PropertyBundleObject && p.type !== PropertyCSVMetadata) {
      properties.push({ type: p.type, value: propertyValueText(p.value) });
    }
  }

  const out: ApiBundle = {
    csvName: b.name,
    packageName: b.package.name,
    channelName: b.channel.name,
    csvJson,
    object: objects,
    bundlePath: b.image,
    providedApis,
    requiredApis,
    version: str(obj(packages[0]!.value).version),
    skipRange: b.skipRange,
    dependencies,
    properties,
    replaces: b.replaces,
    skips: b.skips,
  };
  if (b.deprecation) out.deprecation = { message: b.deprecation.message };
  return out;
}

/**
 * Each olm.bundle.object's manifest as JSON text, as opm's loader makes it (sigs.k8s.io/yaml ToJSON:
 * keys sorted, <, > and & escaped).
 */
export function objectsFromProperties(pkgName: string, bundleName: string, props: readonly Property[]): string[] {
  const out: string[] = [];
  for (const p of props) {
    if (p.type !== PropertyBundleObject) continue;
    const data = str(obj(p.value).data);
    try {
      out.push(goMarshal(parseYAML(Buffer.from(data, 'base64').toString('utf8')) as unknown));
    } catch (err) {
      throw new BundleConversionError(
        `package ${JSON.stringify(pkgName)}, bundle ${JSON.stringify(bundleName)}: convert bundle object property to JSON: ${(err as Error).message}`,
      );
    }
  }
  return out;
}

/** The first object that is a ClusterServiceVersion, or "". */
export function csvOf(objects: readonly string[]): string {
  for (const o of objects) {
    try {
      if (obj(JSON.parse(o)).kind === 'ClusterServiceVersion') return o;
    } catch {
      // not JSON: not a CSV
    }
  }
  return '';
}
