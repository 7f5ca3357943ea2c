// A minimal gRPC client over node:http2 for the etcd backend: unary calls and bidirectional
// streams of already-encoded protobuf messages (see etcd-proto.ts), on one HTTP/2 connection.
//
// Why not @grpc/grpc-js (through the etcd3 package)? Per unary call grpc-js runs a resolving, a
// retrying, a load-balancing and a subchannel call, interceptors, a compression filter, metadata
// objects and captures a stack trace; etcd3 adds a retry policy, a circuit breaker and promise
// wrappers. On a kplane create that was about 3× the CPU of the HTTP/2 request itself. What etcd
// needs from a client is small: requests on one connection, no compression, no auth (the backend
// has no TLS client or auth options), reconnect and try the next endpoint when a connection fails.
import { connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';

/** A call that ended with a gRPC status other than OK. */
export class GrpcStatusError extends Error {
  override readonly name = 'GrpcStatusError';
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${GRPC_CODE_NAMES[code] ?? `code ${code}`}: ${details}`);
  }
}

/** gRPC status codes by number, for messages. */
const GRPC_CODE_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
};

export interface UnaryOptions {
  /** Fail with DEADLINE_EXCEEDED after this long (the stream is reset). Default: no deadline. */
  readonly timeoutMs?: number;
  /**
   * The call may run again after a connection failure that leaves its outcome unknown (reads).
   * Any call is retried on the next endpoint when its request never left this process.
   */
  readonly idempotent?: boolean;
}

/** Receives the messages of a bidirectional stream; `onEnd` is called once, with the reason. */
export interface StreamHandlers {
  onMessage(message: Buffer): void;
  onEnd(err: Error): void;
}

export interface GrpcStream {
  write(message: Buffer): void;
  /** Resets the stream (RST_STREAM CANCEL); no handler is called afterwards. */
  cancel(): void;
}

export interface GrpcClientOptions {
  /** http://host:port or https://host:port (TLS with the system's CAs); tried in turn. */
  readonly endpoints: readonly string[];
  /** HTTP/2 PING this often on a connection; no answer within `keepaliveTimeoutMs` drops it. Default 30,000 (kube-apiserver's etcd client). */
  readonly keepaliveIntervalMs?: number;
  /** Default 10,000. */
  readonly keepaliveTimeoutMs?: number;
}

/**
 * Every option node:http2 would otherwise add to its copy of the options one by one (priority
 * defaults), so the copy is made in one step.
 */
const REQUEST_OPTIONS = { endStream: false, weight: 16, parent: 0, exclusive: false, silent: false } as const;

/** Streams per connection before a fresh one is opened (HTTP/2 stream ids run out at 2^31). */
const STREAMS_PER_SESSION = 1 << 30;
/** Receive windows: a list of 10,000 objects is megabytes; 64 KiB windows would stall it on round trips. */
const STREAM_WINDOW = 4 << 20;
const SESSION_WINDOW = 32 << 20;

/** One HTTP/2 connection and the streams open on it (it keeps the process alive only while any are). */
class Connection {
  active = 0;
  /** Streams opened on it so far. */
  opened = 0;
  constructor(readonly session: ClientHttp2Session) {
    session.unref();
  }
  acquire(): void {
    this.opened++;
    if (this.active++ === 0) this.session.ref();
  }
  readonly release = (): void => {
    if (--this.active === 0) this.session.unref();
  };
  get usable(): boolean {
    return !this.session.closed && !this.session.destroyed && this.opened < STREAMS_PER_SESSION;
  }
}

export class GrpcClient {
  private conn: Connection | undefined;
  private nextEndpoint = 0;
  private closed = false;
  private readonly headersByPath = new Map<string, Record<string, string>>();
  private readonly keepalive: NodeJS.Timeout;

  constructor(private readonly opts: GrpcClientOptions) {
    if (opts.endpoints.length === 0) throw new Error('etcd: no endpoints');
    this.keepalive = setInterval(() => this.ping(), opts.keepaliveIntervalMs ?? 30_000);
    this.keepalive.unref();
  }

  /**
   * One request message (gRPC-framed: see etcd-proto.ts), one response message (unframed).
   * Rejects with GrpcStatusError or a connection error.
   */
  unary(path: string, framed: Buffer, options: UnaryOptions = {}): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const deadline = options.timeoutMs !== undefined ? Date.now() + options.timeoutMs : undefined;
      this.attempt(path, framed, deadline, options.idempotent === true, this.opts.endpoints.length, resolve, reject);
    });
  }

  private attempt(
    path: string,
    framed: Buffer,
    deadline: number | undefined,
    idempotent: boolean,
    attempts: number,
    resolve: (res: Buffer) => void,
    reject: (err: unknown) => void,
  ): void {
    let conn: Connection;
    let stream: ClientHttp2Stream;
    try {
      conn = this.connection();
      stream = this.request(conn, path);
    } catch (err) {
      reject(err);
      return;
    }
    new UnaryCall(stream, framed, deadline, conn.release, (err, res) => {
      if (err === undefined) resolve(res as Buffer);
      // Retry on the next endpoint: reads after any connection failure, writes only when the
      // request never left (no stream id: the connection was never established).
      else if (!(err instanceof GrpcStatusError) && attempts > 1 && !this.closed && (idempotent || stream.id === undefined)) {
        this.attempt(path, framed, deadline, idempotent, attempts - 1, resolve, reject);
      } else reject(err);
    });
  }

  /** Opens a bidirectional stream. Connection failures end it through `onEnd`. */
  stream(path: string, handlers: StreamHandlers): GrpcStream {
    const conn = this.connection();
    return new BidiCall(this.request(conn, path), conn.release, handlers);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    const c = this.conn;
    this.conn = undefined;
    c?.session.destroy();
  }

  private request(conn: Connection, path: string): ClientHttp2Stream {
    let headers = this.headersByPath.get(path);
    if (headers === undefined) {
      headers = { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' };
      this.headersByPath.set(path, headers);
    }
    const stream = conn.session.request(headers, REQUEST_OPTIONS);
    conn.acquire();
    return stream;
  }

  private connection(): Connection {
    if (this.closed) throw new Error('etcd client is closed');
    const current = this.conn;
    if (current !== undefined && current.usable) return current;
    if (current !== undefined && !current.session.destroyed) current.session.close(); // lets its streams finish
    const endpoint = this.opts.endpoints[this.nextEndpoint % this.opts.endpoints.length] as string;
    this.nextEndpoint++;
    const session = connect(endpoint, { settings: { initialWindowSize: STREAM_WINDOW, enablePush: false } });
    const conn = new Connection(session);
    session.on('connect', () => session.setLocalWindowSize(SESSION_WINDOW));
    const forget = (): void => {
      if (this.conn === conn) this.conn = undefined;
    };
    // Streams see a failure themselves (they are destroyed with the session's error).
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    this.conn = conn;
    return conn;
  }

  private ping(): void {
    const session = this.conn?.session;
    if (session === undefined || session.connecting || session.closed || session.destroyed) return;
    const timeoutMs = this.opts.keepaliveTimeoutMs ?? 10_000;
    const timer = setTimeout(() => session.destroy(new Error(`etcd connection: no answer to a keepalive ping within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    const sent = session.ping((err) => {
      clearTimeout(timer);
      if (err !== null && !session.destroyed) session.destroy(err);
    });
    if (!sent) clearTimeout(timer); // too many pings outstanding: the earlier ones still guard it
  }
}

/** The call's gRPC status from response headers (trailers-only) or trailers; undefined if absent. */
function statusOf(headers: IncomingHttpHeaders): GrpcStatusError | null | undefined {
  const raw = headers['grpc-status'];
  if (raw === undefined) return undefined;
  const code = Number(raw);
  if (code === 0) return null;
  const msg = headers['grpc-message'];
  let details = typeof msg === 'string' ? msg : '';
  try {
    details = decodeURIComponent(details);
  } catch {
    // Not percent-encoded after all: keep it as sent.
  }
  return new GrpcStatusError(code, details);
}

function connectionError(stream: ClientHttp2Stream, err: Error | undefined): Error {
  if (err !== undefined) return err;
  return new Error(`etcd stream ended without a gRPC status${stream.rstCode !== undefined && stream.rstCode !== h2.NGHTTP2_NO_ERROR ? ` (RST_STREAM code ${stream.rstCode})` : ''}`);
}

class UnaryCall {
  private first: Buffer | undefined;
  private rest: Buffer[] | undefined;
  /** null = OK, undefined = not received yet. */
  private status: GrpcStatusError | null | undefined;
  private error: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly stream: ClientHttp2Stream,
    framed: Buffer,
    deadline: number | undefined,
    private readonly release: () => void,
    private readonly done: (err: Error | undefined, res?: Buffer) => void,
  ) {
    stream.on('response', (headers) => {
      const s = statusOf(headers);
      if (s !== undefined) this.status = s;
    });
    stream.on('trailers', (trailers) => {
      this.status = statusOf(trailers);
    });
    stream.on('data', (chunk: Buffer) => {
      if (this.first === undefined) this.first = chunk;
      else (this.rest ??= []).push(chunk);
    });
    stream.on('error', (err: Error) => {
      this.error ??= err;
    });
    stream.on('close', () => {
      this.release();
      this.finish();
    });
    if (deadline !== undefined) {
      this.timer = setTimeout(() => {
        // Answer now: a stream still waiting for its connection would only close once connected.
        this.error = new GrpcStatusError(4, 'deadline exceeded');
        this.finish();
        if (!stream.destroyed) stream.close(h2.NGHTTP2_CANCEL);
      }, Math.max(0, deadline - Date.now()));
    }
    stream.end(framed);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.error instanceof GrpcStatusError) return this.done(this.error);
    if (this.status === undefined) return this.done(connectionError(this.stream, this.error));
    if (this.status !== null) return this.done(this.status);
    const body = this.rest === undefined ? this.first : Buffer.concat([this.first as Buffer, ...this.rest]);
    if (body === undefined || body.length < 5) return this.done(new GrpcStatusError(12, 'no response message'));
    if (body[0] !== 0) return this.done(new GrpcStatusError(12, 'compressed response message'));
    const len = body.readUInt32BE(1);
    if (body.length !== len + 5) return this.done(new GrpcStatusError(13, `response of ${body.length - 5} bytes, message of ${len}`));
    this.done(undefined, body.subarray(5));
  }
}

class BidiCall implements GrpcStream {
  /** Received bytes not yet forming a whole message. */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private status: GrpcStatusError | null | undefined;
  private error: Error | undefined;

  constructor(
    private readonly stream: ClientHttp2Stream,
    release: () => void,
    private readonly handlers: StreamHandlers,
  ) {
    stream.on('response', (headers) => {
      const s = statusOf(headers);
      if (s !== undefined) this.status = s;
    });
    stream.on('trailers', (trailers) => {
      this.status = statusOf(trailers);
    });
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.on('error', (err: Error) => {
      this.error ??= err;
    });
    stream.on('close', () => {
      release();
      if (this.status === null) this.end(new Error('etcd ended the stream'));
      else this.end(this.status ?? connectionError(this.stream, this.error));
    });
  }

  /** Sends one gRPC-framed message. */
  write(framed: Buffer): void {
    if (!this.ended && !this.stream.destroyed) this.stream.write(framed);
  }

  cancel(): void {
    this.ended = true;
    if (!this.stream.destroyed) this.stream.close(h2.NGHTTP2_CANCEL);
  }

  private onData(chunk: Buffer): void {
    if (this.ended) return;
    let buf: Buffer;
    if (this.buffered === 0) buf = chunk;
    else {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered < 5 || this.buffered < 5 + this.headLength()) return;
      buf = Buffer.concat(this.chunks, this.buffered);
      this.chunks = [];
      this.buffered = 0;
    }
    let pos = 0;
    while (buf.length - pos >= 5) {
      const len = buf.readUInt32BE(pos + 1);
      if (buf.length - pos < 5 + len) break;
      if (buf[pos] !== 0) {
        this.fail(new GrpcStatusError(12, 'compressed stream message'));
        return;
      }
      const message = buf.subarray(pos + 5, pos + 5 + len);
      pos += 5 + len;
      this.handlers.onMessage(message);
      if (this.ended) return;
    }
    if (pos < buf.length) {
      this.chunks = [buf.subarray(pos)];
      this.buffered = buf.length - pos;
    }
  }

  /** Length of the message whose prefix starts the buffered chunks (there are at least 5 bytes). */
  private headLength(): number {
    const first = this.chunks[0] as Buffer;
    const head = first.length >= 5 ? first : Buffer.concat(this.chunks, this.buffered);
    return head.readUInt32BE(1);
  }

  private fail(err: Error): void {
    const wasEnded = this.ended;
    this.cancel();
    if (!wasEnded) this.handlers.onEnd(err);
  }

  private end(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.handlers.onEnd(err);
  }
}
