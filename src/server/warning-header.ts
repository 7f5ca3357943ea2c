// Warning headers (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/warning.go): how a
// warning is written, and appending to what a response already carries.
import type { OutgoingMessage } from 'node:http';

type HeaderTarget = Pick<OutgoingMessage, 'getHeader' | 'setHeader'>;

export function setWarnings(res: HeaderTarget, warnings: readonly string[]): void {
  if (!warnings.length) return;
  // Appends: a resource-wide warning (deprecated version) may already be set.
  const prev = res.getHeader('Warning');
  const before = prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)];
  res.setHeader('Warning', [...before, ...warnings.map(warningHeaderValue)]);
}

/**
 * `299 - "<text>"` as upstream's NewWarningHeader writes it (quoted, `"` and `\` escaped). Node
 * refuses control characters and anything above U+00FF in headers, and HTTP/1 re-encodes
 * U+0080..U+00FF with the body's encoding, so everything outside printable ASCII is `\uXXXX`-escaped.
 */
export function warningHeaderValue(text: string): string {
  const quoted = JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - ${quoted}`;
}
