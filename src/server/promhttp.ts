// A /metrics answer as the Prometheus Go client's promhttp handler writes it (kube-apiserver's and
// kube-controller-manager's /metrics): `Vary: Accept` and `Vary: Accept-Encoding` on every answer,
// and the exposition gzipped when content-encoding negotiation picks gzip over identity. The
// negotiation is client_golang's vendored copy of gddo's httputil.NegotiateContentEncoding with
// the offers promhttp makes without zstd (identity, then gzip): every Accept-Encoding header is
// parsed as header.ParseAccept does, the highest q wins, an equal q keeps the earlier offer (so `*`
// alone means identity), and a winning q of 0 means no acceptable offer, which promhttp answers
// uncompressed. Scrapers such as Prometheus send `Accept-Encoding: gzip`.
import type { ServerResponse } from 'node:http';
import { gzip } from 'node:zlib';
import { endCompressed, headerValues, type HeaderSource } from './compression.js';

interface AcceptSpec {
  readonly value: string;
  readonly q: number;
}

const OFFERS = ['identity', 'gzip'] as const;
export type MetricsEncoding = (typeof OFFERS)[number];

// RFC 2616 octet classes as gddo's header package builds them.
const SEPARATORS = ' \t"(),/:;<=>?@[]\\{}';
function isToken(c: number): boolean {
  return c > 31 && c < 127 && !SEPARATORS.includes(String.fromCharCode(c));
}
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** header.ParseAccept over each value of the header (node's latin1 text is Go's bytes). */
export function parseAcceptSpecs(values: readonly string[]): AcceptSpec[] {
  const specs: AcceptSpec[] = [];
  for (const s of values) {
    let i = 0;
    for (;;) {
      const start = i;
      while (i < s.length && (isToken(s.charCodeAt(i)) || s[i] === '/')) i++;
      const value = s.slice(start, i);
      if (value === '') break;
      let q = 1;
      i = skipSpace(s, i);
      if (s[i] === ';') {
        i = skipSpace(s, i + 1);
        if (!s.startsWith('q=', i)) break;
        const parsed = expectQuality(s, i + 2);
        if (parsed.q < 0) break;
        q = parsed.q;
        i = parsed.next;
      }
      specs.push({ value, q });
      i = skipSpace(s, i);
      if (s[i] !== ',') break;
      i = skipSpace(s, i + 1);
    }
  }
  return specs;
}

// header.expectQuality: `0` or `1`, then optionally `.` and digits (any number of them, so 1.5
// is 1.5 and 0.0000 is 0); anything else is no quality (-1).
function expectQuality(s: string, i: number): { q: number; next: number } {
  const c = s[i];
  if (c !== '0' && c !== '1') return { q: -1, next: s.length };
  let q = c === '1' ? 1 : 0;
  i++;
  if (s[i] !== '.') return { q, next: i };
  i++;
  let n = 0;
  let d = 1;
  while (i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39) {
    n = n * 10 + (s.charCodeAt(i) - 0x30);
    d *= 10;
    i++;
  }
  q += n / d;
  return { q, next: i };
}

/** The encoding promhttp answers with for these Accept-Encoding header values. */
export function negotiateMetricsEncoding(acceptEncoding: readonly string[]): MetricsEncoding {
  let best: MetricsEncoding = 'identity';
  let bestQ = -1;
  const specs = parseAcceptSpecs(acceptEncoding);
  for (const offer of OFFERS) {
    for (const spec of specs) {
      if (spec.q > bestQ && (spec.value === '*' || spec.value === offer)) {
        bestQ = spec.q;
        best = offer;
      }
    }
  }
  // A best q of 0 is NegotiateContentEncoding's "" (nothing acceptable): promhttp logs it and
  // writes identity.
  return bestQ === 0 ? 'identity' : best;
}

/**
 * Answers a scrape with the exposition `body` of `contentType` (status 200), gzipped (Go's
 * default level, 6) when the request's Accept-Encoding makes gzip the choice.
 */
export function sendMetrics(req: HeaderSource, res: ServerResponse, body: string, contentType: string): void {
  res.statusCode = 200;
  res.setHeader('Vary', ['Accept', 'Accept-Encoding']);
  res.setHeader('Content-Type', contentType);
  if (negotiateMetricsEncoding(headerValues(req, 'accept-encoding')) !== 'gzip') {
    res.end(body);
    return;
  }
  gzip(body, (err, compressed) => endCompressed(res, body, err ? undefined : compressed));
}
