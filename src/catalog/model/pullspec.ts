// Image pull-spec checking as opm does it when converting a catalog into a model: the docker
// reference grammar (distribution/reference, as go.podman.io/image's docker/reference parses it with
// ParseNormalizedNamed) and go-digest's validation of the digest part. Returns the error text, or
// undefined when the reference is valid.

const alnum = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alnum}(?:${separator}${alnum})*`;
const domainNameComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domainName = `${domainNameComponent}(?:\\.${domainNameComponent})*`;
const ipv6address = '\\[(?:[a-fA-F0-9:]+)\\]';
const host = `(?:${domainName}|${ipv6address})`;
const domainAndPort = `${host}(?::[0-9]+)?`;
const namePat = `(?:${domainAndPort}/)?${pathComponent}(?:/${pathComponent})*`;
const tagPat = '[\\w][\\w.-]{0,127}';
const digestPat = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}';

const referenceRegexp = new RegExp(`^(${namePat})(?::(${tagPat}))?(?:@(${digestPat}))?$`);
const anchoredIdentifier = /^[a-f0-9]{64}$/;
const digestAnchored = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;

const NAME_TOTAL_LENGTH_MAX = 255;

/** Hex lengths of the digest algorithms opm's binary links in (crypto/sha256 and crypto/sha512). */
const DIGEST_HEX_LENGTH: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

/** go-digest's Digest.Validate. */
function validateDigest(d: string): string | undefined {
  const i = d.indexOf(':');
  if (i <= 0 || i + 1 === d.length) return 'invalid checksum digest format';
  const algorithm = d.slice(0, i);
  const encoded = d.slice(i + 1);
  const size = DIGEST_HEX_LENGTH[algorithm];
  if (size === undefined) {
    if (!digestAnchored.test(d)) return 'invalid checksum digest format';
    return 'unsupported digest algorithm';
  }
  if (encoded.length !== size) return 'invalid checksum digest length';
  if (!/^[a-f0-9]+$/.test(encoded)) return 'invalid checksum digest format';
  return undefined;
}

/** The docker reference library's Parse. */
function parseReference(s: string): string | undefined {
  const m = referenceRegexp.exec(s);
  if (!m) {
    if (s === '') return 'repository name must have at least one component';
    if (referenceRegexp.test(s.toLowerCase())) return 'invalid reference format: repository name must be lowercase';
    return 'invalid reference format';
  }
  if (m[1]!.length > NAME_TOTAL_LENGTH_MAX) return `repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`;
  if (m[3] !== undefined && m[3] !== '') return validateDigest(m[3]);
  return undefined;
}

function splitDockerDomain(name: string): [string, string] {
  const i = name.indexOf('/');
  let domain: string;
  let remainder: string;
  if (i === -1 || (!/[.:]/.test(name.slice(0, i)) && name.slice(0, i) !== 'localhost')) {
    domain = 'docker.io';
    remainder = name;
  } else {
    domain = name.slice(0, i);
    remainder = name.slice(i + 1);
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !remainder.includes('/')) remainder = `library/${remainder}`;
  return [domain, remainder];
}

/** ParseNormalizedNamed's error text for s, or undefined when s is a valid named reference. */
export function pullSpecError(s: string): string | undefined {
  if (anchoredIdentifier.test(s)) return `invalid repository name (${s}), cannot specify 64-byte hexadecimal strings`;
  const [domain, remainder] = splitDockerDomain(s);
  const tagSep = remainder.indexOf(':');
  const remoteName = tagSep > -1 ? remainder.slice(0, tagSep) : remainder;
  if (remoteName.toLowerCase() !== remoteName) return 'invalid reference format: repository name must be lowercase';
  return parseReference(`${domain}/${remainder}`);
}
