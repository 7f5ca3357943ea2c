// opm's catalog migrations (alpha/action/migrations): an ordered list; a level runs every
// migration up to and including the named one ("all" runs them all).
import type { Bundle, DeclarativeConfig, Property } from '../declcfg/types.js';
import { goQuote } from '../../golang/strconv.js';
import { newPRVersion, parseTolerant } from '../../golang/semver.js';
import { compareGoStrings, field, isObject } from '../../golang/json.js';
import { cannotUnmarshal } from '../../golang/json-errors.js';

interface Migration {
  readonly token: string;
  readonly help: string;
  migrate(cfg: DeclarativeConfig): void;
}

export const NoMigrations = 'none';
export const AllMigrations = 'all';

const MIGRATIONS: readonly Migration[] = [
  { token: NoMigrations, help: 'do nothing', migrate: () => {} },
  { token: 'bundle-object-to-csv-metadata', help: `migrates bundles' "olm.bundle.object" to "olm.csv.metadata"`, migrate: bundleObjectToCSVMetadata },
];

export class UnknownMigrationError extends Error {
  override readonly name = 'UnknownMigrationError';
  readonly code = 'KPL_ERR_CATALOG_MIGRATION';
  constructor(level: string) {
    super(`unknown migration level ${goQuote(level)}`);
  }
}

/** The migrations a level selects (migrations.NewMigrations). */
export function migrationsFor(level: string): readonly Migration[] {
  if (level === AllMigrations) return MIGRATIONS;
  const i = MIGRATIONS.findIndex((m) => m.token === level);
  if (i < 0) throw new UnknownMigrationError(level);
  return MIGRATIONS.slice(0, i + 1);
}

/** Runs the migrations of level over cfg, in place. */
export function migrate(cfg: DeclarativeConfig, level: string): void {
  for (const m of migrationsFor(level)) m.migrate(cfg);
}

/** The --migrate-level help (migrations.HelpText; tabwriter pads tokens to one column). */
export function migrationsHelpText(): string {
  const width = Math.max(...MIGRATIONS.map((m) => m.token.length));
  const lines = MIGRATIONS.map((m) => `  - ${m.token.padEnd(width)} : ${m.help}\n`);
  return `\nThe migrator will run all migrations up to and including the selected level.\n\nAvailable migrators:\n${lines.join('')}`;
}

/**
 * bundle-object-to-csv-metadata: a bundle with an image and a CSV loses its olm.bundle.object
 * properties and gains one olm.csv.metadata built from the CSV; a bundle that already has one is
 * left alone. Like opm, the kept properties are compacted in place before that check, so a bundle
 * holding both kinds comes out with the compaction visible.
 */
function bundleObjectToCSVMetadata(cfg: DeclarativeConfig): void {
  for (const b of cfg.bundles) convertBundle(b);
}

function convertBundle(b: Bundle): void {
  if (!b.image || !b.csvJSON) return;
  const metadata = csvMetadata(JSON.parse(b.csvJSON) as unknown);
  const props = b.properties ?? [];
  let w = 0;
  for (const p of props) {
    if (p.type === 'olm.bundle.object') continue;
    if (p.type === 'olm.csv.metadata') return;
    props[w++] = p;
  }
  const kept: Property[] = props.slice(0, w);
  kept.push({ type: 'olm.csv.metadata', value: metadata });
  b.properties = kept;
}

type Json = Record<string, unknown>;

/** A type error at `where`: the struct's name, then the field path (`ClusterServiceVersionSpec.spec.keywords`). */
function typeError(v: unknown, where: string, goType: string): Error {
  const dot = where.indexOf('.');
  return new Error(cannotUnmarshal(v, goType, { struct: where.slice(0, dot), field: where.slice(dot + 1) }));
}

function str(obj: unknown, name: string, where: string): string {
  const v = field(obj, name);
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw typeError(v, `${where}.${name}`, 'string');
  return v;
}

function obj(v: unknown, where: string, goType: string): Json | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw typeError(v, where, goType);
  return v;
}

function list(v: unknown, where: string, goType: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw typeError(v, where, goType);
  return v;
}

function stringMap(v: unknown, where: string): Json | undefined {
  const m = obj(v, where, 'map[string]string');
  if (!m) return undefined;
  const out: Json = {};
  for (const k of Object.keys(m).sort(compareGoStrings)) {
    const s = m[k];
    if (s === null) out[k] = '';
    else if (typeof s !== 'string') throw typeError(s, where, 'string');
    else out[k] = s;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Sets key on o unless the value is empty (Go's omitempty for strings, slices and maps). */
function put(o: Json, key: string, v: unknown): void {
  if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) return;
  o[key] = v;
}

function descriptors(v: unknown, where: string): Json[] {
  return list(v, where, '[]v1alpha1.SpecDescriptor').map((d) => {
    obj(d, where, 'v1alpha1.SpecDescriptor');
    const out: Json = { path: str(d, 'path', where) };
    put(out, 'displayName', str(d, 'displayName', where));
    put(out, 'description', str(d, 'description', where));
    put(
      out,
      'x-descriptors',
      list(field(d, 'x-descriptors'), `${where}.x-descriptors`, '[]string').map((x) => {
        if (x !== null && typeof x !== 'string') throw typeError(x, `${where}.x-descriptors`, 'string');
        return x ?? '';
      }),
    );
    const value = field(d, 'value');
    if (value !== undefined) out['value'] = value; // json.RawMessage: kept as written (null included)
    return out;
  });
}

function resources(v: unknown, where: string): Json[] {
  return list(v, where, '[]v1alpha1.APIResourceReference').map((r) => ({
    name: str(r, 'name', where),
    kind: str(r, 'kind', where),
    version: str(r, 'version', where),
  }));
}

function describedAPIs(d: Json, out: Json, where: string): void {
  put(out, 'displayName', str(d, 'displayName', where));
  put(out, 'description', str(d, 'description', where));
  put(out, 'resources', resources(field(d, 'resources'), `${where}.resources`));
  put(out, 'statusDescriptors', descriptors(field(d, 'statusDescriptors'), `${where}.statusDescriptors`));
  put(out, 'specDescriptors', descriptors(field(d, 'specDescriptors'), `${where}.specDescriptors`));
  put(out, 'actionDescriptors', descriptors(field(d, 'actionDescriptors'), `${where}.actionDescriptors`));
}

function crdDescriptions(v: unknown): Json {
  const defs = obj(v, 'ClusterServiceVersionSpec.spec.customresourcedefinitions', 'v1alpha1.CustomResourceDefinitions');
  const out: Json = {};
  for (const part of ['owned', 'required']) {
    const where = `CustomResourceDefinitions.spec.customresourcedefinitions.${part}`;
    put(
      out,
      part,
      list(field(defs, part), where, '[]v1alpha1.CRDDescription').map((d) => {
        const o = obj(d, where, 'v1alpha1.CRDDescription') ?? {};
        const desc: Json = { name: str(o, 'name', where), version: str(o, 'version', where), kind: str(o, 'kind', where) };
        describedAPIs(o, desc, where);
        return desc;
      }),
    );
  }
  return out;
}

function apiServiceDescriptions(v: unknown): Json {
  const defs = obj(v, 'ClusterServiceVersionSpec.spec.apiservicedefinitions', 'v1alpha1.APIServiceDefinitions');
  const out: Json = {};
  for (const part of ['owned', 'required']) {
    const where = `APIServiceDefinitions.spec.apiservicedefinitions.${part}`;
    put(
      out,
      part,
      list(field(defs, part), where, '[]v1alpha1.APIServiceDescription').map((d) => {
        const o = obj(d, where, 'v1alpha1.APIServiceDescription') ?? {};
        const desc: Json = { name: str(o, 'name', where), group: str(o, 'group', where), version: str(o, 'version', where), kind: str(o, 'kind', where) };
        put(desc, 'deploymentName', str(o, 'deploymentName', where));
        const port = field(o, 'containerPort');
        if (port !== undefined && port !== null) {
          if (typeof port !== 'number' || !Number.isInteger(port) || port < -2147483648 || port > 2147483647)
            throw typeError(port, `${where}.containerPort`, 'int32');
          if (port !== 0) desc['containerPort'] = port;
        }
        describedAPIs(o, desc, where);
        return desc;
      }),
    );
  }
  return out;
}

function appLink(v: unknown, where: string): Json {
  obj(v, where, 'v1alpha1.AppLink');
  const out: Json = {};
  put(out, 'name', str(v, 'name', where));
  put(out, 'url', str(v, 'url', where));
  return out;
}

/**
 * The typed decode fails on a version or release that is not semver (OperatorVersion and
 * OperatorRelease parse themselves), with blang's message as is.
 */
function checkVersions(spec: Json): void {
  for (const key of ['version', 'release']) {
    const v = field(spec, key);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new Error(cannotUnmarshal(v, 'string'));
    if (key === 'version') parseTolerant(v);
    else for (const segment of v.split('.')) newPRVersion(segment);
  }
}

/** property.MustBuildCSVMetadata over the CSV decoded as v1alpha1.ClusterServiceVersion. */
export function csvMetadata(csv: unknown): Json {
  const root = obj(csv, 'ClusterServiceVersion', 'v1alpha1.ClusterServiceVersion') ?? {};
  const md = obj(field(root, 'metadata'), 'ClusterServiceVersion.metadata', 'v1.ObjectMeta');
  const spec = obj(field(root, 'spec'), 'ClusterServiceVersion.spec', 'v1alpha1.ClusterServiceVersionSpec') ?? {};
  const where = 'ClusterServiceVersionSpec.spec';
  checkVersions(spec);
  const out: Json = {};
  put(out, 'annotations', stringMap(field(md, 'annotations'), 'ObjectMeta.metadata.annotations'));
  out['apiServiceDefinitions'] = apiServiceDescriptions(field(spec, 'apiservicedefinitions'));
  out['crdDescriptions'] = crdDescriptions(field(spec, 'customresourcedefinitions'));
  put(out, 'description', str(spec, 'description', where));
  put(out, 'displayName', str(spec, 'displayName', where));
  put(
    out,
    'installModes',
    list(field(spec, 'installModes'), `${where}.installModes`, '[]v1alpha1.InstallMode').map((m) => {
      const supported = field(m, 'supported');
      if (supported !== undefined && supported !== null && typeof supported !== 'boolean')
        throw typeError(supported, `${where}.installModes.supported`, 'bool');
      return { type: str(m, 'type', `${where}.installModes`), supported: supported === true };
    }),
  );
  put(
    out,
    'keywords',
    list(field(spec, 'keywords'), `${where}.keywords`, '[]string').map((k) => {
      if (k !== null && typeof k !== 'string') throw typeError(k, `${where}.keywords`, 'string');
      return k ?? '';
    }),
  );
  put(out, 'labels', stringMap(field(md, 'labels'), 'ObjectMeta.metadata.labels'));
  put(
    out,
    'links',
    list(field(spec, 'links'), `${where}.links`, '[]v1alpha1.AppLink').map((l) => appLink(l, `${where}.links`)),
  );
  put(
    out,
    'maintainers',
    list(field(spec, 'maintainers'), `${where}.maintainers`, '[]v1alpha1.Maintainer').map((m) => {
      const o: Json = {};
      put(o, 'name', str(m, 'name', `${where}.maintainers`));
      put(o, 'email', str(m, 'email', `${where}.maintainers`));
      return o;
    }),
  );
  put(out, 'maturity', str(spec, 'maturity', where));
  put(out, 'minKubeVersion', str(spec, 'minKubeVersion', where));
  put(
    out,
    'nativeAPIs',
    list(field(spec, 'nativeAPIs'), `${where}.nativeAPIs`, '[]v1.GroupVersionKind').map((g) => ({
      group: str(g, 'group', `${where}.nativeAPIs`),
      version: str(g, 'version', `${where}.nativeAPIs`),
      kind: str(g, 'kind', `${where}.nativeAPIs`),
    })),
  );
  out['provider'] = appLink(field(spec, 'provider'), `${where}.provider`);
  return out;
}
