// Image references as docker and opm spell them: [HOST[:PORT]/]PATH[:TAG][@DIGEST], plus
// `oci:DIR[:TAG]` for an OCI image layout on disk.
import { OciError } from './errors.js';

export interface RegistryReference {
  readonly kind: 'registry';
  /** Registry host as written (docker.io when omitted). */
  readonly host: string;
  /** Repository path inside the registry (library/NAME for docker.io's one-part names). */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

export interface LayoutReference {
  readonly kind: 'layout';
  readonly dir: string;
  readonly tag?: string;
}

export type ImageReference = RegistryReference | LayoutReference;

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const SHA256 = /^sha256:[a-f0-9]{64}$/;

export function parseReference(ref: string): ImageReference {
  if (ref.startsWith('oci:')) return parseLayoutReference(ref.slice(4), ref);
  return parseRegistryReference(ref);
}

function parseLayoutReference(rest: string, ref: string): LayoutReference {
  if (rest === '') throw new OciError('BAD_REFERENCE', `invalid image reference "${ref}": oci: needs a directory (oci:DIR[:TAG])`);
  // As containers/image splits oci:PATH:REFERENCE: at the first ':', so the name may hold colons
  // (a layout can name an image "127.0.0.1:5000/ns/foo:v1") but the directory may not.
  const i = rest.indexOf(':');
  if (i < 0) return { kind: 'layout', dir: rest };
  if (i === 0) throw new OciError('BAD_REFERENCE', `invalid image reference "${ref}": oci: needs a directory before the image name`);
  const tag = rest.slice(i + 1);
  return tag === '' ? { kind: 'layout', dir: rest.slice(0, i) } : { kind: 'layout', dir: rest.slice(0, i), tag };
}

export function parseRegistryReference(ref: string): RegistryReference {
  const bad = (why: string): OciError => new OciError('BAD_REFERENCE', `invalid image reference "${ref}": ${why}`);
  if (ref === '' || ref !== ref.trim()) throw bad('empty or padded with spaces');
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad(`"${digest}" is not a digest (ALGORITHM:HEX)`);
    if (digest.startsWith('sha256:') && !SHA256.test(digest)) throw bad(`"${digest}" is not a sha256 digest (64 lowercase hex digits)`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`"${tag}" is not a valid tag`);
  }
  let host = 'docker.io';
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase()) {
      host = first;
      path = rest.slice(slash + 1);
    }
  }
  if (host === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  if (path === '') throw bad('no repository name');
  for (const c of path.split('/')) if (!COMPONENT.test(c)) throw bad(`repository name "${path}" must be lowercase letters, digits and separators (. _ __ -)`);
  return { kind: 'registry', host, repository: path, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The reference as text: HOST/REPO[:TAG][@DIGEST] (or oci:DIR[:TAG]). */
export function formatReference(r: ImageReference): string {
  if (r.kind === 'layout') return `oci:${r.dir}${r.tag ? `:${r.tag}` : ''}`;
  return `${r.host}/${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

/** What to ask the registry's manifest endpoint for: the digest when pinned, else the tag (latest by default). */
export function manifestReference(r: RegistryReference): string {
  return r.digest ?? r.tag ?? 'latest';
}

/** docker.io's API lives at registry-1.docker.io. */
export function apiHost(host: string): string {
  return host === 'docker.io' || host === 'index.docker.io' ? 'registry-1.docker.io' : host;
}

/** Loopback registries speak plain HTTP by default (as docker treats localhost as an insecure registry). */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.split(':')[0]!;
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

export function isDigest(s: string): boolean {
  return DIGEST.test(s);
}
