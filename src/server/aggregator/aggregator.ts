// The API aggregator (kube-aggregator): APIServices read from the registry's store (list, then
// watch), a proxy for the group/versions another server serves, and the availability controller
// that probes each such server's discovery and writes the `Available` condition.
//
// What a client sees follows upstream: a request under `/apis/<group>/<version>` of a non-local
// APIService is authenticated and authorized here, then sent to the backend with the user in the
// front-proxy headers (X-Remote-User, X-Remote-Group, X-Remote-Extra-*) over TLS with the
// aggregator's client certificate; while the APIService is not Available its paths answer
// `503 service unavailable` (Go's http.Error, plain text), everything else is unaffected.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect as http2Connect, constants as h2constants, type ClientHttp2Session, type ClientHttp2Stream, type Http2ServerRequest } from 'node:http2';
import { Agent, request as httpsRequest, type AgentOptions } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { Counter, Gauge, type Registry } from 'prom-client';
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { KubeClient } from '../../client/types.js';
import type { ApiRegistry } from '../../registry/registry.js';
import type { GenericStore } from '../../registry/store.js';
import {
  APIREGISTRATION_GROUP,
  APIREGISTRATION_VERSION,
  AVAILABLE,
  availableCondition,
  isAvailable,
  type APIService,
  type APIServiceCondition,
} from '../../registry/apiregistration/apiservices/types.js';
import type { AggregatorHandler } from '../config.js';
import { PlainTextError } from '../handlers/responsewriters.js';
import type { RemoteAPIResource, RemoteGroupVersion, RemoteOpenAPIV2 } from '../discovery.js';
import type { RequestScope } from '../request-scope.js';
import { goNetErrorText } from './go-errors.js';
import { ServiceResolutionError, type ServiceResolver, type ServiceTarget } from '../../admission/webhook/service-resolver.js';
import { WatchedObjects } from '../../registry/watched-objects.js';

const APISERVICES = { group: APIREGISTRATION_GROUP, version: APIREGISTRATION_VERSION, resource: 'apiservices' };

export interface AggregatorOptions {
  readonly registry: ApiRegistry;
  /** Writes the APIServices' status (the control plane's loopback client). */
  readonly client: KubeClient;
  readonly resolver: ServiceResolver;
  /** `--proxy-client-cert-file` / `--proxy-client-key-file`: the client certificate backends see. */
  readonly proxyClientCert?: { readonly certPem: string; readonly keyPem: string };
  readonly metrics?: Registry;
  readonly log?: (msg: string) => void;
  /** How often each APIService is checked again (upstream's informer resync, 30 s). */
  readonly availabilityCheckIntervalMs?: number;
  /** The discovery check's deadline (upstream's 5 s client timeout). */
  readonly discoveryTimeoutMs?: number;
}

interface Backend {
  readonly object: APIService;
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly local: boolean;
  readonly service: { readonly namespace: string; readonly name: string; readonly port: number } | undefined;
  readonly available: boolean;
  readonly agent: Agent | undefined;
  readonly tlsKey: string;
}

interface DiscoveryResult {
  readonly resources: readonly RemoteAPIResource[];
  readonly hash: string;
  readonly openAPIV2?: RemoteOpenAPIV2;
}

/** Headers a proxy does not pass on (Go's ReverseProxy hop-by-hop list, HTTP/2's forbidden ones). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'host',
]);

/** The request headers a backend must not get from the client: credentials and identity assertions. */
function forwardable(name: string): boolean {
  if (name.startsWith(':') || HOP_BY_HOP.has(name)) return false;
  if (name === 'authorization' || name.startsWith('impersonate-')) return false;
  // The aggregator asserts the user itself (transport.SetAuthProxyHeaders removes what was sent).
  if (name === 'x-remote-user' || name === 'x-remote-group' || name === 'x-remote-uid' || name.startsWith('x-remote-extra-')) return false;
  return true;
}

/** transport.SetAuthProxyHeaders: the user, each group, each extra value (keys path-escaped). */
export function authProxyHeaders(user: RequestScope['user']): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'X-Remote-User': user.name };
  if (user.groups.length) h['X-Remote-Group'] = [...user.groups];
  for (const [k, vs] of Object.entries(user.extra ?? {})) h[`X-Remote-Extra-${encodeURIComponent(k)}`] = [...vs];
  return h;
}

function serviceUnavailable(message: string): PlainTextError {
  return new PlainTextError(new StatusError({ reason: 'ServiceUnavailable', code: 503, message, details: {} }).status, message);
}

const sameConditions = (a: readonly APIServiceCondition[] | undefined, b: readonly APIServiceCondition[] | undefined): boolean =>
  JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

export class Aggregator implements AggregatorHandler {
  /** The APIServices, by name, kept current by list+watch; `rebuild` runs after each change. */
  private readonly watched: WatchedObjects<APIService>;
  private backends = new Map<string, Backend>();
  /** `<group>/<version>` → the APIService named `<version>.<group>`. */
  private byGroupVersion = new Map<string, Backend>();
  private readonly discovered = new Map<string, DiscoveryResult>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly checking = new Map<string, Promise<void>>();
  private readonly failures = new Map<string, number>();
  private readonly stop = new AbortController();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly unavailableGauge: Gauge<'name'> | undefined;
  private readonly unavailableTotal: Counter<'name' | 'reason'> | undefined;
  private readonly listeners = new Set<() => void>();
  /** Per APIService: its HTTP/2 session, or `session: undefined` when its backend speaks HTTP/1.1 only. */
  private readonly h2 = new Map<string, { key: string; session: ClientHttp2Session | undefined }>();

  constructor(private readonly opts: AggregatorOptions) {
    this.watched = new WatchedObjects<APIService>(
      () => this.store(),
      'aggregator: APIServices',
      () => this.rebuild(),
      opts.log,
    );
    this.intervalMs = opts.availabilityCheckIntervalMs ?? 30_000;
    this.timeoutMs = opts.discoveryTimeoutMs ?? 5_000;
    if (opts.metrics) {
      this.unavailableGauge = new Gauge({
        name: 'aggregator_unavailable_apiservice',
        help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.',
        labelNames: ['name'] as const,
        registers: [opts.metrics],
      });
      this.unavailableTotal = new Counter({
        name: 'aggregator_unavailable_apiservice_total',
        help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
        labelNames: ['name', 'reason'] as const,
        registers: [opts.metrics],
      });
    }
  }

  private store(): GenericStore | undefined {
    return this.opts.registry.lookup(APISERVICES.group, APISERVICES.version, APISERVICES.resource)?.store;
  }

  /** Called when the set of remote group/versions or what they serve changes (discovery, OpenAPI). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** Lists the APIServices (so the first request is routed right), then watches them. */
  start(): Promise<void> {
    return this.watched.start();
  }

  async close(): Promise<void> {
    this.stop.abort();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.watched.close();
    await Promise.allSettled([...this.checking.values()]);
    for (const b of this.backends.values()) b.agent?.destroy();
    for (const h of this.h2.values()) h.session?.destroy();
    this.h2.clear();
  }

  /** Recomputes what each APIService routes to; probes the ones whose spec changed. */
  private rebuild(): void {
    const next = new Map<string, Backend>();
    const byGV = new Map<string, Backend>();
    for (const [name, o] of this.watched.items) {
      const spec = o.spec ?? {};
      const svc = spec.service ?? undefined;
      const service = svc ? { namespace: svc.namespace ?? '', name: svc.name ?? '', port: svc.port ?? 443 } : undefined;
      const tlsKey = service ? JSON.stringify([spec.insecureSkipTLSVerify ?? false, spec.caBundle ?? '', service.namespace, service.name]) : '';
      const old = this.backends.get(name);
      const agent = service ? (old?.tlsKey === tlsKey && old.agent ? old.agent : this.newAgent(o, service)) : undefined;
      const b: Backend = {
        object: o,
        name,
        group: spec.group ?? '',
        version: spec.version ?? '',
        local: !service,
        service,
        available: isAvailable(o),
        agent,
        tlsKey,
      };
      next.set(name, b);
      byGV.set(`${b.group}/${b.version}`, b);
      const specChanged = !old || JSON.stringify(old.object.spec ?? {}) !== JSON.stringify(o.spec ?? {});
      if (specChanged) this.schedule(name, 0);
    }
    for (const [name, old] of this.backends) {
      if (next.get(name)?.agent !== old.agent) old.agent?.destroy();
      if (!next.has(name)) {
        this.h2.get(name)?.session?.destroy();
        this.h2.delete(name);
        const t = this.timers.get(name);
        if (t) clearTimeout(t);
        this.timers.delete(name);
        this.discovered.delete(name);
        this.failures.delete(name);
        this.unavailableGauge?.remove({ name });
      }
    }
    this.backends = next;
    this.byGroupVersion = byGV;
    this.changed();
  }

  /** BuildTransportConfig: the proxy client certificate, the APIService's CA or none, ServerName `<service>.<namespace>.svc`. */
  private newAgent(o: APIService, service: { namespace: string; name: string }): Agent {
    return new Agent({ keepAlive: true, ...this.tlsOptionsOf(o, service) });
  }

  private tlsOptionsOf(o: APIService, service: { namespace: string; name: string }): AgentOptions {
    const spec = o.spec ?? {};
    const tls: AgentOptions = {
      ...(this.opts.proxyClientCert ? { cert: this.opts.proxyClientCert.certPem, key: this.opts.proxyClientCert.keyPem } : {}),
    };
    const options = spec.insecureSkipTLSVerify
      ? { ...tls, rejectUnauthorized: false }
      : {
          ...tls,
          rejectUnauthorized: true,
          servername: `${service.name}.${service.namespace}.svc`,
          ...(spec.caBundle ? { ca: Buffer.from(spec.caBundle, 'base64').toString('utf8') } : {}),
        };
    return options;
  }

  /**
   * The HTTP/2 session to a backend that offers h2 in ALPN (undefined: it speaks HTTP/1.1 only),
   * one per APIService, made again when the backend's address or TLS settings change or it closed.
   */
  private async h2Session(b: Backend, target: ServiceTarget): Promise<ClientHttp2Session | undefined> {
    const key = `${b.tlsKey}|${target.host}|${target.port}`;
    const cur = this.h2.get(b.name);
    if (cur?.key === key) {
      if (cur.session === undefined) return undefined;
      if (!cur.session.closed && !cur.session.destroyed) return cur.session;
    }
    cur?.session?.destroy();
    this.h2.delete(b.name);
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const sock = tlsConnect({
        host: target.host,
        port: target.port,
        ...(this.tlsOptionsOf(b.object, b.service!) as ConnectionOptions),
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      // A request is a HEADERS frame then an empty DATA frame ending the stream: with Nagle on, the
      // second waits for the backend's delayed ACK (40 ms per proxied request). Go's dialer disables it too.
      sock.setNoDelay(true);
      sock.once('secureConnect', () => resolve(sock));
      sock.once('error', reject);
    });
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      this.h2.set(b.name, { key, session: undefined });
      return undefined;
    }
    const session = http2Connect(`https://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`, { createConnection: () => socket });
    // Errors reach the streams; a broken session is replaced on the next request.
    session.on('error', () => {});
    session.unref();
    this.h2.set(b.name, { key, session });
    return session;
  }

  // ---- the availability controller

  private schedule(name: string, delayMs: number): void {
    if (this.stop.signal.aborted) return;
    const t = this.timers.get(name);
    if (t) clearTimeout(t);
    const timer = setTimeout(() => {
      this.timers.delete(name);
      void this.check(name);
    }, delayMs);
    timer.unref();
    this.timers.set(name, timer);
  }

  /** Checks one APIService now (a check already running is awaited instead). */
  check(name: string): Promise<void> {
    const running = this.checking.get(name);
    if (running) return running;
    const p = this.sync(name)
      .catch((e: unknown) => this.opts.log?.(`aggregator: checking APIService ${name}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => this.checking.delete(name));
    this.checking.set(name, p);
    return p;
  }

  private async sync(name: string): Promise<void> {
    const b = this.backends.get(name);
    if (!b) return;
    let condition: APIServiceCondition;
    let discovered: DiscoveryResult | undefined;
    if (b.local) {
      condition = { type: AVAILABLE, status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
    } else {
      const svc = b.service!;
      let target: ServiceTarget | ServiceResolutionError;
      try {
        target = this.opts.resolver.resolve(svc.namespace, svc.name, svc.port);
      } catch (e) {
        target = e instanceof ServiceResolutionError ? e : new ServiceResolutionError('Unroutable', String(e));
      }
      if (target instanceof ServiceResolutionError) {
        condition = unresolved(svc, target);
      } else {
        const r = await this.discoveryCheck(b, target);
        if (typeof r === 'string') condition = { type: AVAILABLE, status: 'False', reason: 'FailedDiscoveryCheck', message: r };
        else {
          condition = { type: AVAILABLE, status: 'True', reason: 'Passed', message: 'all checks passed' };
          discovered = r;
        }
      }
    }
    if (this.stop.signal.aborted) return;
    const before = this.discovered.get(name);
    if (discovered) {
      this.discovered.set(name, discovered);
      if (discovered.hash !== before?.hash || discovered.openAPIV2?.hash !== before?.openAPIV2?.hash) this.changed();
    }
    await this.writeCondition(name, condition);
    if (b.local) return;
    // Failures are checked again soon (upstream's rate limiter starts at 5 ms and doubles to 30 s).
    const failures = condition.status === 'True' ? 0 : (this.failures.get(name) ?? 0) + 1;
    this.failures.set(name, failures);
    this.schedule(name, failures === 0 ? this.intervalMs : Math.min(this.intervalMs, 100 * 2 ** Math.min(failures, 10)));
  }

  /** GET /apis/<group>/<version> as system:kube-aggregator in system:masters; a 2xx answer passes. */
  private async discoveryCheck(b: Backend, target: ServiceTarget): Promise<DiscoveryResult | string> {
    const path = b.name === 'v1.' ? `/api/${b.version}` : `/apis/${b.group}/${b.version}`;
    const url = `https://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}${path}`;
    const failed = (why: string): string => `failing or missing response from ${url}: ${why}`;
    const r = await this.getFromBackend(target, path);
    if (typeof r === 'string') return failed(`Get ${JSON.stringify(url)}: ${r}`);
    if (r.status < 200 || r.status >= 300) return failed(`bad status from ${url}: ${r.status}`);
    let resources: RemoteAPIResource[] = [];
    try {
      const list = JSON.parse(r.body) as { resources?: RemoteAPIResource[] };
      resources = Array.isArray(list.resources) ? list.resources : [];
    } catch {
      // Not a resource list: available all the same (upstream only looks at the status code).
    }
    const hash = hashOf(r.body);
    // The backend's OpenAPI v2, for the merged /openapi/v2, fetched again when its discovery changed.
    const known = this.discovered.get(b.name);
    const openAPIV2 = known?.hash === hash && known.openAPIV2 ? known.openAPIV2 : await this.openAPIV2Of(b, target);
    return { resources, hash, ...(openAPIV2 ? { openAPIV2 } : {}) };
  }

  /** The backend's /openapi/v2 paths under its group/version, and its definitions (as upstream's spec aggregator merges them). */
  private async openAPIV2Of(b: Backend, target: ServiceTarget): Promise<RemoteOpenAPIV2 | undefined> {
    const r = await this.getFromBackend(target, '/openapi/v2');
    if (typeof r === 'string' || r.status !== 200) return undefined;
    try {
      const doc = JSON.parse(r.body) as { paths?: Record<string, unknown>; definitions?: Record<string, unknown> };
      const prefix = `/apis/${b.group}/${b.version}/`;
      const paths = Object.fromEntries(Object.entries(doc.paths ?? {}).filter(([p]) => p.startsWith(prefix)));
      return { paths, definitions: doc.definitions ?? {}, hash: hashOf(r.body) };
    } catch {
      return undefined;
    }
  }

  /** A GET to the backend as the aggregator itself (front-proxy headers system:kube-aggregator, system:masters); a string is Go's error text. */
  private getFromBackend(target: ServiceTarget, path: string): Promise<{ status: number; body: string } | string> {
    return new Promise((resolve) => {
      const req = httpsRequest(
        {
          host: target.host,
          port: target.port,
          path,
          method: 'GET',
          // Upstream's check skips verification: it only asks whether something answers there.
          rejectUnauthorized: false,
          ...(this.opts.proxyClientCert ? { cert: this.opts.proxyClientCert.certPem, key: this.opts.proxyClientCert.keyPem } : {}),
          headers: { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': 'system:masters', Accept: 'application/json' },
          timeout: this.timeoutMs,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => resolve(goNetErrorText(e, target.host, target.port)));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'CLIENT_TIMEOUT' })));
      req.on('error', (e: NodeJS.ErrnoException) =>
        resolve(
          e.code === 'CLIENT_TIMEOUT'
            ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
            : goNetErrorText(e, target.host, target.port),
        ),
      );
      req.end();
    });
  }

  /** SetAPIServiceCondition, then a status write only when something changed (and the metrics either way). */
  private async writeCondition(name: string, wanted: APIServiceCondition): Promise<void> {
    const current = this.watched.items.get(name);
    if (!current) return;
    const prev = availableCondition(current);
    const condition: APIServiceCondition = {
      type: AVAILABLE,
      status: wanted.status,
      lastTransitionTime: prev && prev.status === wanted.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339Now(),
      ...(wanted.reason ? { reason: wanted.reason } : {}),
      ...(wanted.message ? { message: wanted.message } : {}),
    };
    const others = (current.status?.conditions ?? []).filter((c) => c.type !== AVAILABLE);
    const conditions = [...others, condition];
    this.unavailableGauge?.set({ name }, wanted.status === 'True' ? 0 : 1);
    if (sameConditions(current.status?.conditions, conditions)) return;
    if (wanted.status !== 'True' && prev?.status !== wanted.status) this.unavailableTotal?.inc({ name, reason: wanted.reason ?? '' });
    if (prev?.status !== wanted.status)
      this.opts.log?.(
        `"changing APIService availability" name="${name}" oldStatus="${prev?.status ?? 'Unknown'}" newStatus="${wanted.status}" message="${wanted.message ?? ''}" reason="${wanted.reason ?? ''}"`,
      );
    const body: KubeObject = { ...current, status: { ...(current.status ?? {}), conditions } };
    try {
      await this.opts.client.updateStatus(APISERVICES, undefined, body);
    } catch (e) {
      // A conflict: the watch brings the newer object and the next check writes again.
      this.opts.log?.(`aggregator: updating the status of APIService ${name}: ${e instanceof Error ? e.message : String(e)}`);
      this.schedule(name, 200);
    }
  }

  // ---- what discovery, OpenAPI and the router ask

  /** The group/versions of non-local APIServices. */
  remoteGroupVersions(): RemoteGroupVersion[] {
    const out: RemoteGroupVersion[] = [];
    for (const b of this.backends.values()) {
      if (b.local) continue;
      const d = this.discovered.get(b.name);
      out.push({
        name: b.name,
        group: b.group,
        version: b.version,
        groupPriority: b.object.spec?.groupPriorityMinimum ?? 0,
        versionPriority: b.object.spec?.versionPriority ?? 0,
        available: b.available,
        resources: d?.resources,
        resourcesHash: d?.hash,
        ...(d?.openAPIV2 ? { openAPIV2: d.openAPIV2 } : {}),
      });
    }
    return out;
  }

  /** Whether `<group>/<version>` belongs to another server (a non-local APIService). */
  isRemote(group: string, version: string): boolean {
    const b = this.byGroupVersion.get(`${group}/${version}`);
    return b !== undefined && !b.local;
  }

  /**
   * Serves a request for `<group>/<version>` when a non-local APIService has it; false otherwise
   * (the local handlers serve it). `path` is what the backend is asked for (the request's own, or
   * the OpenAPI v3 document of the group/version).
   */
  async serve(s: RequestScope, group: string, version: string): Promise<boolean> {
    const b = this.byGroupVersion.get(`${group}/${version}`);
    if (!b || b.local) return false;
    if (!b.available) throw serviceUnavailable('service unavailable');
    const svc = b.service!;
    let target: ServiceTarget;
    try {
      target = this.opts.resolver.resolve(svc.namespace, svc.name, svc.port);
    } catch {
      throw serviceUnavailable('service unavailable');
    }
    await this.forward(s, b, target);
    return true;
  }

  private async forward(s: RequestScope, b: Backend, target: ServiceTarget): Promise<void> {
    // The answer goes out as the backend sends it (headers flushed, then each chunk): on an HTTP/1.1
    // client connection with Nagle on, a chunk after the headers waits for the client's delayed ACK.
    if (s.req.httpVersionMajor === 1) s.req.socket?.setNoDelay?.(true);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(s.req.headers)) if (v !== undefined && forwardable(k)) headers[k] = v;
    // Go's ReverseProxy appends the client's address.
    const client = s.req.socket?.remoteAddress;
    if (client) headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${String(headers['x-forwarded-for'])}, ${client}` : client;
    Object.assign(headers, authProxyHeaders(s.user));
    let session: ClientHttp2Session | undefined;
    try {
      session = await this.h2Session(b, target);
    } catch (e) {
      this.answerProxyError(s, b, target, e);
      return;
    }
    if (session) return this.forwardH2(s, b, target, session, headers);
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        resolve();
      };
      const out = httpsRequest(
        { host: target.host, port: target.port, method: s.req.method, path: s.req.url ?? s.info.path, headers, agent: b.agent },
        (up: IncomingMessage) => {
          const res = s.res;
          if (res.headersSent || res.writableEnded || s.expired) {
            up.resume();
            finish();
            return;
          }
          res.statusCode = up.statusCode ?? 502;
          for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) res.setHeader(k, v);
          flushHeadersSoon(res);
          up.on('data', (chunk: Buffer) => {
            if (!res.writableEnded) res.write(chunk);
          });
          up.on('end', () => {
            if (!res.writableEnded) res.end();
            finish();
          });
          up.on('error', () => {
            res.destroy();
            finish();
          });
        },
      );
      out.on('error', (e) => {
        if (!done) this.answerProxyError(s, b, target, e);
        finish();
      });
      s.res.on('close', () => {
        if (!done && !out.destroyed) out.destroy();
        finish();
      });
      s.req.pipe(out);
    });
  }

  /** The same over the backend's HTTP/2 session: one stream per request, watches included. */
  private forwardH2(
    s: RequestScope,
    b: Backend,
    target: ServiceTarget,
    session: ClientHttp2Session,
    headers: Record<string, string | string[]>,
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        resolve();
      };
      const res = s.res;
      const body = hasBody(s.req);
      let stream: ClientHttp2Stream;
      try {
        // A request without a body ends the stream with its HEADERS frame (one frame, one write to the
        // backend); one with a body (a DELETE may carry DeleteOptions) is ended by the piped body.
        // Node's default (end GET, HEAD and DELETE at once) would drop a DELETE's body.
        stream = session.request({ ...headers, ':method': s.req.method ?? 'GET', ':path': s.req.url ?? s.info.path }, { endStream: !body });
      } catch (e) {
        this.answerProxyError(s, b, target, e);
        finish();
        return;
      }
      stream.on('response', (h) => {
        if (res.headersSent || res.writableEnded || s.expired) {
          stream.close(h2constants.NGHTTP2_CANCEL);
          finish();
          return;
        }
        res.statusCode = Number(h[':status'] ?? 502);
        for (const [k, v] of Object.entries(h)) if (v !== undefined && !k.startsWith(':') && !HOP_BY_HOP.has(k)) res.setHeader(k, v);
        flushHeadersSoon(res);
      });
      stream.on('data', (chunk: Buffer) => {
        if (!res.writableEnded) res.write(chunk);
      });
      stream.on('end', () => {
        if (!res.writableEnded) res.end();
        finish();
      });
      stream.on('error', (e) => {
        if (!done) this.answerProxyError(s, b, target, e);
        finish();
      });
      // The client went away before the backend's answer ended: cancel the stream. (After the end,
      // a cancel would only cost the backend a frame to read.)
      res.on('close', () => {
        if (!done && !stream.closed) stream.close(h2constants.NGHTTP2_CANCEL);
        finish();
      });
      if (body) s.req.pipe(stream);
      else s.req.resume();
    });
  }

  /** responder.Error: the transport's error as Go words it, 503, plain text; the backend is checked again at once. */
  private answerProxyError(s: RequestScope, b: Backend, target: ServiceTarget, e: unknown): void {
    const res = s.res;
    if (res.headersSent || s.expired) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    this.opts.log?.(`aggregator: proxying ${s.req.method ?? ''} ${s.req.url ?? ''} to APIService ${b.name}: ${e instanceof Error ? e.message : String(e)}`);
    res.statusCode = 503;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(`${goNetErrorText(e, target.host, target.port)}\n`);
    this.schedule(b.name, 0);
  }
}

/**
 * Whether the client's request has a body: HTTP/1.1 says so with Content-Length or
 * Transfer-Encoding (RFC 9112 6.3), HTTP/2 by not ending the stream with its HEADERS frame.
 */
function hasBody(req: IncomingMessage): boolean {
  const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
  if (stream !== undefined) return !stream.endAfterHeaders;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * Sends the backend's status and headers once this turn of the event loop is over, unless a body
 * chunk (or the end) has taken them along by then. A backend's answer usually comes in one read
 * (HEADERS and DATA frames together): the client then gets headers and body in one write, not two
 * (each a TCP segment and a wake-up on both sides). A watch's headers still go out before its first
 * event, so its client learns at once that it is established.
 */
function flushHeadersSoon(res: ServerResponse): void {
  setImmediate(() => {
    if (!res.headersSent && !res.writableEnded && !res.destroyed) res.flushHeaders();
  });
}

function rfc3339Now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** kube-openapi's hash form: SHA-512, upper-case hex. */
function hashOf(body: string): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

/** The availability controller's condition for a Service reference that does not resolve. */
function unresolved(svc: { namespace: string; name: string; port: number }, e: ServiceResolutionError): APIServiceCondition {
  const where = `service/${svc.name} in ${JSON.stringify(svc.namespace)}`;
  const reason = e.reason;
  switch (reason) {
    case 'ServiceNotFound':
      return { type: AVAILABLE, status: 'False', reason, message: `${where} is not present` };
    case 'ServicePortError':
      return { type: AVAILABLE, status: 'False', reason, message: `${where} is not listening on port ${svc.port}` };
    case 'MissingEndpoints':
      return { type: AVAILABLE, status: 'False', reason, message: `endpoints for ${where} have no addresses with port name ""` };
    default:
      return { type: AVAILABLE, status: 'False', reason: 'FailedDiscoveryCheck', message: e.message };
  }
}
