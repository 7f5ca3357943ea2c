// Applies image layers to a directory as a container runtime would: entries in order, whiteouts
// (`.wh.NAME` deletes NAME from lower layers, `.wh..wh..opq` empties a directory of lower-layer
// content), hard and symbolic links, and no entry or link ever reaching outside the directory.
import { createHash } from 'node:crypto';
import {
  closeSync,
  readFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeSync,
  chmodSync,
} from 'node:fs';
import { createReadStream } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { createGunzip } from 'node:zlib';
import { OciError } from './errors.js';
import { TarReader } from './tar.js';
import type { TarHeader, TarSink } from './tar.js';

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

/**
 * Cleans an entry name into root-relative components; rejects names that climb out (`../x`,
 * `a/../../x`): a layer that tries is hostile or broken, and either way must not be unpacked.
 */
export function entryComponents(name: string): string[] {
  const parts: string[] = [];
  for (const c of name.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (parts.length === 0) throw new OciError('UNSAFE_PATH', `layer entry "${name}" points outside the image root`);
      parts.pop();
    } else parts.push(c);
  }
  return parts;
}

/**
 * Joins root-relative components onto `root`, resolving symbolic links met on the way as if `root`
 * were `/` (an absolute link target is taken from `root`, `..` stops at `root`), so a link planted by
 * one entry cannot send a later entry elsewhere on the host. The last component is resolved only
 * when asked (an entry replaces a link at its own path; it writes through links above it).
 */
export function secureJoin(root: string, parts: readonly string[], resolveLast = false): string {
  const resolved: string[] = [];
  const queue = [...parts];
  let links = 0;
  while (queue.length > 0) {
    const c = queue.shift()!;
    if (c === '' || c === '.') continue;
    if (c === '..') {
      resolved.pop();
      continue;
    }
    if (queue.length === 0 && !resolveLast) {
      resolved.push(c);
      break;
    }
    const here = join(root, ...resolved, c);
    let isLink = false;
    try {
      isLink = lstatSync(here).isSymbolicLink();
    } catch {
      // missing: created as a directory later
    }
    if (!isLink) {
      resolved.push(c);
      continue;
    }
    if (++links > 255) throw new OciError('UNSAFE_PATH', `too many levels of symbolic links under ${parts.join('/')}`);
    const target = readlinkSync(here);
    if (target.startsWith('/')) resolved.length = 0;
    queue.unshift(...target.split('/'));
  }
  return join(root, ...resolved);
}

export interface LayerSource {
  readonly path: string; // the blob file
  readonly digest: string;
  readonly mediaType: string;
}

/** Unpacks one layer blob (gzip or plain tar, told apart by content) onto `root`. */
/**
 * Unpacks one layer blob (gzip or plain tar, told apart by content) onto `root`, hashing the blob as
 * it is read: a blob that does not hash to its digest (a damaged cache entry or layout) is reported
 * as DIGEST_MISMATCH rather than as whatever the damage looks like to gunzip or tar.
 */
export async function applyLayer(root: string, layer: LayerSource): Promise<void> {
  if (/zstd/.test(layer.mediaType)) throw new OciError('UNSUPPORTED', `layer ${layer.digest} is zstd-compressed (${layer.mediaType}), which is not supported`);
  const createdHere = new Set<string>();
  const dirModes: [string, number][] = [];
  const reader = new TarReader((h) => applyEntry(root, h, createdHere, dirModes));
  const corrupt = (why: string, cause?: unknown): OciError =>
    new OciError('CORRUPT_LAYER', `layer ${layer.digest} is corrupt: ${why}; the image is damaged: push it again`, { cause });
  const alg = layer.digest.split(':')[0]!;
  const hash = createHash(alg);
  const head = await firstBytes(layer.path);
  const gz = head[0] === 0x1f && head[1] === 0x8b;
  // The hashing listener and the pipe are attached in one tick: a 'data' listener starts the flow.
  const raw = createReadStream(layer.path);
  raw.on('data', (c) => hash.update(c));
  const stream = gz ? raw.pipe(createGunzip()) : raw;
  if (gz) raw.on('error', (e) => stream.destroy(e));
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) reader.write(chunk);
    reader.end();
  } catch (e) {
    raw.destroy();
    checkDigest(layer, fileDigest(layer.path, alg));
    if (e instanceof OciError) throw e.code === 'CORRUPT_LAYER' ? corrupt(e.message, e) : e;
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('Z_')) throw corrupt(`not a valid gzip stream (${(e as Error).message})`, e);
    throw e;
  }
  // gunzip may stop before the end of the file (data after the gzip member): then hash the file again.
  checkDigest(layer, raw.readableEnded ? `${alg}:${hash.digest('hex')}` : fileDigest(layer.path, alg));
  raw.destroy();
  if (reader.entries === 0 && !gz && head.length > 0) throw corrupt('not a tar archive');
  // Directory modes last, so a read-only directory did not stop its own content from being written.
  for (const [p, mode] of dirModes.reverse()) chmodSync(p, (mode & 0o777) | 0o700);
}

function fileDigest(path: string, alg: string): string {
  return `${alg}:${createHash(alg).update(readFileSync(path)).digest('hex')}`;
}

function checkDigest(layer: LayerSource, got: string): void {
  if (got !== layer.digest) throw new OciError('DIGEST_MISMATCH', `layer ${layer.digest} read from ${layer.path} hashes to ${got}: the stored copy is damaged`);
}

async function firstBytes(path: string): Promise<Buffer> {
  for await (const chunk of createReadStream(path, { start: 0, end: 1 }) as AsyncIterable<Buffer>) return chunk;
  return Buffer.alloc(0);
}

function applyEntry(root: string, h: TarHeader, createdHere: Set<string>, dirModes: [string, number][]): TarSink | undefined {
  const parts = entryComponents(h.path);
  if (parts.length === 0) return undefined; // the root itself
  const base = parts[parts.length - 1]!;
  const parentParts = parts.slice(0, -1);
  if (base === OPAQUE) {
    const dir = secureJoin(root, parentParts, true);
    const rel = parentParts.join('/');
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return undefined;
    }
    for (const n of names) if (!createdHere.has(posix.join(rel, n))) rmSync(join(dir, n), { recursive: true, force: true });
    return undefined;
  }
  if (base.startsWith(WHITEOUT)) {
    const target = secureJoin(root, [...parentParts, base.slice(WHITEOUT.length)]);
    rmSync(target, { recursive: true, force: true });
    return undefined;
  }
  const rel = parts.join('/');
  createdHere.add(rel);
  const dest = secureJoin(root, parts);
  mkdirSync(dirname(dest), { recursive: true });
  const existing = lstatOrUndefined(dest);
  if (h.type === 'dir') {
    if (existing && !existing.isDirectory()) rmSync(dest, { force: true });
    mkdirSync(dest, { recursive: true });
    dirModes.push([dest, h.mode]);
    return undefined;
  }
  if (existing) rmSync(dest, { recursive: true, force: true });
  if (h.type === 'symlink') {
    symlinkSync(h.linkpath, dest);
    return undefined;
  }
  if (h.type === 'hardlink') {
    const source = secureJoin(root, entryComponents(h.linkpath));
    try {
      linkSync(source, dest);
    } catch (e) {
      throw new OciError('CORRUPT_LAYER', `hard link "${h.path}" → "${h.linkpath}": ${(e as Error).message}`);
    }
    return undefined;
  }
  if (h.type !== 'file') return undefined; // devices and fifos have no place in a bundle
  const fd = openSync(dest, 'w', (h.mode & 0o777) | 0o600);
  return {
    data: (chunk) => {
      writeSync(fd, chunk);
    },
    end: () => {
      closeSync(fd);
      chmodSync(dest, (h.mode & 0o777) | 0o600);
    },
  };
}

function lstatOrUndefined(p: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}
