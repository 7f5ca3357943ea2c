// Warning headers (k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/warning.go): how a
// warning is written, and the per-request recorder (filters/warning.go) that de-duplicates and
// bounds them.
import type { OutgoingMessage } from 'node:http';

type HeaderTarget = Pick<OutgoingMessage, 'getHeader' | 'setHeader'>;

// upstream's recorder limits (filters/warning.go): past 4 Ki runes in all, every warning is cut
// to 256 runes, and warnings past the limit are dropped.
const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

/** What one response's warnings recorder remembers (upstream's recorder, one per request). */
interface Recorded {
  readonly seen: Set<string>;
  readonly ordered: string[];
  written: number;
  truncating: boolean;
}
const recorders = new WeakMap<HeaderTarget, Recorded>();

const runes = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};
const cut = (text: string): string => [...text].slice(0, TRUNCATE_ITEM_RUNES).join('');

/**
 * Adds warnings to the response's Warning headers as upstream's recorder does: an empty text or
 * one already recorded for this response is dropped, and past 4 Ki runes in all the recorded ones
 * are written again cut to 256 runes each, and later ones cut too until the limit drops them.
 */
export function setWarnings(res: HeaderTarget, warnings: readonly string[]): void {
  for (const text of warnings) addWarning(res, text);
}

function addWarning(res: HeaderTarget, text: string): void {
  if (!text) return;
  let r = recorders.get(res);
  if (!r) recorders.set(res, (r = { seen: new Set(), ordered: [], written: 0, truncating: false }));
  if (r.truncating && r.written >= TRUNCATE_AT_TOTAL_RUNES) return;
  if (r.seen.has(text)) return;
  r.seen.add(text);
  r.ordered.push(text);
  let length = runes(text);
  let value = text;
  if (r.truncating && length > TRUNCATE_ITEM_RUNES) {
    value = cut(text);
    length = TRUNCATE_ITEM_RUNES;
  }
  if (r.written + length <= TRUNCATE_AT_TOTAL_RUNES || r.truncating) {
    r.written += length;
    append(res, [warningHeaderValue(value)]);
    return;
  }
  // Over the limit: start truncating and write every recorded warning again, each cut.
  r.truncating = true;
  r.written = 0;
  const headers: string[] = [];
  for (const w of r.ordered) {
    const n = runes(w);
    headers.push(warningHeaderValue(n > TRUNCATE_ITEM_RUNES ? cut(w) : w));
    r.written += Math.min(n, TRUNCATE_ITEM_RUNES);
  }
  res.setHeader('Warning', headers);
}

function append(res: HeaderTarget, values: string[]): void {
  const prev = res.getHeader('Warning');
  const before = prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)];
  res.setHeader('Warning', [...before, ...values]);
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
