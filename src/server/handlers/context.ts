// What every handler shares across requests: the registry, admission, limits, the watch and
// list-body state, and the providers of the non-resource endpoints. Made once per ApiServer.
import type { AdmissionChain } from '../../admission/index.js';
import type { FeatureGate } from '../../featuregate/index.js';
import type { ApiRegistry } from '../../registry/registry.js';
import type { BodyBuffers } from '../body-buffers.js';
import type { AggregatorHandler, ErrorSink, HealthProvider, IssuerDiscoveryDocuments, OpenAPIProvider, VersionInfo } from '../config.js';
import type { Discovery } from '../discovery.js';
import type { ApiMetrics } from '../metrics.js';

/** The open watches, so that shutdown can end them and refuse new ones. */
export interface WatchSet {
  shuttingDown: boolean;
  readonly open: Set<AbortController>;
}

export interface ServerContext {
  readonly registry: ApiRegistry;
  readonly admission: AdmissionChain;
  readonly maxRequestBodyBytes: number;
  readonly sink: ErrorSink;
  readonly metrics: ApiMetrics | undefined;
  /** Memory for list bodies, reused once a response has sent its body (see BodyBuffers). */
  readonly listBodies: BodyBuffers;
  readonly watches: WatchSet;
  readonly minRequestTimeoutSeconds: number | undefined;
  /** --request-timeout: also how long a watch's write may wait for a client that does not read. */
  readonly requestTimeoutMs: number;
  readonly watchBookmarkIntervalMs: number | undefined;
  readonly discovery: Discovery;
  readonly version: VersionInfo;
  readonly health: HealthProvider | undefined;
  readonly openapi: OpenAPIProvider | undefined;
  readonly serviceAccountIssuerDiscovery: (() => Promise<IssuerDiscoveryDocuments | undefined>) | undefined;
  readonly metricsText: (() => Promise<{ contentType: string; body: string }>) | undefined;
  readonly serverAddress: () => string;
  /** The server's feature gates (WatchList is asked per watch). */
  readonly features: FeatureGate;
  /** API aggregation: requests of other servers' group/versions go there. */
  readonly aggregator: AggregatorHandler | undefined;
}
