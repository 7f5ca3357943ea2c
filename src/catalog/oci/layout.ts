// OCI image layouts (https://github.com/opencontainers/image-spec/blob/main/image-layout.md):
// `oci-layout`, `index.json` naming images by the org.opencontainers.image.ref.name annotation, and
// blobs/<alg>/<hex>. What skopeo copy oci:DIR:TAG, umoci and `kplane catalog bundle build` write.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OciError } from './errors.js';
import { MediaType } from './manifest.js';
import type { Descriptor, ImageIndex } from './manifest.js';

export const REF_NAME = 'org.opencontainers.image.ref.name';

export class OciLayout {
  private constructor(
    readonly dir: string,
    private idx: ImageIndex,
  ) {}

  /** Opens an existing layout; LAYOUT errors say what is missing. */
  static open(dir: string): OciLayout {
    if (!existsSync(dir)) throw new OciError('LAYOUT', `OCI layout ${dir} does not exist`);
    if (!existsSync(join(dir, 'oci-layout'))) throw new OciError('LAYOUT', `${dir} is not an OCI image layout (no oci-layout file)`);
    let idx: ImageIndex;
    try {
      idx = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as ImageIndex;
    } catch (e) {
      throw new OciError('LAYOUT', `OCI layout ${dir}: cannot read index.json (${(e as Error).message})`);
    }
    if (!Array.isArray(idx.manifests)) throw new OciError('LAYOUT', `OCI layout ${dir}: index.json has no manifests list`);
    return new OciLayout(dir, idx);
  }

  /** Opens the layout, creating an empty one first if the directory holds none. */
  static openOrInit(dir: string): OciLayout {
    if (!existsSync(join(dir, 'oci-layout'))) {
      mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
      writeFileSync(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
      writeFileSync(join(dir, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: [] }));
    }
    return OciLayout.open(dir);
  }

  get index(): ImageIndex {
    return this.idx;
  }

  /** The image named `tag`, or the only image when no tag is given. */
  resolve(tag?: string): Descriptor {
    const entries = this.idx.manifests;
    if (tag !== undefined) {
      const d = entries.find((m) => m.annotations?.[REF_NAME] === tag);
      if (!d) {
        const names = entries.map((m) => m.annotations?.[REF_NAME]).filter(Boolean);
        throw new OciError('NOT_FOUND', `OCI layout ${this.dir} has no image named "${tag}" (it has: ${names.join(', ') || 'no named images'})`);
      }
      return d;
    }
    if (entries.length === 1) return entries[0]!;
    if (entries.length === 0) throw new OciError('NOT_FOUND', `OCI layout ${this.dir} holds no images`);
    const names = entries.map((m) => m.annotations?.[REF_NAME] ?? m.digest);
    throw new OciError('NOT_FOUND', `OCI layout ${this.dir} holds ${entries.length} images; name one as oci:${this.dir}:TAG (${names.join(', ')})`);
  }

  blobPath(digest: string): string {
    const [alg, hex] = digest.split(':');
    if (!alg || !hex || !/^[a-f0-9]+$/.test(hex)) throw new OciError('LAYOUT', `OCI layout ${this.dir}: bad digest "${digest}"`);
    return join(this.dir, 'blobs', alg, hex);
  }

  has(digest: string): boolean {
    return existsSync(this.blobPath(digest));
  }

  /** A blob's bytes, checked against its digest. */
  readBlob(digest: string, what: string): Buffer {
    let data: Buffer;
    try {
      data = readFileSync(this.blobPath(digest));
    } catch {
      throw new OciError('NOT_FOUND', `${what}: blob ${digest} is missing from OCI layout ${this.dir}`);
    }
    const [alg] = digest.split(':');
    const got = `${alg}:${createHash(alg!).update(data).digest('hex')}`;
    if (got !== digest)
      throw new OciError('DIGEST_MISMATCH', `${what}: blob ${digest} in OCI layout ${this.dir} hashes to ${got}: the layout is damaged; build it again`);
    return data;
  }

  writeBlob(data: Buffer): string {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const dest = this.blobPath(digest);
    if (!existsSync(dest)) {
      mkdirSync(join(dest, '..'), { recursive: true });
      const tmp = `${dest}.tmp-${randomBytes(4).toString('hex')}`;
      writeFileSync(tmp, data);
      renameSync(tmp, dest);
    }
    return digest;
  }

  /** Names `desc` as `name` in index.json (replacing an image of the same name). */
  tag(desc: Descriptor, name: string): void {
    const entry: Descriptor = { mediaType: desc.mediaType, digest: desc.digest, size: desc.size, annotations: { ...desc.annotations, [REF_NAME]: name } };
    const manifests = [...this.idx.manifests.filter((m) => m.annotations?.[REF_NAME] !== name), entry];
    this.idx = { ...this.idx, schemaVersion: 2, mediaType: MediaType.ociIndex, manifests };
    const tmp = join(this.dir, `index.json.tmp-${randomBytes(4).toString('hex')}`);
    writeFileSync(tmp, JSON.stringify(this.idx));
    renameSync(tmp, join(this.dir, 'index.json'));
  }
}
