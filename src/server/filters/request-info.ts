// WithRequestInfo: what the request is about (verb, group, version, namespace, resource, name),
// read once from the method, path and query, for every filter and handler after it.
import { badRequest } from '../../apimachinery/errors.js';
import { firstHeaderValue } from '../compression.js';
import type { Filter } from '../request-scope.js';
import { parseRequestInfo } from '../requestinfo.js';

export const withRequestInfo: Filter = (next) => (s) => {
  const { path, query } = splitRequestTarget(s.req.url ?? '/');
  s.query = new URLSearchParams(query);
  s.info = parseRequestInfo(s.req.method ?? 'GET', decodePath(path), s.query);
  // Upstream's LongRunningFunc: here only watches (no deadline, no in-flight slot).
  s.longRunning = s.info.verb === 'watch';
  s.accept = firstHeaderValue(s.req, 'accept');
  return next(s);
};

/**
 * The path and query of a request target as Go's net/http reads them (url.ParseRequestURI): the
 * path as sent. WHATWG URL parsing would resolve `.` and `..` segments (also `%2e%2e`), serving
 * `/api/v1/namespaces/a/configmaps/../../b/secrets` as b's secrets, where kube-apiserver's router
 * sees the segments as they are (and answers 404): what authorization sees must be what is served.
 */
function splitRequestTarget(target: string): { path: string; query: string } {
  // absolute-form (`https://host/path`), which HTTP/1.1 allows: the path is what follows the authority
  const abs = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/.exec(target);
  const rest = abs ? target.slice(abs[0].length) : target;
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  return { path: path === '' ? '/' : path, query: q < 0 ? '' : rest.slice(q + 1) };
}

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    throw badRequest(`invalid URL path encoding: ${p}`);
  }
}
