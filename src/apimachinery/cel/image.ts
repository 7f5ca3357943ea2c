// kube's image CEL library (k8s.io/apiserver/pkg/cel/library/image.go, kube 1.33+), over
// go-containerregistry's name.ParseReference with its default (weak) options: `image(s)`,
// `isImage(s)`, and on an Image `containsDigest()`, `registry()` (index.docker.io when none is
// named; docker.io is read as it), `repository()` (library/<name> for a one-part Docker Hub name),
// `identifier()` (the digest when there is one, else the tag), `tag()` (latest when neither is
// given; empty for a digest reference, also one that names a tag) and `digest()`.
// A string that is neither a tag nor a digest reference is `could not parse reference: <s>`.
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';

/** apiservercel.ImageReference. */
export class ImageValue {
  constructor(
    readonly registry: string,
    readonly repository: string,
    readonly tag: string,
    readonly digest: string,
  ) {}

  get identifier(): string {
    return this.digest || this.tag;
  }
}

const DEFAULT_REGISTRY = 'index.docker.io';
const REPOSITORY_CHARS = /^[a-z0-9_\-./]*$/;
const TAG_CHARS = /^[A-Za-z0-9_\-.]*$/;
const DIGEST_CHARS = /^[sh:0-9a-f]*$/;

/** go-containerregistry's checkElement: a length within bounds, only the allowed characters. */
const element = (s: string, chars: RegExp, min: number, max: number): boolean => s.length >= min && s.length <= max && chars.test(s);

/** url.Parse("//" + name).Host == name: an RFC 3986 authority, host and optional port. */
function validRegistry(name: string): boolean {
  if (name === '') return true;
  if (/[/?#@\s%]/.test(name)) return false;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]*)(?::(\d*))?$/.exec(name);
  return m !== null;
}

interface Repository {
  registry: string;
  repository: string;
}

function newRepository(name: string): Repository | undefined {
  if (name === '') return undefined;
  let registry = '';
  let repo = name;
  const slash = name.indexOf('/');
  if (slash >= 0) {
    const first = name.slice(0, slash);
    // The first part is the registry when it looks like a host (a dot or a port).
    if (first.includes('.') || first.includes(':')) {
      registry = first;
      repo = name.slice(slash + 1);
    }
  }
  if (!element(repo, REPOSITORY_CHARS, 2, 255) || !validRegistry(registry)) return undefined;
  if (registry === '' || registry === 'docker.io') registry = DEFAULT_REGISTRY;
  // Docker Hub's one-part names are in its library namespace.
  if (registry === DEFAULT_REGISTRY && !repo.includes('/')) {
    repo = `library/${repo}`;
    if (!element(repo, REPOSITORY_CHARS, 2, 255)) return undefined;
  }
  return { registry, repository: repo };
}

function newTag(name: string): ImageValue | undefined {
  const parts = name.split(':');
  let base = name;
  let tag = '';
  if (parts.length > 1 && !parts.at(-1)!.includes('/')) {
    base = parts.slice(0, -1).join(':');
    tag = parts.at(-1)!;
  }
  if (tag !== '' && !element(tag, TAG_CHARS, 1, 127)) return undefined;
  const r = newRepository(base);
  return r && new ImageValue(r.registry, r.repository, tag || 'latest', '');
}

function newDigest(name: string): ImageValue | undefined {
  const parts = name.split('@');
  if (parts.length !== 2) return undefined;
  const digest = parts[1]!;
  let base = parts[0]!;
  if (!element(digest, DIGEST_CHARS, 71, 71)) return undefined;
  // A tag before the digest is dropped (the reference is by digest).
  const tagged = newTag(base);
  if (tagged) base = `${tagged.registry}/${tagged.repository}`;
  const r = newRepository(base);
  return r && new ImageValue(r.registry, r.repository, '', digest);
}

/** name.ParseReference: a tag reference, else a digest reference. */
export function parseImageReference(s: string): ImageValue | undefined {
  if (s.startsWith('http://') || s.startsWith('https://')) return undefined;
  return newTag(s) ?? newDigest(s);
}

export function registerImage(env: Environment, charge: (n: number) => void): void {
  const cost = (s: string): number => 1 + Math.ceil(s.length / 10);
  env.registerType('kubernetes.Image', { ctor: ImageValue, fields: {} } as never);
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  fn('image(string): kubernetes.Image', (s: string) => {
    charge(cost(s));
    const v = parseImageReference(s);
    if (!v) throw new EvaluationError(`could not parse reference: ${s}`);
    return v;
  });
  fn('isImage(string): bool', (s: string) => (charge(cost(s)), parseImageReference(s) !== undefined));
  fn('kubernetes.Image.containsDigest(): bool', (v: ImageValue) => v.digest !== '');
  fn('kubernetes.Image.registry(): string', (v: ImageValue) => v.registry);
  fn('kubernetes.Image.repository(): string', (v: ImageValue) => v.repository);
  fn('kubernetes.Image.identifier(): string', (v: ImageValue) => v.identifier);
  fn('kubernetes.Image.tag(): string', (v: ImageValue) => v.tag);
  fn('kubernetes.Image.digest(): string', (v: ImageValue) => v.digest);
}
