// The endpoints outside the API groups: /version, the health checks, /metrics, /openapi/v2 and
// /openapi/v3, and the index at `/`. Discovery (also outside the resources) is discovery.ts.
import { sendMetrics } from '../promhttp.js';
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';
import { routerMethodNotAllowed } from './errors.js';
import { writeJson } from './responsewriters.js';

/** /version: a GET-only web service upstream; WriteRawJSON pretty-prints (json.MarshalIndent, no newline). */
export function serveVersion(c: ServerContext, s: RequestScope): void {
  if (s.req.method !== 'GET' && s.req.method !== 'HEAD') throw routerMethodNotAllowed();
  s.res.statusCode = 200;
  s.res.setHeader('Content-Type', 'application/json');
  s.res.end(JSON.stringify(c.version, null, 2));
}

/** /healthz, /livez, /readyz and their checks; false when the health provider does not serve `path`. */
export async function serveHealth(c: ServerContext, s: RequestScope, path: string): Promise<boolean> {
  if (!c.health) return false;
  const h = await c.health.handle(path, s.query);
  if (!h) return false;
  s.res.statusCode = h.status;
  s.res.setHeader('Content-Type', h.contentType);
  s.res.setHeader('X-Content-Type-Options', 'nosniff');
  s.res.end(h.body);
  return true;
}

/** /metrics in the Prometheus text or OpenMetrics format the client asks for; false without metrics. */
export async function serveMetrics(c: ServerContext, s: RequestScope): Promise<boolean> {
  if (!c.metricsText) return false;
  const m = await c.metricsText();
  sendMetrics(s.req, s.res, m.body, m.contentType);
  return true;
}

/** /openapi/v2 and /openapi/v3[...]; false when the provider does not serve `path`. */
export async function serveOpenAPI(c: ServerContext, s: RequestScope, path: string): Promise<boolean> {
  if (!c.openapi) return false;
  return c.openapi.handle(path, s.query, s.accept, s.res, s.req);
}

/** `/`: the paths served, as upstream's index lists them. */
export function serveIndex(c: ServerContext, s: RequestScope): void {
  writeJson(s.res, 200, { paths: rootPaths(c) });
}

export function rootPaths(c: ServerContext): string[] {
  const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/metrics', '/openapi/v2', '/openapi/v3', '/readyz', '/version'];
  if (c.serviceAccountIssuerDiscovery) paths.push('/.well-known/openid-configuration', '/openid/v1/jwks');
  for (const gv of c.registry.groupVersions()) if (gv.group) paths.push(`/apis/${gv.group}`, `/apis/${gv.group}/${gv.version}`);
  return [...new Set(paths)].sort();
}
