// The HTTPS client: a kubeconfig's cluster and user (client certificate, bearer token), spoken over
// one HTTP/2 session (re-opened when the server goes away) or an HTTP/1.1 keep-alive agent.
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ClientAbortError, ClientNetworkError } from './errors.js';
import { FailoverTransport } from './failover.js';
import { RestClient, type RestClientOptions, type Transport, type TransportRequest, type TransportResponse } from './rest.js';
import type { KubeClient } from './types.js';

/** Where and as whom to connect: what one kubeconfig context resolves to. */
export interface ClientConfig {
  /** `https://host:port[/prefix]`. */
  readonly server: string;
  readonly caPem?: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  readonly token?: string;
  /** Asked for the bearer token on every request (a token renewed in the background); wins over `token`. */
  readonly tokenSource?: () => string | undefined;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
}

/** The parts of clientcmd's v1 Config the client reads. */
export interface KubeconfigLike {
  // `object`, not Record: interface-typed kubeconfigs (server/kubeconfig.ts) have no index signature.
  readonly clusters?: readonly { readonly name: string; readonly cluster: object }[];
  readonly users?: readonly { readonly name: string; readonly user: object }[];
  readonly contexts?: readonly { readonly name: string; readonly context: { readonly cluster: string; readonly user: string } }[];
  readonly 'current-context'?: string;
}

export interface HttpsClientOptions extends RestClientOptions {
  /** HTTP/2 (default) or HTTP/1.1 with keep-alive. */
  readonly http2?: boolean;
  /** Kubeconfig context; default its current-context. */
  readonly context?: string;
  /**
   * Several API servers of one cluster (`https://host:port` each), tried in this order instead of
   * the kubeconfig's server, with its credentials and CA. Requests stick to one server and move
   * to the next when it cannot be reached (see `FailoverTransport`); client-go has no such list.
   */
  readonly servers?: readonly string[];
  /** Told when requests move from one of `servers` to the next, with why. */
  readonly onFailover?: (from: string, to: string, reason: string) => void;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Resolves a kubeconfig (file path, YAML/JSON object) to one context's ClientConfig. */
export function loadKubeconfig(source: string | KubeconfigLike, context?: string): ClientConfig {
  const baseDir = typeof source === 'string' ? dirname(source) : process.cwd();
  const cfg = (typeof source === 'string' ? parseYaml(readFileSync(source, 'utf8')) : source) as KubeconfigLike;
  const ctxName = context ?? cfg['current-context'];
  const ctx = cfg.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`kubeconfig: context "${ctxName ?? ''}" not found`);
  const cluster = cfg.clusters?.find((c) => c.name === ctx.cluster)?.cluster as Readonly<Record<string, unknown>> | undefined;
  if (!cluster) throw new Error(`kubeconfig: cluster "${ctx.cluster}" not found`);
  const user = (cfg.users?.find((u) => u.name === ctx.user)?.user ?? {}) as Readonly<Record<string, unknown>>;
  // Paths in a kubeconfig are relative to the file that names them (clientcmd's ResolvePaths).
  const file = (p: string | undefined): string | undefined => (p ? readFileSync(isAbsolute(p) ? p : join(baseDir, p), 'utf8') : undefined);
  const b64 = (v: string | undefined): string | undefined => (v ? Buffer.from(v, 'base64').toString('utf8') : undefined);
  const server = str(cluster.server);
  if (!server) throw new Error(`kubeconfig: cluster "${ctx.cluster}" has no server`);
  const caPem = b64(str(cluster['certificate-authority-data'])) ?? file(str(cluster['certificate-authority']));
  const certPem = b64(str(user['client-certificate-data'])) ?? file(str(user['client-certificate']));
  const keyPem = b64(str(user['client-key-data'])) ?? file(str(user['client-key']));
  const token = str(user.token) ?? file(str(user.tokenFile))?.trim();
  const tlsServerName = str(cluster['tls-server-name']);
  return {
    server,
    ...(caPem ? { caPem } : {}),
    ...(certPem ? { certPem } : {}),
    ...(keyPem ? { keyPem } : {}),
    ...(token ? { token } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
  };
}

function isClientConfig(v: unknown): v is ClientConfig {
  return typeof v === 'object' && v !== null && typeof (v as { server?: unknown }).server === 'string';
}

/** A KubeClient for a remote server, from a kubeconfig path or object, or a resolved ClientConfig. */
export function createHttpsClient(kubeconfig: string | KubeconfigLike | ClientConfig, opts: HttpsClientOptions = {}): KubeClient {
  const cfg = isClientConfig(kubeconfig) ? kubeconfig : loadKubeconfig(kubeconfig, opts.context);
  const transportFor = (c: ClientConfig): Transport => (opts.http2 === false ? new Http1Transport(c) : new Http2Transport(c));
  const servers = opts.servers ?? [];
  if (servers.length === 0) return new RestClient(transportFor(cfg), opts);
  for (const s of servers) {
    const u = URL.canParse(s) ? new URL(s) : undefined;
    if (u?.protocol !== 'https:') throw new TypeError(`servers: ${JSON.stringify(s)} is not an https:// URL`);
  }
  const failover = new FailoverTransport(
    servers.map((server) => transportFor({ ...cfg, server })),
    opts.onFailover ? (from, to, reason) => opts.onFailover!(servers[from]!, servers[to]!, reason) : undefined,
  );
  return new RestClient(failover, opts);
}

function tlsOptions(cfg: ClientConfig): { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean; servername?: string } {
  return {
    ...(cfg.caPem ? { ca: cfg.caPem } : {}),
    ...(cfg.certPem ? { cert: cfg.certPem } : {}),
    ...(cfg.keyPem ? { key: cfg.keyPem } : {}),
    rejectUnauthorized: !cfg.insecureSkipTlsVerify,
    ...(cfg.tlsServerName ? { servername: cfg.tlsServerName } : {}),
  };
}

function authHeaders(cfg: ClientConfig): Record<string, string> {
  const token = cfg.tokenSource?.() ?? cfg.token;
  return token ? { authorization: `Bearer ${token}` } : {};
}

function networkError(what: string, e: unknown): ClientNetworkError {
  if (e instanceof ClientNetworkError) return e;
  return new ClientNetworkError(`${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
}

// Errors that mean "this session can no longer take streams", seen when a request races the
// server's GOAWAY or an idle session's close: nothing reached the handler, so one retry on a
// fresh session is safe even for writes.
const SESSION_GONE = new Set(['ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION', 'ERR_HTTP2_STREAM_CANCEL']);

/**
 * Streams a session is assumed to take before the server's SETTINGS say how many: Go's http2
 * transport's initialMaxConcurrentStreams.
 */
const INITIAL_MAX_CONCURRENT_STREAMS = 100;

class Http2Transport implements Transport {
  /**
   * Open sessions with the streams each carries. As Go's http2 transport (client-go), a request
   * goes on the first session with room under the server's SETTINGS_MAX_CONCURRENT_STREAMS
   * (kube-apiserver's default is 100) and a new session is opened when all are full: one session
   * alone would queue every request behind 100 open watches.
   */
  private readonly sessions = new Map<ClientHttp2Session, number>();
  /** Sessions whose server SETTINGS have arrived (before them, remoteSettings holds defaults). */
  private readonly settled = new WeakSet<ClientHttp2Session>();
  private closed = false;
  private readonly origin: string;
  private readonly prefix: string;

  constructor(private readonly cfg: ClientConfig) {
    const u = new URL(cfg.server);
    this.origin = u.origin;
    this.prefix = u.pathname.replace(/\/+$/, '');
  }

  private sessionFor(): ClientHttp2Session {
    for (const [cur, active] of this.sessions) {
      if (cur.closed || cur.destroyed) {
        this.sessions.delete(cur);
        continue;
      }
      const max = this.settled.has(cur) ? (cur.remoteSettings.maxConcurrentStreams ?? INITIAL_MAX_CONCURRENT_STREAMS) : INITIAL_MAX_CONCURRENT_STREAMS;
      if (active < max) return cur;
    }
    const s = connect(this.origin, tlsOptions(this.cfg));
    // Failures reach the streams that were using the session; a dead session is just dropped so
    // that the next request reconnects.
    s.on('error', () => {});
    s.once('remoteSettings', () => this.settled.add(s));
    const drop = (): void => {
      this.sessions.delete(s);
    };
    s.on('close', drop);
    s.on('goaway', drop);
    this.sessions.set(s, 0);
    s.unref();
    return s;
  }

  // An idle session must not keep the process alive; one carrying a request (or a watch) must.
  private hold(s: ClientHttp2Session): () => void {
    this.sessions.set(s, (this.sessions.get(s) ?? 0) + 1);
    s.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.sessions.get(s) ?? 1) - 1;
      if (this.sessions.has(s)) this.sessions.set(s, left);
      if (left > 0) return;
      if (!s.destroyed) s.unref();
    };
  }

  async request(r: TransportRequest): Promise<TransportResponse> {
    try {
      return await this.attempt(r);
    } catch (e) {
      const code = (e as { cause?: { code?: unknown } }).cause?.code;
      if (e instanceof ClientAbortError || typeof code !== 'string' || !SESSION_GONE.has(code) || r.signal?.aborted) throw e;
      return this.attempt(r);
    }
  }

  private attempt(r: TransportRequest): Promise<TransportResponse> {
    if (this.closed) return Promise.reject(new ClientNetworkError('the client is closed'));
    if (r.signal?.aborted) return Promise.reject(new ClientAbortError());
    return new Promise<TransportResponse>((resolve, reject) => {
      let s: ClientHttp2Session;
      let stream: ClientHttp2Stream;
      try {
        s = this.sessionFor();
        stream = s.request({ ':method': r.method, ':path': this.prefix + r.path, ...r.headers, ...authHeaders(this.cfg) }, { endStream: !r.body });
      } catch (e) {
        reject(networkError(`${r.method} ${r.path}`, e));
        return;
      }
      const release = this.hold(s);
      let answered = false;
      const cancel = (): void => {
        // A stream whose answer was read to its end closes by itself: resetting it anyway would
        // send one RST_STREAM per request, and a server counts those against the rapid-reset
        // limit (nghttp2: about 1,000, then GOAWAY INTERNAL_ERROR for the whole session).
        if (!stream.closed && !stream.destroyed && !stream.readableEnded) stream.close(h2.NGHTTP2_CANCEL);
        release();
      };
      const onAbort = (): void => {
        cancel();
        if (!answered) reject(new ClientAbortError());
      };
      r.signal?.addEventListener('abort', onAbort, { once: true });
      stream.on('close', () => {
        release();
        r.signal?.removeEventListener('abort', onAbort);
        if (!answered) reject(new ClientNetworkError(`${r.method} ${r.path}: stream closed before a response (code ${stream.rstCode})`));
      });
      stream.on('error', (e) => {
        if (!answered) reject(networkError(`${r.method} ${r.path}`, e));
      });
      stream.on('response', (headers: IncomingHttpHeaders) => {
        answered = true;
        const status = Number(headers[':status']);
        resolve({ status, headers, body: streamBody(stream, `${r.method} ${r.path}`, r.signal), cancel });
      });
      if (r.body) stream.end(r.body);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.sessions.keys()].filter((s) => !s.destroyed);
    this.sessions.clear();
    await Promise.all(
      open.map(
        (s) =>
          new Promise<void>((ok) => {
            // Idle sessions are unreferenced; closing one must keep the process alive until it
            // has closed, or a caller awaiting close() sees the process end under it (a watch
            // left with `break` leaves its stream closing on an unreferenced session).
            s.ref();
            // Open watches would hold close() forever; they end with a network error, as on a reset.
            const cut = setTimeout(() => {
              s.destroy();
              ok();
            }, 100);
            s.close(() => {
              clearTimeout(cut);
              ok();
            });
          }),
      ),
    );
  }
}

/** A response body that fails with ClientNetworkError, and ends quietly once the caller aborted. */
async function* streamBody(stream: AsyncIterable<unknown>, what: string, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of stream) yield chunk as Uint8Array;
  } catch (e) {
    if (signal?.aborted) return;
    throw networkError(what, e);
  }
}

class Http1Transport implements Transport {
  private readonly agent: Agent;
  private readonly url: URL;
  private readonly prefix: string;

  constructor(private readonly cfg: ClientConfig) {
    this.url = new URL(cfg.server);
    this.prefix = this.url.pathname.replace(/\/+$/, '');
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, ...tlsOptions(cfg) });
  }

  request(r: TransportRequest): Promise<TransportResponse> {
    if (r.signal?.aborted) return Promise.reject(new ClientAbortError());
    return new Promise<TransportResponse>((resolve, reject) => {
      let answered = false;
      const req = httpsRequest({
        host: this.url.hostname.replace(/^\[|\]$/g, ''),
        port: this.url.port || 443,
        path: this.prefix + r.path,
        method: r.method,
        headers: { ...r.headers, ...authHeaders(this.cfg) },
        agent: this.agent,
      });
      let res: IncomingMessage | undefined;
      const cancel = (): void => {
        if (res && !res.complete) res.destroy();
        if (!req.destroyed && !res?.complete) req.destroy();
      };
      const onAbort = (): void => {
        cancel();
        if (!answered) reject(new ClientAbortError());
      };
      r.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (e) => {
        if (!answered) reject(networkError(`${r.method} ${r.path}`, e));
      });
      req.on('close', () => r.signal?.removeEventListener('abort', onAbort));
      req.on('response', (m: IncomingMessage) => {
        answered = true;
        res = m;
        resolve({ status: m.statusCode ?? 0, headers: m.headers, body: streamBody(m, `${r.method} ${r.path}`, r.signal), cancel });
      });
      req.end(r.body);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
