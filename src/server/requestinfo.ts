// RequestInfo: what a request is about, parsed from method + path as kube-apiserver does
// (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go). Filters and handlers read it.

export interface RequestInfo {
  /** True for /api and /apis resource paths; false for /healthz, /openapi, /version, ... */
  readonly isResourceRequest: boolean;
  readonly path: string;
  /** Lower-case kube verb: get, list, watch, create, update, patch, delete, deletecollection; or the HTTP verb for non-resource paths. */
  readonly verb: string;
  readonly apiPrefix: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly parts: readonly string[];
}

const specialVerbs = new Set(['proxy', 'watch']);
const namespaceSubresources = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  // Module functions, not closures: tsx (esbuild's keepNames) names each closure made per call.
  const segments = path.split('/').filter(nonEmpty);
  if (segments.length < 1) return nonResource(method, path);
  const prefix = segments[0]!;
  let rest: string[];
  let group = '';
  let version: string;
  // Discovery paths (/api, /api/v1, /apis, /apis/g, /apis/g/v) are non-resource requests, as
  // upstream's RequestInfoFactory makes them: fewer than three parts after `api`, four after `apis`.
  if (prefix === 'api') {
    if (segments.length < 3) return nonResource(method, path);
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (prefix === 'apis') {
    if (segments.length < 4) return nonResource(method, path);
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else {
    return nonResource(method, path);
  }
  let verb: string;
  switch (method) {
    case 'POST':
      verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      verb = 'get';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = 'delete';
      break;
    default:
      verb = method.toLowerCase();
  }
  if (rest.length > 0 && specialVerbs.has(rest[0]!)) {
    verb = rest[0]!;
    rest = rest.slice(1);
  }
  let namespace = '';
  let parts = rest;
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1]!;
    // /namespaces/{ns}/{resource}/... is about {resource}; /namespaces/{ns}[/status|/finalize] is the namespace itself.
    if (parts.length > 2 && !namespaceSubresources.has(parts[2]!)) parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts.length >= 3 ? parts[2]! : '';
  if (verb === 'get' && !name) verb = queryBool(query.get('watch')) ? 'watch' : 'list';
  if ((verb === 'watch' || verb === 'list') && !name) {
    // Like upstream, an exact metadata.name field selector names the object (for authorization).
    const exact = /^metadata\.name==?([^,]*)$/.exec(query.get('fieldSelector') ?? '');
    if (exact && exact[1]) name = exact[1];
  }
  if (verb === 'delete' && !name) verb = 'deletecollection';
  return {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix: prefix,
    apiGroup: group,
    apiVersion: version,
    namespace,
    resource,
    subresource,
    name,
    parts,
  };
}

function nonEmpty(s: string): boolean {
  return s !== '';
}

/** What a request that is not about a resource (or not yet parsed, with empty method and path) is. */
export function nonResource(method: string, path: string): RequestInfo {
  return {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
}

/**
 * A boolean query parameter as kube's parameter codec reads it (runtime.Convert_Slice_string_To_bool):
 * absent, "0" or "false" in any case is false, anything else, even "" or "True", is true. The
 * Python client sends `watch=True`.
 */
export function queryBool(v: string | null): boolean {
  if (v === null) return false;
  return v !== '0' && v.toLowerCase() !== 'false';
}
