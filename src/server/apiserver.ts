// The API server, assembled: the filters (filters/chain.ts, in kube-apiserver's order) around the
// router (handlers/router.ts), which sends each request to one handler per verb. Nothing here
// serves a request itself.
import { APIResponseCompression, newKubeFeatureGate } from '../featuregate/index.js';
import { AdmissionChain } from '../admission/index.js';
import { BodyBuffers } from './body-buffers.js';
import type { ApiServerConfig, ErrorSink } from './config.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './deadline.js';
import { Discovery } from './discovery.js';
import { buildHandlerChain } from './filters/chain.js';
import { DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, DEFAULT_MAX_REQUESTS_INFLIGHT, MaxInFlight } from './filters/max-in-flight.js';
import type { ServerContext, WatchSet } from './handlers/context.js';
import { writeError } from './handlers/responsewriters.js';
import { route } from './handlers/router.js';
import { RequestScope, type Handler, type Request, type Response } from './request-scope.js';

export type { Request, Response } from './request-scope.js';
export type { ApiServerConfig, HealthProvider, OpenAPIProvider, VersionInfo } from './config.js';
export { header as requestHeader } from './request-scope.js';
export { warningHeaderValue } from './handlers/responsewriters.js';

export class ApiServer {
  readonly discovery: Discovery;
  /** The admission every write passes; a plugin joins with `admission.add(plugin)`. */
  readonly admission: AdmissionChain;
  private readonly maxInFlight: MaxInFlight;
  private readonly watches: WatchSet = { shuttingDown: false, open: new Set() };
  private readonly chain: Handler;

  constructor(cfg: ApiServerConfig) {
    this.discovery = new Discovery(cfg.registry, cfg.aggregator ? () => cfg.aggregator!.remoteGroupVersions() : undefined);
    this.admission = cfg.admission instanceof AdmissionChain ? cfg.admission : new AdmissionChain(cfg.admission);
    const features = cfg.features ?? newKubeFeatureGate();
    // Asked per response: APIResponseCompression is dynamic (KEP-0007), so the gate may turn while
    // the server runs; enabled() is one Map lookup.
    const flag = cfg.responseCompression ?? true;
    const compression = (): boolean => flag && features.enabled(APIResponseCompression);
    const sink: ErrorSink = {
      metrics: cfg.metrics,
      log: cfg.log,
      get compression() {
        return compression();
      },
      scheme: cfg.registry.scheme,
    };
    this.maxInFlight = new MaxInFlight(
      cfg.maxRequestsInFlight ?? DEFAULT_MAX_REQUESTS_INFLIGHT,
      cfg.maxMutatingRequestsInFlight ?? DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
      cfg.metrics,
    );
    const c: ServerContext = {
      registry: cfg.registry,
      admission: this.admission,
      maxRequestBodyBytes: cfg.maxRequestBodyBytes,
      sink,
      metrics: cfg.metrics,
      listBodies: new BodyBuffers(),
      watches: this.watches,
      minRequestTimeoutSeconds: cfg.minRequestTimeoutSeconds,
      requestTimeoutMs: cfg.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      watchBookmarkIntervalMs: cfg.watchBookmarkIntervalMs,
      discovery: this.discovery,
      version: cfg.version,
      health: cfg.health,
      openapi: cfg.openapi,
      serviceAccountIssuerDiscovery: cfg.serviceAccountIssuerDiscovery,
      metricsText: cfg.metricsText,
      serverAddress: cfg.serverAddress,
      features,
      aggregator: cfg.aggregator,
    };
    this.chain = buildHandlerChain(serveApi(c), {
      sink,
      metrics: cfg.metrics,
      authenticate: cfg.authenticate,
      impersonator: cfg.impersonator,
      authorizer: cfg.authorizer,
      maxInFlight: this.maxInFlight,
      requestTimeoutMs: cfg.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      responseCompression: compression,
      audit: cfg.audit,
    });
  }

  /** Ends open watches (clients re-watch elsewhere) and refuses new ones. */
  shutdown(): void {
    this.watches.shuttingDown = true;
    this.maxInFlight.stop();
    for (const c of this.watches.open) c.abort();
  }

  handle = (req: Request, res: Response): void => {
    void this.chain(new RequestScope(req, res));
  };
}

/** The handler inside the filters: it answers its own errors, in the negotiated format. */
function serveApi(c: ServerContext): Handler {
  return (s) => {
    let pending: void | Promise<void>;
    try {
      pending = route(c, s);
    } catch (e) {
      writeError(c.sink, s.res, e, s);
      return;
    }
    if (pending !== undefined) pending.catch((e: unknown) => writeError(c.sink, s.res, e, s));
  };
}
