// One error class for everything that can go wrong with an image, with a stable code per failure and
// a message that says what went wrong and what to do about it (the CLI prints `message` as is).

export type OciErrorCode =
  | 'BAD_REFERENCE' // the image reference does not parse
  | 'UNREACHABLE' // no connection to the registry
  | 'UNAUTHORIZED' // 401: no or wrong credentials
  | 'DENIED' // 403: credentials accepted, access refused
  | 'NOT_FOUND' // repository, tag, manifest or blob does not exist
  | 'DIGEST_MISMATCH' // content does not hash to the digest it was asked for by
  | 'CORRUPT_LAYER' // a layer is not a valid (gzipped) tar
  | 'UNSAFE_PATH' // a layer entry would land outside the unpack directory
  | 'UNSUPPORTED' // a media type, platform or schema we cannot use
  | 'REGISTRY_ERROR' // any other non-success answer from the registry
  | 'OUTPUT' // the directory to unpack into cannot be used
  | 'LAYOUT' // an OCI image layout that is missing or malformed
  | 'BUILD'; // a bundle/catalog directory that cannot be built into an image

export class OciError extends Error {
  override readonly name = 'OciError';
  constructor(
    readonly code: OciErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isOciError(e: unknown, code?: OciErrorCode): e is OciError {
  return e instanceof OciError && (code === undefined || e.code === code);
}
