// Calls a webhook (k8s.io/apiserver/pkg/util/webhook's REST client, as the dispatchers use it): a
// POST of the AdmissionReview to the URL with `?timeout=<n>s`, trusting `caBundle` (else the
// system's roots), bounded by the webhook's timeout. Failures are described in Go's words, as
// upstream's `failed to call webhook: ...` texts carry them. A `service` reference is called at
// https://<name>.<namespace>.svc:<port><path>, its certificate verified for that name, and dialled
// where the service resolver says at each call (webhookutil's ClientManager dials so).
import { createSecureContext, type SecureContext } from 'node:tls';
import { Pool, type Dispatcher } from 'undici';
import { serviceServerName, type ServiceResolver, type ServiceTarget } from './service-resolver.js';

export class CallError extends Error {
  override readonly name = 'CallError';
  /** For a non-2xx answer, client-go's StatusError code: the answer's Status code, else its HTTP status. */
  readonly code: number | undefined;
  constructor(message: string, code?: number) {
    super(message);
    this.code = code;
  }
}

/** A `clientConfig.service` (port defaulted to 443 by the registry). */
export interface ServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly path?: string;
}

/** Connections per address, as the node Agent's maxSockets was (Go's transport has no cap). */
const MAX_CONNECTIONS = 64;
/** How long an idle connection is kept: Go's http.DefaultTransport IdleConnTimeout. */
const IDLE_CONNECTION_MS = 90_000;

/**
 * Where a webhook is called: its URL and its keep-alive connections (an undici Pool per address
 * dialled), shared by the webhooks naming the same URL and CA.
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
export class WebhookEndpoint {
  readonly url: URL;
  /** A service reference and what resolves it; undefined for a URL. */
  readonly service: { readonly ref: ServiceReference; readonly resolver: ServiceResolver; readonly hostPort: string } | undefined;
  /** The TLS context (the CA parsed) made once; node would make one per connection from `ca`. */
  private readonly secureContext: SecureContext;
  /** By the origin dialled: the URL's, or each address a service resolved to. */
  private readonly pools = new Map<string, Pool>();
  private calls = 0;
  private released = false;
  /**
   * Set when a pool has just opened a connection, read by the call undici then writes on it:
   * undici emits `connect` and writes the connection's first request in one synchronous run, so
   * the call that finds this set is that first request, and any other is on a reused connection.
   */
  connected = false;

  constructor(rawURL: string | { ref: ServiceReference; resolver: ServiceResolver }, caBundle: string | undefined) {
    if (typeof rawURL === 'string') {
      this.url = new URL(rawURL);
      this.service = undefined;
    } else {
      const hostPort = `${serviceServerName(rawURL.ref.namespace, rawURL.ref.name)}:${rawURL.ref.port}`;
      this.url = new URL(`https://${hostPort}${rawURL.ref.path ?? ''}`);
      this.service = { ...rawURL, hostPort };
    }
    const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
    this.secureContext = createSecureContext(ca ? { ca } : {});
  }

  /** The pool for `dial` (a service's resolved address), or for the URL. */
  poolFor(dial: ServiceTarget | undefined): Pool {
    const origin = dial ? `https://${dial.host.includes(':') ? `[${dial.host}]` : dial.host}:${dial.port}` : this.url.origin;
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: MAX_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: IDLE_CONNECTION_MS,
        keepAliveMaxTimeout: IDLE_CONNECTION_MS,
        // A service: its certificate verified for <name>.<namespace>.svc, wherever it is dialled.
        connect: { secureContext: this.secureContext, ...(this.service ? { servername: this.service.hostPort.replace(/:\d+$/, '') } : {}) },
      });
      pool.on('connect', () => {
        this.connected = true;
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  private readonly requests = new Map<number, { readonly options: Dispatcher.DispatchOptions; readonly shown: string }>();

  /**
   * What every call with this timeout sends, made once: the request (path with `?timeout=<n>s`,
   * headers; the body added per call) and the `Post "<url>"` its errors start with.
   */
  requestFor(timeoutSeconds: number): { readonly options: Dispatcher.DispatchOptions; readonly shown: string } {
    let r = this.requests.get(timeoutSeconds);
    if (!r) {
      const target = new URL(this.url);
      target.searchParams.set('timeout', `${timeoutSeconds}s`);
      // Go prints the service's host with its port, even 443.
      const shown = `Post ${JSON.stringify(this.service ? `https://${this.service.hostPort}${target.pathname === '/' && !this.service.ref.path ? '' : target.pathname}${target.search}` : target.toString())}`;
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, */*' };
      // A service is dialled at its resolved address but asked for by its name, as Go sends it.
      if (this.service) headers.host = this.service.hostPort;
      r = { options: { method: 'POST', path: `${target.pathname}${target.search}`, headers }, shown };
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

  /** A call begins (counted until `ended`: the connections outlive the calls under way). */
  began(): void {
    this.calls++;
  }

  ended(): void {
    if (--this.calls === 0 && this.released) this.destroy();
  }
}

export function newEndpoint(rawURL: string, caBundle: string | undefined): WebhookEndpoint {
  return new WebhookEndpoint(rawURL, caBundle);
}

/** An endpoint for a `service` reference, resolved by `resolver` at each call. */
export function newServiceEndpoint(ref: ServiceReference, caBundle: string | undefined, resolver: ServiceResolver): WebhookEndpoint {
  return new WebhookEndpoint({ ref, resolver }, caBundle);
}

/** Answers the response body; throws CallError with Go's text for what is not a 2xx answer. */
export function post(ep: WebhookEndpoint, body: Buffer, timeoutSeconds: number): Promise<Buffer> {
  const { options, shown } = ep.requestFor(timeoutSeconds);
  const target = ep.url;
  let dial: ServiceTarget | undefined;
  if (ep.service) {
    try {
      dial = ep.service.resolver.resolve(ep.service.ref.namespace, ep.service.ref.name, ep.service.ref.port);
    } catch (e) {
      return Promise.reject(new CallError(`${shown}: ${e instanceof Error ? e.message : String(e)}`));
    }
  }
  return new Promise<Buffer>((resolve, reject) => {
    // dispatch, not request(): the answer is gathered by the handler, without a body stream per call.
    // The call counts itself as under way until it settles (no async wrapper per call).
    new Call(ep, ep.poolFor(dial), { ...options, body }, shown, target, dial, resolve, reject, timeoutSeconds).send();
  });
}

/**
 * One call's undici handler: gathers the answer, settles once, bounded by the timeout. A class,
 * not closures: one object per call (and tsx's keepNames would rename every closure per call).
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

  constructor(
    private readonly ep: WebhookEndpoint,
    private readonly pool: Pool,
    private readonly request: Dispatcher.DispatchOptions,
    private readonly shown: string,
    private readonly target: URL,
    private readonly dial: ServiceTarget | undefined,
    private readonly resolve: (data: Buffer) => void,
    private readonly reject: (e: CallError) => void,
    timeoutSeconds: number,
  ) {
    ep.began();
    this.timer = setTimeout(() => {
      this.fail(`${this.shown}: context deadline exceeded`);
      this.abort?.();
    }, timeoutSeconds * 1000);
  }

  send(): void {
    this.pool.dispatch(this.request, this);
  }

  private fail(why: string, code?: number): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.ep.ended();
    this.reject(new CallError(why, code));
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
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    if (this.code < 200 || this.code > 299) {
      const { message, code } = restError(this.code, data);
      this.fail(message, code);
      return;
    }
    this.settled = true;
    clearTimeout(this.timer);
    this.ep.ended();
    this.resolve(data);
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
    this.fail(`${this.shown}: ${this.answered && isClosed(e) ? 'unexpected EOF' : goNetError(e, this.target, this.dial)}`);
  }
}

/** The connection ended under the call (undici's SocketError, a reset, or a body short of its Content-Length). */
const isClosed = (e: NodeJS.ErrnoException): boolean =>
  e.code === 'UND_ERR_SOCKET' || e.code === 'ECONNRESET' || e.code === 'EPIPE' || e.code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH';

/** What Go's net/http and crypto/tls say for a failure to connect or to be answered. */
function goNetError(e: NodeJS.ErrnoException, u: URL, dial?: ServiceTarget): string {
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
function restError(code: number, data: Buffer): { message: string; code: number } {
  try {
    const st = JSON.parse(data.toString('utf8')) as { kind?: string; message?: string; code?: unknown };
    if (st && st.kind === 'Status' && st.message) return { message: st.message, code: typeof st.code === 'number' ? st.code : code };
  } catch {
    // not a Status
  }
  const text = data.toString('utf8').trim();
  if (code >= 500) return { message: `an error on the server (${JSON.stringify(text || 'unknown')}) has prevented the request from succeeding`, code };
  return { message: `the server responded with the status code ${code} but did not return more information`, code };
}
