// WithLatencyTrackers and the request instrumentation upstream's handlers wrap themselves in:
// apiserver_request_total and apiserver_request_duration_seconds, once per request, at 'finish', or
// at 'close' for a stream the client ended (a watch), as upstream counts those too. A request a
// filter terminated (a 429) is counted as a termination instead.
import type { ApiMetrics } from '../metrics.js';
import { header, type Filter, type RequestScope } from '../request-scope.js';

export function withRequestMetrics(metrics: ApiMetrics | undefined): Filter {
  return (next) =>
    metrics === undefined
      ? next
      : (s) => {
          const record = recordOnce(metrics, s);
          s.res.on('finish', record);
          s.res.on('close', record);
          return next(s);
        };
}

/**
 * The request's metrics, recorded the first time the returned function runs. A module function
 * returning an unnamed arrow: tsx (esbuild's keepNames) would name a `const` arrow made per request
 * with a defineProperty call.
 */
function recordOnce(m: ApiMetrics, s: RequestScope): () => void {
  let recorded = false;
  return () => {
    if (recorded || s.terminated) return;
    recorded = true;
    m.recordRequest(s.req.method ?? 'GET', s.info, s.query, header(s.req, 'content-type'), s.res.statusCode, (performance.now() - s.started) / 1000);
  };
}
