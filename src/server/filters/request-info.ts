// WithRequestInfo: what the request is about (verb, group, version, namespace, resource, name),
// read once from the method, path and query, for every filter and handler after it.
import { badRequest } from '../../apimachinery/errors.js';
import { firstHeaderValue } from '../compression.js';
import type { Filter } from '../request-scope.js';
import { parseRequestInfo } from '../requestinfo.js';

export const withRequestInfo: Filter = (next) => (s) => {
  const url = new URL(s.req.url ?? '/', 'https://kplane.invalid');
  s.query = url.searchParams;
  s.info = parseRequestInfo(s.req.method ?? 'GET', decodePath(url.pathname), s.query);
  // Upstream's LongRunningFunc: here only watches (no deadline, no in-flight slot).
  s.longRunning = s.info.verb === 'watch';
  s.accept = firstHeaderValue(s.req, 'accept');
  return next(s);
};

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    throw badRequest(`invalid URL path encoding: ${p}`);
  }
}
