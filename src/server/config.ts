// What an ApiServer is built from: the registry it serves, admission, the authentication,
// authorization and impersonation hooks, limits and the non-resource endpoints' providers.
import type { FeatureGate } from '../featuregate/index.js';
import type { AdmissionChain, AdmissionPlugin, UserInfo } from '../admission/index.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { ApiMetrics } from './metrics.js';
import type { Authorizer } from './filters/authorization.js';
import type { Impersonator } from './filters/impersonation.js';
import type { Request, RequestScope, Response } from './request-scope.js';
import type { RemoteGroupVersion } from './discovery.js';
import type { AuditRuntime } from './audit/context.js';

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
  handle(
    path: string,
    query: URLSearchParams,
  ): { status: number; body: string; contentType: string } | undefined | Promise<{ status: number; body: string; contentType: string } | undefined>;
}

/** The ServiceAccount issuer's OIDC discovery documents, pre-rendered (see auth/serviceaccount/openid.ts). */
export interface IssuerDiscoveryDocuments {
  readonly configJSON: string;
  readonly keysetJSON: string;
  readonly maxAgeSeconds: number;
}

export interface ApiServerConfig {
  readonly registry: ApiRegistry;
  /** Admission: plugins in order (mutating phases first, then validating), or a chain built already. */
  readonly admission: readonly AdmissionPlugin[] | AdmissionChain;
  /** Throws (or rejects with) a 401 StatusError for requests without valid credentials. */
  readonly authenticate: (req: Request) => UserInfo | Promise<UserInfo>;
  /**
   * Decides whether an authenticated request may proceed (403 otherwise). None: every
   * authenticated request is allowed, and the authorization filter is not in the chain.
   */
  readonly authorizer?: Authorizer;
  /** Turns Impersonate-* headers into the user a request acts as. None: the headers are ignored. */
  readonly impersonator?: Impersonator;
  /** Largest request body accepted (bytes); 3 MiB like kube-apiserver. */
  readonly maxRequestBodyBytes: number;
  /**
   * --max-requests-inflight: get and list requests served at once before a 429 (watches never
   * count); default 400, 0 = no limit. See filters/max-in-flight.ts.
   */
  readonly maxRequestsInFlight?: number;
  /** --max-mutating-requests-inflight: requests of every other verb served at once before a 429; default 200, 0 = no limit. */
  readonly maxMutatingRequestsInFlight?: number;
  readonly metrics?: ApiMetrics;
  readonly health?: HealthProvider;
  readonly openapi?: OpenAPIProvider;
  /**
   * `/.well-known/openid-configuration` and `/openid/v1/jwks`: the documents, or undefined when the
   * issuer has none (not an https URL); without the option the paths are not served.
   */
  readonly serviceAccountIssuerDiscovery?: () => Promise<IssuerDiscoveryDocuments | undefined>;
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
  /** gzip bodies over 128 KiB for clients that ask (default true; see compression.ts); off as well when the APIResponseCompression gate is. */
  readonly responseCompression?: boolean;
  /** Feature gates (`--feature-gates`); default: kplane's gates at their defaults. */
  readonly features?: FeatureGate;
  readonly log?: (msg: string) => void;
  /** Auditing (`--audit-policy-file` with a backend): see server/audit/ and filters/audit.ts. None: off, at no cost. */
  readonly audit?: AuditRuntime;
  /** API aggregation (server/aggregator/): group/versions other servers serve, proxied after authorization. */
  readonly aggregator?: AggregatorHandler;
}

/** What the router and discovery ask the API aggregator (implemented by server/aggregator/Aggregator). */
export interface AggregatorHandler {
  /** Proxies a request for `<group>/<version>` when a non-local APIService has it; false otherwise. */
  serve(s: RequestScope, group: string, version: string): Promise<boolean>;
  /** Whether `<group>/<version>` belongs to another server. */
  isRemote(group: string, version: string): boolean;
  /** The group/versions of non-local APIServices, for discovery and OpenAPI. */
  remoteGroupVersions(): readonly RemoteGroupVersion[];
}

export type { ErrorSink } from './error-sink.js';
