// WithLatencyTrackers and the request instrumentation upstream's handlers wrap themselves in:
// apiserver_request_total and apiserver_request_duration_seconds, once per request, when its
// response closes: after it finished, or when the client ended the stream (a watch), as upstream
// counts those too. A request a filter terminated (a 429) is counted as a termination instead.
import type { ApiMetrics } from '../metrics.js';
import type { Filter } from '../request-scope.js';

export function withRequestMetrics(metrics: ApiMetrics | undefined): Filter {
  return (next) =>
    metrics === undefined
      ? next
      : (s) => {
          s.metrics = metrics;
          s.cleanUpOnClose();
          return next(s);
        };
}
