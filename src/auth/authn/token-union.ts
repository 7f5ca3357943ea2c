// The bearer-token half of kube-apiserver's authenticator (pkg/kubeapiserver/authenticator/config.go):
// static tokens (`--token-auth-file`), then each TokenAuthenticator in order (bootstrap tokens,
// ServiceAccount JWTs, the JWT/OIDC authenticators of `--authentication-config`), the union
// cached for successes as upstream's tokencache (10 s, failures not cached).
//
// Static tokens and cache hits are answered synchronously: the request path stays free of a
// promise for the admin's and the loopback client's tokens.
import { createHash } from 'node:crypto';
import { LRUExpireCache } from '../lru-expire-cache.js';
import type { TokenAuthenticator, TokenOutcome, UserInfo } from '../types.js';

/** What the union answers: the user, or why nobody took the token (an error text as upstream's). */
export type TokenResult =
  | { readonly kind: 'user'; readonly user: UserInfo; readonly audiences?: readonly string[] }
  | { readonly kind: 'rejected'; readonly reason: string; readonly error: boolean };

export interface TokenUnionOptions {
  /** `--token-auth-file`: token → user. */
  readonly tokens?: ReadonlyMap<string, UserInfo>;
  /** In upstream's order: bootstrap tokens, ServiceAccount tokens, JWT/OIDC authenticators. */
  readonly tokenAuthenticators?: readonly TokenAuthenticator[];
  /** How long a success is remembered (upstream's TokenSuccessCacheTTL, 10 s); 0 turns the cache off. */
  readonly successCacheTtlMs?: number;
  readonly now?: () => number;
}

/** Upstream's bearertoken authenticator's error when no token authenticator claims a token. */
export const INVALID_BEARER_TOKEN = 'invalid bearer token';

const CACHE_MAX_ENTRIES = 4096;

type CachedUser = TokenResult & { kind: 'user' };

export class TokenUnion {
  private readonly tokens: ReadonlyMap<string, UserInfo>;
  private readonly authenticators: readonly TokenAuthenticator[];
  private readonly ttlMs: number;
  private readonly cache: LRUExpireCache<CachedUser>;

  constructor(opts: TokenUnionOptions = {}) {
    this.tokens = opts.tokens ?? new Map();
    this.authenticators = opts.tokenAuthenticators ?? [];
    this.ttlMs = opts.successCacheTtlMs ?? 10_000;
    this.cache = new LRUExpireCache(CACHE_MAX_ENTRIES, opts.now);
  }

  /** Whether anything but static tokens may answer (a TokenReview then has something to ask). */
  get hasAuthenticators(): boolean {
    return this.authenticators.length > 0;
  }

  /**
   * The user of `token`, synchronously when static or cached. `audiences` as TokenAuthenticator's:
   * absent, the API server's own. Static tokens are valid for every audience, as upstream's
   * (they carry none, and an authenticator without audiences is taken to accept the requested ones).
   */
  authenticate(token: string, audiences?: readonly string[]): TokenResult | Promise<TokenResult> {
    const user = this.tokens.get(token);
    if (user !== undefined) return { kind: 'user', user: copyUser(user), ...(audiences ? { audiences } : {}) };
    if (this.authenticators.length === 0) return { kind: 'rejected', reason: INVALID_BEARER_TOKEN, error: true };
    const key = this.ttlMs > 0 ? cacheKey(token, audiences) : '';
    if (key !== '') {
      const hit = this.cache.get(key);
      if (hit !== undefined) return { ...hit, user: copyUser(hit.user) };
    }
    return this.ask(token, audiences, key);
  }

  private async ask(token: string, audiences: readonly string[] | undefined, key: string): Promise<TokenResult> {
    const errors: string[] = [];
    for (const a of this.authenticators) {
      let outcome: TokenOutcome;
      try {
        outcome = await a.authenticateToken(token, audiences);
      } catch (e) {
        errors.push(e instanceof Error ? e.message : String(e));
        continue;
      }
      if (outcome.kind === 'user') {
        const result = { kind: 'user' as const, user: outcome.user, ...(outcome.audiences ? { audiences: outcome.audiences } : {}) };
        if (key !== '') this.cache.add(key, result, this.ttlMs);
        return { ...result, user: copyUser(result.user) };
      }
      if (outcome.kind === 'rejected') errors.push(outcome.reason);
    }
    // utilerrors.NewAggregate: one error is itself, several are `[a, b]`.
    const reason = errors.length === 0 ? INVALID_BEARER_TOKEN : errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
    return { kind: 'rejected', reason, error: true };
  }
}

/** The cache keeps a hash, not the token (as upstream's tokencache keys by an HMAC of it). */
function cacheKey(token: string, audiences: readonly string[] | undefined): string {
  const h = createHash('sha256').update(token);
  if (audiences) h.update(`\0${audiences.join('\0')}`);
  return h.digest('base64');
}

function copyUser(u: UserInfo): UserInfo {
  return { ...u, groups: [...u.groups] };
}
