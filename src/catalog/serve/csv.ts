// A ClusterServiceVersion made up from an olm.csv.metadata property, for bundles that carry no CSV
// (opm's api.ConvertModelBundleToAPIBundle): the JSON text json.Marshal gives for operator-framework/api's
// v1alpha1.ClusterServiceVersion, i.e. struct fields in declaration order, omitempty honoured, map
// keys sorted and <, >, & escaped.
import { goMarshal, goString, goStruct } from '../../golang/json.js';

type Obj = Record<string, unknown>;

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
const s = (v: unknown): string => goString(str(v), true);
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
  return goMarshal(Object.fromEntries(Object.entries(m).map(([k, x]) => [k, str(x)])));
}
/** a json.RawMessage field with omitempty */
function raw(v: unknown): string | undefined {
  return v === undefined ? undefined : goMarshal(v);
}

/** how one struct field is written from its JSON value; undefined leaves it out (omitempty) */
type FieldWriter = (v: unknown) => string | undefined;

/** a struct writer: the fields in declaration order, each read from the object's same-named key */
function struct(fields: [string, FieldWriter][]): (v: unknown) => string {
  return (v) => {
    const o = obj(v);
    return goStruct(fields.map(([name, f]) => [name, f(o[name])]));
  };
}
const listOf =
  (f: (x: unknown) => string): FieldWriter =>
  (v) =>
    list(v, f);

const descriptor = struct([
  ['path', s],
  ['displayName', so],
  ['description', so],
  ['x-descriptors', listOf(s)],
  ['value', raw],
]);
const resource = struct([
  ['name', s],
  ['kind', s],
  ['version', s],
]);
/** the fields CRDDescription and APIServiceDescription end with */
const describedFields: [string, FieldWriter][] = [
  ['displayName', so],
  ['description', so],
  ['resources', listOf(resource)],
  ['statusDescriptors', listOf(descriptor)],
  ['specDescriptors', listOf(descriptor)],
  ['actionDescriptors', listOf(descriptor)],
];
const crdDescription = struct([['name', s], ['version', s], ['kind', s], ...describedFields]);
/** an int32 with omitempty */
const port: FieldWriter = (v) => (typeof v === 'number' && v !== 0 ? String(Math.trunc(v)) : undefined);
const apiServiceDescription = struct([
  ['name', s],
  ['group', s],
  ['version', s],
  ['kind', s],
  ['deploymentName', so],
  ['containerPort', port],
  ...describedFields,
]);
const ownedRequired = (f: (x: unknown) => string): ((v: unknown) => string) =>
  struct([
    ['owned', listOf(f)],
    ['required', listOf(f)],
  ]);
const appLink = struct([
  ['name', so],
  ['url', so],
]);
const maintainer = struct([
  ['name', so],
  ['email', so],
]);
const installMode = struct([
  ['type', s],
  ['supported', (v) => (v === true ? 'true' : 'false')],
]);
const gvk = struct([
  ['group', s],
  ['version', s],
  ['kind', s],
]);
const icon = struct([
  ['base64data', s],
  ['mediatype', s],
]);
const relatedImage = struct([
  ['name', s],
  ['image', s],
]);

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
  const spec = goStruct([
    ['install', '{"strategy":"deployment","spec":{"deployments":null}}'],
    ['version', s(input.version)],
    ['maturity', so(m.maturity)],
    ['customresourcedefinitions', ownedRequired(crdDescription)(m.crdDescriptions)],
    ['apiservicedefinitions', ownedRequired(apiServiceDescription)(m.apiServiceDefinitions)],
    ['nativeAPIs', list(m.nativeAPIs, gvk)],
    ['minKubeVersion', so(m.minKubeVersion)],
    ['displayName', s(m.displayName)],
    ['description', so(description)],
    ['keywords', list(m.keywords, s)],
    ['maintainers', list(m.maintainers, maintainer)],
    ['provider', appLink(m.provider)],
    ['links', list(m.links, appLink)],
    ['icon', input.icon ? `[${icon(input.icon)}]` : undefined],
    ['installModes', list(m.installModes, installMode)],
    ['cleanup', '{"enabled":false}'],
    ['relatedImages', list(input.relatedImages, relatedImage)],
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
