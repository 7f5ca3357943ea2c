// Closing idle connections and slow request headers as kube-apiserver's http.Server does
// (k8s.io/apiserver/pkg/server/secure_serving.go: IdleTimeout 90 s, ReadHeaderTimeout 32 s), on a
// node:http2 secure server that also speaks HTTP/1.1. A connection with a request in flight (a
// watch can last an hour and send nothing) is never cut by these; only the time without one counts.
import type { Http2SecureServer, Http2Session, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** secure_serving.go: `IdleTimeout: 90 * time.Second // matches http.DefaultTransport keep-alive timeout` */
export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;
/** secure_serving.go: `ReadHeaderTimeout: 32 * time.Second // just shy of requestTimeoutUpperBound` */
export const DEFAULT_READ_HEADER_TIMEOUT_MS = 32_000;
/**
 * --http2-max-streams-per-connection's default: 0 means 100 in secure_serving.go ("match
 * http2.initialMaxConcurrentStreams used by clients").
 */
export const DEFAULT_HTTP2_MAX_STREAMS = 100;

export interface ConnectionTimeouts {
  /** A connection with no request in flight for this long is closed (HTTP/2: GOAWAY). */
  readonly idleTimeoutMs: number;
  /**
   * The TLS handshake and a request's headers must arrive within this (Go's tlsHandshakeTimeout
   * is the same value); a connection that sends nothing after connecting is closed after it.
   */
  readonly readHeaderTimeoutMs: number;
}

const pendingFirstRequest = Symbol('kplane.pendingFirstRequest');
type TrackedSocket = TLSSocket & { [pendingFirstRequest]?: NodeJS.Timeout };

/**
 * Installs the timeouts. The TLS handshake timeout (`handshakeTimeout`) must be given when the
 * server is created; use `readHeaderTimeoutMs` for it.
 */
export function installConnectionTimeouts(server: Http2SecureServer, t: ConnectionTimeouts): void {
  // HTTP/1.1: node's own timers between requests (keepAliveTimeout) and for the headers of a
  // request after the first (headersTimeout, checked every connectionsCheckingInterval).
  const h1 = server as unknown as { keepAliveTimeout: number; headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
  h1.keepAliveTimeout = t.idleTimeoutMs;
  h1.headersTimeout = t.readHeaderTimeoutMs;
  // The whole-request timer would cut uploads that Go lets run: the request timeout filter bounds them.
  h1.requestTimeout = 0;
  // Read when the server starts listening; node's 30 s default would let a slow header live up to 62 s.
  h1.connectionsCheckingInterval = Math.max(50, Math.min(30_000, Math.floor(t.readHeaderTimeoutMs / 4)));

  // HTTP/1.1, first request: node has no timer until a request begins, so a connection that sends
  // nothing after the handshake would stay forever. Go's deadline runs from the connection's start.
  server.on('secureConnection', (sock: TrackedSocket) => {
    if (sock.alpnProtocol === 'h2') return;
    const timer = setTimeout(() => sock.destroy(), t.readHeaderTimeoutMs);
    timer.unref();
    sock[pendingFirstRequest] = timer;
    sock.once('close', () => clearTimeout(timer));
  });
  server.on('request', (req: IncomingMessage) => {
    if (req.httpVersionMajor !== 1) return;
    const sock = req.socket as TrackedSocket;
    const timer = sock[pendingFirstRequest];
    if (timer !== undefined) {
      clearTimeout(timer);
      sock[pendingFirstRequest] = undefined;
    }
  });

  // HTTP/2: a session with no open stream for idleTimeoutMs gets GOAWAY and is closed, as Go's
  // http2 server does; open streams (watches among them) keep it.
  server.on('session', (session: Http2Session) => {
    let open = 0;
    // One timer per session, re-armed (refresh) whenever the last open stream ends; when it fires
    // with a stream open it does nothing, and that stream's end re-arms it.
    const timer = setTimeout(() => {
      if (open === 0 && !session.closed && !session.destroyed) session.close();
    }, t.idleTimeoutMs);
    timer.unref();
    // One listener function per session, not a closure (and a `once` wrapper) per stream: a
    // stream closes once, so `on` is enough.
    const streamClosed = (): void => {
      if (--open === 0 && !session.closed && !session.destroyed) timer.refresh();
    };
    session.on('stream', (stream: ServerHttp2Stream, _headers: IncomingHttpHeaders) => {
      open++;
      stream.on('close', streamClosed);
    });
    session.once('close', () => clearTimeout(timer));
  });
}
