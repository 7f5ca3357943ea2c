// Serves /openapi/v2 (JSON or gnostic protobuf) and /openapi/v3 (index + per group-version JSON)
// from documents built from the registry on first use; `invalidate()` after the served set changes.
import { notAcceptable } from '../apimachinery/errors.js';
import {
  buildOpenAPIV2Service,
  buildOpenAPIV3Service,
  negotiateOpenAPIV2,
  negotiateOpenAPIV3,
  type OpenAPIV2Service,
  type OpenAPIV3Service,
} from '../apimachinery/openapi/index.js';
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import { pruneDisabledDefinitions } from '../registry/gated-fields.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { OpenAPIProvider, Request, Response, VersionInfo } from './apiserver.js';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import type { RemoteGroupVersion } from './discovery.js';
import { gzip } from 'node:zlib';
import { endCompressed, firstHeaderValue } from './compression.js';
import { parseGoFloat } from '../golang/strconv.js';

const gzipAsync = promisify(gzip);

/** gziphandler's DefaultMinSize: smaller answers are sent as they are. */
const GZIP_HANDLER_MIN_SIZE = 1400;

/**
 * gziphandler's acceptsGzip (v1.1.1, as kube-openapi uses it): the Accept-Encoding codings,
 * lower-cased, mapped to their q; a coding whose `q=` does not parse as a float (or that is empty)
 * is skipped. parseCoding resets q to 1 at every `;` part, so only a `q=` in the last part counts
 * (`gzip;q=0;x=y` is q 1). gzip must end above 0.
 */
function gzipHandlerAccepts(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let q = 0;
  for (const coding of acceptEncoding.split(',')) {
    const parts = coding.split(';');
    const name = parts[0]!.trim().toLowerCase();
    let value = 1;
    let bad = name === '';
    for (const part of parts.slice(1)) {
      const p = part.trim();
      value = 1;
      if (!p.startsWith('q=')) continue;
      const parsed = parseGoFloat(p.slice(2), 64);
      if (parsed.err) bad = true;
      value = parsed.value < 0 ? 0 : parsed.value > 1 ? 1 : parsed.value;
    }
    // Later codings of the same name replace earlier ones (a map).
    if (!bad && name === 'gzip') q = value;
  }
  return q > 0;
}

export function buildOpenAPIProvider(
  registry: ApiRegistry,
  version: VersionInfo,
  /** The aggregator's group/versions: listed in the v3 index, their documents proxied to their servers. */
  remote?: () => readonly RemoteGroupVersion[],
): OpenAPIProvider & { invalidate(): void } {
  let v2: OpenAPIV2Service | undefined;
  let v3: OpenAPIV3Service | undefined;
  let v2MergedKey = '';
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
    // Gated fields whose feature is off are left out of the documents (not of the registry's
    // definitions, which still decode and prune request bodies with them).
    definitions: pruneDisabledDefinitions(
      registry.definitions,
      registry.resources.flatMap((r) =>
        r.registration.gatedFields?.length ? [{ definition: r.descriptor.definitionName, fields: r.registration.gatedFields }] : [],
      ),
      registry.features,
    ),
    version: { gitVersion: version.gitVersion },
    returnsDeletedObject: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.returnDeletedObject ?? false,
    supportsStrategicMergePatch: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.strategicMergePatch !== false,
    customResource: (d: ResourceDescriptor) => registry.lookup(d.group, d.version, d.plural)?.registration.customResource === true,
  });
  /** The v2 documents gzipped (for gziphandler's clients), made once per document on first use. */
  const gzipped = new WeakMap<Buffer, Promise<Buffer>>();
  const send = (req: Request, res: Response, body: Buffer, contentType: string, etag: string, gzipHandler = false): void => {
    // kube-openapi serves /openapi/v2 through gziphandler, which adds Vary: Accept-Encoding to every answer.
    res.setHeader('Vary', gzipHandler ? ['Accept-Encoding', 'Accept'] : 'Accept');
    res.setHeader('ETag', `"${etag}"`);
    if (req.headers['if-none-match'] === `"${etag}"`) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', contentType);
    if (!gzipHandler || body.length < GZIP_HANDLER_MIN_SIZE || !gzipHandlerAccepts(firstHeaderValue(req, 'accept-encoding'))) {
      res.end(body);
      return;
    }
    let gz = gzipped.get(body);
    if (gz === undefined) {
      gz = gzipAsync(body);
      gzipped.set(body, gz);
    }
    gz.then(
      (compressed) => endCompressed(res, body, compressed),
      () => endCompressed(res, body, undefined),
    );
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
        // Other servers' documents (aggregated APIs) are merged in; rebuilt when one of them changes.
        const parts = remote?.().flatMap((r) => (r.openAPIV2 ? [r.openAPIV2] : [])) ?? [];
        const key = parts.map((x) => x.hash).join(',');
        if (key !== v2MergedKey) {
          v2 = undefined;
          v2MergedKey = key;
        }
        const doc = (v2 ??= buildOpenAPIV2Service(input(), parts));
        const n = negotiateOpenAPIV2(accept);
        if (!n)
          throw notAcceptable('only the following media types are accepted: application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
        send(req, res, n.kind === 'protobuf' ? doc.protobuf : doc.json, n.contentType, doc.etag, true);
        return true;
      }
      if (p === '/openapi/v3' || p.startsWith('/openapi/v3/')) {
        const svc = (v3 ??= buildOpenAPIV3Service(input()));
        if (p === '/openapi/v3') {
          const merged = remote ? mergeRemoteIndex(svc.indexJson, remote()) : undefined;
          if (merged) send(req, res, merged.json, 'application/json', merged.hash);
          else send(req, res, svc.indexJson, 'application/json', svc.indexHash);
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

/**
 * The v3 index with other servers' group/versions in it (what the aggregator's OpenAPI v3
 * controller lists): each points at `/openapi/v3/apis/<group>/<version>`, which the router proxies
 * to that server; the hash is its discovery document's, so a changed server gets a new URL.
 * Undefined when no other server has a group/version with a successful check.
 */
function mergeRemoteIndex(indexJson: Buffer, remote: readonly RemoteGroupVersion[]): { json: Buffer; hash: string } | undefined {
  const entries = remote.filter((r) => r.resourcesHash !== undefined);
  if (entries.length === 0) return undefined;
  const index = JSON.parse(indexJson.toString('utf8')) as { paths: Record<string, unknown> };
  for (const r of entries)
    index.paths[`apis/${r.group}/${r.version}`] = { serverRelativeURL: `/openapi/v3/apis/${r.group}/${r.version}?hash=${r.resourcesHash}` };
  const paths = Object.fromEntries(
    Object.keys(index.paths)
      .sort()
      .map((k) => [k, index.paths[k]]),
  );
  const json = Buffer.from(JSON.stringify({ ...index, paths }));
  return { json, hash: createHash('sha512').update(json).digest('hex').toUpperCase() };
}
