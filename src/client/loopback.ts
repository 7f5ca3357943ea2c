// The in-process client `kplane serve` gives its own controllers: the same HTTP exchange as a
// remote client, carried by in-memory request/response objects straight into the API server's
// handler. Nothing is special-cased: the loopback bearer token is authenticated, admission and
// validation run, and watches stream and end exactly as they do over a socket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { ClientAbortError, ClientNetworkError } from './errors.js';
import { RestClient, type RestClientOptions, type Transport, type TransportRequest, type TransportResponse } from './rest.js';
import type { KubeClient } from './types.js';

/** node:http's request listener shape, e.g. `ApiServer.handle`. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

type HeaderValue = string | number | readonly string[];

/** The server side's response: a Writable whose bytes become the client side's body stream. */
class LoopbackResponse extends Writable {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  private readonly head = new Map<string, HeaderValue>();

  constructor(
    private readonly onHead: (status: number, headers: Record<string, string | string[]>) => void,
    private readonly sink: BodySink,
  ) {
    super({ highWaterMark: 64 * 1024 });
    // The handler checks headersSent right after write()/end() (to decide between an error answer
    // and a reset), so the head must be "sent" synchronously, before Writable queues the chunk.
    const write = this.write.bind(this) as (...a: unknown[]) => boolean;
    const end = this.end.bind(this) as (...a: unknown[]) => this;
    this.write = ((...a: unknown[]) => {
      this.sendHead();
      return write(...a);
    }) as Writable['write'];
    // Assigned through an index because Writable types end() as returning `this`.
    (this as { end: unknown }).end = (...a: unknown[]) => {
      this.sendHead();
      return end(...a);
    };
    // Writes after the client went away fail; the handler learns of it from 'close', as on a socket.
    this.on('error', () => {});
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw new Error(`Cannot set header "${name}" after they are sent`);
    this.head.set(name.toLowerCase(), value);
    return this;
  }
  getHeader(name: string): HeaderValue | undefined {
    return this.head.get(name.toLowerCase());
  }
  hasHeader(name: string): boolean {
    return this.head.has(name.toLowerCase());
  }
  removeHeader(name: string): void {
    this.head.delete(name.toLowerCase());
  }
  getHeaderNames(): string[] {
    return [...this.head.keys()];
  }
  getHeaders(): Record<string, HeaderValue> {
    return Object.fromEntries(this.head);
  }
  writeHead(status: number, headers?: Record<string, HeaderValue>): this {
    this.statusCode = status;
    for (const [k, v] of Object.entries(headers ?? {})) this.setHeader(k, v);
    this.sendHead();
    return this;
  }
  flushHeaders(): void {
    this.sendHead();
  }

  private sendHead(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of this.head) out[k] = Array.isArray(v) ? [...(v as readonly string[])] : String(v);
    this.onHead(this.statusCode, out);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.sink.push(chunk, cb);
  }
  override _final(cb: (e?: Error | null) => void): void {
    this.sink.end();
    cb();
  }
  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    // Destroyed before the body was complete: the client sees a reset, not a short body.
    if (!this.writableFinished) this.sink.fail(new ClientNetworkError('the server reset the stream', err ? { cause: err } : undefined));
    cb(err);
  }
}

/** Client side of the body: a Readable that paces the server's writes (backpressure → 'drain'). */
class BodySink {
  readonly readable: Readable;
  private waiting: ((e?: Error | null) => void) | undefined;

  constructor() {
    this.readable = new Readable({
      highWaterMark: 64 * 1024,
      read: () => {
        const cb = this.waiting;
        this.waiting = undefined;
        cb?.();
      },
    });
    this.readable.on('error', () => {});
  }
  push(chunk: Buffer, cb: (e?: Error | null) => void): void {
    if (this.readable.destroyed) return cb(new ClientNetworkError('the client went away'));
    if (this.readable.push(chunk)) cb();
    else this.waiting = cb;
  }
  end(): void {
    if (!this.readable.destroyed) this.readable.push(null);
  }
  fail(e: Error): void {
    this.readable.destroy(e);
  }
}

class LoopbackTransport implements Transport {
  private closed = false;
  private readonly open = new Set<() => void>();

  constructor(
    private readonly handler: RequestHandler,
    private readonly token: string,
  ) {}

  request(r: TransportRequest): Promise<TransportResponse> {
    if (this.closed) return Promise.reject(new ClientNetworkError('the client is closed'));
    if (r.signal?.aborted) return Promise.reject(new ClientAbortError());
    return new Promise<TransportResponse>((resolve, reject) => {
      let answered = false;
      const sink = new BodySink();
      // 'close' on the request is the handler's "client gone or exchange over" signal (watches
      // stop on it), so it is emitted once, by us, never by the Readable's own life cycle.
      const req = new Readable({ read() {}, autoDestroy: false, emitClose: false });
      let reqClosed = false;
      const closeReq = (): void => {
        if (reqClosed) return;
        reqClosed = true;
        req.emit('close');
      };
      const res = new LoopbackResponse((status, headers) => {
        answered = true;
        resolve({ status, headers, body: body(sink.readable, r.signal), cancel });
      }, sink);
      const cancel = (): void => {
        if (!res.destroyed && !res.writableFinished) res.destroy();
        closeReq();
        if (!sink.readable.destroyed && !sink.readable.readableEnded) sink.readable.destroy();
        this.open.delete(cancel);
      };
      this.open.add(cancel);
      res.on('close', () => {
        closeReq();
        this.open.delete(cancel);
        r.signal?.removeEventListener('abort', onAbort);
        if (!answered) reject(new ClientNetworkError(`${r.method} ${r.path}: the server closed the exchange without an answer`));
      });
      const onAbort = (): void => {
        cancel();
        if (!answered) reject(new ClientAbortError());
      };
      r.signal?.addEventListener('abort', onAbort, { once: true });
      const headers = { ...lowerCase(r.headers), host: 'loopback', authorization: `Bearer ${this.token}` };
      Object.assign(req, {
        method: r.method,
        url: r.path,
        headers,
        // node:http's name/value pairs as received, which filters scan without the headers object.
        rawHeaders: Object.entries(headers).flat(),
        httpVersion: '1.1',
        httpVersionMajor: 1,
        httpVersionMinor: 1,
      });
      if (r.body && r.body.byteLength > 0) req.push(Buffer.from(r.body));
      req.push(null);
      try {
        // The handler's own types are node:http's; these objects carry the subset it uses.
        this.handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
      } catch (e) {
        cancel();
        reject(new ClientNetworkError(`${r.method} ${r.path}: the handler threw`, { cause: e }));
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const cancel of [...this.open]) cancel();
  }
}

function lowerCase(h: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

async function* body(readable: Readable, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of readable) yield chunk as Uint8Array;
  } catch (e) {
    if (signal?.aborted) return;
    throw e instanceof ClientNetworkError ? e : new ClientNetworkError(`loopback body: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/**
 * A KubeClient that calls `handler` (an `ApiServer.handle`) in process. `token` must be one the
 * server's authenticator maps to the loopback user (system:apiserver in system:masters).
 */
export function createLoopbackClient(handler: RequestHandler, token: string, opts: RestClientOptions = {}): KubeClient {
  return new RestClient(new LoopbackTransport(handler, token), { userAgent: 'kplane-loopback/0.1.0', ...opts });
}
