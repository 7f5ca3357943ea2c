// Platform definitions: which operators a platform ships and from which channels, e.g.
//
//   schema: kplane.platform
//   name: platformx
//   description: PlatformX, the MySQL and MongoDB offering
//   operators:
//   - package: pxc-operator
//     channel: stable-v1
//   - package: psmdb-operator
//     channel: stable-v1
//   - package: monitoring-operator
//     channel: fast          # a channel kind alone: the package's newest fast-* channel
//   sharedAPIs:              # optional: group/kinds these packages may both provide
//   - group: monitoring.example.com
//     kind: ServiceMonitor
//     packages: [monitoring-operator, pxc-operator]
//
// `kplane catalog test --platform FILE` checks that the channel heads install together;
// filterCatalogForPlatform makes the smaller catalog of a platform branch
// (`kplane catalog render --platform FILE`).
import { readFile } from 'node:fs/promises';
import { parse as parseYAML } from 'yaml';
import type { Channel, DeclarativeConfig, Deprecation } from '../declcfg/types.js';
import { channelKindOf, isChannelKind } from './veneer.js';

export interface SharedAPI {
  group: string;
  kind: string;
  /** packages that may each provide group/kind */
  packages: string[];
}

export const PlatformSchema = 'kplane.platform';

export interface PlatformOperator {
  package: string;
  /** channel names or kinds (candidate, fast, stable); the first is the branch's default channel */
  channels: string[];
}

export interface Platform {
  name: string;
  description?: string;
  operators: PlatformOperator[];
  sharedAPIs: SharedAPI[];
  /** the file it came from, for messages */
  path: string;
}

export class PlatformError extends Error {
  override readonly name = 'PlatformError';
}

const TOP_KEYS = ['schema', 'name', 'description', 'operators', 'sharedAPIs'];
const OP_KEYS = ['package', 'channel', 'channels'];
const SHARED_KEYS = ['group', 'kind', 'packages'];

function str(v: unknown, where: string): string {
  if (typeof v !== 'string' || v === '') throw new PlatformError(`${where}: must be a non-empty string`);
  return v;
}

function object(v: unknown, where: string, keys: string[]): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new PlatformError(`${where}: must be a mapping`);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw new PlatformError(`${where}: unknown field "${k}" (known: ${keys.join(', ')})`);
  }
  return o;
}

function list(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw new PlatformError(`${where}: must be a list`);
  return v;
}

export function parseSharedAPIs(v: unknown, where: string): SharedAPI[] {
  if (v === undefined || v === null) return [];
  return list(v, where).map((item, i) => {
    const w = `${where}[${i}]`;
    const o = object(item, w, SHARED_KEYS);
    const packages = list(o.packages, `${w}.packages`).map((p, j) => str(p, `${w}.packages[${j}]`));
    if (packages.length < 2) throw new PlatformError(`${w}.packages: name at least two packages that share ${String(o.group)}/${String(o.kind)}`);
    return { group: str(o.group, `${w}.group`), kind: str(o.kind, `${w}.kind`), packages };
  });
}

/** Parses a platform definition strictly: unknown fields and a wrong schema are errors. */
export function parsePlatform(text: string, path: string): Platform {
  let doc: unknown;
  try {
    doc = parseYAML(text);
  } catch (err) {
    throw new PlatformError(`${path}: ${(err as Error).message}`);
  }
  const o = object(doc, path, TOP_KEYS);
  if (o.schema !== PlatformSchema) throw new PlatformError(`${path}: schema must be "${PlatformSchema}", got ${JSON.stringify(o.schema ?? null)}`);
  const name = str(o.name, `${path}: name`);
  const seen = new Set<string>();
  const operators = list(o.operators, `${path}: operators`).map((item, i) => {
    const w = `${path}: operators[${i}]`;
    const op = object(item, w, OP_KEYS);
    const pkg = str(op.package, `${w}.package`);
    if (seen.has(pkg)) throw new PlatformError(`${w}: package "${pkg}" is listed twice`);
    seen.add(pkg);
    if ((op.channel === undefined) === (op.channels === undefined)) throw new PlatformError(`${w}: set exactly one of channel and channels`);
    const channels =
      op.channel !== undefined ? [str(op.channel, `${w}.channel`)] : list(op.channels, `${w}.channels`).map((c, j) => str(c, `${w}.channels[${j}]`));
    if (channels.length === 0) throw new PlatformError(`${w}.channels: must not be empty`);
    return { package: pkg, channels };
  });
  if (operators.length === 0) throw new PlatformError(`${path}: operators: must not be empty`);
  const p: Platform = { name, operators, sharedAPIs: parseSharedAPIs(o.sharedAPIs, `${path}: sharedAPIs`), path };
  if (typeof o.description === 'string') p.description = o.description;
  return p;
}

export async function loadPlatform(path: string): Promise<Platform> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PlatformError(`${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return parsePlatform(text, path);
}

/** "stable-v1.2" → [1, 2]; a channel without a -vX[.Y] suffix has no version. */
function channelVersion(name: string): number[] | undefined {
  const m = /-v(\d+)(?:\.(\d+))?$/.exec(name);
  if (!m) return undefined;
  return m[2] === undefined ? [Number(m[1]), -1] : [Number(m[1]), Number(m[2])];
}

/**
 * The channel a platform entry names: the channel of that name, or for a bare kind (candidate,
 * fast, stable) with no channel of that name, the package's channel of that kind with the highest
 * version: the newest major's major channel (stable-v2), else its newest minor channel (stable-v2.3).
 */
export function resolveChannel(cfg: DeclarativeConfig, pkg: string, spec: string): Channel {
  const channels = cfg.channels.filter((c) => c.package === pkg);
  const exact = channels.find((c) => c.name === spec);
  if (exact) return exact;
  if (isChannelKind(spec)) {
    const ofKind = channels.filter((c) => channelKindOf(c.name) === spec && channelVersion(c.name) !== undefined);
    ofKind.sort((a, b) => {
      const va = channelVersion(a.name)!;
      const vb = channelVersion(b.name)!;
      if (va[0] !== vb[0]) return vb[0]! - va[0]!; // the newest major
      if (va[1] === -1 || vb[1] === -1) return va[1]! - vb[1]!; // its major channel before its minors
      return vb[1]! - va[1]!; // else its newest minor
    });
    if (ofKind[0]) return ofKind[0];
  }
  if (!cfg.packages.some((p) => p.name === pkg)) throw new PlatformError(`package "${pkg}" is not in the catalog`);
  const names = channels.map((c) => c.name).sort();
  throw new PlatformError(`package "${pkg}" has no channel "${spec}" (channels: ${names.join(', ') || 'none'})`);
}

/** Each platform operator's resolved channels, in the order the platform lists them. */
export function resolvePlatform(cfg: DeclarativeConfig, platform: Platform): Map<string, Channel[]> {
  const out = new Map<string, Channel[]>();
  for (const op of platform.operators)
    out.set(
      op.package,
      op.channels.map((c) => resolveChannel(cfg, op.package, c)),
    );
  return out;
}

/**
 * The smaller catalog of a platform branch: the platform's packages, only their platform
 * channels, the bundles of those channels, and the deprecations and other blobs that still refer
 * to something kept. A package whose default channel is dropped defaults to the platform's first
 * channel for it. Blob order is kept.
 */
export function filterCatalogForPlatform(cfg: DeclarativeConfig, platform: Platform): DeclarativeConfig {
  const resolved = resolvePlatform(cfg, platform);
  const keptChannels = new Set<Channel>([...resolved.values()].flat());
  const keptBundles = new Map<string, Set<string>>();
  for (const ch of keptChannels) {
    let s = keptBundles.get(ch.package);
    if (!s) keptBundles.set(ch.package, (s = new Set()));
    for (const e of ch.entries) s.add(e.name);
  }
  const packages = cfg.packages
    .filter((p) => resolved.has(p.name))
    .map((p) => {
      const chans = resolved.get(p.name)!;
      return chans.some((c) => c.name === p.defaultChannel) ? p : { ...p, defaultChannel: chans[0]!.name };
    });
  const channels = cfg.channels.filter((c) => keptChannels.has(c));
  const bundles = cfg.bundles.filter((b) => keptBundles.get(b.package)?.has(b.name) ?? false);
  const channelNames = (pkg: string): Set<string> => new Set(resolved.get(pkg)!.map((c) => c.name));
  const deprecations: Deprecation[] = [];
  for (const d of cfg.deprecations) {
    if (!resolved.has(d.package)) continue;
    const entries = d.entries.filter((e) => {
      if (e.reference.schema === 'olm.package') return true;
      if (e.reference.schema === 'olm.channel') return channelNames(d.package).has(e.reference.name ?? '');
      if (e.reference.schema === 'olm.bundle') return keptBundles.get(d.package)?.has(e.reference.name ?? '') ?? false;
      return true;
    });
    if (entries.length > 0) deprecations.push({ ...d, entries });
  }
  const others = cfg.others.filter((m) => m.package === '' || resolved.has(m.package));
  return { packages, channels, bundles, deprecations, others };
}
