// The model's validation, as operator-registry's Model.Validate (alpha/model/model.go): every
// package, channel and bundle is checked and problems are collected into one ValidationError tree
// ("invalid index" → "invalid package" → "invalid channel" → "invalid bundle"). Children are visited
// in insertion order (opm walks Go maps, whose order is random), so output is stable run to run.
import { PropertyPackage } from '../declcfg/types.js';
import { goQuote } from '../../golang/strconv.js';
import { ValidationError } from './errors.js';
import { channelHead } from './graph.js';
import { parseProperties } from './properties.js';
import type { Bundle, Channel, Deprecation, Icon, Model, Package } from './types.js';
import { parseRange, versionHasBuild } from './version.js';
import { compareGoStrings } from '../../golang/json.js';

/**
 * A tree node for the problems found, or undefined when there are none. The summary is built only
 * then: a valid catalog of 30,000 bundles creates no error objects at all.
 */
function tree(summary: () => string, subs: Error[]): ValidationError | undefined {
  return subs.length === 0 ? undefined : new ValidationError(summary(), subs).orUndefined();
}

/** The model's problems as opm's tree, or undefined when it is valid. */
export function validateModel(m: Model): ValidationError | undefined {
  const subs: Error[] = [];
  for (const [name, pkg] of m) {
    if (name !== pkg.name) subs.push(new Error(`package key ${goQuote(name)} does not match package name ${goQuote(pkg.name)}`));
    const err = validatePackage(pkg);
    if (err) subs.push(err);
  }
  return tree(() => 'invalid index', subs);
}

function validateDeprecation(d: Deprecation | undefined): Error | undefined {
  if (d === undefined) return undefined;
  if (d.message === '') return new Error('invalid deprecation: message must be set');
  return undefined;
}

export function validatePackage(p: Package): ValidationError | undefined {
  const subs: Error[] = [];
  const add = (e: Error | undefined): void => {
    if (e) subs.push(e);
  };
  if (p.name === '') add(new Error('package name must not be empty'));
  add(validateIcon(p.icon));
  if (p.defaultChannel === undefined) add(new Error('default channel must be set'));
  if (p.channels.size === 0) add(new Error('package must contain at least one channel'));
  let foundDefault = false;
  for (const [name, ch] of p.channels) {
    if (name !== ch.name) add(new Error(`channel key ${goQuote(name)} does not match channel name ${goQuote(ch.name)}`));
    add(validateChannel(ch));
    if (ch === p.defaultChannel) foundDefault = true;
    if (ch.package !== p) add(new Error(`channel ${goQuote(ch.name)} not correctly linked to parent package`));
  }
  add(validateUniqueBundleVersions(p));
  if (p.defaultChannel !== undefined && !foundDefault) {
    add(new Error(`default channel ${goQuote(p.defaultChannel.name)} not found in channels list`));
  }
  add(validateDeprecation(p.deprecation));
  return tree(() => `invalid package ${goQuote(p.name)}`, subs);
}

/** opm's Bundle.VersionString: the version, then "-" and the release when there is one. */
export function bundleVersionString(b: Bundle): string {
  return b.release ? `${b.version}-${b.release}` : b.version;
}

function validateUniqueBundleVersions(p: Package): Error | undefined {
  const byVersion = new Map<string, Set<string>>();
  for (const ch of p.channels.values()) {
    for (const b of ch.bundles.values()) {
      const v = bundleVersionString(b);
      let names = byVersion.get(v);
      if (!names) byVersion.set(v, (names = new Set()));
      names.add(b.name);
    }
  }
  const dups: string[] = [];
  for (const v of [...byVersion.keys()].sort(compareGoStrings)) {
    const names = [...byVersion.get(v)!].sort(compareGoStrings);
    if (names.length > 1) dups.push(`{${v}: [${names.join(', ')}]}`);
  }
  if (dups.length === 0) return undefined;
  return new Error(`duplicate versions found in bundles: [${dups.join(' ')}]`);
}

/**
 * opm checks nothing about an icon (its checks are commented out: production catalogs fail them), so
 * neither do we; detectIconMediaType is there for callers that want the stricter check.
 */
export function validateIcon(_icon: Icon | undefined): ValidationError | undefined {
  return undefined;
}

/** The media type the icon's bytes look like (h2non/filetype's image matchers plus SVG), or undefined. */
export function detectIconMediaType(data: Uint8Array): string | undefined {
  const starts = (...bytes: number[]): boolean => bytes.every((b, i) => data[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && data[8] === 0x57 && data[9] === 0x45 && data[10] === 0x42 && data[11] === 0x50) return 'image/webp';
  if (starts(0x42, 0x4d)) return 'image/bmp';
  if (starts(0x00, 0x00, 0x01, 0x00)) return 'image/vnd.microsoft.icon';
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return 'image/tiff';
  const text = Buffer.from(data.subarray(0, 4096)).toString('utf8');
  if (/^\s*(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE svg[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(text)) return 'image/svg+xml';
  return undefined;
}

/** The stricter icon check opm keeps but does not run: data set, an image, of the declared type. */
export function validateIconData(icon: Icon): Error | undefined {
  const detected = detectIconMediaType(icon.data);
  if (detected === undefined) return new Error('icon data is not an image');
  if (detected !== icon.mediatype) {
    return new Error(`icon media type ${goQuote(icon.mediatype)} does not match detected media type ${goQuote(detected)}`);
  }
  return undefined;
}

/**
 * opm's replaces-chain rules: exactly one head; from the head, following replaces (and stopping at an
 * edge to a skipped bundle) reaches every bundle that nothing skips; no cycles; the tail may replace
 * a bundle that is not in the channel.
 */
export function validateReplacesChain(c: Pick<Channel, 'bundles'>): Error | undefined {
  let head: Bundle;
  try {
    head = channelHead(c);
  } catch (err) {
    return err as Error;
  }
  const skipped = new Set<string>();
  for (const b of c.bundles.values()) for (const s of b.skips) skipped.add(s);

  // The chain walked so far, in order, and each name's position in it: a replaces edge back into
  // the chain is a cycle, printed from the bundle it returns to (opm's chainFrom, kept linear).
  const chain: string[] = [head.name];
  const position = new Map<string, number>([[head.name, 0]]);
  let cur: Bundle | undefined = head;
  while (cur !== undefined) {
    if (skipped.has(cur.replaces)) break;
    const at = position.get(cur.replaces);
    if (at !== undefined) {
      return new Error(`detected cycle in replaces chain of upgrade graph: ${[...chain.slice(at), cur.replaces].join(' -> ')}`);
    }
    position.set(cur.replaces, chain.length);
    chain.push(cur.replaces);
    cur = c.bundles.get(cur.replaces);
  }
  const stranded = [...c.bundles.keys()].filter((n) => !position.has(n) && !skipped.has(n)).sort(compareGoStrings);
  if (stranded.length > 0) return new Error(`channel contains one or more stranded bundles: ${stranded.join(', ')}`);
  return undefined;
}

export function validateChannel(c: Channel): ValidationError | undefined {
  const subs: Error[] = [];
  const add = (e: Error | undefined): void => {
    if (e) subs.push(e);
  };
  if (c.name === '') add(new Error('channel name must not be empty'));
  if (c.package === undefined) add(new Error('package must be set'));
  if (c.bundles.size === 0) add(new Error('channel must contain at least one bundle'));
  if (c.bundles.size > 0) add(validateReplacesChain(c));
  for (const [name, b] of c.bundles) {
    if (name !== b.name) add(new Error(`bundle key ${goQuote(name)} does not match bundle name ${goQuote(b.name)}`));
    add(validateBundle(b));
    if (b.channel !== c) add(new Error(`bundle ${goQuote(b.name)} not correctly linked to parent channel`));
  }
  add(validateDeprecation(c.deprecation));
  return tree(() => `invalid channel ${goQuote(c.name)}`, subs);
}

/** opm's normalizeName: a bundle with a release must be named <package>-v<version>-<release>. */
function normalizedBundleName(b: Bundle): string {
  if (b.release) return `${b.package?.name ?? ''}-v${bundleVersionString(b)}`;
  return b.name;
}

export function validateBundle(b: Bundle): ValidationError | undefined {
  const subs: Error[] = [];
  const add = (e: Error | undefined): void => {
    if (e) subs.push(e);
  };
  if (b.name === '') add(new Error('name must be set'));
  const normalized = normalizedBundleName(b);
  if (b.name !== normalized) add(new Error(`name ${goQuote(b.name)} does not match normalized name ${goQuote(normalized)}`));
  if (b.channel === undefined) add(new Error('channel must be set'));
  if (b.package === undefined) add(new Error('package must be set'));
  if (b.channel !== undefined && b.package !== undefined && b.package !== b.channel.package) {
    add(new Error("package does not match channel's package"));
  }
  let packages: number | undefined;
  try {
    // convertToModel already parsed them; a model built by hand may not have
    packages = (b.propertiesP ?? parseProperties(b.properties)).packages.length;
  } catch (err) {
    add(err as Error);
  }
  b.skips.forEach((s, i) => {
    if (s === '') add(new Error(`skip[${i}] is empty`));
  });
  if (b.skipRange !== '') {
    try {
      parseRange(b.skipRange);
    } catch (err) {
      add(new Error(`invalid skipRange ${goQuote(b.skipRange)}: ${(err as Error).message}`));
    }
  }
  if (packages !== undefined && packages !== 1) add(new Error(`must be exactly one property with type "${PropertyPackage}"`));
  if (b.image === '' && b.objects.length === 0) add(new Error('bundle image must be set'));
  add(validateDeprecation(b.deprecation));
  if (b.release && b.version !== '' && versionHasBuild(b.version)) {
    add(new Error('cannot use build metadata in version with a release version'));
  }
  return tree(() => `invalid bundle ${goQuote(b.name)}`, subs);
}

/** opm's RelatedImage.Validate (which opm does not call from Bundle.Validate). */
export function validateRelatedImage(r: { name: string; image: string }): ValidationError | undefined {
  const subs: Error[] = [];
  if (r.image === '') subs.push(new Error('image must be set'));
  return tree(() => 'invalid related image', subs);
}
