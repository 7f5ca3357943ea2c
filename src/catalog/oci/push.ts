// pushImage: an image from an OCI layout (ours or skopeo's/umoci's) into a registry: blobs the
// registry lacks, then manifests children first, so every reference resolves when the top one lands.
import { registryClient } from './client.js';
import type { ClientOptions } from './client.js';
import { statSync } from 'node:fs';
import { OciError } from './errors.js';
import { OciLayout } from './layout.js';
import { parseManifest } from './manifest.js';
import type { Descriptor } from './manifest.js';
import { formatReference, parseReference, parseRegistryReference } from './reference.js';
import { localStoreDir } from './build.js';

export interface PushSource {
  readonly layoutDir: string;
  /** The image's name in the layout (default: the only image). */
  readonly tag?: string | undefined;
}

export interface PushOptions extends ClientOptions {
  readonly cacheDir?: string;
  /** Called once per blob: uploaded, or skipped because the registry has it. */
  readonly onBlob?: (e: { digest: string; size: number; uploaded: boolean }) => void;
}

export interface PushedImage {
  readonly ref: string;
  readonly digest: string;
}

/**
 * Pushes `source` to `dest` (HOST/REPO[:TAG]; a reference with only a digest pushes by digest).
 * `source` is `oci:DIR[:TAG]`, a PushSource, or a name in the local image store (what
 * `bundle build --tag NAME` wrote there).
 */
export async function pushImage(source: string | PushSource, dest: string, opts: PushOptions = {}): Promise<PushedImage> {
  const src = resolveSource(source, opts.cacheDir);
  const layout = OciLayout.open(src.layoutDir);
  const top = layout.resolve(src.tag);
  const ref = parseRegistryReference(dest);
  const client = registryClient(ref.host, opts);
  const what = `oci:${src.layoutDir}${src.tag ? `:${src.tag}` : ''}`;

  const pushManifestTree = async (d: Descriptor, reference: string): Promise<string> => {
    const body = layout.readBlob(d.digest, what);
    const parsed = parseManifest(body, d.mediaType, what);
    if (parsed.kind === 'index') {
      for (const child of parsed.index.manifests) await pushManifestTree(child, child.digest);
    } else {
      for (const blob of [parsed.manifest.config, ...parsed.manifest.layers]) {
        if (await client.hasBlob(ref.repository, blob.digest)) {
          opts.onBlob?.({ digest: blob.digest, size: blob.size, uploaded: false });
          continue;
        }
        if (!layout.has(blob.digest)) throw new OciError('NOT_FOUND', `${what}: blob ${blob.digest} is missing from the layout`);
        await client.putBlob(ref.repository, blob.digest, { path: layout.blobPath(blob.digest), size: statSync(layout.blobPath(blob.digest)).size });
        opts.onBlob?.({ digest: blob.digest, size: blob.size, uploaded: true });
      }
    }
    return client.putManifest(ref.repository, reference, body, parsed.mediaType);
  };

  const reference = ref.tag ?? ref.digest ?? 'latest';
  if (ref.digest && ref.digest !== top.digest) throw new OciError('DIGEST_MISMATCH', `cannot push ${what} as ${dest}: its digest is ${top.digest}`);
  const digest = await pushManifestTree(top, reference);
  return { ref: formatReference({ ...ref, tag: reference.includes(':') ? undefined : reference, digest: undefined }), digest };
}

function resolveSource(source: string | PushSource, cacheDir: string | undefined): PushSource {
  if (typeof source !== 'string') return source;
  if (source.startsWith('oci:')) {
    const r = parseReference(source);
    if (r.kind === 'layout') return { layoutDir: r.dir, tag: r.tag };
  }
  return { layoutDir: localStoreDir(cacheDir), tag: source };
}
