// Calls a webhook (k8s.io/apiserver/pkg/util/webhook's REST client, as the dispatchers use it): a
// POST of the AdmissionReview to the URL with `?timeout=<n>s`, trusting `caBundle` (else the
// system's roots), bounded by the webhook's timeout. Failures are described in Go's words, as
// upstream's `failed to call webhook: ...` texts carry them. A `service` reference is called at
// https://<name>.<namespace>.svc:<port><path>, its certificate verified for that name, and dialled
// where the service resolver says at each call (webhookutil's ClientManager dials so).
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import { serviceServerName, type ServiceResolver, type ServiceTarget } from './service-resolver.js';

export class CallError extends Error {
  override readonly name = 'CallError';
}

/** A `clientConfig.service` (port defaulted to 443 by the registry). */
export interface ServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly path?: string;
}

/** Where a webhook is called: its URL and one keep-alive agent, shared by the webhooks naming the same URL and CA. */
export class WebhookEndpoint {
  readonly url: URL;
  readonly agent: Agent;
  /** A service reference and what resolves it; undefined for a URL. */
  readonly service: { readonly ref: ServiceReference; readonly resolver: ServiceResolver; readonly hostPort: string } | undefined;
  private calls = 0;
  private released = false;

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
    // Keep-alive: a webhook on every create costs one round trip, not a handshake. The TLS context
    // (the CA parsed) is made once: node would make one per new connection from `ca`.
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, secureContext: createSecureContext(ca ? { ca } : {}) });
  }

  private readonly requests = new Map<number, { readonly options: RequestOptions; readonly shown: string }>();

  /**
   * What every call with this timeout sends, made once: the request options (URL with
   * `?timeout=<n>s`, headers, agent) and the `Post "<url>"` its errors start with.
   */
  requestFor(timeoutSeconds: number): { readonly options: RequestOptions; readonly shown: string } {
    let r = this.requests.get(timeoutSeconds);
    if (!r) {
      const target = new URL(this.url);
      target.searchParams.set('timeout', `${timeoutSeconds}s`);
      // Go prints the service's host with its port, even 443.
      const shown = `Post ${JSON.stringify(this.service ? `https://${this.service.hostPort}${target.pathname === '/' && !this.service.ref.path ? '' : target.pathname}${target.search}` : target.toString())}`;
      const options: RequestOptions = {
        protocol: target.protocol,
        hostname: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port || 443,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        agent: this.agent,
        ...(this.service ? { servername: this.service.hostPort.replace(/:\d+$/, '') } : {}),
      };
      r = { options, shown };
      this.requests.set(timeoutSeconds, r);
    }
    return r;
  }

  /** Closes the connections once the calls under way have ended: a configuration change must not cut them. */
  release(): void {
    this.released = true;
    if (this.calls === 0) this.agent.destroy();
  }

  /** Counts `call` as under way until it settles. */
  async track<T>(call: () => Promise<T>): Promise<T> {
    this.calls++;
    try {
      return await call();
    } finally {
      if (--this.calls === 0 && this.released) this.agent.destroy();
    }
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
  return ep.track(() => send(ep, body, timeoutSeconds));
}

function send(ep: WebhookEndpoint, body: Buffer, timeoutSeconds: number): Promise<Buffer> {
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
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new CallError(why));
    };
    let req = attempt();
    const timer = setTimeout(() => {
      fail(`${shown}: context deadline exceeded`);
      req.destroy();
    }, timeoutSeconds * 1000);
    function attempt(retried = false): ReturnType<typeof httpsRequest> {
      const headers: Record<string, string | number> = { 'content-type': 'application/json', accept: 'application/json, */*', 'content-length': body.length };
      const r = httpsRequest({
        ...options,
        headers: dial ? { ...headers, host: ep.service!.hostPort } : headers,
        // A service: dialled at the resolved address, its certificate verified for <name>.<namespace>.svc.
        ...(dial ? { host: dial.host, hostname: dial.host, port: dial.port } : {}),
      });
      r.on('error', (e: NodeJS.ErrnoException) => {
        // A kept-alive connection the server closed while idle: dial again once, as Go's transport
        // retries a request that never reached a reused connection's server.
        if (!retried && !settled && r.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
          req = attempt(true);
          return;
        }
        fail(`${shown}: ${goNetError(e, target, dial)}`);
      });
      r.on('response', (res) => onResponse(res));
      r.end(body);
      return r;
    }
    function onResponse(res: import('node:http').IncomingMessage): void {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => fail(`${shown}: ${goNetError(e, target, dial)}`));
      res.on('aborted', () => fail(`${shown}: unexpected EOF`));
      res.on('end', () => {
        if (settled) return;
        const data = Buffer.concat(chunks);
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          fail(restError(code, data));
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(data);
      });
    }
  });
}

/** What Go's net/http and crypto/tls say for a failure to connect or to be answered. */
function goNetError(e: NodeJS.ErrnoException, u: URL, dial?: ServiceTarget): string {
  const hostPort = dial ? `${dial.host.includes(':') ? `[${dial.host}]` : dial.host}:${dial.port}` : `${u.hostname}:${u.port || '443'}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${hostPort}: connect: connection refused`;
    case 'ECONNRESET':
    case 'EPIPE':
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

/** client-go's rest.Result for a non-2xx answer: its Status when it sent one, else a generic text. */
function restError(code: number, data: Buffer): string {
  try {
    const st = JSON.parse(data.toString('utf8')) as { kind?: string; message?: string };
    if (st && st.kind === 'Status' && st.message) return st.message;
  } catch {
    // not a Status
  }
  const text = data.toString('utf8').trim();
  if (code >= 500) return `an error on the server (${JSON.stringify(text || 'unknown')}) has prevented the request from succeeding`;
  return `the server responded with the status code ${code} but did not return more information`;
}
