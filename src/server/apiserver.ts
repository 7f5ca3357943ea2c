// The API server's request path: filters (limits, authentication) → routing → handlers.
// Handlers stay thin: they decode, run admission, call the registry's store and encode.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  StatusError,
  badRequest,
  undecodable,
  fieldIssue,
  invalid,
  isStatusError,
  methodNotSupported,
  notAcceptable,
  notFound,
  requestEntityTooLarge,
  toStatusError,
  tooManyRequests,
  type FieldIssue,
} from '../apimachinery/errors.js';
import { pruneUnknownFields } from '../apimachinery/unknown-fields.js';
import { normalizeTimes } from '../apimachinery/times.js';
import { resolveSchema, refTo } from '../apimachinery/schema.js';
import { encodeWatchEvent, PROTOBUF_WATCH_MEDIA_TYPE, decodeObject } from '../apimachinery/protobuf/index.js';
import { apiVersionOf, isJsonObject, type KubeObject, type KubeList, type GroupVersionResource, type ObjectMeta } from '../apimachinery/types.js';
import { applyPatch } from './patch.js';
import { applyRequest, fieldManagerScope, forceOf, managerOrUserAgent, trackUpdate, trackViewUpdate, patchOptionsIssues, type FieldManagerScope } from './fieldmanager.js';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin, ApiRegistry, RegisteredResource, UserInfo } from '../registry/registry.js';
import type { DeleteOptions, ListOptions } from '../registry/store.js';
import { partialObjectMetadata, toTable, type IncludeObject } from '../registry/table.js';
import { cloneObject } from '../registry/codec.js';
import { inexactIntegerError } from '../apimachinery/json.js';
import { goTypeError } from '../apimachinery/gotypes.js';
import { exactMetadataName, parseFieldSelector } from '../apimachinery/fields.js';
import { Discovery, AGGREGATED_DISCOVERY_V2, AGGREGATED_DISCOVERY_V2BETA1 } from './discovery.js';
import { BodyBuffers, finishedWhenSent } from './body-buffers.js';
import type { ApiMetrics } from './metrics.js';
import { sendMetrics } from './promhttp.js';
import { DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, DEFAULT_MAX_REQUESTS_INFLIGHT, MaxInFlight } from './maxinflight.js';
import {
  chooseOutput,
  partialMetadataMismatch,
  contentTypeOf,
  decodeBody,
  inexactIntegers,
  NOT_ACCEPTABLE_STREAM,
  parseAccept,
  patchTypeOf,
  toYaml,
  type OutputChoice,
  type PatchType,
} from './negotiation.js';
import { parseRequestInfo, queryBool, type RequestInfo } from './requestinfo.js';
import { defaultGroupVersionKind } from './gvk.js';
import { endBody, firstHeaderValue } from './compression.js';
import {
  clearDeadline,
  Deadlines,
  DEFAULT_REQUEST_TIMEOUT_MS,
  FILTER_TIMEOUT_BODY,
  FILTER_TIMEOUT_CONTENT_TYPE,
  filterTimeoutMs,
  handlerBoundFirst,
  handlerTimeoutError,
  isSilenced,
  silence,
  WRITE_TIMEOUT_UPPER_BOUND_MS,
  type PendingDeadline,
} from './deadline.js';
import { parseGoDuration } from '../golang/time.js';

// The HTTP/2 compatibility API mirrors node:http's; one type keeps the handlers simple.
export type Request = IncomingMessage;
export type Response = ServerResponse;

export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor?: string;
  emulationMinor?: string;
  minCompatibilityMajor?: string;
  minCompatibilityMinor?: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

export interface OpenAPIProvider {
  /** Serves /openapi/v2 and /openapi/v3[...]; returns false when the path is not its own. */
  handle(path: string, query: URLSearchParams, accept: string | undefined, res: Response, req: Request): boolean | Promise<boolean>;
}

export interface HealthProvider {
  handle(path: string, query: URLSearchParams): { status: number; body: string; contentType: string } | undefined | Promise<{ status: number; body: string; contentType: string } | undefined>;
}

export interface ApiServerConfig {
  readonly registry: ApiRegistry;
  readonly admission: readonly AdmissionPlugin[];
  /** Throws a 401 StatusError for requests without valid credentials. */
  readonly authenticate: (req: Request) => UserInfo;
  /** Largest request body accepted (bytes); 3 MiB like kube-apiserver. */
  readonly maxRequestBodyBytes: number;
  /**
   * --max-requests-inflight: get and list requests served at once before a 429 (watches never
   * count); default 400, 0 = no limit. See maxinflight.ts.
   */
  readonly maxRequestsInFlight?: number;
  /** --max-mutating-requests-inflight: requests of every other verb served at once before a 429; default 200, 0 = no limit. */
  readonly maxMutatingRequestsInFlight?: number;
  readonly metrics?: ApiMetrics;
  readonly health?: HealthProvider;
  readonly openapi?: OpenAPIProvider;
  readonly version: VersionInfo;
  /** Address clients reach this server on, for /api's serverAddressByClientCIDRs. */
  readonly serverAddress: () => string;
  readonly metricsText?: () => Promise<{ contentType: string; body: string }>;
  /** Minimum watch duration; each watch lasts a random time in [min, 2*min) unless timeoutSeconds is given. */
  readonly minRequestTimeoutSeconds?: number;
  /** How often an idle watch with allowWatchBookmarks=true gets a BOOKMARK (default: the store's, 10 s). */
  readonly watchBookmarkIntervalMs?: number;
  /**
   * --request-timeout: the deadline of every request but a watch, in ms (default 60,000); a shorter
   * `?timeout=` shortens it. Past it the answer is a 504 (see deadline.ts).
   */
  readonly requestTimeoutMs?: number;
  /** APIResponseCompression: gzip bodies over 128 KiB for clients that ask (default true; see compression.ts). */
  readonly responseCompression?: boolean;
  readonly log?: (msg: string) => void;
}

/** How long a watch's first step may take before its headers are sent anyway. */
const WATCH_HEADER_GRACE_MS = 100;

/** JSON of objects sent on watches, by object identity (decoded objects are shared and read-only). */
const watchJsonByObject = new WeakMap<KubeObject, string>();

/** Paths any client may read without credentials (kube's system:public-info-viewer). */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

export class ApiServer {
  readonly discovery: Discovery;
  private readonly maxInFlight: MaxInFlight;
  private shuttingDown = false;
  private readonly openWatches = new Set<AbortController>();
  /** Memory for list bodies, reused once a response has sent its body (see BodyBuffers). */
  private readonly listBodies = new BodyBuffers();
  private readonly requestTimeoutMs: number;
  private readonly compression: boolean;
  /** The deadlines of requests answered by the timeout filter when they pass, and of writes answered by their handler. */
  private readonly deadlines = new Deadlines<RequestContext>((ctx) => this.deadlinePassed(ctx, false));
  private readonly writeDeadlines = new Deadlines<RequestContext>((ctx) => this.deadlinePassed(ctx, true));

  constructor(private readonly cfg: ApiServerConfig) {
    this.discovery = new Discovery(cfg.registry);
    this.requestTimeoutMs = cfg.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.compression = cfg.responseCompression ?? true;
    this.maxInFlight = new MaxInFlight(cfg.maxRequestsInFlight ?? DEFAULT_MAX_REQUESTS_INFLIGHT, cfg.maxMutatingRequestsInFlight ?? DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, cfg.metrics);
  }

  /** Ends open watches (clients re-watch elsewhere) and refuses new ones. */
  shutdown(): void {
    this.shuttingDown = true;
    this.maxInFlight.stop();
    for (const c of this.openWatches) c.abort();
  }

  handle = (req: Request, res: Response): void => {
    const started = performance.now();
    // WithAuditInit and WithCacheControl: every answer carries an audit ID (the client's when it
    // sent one) and is private unless a handler says otherwise.
    res.setHeader('Audit-Id', header(req, 'audit-id') || randomUUID());
    res.setHeader('Cache-Control', 'no-cache, private');
    let info: RequestInfo | undefined;
    let query: URLSearchParams | undefined;
    let longRunning = false;
    try {
      const url = new URL(req.url ?? '/', 'https://kplane.invalid');
      query = url.searchParams;
      const path = decodePath(url.pathname);
      info = parseRequestInfo(req.method ?? 'GET', path, query);
      // Once per request: at 'finish', or at 'close' for a stream the client ended (a watch), as upstream counts those too.
      let record: (() => void) | undefined;
      if (this.cfg.metrics) {
        record = recordOnce(this.cfg.metrics, req, res, info, query, started);
        res.on('finish', record);
        res.on('close', record);
      }
      longRunning = info.verb === 'watch';
      // WithRequestDeadline: a timeout that is not a Go duration is refused before anything else.
      const timeoutParam = longRunning ? null : query.get('timeout');
      let userTimeoutMs: number | undefined;
      if (timeoutParam) {
        const d = parseGoDuration(timeoutParam);
        if ('error' in d) throw badRequest(`invalid timeout specified in the request URL - ${d.error}`);
        userTimeoutMs = Number(d.ns) / 1e6;
      }
      let user: UserInfo;
      try {
        user = this.cfg.authenticate(req);
      } catch (e) {
        if (!PUBLIC_PATHS.has(path) && !/^\/(healthz|livez|readyz)\//.test(path)) throw e;
        user = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
      }
      let deadline: PendingDeadline<RequestContext> | undefined;
      if (!longRunning) {
        // WithMaxInFlightLimit, after authentication: a 429 never reaches a handler, so it is a
        // termination (apiserver_request_terminations_total), not a served request.
        const slot = this.maxInFlight.admit(info.verb, user.groups);
        if (slot === 'too-many') {
          if (record) {
            res.off('finish', record);
            res.off('close', record);
          }
          this.cfg.metrics?.recordRequestTermination(req.method ?? 'GET', info, query, header(req, 'content-type'), 429);
          const tooMany = tooManyRequests('Too many requests, please try again later.');
          throw new PlainTextError(tooMany.status, tooMany.message);
        }
        res.on('close', () => {
          slot.release();
          if (deadline) clearDeadline(deadline);
        });
      }
      const ctx: RequestContext = { req, res, info, query, user, accept: firstHeaderValue(req, 'accept'), compress: this.compression, expired: false };
      if (!longRunning) {
        // One deadline per request: the filter's, or the write handler's 34 s bound when that comes first.
        const ms = filterTimeoutMs(userTimeoutMs, this.requestTimeoutMs);
        deadline = handlerBoundFirst(info.verb, ms) ? this.writeDeadlines.add(ctx, WRITE_TIMEOUT_UPPER_BOUND_MS, started) : this.deadlines.add(ctx, ms, started);
      }
      this.route(ctx).catch((e: unknown) => this.fail(ctx.res, e, ctx));
    } catch (e) {
      this.fail(res, e, undefined);
    }
  };

  /** 405 unless the resource (or its subresource `sub`) serves `verb`. */
  private allowed(r: RegisteredResource, sub: string, verb: string): void {
    const d = r.descriptor;
    const verbs = sub ? (d.subresources.find((s) => s.name === sub)?.verbs ?? []) : d.verbs;
    if (!verbs.includes(verb)) throw methodNotAllowed(r, verb);
  }

  /**
   * A body (or a patch's result) with a field of the wrong type for the kind's Go struct: the
   * decoder's 400 for a create or update, as upstream; after a patch a 422 on `patch`, as upstream's
   * patch handler reports a result that does not decode.
   */
  private checkGoTypes(r: RegisteredResource, obj: KubeObject, patched = false): void {
    if (!r.registration.goTypedBody) return;
    const why = goTypeError(obj, r.descriptor.definitionName, this.cfg.registry.definitions, r.scheme.goFieldTypes);
    if (why === undefined) return;
    if (!patched) {
      const d = r.descriptor;
      throw undecodable(d.kind, d.version, d.kind, why);
    }
    throw invalid({ group: '', kind: '' }, '', [fieldIssue.invalid('patch', JSON.stringify(obj), why)]);
  }

  /** The body of a create, update or patch; custom resources refuse integers a double would round. */
  private async readObjectBody(ctx: RequestContext, r: RegisteredResource): Promise<Uint8Array> {
    const body = await readBody(ctx.req, this.cfg.maxRequestBodyBytes);
    if (r.registration.exactIntegers) {
      const found = inexactIntegers(header(ctx.req, 'content-type'), body);
      if (found.length) throw inexactIntegerError(found);
    }
    return body;
  }

  /**
   * A request's deadline passed. Unless the handler answered already: the timeout filter's 504 (only
   * the headers set before the handler ran), or for a write past its 34 s bound the handler's own
   * 504 Status; a response already started is reset. What the handler writes afterwards is dropped,
   * and its work stops before it reaches storage (validateAdmission).
   */
  private deadlinePassed(ctx: RequestContext, byHandler: boolean): void {
    const { req, res } = ctx;
    ctx.expired = true;
    try {
      if (res.writableEnded) return;
      const timedOutAt = performance.now();
      ctx.timedOutBy = byHandler ? 'rest-handler' : 'timeout-handler';
      const late = (): void => {
        this.cfg.metrics?.recordPostTimeout(ctx.timedOutBy!, 'ok');
        this.cfg.log?.(postTimeout(req, timedOutAt, '<nil>'));
      };
      if (res.headersSent) {
        // http.ErrAbortHandler: the HTTP/2 stream is reset, the HTTP/1.1 connection closed.
        silence(res, late);
        res.destroy();
        return;
      }
      if (byHandler) {
        this.fail(res, handlerTimeoutError(), ctx);
      } else {
        // The timeout writer's headers are those of the filters around it: the audit ID and Cache-Control.
        const auditId = res.getHeader('Audit-Id');
        for (const name of res.getHeaderNames()) res.removeHeader(name);
        if (auditId !== undefined) res.setHeader('Audit-Id', auditId);
        res.setHeader('Cache-Control', 'no-cache, private');
        res.setHeader('Content-Type', FILTER_TIMEOUT_CONTENT_TYPE);
        res.statusCode = 504;
        res.end(FILTER_TIMEOUT_BODY);
        this.cfg.metrics?.recordRequestTermination(req.method ?? 'GET', ctx.info, ctx.query, header(req, 'content-type'), 504);
      }
      silence(res, late);
    } catch (e) {
      this.cfg.log?.(`${req.method ?? ''} ${req.url ?? ''}: answering the timeout failed: ${e instanceof Error ? e.message : String(e)}`);
      res.destroy();
    }
  }

  private fail(res: Response, e: unknown, ctx: RequestContext | undefined): void {
    if (isSilenced(res)) {
      // The handler failed after its request timed out: nothing more to answer.
      // Upstream's labels: an error answer is a handler that returned (the timeout filter's `ok`, the
      // write handler's `error`); anything but a Status is a crash, its `panic`.
      if (ctx?.timedOutBy) this.cfg.metrics?.recordPostTimeout(ctx.timedOutBy, !(e instanceof StatusError) ? 'panic' : ctx.timedOutBy === 'timeout-handler' ? 'ok' : 'error');
      this.cfg.log?.(postTimeout(res.req ?? ctx?.req, undefined, e instanceof Error ? e.message : String(e)));
      return;
    }
    const err = toStatusError(e);
    // A Status made on purpose is logged by its message; anything else that failed, with its stack.
    if (err.code >= 500 && this.cfg.log) this.cfg.log(`${ctx?.req.method ?? ''} ${ctx?.req.url ?? ''}: ${e instanceof ClientWentAway || e instanceof StatusError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    if (res.headersSent) {
      res.destroy?.();
      return;
    }
    if (err.status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(err.status.details.retryAfterSeconds));
    if (e instanceof PlainTextError) {
      // Go's http.Error, as upstream's not-found handler and max-in-flight filter answer.
      res.statusCode = e.code;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(`${e.text}\n`);
      return;
    }
    // An HTTP/1.1 body refused part-way is still on the wire: close the connection after the answer
    // so that its remaining bytes are not read as the next request (Go's server does the same).
    if (err.code === 413 && ctx?.req.httpVersionMajor === 1) res.setHeader('Connection', 'close');
    let choice: OutputChoice;
    try {
      choice = chooseOutput(ctx?.accept, { protobufOk: true, allowTransforms: false });
    } catch {
      choice = { format: 'json', transform: 'none', transformVersion: 'v1', pretty: false };
    }
    writeBody(res, err.code, err.status as unknown as KubeObject, choice, ctx ? prettyOutput(ctx, choice) : choice.pretty, this.compression, this.cfg.registry.scheme);
  }

  private async route(ctx: RequestContext): Promise<void> {
    const { info, res, query } = ctx;
    const path = info.path;
    if (!info.isResourceRequest) {
      if (path === '/version' || path === '/version/') {
        // A GET-only web service upstream; WriteRawJSON pretty-prints (json.MarshalIndent, no newline).
        if (ctx.req.method !== 'GET' && ctx.req.method !== 'HEAD') throw routerMethodNotAllowed();
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(this.cfg.version, null, 2));
        return;
      }
      if (this.cfg.health) {
        const h = await this.cfg.health.handle(path, query);
        if (h) {
          res.statusCode = h.status;
          res.setHeader('Content-Type', h.contentType);
          res.setHeader('X-Content-Type-Options', 'nosniff');
          res.end(h.body);
          return;
        }
      }
      if (path === '/metrics' && this.cfg.metricsText) {
        const m = await this.cfg.metricsText();
        sendMetrics(ctx.req, res, m.body, m.contentType);
        return;
      }
      if (this.cfg.openapi && (path.startsWith('/openapi/') || path === '/openapi')) {
        if (await this.cfg.openapi.handle(path, query, ctx.accept, res, ctx.req)) return;
      }
      if (ctx.req.method === 'GET' || ctx.req.method === 'HEAD') {
        if (this.serveDiscovery(ctx, path)) return;
      }
      if (path === '/') return writeJson(res, 200, { paths: this.rootPaths() });
      throw notFoundPage();
    }
    if ((ctx.req.method === 'GET' || ctx.req.method === 'HEAD') && info.resource === '' && this.serveDiscovery(ctx, path)) return;
    const r = this.cfg.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!r) {
      // Inside a group/version with built-in resources, go-restful answers with a Status; anywhere
      // else (no such group/version, or one only custom resources serve) the not-found handler's text.
      const builtIn = this.cfg.registry.resources.some((x) => !x.registration.customResource && x.descriptor.group === info.apiGroup && x.descriptor.version === info.apiVersion);
      throw builtIn ? pageNotFound() : notFoundPage();
    }
    await this.serveResource(ctx, r);
  }

  private rootPaths(): string[] {
    const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/metrics', '/openapi/v2', '/openapi/v3', '/readyz', '/version'];
    for (const gv of this.cfg.registry.groupVersions()) if (gv.group) paths.push(`/apis/${gv.group}`, `/apis/${gv.group}/${gv.version}`);
    return [...new Set(paths)].sort();
  }

  private serveDiscovery(ctx: RequestContext, path: string): boolean {
    const p = path.replace(/\/+$/, '');
    const d = this.discovery;
    if (p === '/api' || p === '/apis') {
      const aggregated = pickAggregated(ctx.accept);
      if (aggregated) {
        const body = d.aggregated(p === '/api' ? 'core' : 'groups', aggregated);
        const etag = d.etag(body);
        ctx.res.setHeader('ETag', etag);
        ctx.res.setHeader('Vary', 'Accept');
        // ServeHTTPWithETag: a cacheable document (clients revalidate with If-None-Match).
        ctx.res.setHeader('Cache-Control', 'public');
        if (header(ctx.req, 'if-none-match') === etag) {
          ctx.res.statusCode = 304;
          ctx.res.end();
          return true;
        }
        ctx.res.statusCode = 200;
        ctx.res.setHeader('Content-Type', `application/json;g=apidiscovery.k8s.io;v=${aggregated};as=APIGroupDiscoveryList`);
        endBody(ctx.res, body, ctx.compress);
        return true;
      }
      const obj = p === '/api' ? d.apiVersions(this.cfg.serverAddress()) : d.apiGroupList();
      writeNegotiated(ctx, 200, obj);
      return true;
    }
    const m = /^\/api\/([^/]+)$/.exec(p) ?? /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
    if (m) {
      const group = p.startsWith('/api/') ? '' : m[1]!;
      const version = p.startsWith('/api/') ? m[1]! : m[2]!;
      const list = d.resourceList(group, version);
      if (!list) return false;
      writeNegotiated(ctx, 200, list);
      return true;
    }
    const g = /^\/apis\/([^/]+)$/.exec(p);
    if (g) {
      const group = d.apiGroup(g[1]!);
      if (!group) return false;
      writeNegotiated(ctx, 200, group);
      return true;
    }
    return false;
  }

  // ---- resources ---------------------------------------------------------------------------

  private async serveResource(ctx: RequestContext, r: RegisteredResource): Promise<void> {
    const { info } = ctx;
    const d = r.descriptor;
    const itemName = info.parts[1] ?? '';
    const sub = info.subresource;
    if (sub && !d.subresources.some((s) => s.name === sub)) throw pageNotFound();
    if (info.parts.length > 3) throw pageNotFound();
    if (r.registration.warnings?.length) setWarnings(ctx.res, r.registration.warnings);
    // Namespaced resources need a namespace except for list/watch across all namespaces.
    const namespace = d.namespaced ? info.namespace || undefined : undefined;
    if (!d.namespaced && info.namespace && info.resource !== 'namespaces') throw pageNotFound();
    if (d.namespaced && !namespace && itemName) throw pageNotFound();
    const method = ctx.req.method ?? 'GET';
    if (itemName && sub && r.store.strategy.subresources?.[sub]?.view && info.verb !== 'watch') {
      if (method === 'GET' || method === 'HEAD') this.allowed(r, sub, 'get');
      else if (method === 'PUT') this.allowed(r, sub, 'update');
      else if (method === 'PATCH') this.allowed(r, sub, 'patch');
      else throw methodNotAllowed(r, method === 'DELETE' ? 'delete' : method === 'POST' ? 'create' : method.toLowerCase());
      return this.serveView(ctx, r, namespace, itemName, sub);
    }
    if (itemName) {
      switch (method) {
        case 'GET':
        case 'HEAD':
          if (info.verb === 'watch') {
            this.allowed(r, sub, 'watch');
            return this.watch(ctx, r, namespace, itemName);
          }
          this.allowed(r, sub, 'get');
          return this.get(ctx, r, namespace, itemName);
        case 'PUT':
          this.allowed(r, sub, 'update');
          return this.update(ctx, r, namespace, itemName, sub);
        case 'PATCH':
          this.allowed(r, sub, 'patch');
          return this.patch(ctx, r, namespace, itemName, sub);
        case 'DELETE':
          if (sub) throw methodNotAllowed(r, 'delete');
          this.allowed(r, sub, 'delete');
          return this.delete(ctx, r, namespace, itemName);
        case 'POST':
          throw methodNotAllowed(r, 'create');
        default:
          throw methodNotAllowed(r, method.toLowerCase());
      }
    }
    if (d.namespaced && !namespace && (method === 'POST' || method === 'DELETE')) throw pageNotFound();
    switch (method) {
      case 'GET':
      case 'HEAD':
        if (info.verb === 'watch') {
          this.allowed(r, sub, 'watch');
          return this.watch(ctx, r, namespace, undefined);
        }
        this.allowed(r, sub, 'list');
        return this.list(ctx, r, namespace);
      case 'POST':
        this.allowed(r, sub, 'create');
        return this.create(ctx, r, namespace);
      case 'DELETE':
        this.allowed(r, sub, 'deletecollection');
        return this.deleteCollection(ctx, r, namespace);
      default:
        throw methodNotAllowed(r, method.toLowerCase());
    }
  }

  private async get(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string): Promise<void> {
    const rv = ctx.query.get('resourceVersion');
    const opts = rv ? { resourceVersion: rv } : {};
    const choice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource });
    if (plainJSON(ctx, choice)) {
      const got = await r.store.getJSON(namespace, name, opts);
      if ('object' in got) return this.respondObject(ctx, r, 200, got.object, [], choice);
      return sendJSON(ctx, 200, got.json, []);
    }
    this.respondObject(ctx, r, 200, await r.store.get(namespace, name, opts), [], choice);
  }

  private async list(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined): Promise<void> {
    const q = ctx.query;
    const choice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource });
    if (plainJSON(ctx, choice)) {
      const sent = finishedWhenSent(ctx.res);
      if (!sent) return sendJSON(ctx, 200, await r.store.listJSON(namespace, listOptionsFrom(q)), []);
      const lease: { buf?: Buffer } = {};
      const body = await r.store.listJSON(namespace, listOptionsFrom(q), (size) => (lease.buf = this.listBodies.take(size)));
      // Given back only once the response has sent it (never after an abort).
      const buf = lease.buf;
      if (buf) sent.once('finish', () => this.listBodies.give(buf));
      return sendJSON(ctx, 200, body, []);
    }
    const list = await r.store.list(namespace, listOptionsFrom(q));
    this.respondList(ctx, r, list, choice);
  }

  private async create(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined): Promise<void> {
    const opts = writeParams(ctx.query, 'create');
    const body = await this.readObjectBody(ctx, r);
    const decoded = decodeObjectBody(header(ctx.req, 'content-type'), body, r);
    const obj = decoded.object;
    // Like kube's decoder, the endpoint's group/version/kind fills what the body leaves out.
    defaultGroupVersionKind(obj, r.descriptor);
    checkKind(obj, r);
    this.checkGoTypes(r, obj);
    const warnings = this.checkFields(r, obj, decoded.duplicateFields, opts.fieldValidation);
    // rest.WipeObjectMetaSystemFields: what the server sets is not the client's, nor its managed fields'.
    wipeObjectMetaSystemFields(obj);
    dedupOwnerReferences(obj, false, warnings);
    trackUpdate(this.fieldScope(r, ''), undefined, obj, managerOrUserAgent(opts.fieldManager, header(ctx.req, 'user-agent')));
    await this.admit(this.attrs(ctx, r, 'CREATE', namespace, obj.metadata?.name ?? '', obj, undefined, opts.dryRun));
    dedupOwnerReferences(obj, true, warnings);
    // Methods, not arrow functions in properties: tsx (esbuild's keepNames) names each of those with
    // a defineProperty call when it is made, ~0.5 µs per request.
    const server = this;
    const out = await r.store.create(namespace, obj, {
      dryRun: opts.dryRun,
      ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}),
      validate(o) {
        return server.validateAdmission(server.attrs(ctx, r, 'CREATE', namespace, o.metadata?.name ?? '', o, undefined, opts.dryRun), ctx);
      },
    });
    const choice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource });
    // As GET: the stored bytes with the resourceVersion spliced in, no parse and no stringify.
    const json = plainJSON(ctx, choice) ? out.json?.() : undefined;
    if (json) return sendJSON(ctx, 201, json, [...warnings, ...out.warnings]);
    this.respondObject(ctx, r, 201, out.object, [...warnings, ...out.warnings], choice);
  }

  private async update(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string, sub: string): Promise<void> {
    const opts = writeParams(ctx.query, 'update');
    const body = await this.readObjectBody(ctx, r);
    const decoded = decodeObjectBody(header(ctx.req, 'content-type'), body, r);
    const obj = decoded.object;
    // Like kube's decoder, the endpoint's group/version/kind fills what the body leaves out.
    defaultGroupVersionKind(obj, r.descriptor);
    checkKind(obj, r);
    this.checkGoTypes(r, obj);
    // checkName (handlers/rest.go): the body must name the object of the URL; an empty name does not.
    const bodyName = obj.metadata?.name ?? '';
    if (bodyName !== name) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
    const warnings = this.checkFields(r, obj, decoded.duplicateFields, opts.fieldValidation);
    const fields = this.fieldScope(r, sub);
    const manager = managerOrUserAgent(opts.fieldManager, header(ctx.req, 'user-agent'));
    const dedupWarnings: string[] = [];
    dedupOwnerReferences(obj, false, dedupWarnings);
    const result = await r.store.update(
      namespace,
      name,
      async (current) => {
        const incoming = cloneObject(obj);
        trackUpdate(fields, current, incoming, manager);
        await this.admit(this.attrs(ctx, r, current ? 'UPDATE' : 'CREATE', namespace, name, incoming, current, opts.dryRun, sub));
        dedupOwnerReferences(incoming, true, dedupWarnings);
        return incoming;
      },
      {
        dryRun: opts.dryRun,
        ...(sub ? { subresource: sub } : {}),
        validate: this.validator(ctx, r, undefined, namespace, name, opts.dryRun, sub),
      },
    );
    this.respondObject(ctx, r, result.created ? 201 : 200, result.object, [...warnings, ...dedupWarnings, ...result.warnings]);
  }

  private async patch(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string, sub: string): Promise<void> {
    let patchType: PatchType;
    try {
      patchType = patchTypeOf(header(ctx.req, 'content-type'));
    } catch (e) {
      // A built-in PATCH route consumes only the patch types: go-restful refuses any other with a
      // body before the handler runs (its own 415 words, empty details).
      if (!r.registration.customResource && Number(header(ctx.req, 'content-length') ?? 0) > 0) {
        throw new StatusError({ reason: 'UnsupportedMediaType', code: 415, message: '415: Unsupported Media Type', details: {} });
      }
      throw e;
    }
    const opts = writeParams(ctx.query, 'patch', patchOptionsIssues(ctx.query, patchType));
    const body = await this.readObjectBody(ctx, r);
    const schema = this.schemaOf(r);
    const fields = this.fieldScope(r, sub);
    const manager = managerOrUserAgent(opts.fieldManager, header(ctx.req, 'user-agent'));
    let warnings: string[] = [];
    const result = await r.store.update(
      namespace,
      name,
      async (current) => {
        if (patchType === 'apply') {
          const applied = applyRequest(fields, current, { body, manager, force: forceOf(ctx.query), fieldValidation: opts.fieldValidation });
          this.checkGoTypes(r, applied.object, true);
          warnings = applied.warnings;
          await this.admit(this.attrs(ctx, r, current ? 'UPDATE' : 'CREATE', namespace, name, applied.object, current, opts.dryRun, sub));
          // A patch is deduplicated only after mutating admission (patch.go).
          dedupOwnerReferences(applied.object, true, warnings);
          return applied.object;
        }
        if (!current) throw notFound(r.store.groupResource, name);
        const patched = applyPatch(patchType, current, body, {
          schema: r.registration.strategicMergePatch === false ? undefined : schema,
          definitions: this.cfg.registry.definitions,
          kind: r.descriptor.kind,
          group: r.descriptor.group,
        });
        checkKind(patched.object, r);
        this.checkGoTypes(r, patched.object, true);
        // checkName: a patch that leaves the object without a name (null, "", or no metadata) names nothing.
        if (!patched.object.metadata?.name) throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
        warnings = this.checkFields(r, patched.object, patched.duplicateFields, opts.fieldValidation);
        trackUpdate(fields, current, patched.object, manager);
        await this.admit(this.attrs(ctx, r, current ? 'UPDATE' : 'CREATE', namespace, name, patched.object, current, opts.dryRun, sub));
        dedupOwnerReferences(patched.object, true, warnings);
        return patched.object;
      },
      {
        dryRun: opts.dryRun,
        ...(sub ? { subresource: sub } : {}),
        ...(patchType === 'apply' ? { forceAllowCreate: true } : {}),
        validate: this.validator(ctx, r, undefined, namespace, name, opts.dryRun, sub),
      },
    );
    this.respondObject(ctx, r, result.created ? 201 : 200, result.object, [...warnings, ...result.warnings]);
  }

  /**
   * GET/PUT/PATCH of a subresource with a kind of its own (scale: autoscaling/v1 Scale): bodies and
   * answers are the subresource's view of the object; the strategy maps writes back onto it.
   */
  private async serveView(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string, sub: string): Promise<void> {
    const view = r.store.strategy.subresources![sub]!.view!;
    const sd = r.descriptor.subresources.find((s) => s.name === sub)!;
    const gvk = { group: sd.group ?? r.descriptor.group, version: sd.version ?? r.descriptor.version, kind: sd.kind };
    const method = ctx.req.method ?? 'GET';
    if (method === 'GET' || method === 'HEAD') {
      const rv = ctx.query.get('resourceVersion');
      const obj = await r.store.get(namespace, name, rv ? { resourceVersion: rv } : {});
      return writeNegotiated(ctx, 200, view(obj));
    }
    const patchType = method === 'PATCH' ? patchTypeOf(header(ctx.req, 'content-type')) : undefined;
    const opts = writeParams(ctx.query, patchType ? 'patch' : 'update');
    const body = await readBody(ctx.req, this.cfg.maxRequestBodyBytes);
    let warnings: string[] = [];
    const definitionName = `io.k8s.api.${gvk.group || 'core'}.${gvk.version}.${gvk.kind}`;
    const schema = resolveSchema(this.cfg.registry.definitions, refTo(definitionName));
    const toObject = (o: KubeObject, duplicates: readonly string[]): KubeObject => {
      defaultGroupVersionKind(o, gvk);
      checkKind(o, { group: gvk.group, version: gvk.version, kind: gvk.kind });
      const unknown = schema ? pruneUnknownFields(o, schema, this.cfg.registry.definitions) : [];
      const problems = opts.fieldValidation === 'Ignore' ? [] : [...unknown.map((p) => `unknown field "${p}"`), ...duplicates.map((p) => `duplicate field "${p}"`)];
      if (problems.length && opts.fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
      warnings = problems;
      return o;
    };
    const decoded = patchType ? undefined : decodeBody(header(ctx.req, 'content-type'), body, { numberTexts: r.registration.goTypedBody === true, scheme: r.scheme });
    const result = await r.store.update(
      namespace,
      name,
      async (current) => {
        if (!current) throw notFound(r.store.groupResource, name);
        const base = view(current);
        let incoming: KubeObject;
        if (patchType) {
          const patched = applyPatch(patchType, base, body, { schema, definitions: this.cfg.registry.definitions, kind: gvk.kind, group: gvk.group });
          incoming = toObject(patched.object, patched.duplicateFields);
        } else {
          incoming = toObject(cloneObject(decoded!.object), decoded!.duplicateFields);
          // Like upstream's scale update: without a resourceVersion the write is unconditional.
          const m = (incoming.metadata ??= {});
          if (!m.resourceVersion) m.resourceVersion = base.metadata?.resourceVersion;
        }
        // managedFields: what the write changes in the parent, owned by its manager.
        const next = r.store.strategy.subresources![sub]!.merge(cloneObject(incoming), cloneObject(current));
        trackViewUpdate(this.fieldScope(r, sub), current, next, incoming, managerOrUserAgent(opts.fieldManager, header(ctx.req, 'user-agent')));
        await this.admit(this.attrs(ctx, r, 'UPDATE', namespace, name, incoming, current, opts.dryRun, sub));
        return incoming;
      },
      {
        dryRun: opts.dryRun,
        subresource: sub,
        validate: this.validator(ctx, r, 'UPDATE', namespace, name, opts.dryRun, sub),
      },
    );
    setWarnings(ctx.res, [...warnings, ...result.warnings]);
    writeNegotiated(ctx, 200, view(result.object));
  }

  private async readDeleteOptions(ctx: RequestContext): Promise<DeleteOptions & { dryRun: boolean }> {
    const q = ctx.query;
    const body = await readBody(ctx.req, this.cfg.maxRequestBodyBytes);
    // Upstream reads DeleteOptions from the body when there is one, and from the query only otherwise.
    let from: { dryRun: string[]; grace: unknown; propagation: string | undefined; orphan: unknown; pre: DeleteOptions['preconditions'] | undefined };
    if (body.length > 0) {
      const ct = header(ctx.req, 'content-type');
      const obj = ct?.startsWith('application/vnd.kubernetes.protobuf') ? decodeObject(body, this.cfg.registry.scheme) : decodeBody(ct, body, { scheme: this.cfg.registry.scheme }).object;
      if (!isJsonObject(obj)) throw badRequest('DeleteOptions must be an object');
      if (obj.kind !== undefined && obj.kind !== 'DeleteOptions') {
        throw undecodable(String(obj.kind), String(obj.apiVersion ?? ''), 'DeleteOptions');
      }
      const o = obj as Record<string, unknown>;
      from = {
        dryRun: Array.isArray(o.dryRun) ? o.dryRun.map(String) : [],
        grace: o.gracePeriodSeconds,
        propagation: typeof o.propagationPolicy === 'string' ? o.propagationPolicy : undefined,
        orphan: o.orphanDependents,
        pre: (o.preconditions ?? undefined) as DeleteOptions['preconditions'] | undefined,
      };
    } else {
      from = {
        dryRun: q.getAll('dryRun'),
        grace: q.has('gracePeriodSeconds') ? parseInt64Param(q.get('gracePeriodSeconds')!) : undefined,
        propagation: q.get('propagationPolicy') ?? undefined,
        orphan: q.has('orphanDependents') ? queryBool(q.get('orphanDependents')) : undefined,
        pre: undefined,
      };
    }
    // ValidateDeleteOptions, in upstream's order.
    const issues: FieldIssue[] = [];
    const p = from.propagation;
    const orphanSet = from.orphan !== undefined && from.orphan !== null;
    if (orphanSet && p !== undefined) issues.push(fieldIssue.invalid('propagationPolicy', p, 'orphanDependents and deletionPropagation cannot be both set'));
    if (p !== undefined && p !== 'Orphan' && p !== 'Background' && p !== 'Foreground') issues.push(fieldIssue.notSupported('propagationPolicy', p, ['Foreground', 'Background', 'Orphan', 'nil']));
    issues.push(...dryRunIssues(from.dryRun));
    if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', issues);
    const grace = typeof from.grace === 'number' ? from.grace : undefined;
    return {
      dryRun: from.dryRun.includes('All'),
      // rest.BeforeDelete: a negative grace period is treated as 1 second, not refused.
      ...(grace !== undefined ? { gracePeriodSeconds: grace < 0 ? 1 : grace } : {}),
      ...(p ? { propagationPolicy: p } : {}),
      ...(orphanSet ? { orphanDependents: from.orphan === true } : {}),
      ...(from.pre ? { preconditions: from.pre } : {}),
    };
  }

  private async delete(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string): Promise<void> {
    const opts = await this.readDeleteOptions(ctx);
    const out = await r.store.delete(namespace, name, { ...opts, validate: this.deleteAdmission(ctx, r, namespace, name, opts.dryRun) });
    if (out.deleted && !r.registration.returnDeletedObject) {
      const status = r.store.deletedStatus(out.object);
      return writeNegotiated(ctx, 200, status as unknown as KubeObject);
    }
    const code = !out.deleted && opts.orphanDependents === false ? 202 : 200;
    this.respondObject(ctx, r, code, out.object);
  }

  private async deleteCollection(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined): Promise<void> {
    const listOpts = listOptionsFrom(ctx.query);
    const opts = await this.readDeleteOptions(ctx);
    // Each item's admission names no object: the request's namespace and an empty name.
    const out = await r.store.deleteCollection(namespace, listOpts, { ...opts, validate: this.deleteAdmission(ctx, r, namespace, '', opts.dryRun) });
    const choice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource });
    this.respondList(ctx, r, out, choice);
  }

  /**
   * rest.AdmissionToValidateObjectDeleteFunc: a DELETE is admitted where the store reads the object
   * (after it is found and the preconditions hold), mutating then validating admission, with no
   * object and the one being deleted as the old object.
   */
  private deleteAdmission(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string, dryRun: boolean): (old: KubeObject) => Promise<void> {
    return async (old) => {
      const attrs = this.attrs(ctx, r, 'DELETE', namespace, name, undefined, old, dryRun);
      await this.admit(attrs);
      await this.validateAdmission(attrs, ctx);
    };
  }

  // ---- watch ---------------------------------------------------------------------------------

  private async watch(ctx: RequestContext, r: RegisteredResource, namespace: string | undefined, name: string | undefined): Promise<void> {
    const q = ctx.query;
    const { req, res } = ctx;
    if (this.shuttingDown) throw new StatusError({ reason: 'ServiceUnavailable', code: 503, message: 'the server is shutting down' });
    const choice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource });
    // YAML has no stream serializer upstream: a watch cannot be negotiated to it.
    if (choice.format === 'yaml') throw notAcceptable(NOT_ACCEPTABLE_STREAM);
    // The events carry single objects.
    checkPartialMetadata(choice, r, false);
    let fieldSelector = q.get('fieldSelector') ?? '';
    if (name !== undefined) {
      // A watch of one object allows no field selector but one naming that object (get.go ListResource).
      if (fieldSelector && exactMetadataName(parseFieldSelector(fieldSelector)) !== name) throw badRequest("fieldSelector metadata.name doesn't match requested name");
      fieldSelector = `metadata.name=${name}`;
    }
    // Go's int64 parameter: 0 (or none) is the server's default; a negative one ends the watch at once.
    const timeoutParam = q.get('timeoutSeconds');
    const requested = timeoutParam ? parseInt64Param(timeoutParam) : 0;
    const minTimeout = this.cfg.minRequestTimeoutSeconds ?? 1800;
    const timeoutSeconds = requested !== 0 ? Math.max(0, requested) : minTimeout * (1 + Math.random());
    const sendInitial = q.get('sendInitialEvents');
    const abort = new AbortController();
    this.openWatches.add(abort);
    const timer = setTimeout(() => abort.abort(), timeoutSeconds * 1000);
    const onClose = (): void => abort.abort();
    req.on('close', onClose);
    res.on('close', onClose);
    const d = r.descriptor;
    const untrack = this.cfg.metrics?.trackWatcher({ group: d.group, version: d.version, kind: d.kind });
    const unLongRunning = this.cfg.metrics?.trackLongRunning({ verb: 'WATCH', group: d.group, version: d.version, resource: d.plural, subresource: '', scope: namespace ? 'namespace' : 'cluster' });
    const protobuf = choice.format === 'protobuf';
    let headersWritten = false;
    const writeHeaders = (): void => {
      if (headersWritten) return;
      headersWritten = true;
      res.statusCode = 200;
      res.setHeader('Content-Type', protobuf ? PROTOBUF_WATCH_MEDIA_TYPE : choice.format === 'yaml' ? 'application/yaml' : 'application/json');
      res.setHeader('Cache-Control', 'no-cache, private');
      if ('flushHeaders' in res && typeof res.flushHeaders === 'function') res.flushHeaders();
    };
    const includeObject = (q.get('includeObject') ?? 'Metadata') as IncludeObject;
    // Like upstream's watchEmbeddedEncoder: only the first Table carries the column definitions.
    let tableHeadersSent = false;
    const encodeEvent = (type: string, obj: KubeObject): Uint8Array | string => {
      let out: KubeObject = obj;
      // Bookmarks are transformed too (a metadata-only client must be able to decode them).
      if (type !== 'ERROR') {
        if (choice.transform === 'Table') {
          const table = toTable(r.store.strategy, [obj], {
            includeObject,
            apiVersion: `meta.k8s.io/${choice.transformVersion}`,
            listMeta: obj.metadata?.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {},
            noHeaders: tableHeadersSent,
          });
          tableHeadersSent = true;
          out = table as unknown as KubeObject;
        } else if (choice.transform === 'PartialObjectMetadata') out = partialObjectMetadata(obj, `meta.k8s.io/${choice.transformVersion}`);
      }
      if (protobuf) return encodeWatchEvent(type as 'ADDED', out, r.scheme);
      if (choice.format === 'yaml') return `---\n${toYaml({ type, object: out })}`;
      // Decoded objects are shared and read-only: one event fanned out to many watchers is serialised once.
      if (out === obj) {
        let json = watchJsonByObject.get(obj);
        if (json === undefined) watchJsonByObject.set(obj, (json = JSON.stringify(obj)));
        return `{"type":"${type}","object":${json}}\n`;
      }
      return `{"type":"${type}","object":${JSON.stringify(out)}}\n`;
    };
    try {
      const events = r.store.watch(namespace, {
        ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
        ...(q.has('resourceVersion') ? { resourceVersion: q.get('resourceVersion')! } : {}),
        ...(q.get('resourceVersionMatch') ? { resourceVersionMatch: q.get('resourceVersionMatch')! } : {}),
        allowWatchBookmarks: queryBool(q.get('allowWatchBookmarks')),
        ...(this.cfg.watchBookmarkIntervalMs !== undefined ? { progressIntervalMs: this.cfg.watchBookmarkIntervalMs } : {}),
        ...(sendInitial !== null ? { sendInitialEvents: queryBool(sendInitial) } : {}),
        ...(q.get('continue') ? { continue: q.get('continue')! } : {}),
        signal: abort.signal,
      });
      const it = events[Symbol.asyncIterator]();
      // Errors the store finds at once (a bad selector or resourceVersion) are plain answers, so the
      // first step gets a moment before the headers go out. A watch with nothing to say yet must still
      // send its headers promptly, as upstream does: clients (client-go's Watch()) wait for them.
      const firstStep = it.next();
      let graceTimer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        firstStep.then(() => true, () => true),
        new Promise<boolean>((ok) => (graceTimer = setTimeout(() => ok(false), WATCH_HEADER_GRACE_MS))),
      ]);
      clearTimeout(graceTimer);
      if (!settled) writeHeaders();
      let first: IteratorResult<{ type: string; object: KubeObject }>;
      try {
        first = await firstStep;
      } catch (e) {
        const err = toStatusError(e);
        if (err.code !== 410 && !headersWritten) throw err;
        writeHeaders();
        res.write(encodeEvent('ERROR', err.status as unknown as KubeObject));
        res.end();
        return;
      }
      writeHeaders();
      let next: IteratorResult<{ type: string; object: KubeObject }> | undefined = first;
      while (next && !next.done) {
        const ok = res.write(encodeEvent(next.value.type, next.value.object));
        this.cfg.metrics?.watchEventsSent({ group: d.group, version: d.version, kind: d.kind });
        if (!ok) await waitForDrain(res, abort.signal);
        if (abort.signal.aborted) break;
        try {
          next = await it.next();
        } catch (e) {
          if (abort.signal.aborted) break;
          const err = toStatusError(e);
          res.write(encodeEvent('ERROR', err.status as unknown as KubeObject));
          break;
        }
      }
      void it.return?.(undefined);
      if (!res.writableEnded) res.end();
    } finally {
      clearTimeout(timer);
      abort.abort();
      this.openWatches.delete(abort);
      req.off('close', onClose);
      untrack?.();
      unLongRunning?.();
    }
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private schemaOf(r: RegisteredResource) {
    return resolveSchema(this.cfg.registry.definitions, refTo(r.descriptor.definitionName));
  }

  /** What the field manager (server-side apply, managedFields) needs to know about an endpoint. */
  private fieldScope(r: RegisteredResource, subresource: string): FieldManagerScope {
    return fieldManagerScope(this.cfg.registry.definitions, r.store, subresource);
  }

  /** fieldValidation: unknown and duplicate fields → error (Strict), Warning headers (Warn) or nothing. */
  private checkFields(r: RegisteredResource, obj: KubeObject, duplicates: readonly string[], mode: string): string[] {
    const prune = r.registration.pruneUnknownFields;
    const schema = prune ? undefined : this.schemaOf(r);
    // Fields the schema does not declare are never stored (upstream's typed decoding drops them).
    const unknown = prune ? prune(obj) : schema ? pruneUnknownFields(obj, schema, this.cfg.registry.definitions) : [];
    // Time/MicroTime come back in Go's marshalled form (seconds; six fractional digits), as after kube's decode.
    if (schema) normalizeTimes(obj, schema, this.cfg.registry.definitions);
    if (mode === 'Ignore') return [];
    const problems = [...unknown.map((p) => `unknown field "${p}"`), ...duplicates.map((p) => `duplicate field "${p}"`)];
    if (!problems.length) return [];
    if (mode === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
    return problems;
  }

  private attrs(
    ctx: RequestContext,
    r: RegisteredResource,
    operation: AdmissionOperation,
    namespace: string | undefined,
    name: string,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    dryRun: boolean,
    subresource = '',
  ): AdmissionAttributes {
    const d = r.descriptor;
    const resource: GroupVersionResource = { group: d.group, version: d.version, resource: d.plural };
    return {
      operation,
      resource,
      subresource,
      kind: { group: d.group, version: d.version, kind: d.kind },
      namespace: namespace ?? '',
      name,
      ...(object ? { object } : {}),
      ...(oldObject ? { oldObject } : {}),
      dryRun,
      userInfo: ctx.user,
    };
  }

  private async admit(a: AdmissionAttributes): Promise<void> {
    for (const p of this.cfg.admission) if (p.admit) await p.admit(a);
  }

  /**
   * The store's validate hook for a write: validating admission of the object (an UPDATE when there
   * is an old object, else a CREATE, unless `operation` says). An unnamed arrow returned by a
   * method: tsx names a property arrow made per request with a defineProperty call.
   */
  private validator(
    ctx: RequestContext,
    r: RegisteredResource,
    operation: AdmissionOperation | undefined,
    namespace: string | undefined,
    name: string,
    dryRun: boolean,
    sub: string,
  ): (o: KubeObject, old?: KubeObject) => Promise<void> {
    return (o, old) => this.validateAdmission(this.attrs(ctx, r, operation ?? (old ? 'UPDATE' : 'CREATE'), namespace, name, o, old, dryRun, sub), ctx);
  }

  /**
   * Validating admission, the last step before a write reaches storage. A request whose deadline
   * passed stops here, as upstream's storage calls fail once the request's context is done.
   */
  private async validateAdmission(a: AdmissionAttributes, ctx: RequestContext): Promise<void> {
    for (const p of this.cfg.admission) if (p.validate) await p.validate(a);
    if (ctx.expired) throw handlerTimeoutError();
  }

  private respondObject(
    ctx: RequestContext,
    r: RegisteredResource,
    code: number,
    obj: KubeObject,
    warnings: readonly string[] = [],
    choice: OutputChoice = chooseOutput(ctx.accept, { protobufOk: !r.registration.customResource }),
  ): void {
    checkPartialMetadata(choice, r, false);
    setWarnings(ctx.res, warnings);
    let out: unknown = obj;
    if (choice.transform === 'Table') {
      out = toTable(r.store.strategy, [obj], {
        listMeta: { resourceVersion: obj.metadata?.resourceVersion ?? '' },
        includeObject: (ctx.query.get('includeObject') ?? 'Metadata') as IncludeObject,
        apiVersion: `meta.k8s.io/${choice.transformVersion}`,
      });
    } else if (choice.transform === 'PartialObjectMetadata') {
      out = partialObjectMetadata(obj, `meta.k8s.io/${choice.transformVersion}`);
    }
    writeBody(ctx.res, code, out as KubeObject, choice, prettyOutput(ctx, choice), ctx.compress, r.scheme);
  }

  private respondList(ctx: RequestContext, r: RegisteredResource, list: KubeList, choice: OutputChoice): void {
    checkPartialMetadata(choice, r, true);
    let out: unknown = list;
    if (choice.transform === 'Table') {
      out = toTable(r.store.strategy, list.items, {
        listMeta: list.metadata,
        includeObject: (ctx.query.get('includeObject') ?? 'Metadata') as IncludeObject,
        apiVersion: `meta.k8s.io/${choice.transformVersion}`,
      });
    } else if (choice.transform === 'PartialObjectMetadataList') {
      const v = `meta.k8s.io/${choice.transformVersion}`;
      out = { kind: 'PartialObjectMetadataList', apiVersion: v, metadata: list.metadata, items: list.items.map((i) => partialObjectMetadata(i, v)) };
    }
    writeBody(ctx.res, 200, out as KubeObject, choice, prettyOutput(ctx, choice), ctx.compress, r.scheme);
  }
}

/** Whether the answer may be JSON bytes as stored: plain JSON, no transform, not pretty-printed. */
function plainJSON(ctx: RequestContext, choice: OutputChoice): boolean {
  return choice.format === 'json' && choice.transform === 'none' && !prettyOutput(ctx, choice);
}

/** Pretty output: the media type's `pretty=1`, or negotiation's isPrettyPrint. */
function prettyOutput(ctx: RequestContext, choice: OutputChoice): boolean {
  return choice.pretty || isPrettyPrint(ctx.req, ctx.query);
}

/** The handler's 406 for a PartialObjectMetadata(List) transform that does not fit the answer. */
function checkPartialMetadata(choice: OutputChoice, r: RegisteredResource, list: boolean): void {
  if (choice.transform !== 'PartialObjectMetadata' && choice.transform !== 'PartialObjectMetadataList') return;
  const e = partialMetadataMismatch(choice, list, goTypeOf(r, list));
  if (e) throw e;
}

/** Internal packages of the built-in kinds upstream's handlers hold (events.k8s.io's Event is core's). */
const INTERNAL_PACKAGES: Readonly<Record<string, string>> = { '': 'core', 'events.k8s.io': 'core' };

/** The Go type (%T) upstream's handler holds for the resource: its internal type, or unstructured for custom resources. */
function goTypeOf(r: RegisteredResource, list: boolean): string {
  if (r.registration.customResource) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const d = r.descriptor;
  return `*${INTERNAL_PACKAGES[d.group] ?? d.group.split('.')[0]}.${d.kind}${list ? 'List' : ''}`;
}

/** Sends JSON bytes that are already the answer (the store's stored-bytes fast paths). */
function sendJSON(ctx: RequestContext, code: number, body: Buffer, warnings: readonly string[]): void {
  setWarnings(ctx.res, warnings);
  ctx.res.statusCode = code;
  ctx.res.setHeader('Content-Type', 'application/json');
  endBody(ctx.res, body, ctx.compress);
}

interface RequestContext {
  readonly req: Request;
  readonly res: Response;
  readonly info: RequestInfo;
  readonly query: URLSearchParams;
  readonly user: UserInfo;
  readonly accept: string | undefined;
  /** Whether the answer may be gzip-compressed (the server's responseCompression). */
  readonly compress: boolean;
  /** Set once the request's deadline passed: its work must not reach storage anymore. */
  expired: boolean;
  /** Who answered the request when its deadline passed (the label of apiserver_request_post_timeout_total). */
  timedOutBy?: 'timeout-handler' | 'rest-handler';
}

/** The log line of work that went on after its request timed out (upstream's "post-timeout activity"). */
function postTimeout(req: Request | undefined, timedOutAt: number | undefined, result: string): string {
  const elapsed = timedOutAt === undefined ? '' : ` - time-elapsed: ${(performance.now() - timedOutAt).toFixed(1)}ms,`;
  return `post-timeout activity${elapsed} ${req?.method ?? ''} ${JSON.stringify(req?.url ?? '')} result: ${result}`;
}

/**
 * The request's metrics, recorded the first time the returned function runs. A module function
 * returning an unnamed arrow: tsx (esbuild's keepNames) would name a `const` arrow made per request
 * with a defineProperty call.
 */
function recordOnce(m: ApiMetrics, req: Request, res: Response, info: RequestInfo, query: URLSearchParams, started: number): () => void {
  let recorded = false;
  return () => {
    if (recorded) return;
    recorded = true;
    m.recordRequest(req.method ?? 'GET', info, query, header(req, 'content-type'), res.statusCode, (performance.now() - started) / 1000);
  };
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    throw badRequest(`invalid URL path encoding: ${p}`);
  }
}

/**
 * 405 for a method a resource does not serve. Built-in resources answer from go-restful's router
 * upstream (NewGenericServerResponse: a fixed message, empty details); custom resources from the
 * CRD handler (NewMethodNotSupported: `create is not supported on resources of kind ...`).
 */
function methodNotAllowed(r: RegisteredResource, action: string): StatusError {
  return r.registration.customResource ? methodNotSupported(r.store.groupResource, action) : routerMethodNotAllowed();
}

/** go-restful's 405 (NewGenericServerResponse: a fixed message, empty details). */
function routerMethodNotAllowed(): StatusError {
  return new StatusError({ reason: 'MethodNotAllowed', code: 405, message: 'the server does not allow this method on the requested resource', details: {} });
}

/**
 * decodeBody for a create or update: a body that does not parse at all is named the way upstream's
 * transformDecodeError does (the kind it must be, and the start of the data).
 */
function decodeObjectBody(contentType: string | undefined, body: Uint8Array, r: RegisteredResource): ReturnType<typeof decodeBody> {
  const kind = r.descriptor.kind;
  try {
    // Numbers' texts matter only to the typed-body check.
    return decodeBody(contentType, body, { numberTexts: r.registration.goTypedBody === true, scheme: r.scheme });
  } catch (e) {
    if (!(e instanceof StatusError) || e.code !== 400) throw e;
    const base = e.message === 'the body of the request was empty' ? "couldn't get version/kind; json parse error: unexpected end of JSON input" : e.message;
    if (!base.startsWith("couldn't get version/kind; json parse error: ") && !base.startsWith('error converting YAML to JSON: ')) throw e;
    throw badRequest(`the object provided is unrecognized (must be of type ${kind}): ${base} (${summarizeData(body, 30)})`);
  }
}

/** handlers' summarizeData: `<empty>`, a JSON object's start as text, anything else in hex. */
function summarizeData(data: Uint8Array, max: number): string {
  if (data.length === 0) return '<empty>';
  const cut = data.length > max;
  const head = Buffer.from(data.subarray(0, max));
  return (data[0] === 0x7b ? head.toString('utf8') : head.toString('hex')) + (cut ? ' ...' : '');
}

/** rest.WipeObjectMetaSystemFields, run on a create before the field manager and admission. */
function wipeObjectMetaSystemFields(obj: KubeObject): void {
  const m = obj.metadata as (ObjectMeta & { selfLink?: string }) | undefined;
  if (!m) return;
  // Only what is there: a delete changes the object's shape, which the create path need not pay.
  if (m.creationTimestamp !== undefined) delete m.creationTimestamp;
  if (m.uid !== undefined) delete m.uid;
  if (m.deletionTimestamp !== undefined) delete m.deletionTimestamp;
  if (m.deletionGracePeriodSeconds !== undefined) delete m.deletionGracePeriodSeconds;
  if (m.selfLink !== undefined) delete m.selfLink;
}

/**
 * dedupOwnerReferencesAndAddWarning (handlers/rest.go): an owner reference equal to an earlier one
 * with the same uid is dropped, and the request gets a warning naming the uids.
 */
function dedupOwnerReferences(obj: KubeObject, afterMutatingAdmission: boolean, warnings: string[]): void {
  const refs = obj.metadata?.ownerReferences;
  if (!refs || refs.length < 2) return;
  const kept: typeof refs = [];
  const duplicates: string[] = [];
  const seen = new Set<string>();
  const canonical = (x: object): string => JSON.stringify(Object.entries(x).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  for (const ref of refs) {
    if (seen.has(ref.uid) && kept.some((k) => canonical(k) === canonical(ref))) {
      duplicates.push(ref.uid);
      continue;
    }
    seen.add(ref.uid);
    kept.push(ref);
  }
  if (!duplicates.length) return;
  obj.metadata!.ownerReferences = kept;
  const after = afterMutatingAdmission ? ' after mutating admission happens' : '';
  warnings.push(`.metadata.ownerReferences contains duplicate entries${after}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ${duplicates.join(', ')}`);
}

/** go-restful's 404 for a path its web service does not route (NewGenericServerResponse: empty details). */
function pageNotFound(): StatusError {
  return new StatusError({ reason: 'NotFound', code: 404, message: 'the server could not find the requested resource', details: {} });
}

/** An error answered as Go's http.Error writes it: `text` and a newline, text/plain. */
class PlainTextError extends StatusError {
  constructor(
    status: StatusError['status'],
    readonly text: string,
  ) {
    super(status);
  }
}

/** The not-found handler's answer for a path no API group serves: `404 page not found`. */
function notFoundPage(): PlainTextError {
  return new PlainTextError(pageNotFound().status, '404 page not found');
}

function pickAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const r of parseAccept(accept)) {
    if (`${r.type}/${r.subtype}` !== 'application/json') continue;
    if (r.params.g === 'apidiscovery.k8s.io' && r.params.as === 'APIGroupDiscoveryList') {
      if (r.params.v === 'v2') return AGGREGATED_DISCOVERY_V2;
      if (r.params.v === 'v2beta1') return AGGREGATED_DISCOVERY_V2BETA1;
    }
    if (!r.params.as) return undefined;
  }
  return undefined;
}

/** ValidateDryRun: every value must be All; the whole list is the bad value. */
function dryRunIssues(values: readonly string[]): FieldIssue[] {
  return values.every((v) => v === 'All') ? [] : [fieldIssue.notSupported('dryRun', values, ['All'])];
}

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/** ValidateFieldManager: at most 128 bytes, printable runes only (each other one named with its byte offset). */
function fieldManagerIssues(fieldManager: string, path = 'fieldManager'): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (Buffer.byteLength(fieldManager) > 128) issues.push(fieldIssue.tooLong(path, fieldManager, 128));
  let offset = 0;
  for (const ch of fieldManager) {
    if (!PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      issues.push(fieldIssue.invalid(path, fieldManager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${offset})`));
    }
    offset += Buffer.byteLength(ch);
  }
  return issues;
}

interface WriteParams {
  dryRun: boolean;
  fieldManager: string | undefined;
  fieldValidation: 'Strict' | 'Warn' | 'Ignore';
}

const OPTIONS_KIND = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions' } as const;

/** Validate{Create,Update,Patch}Options: all issues in one 422 on the verb's options kind. */
function writeParams(q: URLSearchParams, op: 'create' | 'update' | 'patch', extra: readonly FieldIssue[] = []): WriteParams {
  const dryRun = q.getAll('dryRun');
  const fieldManager = q.get('fieldManager') ?? undefined;
  // An empty fieldValidation is the default, Warn (the handlers' fieldValidation()).
  const fv = q.get('fieldValidation') || 'Warn';
  const issues = [
    ...extra,
    ...fieldManagerIssues(fieldManager ?? ''),
    ...dryRunIssues(dryRun),
    ...(fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore' ? [fieldIssue.notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn'])] : []),
  ];
  if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: OPTIONS_KIND[op] }, '', issues);
  return { dryRun: dryRun.includes('All'), fieldManager, fieldValidation: fv as WriteParams['fieldValidation'] };
}

function listOptionsFrom(q: URLSearchParams): ListOptions {
  const limit = q.get('limit');
  // An int64 as Go's parameter codec reads it; zero or less means no limit.
  const n = limit !== null && limit !== '' ? parseInt64Param(limit) : 0;
  const sendInitial = q.get('sendInitialEvents');
  return {
    ...(sendInitial !== null ? { sendInitialEvents: queryBool(sendInitial) } : {}),
    ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
    ...(q.get('fieldSelector') ? { fieldSelector: q.get('fieldSelector')! } : {}),
    ...(n > 0 ? { limit: n } : {}),
    ...(q.get('continue') ? { continue: q.get('continue')! } : {}),
    ...(q.has('resourceVersion') ? { resourceVersion: q.get('resourceVersion')! } : {}),
    ...(q.get('resourceVersionMatch') ? { resourceVersionMatch: q.get('resourceVersionMatch')! } : {}),
  };
}

/**
 * strconv.ParseInt(s, 10, 64) as the query parameter codec runs it, with its error as the 400's text.
 * Numbers past 2^53 are not exact here; no parameter needs them.
 */
function parseInt64Param(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  const big = BigInt(s);
  if (big > 9223372036854775807n || big < -9223372036854775808n) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(big);
}

/** The body's apiVersion/kind must name the resource's kind (or be omitted where kube allows). */
function checkKind(obj: KubeObject, r: RegisteredResource | { group: string; version: string; kind: string }): void {
  const d = 'descriptor' in r ? r.descriptor : r;
  const want = apiVersionOf(d.group, d.version);
  if (obj.kind === undefined || obj.kind === '') {
    throw badRequest(`Object 'Kind' is missing in '${truncate(JSON.stringify(obj))}'`);
  }
  if (obj.apiVersion === undefined || obj.apiVersion === '') {
    throw badRequest(`Object 'apiVersion' is missing in '${truncate(JSON.stringify(obj))}'`);
  }
  if (obj.kind !== d.kind) {
    throw undecodable(String(obj.kind), String(obj.apiVersion), d.kind, `the kind in the data (${String(obj.kind)}) does not match the expected kind (${d.kind})`);
  }
  if (obj.apiVersion !== want) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${want})`);
  }
}

function truncate(s: string): string {
  return s.length > 200 ? s.slice(0, 200) + '...' : s;
}

async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(header(req, 'content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw requestEntityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        req.resume();
        throw requestEntityTooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    // The request stream fails only when the client's connection or stream went away mid-body.
    if (isStatusError(e)) throw e;
    throw new ClientWentAway(size, e);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * A request whose client closed its connection (HTTP/1.1) or cancelled its stream (HTTP/2) before
 * the body was complete. Like kube-apiserver it becomes a 500 (nobody reads it); the log gets one
 * line, not a stack trace, since nothing in the server failed.
 */
class ClientWentAway extends Error {
  constructor(received: number, cause: unknown) {
    super(`the client closed the request before its body was complete (${received} bytes received: ${cause instanceof Error ? cause.message : String(cause)})`);
  }
}

function setWarnings(res: Response, warnings: readonly string[]): void {
  if (!warnings.length) return;
  // Appends: a resource-wide warning (deprecated version) may already be set.
  const prev = res.getHeader('Warning');
  const before = prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)];
  res.setHeader('Warning', [...before, ...warnings.map(warningHeaderValue)]);
}

/**
 * `299 - "<text>"` as upstream's NewWarningHeader writes it (quoted, `"` and `\` escaped). Node
 * refuses control characters and anything above U+00FF in headers, and HTTP/1 re-encodes
 * U+0080..U+00FF with the body's encoding, so everything outside printable ASCII is `\uXXXX`-escaped.
 */
export function warningHeaderValue(text: string): string {
  const quoted = JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `299 - ${quoted}`;
}

function writeJson(res: Response, code: number, obj: unknown): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(obj) + '\n');
}

function writeNegotiated(ctx: RequestContext, code: number, obj: unknown): void {
  const choice = chooseOutput(ctx.accept, { protobufOk: false, allowTransforms: false });
  writeBody(ctx.res, code, obj as KubeObject, choice, prettyOutput(ctx, choice), ctx.compress, undefined);
}

/**
 * negotiation's isPrettyPrint: `pretty` as strconv.ParseBool reads it when given, otherwise pretty for
 * the user agents of browsers and command-line HTTP tools (curl, Wget).
 */
function isPrettyPrint(req: Request, query: URLSearchParams): boolean {
  const p = query.get('pretty');
  if (p) return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(p);
  const ua = header(req, 'user-agent') ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/**
 * An API object in the negotiated format (SerializeObject): gzipped when large and asked for, if
 * `compress`. `scheme`: the control plane's kind table for protobuf (undefined where it was not offered).
 */
function writeBody(res: Response, code: number, obj: KubeObject, choice: OutputChoice, pretty: boolean, compress: boolean, scheme: ProtobufKinds | undefined): void {
  res.statusCode = code;
  let body: Uint8Array | string;
  let format = choice.format;
  try {
    // json.MarshalIndent for pretty output (no newline after it), json.Encoder otherwise.
    body = format === 'json' ? (pretty ? JSON.stringify(obj, null, 2) : JSON.stringify(obj) + '\n') : format === 'yaml' ? toYaml(obj) : encodeProtobuf(obj, scheme ?? NO_KINDS);
  } catch {
    // Kinds without a protobuf form (discovery documents, Status of foreign groups) fall back to JSON.
    format = 'json';
    body = JSON.stringify(obj) + '\n';
  }
  res.setHeader('Content-Type', contentTypeOf(format));
  endBody(res, body, compress);
}

import { encodeObject as encodeProtobuf, type ProtobufKinds } from '../apimachinery/protobuf/index.js';

/** Where protobuf was not offered: every kind is without a protobuf form (the JSON fallback). */
const NO_KINDS: ProtobufKinds = { messageFor: () => undefined };

function waitForDrain(res: Response, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    signal.addEventListener('abort', done);
  });
}

export { header as requestHeader };
