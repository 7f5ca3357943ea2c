// Signing ServiceAccount tokens (pkg/serviceaccount/jwt.go's token generator and claims.go's
// Claims): a JWS with the signing key's `alg` and `kid`, the public claims iss, sub, aud, exp,
// iat, nbf, jti and the private `kubernetes.io` claim naming the namespace, the ServiceAccount and
// the object the token is bound to.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { KubeObject } from '../../apimachinery/types.js';
import type { SigningKey } from './keys.js';

/** The user name of a ServiceAccount (serviceaccount.MakeUsername). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The issuer of tokens from `kubernetes.io/service-account-token` Secrets. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

interface Ref {
  name?: string;
  uid?: string;
}

/** The private claim, as upstream's privateClaims marshals it (empty fields left out). */
export interface KubernetesClaim {
  namespace?: string;
  serviceaccount?: Ref;
  pod?: Ref;
  secret?: Ref;
  node?: Ref;
  warnafter?: number;
}

export interface ServiceAccountClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: readonly string[];
  readonly exp: number;
  readonly iat: number;
  readonly nbf: number;
  readonly jti: string;
  readonly 'kubernetes.io': KubernetesClaim;
}

function ref(o: KubeObject | undefined): Ref | undefined {
  if (!o) return undefined;
  const r: Ref = {};
  if (o.metadata?.name) r.name = o.metadata.name;
  if (o.metadata?.uid) r.uid = o.metadata.uid;
  return r;
}

/** claims.go's Claims: what a TokenRequest's token says, `nowSeconds` being the issue time. */
export function tokenClaims(opts: {
  readonly issuer: string;
  readonly serviceAccount: KubeObject;
  readonly secret?: KubeObject;
  readonly expirationSeconds: number;
  readonly audiences: readonly string[];
  readonly nowSeconds: number;
  readonly jti?: string;
}): ServiceAccountClaims {
  const sa = opts.serviceAccount;
  const namespace = sa.metadata?.namespace ?? '';
  const name = sa.metadata?.name ?? '';
  const k: KubernetesClaim = { namespace, serviceaccount: ref(sa)! };
  const secret = ref(opts.secret);
  if (secret) k.secret = secret;
  // In the order upstream's JSON has them (go-jose merges the claims into a map: sorted keys).
  return {
    aud: [...opts.audiences],
    exp: opts.nowSeconds + opts.expirationSeconds,
    iat: opts.nowSeconds,
    iss: opts.issuer,
    jti: opts.jti ?? randomUUID(),
    'kubernetes.io': k,
    nbf: opts.nowSeconds,
    sub: serviceAccountUsername(namespace, name),
  };
}

/** LegacyClaims: the claims of a token kept in a `kubernetes.io/service-account-token` Secret (no expiry, no audience). */
export function legacyClaims(serviceAccount: KubeObject, secretName: string): Record<string, string> {
  const namespace = serviceAccount.metadata?.namespace ?? '';
  const name = serviceAccount.metadata?.name ?? '';
  return {
    iss: LEGACY_ISSUER,
    'kubernetes.io/serviceaccount/namespace': namespace,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': name,
    'kubernetes.io/serviceaccount/service-account.uid': serviceAccount.metadata?.uid ?? '',
    sub: serviceAccountUsername(namespace, name),
  };
}

/** Signs claims with the key (compact JWS, header `{alg, kid}` as upstream's signer writes it). */
export async function signToken(key: SigningKey, claims: object): Promise<string> {
  return new SignJWT({ ...claims }).setProtectedHeader({ alg: key.algorithm, kid: key.keyId }).sign(key.privateKey);
}

/** What the TokenRequest subresource and the token controller need to issue tokens. */
export interface TokenIssuer {
  /** The first --service-account-issuer: the `iss` of new tokens. */
  readonly issuer: string;
  /** --api-audiences: the audiences of a TokenRequest that names none. */
  readonly apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; 0: no cap. */
  readonly maxExpirationSeconds: number;
  sign(claims: object): Promise<string>;
}

export function tokenIssuer(opts: { issuer: string; apiAudiences: readonly string[]; maxExpirationSeconds?: number; key: SigningKey }): TokenIssuer {
  return {
    issuer: opts.issuer,
    apiAudiences: opts.apiAudiences,
    maxExpirationSeconds: opts.maxExpirationSeconds ?? 0,
    sign: (claims) => signToken(opts.key, claims),
  };
}
