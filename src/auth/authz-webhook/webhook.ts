// kube-apiserver's Webhook authorization mode (k8s.io/apiserver/plugin/pkg/authorizer/webhook):
// each request the authorizers before it left undecided is POSTed to a remote service as an
// authorization.k8s.io SubjectAccessReview; status.allowed allows, status.denied denies (the chain
// stops), neither has no opinion. Answers are cached per review spec, allowed and not-allowed for
// their own TTLs. A failed call (refused, timed out, garbage) has no opinion and carries the error,
// after upstream's retries for the failures it retries (connection reset, 429, 500, 504,
// Retry-After), so the next authorizer decides; each call has a deadline, so none hangs.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { UserInfo } from '../../admission/index.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer, RuleResolver } from '../authorizer.js';
import { LRUExpireCache } from '../lru-expire-cache.js';
import type { WebhookConnection } from './kubeconfig.js';

/** --authorization-webhook-version: the SubjectAccessReview version sent and expected. */
export type SubjectAccessReviewVersion = 'v1' | 'v1beta1';
export const SUBJECT_ACCESS_REVIEW_VERSIONS: readonly SubjectAccessReviewVersion[] = ['v1', 'v1beta1'];

/** wait.Backoff as the webhook retries with it. */
export interface RetryBackoff {
  readonly initialMs: number;
  readonly factor: number;
  readonly jitter: number;
  /** Attempts in all (upstream: 5). */
  readonly steps: number;
}

/** options.DefaultAuthWebhookRetryBackoff: 500 ms, ×1.5, 20 % jitter, 5 attempts. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoff = { initialMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

/** The legacy flags' implicit timeout of each call (kube-apiserver's buildAuthorizationConfiguration). */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 30_000;
export const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000;
export const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;

/** What one round trip ended as: the `result` label of the webhook metrics. */
export type WebhookCallResult = 'success' | 'timeout' | 'error' | 'canceled';

/** apiserver_authorization_webhook_* as upstream's webhook/metrics records them. */
export interface WebhookMetrics {
  evaluation(name: string, result: WebhookCallResult, seconds: number): void;
  failOpen(name: string, result: WebhookCallResult): void;
}

/** A raw answer of the webhook, or a transport failure. */
export interface WebhookResponse {
  readonly status: number;
  readonly retryAfter: boolean;
  readonly body: string;
}

/** Posts `body` (JSON) to the webhook within `timeoutMs`. Rejects with a WebhookCallError. */
export type WebhookPoster = (body: string, timeoutMs: number) => Promise<WebhookResponse>;

export class WebhookCallError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'reset' | 'other',
  ) {
    super(message);
  }
}

export interface WebhookAuthorizerOptions {
  /** How the SubjectAccessReview reaches the service (see loadWebhookKubeconfig), or a poster (tests). */
  readonly connection: WebhookConnection | WebhookPoster;
  /** Default `v1beta1`, kube-apiserver's default of --authorization-webhook-version. */
  readonly version?: SubjectAccessReviewVersion;
  /** How long an allowed answer is reused (default 5 min; 0 = not cached). */
  readonly authorizedTTLMs?: number;
  /** How long a not-allowed answer (denied or no opinion) is reused (default 30 s; 0 = not cached). */
  readonly unauthorizedTTLMs?: number;
  /** Deadline of each call, response body included (default 30 s). */
  readonly timeoutMs?: number;
  readonly retryBackoff?: RetryBackoff;
  /** The authorizer's name in metrics (the legacy flag's webhook is `default`). */
  readonly name?: string;
  readonly metrics?: WebhookMetrics;
  readonly log?: (message: string) => void;
  /** Milliseconds now, for the cache (tests pass a fake clock). */
  readonly now?: () => number;
  /** Waits between retries (tests skip them). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** authorizationv1.SubjectAccessReviewSpec, fields in Go's order (the cache key is its JSON). */
export interface SubjectAccessReviewSpec {
  resourceAttributes?: { namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

/** Go's `omitempty` for strings: the key only when the value is not empty. */
function put<T extends object>(o: T, key: keyof T & string, v: string | undefined): void {
  if (v) (o as Record<string, unknown>)[key] = v;
}

/** The spec upstream's Authorize builds from the user and the request's attributes. */
export function subjectAccessReviewSpec(user: UserInfo, attrs: AuthorizationAttributes): SubjectAccessReviewSpec {
  const spec: SubjectAccessReviewSpec = {};
  if (attrs.isResourceRequest) {
    const ra: NonNullable<SubjectAccessReviewSpec['resourceAttributes']> = {};
    put(ra, 'namespace', attrs.namespace);
    put(ra, 'verb', attrs.verb);
    put(ra, 'group', attrs.apiGroup);
    put(ra, 'version', attrs.apiVersion);
    put(ra, 'resource', attrs.resource);
    put(ra, 'subresource', attrs.subresource);
    put(ra, 'name', attrs.name);
    spec.resourceAttributes = ra;
  } else {
    const na: NonNullable<SubjectAccessReviewSpec['nonResourceAttributes']> = {};
    put(na, 'path', attrs.path);
    put(na, 'verb', attrs.verb);
    spec.nonResourceAttributes = na;
  }
  put(spec, 'user', user.name);
  if (user.groups.length) spec.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) {
    // Go writes a map's keys sorted; the same spec then gives the same cache key.
    const extra: Record<string, string[]> = {};
    for (const k of Object.keys(user.extra).sort()) extra[k] = [...user.extra[k]!];
    spec.extra = extra;
  }
  put(spec, 'uid', user.uid);
  return spec;
}

/**
 * The request body: a SubjectAccessReview of `version` as client-go encodes it. v1beta1 names the
 * groups `group` (its Go field's JSON name).
 */
export function subjectAccessReviewBody(spec: SubjectAccessReviewSpec, version: SubjectAccessReviewVersion): string {
  let wireSpec: Record<string, unknown> = spec as Record<string, unknown>;
  if (version === 'v1beta1') {
    const { groups, extra, uid, ...rest } = spec;
    wireSpec = { ...rest, ...(groups ? { group: groups } : {}), ...(extra ? { extra } : {}), ...(uid ? { uid } : {}) };
  }
  return JSON.stringify({
    kind: 'SubjectAccessReview',
    apiVersion: `authorization.k8s.io/${version}`,
    metadata: { creationTimestamp: null },
    spec: wireSpec,
    status: { allowed: false },
  });
}

/** authorizationv1.SubjectAccessReviewStatus. */
export interface SubjectAccessReviewStatus {
  readonly allowed: boolean;
  readonly denied?: boolean;
  readonly reason?: string;
  readonly evaluationError?: string;
}

/** Decodes the webhook's answer as client-go's Into does: a SubjectAccessReview of `version`, types checked. */
export function decodeSubjectAccessReviewStatus(body: string, version: SubjectAccessReviewVersion): SubjectAccessReviewStatus {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (e) {
    throw new Error(`couldn't get version/kind; json parse error: ${(e as Error).message}`, { cause: e });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error("couldn't get version/kind; json parse error: not a JSON object");
  const o = doc as Record<string, unknown>;
  const apiVersion = o['apiVersion'];
  const kind = o['kind'];
  // An object of another kind is refused; a bare `{"status":...}` decodes into the expected type.
  if ((kind !== undefined && kind !== 'SubjectAccessReview') || (apiVersion !== undefined && apiVersion !== `authorization.k8s.io/${version}`))
    throw new Error(`no kind ${JSON.stringify(kind ?? '')} is registered for version ${JSON.stringify(apiVersion ?? '')}`);
  const status = o['status'] ?? {};
  if (typeof status !== 'object' || status === null || Array.isArray(status))
    throw new Error('json: cannot unmarshal ' + jsonKind(status) + ' into Go struct field SubjectAccessReview.status of type v1.SubjectAccessReviewStatus');
  const s = status as Record<string, unknown>;
  const field = (key: string, type: 'boolean' | 'string', goType: string): unknown => {
    const v = s[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== type)
      throw new Error(`json: cannot unmarshal ${jsonKind(v)} into Go struct field SubjectAccessReviewStatus.status.${key} of type ${goType}`);
    return v;
  };
  const allowed = field('allowed', 'boolean', 'bool') as boolean | undefined;
  const denied = field('denied', 'boolean', 'bool') as boolean | undefined;
  const reason = field('reason', 'string', 'string') as string | undefined;
  const evaluationError = field('evaluationError', 'string', 'string') as string | undefined;
  return { allowed: allowed === true, ...(denied ? { denied } : {}), ...(reason ? { reason } : {}), ...(evaluationError ? { evaluationError } : {}) };
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** Requester-controlled attributes this long or longer are not cached (a cache-filling attack). */
const MAX_CONTROLLED_ATTR_CACHE_SIZE = 10_000;

function shouldCache(a: AuthorizationAttributes): boolean {
  const size =
    a.namespace.length + a.verb.length + a.apiGroup.length + a.apiVersion.length + a.resource.length + a.subresource.length + a.name.length + a.path.length;
  return size < MAX_CONTROLLED_ATTR_CACHE_SIZE;
}

/** The most of a webhook's answer read; more is an error, not a memory blow-up. */
const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

/** A poster for a kubeconfig connection: one keep-alive agent, the token or client certificate on every call. */
export function webhookPoster(c: WebhookConnection): WebhookPoster {
  const url = new URL(c.url);
  const secure = url.protocol === 'https:';
  const agent = secure
    ? new Agent({
        keepAlive: true,
        ...(c.caPem ? { ca: c.caPem } : {}),
        ...(c.certPem ? { cert: c.certPem } : {}),
        ...(c.keyPem ? { key: c.keyPem } : {}),
        rejectUnauthorized: !c.insecureSkipTLSVerify,
        ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
      })
    : undefined;
  const what = `Post ${JSON.stringify(c.url)}`;
  return (body, timeoutMs) =>
    new Promise<WebhookResponse>((resolve, reject) => {
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        accept: 'application/json, */*',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'kplane',
      };
      if (c.token) headers['authorization'] = `Bearer ${c.token}`;
      const options = { method: 'POST', headers, ...(agent ? { agent } : {}) };
      const req = secure ? httpsRequest(url, options) : httpRequest(url, options);
      let settled = false;
      const done = (f: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f();
      };
      // The deadline covers connecting, the headers and the body, as Go's Client.Timeout does.
      const timer = setTimeout(() => {
        done(() => reject(new WebhookCallError(`${what}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, 'timeout')));
        req.destroy();
      }, timeoutMs);
      req.on('error', (e: NodeJS.ErrnoException) => {
        const reset = e.code === 'ECONNRESET' || e.code === 'EPIPE';
        done(() => reject(new WebhookCallError(`${what}: ${e.message}`, reset ? 'reset' : 'other')));
      });
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            done(() => reject(new WebhookCallError(`${what}: the response is larger than ${MAX_RESPONSE_BYTES} bytes`, 'other')));
            req.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (e: NodeJS.ErrnoException) =>
          done(() => reject(new WebhookCallError(`${what}: ${e.message}`, e.code === 'ECONNRESET' ? 'reset' : 'other'))),
        );
        res.on('end', () =>
          done(() =>
            resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] !== undefined, body: Buffer.concat(chunks).toString('utf8') }),
          ),
        );
      });
      req.end(body);
    });
}

/** A non-2xx answer as client-go's error for it reads: the Status message when it sent one. */
function statusError(r: WebhookResponse): string {
  try {
    const s = JSON.parse(r.body) as { kind?: unknown; message?: unknown };
    if (s && s.kind === 'Status' && typeof s.message === 'string' && s.message) return s.message;
  } catch {
    // not a Status: the generic text below
  }
  const text = r.body.trim().slice(0, 256);
  return `the server responded with the status code ${r.status} but did not return more information${text ? ` (${text})` : ''}`;
}

/** webhook.DefaultShouldRetry: connection reset, 500, 504, 429, or a Retry-After from the server. */
function shouldRetry(e: { kind: 'reset' | 'timeout' | 'other' } | WebhookResponse): boolean {
  if ('kind' in e) return e.kind === 'reset';
  return e.status === 500 || e.status === 504 || e.status === 429 || (e.retryAfter && e.status >= 500);
}

const sleepMs = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms).unref());

export type WebhookAuthorizer = Authorizer & RuleResolver;

/** WebhookAuthorizer: see the file's comment. */
export function createWebhookAuthorizer(opts: WebhookAuthorizerOptions): WebhookAuthorizer {
  const version = opts.version ?? 'v1beta1';
  if (!SUBJECT_ACCESS_REVIEW_VERSIONS.includes(version))
    throw new Error(`unsupported webhook authorizer version ${JSON.stringify(version)}, supported versions are "v1", "v1beta1"`);
  const post = typeof opts.connection === 'function' ? opts.connection : webhookPoster(opts.connection);
  const authorizedTTL = opts.authorizedTTLMs ?? DEFAULT_AUTHORIZED_TTL_MS;
  const unauthorizedTTL = opts.unauthorizedTTLMs ?? DEFAULT_UNAUTHORIZED_TTL_MS;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const backoff = opts.retryBackoff ?? DEFAULT_RETRY_BACKOFF;
  const name = opts.name ?? 'default';
  const log = opts.log ?? (() => {});
  const sleep = opts.sleep ?? sleepMs;
  const cache = new LRUExpireCache<SubjectAccessReviewStatus>(8192, opts.now);

  /** One round trip, measured; resolves to the status or throws the error text. */
  const call = async (body: string): Promise<{ status?: SubjectAccessReviewStatus; error?: string; retry: boolean; result: WebhookCallResult }> => {
    const started = performance.now();
    let out: { status?: SubjectAccessReviewStatus; error?: string; retry: boolean; result: WebhookCallResult };
    try {
      const r = await post(body, timeoutMs);
      if (r.status < 200 || r.status > 299) {
        out = { error: statusError(r), retry: shouldRetry(r), result: r.status === 504 ? 'timeout' : 'error' };
      } else {
        try {
          out = { status: decodeSubjectAccessReviewStatus(r.body, version), retry: false, result: 'success' };
        } catch (e) {
          out = { error: (e as Error).message, retry: false, result: 'error' };
        }
      }
    } catch (e) {
      const kind = e instanceof WebhookCallError ? e.kind : 'other';
      out = { error: (e as Error).message, retry: shouldRetry({ kind }), result: kind === 'timeout' ? 'timeout' : 'error' };
    }
    opts.metrics?.evaluation(name, out.result, (performance.now() - started) / 1000);
    return out;
  };

  /** webhook.WithExponentialBackoff: retry what DefaultShouldRetry says, with the backoff's waits between. */
  const callWithBackoff = async (body: string): Promise<{ status?: SubjectAccessReviewStatus; error?: string; result: WebhookCallResult }> => {
    let delay = backoff.initialMs;
    for (let attempt = 1; ; attempt++) {
      const r = await call(body);
      if (!r.retry || attempt >= backoff.steps) return r;
      await sleep(delay * (1 + Math.random() * backoff.jitter));
      delay *= backoff.factor;
    }
  };

  const decide = (s: SubjectAccessReviewStatus): AuthorizationResult => {
    const reason = s.reason ? { reason: s.reason } : {};
    if (s.denied && s.allowed) return { decision: 'deny', ...reason, error: 'webhook subject access review returned both allow and deny response' };
    if (s.denied) return { decision: 'deny', ...reason };
    if (s.allowed) return { decision: 'allow', ...reason };
    return { decision: 'no-opinion', ...reason };
  };

  return {
    authorize(user, attrs) {
      const spec = subjectAccessReviewSpec(user, attrs);
      const key = JSON.stringify(spec);
      const hit = cache.get(key);
      if (hit) return decide(hit);
      return callWithBackoff(subjectAccessReviewBody(spec, version)).then((r) => {
        if (!r.status) {
          // An outage or a misconfigured webhook: no opinion, the next authorizer decides.
          log(`Failed to make webhook authorizer request: ${r.error}`);
          opts.metrics?.failOpen(name, r.result);
          return { decision: 'no-opinion', error: r.error! };
        }
        if (shouldCache(attrs)) {
          const ttl = r.status.allowed ? authorizedTTL : unauthorizedTTL;
          if (ttl > 0) cache.add(key, r.status, ttl);
        }
        return decide(r.status);
      });
    },
    rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: true, error: 'webhook authorizer does not support user rule resolution' }),
  };
}
