// The webhook calls' transport: HTTP/1.1 over TLS to admission and conversion webhooks. It keeps
// each endpoint's keep-alive connections (an undici Pool per address dialled), sends each call's
// body, gathers the answer and says how the call ended; what the answer means is the dispatchers'
// business. client.ts runs it twice: on the API server's thread, for calls made while few are under
// way, and on a worker thread of its own (transport-worker.ts) for the rest.
import { createSecureContext, type SecureContext } from 'node:tls';
import { Pool, type Dispatcher } from 'undici';
import type { EndpointSpec, FromTransport, ToTransport } from './transport-protocol.js';

/** Connections per address, as the node Agent's maxSockets was (Go's transport has no cap). */
const MAX_CONNECTIONS = 64;
/** How long an idle connection is kept: Go's http.DefaultTransport IdleConnTimeout. */
const IDLE_CONNECTION_MS = 90_000;

type Dial = { readonly host: string; readonly port: number } | undefined;

/**
 * An endpoint's connections: an undici Pool per address dialled (its URL's, or each address its
 * service resolved to), shared by the webhooks naming the same URL and CA.
 *
 * HTTP/1.1 only, as kube-apiserver's webhook clients since 1.16 (`NextProtos = ["http/1.1"]` in
 * webhookutil's ClientManager, kubernetes#82090): with HTTP/2 every call would share one connection
 * and the calls to a webhook with several replicas would not spread. undici's HTTP/1.1 client
 * costs about 40 % less CPU per call than node:https's (ClientRequest and the Agent's socket
 * bookkeeping), and both ends see the same bytes. An idle connection is kept 90 s, as Go's
 * transport (IdleConnTimeout of http.DefaultTransport, which client-go's transports keep), or
 * until shortly before the server's `Keep-Alive: timeout=` hint: a connection opened for a burst
 * of calls is still there for the next burst, instead of a TLS handshake in its way. A call that
 * meets a kept-alive connection the server closed is sent again (see Call.onError).
 */
class Endpoint {
  readonly url: URL;
  /** The TLS context (the CA parsed) made once; node would make one per connection from `ca`. */
  private readonly secureContext: SecureContext;
  private readonly pools = new Map<string, Pool>();
  private readonly requests = new Map<number, Dispatcher.DispatchOptions>();
  private calls = 0;
  private released = false;
  /**
   * Set when a pool has just opened a connection, read by the call undici then writes on it:
   * undici emits `connect` and writes the connection's first request in one synchronous run, so
   * the call that finds this set is that first request, and any other is on a reused connection.
   */
  connected = false;

  constructor(readonly spec: EndpointSpec) {
    this.url = new URL(spec.url);
    this.secureContext = createSecureContext(spec.ca ? { ca: spec.ca } : {});
  }

  /** The pool for `dial` (a service's resolved address), or for the URL. */
  poolFor(dial: Dial): Pool {
    const origin = dial ? `https://${dial.host.includes(':') ? `[${dial.host}]` : dial.host}:${dial.port}` : this.url.origin;
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: MAX_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: IDLE_CONNECTION_MS,
        keepAliveMaxTimeout: IDLE_CONNECTION_MS,
        // A service: its certificate verified for <name>.<namespace>.svc, wherever it is dialled.
        connect: { secureContext: this.secureContext, ...(this.spec.service ? { servername: this.spec.service.serverName } : {}) },
      });
      pool.on('connect', () => {
        this.connected = true;
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** What every call with this timeout sends, made once: path with `?timeout=<n>s` and headers (the body added per call). */
  requestFor(timeoutSeconds: number): Dispatcher.DispatchOptions {
    let r = this.requests.get(timeoutSeconds);
    if (!r) {
      const target = new URL(this.url);
      target.searchParams.set('timeout', `${timeoutSeconds}s`);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, */*' };
      // A service is dialled at its resolved address but asked for by its name, as Go sends it.
      if (this.spec.service) headers.host = this.spec.service.hostPort;
      r = { method: 'POST', path: `${target.pathname}${target.search}`, headers };
      this.requests.set(timeoutSeconds, r);
    }
    return r;
  }

  /** Closes the connections once the calls under way have ended: a configuration change must not cut them. */
  release(): void {
    this.released = true;
    if (this.calls === 0) this.destroy();
  }

  private destroy(): void {
    for (const pool of this.pools.values()) void pool.destroy().catch(() => undefined);
    this.pools.clear();
  }

  began(): void {
    this.calls++;
  }

  ended(): void {
    if (--this.calls === 0 && this.released) this.destroy();
  }
}

/**
 * One call's undici handler: gathers the answer, says once how the call ended, bounded by the
 * timeout. A class, not closures: one object per call (and tsx's keepNames would rename every
 * closure per call).
 */
class Call implements Dispatcher.DispatchHandlers {
  private settled = false;
  private abort: ((err?: Error) => void) | undefined;
  private code = 0;
  private answered = false;
  /** The attempt under way went out on a connection that had carried calls before. */
  private reused = false;
  private chunks: Buffer[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly pool: Pool;
  private readonly request: Dispatcher.DispatchOptions;

  constructor(
    private readonly id: number,
    private readonly ep: Endpoint,
    body: string,
    timeoutSeconds: number,
    private readonly dial: Dial,
    private readonly reply: (m: FromTransport) => void,
  ) {
    ep.began();
    this.pool = ep.poolFor(dial);
    this.request = { ...ep.requestFor(timeoutSeconds), body: Buffer.from(body) };
    this.timer = setTimeout(() => {
      this.fail('context deadline exceeded', true);
      this.abort?.();
    }, timeoutSeconds * 1000);
  }

  send(): void {
    this.pool.dispatch(this.request, this);
  }

  private end(m: FromTransport): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.ep.ended();
    this.reply(m);
  }

  private fail(why: string, prefixed: boolean, code?: number): void {
    if (this.settled) return;
    this.end({ id: this.id, why, prefixed, code });
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    this.reused = !this.ep.connected;
    this.ep.connected = false;
    if (this.settled) abort();
  }

  onHeaders(status: number): boolean {
    // 1xx answers come first and are skipped, as Go's transport does.
    if (status >= 200) {
      this.code = status;
      this.answered = true;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    const data = (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
    if (this.code < 200 || this.code > 299) {
      const { message, code } = restError(this.code, data);
      this.fail(message, false, code);
      return;
    }
    this.end({ id: this.id, data });
  }

  onError(e: NodeJS.ErrnoException): void {
    // A kept-alive connection the server closed (its idle timeout) as the call went out on it, with
    // no answer: sent again on another connection, as Go's transport retries a request on a reused
    // connection the server closed before it took the request (shouldRetryRequest:
    // nothingWrittenError, errServerClosedIdle). undici itself re-sends only what it had not
    // written yet; Go finds out sooner (its read loop sees the close while the connection is idle).
    // Never for a new connection, nor once an answer began: then the server saw the call.
    if (!this.settled && this.reused && !this.answered && isClosed(e) && e.code !== 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      this.reused = false;
      this.chunks = [];
      this.abort = undefined;
      // Not from inside undici's close handling of the old connection.
      queueMicrotask(() => {
        if (!this.settled) this.send();
      });
      return;
    }
    // Cut after the status line: Go reads the body to its end and says so.
    this.fail(this.answered && isClosed(e) ? 'unexpected EOF' : goNetError(e, this.ep.url, this.dial), true);
  }
}

/** The connection ended under the call (undici's SocketError, a reset, or a body short of its Content-Length). */
const isClosed = (e: NodeJS.ErrnoException): boolean =>
  e.code === 'UND_ERR_SOCKET' || e.code === 'ECONNRESET' || e.code === 'EPIPE' || e.code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';

/** What Go's net/http and crypto/tls say for a failure to connect or to be answered. */
function goNetError(e: NodeJS.ErrnoException, u: URL, dial: Dial): string {
  const hostPort = dial ? `${dial.host.includes(':') ? `[${dial.host}]` : dial.host}:${dial.port}` : `${u.hostname}:${u.port || '443'}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'EOF';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${u.hostname}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: certificate is valid for other names, not ${u.hostname}`;
    default:
      return e.message === 'socket hang up' ? 'EOF' : e.message;
  }
}

/**
 * client-go's rest.Result for a non-2xx answer: its Status when it sent one (message and code), else
 * a generic text with the HTTP status.
 */
function restError(code: number, text: string): { message: string; code: number } {
  try {
    const st = JSON.parse(text) as { kind?: string; message?: string; code?: unknown };
    if (st && st.kind === 'Status' && st.message) return { message: st.message, code: typeof st.code === 'number' ? st.code : code };
  } catch {
    // not a Status
  }
  const trimmed = text.trim();
  if (code >= 500) return { message: `an error on the server (${JSON.stringify(trimmed || 'unknown')}) has prevented the request from succeeding`, code };
  return { message: `the server responded with the status code ${code} but did not return more information`, code };
}

/** The endpoints by the ids client.ts gave them (or why one could not be opened); each call's end goes to `reply`. */
export class Transport {
  private readonly endpoints = new Map<number, Endpoint | { readonly error: string }>();

  constructor(private readonly reply: (m: FromTransport) => void) {}

  open(ep: number, spec: EndpointSpec): void {
    try {
      this.endpoints.set(ep, new Endpoint(spec));
    } catch (e) {
      // Its calls fail with the reason (a TLS context node would not make), not the transport.
      this.endpoints.set(ep, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  call(id: number, epId: number, body: string, timeoutSeconds: number, dial: Dial): void {
    const ep = this.endpoints.get(epId);
    if (!ep || !(ep instanceof Endpoint)) {
      this.reply({ id, why: ep ? ep.error : `webhook client: endpoint ${epId} is not open`, prefixed: true, code: undefined });
      return;
    }
    try {
      new Call(id, ep, body, timeoutSeconds, dial, this.reply).send();
    } catch (e) {
      this.reply({ id, why: e instanceof Error ? e.message : String(e), prefixed: true, code: undefined });
    }
  }

  /** The endpoint's connections close once its calls under way have ended. */
  release(epId: number): void {
    const ep = this.endpoints.get(epId);
    if (ep instanceof Endpoint) ep.release();
    this.endpoints.delete(epId);
  }
}

/**
 * Serves a worker thread's port: opens, calls and releases come in batches, and the calls' ends go
 * back in batches, one per turn of this thread's event loop (see client.ts's ThreadTransport.send).
 */
export function serve(port: { on(event: 'message', f: (m: readonly ToTransport[]) => void): unknown; postMessage(m: readonly FromTransport[]): void }): void {
  let outbox: FromTransport[] = [];
  const flush = (): void => {
    const batch = outbox;
    outbox = [];
    port.postMessage(batch);
  };
  const t = new Transport((m) => {
    if (outbox.push(m) === 1) setImmediate(flush);
  });
  port.on('message', (batch) => {
    for (const m of batch) {
      if (m.t === 'call') t.call(m.id, m.ep, m.body, m.timeoutSeconds, m.dial);
      else if (m.t === 'open') t.open(m.ep, m.spec);
      else t.release(m.ep);
    }
  });
}
