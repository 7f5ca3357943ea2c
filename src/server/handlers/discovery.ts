// Discovery documents (upstream's discovery handlers): /api and /apis, aggregated (v2, v2beta1;
// cacheable with an ETag) or as APIVersions/APIGroupList, and each group's and group-version's.
import { AGGREGATED_DISCOVERY_V2, AGGREGATED_DISCOVERY_V2BETA1 } from '../discovery.js';
import { endBody } from '../compression.js';
import { parseAccept } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { writeNegotiated } from './responsewriters.js';
import type { ServerContext } from './context.js';

/** Answers a discovery path; false when `path` is none. */
export function serveDiscovery(c: ServerContext, s: RequestScope, path: string): boolean {
  const p = path.replace(/\/+$/, '');
  const d = c.discovery;
  if (p === '/api' || p === '/apis') {
    const aggregated = pickAggregated(s.accept);
    if (aggregated) {
      const body = d.aggregated(p === '/api' ? 'core' : 'groups', aggregated);
      const etag = d.etag(body);
      s.res.setHeader('ETag', etag);
      s.res.setHeader('Vary', 'Accept');
      // ServeHTTPWithETag: a cacheable document (clients revalidate with If-None-Match).
      s.res.setHeader('Cache-Control', 'public');
      if (header(s.req, 'if-none-match') === etag) {
        s.res.statusCode = 304;
        s.res.end();
        return true;
      }
      s.res.statusCode = 200;
      s.res.setHeader('Content-Type', `application/json;g=apidiscovery.k8s.io;v=${aggregated};as=APIGroupDiscoveryList`);
      endBody(s.res, body, s.compress);
      return true;
    }
    const obj = p === '/api' ? d.apiVersions(c.serverAddress()) : d.apiGroupList();
    writeNegotiated(s, 200, obj);
    return true;
  }
  const m = /^\/api\/([^/]+)$/.exec(p) ?? /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
  if (m) {
    const group = p.startsWith('/api/') ? '' : m[1]!;
    const version = p.startsWith('/api/') ? m[1]! : m[2]!;
    const list = d.resourceList(group, version);
    if (!list) return false;
    writeNegotiated(s, 200, list);
    return true;
  }
  const g = /^\/apis\/([^/]+)$/.exec(p);
  if (g) {
    const group = d.apiGroup(g[1]!);
    if (!group) return false;
    writeNegotiated(s, 200, group);
    return true;
  }
  return false;
}

function pickAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const r of parseAccept(accept)) {
    if (`${r.type}/${r.subtype}` !== 'application/json') continue;
    if (r.params.g === 'apidiscovery.k8s.io' && r.params.as === 'APIGroupDiscoveryList') {
      if (r.params.v === 'v2') return AGGREGATED_DISCOVERY_V2;
      if (r.params.v === 'v2beta1') return AGGREGATED_DISCOVERY_V2BETA1;
    }
    if (!r.params.as) return undefined;
  }
  return undefined;
}
