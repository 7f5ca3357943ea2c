// Request authentication with kube-apiserver's semantics (pkg/kubeapiserver/authenticator/config.go):
// client certificate first, then a bearer token (static tokens, then the token authenticators:
// bootstrap tokens, ServiceAccount JWTs, JWT/OIDC), then (if enabled) anonymous. The TLS server
// must be created with `requestCert: true, rejectUnauthorized: false, ca: [caPem, ...clientCAs]`:
// the handshake accepts any client certificate and this filter trusts only one that verified
// against those CAs. A client presenting an unrelated certificate and a good token is served as
// the token's user; bad credentials with nothing good beside them are a 401, never a fall back to
// anonymous.
//
// A client certificate, a static token and a token remembered by the union's cache are decided
// synchronously; only a token that a token authenticator has to look at makes a promise.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import type { UserInfo as RequestUser } from '../../admission/index.js';
import { unauthorized } from '../../apimachinery/errors.js';
import { TokenUnion, type TokenResult } from '../../auth/authn/token-union.js';
import type { TokenAuthenticator } from '../../auth/types.js';
import type { ProxyCertificate, RequestHeaderAuthenticator } from '../../auth/authn/request-header.js';
import type { Filter, Request, RequestScope } from '../request-scope.js';
import type { AuthenticationMetrics, AuthenticationResult } from './authentication-metrics.js';

export type UserInfo = { name: string; uid?: string; groups: string[] };

export const USER_ANONYMOUS = 'system:anonymous';
export const GROUP_AUTHENTICATED = 'system:authenticated';
export const GROUP_UNAUTHENTICATED = 'system:unauthenticated';

export type AuthenticatableRequest = IncomingMessage | Http2ServerRequest;

export interface AuthenticatorOptions {
  /** Static bearer tokens (`--token-auth-file`): token → user. */
  readonly tokens?: ReadonlyMap<string, UserInfo>;
  /**
   * Asked in turn for a bearer token that is not a static one, in upstream's order: bootstrap
   * tokens, ServiceAccount tokens, the JWT/OIDC authenticators.
   */
  readonly tokenAuthenticators?: readonly TokenAuthenticator[];
  /** How long a token authenticator's success is remembered (default 10,000 ms as upstream; 0: never). */
  readonly tokenSuccessCacheTtlMs?: number;
  /** `--anonymous-auth`: a request carrying no credentials at all becomes system:anonymous. Off by default. */
  readonly anonymous?: boolean;
  /** authentication_attempts, authentication_duration_seconds, authenticated_user_requests. */
  readonly metrics?: AuthenticationMetrics;
  /**
   * The requestheader authenticator (`--requestheader-*`), asked first as upstream's union does: a
   * front proxy's certificate, then the user its X-Remote-* headers assert.
   */
  readonly requestHeader?: RequestHeaderAuthenticator;
}

/**
 * Authenticates a request, or throws (rejects with) a 401 StatusError (reason Unauthorized,
 * message `Unauthorized`). `tokens` is the bearer-token union, for TokenReview.
 */
export type Authenticator = ((req: AuthenticatableRequest) => RequestUser | Promise<RequestUser>) & { readonly tokens: TokenUnion };

type Outcome = { kind: 'user'; user: UserInfo } | { kind: 'none' } | { kind: 'rejected' };

const NONE: Outcome = { kind: 'none' };
const REJECTED: Outcome = { kind: 'rejected' };

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

function isTlsSocket(socket: unknown): socket is TLSSocket {
  // http2's compat `req.socket` is a Proxy onto the session's TLSSocket, so `instanceof` fails; duck-type instead.
  return typeof (socket as Partial<TLSSocket> | null)?.getPeerCertificate === 'function';
}

/**
 * A connection's client certificate cannot change, and getPeerCertificate() rebuilds the parsed
 * certificate on every call (tens of µs, the costliest step of a small request): decide once per
 * connection. Keyed by the HTTP/2 session (compat `req.socket` is a new Proxy per stream) or the
 * HTTP/1.1 socket.
 */
const certOutcomeByConnection = new WeakMap<object, Outcome>();

/** The x509 authenticator: CN is the user, each O a group (CommonNameUserConversion upstream). */
function fromClientCertificate(req: AuthenticatableRequest): Outcome {
  const connection: object | undefined = (req as Partial<Http2ServerRequest>).stream?.session ?? req.socket ?? undefined;
  if (connection === undefined) return certOutcome(req);
  let outcome = certOutcomeByConnection.get(connection);
  if (outcome === undefined) {
    outcome = certOutcome(req);
    certOutcomeByConnection.set(connection, outcome);
  }
  // Callers get their own copy of the user.
  return outcome.kind === 'user' ? { kind: 'user', user: { ...outcome.user, groups: [...outcome.user.groups] } } : outcome;
}

/** The requestheader verifier's answer for a connection's certificate, decided once per connection. */
const proxyOutcomeByConnection = new WeakMap<object, ProxyCertificate>();

function proxyCertificate(req: AuthenticatableRequest, rh: RequestHeaderAuthenticator): ProxyCertificate {
  const connection: object | undefined = (req as Partial<Http2ServerRequest>).stream?.session ?? req.socket ?? undefined;
  const cached = connection ? proxyOutcomeByConnection.get(connection) : undefined;
  if (cached) return cached;
  const socket: unknown = req.socket;
  const raw = isTlsSocket(socket) ? (socket.getPeerCertificate() as Partial<PeerCertificate>)?.raw : undefined;
  const outcome = rh.verify(raw);
  if (connection) proxyOutcomeByConnection.set(connection, outcome);
  return outcome;
}

function certOutcome(req: AuthenticatableRequest): Outcome {
  const socket: unknown = req.socket;
  if (!isTlsSocket(socket)) return NONE;
  const peer: Partial<PeerCertificate> = socket.getPeerCertificate();
  if (!peer || !peer.subject) return NONE; // no certificate presented
  if (socket.authorized !== true) return REJECTED;
  // Node types subject fields as string, but repeated attributes (several O=) arrive as arrays.
  const subject = peer.subject as unknown as Record<string, string | string[] | undefined>;
  const name = asList(subject['CN'])[0];
  if (!name) return NONE; // upstream: a verified certificate without CN authenticates nobody
  return { kind: 'user', user: { name, groups: asList(subject['O']) } };
}

/** The bearer token of `Authorization: Bearer <token>`; anything else is not a token (undefined). */
export function bearerToken(req: AuthenticatableRequest): string | undefined {
  const header = req.headers.authorization?.trim();
  if (!header) return undefined;
  const parts = header.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer' || parts[1] === '') return undefined;
  return parts[1];
}

/** AuthenticatedGroupAdder: every authenticated user is in system:authenticated unless it says otherwise. */
function withAuthenticatedGroup<U extends RequestUser>(user: U): U {
  if (user.name === USER_ANONYMOUS) return user;
  if (user.groups.includes(GROUP_AUTHENTICATED) || user.groups.includes(GROUP_UNAUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, GROUP_AUTHENTICATED] };
}

export function createAuthenticator(opts: AuthenticatorOptions = {}): Authenticator {
  const union = new TokenUnion({
    ...(opts.tokens ? { tokens: opts.tokens } : {}),
    ...(opts.tokenAuthenticators ? { tokenAuthenticators: opts.tokenAuthenticators } : {}),
    ...(opts.tokenSuccessCacheTtlMs !== undefined ? { successCacheTtlMs: opts.tokenSuccessCacheTtlMs } : {}),
  });
  const anonymous = opts.anonymous ?? false;
  const metrics = opts.metrics;
  /** Everything after the token: anonymous or 401, and the metrics. */
  const finish = (started: number, rejected: boolean, token: TokenResult | undefined): RequestUser => {
    let user: RequestUser | undefined;
    let result: AuthenticationResult;
    if (token?.kind === 'user') {
      user = withAuthenticatedGroup(token.user);
      result = 'success';
    } else if (anonymous && !rejected && token === undefined) {
      user = { name: USER_ANONYMOUS, groups: [GROUP_UNAUTHENTICATED] };
      result = 'success';
    } else {
      result = rejected || token !== undefined ? 'error' : 'failure';
    }
    metrics?.record(result, (performance.now() - started) / 1000, user?.name);
    if (user === undefined) throw unauthorized();
    return user;
  };
  const authenticate = (req: AuthenticatableRequest): RequestUser | Promise<RequestUser> => {
    const started = metrics ? performance.now() : 0;
    // A front proxy's certificate: the user is in its headers; without a username header the
    // certificate authenticates nobody (it is not a cluster client certificate) and tokens decide.
    let frontProxy = false;
    const proxy = opts.requestHeader ? proxyCertificate(req, opts.requestHeader) : undefined;
    // Signed by the requestheader CA for a name not allowed: the TLS handshake trusted it only
    // because that CA is listed for front proxies; it is no cluster client certificate either.
    if (proxy?.kind === 'invalid' && proxy.signedByProxyCA) frontProxy = true;
    if (opts.requestHeader && proxy?.kind === 'proxy') {
      frontProxy = true;
      const asserted = opts.requestHeader.user(req.rawHeaders);
      if (asserted) {
        opts.requestHeader.clear(req.headers);
        const user = withAuthenticatedGroup(asserted);
        metrics?.record('success', (performance.now() - started) / 1000, user.name);
        return user;
      }
    }
    const cert: Outcome = frontProxy ? (proxy?.kind === 'proxy' ? NONE : REJECTED) : fromClientCertificate(req);
    if (cert.kind === 'user') {
      const user = withAuthenticatedGroup(cert.user);
      metrics?.record('success', (performance.now() - started) / 1000, user.name);
      return user;
    }
    const rejected = cert.kind === 'rejected';
    const token = bearerToken(req);
    if (token === undefined) return finish(started, rejected, undefined);
    const result = union.authenticate(token);
    if (!(result instanceof Promise)) return finish(started, rejected, result);
    return result.then((r) => finish(started, rejected, r));
  };
  return Object.assign(authenticate, { tokens: union });
}

export interface TokenFile {
  readonly tokens: Map<string, UserInfo>;
  /** Records that were skipped or overridden; upstream logs these and starts anyway. */
  readonly warnings: string[];
}

/** Splits CSV the way Go's encoding/csv does with TrimLeadingSpace: quoted fields, `""` escapes, blank lines skipped. */
function parseCsvRecords(text: string, source: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let lineNo = 1;
  let atFieldStart = true;
  const endRecord = (): void => {
    record.push(field);
    if (!(record.length === 1 && record[0] === '')) records.push(record);
    record = [];
    field = '';
    atFieldStart = true;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (atFieldStart && (c === ' ' || c === '\t')) {
      i++;
      continue;
    }
    if (atFieldStart && c === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error(`${source}:${lineNo}: extraneous or missing " in quoted-field`);
        const q = text[i]!;
        if (q === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (q === '\n') lineNo++;
        field += q;
        i++;
      }
      atFieldStart = false;
      continue;
    }
    atFieldStart = false;
    if (c === ',') {
      record.push(field);
      field = '';
      atFieldStart = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      lineNo++;
    } else {
      field += c;
    }
    i++;
  }
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

/** Parses kube's static token file: `token,user,uid[,"group1,group2"]` per line. */
export function parseTokenFile(text: string, source = 'token file'): TokenFile {
  const tokens = new Map<string, UserInfo>();
  const warnings: string[] = [];
  const records = parseCsvRecords(text.replace(/^\uFEFF/, ''), source);
  records.forEach((record, index) => {
    const recordNum = index + 1;
    if (record.length < 3) {
      throw new Error(`token file '${source}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    }
    const [token, name, uid, groupList] = record as [string, string, string, string | undefined];
    if (token === '') {
      warnings.push(`empty token has been found in token file '${source}', record number '${recordNum}'`);
      return;
    }
    if (tokens.has(token)) warnings.push(`duplicate token has been found in token file '${source}', record number '${recordNum}'`);
    const groups = (groupList ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== '');
    tokens.set(token, { name, ...(uid !== '' ? { uid } : {}), groups });
  });
  return { tokens, warnings };
}

/** Reads `--token-auth-file`. */
export async function loadTokenFile(path: string): Promise<TokenFile> {
  return parseTokenFile(await readFile(path, 'utf8'), path);
}

/** Paths any client may read without credentials (kube's system:public-info-viewer). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || /^\/(healthz|livez|readyz)\//.test(path);
}

/**
 * WithAuthentication: the user the request is made by, or the authenticator's 401. The public
 * paths are read as system:anonymous (group system:unauthenticated) instead of refused, even with
 * --anonymous-auth off, as health probes expect; what that user may read is then authorization's
 * call: under RBAC, system:public-info-viewer (bound to system:unauthenticated) allows exactly
 * /healthz, /livez, /readyz and /version, so a single check such as /readyz/etcd is a 403 for it,
 * as upstream; with AlwaysAllow everything listed here is served.
 */
export function withAuthentication(authenticate: (req: Request) => RequestUser | Promise<RequestUser>): Filter {
  return (next) => (s) => {
    let user: RequestUser | Promise<RequestUser>;
    try {
      user = authenticate(s.req);
    } catch (e) {
      return refused(s, e, next);
    }
    if (!(user instanceof Promise)) {
      s.user = user;
      return next(s);
    }
    return user.then(
      (u) => {
        s.user = u;
        return next(s);
      },
      (e: unknown) => refused(s, e, next),
    );
  };
}

function refused(s: RequestScope, e: unknown, next: (s: RequestScope) => void | Promise<void>): void | Promise<void> {
  if (!isPublicPath(s.info.path)) throw e;
  s.user = { name: USER_ANONYMOUS, groups: [GROUP_UNAUTHENTICATED] };
  return next(s);
}
