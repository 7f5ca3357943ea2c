// Reading request bodies: the size limit (413), a client that went away mid-body, and the decoding
// of an object body with upstream's error texts.
import { StatusError, badRequest, requestEntityTooLarge } from '../../apimachinery/errors.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { decodeBody } from '../negotiation.js';
import { header, type Request } from '../request-scope.js';

export function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(header(req, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(requestEntityTooLarge(limit));
  }
  if (req.readableEnded) return Promise.resolve(EMPTY);
  // Listeners, not `for await`: the async iterator costs a few µs more per request (a promise per
  // chunk and an end-of-stream watcher), and every write reads a body. The listeners are module
  // functions (an emitter calls them with itself as `this`) and the state rides on the request:
  // nothing is allocated per request but the state (tsx names each closure it makes, at a cost).
  return new Promise((resolve, reject) => {
    (req as Reading)[READING] = { chunks: [], size: 0, limit, resolve, reject };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const EMPTY = new Uint8Array(0);
const READING = Symbol('kplane.readBody');

/** A body being read: chunks up to the limit, then the whole, or why it could not be had. */
interface BodyState {
  readonly chunks: Buffer[];
  size: number;
  readonly limit: number;
  readonly resolve: (body: Uint8Array) => void;
  readonly reject: (e: unknown) => void;
}

type Reading = Request & { [READING]?: BodyState | undefined };

/** The request's state, taken off it with the listeners when the body is settled. */
function settle(req: Reading): BodyState | undefined {
  const st = req[READING];
  if (st === undefined) return undefined;
  req[READING] = undefined;
  req.off('data', onData);
  req.off('end', onEnd);
  req.off('error', onError);
  req.off('close', onClose);
  return st;
}

function onData(this: Reading, chunk: Buffer): void {
  const st = this[READING];
  if (st === undefined) return;
  st.size += chunk.length;
  if (st.size <= st.limit) {
    st.chunks.push(chunk);
    return;
  }
  settle(this);
  this.resume();
  st.reject(requestEntityTooLarge(st.limit));
}

function onEnd(this: Reading): void {
  const st = settle(this);
  st?.resolve(st.chunks.length === 1 ? st.chunks[0]! : Buffer.concat(st.chunks));
}

// The request stream fails, or closes before its end, only when the client's connection or
// stream went away mid-body.
function onError(this: Reading, e: Error): void {
  const st = settle(this);
  st?.reject(new ClientWentAway(st.size, e));
}

function onClose(this: Reading): void {
  const st = settle(this);
  st?.reject(new ClientWentAway(st.size, new Error('aborted')));
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
