// The local content cache: blobs (manifests, configs, layers) stored by digest after their digest was
// checked, and unpacked image roots stored by manifest digest. Writes go to a temporary name and are
// renamed into place, so a reader never sees half a blob, and two pulls racing both succeed.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { OciError } from './errors.js';

/** $KPLANE_CACHE_DIR, else $XDG_CACHE_HOME/kplane, else ~/.cache/kplane. */
export function defaultCacheDir(): string {
  if (process.env.KPLANE_CACHE_DIR) return process.env.KPLANE_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kplane');
}

function hexOf(digest: string): { alg: string; hex: string } {
  const m = /^(sha256|sha512):([a-f0-9]+)$/.exec(digest);
  if (!m) throw new OciError('UNSUPPORTED', `unsupported digest "${digest}" (sha256 and sha512 are)`);
  return { alg: m[1]!, hex: m[2]! };
}

export class ContentCache {
  readonly dir: string;
  constructor(dir: string = defaultCacheDir()) {
    this.dir = resolve(dir);
  }

  blobPath(digest: string): string {
    const { alg, hex } = hexOf(digest);
    return join(this.dir, 'blobs', alg, hex);
  }

  has(digest: string): boolean {
    return existsSync(this.blobPath(digest));
  }

  read(digest: string): Buffer {
    return readFileSync(this.blobPath(digest));
  }

  /**
   * A small cached blob (manifest, config), checked again: a copy damaged on disk since it was cached
   * is dropped (undefined), so the caller downloads it afresh. Layers are checked as they unpack.
   */
  readChecked(digest: string): Buffer | undefined {
    let data: Buffer;
    try {
      data = this.read(digest);
    } catch {
      return undefined;
    }
    const { alg } = hexOf(digest);
    if (`${alg}:${createHash(alg).update(data).digest('hex')}` === digest) return data;
    rmSync(this.blobPath(digest), { force: true });
    return undefined;
  }

  /** Stores a buffer after checking it hashes to `digest`. */
  put(digest: string, data: Buffer, what: string): string {
    const { alg } = hexOf(digest);
    const got = `${alg}:${createHash(alg).update(data).digest('hex')}`;
    if (got !== digest) throw mismatch(what, digest, got);
    const dest = this.blobPath(digest);
    if (!existsSync(dest)) {
      mkdirSync(join(dest, '..'), { recursive: true });
      const tmp = `${dest}.tmp-${randomBytes(4).toString('hex')}`;
      writeFileSync(tmp, data, { flag: 'wx' });
      renameSync(tmp, dest);
    }
    return dest;
  }

  /** Streams a blob into the cache, hashing as it goes; nothing is kept if the digest or size is wrong. */
  async putStream(digest: string, body: AsyncIterable<Uint8Array>, o: { what: string; size?: number; onBytes?: (n: number) => void }): Promise<string> {
    const { alg } = hexOf(digest);
    const dest = this.blobPath(digest);
    mkdirSync(join(dest, '..'), { recursive: true });
    const tmp = `${dest}.tmp-${randomBytes(4).toString('hex')}`;
    const hash = createHash(alg);
    const out = createWriteStream(tmp);
    let total = 0;
    try {
      for await (const chunk of body) {
        hash.update(chunk);
        total += chunk.length;
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
        o.onBytes?.(total);
      }
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    } catch (e) {
      out.destroy();
      rmSync(tmp, { force: true });
      if (e instanceof OciError) throw e;
      throw new OciError('UNREACHABLE', `${o.what}: the download broke off after ${total} bytes (${(e as Error).message}); retry`, { cause: e });
    }
    const got = `${alg}:${hash.digest('hex')}`;
    if (got !== digest || (o.size !== undefined && total !== o.size)) {
      rmSync(tmp, { force: true });
      if (got === digest)
        throw new OciError('DIGEST_MISMATCH', `${o.what}: got ${total} bytes, the manifest says ${o.size}; the image is damaged: push it again`);
      throw mismatch(o.what, digest, got);
    }
    renameSync(tmp, dest);
    return dest;
  }

  /** Where the unpacked root of the image with this manifest digest lives. */
  rootPath(manifestDigest: string): string {
    const { alg, hex } = hexOf(manifestDigest);
    return join(this.dir, 'roots', `${alg}-${hex}`);
  }

  /** A fresh scratch directory beside the roots, to unpack into before renaming it into place. */
  scratch(): string {
    const p = join(this.dir, 'roots', `.tmp-${randomBytes(6).toString('hex')}`);
    mkdirSync(p, { recursive: true });
    return p;
  }
}

function mismatch(what: string, want: string, got: string): OciError {
  return new OciError(
    'DIGEST_MISMATCH',
    `${what}: digest mismatch: expected ${want}, got ${got}; the content was damaged in the registry or on the way: push the image again (nothing was cached)`,
  );
}
