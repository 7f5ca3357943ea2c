// A ClusterServiceVersion made up from an olm.csv.metadata property, for bundles that carry no CSV
// (opm's api.ConvertModelBundleToAPIBundle): the JSON text json.Marshal gives for operator-framework/api's
// v1alpha1.ClusterServiceVersion, i.e. struct fields in declaration order, omitempty honoured, map
// keys sorted and <, >, & escaped.
import { goJSON, goString, goStruct } from './gojson.js';

type Obj = Record<string, unknown>;

const esc = { escapeHTML: true };

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
function obj(v: unknown): Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** a string field: always written */
const s = (v: unknown): string => goString(str(v), esc);
/** a string field with omitempty */
const so = (v: unknown): string | undefined => (str(v) === '' ? undefined : s(v));
/** a slice field with omitempty, each element written by f */
function list(v: unknown, f: (x: unknown) => string): string | undefined {
  const a = arr(v);
  return a.length === 0 ? undefined : `[${a.map(f).join(',')}]`;
}
/** a map[string]string field with omitempty */
function stringMap(v: unknown): string | undefined {
  const m = obj(v);
  if (Object.keys(m).length === 0) return undefined;
  return goJSON(Object.fromEntries(Object.entries(m).map(([k, x]) => [k, str(x)])), esc);
}
/** a json.RawMessage field with omitempty */
function raw(v: unknown): string | undefined {
  return v === undefined ? undefined : goJSON(v, esc);
}

function descriptor(d: unknown): string {
  const o = obj(d);
  return goStruct([
    ['path', s(o.path)],
    ['displayName', so(o.displayName)],
    ['description', so(o.description)],
    ['x-descriptors', list(o['x-descriptors'], s)],
    ['value', raw(o.value)],
  ]);
}

function resource(r: unknown): string {
  const o = obj(r);
  return goStruct([
    ['name', s(o.name)],
    ['kind', s(o.kind)],
    ['version', s(o.version)],
  ]);
}

function crdDescription(d: unknown): string {
  const o = obj(d);
  return goStruct([
    ['name', s(o.name)],
    ['version', s(o.version)],
    ['kind', s(o.kind)],
    ['displayName', so(o.displayName)],
    ['description', so(o.description)],
    ['resources', list(o.resources, resource)],
    ['statusDescriptors', list(o.statusDescriptors, descriptor)],
    ['specDescriptors', list(o.specDescriptors, descriptor)],
    ['actionDescriptors', list(o.actionDescriptors, descriptor)],
  ]);
}

function apiServiceDescription(d: unknown): string {
  const o = obj(d);
  const port = typeof o.containerPort === 'number' && o.containerPort !== 0 ? String(Math.trunc(o.containerPort)) : undefined;
  return goStruct([
    ['name', s(o.name)],
    ['group', s(o.group)],
    ['version', s(o.version)],
    ['kind', s(o.kind)],
    ['deploymentName', so(o.deploymentName)],
    ['containerPort', port],
    ['displayName', so(o.displayName)],
    ['description', so(o.description)],
    ['resources', list(o.resources, resource)],
    ['statusDescriptors', list(o.statusDescriptors, descriptor)],
    ['specDescriptors', list(o.specDescriptors, descriptor)],
    ['actionDescriptors', list(o.actionDescriptors, descriptor)],
  ]);
}

function ownedRequired(v: unknown, f: (x: unknown) => string): string {
  const o = obj(v);
  return goStruct([
    ['owned', list(o.owned, f)],
    ['required', list(o.required, f)],
  ]);
}

function appLink(v: unknown): string {
  const o = obj(v);
  return goStruct([
    ['name', so(o.name)],
    ['url', so(o.url)],
  ]);
}

function maintainer(v: unknown): string {
  const o = obj(v);
  return goStruct([
    ['name', so(o.name)],
    ['email', so(o.email)],
  ]);
}

function installMode(v: unknown): string {
  const o = obj(v);
  return goStruct([
    ['type', s(o.type)],
    ['supported', o.supported === true ? 'true' : 'false'],
  ]);
}

function gvk(v: unknown): string {
  const o = obj(v);
  return goStruct([
    ['group', s(o.group)],
    ['version', s(o.version)],
    ['kind', s(o.kind)],
  ]);
}

export interface CsvFromMetadataInput {
  /** the olm.csv.metadata property's value */
  metadata: unknown;
  name: string;
  version: string;
  icon?: { base64data: string; mediatype: string };
  relatedImages: { name: string; image: string }[];
  /** the package's description, used when the metadata has none */
  packageDescription: string;
}

export function csvFromMetadata(input: CsvFromMetadataInput): string {
  const m = obj(input.metadata);
  const description = str(m.description) === '' ? input.packageDescription : str(m.description);
  const icon = input.icon
    ? `[${goStruct([
        ['base64data', s(input.icon.base64data)],
        ['mediatype', s(input.icon.mediatype)],
      ])}]`
    : undefined;
  const related =
    input.relatedImages.length === 0
      ? undefined
      : `[${input.relatedImages
          .map((r) =>
            goStruct([
              ['name', s(r.name)],
              ['image', s(r.image)],
            ]),
          )
          .join(',')}]`;
  const spec = goStruct([
    ['install', '{"strategy":"deployment","spec":{"deployments":null}}'],
    ['version', s(input.version)],
    ['maturity', so(m.maturity)],
    ['customresourcedefinitions', ownedRequired(m.crdDescriptions, crdDescription)],
    ['apiservicedefinitions', ownedRequired(m.apiServiceDefinitions, apiServiceDescription)],
    ['nativeAPIs', list(m.nativeAPIs, gvk)],
    ['minKubeVersion', so(m.minKubeVersion)],
    ['displayName', s(m.displayName)],
    ['description', so(description)],
    ['keywords', list(m.keywords, s)],
    ['maintainers', list(m.maintainers, maintainer)],
    ['provider', appLink(m.provider)],
    ['links', list(m.links, appLink)],
    ['icon', icon],
    ['installModes', list(m.installModes, installMode)],
    ['cleanup', '{"enabled":false}'],
    ['relatedImages', related],
  ]);
  const metadata = goStruct([
    ['name', s(input.name)],
    ['creationTimestamp', 'null'],
    ['labels', stringMap(m.labels)],
    ['annotations', stringMap(m.annotations)],
  ]);
  return goStruct([
    ['kind', '"ClusterServiceVersion"'],
    ['apiVersion', '"operators.coreos.com/v1alpha1"'],
    ['metadata', metadata],
    ['spec', spec],
    ['status', '{"cleanup":{}}'],
  ]);
}
