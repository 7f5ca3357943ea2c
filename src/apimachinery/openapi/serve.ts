// Serialized forms and content negotiation for /openapi/v2 and /openapi/v3, mirroring
// kube-openapi's handlers: Accept clauses are tried by preference (q, then specificity) and the
// first representation we have wins; `*/*` or no Accept gives JSON; nothing acceptable is a 406.
// ETags are the upper-case hex SHA-512 of the JSON bytes (shared by the protobuf form, which
// varies only by Accept).

import { GNOSTIC_V2_CONTENT_TYPE, GNOSTIC_V2_CONTENT_TYPE_ALT, encodeGnosticV2 } from './gnostic.js';
import type { OpenAPIV2Input, SwaggerDocument } from './v2.js';
import { buildOpenAPIV2 } from './v2.js';
import { openAPIHash } from './v3.js';
import { stringifyJSON } from '../../golang/json-int64.js';

export interface OpenAPIV2Service {
  readonly json: Buffer;
  readonly protobuf: Buffer;
  readonly etag: string;
}

export function buildOpenAPIV2Service(input: OpenAPIV2Input, merge: readonly OpenAPIV2Part[] = []): OpenAPIV2Service {
  const doc = buildOpenAPIV2(input);
  if (merge.length) mergeOpenAPIV2(doc, merge);
  const json = Buffer.from(stringifyJSON(doc));
  return { json, protobuf: Buffer.from(encodeGnosticV2(doc)), etag: openAPIHash(json) };
}

/** Paths and definitions of another server's document (an aggregated API's). */
export interface OpenAPIV2Part {
  readonly paths: Readonly<Record<string, unknown>>;
  readonly definitions: Readonly<Record<string, unknown>>;
}

/**
 * Adds other servers' paths and definitions to `doc`, as the aggregator's spec merger does for
 * what does not clash: what this server has already wins. Keys stay sorted (Go's map order).
 */
function mergeOpenAPIV2(doc: SwaggerDocument, parts: readonly OpenAPIV2Part[]): void {
  const paths: Record<string, unknown> = { ...doc.paths };
  const definitions: Record<string, unknown> = { ...doc.definitions };
  for (const part of parts) {
    for (const [k, v] of Object.entries(part.paths)) if (!(k in paths)) paths[k] = v;
    for (const [k, v] of Object.entries(part.definitions)) if (!(k in definitions)) definitions[k] = v;
  }
  const sorted = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  doc.paths = sorted(paths) as SwaggerDocument['paths'];
  doc.definitions = sorted(definitions) as SwaggerDocument['definitions'];
}

interface Clause {
  type: string;
  subType: string;
  q: number;
  order: number;
}

function parseAccept(header: string | undefined): Clause[] {
  const text = header === undefined || header.trim() === '' ? '*/*' : header;
  const clauses: Clause[] = [];
  text.split(',').forEach((part, order) => {
    const [media = '', ...params] = part.trim().split(';');
    const [type = '', subType = ''] = media.trim().toLowerCase().split('/');
    if (type === '') return;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k?.trim() === 'q' && v !== undefined) q = Number(v);
    }
    if (!Number.isNaN(q) && q > 0) clauses.push({ type, subType: subType === '' ? '*' : subType, q, order });
  });
  const specificity = (c: Clause) => (c.type === '*' ? 0 : c.subType === '*' ? 1 : 2);
  return clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.order - b.order);
}

type Offer<K extends string> = { kind: K; type: string; subType: string; contentType: string };

function negotiate<K extends string>(accept: string | undefined, offers: readonly Offer<K>[]): { kind: K; contentType: string } | undefined {
  for (const c of parseAccept(accept)) {
    for (const o of offers) {
      if ((c.type === '*' || c.type === o.type) && (c.subType === '*' || c.subType === o.subType)) return { kind: o.kind, contentType: o.contentType };
    }
  }
  return undefined;
}

const V2_OFFERS: readonly Offer<'json' | 'protobuf'>[] = [
  { kind: 'json', type: 'application', subType: 'json', contentType: 'application/json' },
  { kind: 'protobuf', type: 'application', subType: GNOSTIC_V2_CONTENT_TYPE.split('/')[1]!, contentType: GNOSTIC_V2_CONTENT_TYPE_ALT },
  { kind: 'protobuf', type: 'application', subType: GNOSTIC_V2_CONTENT_TYPE_ALT.split('/')[1]!, contentType: GNOSTIC_V2_CONTENT_TYPE_ALT },
];

/** Which /openapi/v2 representation to send for an Accept header; undefined means 406. */
export function negotiateOpenAPIV2(accept: string | undefined): { kind: 'json' | 'protobuf'; contentType: string } | undefined {
  return negotiate(accept, V2_OFFERS);
}

// Clients (client-go's openapi3 client, kubectl ≥ 1.27) ask for JSON; the v3 protobuf form
// (`application/com.github.proto-openapi.spec.v3.v1.0+protobuf`) is not offered.
const V3_OFFERS: readonly Offer<'json'>[] = [{ kind: 'json', type: 'application', subType: 'json', contentType: 'application/json' }];

/** Which /openapi/v3/<gv> representation to send for an Accept header; undefined means 406. */
export function negotiateOpenAPIV3(accept: string | undefined): { kind: 'json'; contentType: string } | undefined {
  return negotiate(accept, V3_OFFERS);
}
