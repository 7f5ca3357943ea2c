// OCI and Docker schema 2 manifests, indexes and manifest lists: the media types, the shapes we read
// and write, and the choice of one platform's manifest from an index.
import { OciError } from './errors.js';

export const MediaType = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  dockerSchema1Signed: 'application/vnd.docker.distribution.manifest.v1+prettyjws',
  dockerSchema1: 'application/vnd.docker.distribution.manifest.v1+json',
} as const;

/** What a manifest GET accepts, most wanted first. */
export const MANIFEST_ACCEPT = [MediaType.ociIndex, MediaType.dockerList, MediaType.ociManifest, MediaType.dockerManifest].join(', ');

export interface Platform {
  readonly architecture: string;
  readonly os: string;
  readonly variant?: string;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
  readonly platform?: Platform;
}

export interface ImageManifest {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
  readonly annotations?: Record<string, string>;
}

export interface ImageIndex {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly manifests: readonly Descriptor[];
  readonly annotations?: Record<string, string>;
}

export interface ImageConfig {
  readonly architecture?: string;
  readonly os?: string;
  readonly created?: string;
  readonly config?: { Labels?: Record<string, string> | null; [k: string]: unknown };
  readonly rootfs?: { type: string; diff_ids: string[] };
  readonly history?: unknown[];
}

export type ParsedManifest = { kind: 'manifest'; mediaType: string; manifest: ImageManifest } | { kind: 'index'; mediaType: string; index: ImageIndex };

/**
 * Reads a manifest body; `headerType` is the Content-Type the registry sent (or the descriptor's media
 * type), which wins over a missing `mediaType` field (OCI manifests may omit it).
 */
export function parseManifest(body: Buffer, headerType: string | undefined, what: string): ParsedManifest {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new OciError('UNSUPPORTED', `${what}: the manifest is not JSON (${(e as Error).message})`);
  }
  if (doc === null || typeof doc !== 'object') throw new OciError('UNSUPPORTED', `${what}: the manifest is not a JSON object`);
  const declared = typeof doc.mediaType === 'string' ? doc.mediaType : undefined;
  const header = headerType?.split(';')[0]?.trim();
  let mediaType = declared ?? (header && header !== 'application/json' && header !== 'application/octet-stream' ? header : undefined);
  if (mediaType === undefined) mediaType = Array.isArray(doc.manifests) ? MediaType.ociIndex : MediaType.ociManifest;
  if (mediaType === MediaType.dockerSchema1 || mediaType === MediaType.dockerSchema1Signed || doc.schemaVersion === 1) {
    throw new OciError('UNSUPPORTED', `${what}: Docker schema 1 manifests are not supported; push the image again with a current client (schema 2 or OCI)`);
  }
  if (doc.schemaVersion !== 2) throw new OciError('UNSUPPORTED', `${what}: unsupported manifest schemaVersion ${JSON.stringify(doc.schemaVersion)}`);
  if (mediaType === MediaType.ociIndex || mediaType === MediaType.dockerList) {
    if (!Array.isArray(doc.manifests)) throw new OciError('UNSUPPORTED', `${what}: the image index has no manifests list`);
    for (const d of doc.manifests) checkDescriptor(d, what);
    return { kind: 'index', mediaType, index: doc as unknown as ImageIndex };
  }
  if (mediaType === MediaType.ociManifest || mediaType === MediaType.dockerManifest) {
    checkDescriptor(doc.config, `${what} (config)`);
    if (!Array.isArray(doc.layers)) throw new OciError('UNSUPPORTED', `${what}: the manifest has no layers list`);
    for (const d of doc.layers) checkDescriptor(d, `${what} (layer)`);
    return { kind: 'manifest', mediaType, manifest: doc as unknown as ImageManifest };
  }
  throw new OciError('UNSUPPORTED', `${what}: unsupported manifest media type "${mediaType}"`);
}

function checkDescriptor(d: unknown, what: string): void {
  const o = d as Partial<Descriptor> | null;
  if (!o || typeof o !== 'object' || typeof o.digest !== 'string' || typeof o.size !== 'number' || typeof o.mediaType !== 'string') {
    throw new OciError('UNSUPPORTED', `${what}: a descriptor lacks mediaType, digest or size`);
  }
}

/** The platform this process runs on, in OCI terms (Node's x64 is amd64). */
export function currentPlatform(): Platform {
  const arch: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };
  return { os: process.platform === 'win32' ? 'windows' : 'linux', architecture: arch[process.arch] ?? process.arch };
}

export function formatPlatform(p: Platform): string {
  return `${p.os}/${p.architecture}${p.variant ? `/${p.variant}` : ''}`;
}

export function parsePlatform(s: string): Platform {
  const [os, architecture, variant] = s.split('/');
  if (!os || !architecture) throw new OciError('UNSUPPORTED', `invalid platform "${s}": want OS/ARCH[/VARIANT], e.g. linux/amd64`);
  return variant ? { os, architecture, variant } : { os, architecture };
}

/**
 * Picks the manifest for `want` from an index: an exact os/architecture(/variant) match, else
 * linux/amd64 (bundle and catalog images hold no binaries that care; most are published for it).
 * Entries without a platform (attestations, artifacts) are skipped unless nothing else is there.
 */
export function selectPlatform(index: ImageIndex, want: Platform, what: string): Descriptor {
  const images = index.manifests.filter(
    (d) =>
      d.mediaType === MediaType.ociManifest ||
      d.mediaType === MediaType.dockerManifest ||
      d.mediaType === MediaType.ociIndex ||
      d.mediaType === MediaType.dockerList,
  );
  const matches = (p: Platform) => (d: Descriptor) =>
    d.platform !== undefined &&
    d.platform.os === p.os &&
    d.platform.architecture === p.architecture &&
    (p.variant === undefined || d.platform.variant === p.variant);
  const found = images.find(matches(want)) ?? images.find(matches({ os: 'linux', architecture: 'amd64' }));
  if (found) return found;
  const unplatformed = images.filter((d) => d.platform === undefined);
  if (unplatformed.length === 1) return unplatformed[0]!;
  const offered = images.map((d) => (d.platform ? formatPlatform(d.platform) : '(no platform)')).join(', ') || 'none';
  throw new OciError('UNSUPPORTED', `${what}: no image for ${formatPlatform(want)} in the image index (it has: ${offered}); pick one with --platform`);
}
