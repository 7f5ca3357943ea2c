// Large answers written as they are encoded, at the pace the client reads them (upstream streams
// lists too: its JSON list encoder writes item by item into the response, and a write blocks while
// the connection's buffers are full). A client that stops reading holds what is in flight — the
// socket's buffer and a chunk or two — rather than the whole encoded answer; once its request's
// deadline passes the timeout filter resets the response (deadline.ts), which ends the writing here
// and frees the rest. Bodies are the bytes a whole-buffer answer has; only the framing differs (chunked
// transfer encoding on HTTP/1.1 instead of a Content-Length, as Go's server frames a large answer).
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { acceptsGzip, firstHeaderValue, GZIP_LEVEL } from './compression.js';
import { isSilenced } from './deadline.js';
import type { Response } from './request-scope.js';

/** A piece of an answer: `bytes` is the start of `taken`, which `give` may get back once it is written. */
export interface BodyChunk {
  readonly bytes: Buffer;
  readonly taken: Buffer;
}

export interface StreamBodyOptions {
  /** Gzip the body (level 1) when the client asked for it: compression is on and the body is over the threshold. */
  readonly compress: boolean;
  /** Takes back a chunk's buffer once its bytes left this process (never for a write that failed). */
  readonly give?: (taken: Buffer) => void;
}

/**
 * Writes a body of known-large size (status and Content-Type already set): `first`, then whatever
 * `rest` yields, each chunk written only once the response has room for it ('drain'). Resolves
 * when the last chunk was handed on, or as soon as the response closed or was reset (a client
 * gone, a deadline passed): the remaining chunks are then never encoded.
 */
export async function streamBody(res: Response, first: readonly BodyChunk[], rest: Iterator<BodyChunk, undefined>, opts: StreamBodyOptions): Promise<void> {
  let closed = false;
  const onClose = (): void => {
    closed = true;
    wake?.();
  };
  let wake: (() => void) | undefined;
  res.once('close', onClose);
  // A reset response may not say 'close' before the next step: silence (deadline.ts) and destroy() are seen at once.
  const gone = (): boolean => closed || isSilenced(res) || (res as { destroyed?: boolean }).destroyed === true;

  let out: Writable = res;
  const req = (res as { req?: Parameters<typeof firstHeaderValue>[0] }).req;
  if (opts.compress && req !== undefined && acceptsGzip(firstHeaderValue(req, 'accept-encoding'))) {
    res.setHeader('Content-Encoding', 'gzip');
    // header.Add: a Vary the handler set stays.
    const vary = res.getHeader('Vary');
    res.setHeader('Vary', vary === undefined ? 'Accept-Encoding' : [...(Array.isArray(vary) ? vary : [String(vary)]), 'Accept-Encoding']);
    const gz = createGzip({ level: GZIP_LEVEL });
    gz.on('error', () => res.destroy());
    // pipe() pauses the gzip output while the response is full, and gzip then refuses more input.
    gz.pipe(res);
    out = gz;
  }
  const waitForRoom = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (gone()) return resolve();
      const done = (): void => {
        out.off('drain', done);
        wake = undefined;
        resolve();
      };
      wake = done;
      out.on('drain', done);
    });

  const give = opts.give;
  let ended = false;
  try {
    const write = (c: BodyChunk): boolean => out.write(c.bytes, give ? (err) => err || give(c.taken) : undefined);
    let room = true;
    for (const c of first) {
      if (gone()) return;
      room = write(c);
    }
    for (;;) {
      if (!room) await waitForRoom();
      if (gone()) return;
      // The next chunk is encoded only now, when there is room for it.
      const r = rest.next();
      if (r.done) break;
      room = write(r.value);
    }
    out.end();
    ended = true;
  } finally {
    res.off('close', onClose);
    // The gzip stream of an answer cut short (its zlib memory goes now, not at a GC).
    if (out !== res && !ended) out.destroy();
  }
}
