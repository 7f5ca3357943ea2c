// APIResponseCompression, decided per request: whether the handlers may gzip a large answer for a
// client that asks (compression.ts does the asking and the gzip). Off: answers go out as they are.
import type { Filter } from '../request-scope.js';

export function withResponseCompression(enabled: boolean | (() => boolean)): Filter {
  if (typeof enabled === 'boolean')
    return (next) =>
      enabled
        ? (s) => {
            s.compress = true;
            return next(s);
          }
        : next;
  return (next) => (s) => {
    if (enabled()) s.compress = true;
    return next(s);
  };
}
