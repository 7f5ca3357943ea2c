// Bootstrap tokens (`--enable-bootstrap-token-auth`; upstream's
// plugin/pkg/auth/authenticator/token/bootstrap): a token `<id>.<secret>` is the Secret
// `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token` whose `token-id` and
// `token-secret` match, not past its `expiration` and with `usage-bootstrap-authentication: "true"`.
// The user is `system:bootstrap:<id>` in `system:bootstrappers` and the `auth-extra-groups`.
//
// As upstream, a token that does not match is not this authenticator's (`none`), whatever the
// reason: the request then fails as any unknown bearer token does.
import { timingSafeEqual } from 'node:crypto';
import { isStatusError, type KubeClient } from '../../client/types.js';
import type { TokenAuthenticator, TokenOutcome } from '../types.js';

export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_DEFAULT_GROUP = 'system:bootstrappers';

const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP_RE = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
const NONE: TokenOutcome = { kind: 'none' };
const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;

interface SecretLike {
  readonly type?: string;
  readonly metadata?: { readonly deletionTimestamp?: string };
  readonly data?: Record<string, string>;
}

export interface BootstrapTokenOptions {
  /** Reads kube-system's Secrets (the loopback client). */
  readonly client: KubeClient;
  readonly now?: () => number;
  /** Why a token matched no Secret (upstream logs these at V(3)). */
  readonly log?: (msg: string) => void;
}

export function bootstrapTokenAuthenticator(opts: BootstrapTokenOptions): TokenAuthenticator {
  const now = opts.now ?? Date.now;
  const log = opts.log ?? (() => {});
  return {
    name: 'bootstrap',
    async authenticateToken(token) {
      const m = TOKEN_RE.exec(token);
      if (!m) return NONE;
      const [, id, secret] = m as unknown as [string, string, string];
      const name = BOOTSTRAP_TOKEN_SECRET_PREFIX + id;
      let obj: SecretLike;
      try {
        obj = await opts.client.get(SECRETS, 'kube-system', name);
      } catch (e) {
        if (isStatusError(e) && e.status.code === 404) {
          log(`No secret of name ${name} to match bootstrap bearer token`);
          return NONE;
        }
        throw e;
      }
      if (obj.metadata?.deletionTimestamp) return NONE;
      if (obj.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) {
        log(`Bootstrap secret ${name} has invalid type ${JSON.stringify(obj.type ?? '')}; expected ${JSON.stringify(BOOTSTRAP_TOKEN_SECRET_TYPE)}`);
        return NONE;
      }
      const data = obj.data ?? {};
      if (!sameText(field(data, 'token-secret'), secret)) {
        log(`Bootstrap secret ${name} has no matching token-secret`);
        return NONE;
      }
      if (field(data, 'token-id') !== id) {
        log(`Bootstrap secret ${name} has no matching token-id`);
        return NONE;
      }
      const expiration = field(data, 'expiration');
      if (expiration !== '') {
        const at = Date.parse(expiration);
        // An expiration that does not parse counts as expired (upstream: "Unparseable expiration time").
        if (!/^\d{4}-\d{2}-\d{2}T/.test(expiration) || Number.isNaN(at) || now() > at) {
          log(`Bootstrap secret ${name} has expired or has an unparseable expiration ${JSON.stringify(expiration)}`);
          return NONE;
        }
      }
      if (field(data, 'usage-bootstrap-authentication') !== 'true') {
        log(`Bootstrap secret ${name} not marked usage-bootstrap-authentication=true.`);
        return NONE;
      }
      const groups = [BOOTSTRAP_DEFAULT_GROUP];
      const extra = field(data, 'auth-extra-groups');
      if (extra !== '') {
        for (const g of extra.split(',')) {
          if (!EXTRA_GROUP_RE.test(g)) {
            log(
              `Bootstrap secret ${name} has invalid auth-extra-groups: bootstrap group ${JSON.stringify(g)} is invalid (must match ${EXTRA_GROUP_RE.source})`,
            );
            return NONE;
          }
          if (!groups.includes(g)) groups.push(g);
        }
      }
      return { kind: 'user', user: { name: BOOTSTRAP_USER_PREFIX + id, groups } };
    },
  };
}

/** A Secret's data value as text (base64 in the API). */
function field(data: Record<string, string>, key: string): string {
  const v = data[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '';
}

/** subtle.ConstantTimeCompare. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
