// Interoperability of the operators in one catalog (the third test layer of the repository design):
//   - no two packages provide the same CRD group/kind, unless the repository declares that they
//     may (interop.yaml or a platform's sharedAPIs);
//   - every olm.package.required and olm.gvk.required of a bundle can be satisfied inside the
//     catalog by a bundle in a channel of the same kind (candidate, fast, stable);
//   - the channel heads of a platform install together (./platform.ts).
// A finding that concerns candidate channels only is a warning: candidate bundles may be broken
// for a while without failing the run.
import { readFile } from 'node:fs/promises';
import { parse as parseYAML } from 'yaml';
import type { Bundle, Channel, DeclarativeConfig } from '../declcfg/types.js';
import { parse as parseVersion, parseRange, type Version } from '../../golang/semver.js';
import type { Platform } from './platform.js';
import { PlatformError, parseSharedAPIs, resolvePlatform } from './platform.js';
import { channelKindOf, type ChannelKind } from './veneer.js';
import type { SharedAPI } from './platform.js';

// Re-exported for existing importers: declared where platform.ts, which this file imports, can
// import them without importing this file back.
export { channelKindOf } from './veneer.js';
export type { SharedAPI } from './platform.js';

export type Severity = 'error' | 'warning';

export interface Finding {
  readonly severity: Severity;
  readonly message: string;
}

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** The kind of channel a bundle is judged in; "other" for channels of no known kind. */
type Kind = ChannelKind | 'other';

export interface BundleInfo {
  readonly bundle: Bundle;
  readonly version?: Version;
  readonly channels: Channel[];
  readonly kinds: Set<Kind>;
  readonly provides: GVK[];
  readonly requiresPackages: { packageName: string; versionRange: string }[];
  readonly requiresGVKs: GVK[];
}

function record(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function gvkOf(v: unknown): GVK {
  const o = record(v);
  return { group: String(o.group ?? ''), version: String(o.version ?? ''), kind: String(o.kind ?? '') };
}

export function indexBundles(cfg: DeclarativeConfig): BundleInfo[] {
  const channelsOf = new Map<string, Channel[]>();
  for (const ch of cfg.channels) {
    for (const e of ch.entries) {
      const key = `${ch.package}\u0000${e.name}`;
      const list = channelsOf.get(key);
      if (list) list.push(ch);
      else channelsOf.set(key, [ch]);
    }
  }
  return cfg.bundles.map((b) => {
    const channels = channelsOf.get(`${b.package}\u0000${b.name}`) ?? [];
    const kinds = new Set<Kind>(channels.map((c) => channelKindOf(c.name) ?? 'other'));
    const info: BundleInfo & { version?: Version } = { bundle: b, channels, kinds, provides: [], requiresPackages: [], requiresGVKs: [] };
    for (const p of b.properties ?? []) {
      const v = record(p.value);
      if (p.type === 'olm.package') {
        try {
          info.version = parseVersion(String(v.version ?? ''));
        } catch {
          // validate reports a bad version; here the bundle just satisfies no range
        }
      } else if (p.type === 'olm.gvk') info.provides.push(gvkOf(v));
      else if (p.type === 'olm.gvk.required') info.requiresGVKs.push(gvkOf(v));
      else if (p.type === 'olm.package.required')
        info.requiresPackages.push({ packageName: String(v.packageName ?? ''), versionRange: String(v.versionRange ?? '') });
    }
    return info;
  });
}

const gk = (g: { group: string; kind: string }): string => `${g.group}/${g.kind}`;
const gvkText = (g: GVK): string => `${g.group}/${g.version}/${g.kind}`;

function isDeclared(declared: SharedAPI[], group: string, kind: string, packages: string[]): boolean {
  return declared.some((d) => d.group === group && d.kind === kind && packages.every((p) => d.packages.includes(p)));
}

export interface SharedAPIResult {
  /** group/kind → packages providing it, for every group/kind more than one package provides */
  shared: Map<string, string[]>;
  findings: Map<string, Finding[]>;
}

/** Group/kinds provided by more than one package; undeclared ones are findings. */
export function checkSharedAPIs(bundles: BundleInfo[], declared: SharedAPI[]): SharedAPIResult {
  const providers = new Map<string, { group: string; kind: string; all: Set<string>; stable: Set<string> }>();
  for (const b of bundles) {
    for (const g of b.provides) {
      const key = gk(g);
      let p = providers.get(key);
      if (!p) providers.set(key, (p = { group: g.group, kind: g.kind, all: new Set(), stable: new Set() }));
      p.all.add(b.bundle.package);
      // provided outside candidate channels (or by a bundle in no channel, which validate reports)
      if ([...b.kinds].some((k) => k !== 'candidate') || b.kinds.size === 0) p.stable.add(b.bundle.package);
    }
  }
  const result: SharedAPIResult = { shared: new Map(), findings: new Map() };
  for (const [key, p] of [...providers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (p.all.size < 2) continue;
    const pkgs = [...p.all].sort();
    result.shared.set(key, pkgs);
    if (isDeclared(declared, p.group, p.kind, pkgs)) {
      result.findings.set(key, []);
      continue;
    }
    const severity: Severity = p.stable.size >= 2 ? 'error' : 'warning';
    const why = severity === 'warning' ? ' (only in candidate channels for all but one of them)' : '';
    result.findings.set(key, [
      { severity, message: `${key} is provided by packages ${pkgs.join(', ')}${why}; declare it in interop.yaml (sharedAPIs) if they may share it` },
    ]);
  }
  return result;
}

/**
 * For each bundle and each kind of channel it is in, whether its requirements are met by bundles
 * in channels of the same kind. Channels of no known kind are met by any channel. Findings by package.
 */
export function checkRequirements(bundles: BundleInfo[]): Map<string, Finding[]> {
  const byPackage = new Map<string, BundleInfo[]>();
  for (const b of bundles) {
    const l = byPackage.get(b.bundle.package);
    if (l) l.push(b);
    else byPackage.set(b.bundle.package, [b]);
  }
  const inKind = (c: BundleInfo, k: Kind): boolean => k === 'other' || c.kinds.has(k) || c.kinds.has('other');
  // providers by group/version/kind, so a catalog of many bundles is not scanned per requirement
  const providers = new Map<string, BundleInfo[]>();
  for (const b of bundles) {
    for (const g of new Set(b.provides.map(gvkText))) {
      const l = providers.get(g);
      if (l) l.push(b);
      else providers.set(g, [b]);
    }
  }
  const out = new Map<string, Finding[]>();
  for (const pkg of [...byPackage.keys()].sort()) out.set(pkg, []);
  for (const b of bundles) {
    const findings = out.get(b.bundle.package)!;
    for (const k of b.kinds) {
      const where = `bundle ${b.bundle.name} (${b.channels
        .filter((c) => (channelKindOf(c.name) ?? 'other') === k)
        .map((c) => c.name)
        .join(', ')})`;
      const severity: Severity = k === 'candidate' ? 'warning' : 'error';
      const kindText = k === 'other' ? 'any' : k;
      for (const r of b.requiresPackages) {
        let range;
        try {
          range = parseRange(r.versionRange);
        } catch (err) {
          findings.push({
            severity: 'error',
            message: `${where} requires package ${r.packageName} ${r.versionRange}: invalid range: ${(err as Error).message}`,
          });
          continue;
        }
        const candidates = byPackage.get(r.packageName) ?? [];
        if (candidates.length === 0) {
          findings.push({ severity, message: `${where} requires package ${r.packageName} ${r.versionRange}, which is not in the catalog` });
          continue;
        }
        if (!candidates.some((c) => inKind(c, k) && c.version !== undefined && range(c.version))) {
          findings.push({
            severity,
            message: `${where} requires package ${r.packageName} ${r.versionRange}: no bundle of it in a ${kindText} channel is in that range`,
          });
        }
      }
      for (const g of b.requiresGVKs) {
        const ok = (providers.get(gvkText(g)) ?? []).some((c) => inKind(c, k));
        if (!ok) findings.push({ severity, message: `${where} requires API ${gvkText(g)}: no bundle in a ${kindText} channel provides it` });
      }
    }
  }
  return out;
}

/** A channel's head as opm defines it: the one entry no other entry replaces or skips. */
export function channelHeadName(ch: Channel): string {
  const replaced = new Set<string>();
  for (const e of ch.entries) {
    if (e.replaces) replaced.add(e.replaces);
    for (const s of e.skips ?? []) replaced.add(s);
  }
  const heads = ch.entries.filter((e) => !replaced.has(e.name)).map((e) => e.name);
  if (heads.length === 0) throw new Error(`channel ${ch.package}/${ch.name}: no channel head found in graph`);
  if (heads.length > 1) throw new Error(`channel ${ch.package}/${ch.name}: multiple channel heads found in graph: ${heads.sort().join(', ')}`);
  return heads[0]!;
}

export interface PlatformHead {
  package: string;
  channel: string;
  bundle: BundleInfo;
}

/**
 * Whether the heads of the platform's channels install together: every requirement of a head is
 * met by another head of the set (a required package must be in the platform), and no two heads
 * provide the same group/kind unless declared. Findings about a candidate channel's head are warnings.
 */
export function checkPlatform(
  cfg: DeclarativeConfig,
  bundles: BundleInfo[],
  platform: Platform,
  declared: SharedAPI[],
): { heads: PlatformHead[]; findings: Finding[] } {
  const findings: Finding[] = [];
  let resolved: Map<string, Channel[]>;
  try {
    resolved = resolvePlatform(cfg, platform);
  } catch (err) {
    if (err instanceof PlatformError) return { heads: [], findings: [{ severity: 'error', message: err.message }] };
    throw err;
  }
  const byName = new Map(bundles.map((b) => [`${b.bundle.package}\u0000${b.bundle.name}`, b]));
  const heads: PlatformHead[] = [];
  for (const [pkg, chans] of resolved) {
    for (const ch of chans) {
      let head: string;
      try {
        head = channelHeadName(ch);
      } catch (err) {
        findings.push({ severity: 'error', message: (err as Error).message });
        continue;
      }
      const b = byName.get(`${pkg}\u0000${head}`);
      if (!b) findings.push({ severity: 'error', message: `channel ${pkg}/${ch.name}: head ${head} has no bundle` });
      else heads.push({ package: pkg, channel: ch.name, bundle: b });
    }
  }
  const allDeclared = [...declared, ...platform.sharedAPIs];
  const sev = (h: PlatformHead): Severity => (channelKindOf(h.channel) === 'candidate' ? 'warning' : 'error');
  for (const h of heads) {
    const who = `${h.package} head ${h.bundle.bundle.name} (${h.channel})`;
    for (const r of h.bundle.requiresPackages) {
      const others = heads.filter((o) => o.package === r.packageName);
      if (others.length === 0) {
        findings.push({
          severity: sev(h),
          message: `${who} requires package ${r.packageName} ${r.versionRange}, which is not part of platform ${platform.name}`,
        });
        continue;
      }
      let range;
      try {
        range = parseRange(r.versionRange);
      } catch (err) {
        findings.push({ severity: 'error', message: `${who} requires package ${r.packageName} ${r.versionRange}: invalid range: ${(err as Error).message}` });
        continue;
      }
      if (!others.some((o) => o.bundle.version !== undefined && range(o.bundle.version))) {
        const got = others.map((o) => `${o.bundle.bundle.name} (${o.channel})`).join(', ');
        findings.push({ severity: sev(h), message: `${who} requires package ${r.packageName} ${r.versionRange}, but the platform installs ${got}` });
      }
    }
    for (const g of h.bundle.requiresGVKs) {
      if (!heads.some((o) => o.bundle.provides.some((p) => p.group === g.group && p.version === g.version && p.kind === g.kind))) {
        findings.push({ severity: sev(h), message: `${who} requires API ${gvkText(g)}, which no operator of platform ${platform.name} provides` });
      }
    }
  }
  const providers = new Map<string, PlatformHead[]>();
  for (const h of heads) {
    for (const g of new Map(h.bundle.provides.map((p) => [gk(p), p])).values()) {
      const l = providers.get(gk(g));
      if (l) {
        if (!l.some((x) => x.package === h.package)) l.push(h);
      } else providers.set(gk(g), [h]);
    }
  }
  for (const [key, hs] of providers) {
    if (hs.length < 2) continue;
    const [group, kind] = [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)];
    const pkgs = hs.map((h) => h.package).sort();
    if (isDeclared(allDeclared, group, kind, pkgs)) continue;
    const severity: Severity = hs.filter((h) => sev(h) === 'error').length >= 2 ? 'error' : 'warning';
    findings.push({
      severity,
      message: `${key} is provided by ${hs.map((h) => `${h.package} (${h.channel})`).join(' and ')}; both cannot be installed in one cluster unless declared in sharedAPIs`,
    });
  }
  return { heads, findings };
}

/** The repository's declared shared APIs (interop.yaml at the repository root: `sharedAPIs: [...]`). */
export async function loadInteropFile(path: string): Promise<SharedAPI[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const doc = parseYAML(text) as unknown;
  if (doc === null || doc === undefined) return [];
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new PlatformError(`${path}: must be a mapping with sharedAPIs`);
  const o = doc as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'sharedAPIs') throw new PlatformError(`${path}: unknown field "${k}" (known: sharedAPIs)`);
  return parseSharedAPIs(o.sharedAPIs, `${path}: sharedAPIs`);
}
