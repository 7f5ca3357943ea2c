// WithPanicRecovery: whatever a filter inside throws, or rejects with, becomes an answer instead
// of an unhandled error. Filters refuse requests by throwing a StatusError (400, 401, 429); those
// answers are JSON whatever the client accepts, as they always were here. Handlers answer their
// own errors (negotiated), so nothing they do reaches this filter.
import type { ErrorSink } from '../config.js';
import type { Filter } from '../request-scope.js';
import { writeError } from '../handlers/responsewriters.js';

export function withPanicRecovery(sink: ErrorSink): Filter {
  return (next) => (s) => {
    try {
      const pending = next(s);
      if (pending !== undefined) pending.catch((e: unknown) => writeError(sink, s.res, e, undefined));
    } catch (e) {
      writeError(sink, s.res, e, undefined);
    }
  };
}
