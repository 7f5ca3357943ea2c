// Response compression as kube-apiserver's APIResponseCompression does it (apiserver
// endpoints/handlers/responsewriters: writers.go's deferredResponseWriter, compression.go,
// encodings/gzip.go). An API object, list or Status written through the negotiated serializer is
// gzipped (level 1) when the client's Accept-Encoding names gzip and the body is larger than 128 KiB;
// the answer then carries `Content-Encoding: gzip` and `Vary: Accept-Encoding`. Smaller bodies,
// clients that do not ask, watch streams and the raw JSON of /version, health and the index are
// sent as they are. Go's HTTP client asks on every request (its transport adds
// `Accept-Encoding: gzip` and undoes the encoding itself), so kubectl and client-go get large lists
// compressed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzip } from 'node:zlib';
import { goTrimSpace } from '../golang/strings.js';

/** defaultGzipThresholdBytes: bodies up to this size are never compressed. */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;
/** defaultGzipContentEncodingLevel: the least CPU for ratios close to the higher levels'. */
export const GZIP_LEVEL = 1;

/**
 * responseContentEncodingSupported: whether an Accept-Encoding value (the first such header, as Go's
 * Header.Get reads it, in node's latin1 text) lists the token `gzip`. Comma-separated tokens are
 * compared exactly once trimmed, so `gzip;q=1`, `GZIP`, `x-gzip` and `*` do not count (nor does
 * `gzip;q=0` refuse anything that another token asked for).
 */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  // Go trims runes of the header's bytes: node decoded those bytes as latin1, so decode them as UTF-8.
  const text = /[^\x00-\x7f]/.test(acceptEncoding) ? Buffer.from(acceptEncoding, 'latin1').toString('utf8') : acceptEncoding;
  for (const token of text.split(',')) if (goTrimSpace(token) === 'gzip') return true;
  return false;
}

/** A request as the header readers need it: the in-process loopback request has no rawHeaders. */
export type HeaderSource = Pick<IncomingMessage, 'headers'> & { rawHeaders?: readonly string[] };

/** The first value of a request header, as Go's Header.Get returns it (node joins repeated ones). */
export function firstHeaderValue(req: HeaderSource, name: string): string | undefined {
  const v = req.headers[name];
  // Absent, or one line (node joins repeated lines with ", "): no need to look at the raw lines.
  if (v === undefined || (typeof v === 'string' && !v.includes(','))) return v;
  const raw = req.rawHeaders;
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) return raw[i + 1];
    return undefined;
  }
  return Array.isArray(v) ? v[0] : v;
}

/** Every value of a request header in order, as Go's `Header[name]` holds them (`name` in lower case). */
export function headerValues(req: HeaderSource, name: string): string[] {
  const v = req.headers[name];
  const raw = req.rawHeaders;
  if (v === undefined || raw === undefined) return v === undefined ? [] : Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

/** Whether a body is over the threshold; a string's UTF-8 length is counted only when its length leaves it open. */
export function overGzipThreshold(body: string | Uint8Array): boolean {
  if (typeof body !== 'string') return body.byteLength > GZIP_THRESHOLD_BYTES;
  // One to three UTF-8 bytes per UTF-16 unit.
  if (body.length > GZIP_THRESHOLD_BYTES) return true;
  if (body.length * 3 <= GZIP_THRESHOLD_BYTES) return false;
  return Buffer.byteLength(body) > GZIP_THRESHOLD_BYTES;
}

/**
 * Ends `res` with `body` (status and Content-Type already set), gzipped when `enabled`, the body is
 * over the threshold and the request asked for gzip. Small bodies pay one length check. The
 * compression runs on libuv's thread pool; the answer is sent when it is done.
 */
export function endBody(res: ServerResponse, body: string | Uint8Array, enabled: boolean): void {
  if (!enabled || !overGzipThreshold(body)) {
    endWhole(res, body);
    return;
  }
  // The in-process loopback response has no request; its client never asks for gzip.
  const req = (res as { req?: IncomingMessage }).req;
  if (req === undefined || !acceptsGzip(firstHeaderValue(req, 'accept-encoding'))) {
    endWhole(res, body);
    return;
  }
  gzip(body, { level: GZIP_LEVEL }, (err, compressed) =>
    endCompressed(res, body, err ? undefined : compressed, () => {
      // header.Add: a Vary the handler set (Accept, on discovery) stays.
      const vary = res.getHeader('Vary');
      res.setHeader('Vary', vary === undefined ? 'Accept-Encoding' : [...(Array.isArray(vary) ? vary : [String(vary)]), 'Accept-Encoding']);
    }),
  );
}

/**
 * Ends `res` with the whole of its body. Over HTTP/2 with a Content-Length, as Go's server sends a
 * body its handler wrote in full: node's HTTP/1.1 response adds one itself, its HTTP/2 response
 * does not, and without it a client (or kplane's aggregator proxying to an HTTP/1.1 client, which
 * then frames the answer chunked) knows the body is complete only from the END_STREAM frame, which
 * node sends in a write of its own after the data.
 */
function endWhole(res: ServerResponse, body: string | Uint8Array): void {
  const bodiless = res.statusCode === 204 || res.statusCode === 304;
  if (!bodiless && !res.headersSent && (res as { stream?: unknown }).stream !== undefined && !res.hasHeader('Content-Length'))
    res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  res.end(body);
}

/**
 * Ends `res` with `compressed` as `Content-Encoding: gzip` (after `moreHeaders`), or with `body`
 * when compressing failed (never seen for an in-memory body; the client still gets its answer). A
 * response that can no longer be written (the client went away) is destroyed: nothing to answer.
 * For every answer gzipped off the event loop: API bodies, /openapi/v2, /metrics.
 */
export function endCompressed(res: ServerResponse, body: string | Uint8Array, compressed: Buffer | undefined, moreHeaders?: () => void): void {
  try {
    if (compressed === undefined) {
      endWhole(res, body);
      return;
    }
    res.setHeader('Content-Encoding', 'gzip');
    moreHeaders?.();
    endWhole(res, compressed);
  } catch {
    res.destroy();
  }
}
