// The ServiceAccount token authenticator (pkg/serviceaccount/jwt.go's jwtTokenAuthenticator with
// claims.go's validator for bound tokens and legacy.go's for Secret-kept ones). A token is this
// authenticator's when its unverified `iss` is one of the configured issuers (or, for legacy
// tokens, `kubernetes/serviceaccount`); anything else is `none`, for the next authenticator. Ours
// and bad (signature, audience, expiry, a ServiceAccount or bound Secret deleted or recreated) is
// `rejected`, with upstream's reason, which is logged at V(4) as upstream logs it.
import { compactVerify } from 'jose';
import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import type { KubeObject } from '../../apimachinery/types.js';
import { asLogger } from '../../golang/klog.js';
import type { TokenAuthenticator, TokenOutcome, UserInfo } from '../types.js';
import type { VerificationKey } from './keys.js';
import { LEGACY_ISSUER, serviceAccountUsername, type KubernetesClaim } from './token.js';

export const GROUP_SERVICE_ACCOUNTS = 'system:serviceaccounts';
/** user.Info extra key carrying `JTI=<jti>` (serviceaccount.CredentialIDKey). */
export const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** Where the authenticator reads ServiceAccounts and Secrets (upstream's ServiceAccountTokenGetter). */
export interface ServiceAccountTokenGetter {
  /** The object, or undefined when there is none. Other failures throw. */
  getServiceAccount(namespace: string, name: string): Promise<KubeObject | undefined>;
  getSecret(namespace: string, name: string): Promise<KubeObject | undefined>;
}

/** serviceaccount_* counters (pkg/serviceaccount/metrics.go), registered once per registry. */
export interface ServiceAccountTokenMetrics {
  readonly legacyTokens: Counter;
  readonly staleTokens: Counter;
  readonly validTokens: Counter;
}

const metricsByRegistry = new WeakMap<Registry, ServiceAccountTokenMetrics>();

export function serviceAccountTokenMetrics(registry?: Registry): ServiceAccountTokenMetrics {
  const existing = registry && metricsByRegistry.get(registry);
  if (existing) return existing;
  const registers = registry ? [registry] : [];
  const m: ServiceAccountTokenMetrics = {
    legacyTokens: new Counter({ name: 'serviceaccount_legacy_tokens_total', help: 'Cumulative legacy service account tokens used', registers }),
    staleTokens: new Counter({ name: 'serviceaccount_stale_tokens_total', help: 'Cumulative stale projected service account tokens used', registers }),
    validTokens: new Counter({ name: 'serviceaccount_valid_tokens_total', help: 'Cumulative valid projected service account tokens used', registers }),
  };
  if (registry) metricsByRegistry.set(registry, m);
  return m;
}

export interface ServiceAccountAuthenticatorOptions {
  /** --service-account-issuer values: tokens with any of these `iss` are checked here. */
  readonly issuers: readonly string[];
  /** --service-account-key-file keys (and the signing key's public half). */
  readonly keys: readonly VerificationKey[];
  /** --api-audiences: a token must name one of them. */
  readonly apiAudiences: readonly string[];
  readonly getter: ServiceAccountTokenGetter;
  /** Also accept tokens of `kubernetes.io/service-account-token` Secrets (default true). */
  readonly legacy?: boolean;
  readonly metrics?: Registry;
  readonly log?: (msg: string) => void;
  /** Seconds since the epoch (tests). */
  readonly now?: () => number;
}

/** go-jose's jwt.DefaultLeeway: exp and nbf are checked with a minute's slack. */
const LEEWAY_SECONDS = 60;

/** The algorithms upstream's jwt.ParseSigned accepts for ServiceAccount tokens. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];

type Claims = Record<string, unknown>;

function decodePart(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function audiencesOf(aud: unknown): string[] | undefined {
  if (aud === undefined || aud === null) return [];
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud;
  return undefined;
}

/** Go's %q of a []string: `["a" "b"]`. */
const quoteList = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

const rejected = (reason: string): TokenOutcome => ({ kind: 'rejected', reason });
const NONE: TokenOutcome = { kind: 'none' };

export function createServiceAccountAuthenticator(opts: ServiceAccountAuthenticatorOptions): TokenAuthenticator {
  const issuers = new Set(opts.issuers);
  const legacy = opts.legacy ?? true;
  const metrics = serviceAccountTokenMetrics(opts.metrics);
  const log = asLogger(opts.log).v(4);
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));

  const verify = async (token: string, header: Claims): Promise<Claims | undefined> => {
    const alg = str(header['alg']);
    const kid = str(header['kid']);
    // A key with the token's kid first; then the others of the right algorithm (rotation without kids).
    const keys = opts.keys.filter((k) => k.algorithm === alg || (alg.startsWith('PS') && k.algorithm === 'RS256'));
    keys.sort((a, b) => Number(b.keyId === kid) - Number(a.keyId === kid));
    for (const k of keys) {
      try {
        const { payload } = await compactVerify(token, k.key, { algorithms: ALGORITHMS });
        const claims = JSON.parse(new TextDecoder().decode(payload)) as unknown;
        return isObject(claims) ? claims : undefined;
      } catch {
        // the next key
      }
    }
    return undefined;
  };

  const userOf = (namespace: string, name: string, uid: string, jti: string): UserInfo => ({
    name: serviceAccountUsername(namespace, name),
    ...(uid ? { uid } : {}),
    groups: [GROUP_SERVICE_ACCOUNTS, `${GROUP_SERVICE_ACCOUNTS}:${namespace}`],
    ...(jti ? { extra: { [CREDENTIAL_ID_KEY]: [`JTI=${jti}`] } } : {}),
  });

  /** claims.go's validator: time, then the ServiceAccount and the bound Secret still being the ones named. */
  const validateBound = async (claims: Claims): Promise<TokenOutcome> => {
    const t = now();
    const exp = claims['exp'];
    const nbf = claims['nbf'];
    if (typeof exp === 'number' && t - LEEWAY_SECONDS > exp) return rejected('service account token has expired');
    if (typeof nbf === 'number' && t + LEEWAY_SECONDS < nbf) return rejected('service account token is not valid yet');
    const k = (isObject(claims['kubernetes.io']) ? claims['kubernetes.io'] : {}) as KubernetesClaim;
    const namespace = str(k.namespace);
    const saName = str(k.serviceaccount?.name);
    const saUid = str(k.serviceaccount?.uid);
    const invalidIfDeletedBefore = t - LEEWAY_SECONDS;
    const deletedBefore = (o: KubeObject): boolean => {
      const ts = o.metadata?.deletionTimestamp;
      return ts !== undefined && Date.parse(ts) / 1000 < invalidIfDeletedBefore;
    };
    const sa = await opts.getter.getServiceAccount(namespace, saName);
    if (!sa) {
      log.info(`Could not retrieve service account ${namespace}/${saName}: serviceaccounts "${saName}" not found`);
      return rejected(`serviceaccounts "${saName}" not found`);
    }
    if (deletedBefore(sa)) {
      log.info(`Service account has been deleted ${namespace}/${saName}`);
      return rejected(`service account ${namespace}/${saName} has been deleted`);
    }
    const liveUid = sa.metadata?.uid ?? '';
    if (liveUid !== saUid) {
      log.info(`Service account UID no longer matches ${namespace}/${saName}: ${JSON.stringify(liveUid)} != ${JSON.stringify(saUid)}`);
      return rejected(`service account UID (${liveUid}) does not match claim (${saUid})`);
    }
    if (k.secret) {
      const secretName = str(k.secret.name);
      const secret = await opts.getter.getSecret(namespace, secretName);
      if (!secret) {
        log.info(`Could not retrieve bound secret ${namespace}/${secretName} for service account ${namespace}/${saName}: secrets "${secretName}" not found`);
        return rejected('service account token has been invalidated');
      }
      if (deletedBefore(secret)) {
        log.info(`Bound secret is deleted and awaiting removal: ${namespace}/${secretName} for service account ${namespace}/${saName}`);
        return rejected('service account token has been invalidated');
      }
      const secretUid = secret.metadata?.uid ?? '';
      if (str(k.secret.uid) !== secretUid) {
        log.info(`Secret UID no longer matches ${namespace}/${secretName}: ${JSON.stringify(secretUid)} != ${JSON.stringify(str(k.secret.uid))}`);
        return rejected(`secret UID (${secretUid}) does not match service account secret ref claim (${str(k.secret.uid)})`);
      }
    }
    // Tokens with warnafter (pods' projected tokens, extended for a safe transition) count as stale past it.
    if (typeof k.warnafter === 'number' && k.warnafter !== 0) {
      if (t > k.warnafter) metrics.staleTokens.inc();
      else metrics.validTokens.inc();
    }
    return { kind: 'user', user: userOf(namespace, saName, saUid, str(claims['jti'])) };
  };

  /** legacy.go's validator: the claims must be whole, and the Secret must still hold this very token. */
  const validateLegacy = async (token: string, claims: Claims): Promise<TokenOutcome> => {
    const sub = str(claims['sub']);
    const namespace = str(claims['kubernetes.io/serviceaccount/namespace']);
    const secretName = str(claims['kubernetes.io/serviceaccount/secret.name']);
    const saName = str(claims['kubernetes.io/serviceaccount/service-account.name']);
    const saUid = str(claims['kubernetes.io/serviceaccount/service-account.uid']);
    if (!sub) return rejected('sub claim is missing');
    if (!namespace) return rejected('namespace claim is missing');
    if (!secretName) return rejected('secretName claim is missing');
    if (!saName) return rejected('serviceAccountName claim is missing');
    if (!saUid) return rejected('serviceAccountUID claim is missing');
    if (sub !== serviceAccountUsername(namespace, saName)) return rejected('sub claim is invalid');
    const secret = await opts.getter.getSecret(namespace, secretName);
    if (!secret) {
      log.info(`Could not retrieve token ${namespace}/${secretName} for service account ${namespace}/${saName}: secrets "${secretName}" not found`);
      return rejected('token has been invalidated');
    }
    if (secret.metadata?.deletionTimestamp) {
      log.info(`Token is deleted and awaiting removal: ${namespace}/${secretName} for service account ${namespace}/${saName}`);
      return rejected('token has been invalidated');
    }
    const data = isObject(secret['data']) ? secret['data'] : {};
    if (Buffer.from(str(data['token']), 'base64').toString('utf8') !== token) {
      log.info(`Token contents no longer matches ${namespace}/${secretName} for service account ${namespace}/${saName}`);
      return rejected("token does not match server's copy");
    }
    const sa = await opts.getter.getServiceAccount(namespace, saName);
    if (!sa) {
      log.info(`Could not retrieve service account ${namespace}/${saName}: serviceaccounts "${saName}" not found`);
      return rejected(`serviceaccounts "${saName}" not found`);
    }
    if (sa.metadata?.deletionTimestamp) {
      log.info(`Service account has been deleted ${namespace}/${saName}`);
      return rejected(`service account ${namespace}/${saName} has been deleted`);
    }
    if ((sa.metadata?.uid ?? '') !== saUid) {
      log.info(`Service account UID no longer matches ${namespace}/${saName}: ${JSON.stringify(sa.metadata?.uid ?? '')} != ${JSON.stringify(saUid)}`);
      return rejected(`service account UID (${sa.metadata?.uid ?? ''}) does not match claim (${saUid})`);
    }
    return { kind: 'user', user: userOf(namespace, saName, saUid, '') };
  };

  return {
    name: 'serviceaccount',
    async authenticateToken(token: string): Promise<TokenOutcome> {
      // hasCorrectIssuer: three parts, a JSON payload whose iss is ours; otherwise not our token.
      const parts = token.split('.');
      if (parts.length !== 3) return NONE;
      const payload = decodePart(parts[1]!);
      if (!isObject(payload)) return NONE;
      const iss = str(payload['iss']);
      const isLegacy = legacy && iss === LEGACY_ISSUER;
      if (!isLegacy && !issuers.has(iss)) return NONE;
      const header = decodePart(parts[0]!);
      // jwt.ParseSigned with the allowed algorithms: `alg: none` and the like are not tokens at all.
      if (!isObject(header) || !ALGORITHMS.includes(str(header['alg']))) return NONE;
      const claims = await verify(token, header);
      if (!claims) return rejected('square/go-jose: error in cryptographic primitive');
      if (str(claims['iss']) !== iss) return rejected('token issuer is not accepted');
      let tokenAudiences = audiencesOf(claims['aud']);
      if (tokenAudiences === undefined) return rejected('square/go-jose/jwt: expected audience to be a string or an array of strings');
      if (tokenAudiences.length === 0) {
        // Only the API server's audiences are implied for tokens without any (legacy tokens).
        metrics.legacyTokens.inc();
        tokenAudiences = [...opts.apiAudiences];
      }
      if (opts.apiAudiences.length > 0 && !tokenAudiences.some((a) => opts.apiAudiences.includes(a))) {
        return rejected(`token audiences ${quoteList(tokenAudiences)} is invalid for the target audiences ${quoteList(opts.apiAudiences)}`);
      }
      try {
        return isLegacy ? await validateLegacy(token, claims) : await validateBound(claims);
      } catch (e) {
        return rejected(e instanceof Error ? e.message : String(e));
      }
    },
  };
}
