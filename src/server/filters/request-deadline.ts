// WithRequestDeadline's reading of `?timeout=`: a value that is not a Go duration is refused (400)
// before anything else looks at the request. The timeout filter turns it into the deadline.
import { badRequest } from '../../apimachinery/errors.js';
import { parseGoDuration } from '../../golang/time.js';
import type { Filter } from '../request-scope.js';

export const withRequestDeadline: Filter = (next) => (s) => {
  const timeoutParam = s.longRunning ? null : s.query.get('timeout');
  if (timeoutParam) {
    const d = parseGoDuration(timeoutParam);
    if ('error' in d) throw badRequest(`invalid timeout specified in the request URL - ${d.error}`);
    s.userTimeoutMs = Number(d.ns) / 1e6;
  }
  return next(s);
};
