// A client of the distribution API v2 (https://distribution.github.io/distribution/spec/api/):
// /v2/ ping, manifests by tag or digest, blobs, uploads, and the auth dance in front of them
// (WWW-Authenticate Bearer → token from the realm, or Basic). One client per registry host.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { OciError } from './errors.js';
import { basicHeader, credentialsFor, parseChallenge } from './auth.js';
import type { AuthOptions, Challenge, Credentials } from './auth.js';
import { MANIFEST_ACCEPT } from './manifest.js';
import { apiHost, isLoopbackHost } from './reference.js';

export interface ClientOptions extends AuthOptions {
  /** Plain HTTP (--use-http); loopback hosts use it unless `insecure` is explicitly false. */
  readonly insecure?: boolean;
  /** Deadline for a response's headers (bodies stream as long as they flow). */
  readonly timeoutMs?: number;
  /**
   * Do not verify the registry's TLS certificate (--skip-tls-verify). Applies to this client's
   * requests only (the registry, its token server, redirects), never to the rest of the process.
   */
  readonly skipTLSVerify?: boolean;
}

let unverifiedAgent: Agent | undefined;
/** One connection pool for every client that skips verification (fetch's `dispatcher`). */
function unverified(): Agent {
  return (unverifiedAgent ??= new Agent({ connect: { rejectUnauthorized: false } }));
}

/** fetch's init with undici's `dispatcher`, which lib.dom's RequestInit does not declare. */
type FetchInit = RequestInit & { duplex?: 'half'; dispatcher?: Dispatcher };

export interface FetchedManifest {
  readonly body: Buffer;
  readonly mediaType: string | undefined;
  readonly digest: string;
}

const USER_AGENT = 'kplane-catalog/0.1';

/** A request body: bytes, or a file streamed from disk (opened anew if the request is sent again). */
export type RequestBody = Buffer | { readonly path: string; readonly size: number };
const REDIRECT = new Set([301, 302, 303, 307, 308]);

export function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/**
 * One client per registry host and way of authenticating, shared by every pull and push of this
 * process: the /v2/ ping and bearer tokens are learnt once, not once per image (a template with a
 * hundred bundle images would otherwise pay three round trips per image). Only connection and auth
 * state is shared; content always comes from the registry or the digest-checked cache.
 */
const clients = new Map<string, RegistryClient>();

export function registryClient(host: string, opts: ClientOptions = {}): RegistryClient {
  // Keyed by the credentials as they are now (auth files are read again each time: a new login counts).
  const credentials = credentialsFor(host, opts);
  const key = JSON.stringify([host, opts.insecure ?? null, opts.timeoutMs ?? null, opts.skipTLSVerify === true, credentials ?? null]);
  let c = clients.get(key);
  if (!c) {
    c = new RegistryClient(host, { ...opts, ...(credentials ? { credentials } : {}) });
    clients.set(key, c);
  }
  return c;
}

export class RegistryClient {
  base: string;
  private readonly credentials: Credentials | undefined;
  /** Bearer tokens by scope, with when they expire; Basic needs none. */
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private challenge: Challenge | undefined;
  private pinged = false;

  constructor(
    readonly host: string,
    private readonly opts: ClientOptions = {},
  ) {
    const http = opts.insecure ?? isLoopbackHost(host);
    this.base = `${http ? 'http' : 'https'}://${apiHost(host)}`;
    this.credentials = credentialsFor(host, opts);
    if (opts.skipTLSVerify) this.dispatcher = unverified();
  }

  private readonly dispatcher: Dispatcher | undefined;

  /** fetch, through the unverified pool when --skip-tls-verify. */
  private fetch(url: string | URL, init: FetchInit): Promise<Response> {
    if (this.dispatcher) init.dispatcher = this.dispatcher;
    return fetch(url, init);
  }

  /** GET /v2/: learns how the registry wants to be authenticated (and whether it is there at all). */
  async ping(): Promise<void> {
    if (this.pinged) return;
    // A loopback registry is tried over plain HTTP first (what tests and local registries speak);
    // one that turns plain HTTP away gets HTTPS, as docker falls back for localhost.
    const mayFallBack = this.opts.insecure === undefined && isLoopbackHost(this.host) && this.base.startsWith('http:');
    let res: Response;
    try {
      res = await this.send('GET', '/v2/', {});
    } catch (e) {
      if (!mayFallBack || /ECONNREFUSED/.test(String((e as Error).message))) throw e;
      this.base = `https://${apiHost(this.host)}`;
      res = await this.send('GET', '/v2/', {});
    }
    if (mayFallBack && res.status === 400) {
      // Go's TLS servers answer plain HTTP with 400 "Client sent an HTTP request to an HTTPS server".
      await res.arrayBuffer();
      this.base = `https://${apiHost(this.host)}`;
      res = await this.send('GET', '/v2/', {});
    }
    await res.arrayBuffer();
    if (res.status === 401) this.challenge = parseChallenge(res.headers.get('www-authenticate') ?? '');
    else if (res.status !== 200)
      throw new OciError('REGISTRY_ERROR', `${this.host} does not answer the registry API (GET /v2/ gave ${res.status}); is it a registry?`);
    this.pinged = true;
  }

  async getManifest(repository: string, reference: string): Promise<FetchedManifest> {
    const what = `${this.host}/${repository}${reference.includes(':') ? '@' : ':'}${reference}`;
    const res = await this.request('GET', `/v2/${repository}/manifests/${reference}`, {
      scope: `repository:${repository}:pull`,
      headers: { accept: MANIFEST_ACCEPT },
      what,
    });
    if (res.status === 404) {
      const err = await registryError(res);
      throw new OciError('NOT_FOUND', `image ${what} not found (${err || 'manifest unknown'}): check the repository name and tag, and that it was pushed`);
    }
    await this.ensureOk(res, what);
    const body = Buffer.from(await res.arrayBuffer());
    const digest = sha256(body);
    if (reference.includes(':') && reference !== digest) {
      throw new OciError(
        'DIGEST_MISMATCH',
        `manifest of ${what} has digest ${digest}, not the ${reference} asked for: the registry returned other content; do not use this image`,
      );
    }
    const header = res.headers.get('docker-content-digest');
    if (!reference.includes(':') && header && header.startsWith('sha256:') && header !== digest) {
      throw new OciError(
        'DIGEST_MISMATCH',
        `manifest of ${what} hashes to ${digest} but the registry says ${header}: the content was altered on the way; retry, or check the registry`,
      );
    }
    return { body, mediaType: res.headers.get('content-type') ?? undefined, digest };
  }

  /** The blob's body as a stream (the caller verifies the digest while writing it). */
  async getBlob(repository: string, digest: string): Promise<{ body: AsyncIterable<Uint8Array>; size: number | undefined }> {
    const what = `blob ${digest} of ${this.host}/${repository}`;
    const res = await this.request('GET', `/v2/${repository}/blobs/${digest}`, { scope: `repository:${repository}:pull`, what });
    if (res.status === 404) {
      await res.arrayBuffer();
      throw new OciError('NOT_FOUND', `${what} not found: the image is incomplete in the registry; push it again`);
    }
    await this.ensureOk(res, what);
    if (!res.body) throw new OciError('REGISTRY_ERROR', `${what}: empty response`);
    const length = res.headers.get('content-length');
    return { body: res.body as unknown as AsyncIterable<Uint8Array>, size: length ? Number(length) : undefined };
  }

  async hasBlob(repository: string, digest: string): Promise<boolean> {
    const what = `blob ${digest} of ${this.host}/${repository}`;
    const res = await this.request('HEAD', `/v2/${repository}/blobs/${digest}`, { scope: `repository:${repository}:pull,push`, what });
    await res.arrayBuffer();
    if (res.status === 404) return false;
    await this.ensureOk(res, what);
    return true;
  }

  /**
   * Monolithic upload: POST /blobs/uploads/ then PUT <location>?digest=. A file is streamed, not
   * read into memory; the registry checks the digest of what it received.
   */
  async putBlob(repository: string, digest: string, data: RequestBody): Promise<void> {
    const scope = `repository:${repository}:pull,push`;
    const what = `upload of ${digest} to ${this.host}/${repository}`;
    const start = await this.request('POST', `/v2/${repository}/blobs/uploads/`, { scope, what, headers: { 'content-length': '0' } });
    await this.ensureOk(start, what);
    await start.arrayBuffer();
    const location = start.headers.get('location');
    if (!location) throw new OciError('REGISTRY_ERROR', `${what}: the registry gave no upload location`);
    const url = new URL(location, this.base);
    url.searchParams.set('digest', digest);
    const size = Buffer.isBuffer(data) ? data.length : data.size;
    const put = await this.request('PUT', url.pathname + url.search, {
      scope,
      what,
      body: data,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
      absolute: url.origin === new URL(this.base).origin ? undefined : url.toString(),
      // The deadline is for the answer after the upload: allow for the upload itself at 1 MiB/s.
      timeoutMs: (this.opts.timeoutMs ?? 30_000) + Math.ceil(size / 1024),
    });
    if (put.status === 400) {
      const err = await registryError(put);
      if (/DIGEST_INVALID/.test(err))
        throw new OciError(
          'DIGEST_MISMATCH',
          `${what}: the registry found the uploaded content does not hash to ${digest}: the image being pushed is damaged; build it again`,
        );
      throw new OciError('REGISTRY_ERROR', `${what}: the registry answered 400 (${err})`);
    }
    await this.ensureOk(put, what);
    await put.arrayBuffer();
  }

  async putManifest(repository: string, reference: string, body: Buffer, mediaType: string): Promise<string> {
    const what = `${this.host}/${repository}${reference.includes(':') ? '@' : ':'}${reference}`;
    const res = await this.request('PUT', `/v2/${repository}/manifests/${reference}`, {
      scope: `repository:${repository}:pull,push`,
      what,
      body,
      headers: { 'content-type': mediaType },
    });
    await this.ensureOk(res, `push of ${what}`);
    await res.arrayBuffer();
    return res.headers.get('docker-content-digest') ?? sha256(body);
  }

  /** A request with auth: answers a 401 challenge once (token or basic), then gives up with UNAUTHORIZED. */
  private async request(
    method: string,
    path: string,
    o: { scope: string; what: string; headers?: Record<string, string>; body?: RequestBody; absolute?: string | undefined; timeoutMs?: number },
  ): Promise<Response> {
    await this.ping();
    let res = await this.send(method, path, {
      headers: { ...o.headers, ...(await this.authHeader(o.scope, false)) },
      body: o.body,
      absolute: o.absolute,
      timeoutMs: o.timeoutMs,
    });
    if (res.status === 401) {
      const fresh = parseChallenge(res.headers.get('www-authenticate') ?? '');
      await res.arrayBuffer();
      if (fresh) this.challenge = fresh;
      res = await this.send(method, path, {
        headers: { ...o.headers, ...(await this.authHeader(o.scope, true)) },
        body: o.body,
        absolute: o.absolute,
        timeoutMs: o.timeoutMs,
      });
    }
    if (res.status === 401) {
      await res.arrayBuffer();
      throw this.unauthorized(o.what);
    }
    // Blob GETs are often redirected to storage (S3, a CDN) under a signed URL. The credentials meant
    // for the registry go only to the registry's own origin, never to another host.
    let url = o.absolute ?? this.base + path;
    for (let hops = 0; REDIRECT.has(res.status) && (method === 'GET' || method === 'HEAD'); hops++) {
      const location = res.headers.get('location');
      await res.arrayBuffer();
      if (!location || hops >= 10)
        throw new OciError('REGISTRY_ERROR', `${o.what}: ${location ? 'too many redirects' : `redirect (${res.status}) without a location`}`);
      const next = new URL(location, url);
      const sameOrigin = next.origin === new URL(this.base).origin;
      const headers = sameOrigin ? { ...o.headers, ...(await this.authHeader(o.scope, false)) } : { ...o.headers };
      url = next.toString();
      res = await this.send(method, '', { headers, absolute: url });
    }
    return res;
  }

  private unauthorized(what: string): OciError {
    if (!this.credentials) {
      return new OciError(
        'UNAUTHORIZED',
        `${what}: the registry ${this.host} requires authentication (401) and no credentials were found; log in (e.g. skopeo login / docker login, which write REGISTRY_AUTH_FILE or ~/.docker/config.json) or pass --creds USER:PASSWORD`,
      );
    }
    return new OciError(
      'UNAUTHORIZED',
      `${what}: the registry ${this.host} rejected the credentials for user "${this.credentials.username ?? '(identity token)'}" (401); check the user name and password (or log in again)`,
    );
  }

  private async authHeader(scope: string, renew: boolean): Promise<Record<string, string>> {
    const c = this.challenge;
    if (!c) return {};
    if (c.scheme === 'basic') return this.credentials ? { authorization: basicHeader(this.credentials) } : {};
    if (c.scheme !== 'bearer')
      throw new OciError('UNSUPPORTED', `the registry ${this.host} asks for "${c.scheme}" authentication, which is not supported (Basic and Bearer are)`);
    let held = renew ? undefined : this.tokens.get(scope);
    if (held === undefined || held.expiresAt < Date.now() + 5_000) {
      held = await this.fetchToken(c, scope);
      this.tokens.set(scope, held);
    }
    return held.token ? { authorization: `Bearer ${held.token}` } : {};
  }

  /** The token flow (https://distribution.github.io/distribution/spec/auth/token/): GET realm?service&scope, with basic credentials if any. */
  private async fetchToken(c: Challenge, scope: string): Promise<{ token: string; expiresAt: number }> {
    const realm = c.params.realm;
    if (!realm) throw new OciError('REGISTRY_ERROR', `the registry ${this.host} asked for a bearer token but named no realm`);
    const url = new URL(realm);
    if (c.params.service) url.searchParams.set('service', c.params.service);
    url.searchParams.set('scope', scope);
    const creds = this.credentials;
    let res: Response;
    try {
      if (creds?.identityToken) {
        const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: creds.identityToken, client_id: 'kplane', scope });
        if (c.params.service) form.set('service', c.params.service);
        res = await this.fetch(realm, {
          method: 'POST',
          body: form,
          headers: { 'user-agent': USER_AGENT },
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
        });
      } else {
        const headers: Record<string, string> = { 'user-agent': USER_AGENT };
        if (creds?.username !== undefined) headers.authorization = basicHeader(creds);
        res = await this.fetch(url, { headers, signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000) });
      }
    } catch (e) {
      throw new OciError('UNREACHABLE', `cannot reach the token server ${url.origin} of the registry ${this.host} (${causeText(e)}); check the network`, {
        cause: e,
      });
    }
    if (res.status === 401 || res.status === 403) {
      await res.arrayBuffer();
      throw this.unauthorized(`token for ${scope}`);
    }
    if (!res.ok)
      throw new OciError('REGISTRY_ERROR', `the token server ${url.origin} answered ${res.status} for ${scope}: ${(await res.text()).slice(0, 200)}`);
    const body = (await res.json()) as { token?: string; access_token?: string; expires_in?: number };
    // The spec's default lifetime is 60 s when the server does not say.
    return { token: body.token ?? body.access_token ?? '', expiresAt: Date.now() + (body.expires_in ?? 60) * 1000 };
  }

  private async send(
    method: string,
    path: string,
    o: { headers?: Record<string, string>; body?: RequestBody | undefined; absolute?: string | undefined; timeoutMs?: number | undefined },
  ): Promise<Response> {
    const url = o.absolute ?? this.base + path;
    const ctl = new AbortController();
    const timeoutMs = o.timeoutMs ?? this.opts.timeoutMs ?? 30_000;
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    let body: RequestInit['body'] | undefined;
    if (Buffer.isBuffer(o.body)) body = o.body;
    else if (o.body) body = Readable.toWeb(createReadStream(o.body.path)) as ReadableStream<Uint8Array>;
    try {
      // Redirects are followed by `request`, which decides what headers the next hop may see.
      // `duplex: 'half'` is what fetch wants for a streamed body (not yet in lib.dom's RequestInit).
      const init: FetchInit = { method, redirect: 'manual', headers: { 'user-agent': USER_AGENT, ...o.headers }, signal: ctl.signal };
      if (body !== undefined) init.body = body;
      if (body !== undefined && !Buffer.isBuffer(body)) init.duplex = 'half';
      return await this.fetch(url, init);
    } catch (e) {
      const text = ctl.signal.aborted ? `no answer within ${timeoutMs} ms` : causeText(e);
      const hint = /EPROTO|wrong version number|packet length too long/i.test(text)
        ? '; it may speak plain HTTP: pass --use-http'
        : /certificate|CERT_|self.signed/i.test(text)
          ? "; its TLS certificate is not trusted: add the registry's CA with NODE_EXTRA_CA_CERTS=FILE (or --use-http if it speaks plain HTTP)"
          : '; check the host and port, that the registry is running, and --use-http for a plain-HTTP registry';
      const where =
        o.absolute && new URL(o.absolute).origin !== new URL(this.base).origin ? `${new URL(o.absolute).origin}, where ${this.base} redirected,` : this.base;
      throw new OciError('UNREACHABLE', `cannot reach the registry at ${where} (${text})${hint}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
  }

  private async ensureOk(res: Response, what: string): Promise<void> {
    if (res.ok) return;
    const err = await registryError(res);
    if (res.status === 403)
      throw new OciError('DENIED', `${what}: access denied by ${this.host} (403${err ? `: ${err}` : ''}); the credentials lack permission for this repository`);
    if (res.status === 404) throw new OciError('NOT_FOUND', `${what}: not found (404${err ? `: ${err}` : ''})`);
    throw new OciError('REGISTRY_ERROR', `${what}: the registry answered ${res.status}${err ? ` (${err})` : ''}`);
  }
}

/** The distribution error body, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"..."}]}`, as one line. */
async function registryError(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { errors?: { code?: string; message?: string }[] };
    if (body.errors?.length) return body.errors.map((e) => [e.code, e.message].filter(Boolean).join(': ')).join('; ');
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 200);
}

function causeText(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.message) return cause.message;
  return (e as Error).message ?? String(e);
}
