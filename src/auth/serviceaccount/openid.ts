// The OIDC discovery documents of the ServiceAccount issuer (pkg/serviceaccount/openidmetadata.go):
// `/.well-known/openid-configuration` names the issuer and where its keys are, `/openid/v1/jwks`
// is the JWK Set of the verification keys, so that relying parties outside the cluster can verify
// ServiceAccount tokens. Pre-rendered once: the keys do not change while a server runs.
import { exportJWK } from 'jose';
import type { VerificationKey } from './keys.js';

export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export interface OpenIDMetadata {
  /** The configuration document's JSON. */
  readonly configJSON: string;
  /** The JWK Set's JSON. */
  readonly keysetJSON: string;
  /** Cache-Control max-age of both answers (upstream: an hour for static keys). */
  readonly maxAgeSeconds: number;
}

/**
 * NewOpenIDMetadataProvider: throws (upstream logs it and serves neither path) when the issuer is
 * not an https URL without query and fragment. `jwksURI` defaults to `https://<externalAddress>/openid/v1/jwks`.
 */
export async function openIDMetadata(opts: {
  issuer: string;
  jwksURI?: string;
  externalAddress: string;
  keys: readonly VerificationKey[];
}): Promise<OpenIDMetadata> {
  let iss: URL;
  try {
    iss = new URL(opts.issuer);
  } catch {
    throw new Error(`parse ${JSON.stringify(opts.issuer)}: invalid URI for request`);
  }
  if (iss.protocol !== 'https:') throw new Error(`issuer URL must use https scheme, got: ${opts.issuer}`);
  if (iss.search !== '') throw new Error(`issuer URL may not include a query, got: ${opts.issuer}`);
  if (iss.hash !== '') throw new Error(`issuer URL may not include a fragment, got: ${opts.issuer}`);
  const jwksURI = opts.jwksURI || `https://${opts.externalAddress}${JWKS_PATH}`;
  if (new URL(jwksURI).protocol !== 'https:') throw new Error(`jwksURI requires https scheme, parsed as: ${jwksURI}`);
  if (opts.keys.length === 0) throw new Error('no keys provided for validating keyset');
  const keys = [];
  for (const k of opts.keys) {
    const jwk = await exportJWK(k.key);
    // go-jose's JSONWebKey marshals use, kty, kid, crv, alg, then the key's numbers.
    keys.push(
      k.key.asymmetricKeyType === 'rsa'
        ? { use: 'sig', kty: jwk.kty, kid: k.keyId, alg: k.algorithm, n: jwk.n, e: jwk.e }
        : { use: 'sig', kty: jwk.kty, kid: k.keyId, crv: jwk.crv, alg: k.algorithm, x: jwk.x, y: jwk.y },
    );
  }
  const algs = [...new Set(opts.keys.map((k) => k.algorithm))].sort();
  const config = {
    issuer: opts.issuer,
    jwks_uri: jwksURI,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
  };
  return { configJSON: JSON.stringify(config), keysetJSON: JSON.stringify({ keys }), maxAgeSeconds: 3600 };
}
