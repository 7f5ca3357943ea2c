// An interim resolver for the install flow (issue 27), until the SAT resolver of
// src/catalog/olm/resolver/ is wired in: per Subscription, the channel head (or startingCSV) of the
// subscribed package in the catalog the Subscription names, or, when an operator of it is installed,
// the next bundle along the channel's `replaces`/`skips` edges; then the bundles' `olm.package.required`
// and `olm.gvk.required` dependencies, resolved greedily one level deep from any catalog in scope
// (highest priority first), unless an installed operator or another chosen bundle satisfies them.
import { parseRange, parseTolerant } from '../../../golang/semver.js';
import type { ApiBundle, CatalogSnapshot, GroupVersionKind, Resolve, ResolvedStep, ResolveResult } from '../resolver/types.js';

const notSatisfiable = (message: string): ResolveResult => ({
  ok: false,
  reason: 'ConstraintsNotSatisfiable',
  message: `constraints not satisfiable: ${message}`,
});

const sameCatalog = (c: CatalogSnapshot, name: string, namespace: string): boolean => c.key.name === name && c.key.namespace === namespace;

/** The bundles of one channel; the head is the one no other bundle replaces or skips. */
export function channelHead(bundles: readonly ApiBundle[]): ApiBundle | undefined {
  const superseded = new Set<string>();
  for (const b of bundles) {
    if (b.replaces) superseded.add(b.replaces);
    for (const s of b.skips ?? []) superseded.add(s);
  }
  const heads = bundles.filter((b) => !superseded.has(b.csvName));
  // Several candidates (a broken graph): the highest version, as opm's head selection.
  return heads.sort((a, b) => compareVersions(b.version, a.version))[0];
}

function compareVersions(a: string, b: string): number {
  try {
    return parseTolerant(a).compare(parseTolerant(b));
  } catch {
    return a < b ? -1 : a > b ? 1 : 0;
  }
}

/** The next bundle after `installed` in a channel: the newest bundle replacing or skipping it, else none. */
export function nextInChannel(bundles: readonly ApiBundle[], installed: string): ApiBundle | undefined {
  const successors = bundles.filter((b) => b.replaces === installed || (b.skips ?? []).includes(installed));
  if (!successors.length) return undefined;
  const head = channelHead(bundles);
  // A head that skips straight to the top wins (skips), else the newest successor.
  if (head && successors.includes(head)) return head;
  return successors.sort((a, b) => compareVersions(b.version, a.version))[0];
}

const providesGvk = (b: ApiBundle, g: GroupVersionKind): boolean =>
  b.providedApis.some((p) => p.group === g.group && p.version === g.version && p.kind === g.kind);

interface Dependency {
  readonly describe: string;
  readonly matches: (b: ApiBundle) => boolean;
  readonly satisfiedBy: (providedApis: readonly GroupVersionKind[], pkg: string | undefined, version: string | undefined) => boolean;
}

function dependenciesOf(b: ApiBundle): Dependency[] {
  const out: Dependency[] = [];
  for (const dep of [...(b.dependencies ?? []), ...(b.properties ?? [])]) {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(dep.value) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (dep.type === 'olm.package.required' || dep.type === 'olm.package') {
      if (dep.type === 'olm.package' && !(b.dependencies ?? []).includes(dep)) continue;
      const pkg = String(value.packageName ?? '');
      const rangeText = String(value.versionRange ?? value.version ?? '');
      let range: (v: string) => boolean = () => true;
      if (rangeText) {
        try {
          const r = parseRange(rangeText);
          range = (v) => {
            try {
              return r(parseTolerant(v));
            } catch {
              return false;
            }
          };
        } catch {
          range = () => false;
        }
      }
      out.push({
        describe: `package ${pkg} with version in range ${rangeText || '*'}`,
        matches: (c) => c.packageName === pkg && range(c.version),
        satisfiedBy: (_apis, p, v) => p === pkg && v !== undefined && range(v),
      });
    } else if (dep.type === 'olm.gvk.required' || (dep.type === 'olm.gvk' && (b.dependencies ?? []).includes(dep))) {
      const gvk = { group: String(value.group ?? ''), version: String(value.version ?? ''), kind: String(value.kind ?? '') };
      out.push({
        describe: `${gvk.group}/${gvk.version}/${gvk.kind}`,
        matches: (c) => providesGvk(c, gvk),
        satisfiedBy: (apis) => apis.some((p) => p.group === gvk.group && p.version === gvk.version && p.kind === gvk.kind),
      });
    }
  }
  return out;
}

export const simpleResolve: Resolve = (input) => {
  const steps: ResolvedStep[] = [];
  const byPriority = [...input.catalogs].sort((a, b) => b.priority - a.priority);
  for (const sub of input.subscriptions) {
    const catalog = input.catalogs.find((c) => sameCatalog(c, sub.source, sub.sourceNamespace));
    const who = `subscription ${sub.name}`;
    if (!catalog)
      return notSatisfiable(`no operators found from catalog ${sub.source} in namespace ${sub.sourceNamespace} referenced by ${who}, ${who} exists`);
    const inPackage = catalog.bundles.filter((b) => b.packageName === sub.package);
    if (!inPackage.length) return notSatisfiable(`no operators found in package ${sub.package} in the catalog referenced by ${who}, ${who} exists`);
    const channel = sub.channel || catalog.defaultChannels[sub.package] || '';
    const inChannel = inPackage.filter((b) => b.channelName === channel);
    if (!inChannel.length)
      return notSatisfiable(`no operators found in channel ${channel} of package ${sub.package} in the catalog referenced by ${who}, ${who} exists`);
    let chosen: ApiBundle | undefined;
    let replaces: string | undefined;
    if (sub.installedCSV) {
      chosen = nextInChannel(inChannel, sub.installedCSV);
      if (!chosen) continue; // at the latest known version
      replaces = sub.installedCSV;
    } else if (sub.startingCSV) {
      chosen = inChannel.find((b) => b.csvName === sub.startingCSV);
      if (!chosen)
        return notSatisfiable(
          `no operators found with name ${sub.startingCSV} in channel ${channel} of package ${sub.package} in the catalog referenced by ${who}, ${who} exists`,
        );
    } else {
      chosen = channelHead(inChannel);
    }
    if (!chosen)
      return notSatisfiable(`no channel head found in channel ${channel} of package ${sub.package} in the catalog referenced by ${who}, ${who} exists`);
    steps.push({ bundle: chosen, catalog: catalog.key, subscription: sub.name, ...(replaces ? { replaces } : {}) });
  }
  // Dependencies, one level deep.
  const chosenFor = [...steps];
  for (const step of chosenFor) {
    for (const dep of dependenciesOf(step.bundle)) {
      const installed = input.installed.some((o) => dep.satisfiedBy(o.providedApis, o.package, o.version));
      const planned = steps.some((s) => dep.matches(s.bundle));
      if (installed || planned) continue;
      let found: { bundle: ApiBundle; catalog: CatalogSnapshot } | undefined;
      for (const c of byPriority) {
        // Each package's default channel head that matches, else any matching bundle.
        const candidates = c.bundles.filter((b) => dep.matches(b));
        const heads = candidates.filter((b) => b.channelName === c.defaultChannels[b.packageName]);
        const head = channelHead(heads.length ? heads : candidates);
        const pick = head && dep.matches(head) ? head : candidates.sort((a, b) => compareVersions(b.version, a.version))[0];
        if (pick) {
          found = { bundle: pick, catalog: c };
          break;
        }
      }
      if (!found)
        return notSatisfiable(
          `bundle ${step.bundle.csvName} requires an operator providing ${dep.describe}, but no operator in any catalog in scope provides it`,
        );
      steps.unshift({ bundle: found.bundle, catalog: found.catalog.key });
    }
  }
  return { ok: true, steps };
};
