// A package of a catalog as OLM's package server shows it (packages.operators.coreos.com/v1
// PackageManifest, operator-lifecycle-manager pkg/package-server/provider newPackageManifest):
// built from the registry's GetPackage and, per channel, the channel head's bundle
// (GetBundleForChannel) and CSV.
import type { KubeObject } from '../../apimachinery/types.js';
import type { ApiBundle, ApiPackage } from '../api/api.js';

export const PACKAGES_GROUP = 'packages.operators.coreos.com';

/** The CatalogSource fields a PackageManifest copies. */
export interface CatalogSourceRef {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly creationTimestamp?: string;
  readonly displayName: string;
  readonly publisher: string;
}

type Json = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** operators.CreateCSVDescription: what of a CSV a channel shows. Icons are dropped, as the package server's REST storage strips them. */
export function csvDescription(csv: Json): Json {
  const spec = obj(csv.spec);
  const meta = obj(csv.metadata);
  const provider = obj(spec.provider);
  const out: Json = {};
  const put = (k: string, v: unknown): void => {
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) return;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return;
    out[k] = v;
  };
  put('displayName', str(spec.displayName));
  put('version', str(spec.version));
  put('provider', { ...(str(provider.name) ? { name: str(provider.name) } : {}), ...(str(provider.url) ? { url: str(provider.url) } : {}) });
  put('annotations', meta.annotations);
  put('keywords', list(spec.keywords));
  put(
    'links',
    list(spec.links).map((l) => ({ ...(str(obj(l).name) ? { name: str(obj(l).name) } : {}), ...(str(obj(l).url) ? { url: str(obj(l).url) } : {}) })),
  );
  put(
    'maintainers',
    list(spec.maintainers).map((m) => ({
      ...(str(obj(m).name) ? { name: str(obj(m).name) } : {}),
      ...(str(obj(m).email) ? { email: str(obj(m).email) } : {}),
    })),
  );
  put('maturity', str(spec.maturity));
  put('description', str(spec.description));
  put('installModes', list(spec.installModes));
  put('customresourcedefinitions', obj(spec.customresourcedefinitions));
  put('apiservicedefinitions', obj(spec.apiservicedefinitions));
  put('nativeAPIs', list(spec.nativeAPIs));
  put('minKubeVersion', str(spec.minKubeVersion));
  put('relatedImages', list(spec.relatedImages));
  return out;
}

/** The channel heads' bundles of a package, by channel name (a channel whose head could not be read is left out). */
export type ChannelHeads = ReadonlyMap<string, ApiBundle>;

/** One channel's bundles in the catalog (newest last as ListBundles gives them): the channel's entries. */
export type ChannelEntries = ReadonlyMap<string, readonly { name: string; version: string }[]>;

/**
 * newPackageManifest: undefined when no channel has a readable head CSV (the package server elides
 * such a package). `problems` collects what was elided, for the log.
 */
export function packageManifest(
  pkg: ApiPackage,
  heads: ChannelHeads,
  entries: ChannelEntries,
  source: CatalogSourceRef,
  problems: string[] = [],
): KubeObject | undefined {
  const labels: Record<string, string> = { ...source.labels, catalog: source.name, 'catalog-namespace': source.namespace };
  let defaultChannel = pkg.defaultChannelName;
  const channels: Json[] = [];
  let providerSet = false;
  let provider: Json = {};
  let defaultElided = false;
  let defaultCsv: Json | undefined;
  for (const ch of pkg.channels) {
    const bundle = heads.get(ch.name);
    let csv: Json | undefined;
    try {
      csv = bundle ? obj(JSON.parse(bundle.csvJson)) : undefined;
    } catch {
      problems.push(`package ${pkg.name} channel ${ch.name}: error unmarshaling csv, eliding channel`);
    }
    if (!bundle || !csv) {
      if (!bundle) problems.push(`package ${pkg.name} channel ${ch.name}: error getting bundle, eliding channel`);
      defaultElided ||= ch.name === defaultChannel;
      continue;
    }
    if (!defaultCsv || ch.name === defaultChannel) defaultCsv = csv;
    const channel: Json = { name: ch.name, currentCSV: str(obj(csv.metadata).name), currentCSVDesc: csvDescription(csv) };
    const chEntries = entries.get(ch.name);
    if (chEntries?.length) channel.entries = chEntries.map((e) => ({ name: e.name, ...(e.version ? { version: e.version } : {}) }));
    if (ch.deprecation?.message) channel.deprecation = { message: ch.deprecation.message };
    channels.push(channel);
    if ((defaultChannel !== '' && ch.name === defaultChannel) || !providerSet) {
      const p = obj(obj(csv.spec).provider);
      provider = { ...(str(p.name) ? { name: str(p.name) } : {}), ...(str(p.url) ? { url: str(p.url) } : {}) };
      labels.provider = str(p.name);
      labels['provider-url'] = str(p.url);
      providerSet = true;
    }
  }
  if (channels.length === 0) {
    problems.push(`package ${pkg.name}: packagemanifest has no valid channels`);
    return undefined;
  }
  if (defaultElided) defaultChannel = str(channels[0]!.name);
  for (const [k, v] of Object.entries(obj(obj(defaultCsv?.metadata).labels))) if (typeof v === 'string') labels[k] = v;
  setDefaultOsArchLabels(labels);
  const status: Json = {
    catalogSource: source.name,
    catalogSourceDisplayName: source.displayName,
    catalogSourcePublisher: source.publisher,
    catalogSourceNamespace: source.namespace,
    provider,
    packageName: pkg.name,
    channels,
    defaultChannel,
  };
  if (pkg.deprecation?.message) status.deprecation = { message: pkg.deprecation.message };
  return {
    apiVersion: `${PACKAGES_GROUP}/v1`,
    kind: 'PackageManifest',
    metadata: {
      name: pkg.name,
      namespace: source.namespace,
      labels,
      ...(source.creationTimestamp ? { creationTimestamp: source.creationTimestamp } : {}),
    },
    spec: {},
    status,
  };
}

const ARCH_PREFIX = 'operatorframework.io/arch.';
const OS_PREFIX = 'operatorframework.io/os.';

/** setDefaultOsArchLabels: a package that names no arch (os) supports amd64 (linux). */
function setDefaultOsArchLabels(labels: Record<string, string>): void {
  const keys = Object.keys(labels);
  if (!keys.some((k) => k.startsWith(ARCH_PREFIX))) labels[`${ARCH_PREFIX}amd64`] = 'supported';
  if (!keys.some((k) => k.startsWith(OS_PREFIX))) labels[`${OS_PREFIX}linux`] = 'supported';
}
