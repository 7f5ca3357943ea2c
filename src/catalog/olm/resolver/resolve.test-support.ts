// Fixtures for the resolver's tests and bench: api.Bundles shaped as opm serves them, and catalogs.
import type { ApiBundle, TypedValue } from '../../api/api.js';
import type { CatalogSnapshot, InstalledOperator, ResolveResult, SubscriptionInput } from './types.js';

export interface BundleSpec {
  name: string;
  version: string;
  pkg: string;
  channel: string;
  replaces?: string;
  skips?: string[];
  skipRange?: string;
  /** provided APIs as "group/version/Kind" */
  provides?: string[];
  /** required APIs as "group/version/Kind" */
  requires?: string[];
  /** olm.package.required: [package, range] */
  requiresPackages?: [string, string][];
  /** further properties, value as JSON text */
  properties?: TypedValue[];
}

const gvk = (s: string): { group: string; version: string; kind: string } => {
  const [group, version, kind] = s.split('/') as [string, string, string];
  return { group, version, kind };
};

/** An api.Bundle as opm's ListBundles sends it (properties and their legacy dependency twins). */
export function apiBundle(b: BundleSpec): ApiBundle {
  const provides = (b.provides ?? []).map(gvk);
  const requires = (b.requires ?? []).map(gvk);
  const properties: TypedValue[] = [
    { type: 'olm.package', value: JSON.stringify({ packageName: b.pkg, version: b.version }) },
    ...provides.map((g) => ({ type: 'olm.gvk', value: JSON.stringify({ group: g.group, kind: g.kind, version: g.version }) })),
    ...requires.map((g) => ({ type: 'olm.gvk.required', value: JSON.stringify({ group: g.group, kind: g.kind, version: g.version }) })),
    ...(b.requiresPackages ?? []).map(([p, r]) => ({ type: 'olm.package.required', value: JSON.stringify({ packageName: p, versionRange: r }) })),
    ...(b.properties ?? []),
  ];
  const dependencies: TypedValue[] = [
    ...requires.map((g) => ({ type: 'olm.gvk', value: JSON.stringify({ group: g.group, kind: g.kind, version: g.version }) })),
    ...(b.requiresPackages ?? []).map(([p, r]) => ({ type: 'olm.package', value: JSON.stringify({ packageName: p, version: r }) })),
  ];
  return {
    csvName: b.name,
    packageName: b.pkg,
    channelName: b.channel,
    csvJson: '',
    object: [],
    bundlePath: `registry.example/${b.pkg}-bundle:v${b.version}`,
    providedApis: provides,
    requiredApis: requires,
    version: b.version,
    skipRange: b.skipRange ?? '',
    dependencies,
    properties,
    replaces: b.replaces ?? '',
    skips: b.skips ?? [],
  };
}

export function catalog(
  name: string,
  namespace: string,
  bundles: BundleSpec[],
  opts: { priority?: number; defaultChannels?: Record<string, string> } = {},
): CatalogSnapshot {
  const defaultChannels: Record<string, string> = { ...opts.defaultChannels };
  for (const b of bundles) defaultChannels[b.pkg] ??= b.channel;
  return { key: { name, namespace }, priority: opts.priority ?? 0, bundles: bundles.map(apiBundle), defaultChannels };
}

export function sub(name: string, pkg: string, channel: string | undefined, source: string, extra: Partial<SubscriptionInput> = {}): SubscriptionInput {
  const s: SubscriptionInput = { name, namespace: 'olm', package: pkg, source, sourceNamespace: 'olm', ...extra };
  if (channel !== undefined) s.channel = channel;
  return s;
}

export function installed(csvName: string, pkg: string, version: string, provides: string[] = []): InstalledOperator {
  return { csvName, package: pkg, version, providedApis: provides.map(gvk) };
}

/** A result as "catalog/channel/csv" per step, or the failure. */
export function summary(r: ResolveResult): string[] | { reason: string; message: string } {
  if (!r.ok) return { reason: r.reason, message: r.message };
  return r.steps.map((s) => `${s.catalog.name}/${s.bundle.channelName}/${s.bundle.csvName}${s.replaces ? ` (replaces ${s.replaces})` : ''}`);
}
