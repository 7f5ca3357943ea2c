// Delegated bearer-token authentication for extension API servers (k8s.io/apiserver's
// DelegatingAuthenticationOptions with its webhook token authenticator): a token is sent to the
// front control plane as an authentication.k8s.io/v1 TokenReview and the user it names is taken;
// answers are cached by the token's hash (`--authentication-token-webhook-cache-ttl`, 10 s for
// delegated authentication, the same time for accepted and refused tokens), so a client's burst
// costs one review. A review that fails (the front unreachable, an error answer) refuses the
// request with 401 and is not cached.
import { createHash } from 'node:crypto';
import type { KubeClient } from '../../client/types.js';
import { LRUExpireCache } from '../lru-expire-cache.js';
import type { TokenAuthenticator, TokenOutcome } from '../types.js';

export interface TokenReviewAuthenticatorOptions {
  /** A client of the front control plane, allowed to create tokenreviews (system:auth-delegator). */
  readonly client: KubeClient;
  /** How long an answer is reused (default 10,000 ms; 0: not cached). */
  readonly cacheTtlMs?: number;
  /** Audiences asked for (`spec.audiences`); default none: the front's own. */
  readonly audiences?: readonly string[];
  readonly now?: () => number;
}

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

const GVR = { group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' };
const CACHE_SIZE = 4096;

export function tokenReviewAuthenticator(opts: TokenReviewAuthenticatorOptions): TokenAuthenticator {
  const ttl = opts.cacheTtlMs ?? 10_000;
  const cache = new LRUExpireCache<TokenOutcome>(CACHE_SIZE, opts.now);
  return {
    name: 'webhook',
    async authenticateToken(token) {
      const key = createHash('sha256').update(token).digest('hex');
      const hit = ttl > 0 ? cache.get(key) : undefined;
      if (hit) return hit;
      let status: TokenReviewStatus;
      try {
        const review = await opts.client.create<{ apiVersion: string; kind: string; spec: unknown; status?: TokenReviewStatus }>(GVR, undefined, {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(opts.audiences?.length ? { audiences: [...opts.audiences] } : {}) },
        });
        status = review.status ?? {};
      } catch (e) {
        return { kind: 'rejected', reason: `token review failed: ${e instanceof Error ? e.message : String(e)}` };
      }
      const outcome: TokenOutcome =
        status.authenticated && status.user?.username
          ? {
              kind: 'user',
              user: {
                name: status.user.username,
                groups: status.user.groups ?? [],
                ...(status.user.uid ? { uid: status.user.uid } : {}),
                ...(status.user.extra ? { extra: status.user.extra } : {}),
              },
            }
          : { kind: 'rejected', reason: status.error || 'token not authenticated by the token review' };
      if (ttl > 0) cache.add(key, outcome, ttl);
      return outcome;
    },
  };
}
