// Reading request bodies: the size limit (413), a client that went away mid-body, and the decoding
// of an object body with upstream's error texts.
import { StatusError, badRequest, isStatusError, requestEntityTooLarge } from '../../apimachinery/errors.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { decodeBody } from '../negotiation.js';
import { header, type Request } from '../request-scope.js';

export async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(header(req, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        req.resume();
        throw requestEntityTooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    // The request stream fails only when the client's connection or stream went away mid-body.
    if (isStatusError(e)) throw e;
    throw new ClientWentAway(size, e);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/** The body of a create, update or patch (its integers are kept exactly when it is decoded: golang/json-int64.ts). */
export function readObjectBody(req: Request, _r: RegisteredResource, limit: number): Promise<Uint8Array> {
  return readBody(req, limit);
}

/**
 * A request whose client closed its connection (HTTP/1.1) or cancelled its stream (HTTP/2) before
 * the body was complete. Like kube-apiserver it becomes a 500 (nobody reads it); the log gets one
 * line, not a stack trace, since nothing in the server failed.
 */
export class ClientWentAway extends Error {
  constructor(received: number, cause: unknown) {
    super(`the client closed the request before its body was complete (${received} bytes received: ${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

/**
 * decodeBody for a create or update: a body that does not parse at all is named the way upstream's
 * transformDecodeError does (the kind it must be, and the start of the data).
 */
export function decodeObjectBody(contentType: string | undefined, body: Uint8Array, r: RegisteredResource): ReturnType<typeof decodeBody> {
  const kind = r.descriptor.kind;
  try {
    // Numbers' texts matter only to the typed-body check.
    return decodeBody(contentType, body, { numberTexts: r.registration.goTypedBody === true, scheme: r.scheme });
  } catch (e) {
    if (!(e instanceof StatusError) || e.code !== 400) throw e;
    const base = e.message === 'the body of the request was empty' ? "couldn't get version/kind; json parse error: unexpected end of JSON input" : e.message;
    if (!base.startsWith("couldn't get version/kind; json parse error: ") && !base.startsWith('error converting YAML to JSON: ')) throw e;
    throw badRequest(`the object provided is unrecognized (must be of type ${kind}): ${base} (${summarizeData(body, 30)})`);
  }
}

/** handlers' summarizeData: `<empty>`, a JSON object's start as text, anything else in hex. */
function summarizeData(data: Uint8Array, max: number): string {
  if (data.length === 0) return '<empty>';
  const cut = data.length > max;
  const head = Buffer.from(data.subarray(0, max));
  return (data[0] === 0x7b ? head.toString('utf8') : head.toString('hex')) + (cut ? ' ...' : '');
}
