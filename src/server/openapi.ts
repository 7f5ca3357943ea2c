// Serves /openapi/v2 (JSON or gnostic protobuf) and /openapi/v3 (index + per group-version JSON)
// from documents built from the registry on first use; `invalidate()` after the served set changes.
import { notAcceptable } from '../apimachinery/errors.js';
import { buildOpenAPIV2Service, buildOpenAPIV3Service, negotiateOpenAPIV2, negotiateOpenAPIV3, type OpenAPIV2Service, type OpenAPIV3Service } from '../apimachinery/openapi/index.js';
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { OpenAPIProvider, Request, Response, VersionInfo } from './apiserver.js';

export function buildOpenAPIProvider(registry: ApiRegistry, version: VersionInfo): OpenAPIProvider & { invalidate(): void } {
  let v2: OpenAPIV2Service | undefined;
  let v3: OpenAPIV3Service | undefined;
  // Resources come and go at runtime (CRDs): documents are rebuilt after the registry changes.
  let builtFor = registry.generation;
  const fresh = (): void => {
    if (builtFor === registry.generation) return;
    builtFor = registry.generation;
    v2 = undefined;
    v3 = undefined;
  };
  const input = () => ({
    resources: registry.resources.map((r) => r.descriptor),
    definitions: registry.definitions,
    version: { gitVersion: version.gitVersion },
    returnsDeletedObject: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.returnDeletedObject ?? false,
    supportsStrategicMergePatch: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.strategicMergePatch !== false,
    customResource: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.customResource === true,
  });
  const send = (req: Request, res: Response, body: Buffer, contentType: string, etag: string): void => {
    res.setHeader('ETag', `"${etag}"`);
    res.setHeader('Vary', 'Accept');
    if (req.headers['if-none-match'] === `"${etag}"`) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', contentType);
    res.end(body);
  };
  return {
    invalidate() {
      v2 = undefined;
      v3 = undefined;
    },
    handle(path: string, query: URLSearchParams, accept: string | undefined, res: Response, req: Request): boolean {
      const p = path.replace(/\/+$/, '');
      fresh();
      if (p === '/openapi/v2') {
        const doc = (v2 ??= buildOpenAPIV2Service(input()));
        const n = negotiateOpenAPIV2(accept);
        if (!n) throw notAcceptable('only the following media types are accepted: application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
        send(req, res, n.kind === 'protobuf' ? doc.protobuf : doc.json, n.contentType, doc.etag);
        return true;
      }
      if (p === '/openapi/v3' || p.startsWith('/openapi/v3/')) {
        const svc = (v3 ??= buildOpenAPIV3Service(input()));
        if (p === '/openapi/v3') {
          send(req, res, svc.indexJson, 'application/json', svc.indexHash);
          return true;
        }
        const doc = svc.documents.get(p.slice('/openapi/v3/'.length));
        if (!doc) return false;
        const n = negotiateOpenAPIV3(accept);
        if (!n) throw notAcceptable('only the following media types are accepted: application/json');
        const hash = query.get('hash');
        if (hash && hash !== doc.hash) {
          // A stale hash: point the client at the current document, as kube-openapi does.
          res.statusCode = 301;
          res.setHeader('Location', doc.serverRelativeURL);
          res.end();
          return true;
        }
        res.setHeader('Cache-Control', hash ? 'public, immutable' : 'no-cache, private');
        if (hash) res.setHeader('Expires', new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString());
        send(req, res, doc.json, n.contentType, doc.hash);
        return true;
      }
      return false;
    },
  };
}
