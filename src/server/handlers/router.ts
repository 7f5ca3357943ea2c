// The mux behind the filters (upstream's director): non-resource paths to their endpoints, the
// rest to the resource they name, and the not-found answers go-restful and the not-found handler
// give for what nothing serves.
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';
import { serveDiscovery } from './discovery.js';
import { notFoundPage, pageNotFound } from './errors.js';
import { serveHealth, serveIndex, serveMetrics, serveOpenAPI, serveVersion } from './nonresource.js';
import { serveIssuerDiscovery } from './issuer-discovery.js';
import { serveResource } from './resource.js';

/**
 * Routes a request. A resource request's handler is called at once and its promise returned (no
 * promise of the router's own on the way); the router's 404s for it are thrown, as every handler
 * may throw before its first await: the caller answers both.
 */
export function route(c: ServerContext, s: RequestScope): void | Promise<void> {
  // Another server's group/version (a non-local APIService): proxied, authorized already.
  const gv = c.aggregator ? aggregatedGroupVersion(s.info.path) : undefined;
  if (gv) return routeAggregated(c, s, gv);
  if (!s.info.isResourceRequest) return routeNonResource(c, s);
  return routeResource(c, s);
}

async function routeAggregated(c: ServerContext, s: RequestScope, gv: { group: string; version: string }): Promise<void> {
  if (await c.aggregator!.serve(s, gv.group, gv.version)) return;
  if (!s.info.isResourceRequest) return routeNonResource(c, s);
  return routeResource(c, s);
}

async function routeNonResource(c: ServerContext, s: RequestScope): Promise<void> {
  const path = s.info.path;
  const read = s.req.method === 'GET' || s.req.method === 'HEAD';
  if (path === '/version' || path === '/version/') return serveVersion(c, s);
  if (await serveHealth(c, s, path)) return;
  if (path === '/metrics' && (await serveMetrics(c, s))) return;
  if ((path.startsWith('/openapi/') || path === '/openapi') && (await serveOpenAPI(c, s, path))) return;
  if (await serveIssuerDiscovery(c, s, path)) return;
  if (read && serveDiscovery(c, s, path)) return;
  if (path === '/') return serveIndex(c, s);
  throw notFoundPage();
}

function routeResource(c: ServerContext, s: RequestScope): void | Promise<void> {
  const { info } = s;
  const read = s.req.method === 'GET' || s.req.method === 'HEAD';
  if (read && info.resource === '' && serveDiscovery(c, s, info.path)) return;
  const r = c.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!r) {
    // Inside a group/version with built-in resources, go-restful answers with a Status; anywhere
    // else (no such group/version, or one only custom resources serve) the not-found handler's text.
    const builtIn = c.registry.resources.some(
      (x) => !x.registration.customResource && x.descriptor.group === info.apiGroup && x.descriptor.version === info.apiVersion,
    );
    throw builtIn ? pageNotFound() : notFoundPage();
  }
  return serveResource(c, s, r);
}

/** The group/version an aggregated request names: `/apis/<group>/<version>[/...]` or its OpenAPI v3 document. */
function aggregatedGroupVersion(path: string): { group: string; version: string } | undefined {
  const m = /^\/(?:openapi\/v3\/)?apis\/([^/]+)\/([^/]+)/.exec(path);
  return m ? { group: m[1]!, version: m[2]! } : undefined;
}
