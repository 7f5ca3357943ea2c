// The ServiceAccount issuer's OIDC discovery endpoints (kube-apiserver's routes/openidmetadata.go):
// `/.well-known/openid-configuration` (application/json) and `/openid/v1/jwks`
// (application/jwk-set+json), GET only, cacheable for the provider's max age.
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';
import { routerMethodNotAllowed } from './errors.js';

export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

/** Serves one of the two paths; false for any other path, or when this server does not serve them. */
export async function serveIssuerDiscovery(c: ServerContext, s: RequestScope, path: string): Promise<boolean> {
  if (path !== OPENID_CONFIG_PATH && path !== JWKS_PATH) return false;
  if (!c.serviceAccountIssuerDiscovery) return false;
  const docs = await c.serviceAccountIssuerDiscovery();
  if (!docs) return false;
  if (s.req.method !== 'GET' && s.req.method !== 'HEAD') throw routerMethodNotAllowed();
  const isConfig = path === OPENID_CONFIG_PATH;
  s.res.statusCode = 200;
  s.res.setHeader('Content-Type', isConfig ? 'application/json' : 'application/jwk-set+json');
  s.res.setHeader('Cache-Control', `public, max-age=${docs.maxAgeSeconds}`);
  s.res.end(isConfig ? docs.configJSON : docs.keysetJSON);
  return true;
}
