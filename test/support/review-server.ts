// An HTTPS webhook on loopback for tests: admission or conversion reviews in, the test's answers
// out. Its certificate is issued for 127.0.0.1 by a CA of its own (or the test's), whose bundle
// goes into `clientConfig.caBundle`.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';

export interface ReviewServer {
  readonly server: Server;
  /** https://127.0.0.1:<port>, without a path: each webhook names its own. */
  readonly url: string;
  /** The CA's certificate, base64 as `caBundle` holds it. */
  readonly caBundle: string;
  readonly close: () => Promise<void>;
}

/** What a review was sent to: the URL's path, and the request and response to act on directly (to hang, cut or answer garbage). */
export interface ReviewCall {
  readonly path: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

/**
 * Starts the server. `answer` gets each review parsed, and returns what to send as JSON with status
 * 200, or undefined when it has answered (or chosen not to) through `call.res` itself.
 */
export async function startReviewServer<R>(
  answer: (review: R, call: ReviewCall) => unknown,
  opts: { ca?: { certPem: string; keyPem: string }; commonName?: string } = {},
): Promise<ReviewServer> {
  const ca = opts.ca ?? createCertificateAuthority();
  const cert = issueCertificate(ca, { commonName: opts.commonName ?? 'webhook', hosts: ['127.0.0.1'], usage: 'server' });
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as R;
      const out = answer(review, { path: new URL(req.url ?? '/', 'https://x').pathname, req, res });
      if (out === undefined) return;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** An admission.k8s.io/v1 AdmissionReview answering the review `uid` with `response`. */
export function admissionAnswer(uid: string, response: Record<string, unknown>): unknown {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, ...response } };
}

/** A JSONPatch response's `patchType` and base64 `patch`. */
export function jsonPatch(ops: unknown[]): { patchType: 'JSONPatch'; patch: string } {
  return { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') };
}
