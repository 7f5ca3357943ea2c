// createControlPlane: the library entry point (KEP-4080). `kplane serve` is a small user of it.
import { apiserverIdentityController, identityLeaseName, type IdentityLeaseController } from '../controllers/apiserveridentity.js';
import { featureReporter, type FeatureReporter } from '../controllers/featurereporter.js';
import { dynamicFeatures, invalidDynamicFeatures, type DynamicFeatures } from '../controllers/dynamicfeatures.js';
import { featureFlow, mergeTasks, tasksFromGatedFields, type FeatureFlow, type FeatureFlowOptions } from '../controllers/featureflow/index.js';
import { FEATURES_GROUP, FEATURES_VERSION } from '../registry/features/features/types.js';
import { registryWrites } from './feature-writes.js';
import { featureDesiredAdmission } from '../registry/features/features/desired.js';
import { AggregateError, APIServerIdentity, ConsistentListFromCache, type FeatureGate, KplaneWatchCache, newKubeFeatureGate } from '../featuregate/index.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import {
  DEFAULT_HTTP2_MAX_STREAMS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_READ_HEADER_TIMEOUT_MS,
  installConnectionTimeouts,
} from '../server/connection-timeouts.js';
import { serverTLSSettings } from '../server/tls-options.js';
import { keepStreamTablesYoung } from '../runtime/http2-stream-tables.js';
import { disableAllocationSitePretenuring } from '../runtime/v8-pretenuring.js';
import { parseGoDuration } from '../golang/time.js';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { buildOpenAPIProvider } from '../server/openapi.js';
import { ApiServer, type VersionInfo } from '../server/apiserver.js';
import { ensurePki, type FrontProxyPki, type Pki } from '../server/certs.js';
import { setupServiceResolution } from './service-resolution.js';
import { extensionApiserverAuthenticationData, publishExtensionApiserverAuthentication, setupAggregation, type AggregationOptions } from './aggregation.js';
import { requestHeaderAuthenticator, type RequestHeaderConfig } from '../auth/authn/request-header.js';
import { FRONT_PROXY_CLIENT_NAME } from '../server/certs.js';
import { createAuthenticator, type Authenticator, type UserInfo as AuthUser } from '../server/filters/authentication.js';
import { authentication } from '../registry/authentication/index.js';
import { createImpersonator } from '../server/filters/impersonation.js';
import { AuthenticationMetrics } from '../server/filters/authentication-metrics.js';
import { bootstrapTokenAuthenticator } from '../auth/authn/bootstrap.js';
import type { TokenAuthenticator } from '../auth/types.js';
import type { AuthenticationConfiguration } from '../auth/authn/jwt-config.js';
import { createJWTAuthenticators } from '../auth/authn/jwt.js';
import { claimExpressions } from './claim-expressions.js';
import { createHealthChecks } from '../server/health.js';
import { writeAdminKubeconfig } from '../server/kubeconfig.js';
import { createApiMetrics, metricsHandler, type ApiMetrics } from '../server/metrics.js';
import { createAuditRuntime, type AuditOptions } from '../server/audit/index.js';
import { asLogger } from '../golang/klog.js';
import {
  ApiRegistry,
  defaultKeyPrefix,
  type RegisteredResource,
  type AdmissionPlugin,
  type ApiModule,
  type ControlPlaneContext,
} from '../registry/registry.js';
import { defaultModules } from './modules.js';
import type { Storage, StorageFactory } from '../storage/storage.js';
import { CachingStorage } from '../storage/cacher/cacher.js';
import { ensurePrivateDir, ensurePrivateFile } from '../storage/private-files.js';
import { instrumentStorage } from '../storage/instrumented.js';
import { loadEncryptionConfig, type ResourceTransformers } from '../storage/value/config.js';
import { createReloadMetrics, createTransformationMetrics } from '../storage/value/metrics.js';
import { EncryptionConfigReloader, readConfigContent } from '../storage/value/reload.js';
import { KeyTransformers, transformStorage, type StoredResource } from '../storage/value/transforming-storage.js';
import { createLoopbackClient } from '../client/loopback.js';
import type { KubeClient } from '../client/types.js';
import {
  controllerServiceAccountNames,
  controllerServiceAccountUser,
  ensureControllerServiceAccounts,
  runControllers,
  type RunningControllers,
} from '../controllers/index.js';
import type { ControllerFactory } from '../controllers/types.js';
import { withModuleControllers } from './cloud-module.js';
import type { ManagerLeaderElection } from '../controllers/runtime/manager.js';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { createServiceAccountAuthenticator, type ServiceAccountTokenGetter } from '../auth/serviceaccount/authenticator.js';
import { loadServiceAccountKeys } from '../auth/serviceaccount/keys.js';
import { openIDMetadata, type OpenIDMetadata } from '../auth/serviceaccount/openid.js';
import { signToken, tokenIssuer, type TokenIssuer } from '../auth/serviceaccount/token.js';
import { withTokenRequest } from '../registry/core/serviceaccounts/token.js';
import { Counter, Histogram } from 'prom-client';
import {
  alwaysAllow,
  alwaysDeny,
  instrumentedAuthorizer,
  privilegedGroups,
  SYSTEM_PRIVILEGED_GROUP,
  unionAuthorizer,
  unionRuleResolver,
  type Authorizer,
  type RuleResolver,
} from '../auth/authorizer.js';
import { createRbac, KUBE_CONTROLLER_MANAGER_USER, type Rbac } from '../auth/rbac/index.js';
import { loadWebhookKubeconfig, type WebhookConnection } from '../auth/authz-webhook/kubeconfig.js';
import {
  createWebhookAuthorizer,
  SUBJECT_ACCESS_REVIEW_VERSIONS,
  type RetryBackoff,
  type SubjectAccessReviewVersion,
  type WebhookMetrics,
} from '../auth/authz-webhook/webhook.js';
import type { ControlPlaneAuthorization } from '../registry/registry.js';

export { core, coordination, events, defaultModules, rbac, authorization, features } from './modules.js';

/** kube-apiserver's --authorization-mode values kplane knows. */
export type AuthorizationMode = 'AlwaysAllow' | 'AlwaysDeny' | 'RBAC' | 'Webhook';
const AUTHORIZATION_MODES: readonly AuthorizationMode[] = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Webhook'];

/**
 * The `Webhook` authorization mode: kube-apiserver's --authorization-webhook-* flags (the legacy
 * flags' webhook: named `default`, no opinion when the call fails, a 30 s deadline per call).
 */
export interface AuthorizationWebhookOptions {
  /** --authorization-webhook-config-file: a kubeconfig naming the service and kplane's credentials to it. */
  readonly configFile?: string;
  /** The connection itself, instead of a file (a program embedding kplane). */
  readonly connection?: WebhookConnection;
  /** --authorization-webhook-version: `v1beta1` (default, as upstream) or `v1`. */
  readonly version?: SubjectAccessReviewVersion;
  /** --authorization-webhook-cache-authorized-ttl (default 5 min; 0 = not cached). */
  readonly authorizedTTLMs?: number;
  /** --authorization-webhook-cache-unauthorized-ttl (default 30 s; 0 = not cached). */
  readonly unauthorizedTTLMs?: number;
  /** Deadline of each call (default 30 s, AuthorizationConfiguration's `timeout` for the legacy flags). */
  readonly timeoutMs?: number;
  /** Retries of a call that failed in a way upstream retries (default 500 ms ×1.5, 20 % jitter, 5 attempts). */
  readonly retryBackoff?: RetryBackoff;
}

// Re-exported where callers have imported it from; it is declared with the Storage it opens.
export type { StorageFactory };

/** createControlPlane's `featureFlow`: FeatureFlowOptions without what the server fills in. */
export type FeatureFlowSettings = Partial<Omit<FeatureFlowOptions, 'leaseName' | 'version' | 'log' | 'now' | 'direct'>> & {
  /** How often this server renews its identity Lease (default 10 s; keep it well under livenessMs). */
  readonly identityRenewIntervalMs?: number;
};

export interface ControlPlaneOptions {
  readonly storage: StorageFactory;
  /** API modules to serve; default core, events.k8s.io and coordination.k8s.io. */
  readonly apis?: readonly ApiModule[];
  /** Where PKI and the admin kubeconfig live. */
  readonly dataDir: string;
  readonly host?: string;
  /** 0 picks a free port. Default 6443. */
  readonly port?: number;
  /** Bearer tokens accepted besides client certificates. */
  readonly tokens?: ReadonlyMap<string, AuthUser>;
  /**
   * kube-apiserver's --anonymous-auth: a request without credentials is served as
   * `system:anonymous` (group `system:unauthenticated`) instead of a 401. Default false.
   */
  readonly anonymousAuth?: boolean;
  /**
   * kube-apiserver's --client-ca-file, as PEM (one or more certificates): client certificates
   * signed by these CAs authenticate (CN the user, O the groups), as well as those of kplane's own CA.
   */
  readonly clientCA?: string;
  /**
   * --enable-bootstrap-token-auth: `<id>.<secret>` bearer tokens of `bootstrap.kubernetes.io/token`
   * Secrets in kube-system authenticate as `system:bootstrap:<id>`. Default false.
   */
  readonly bootstrapTokenAuth?: boolean;
  /**
   * Token authenticators asked after static and bootstrap tokens, in this order (upstream's: the
   * ServiceAccount tokens', then the JWT/OIDC authenticators).
   */
  readonly tokenAuthenticators?: readonly TokenAuthenticator[];
  /**
   * kube-apiserver's --authentication-config (see loadAuthenticationConfiguration): JWT/OIDC
   * authenticators, asked after `tokenAuthenticators`. Their CEL expressions compile when the
   * control plane is created (an error names the file and the field); issuers' keys are fetched
   * in the background from then on.
   */
  readonly authenticationConfig?: AuthenticationConfiguration;
  /**
   * kube-apiserver's --authorization-mode: the authorizers asked in order, the first allow or deny
   * deciding (system:masters is always allowed first). `RBAC` decides with the Roles and bindings
   * served by the `rbac()` module; `AlwaysAllow` lets every authenticated request through;
   * `AlwaysDeny` refuses what the others did not allow. Default `['AlwaysAllow']`, kube-apiserver's
   * own default, so that a program embedding kplane keeps working as before; `kplane serve`
   * defaults to `RBAC`.
   */
  readonly authorizationModes?: readonly AuthorizationMode[];
  /** The `Webhook` mode's webhook; required with it, refused without it (as kube-apiserver's flags). */
  readonly authorizationWebhook?: AuthorizationWebhookOptions;
  readonly maxRequestBodyBytes?: number;
  /** kube-apiserver's --max-requests-inflight: get and list requests at once before 429 (default 400; 0 = no limit). */
  readonly maxRequestsInFlight?: number;
  /** --max-mutating-requests-inflight: requests of other verbs at once before 429 (default 200; 0 = no limit). */
  readonly maxMutatingRequestsInFlight?: number;
  /**
   * Answer lists and watches from memory (default true). The KplaneWatchCache feature gate must
   * be on too (it is by default): either one off serves lists and watches from storage.
   */
  readonly watchCache?: boolean;
  /**
   * The watch cache self-check, as kube's cache consistency checker: about this often (ms, jittered
   * up to half again) each cache is compared with storage at the cache's resourceVersion. Each
   * check counts in `apiserver_storage_consistency_checks_total{group,resource,status}`; a cache
   * found different logs an error line "Cache consistency check failed", answers no more lists
   * (storage does) and fails the `watch-cache-consistency` check of /readyz until a later check
   * finds it equal again. Default 0: off (kube's period is 5 minutes).
   */
  readonly watchCacheConsistencyCheckIntervalMs?: number;
  readonly admission?: readonly AdmissionPlugin[];
  readonly minRequestTimeoutSeconds?: number;
  /** How often idle watches with allowWatchBookmarks=true get a BOOKMARK (default 10,000 ms). */
  readonly watchBookmarkIntervalMs?: number;
  /**
   * How long `start()` waits for the storage to answer (etcd not up yet) before it fails; default
   * 30,000 ms (checked between pings, so a ping in flight may add its own deadline, 2 s for etcd).
   * Meanwhile the log says what it waits for, every 5 s.
   */
  readonly storageStartTimeoutMs?: number;
  /**
   * kube-apiserver's --request-timeout: how long a request other than a watch may take before it is
   * answered 504, as Go duration text (`'60s'`, `'1m30s'`) or milliseconds. Default 60 s; a shorter
   * `?timeout=` shortens it, and writes are bounded at 34 s as upstream's handlers bound them.
   * Not negative; 0, as upstream, times every such request out at once.
   */
  readonly requestTimeout?: string | number;
  /**
   * Gzip API responses over 128 KiB for clients that send `Accept-Encoding: gzip`, as kube-apiserver
   * does (its APIResponseCompression feature). Default true.
   */
  readonly responseCompression?: boolean;
  /**
   * Feature gates (`--feature-gates`, `--emulated-version`): kplane's gates of the generic API
   * server (`newKubeFeatureGate()`, the default) or a gate a library user built with their own
   * features added. Closed when the control plane starts: add features before.
   */
  readonly featureGates?: FeatureGate;
  /**
   * Announce the gate's features as Feature objects in kube-system and report this server's use of
   * each (its value, under its identity Lease holder id), at start and every 30 s after, when the
   * features.kplane.io API is served (default true; the tests' servers turn it off).
   */
  readonly reportFeatures?: boolean;
  /**
   * KEP-0007's feature flow: where Features are served and this server keeps an identity Lease,
   * the live server whose Lease name hashes lowest writes Feature status and runs transitions
   * (their tasks: ClearField of every gated field, plus `tasks` and the `custom` functions of
   * library features). `false` turns it off. Timings are for tests; see FeatureFlowOptions.
   */
  readonly featureFlow?: false | FeatureFlowSettings;
  /**
   * KEP-0007's `--dynamic-features`: features (each marked dynamic by its author) a cluster admin
   * may turn on and off at runtime with the Feature's `spec.desired`. Default none: `spec.desired`
   * is then refused (422) for every feature.
   */
  readonly dynamicFeatures?: readonly string[];
  /**
   * A connection with no request in flight for this long is closed (HTTP/1.1 keep-alive; HTTP/2
   * with GOAWAY), as kube-apiserver's IdleTimeout. Default 90,000 ms. Watches and other requests
   * in flight are never cut by it.
   */
  readonly idleTimeoutMs?: number;
  /**
   * The TLS handshake, and each request's headers, must arrive within this (kube-apiserver's
   * ReadHeaderTimeout); a connection that sends nothing is closed after it. Default 32,000 ms.
   */
  readonly readHeaderTimeoutMs?: number;
  /** kube-apiserver's --http2-max-streams-per-connection: concurrent streams per HTTP/2 connection (default and 0: 100). */
  readonly http2MaxStreamsPerConnection?: number;
  /**
   * kube-apiserver's --tls-cipher-suites, Go's (IANA) names such as
   * `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`. Default: Go's default suites (ECDHE with AES-GCM,
   * ChaCha20-Poly1305 or AES-CBC-SHA). TLS 1.3 suites are not configurable, as in Go.
   */
  readonly tlsCipherSuites?: readonly string[];
  /** kube-apiserver's --tls-min-version: VersionTLS10, VersionTLS11, VersionTLS12 (default) or VersionTLS13. */
  readonly tlsMinVersion?: string;
  /**
   * Where the control plane and its controllers log. A `createKlog({ verbosity, format })` Logger
   * gets klog-shaped lines with levels (per-object lines at V(2)); a plain function gets the V(0)
   * lines' structured text (`"msg" key="value"`). Default: nothing is logged.
   */
  readonly log?: (msg: string) => void;
  /** Controllers run in process over the loopback client once serving, e.g. `defaultControllers()`. */
  readonly controllers?: readonly ControllerFactory[];
  /**
   * DELETE adds the `orphan`/`foregroundDeletion` finalizers for a garbage collector to clear
   * (kube-apiserver's --enable-garbage-collector). Default: whether `controllers` has one; turn it
   * on when the garbage collector runs in a separate `kplane controller-manager`.
   */
  readonly garbageCollection?: boolean;
  /**
   * Run the in-process `controllers` only while this server holds the Lease
   * `kube-system/kplane-controller-manager` (the one `kplane controller-manager` uses, so in- and
   * out-of-process controllers never act at once either). Default: on when the storage is etcd,
   * where several API servers share one store; off otherwise (one server per SQLite file). An
   * object overrides the Lease's name, namespace, identity and timings.
   */
  readonly controllerLeaderElection?: boolean | Partial<ManagerLeaderElection>;
  /**
   * kube-controller-manager's --use-service-account-credentials for the in-process `controllers`
   * (default true): each controller that names a ServiceAccount acts as
   * `system:serviceaccount:kube-system:<name>` (bound to `system:controller:<name>`); the
   * ServiceAccounts are created at start. False: every controller acts as
   * `system:kube-controller-manager`. Shared informers and leader election always use
   * `system:kube-controller-manager`, as upstream's root client does. Requests carry the identity
   * through authentication and authorization like any other (no token round trip).
   */
  readonly useServiceAccountCredentials?: boolean;
  /**
   * kube-apiserver's --encryption-provider-config: the path of an apiserver.config.k8s.io/v1
   * EncryptionConfiguration (YAML or JSON). The resources it lists are encrypted before they reach
   * the storage backend (aescbc, aesgcm, secretbox; identity writes plain text). Read once, when
   * the control plane is created; a file that does not load or validate fails creation, naming the
   * file and the field.
   */
  readonly encryptionProviderConfig?: string;
  /**
   * kube-apiserver's --encryption-provider-config-automatic-reload: read the file again every
   * minute (`encryptionProviderConfigReloadIntervalMs`) and, when it changed and loads, use the
   * new providers from then on without a restart. A file that does not load is logged, counted in
   * `apiserver_encryption_config_controller_automatic_reloads_total{status="failure"}`, and the
   * providers in use stay.
   */
  readonly encryptionProviderConfigAutomaticReload?: boolean;
  readonly encryptionProviderConfigReloadIntervalMs?: number;
  /**
   * Auditing: an audit.k8s.io/v1 Policy (`policyFile`, or `policy`) and the log backend (`log.path`,
   * `-` for stdout; rotation, format, mode). Both are needed; a policy that does not load refuses start.
   */
  readonly audit?: AuditOptions;
  /** ServiceAccount tokens: keys, issuers, audiences (kube-apiserver's --service-account-* flags). */
  readonly serviceAccounts?: ServiceAccountOptions;
  /** API aggregation, when the `apiRegistration()` module is served: Service addresses, proxy client certificate. */
  readonly aggregation?: AggregationOptions;
  /**
   * kube-apiserver's --requestheader-* flags: a front proxy (an aggregator) whose client
   * certificate the CA signed asserts the user in X-Remote-User / X-Remote-Group /
   * X-Remote-Extra-* headers. Default: none; with API aggregation, kplane's own front-proxy CA and
   * `front-proxy-client` (as kubeadm configures kube-apiserver). Published, with the client CA, in
   * kube-system/extension-apiserver-authentication for extension API servers.
   */
  readonly requestHeader?: RequestHeaderConfig;
}

export interface ServiceAccountOptions {
  /**
   * --service-account-signing-key-file: the PEM private key (RSA or ECDSA) tokens are signed with.
   * Default: `<dataDir>/pki/sa.key`, made at first start. API servers sharing one etcd must be
   * given the same key (and the same verification keys).
   */
  readonly signingKeyFile?: string;
  /** --service-account-key-file (repeatable): PEM keys tokens are verified with. Default: the signing key. */
  readonly keyFiles?: readonly string[];
  /** --service-account-issuer (repeatable): the first is the `iss` of new tokens, all are accepted. Default https://kubernetes.default.svc.cluster.local. */
  readonly issuers?: readonly string[];
  /** --api-audiences: the audiences a token must name one of. Default: the first issuer. */
  readonly apiAudiences?: readonly string[];
  /** --service-account-max-token-expiration in seconds (1 hour to 2^32 seconds; 0: no cap). */
  readonly maxTokenExpirationSeconds?: number;
  /** --service-account-jwks-uri: jwks_uri of the discovery document. Default https://<host:port>/openid/v1/jwks. */
  readonly jwksURI?: string;
}

/** kubeadm's default issuer. */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** The Lease in-process controllers and `kplane controller-manager` campaign for. */
export const CONTROLLER_LEASE = { namespace: 'kube-system', name: 'kplane-controller-manager' } as const;

export interface ControlPlane {
  readonly registry: ApiRegistry;
  readonly storage: Storage;
  readonly metrics: ApiMetrics;
  readonly pki: Pki;
  /** The front-proxy CA and the aggregator's client certificate, when APIServices are served (see `aggregation`). */
  readonly frontProxyPki: FrontProxyPki | undefined;
  /** `https://host:port`, known after start. */
  readonly url: string;
  readonly port: number;
  readonly kubeconfigPath: string;
  /**
   * A client that talks to this server in process (no sockets), authenticated as
   * `system:apiserver` (group `system:masters`); requests pass authentication, admission and
   * validation exactly like remote ones. For controllers running inside the server.
   */
  loopbackClient(): KubeClient;
  /** The authorizer (and rule resolver) this server's requests and reviews are decided with. */
  readonly authorization: ControlPlaneAuthorization;
  /** Whether this server's in-process controllers are running now (false while another holds the Lease). */
  controllersLeading(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export const KPLANE_VERSION = '0.1.0';
/** The Kubernetes API level kplane speaks (what /version reports as major/minor). */
export const KUBE_API_LEVEL = { major: '1', minor: '33' };

export function versionInfo(): VersionInfo {
  return {
    major: KUBE_API_LEVEL.major,
    minor: KUBE_API_LEVEL.minor,
    // Compatibility versions (KEP-4330), as a 1.33 kube-apiserver reports them by default.
    emulationMajor: KUBE_API_LEVEL.major,
    emulationMinor: KUBE_API_LEVEL.minor,
    minCompatibilityMajor: KUBE_API_LEVEL.major,
    minCompatibilityMinor: String(Number(KUBE_API_LEVEL.minor) - 1),
    gitVersion: `v${KUBE_API_LEVEL.major}.${KUBE_API_LEVEL.minor}.0+kplane.${KPLANE_VERSION}`,
    gitCommit: '',
    gitTreeState: '',
    buildDate: '',
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

/** client-go's DefaultKubernetesUserAgent as the kube-apiserver binary sends it: `<binary>/<version> (<os>/<arch>) kubernetes/<commit>`. */
/** The loopback clients' user: system:apiserver in system:masters. */
const LOOPBACK_USER: AuthUser = { name: 'system:apiserver', groups: ['system:masters'] };

function kubeApiserverUserAgent(): string {
  const v = versionInfo();
  return `kube-apiserver/${v.gitVersion} (${v.platform}) kubernetes/${v.gitCommit || 'unknown'}`;
}

/** A timeout option in ms: a positive number, or the default when absent. */
function positiveMs(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number of milliseconds, got ${v}`);
  return v;
}

/** The requestTimeout option in ms: a Go duration or a number of ms, not negative (as --request-timeout). */
function requestTimeoutMsOf(v: string | number): number {
  let ms: number;
  if (typeof v === 'number') ms = v;
  else {
    const d = parseGoDuration(v);
    if ('error' in d) throw new Error(`invalid requestTimeout ${JSON.stringify(v)}: ${d.error}`);
    ms = Number(d.ns) / 1e6;
  }
  if (!Number.isFinite(ms) || ms < 0) throw new Error('requestTimeout can not be negative value');
  return ms;
}

export async function createControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  // Process-wide, once: V8 would otherwise pretenure literals that per-request objects share with
  // long-lived ones (see runtime/v8-pretenuring.ts; KPLANE_V8_PRETENURING=1 keeps V8's default).
  disableAllocationSitePretenuring();
  const log = opts.log ?? (() => {});
  const requestTimeoutMs = opts.requestTimeout === undefined ? undefined : requestTimeoutMsOf(opts.requestTimeout);
  const tlsSettings = serverTLSSettings({
    ...(opts.tlsCipherSuites ? { cipherSuites: opts.tlsCipherSuites } : {}),
    ...(opts.tlsMinVersion !== undefined ? { minVersion: opts.tlsMinVersion } : {}),
  });
  for (const w of tlsSettings.warnings) log(w);
  try {
    createSecureContext({ ciphers: tlsSettings.ciphers });
  } catch {
    // Go implements RC4 and 3DES; OpenSSL 3 (node's) offers neither by default.
    throw new Error(
      `none of the TLS cipher suites ${(opts.tlsCipherSuites ?? []).join(',')} is available in this server's TLS library (OpenSSL ${process.versions.openssl})`,
    );
  }
  const idleTimeoutMs = positiveMs('idleTimeoutMs', opts.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS);
  const readHeaderTimeoutMs = positiveMs('readHeaderTimeoutMs', opts.readHeaderTimeoutMs, DEFAULT_READ_HEADER_TIMEOUT_MS);
  const maxStreams = opts.http2MaxStreamsPerConnection ?? 0;
  if (!Number.isSafeInteger(maxStreams) || maxStreams < 0 || maxStreams > 2 ** 32 - 1)
    throw new Error(`http2MaxStreamsPerConnection must be a whole number from 0 to 4294967295, got ${maxStreams}`);
  const metrics = createApiMetrics();
  // Before the data dir, PKI and storage: a config that does not load leaves nothing behind.
  let encryption: ResourceTransformers | undefined;
  const transformationMetrics = createTransformationMetrics(metrics.registry);
  const encryptionContent = opts.encryptionProviderConfig !== undefined ? readConfigContent(opts.encryptionProviderConfig) : undefined;
  if (opts.encryptionProviderConfig !== undefined) {
    try {
      encryption = loadEncryptionConfig(opts.encryptionProviderConfig, transformationMetrics);
    } catch (e) {
      throw new Error(`--encryption-provider-config=${opts.encryptionProviderConfig}: ${(e as Error).message}`, { cause: e });
    }
  }
  const dataDir = resolve(opts.dataDir);
  const host = opts.host ?? '127.0.0.1';
  // The metrics registry exists before anything can fail to start (a bad audit policy refuses start).
  const audit = createAuditRuntime(opts.audit, metrics.registry, log);
  // A port already taken fails here, before the data dir, PKI and database exist: a start that
  // cannot serve leaves nothing behind. (start() still reports a port taken in between.)
  if ((opts.port ?? 6443) !== 0) await checkCanListen(host, opts.port ?? 6443);
  // The data directory holds the database (Secrets) and the PKI's private keys: 0700, as etcd's.
  ensurePrivateDir(dataDir, log);
  if (existsSync(join(dataDir, 'pki'))) ensurePrivateDir(join(dataDir, 'pki'), log);
  // ensurePki puts its files under `<dir>/pki/`.
  const pki = await ensurePki(dataDir, { hosts: ['127.0.0.1', '::1', 'localhost', host] });
  for (const key of ['ca.key', 'apiserver.key', 'admin.key']) ensurePrivateFile(join(dataDir, 'pki', key), { log });
  const features = opts.featureGates ?? newKubeFeatureGate();
  features.close();
  const badDynamic = invalidDynamicFeatures(features, opts.dynamicFeatures ?? []);
  if (badDynamic.length > 0) throw new Error(`dynamicFeatures: ${new AggregateError(badDynamic).message}`);
  const dynamicNames = new Set(opts.dynamicFeatures ?? []);
  metrics.recordFeatures(features);
  const raw = await opts.storage.open({ log });
  const instrumented = instrumentStorage(raw, metrics, opts.storage.name);
  // Encryption at rest sits below the watch cache: the cache holds plain text, the backend never does.
  const keyTransformers: KeyTransformers | undefined = encryption
    ? new KeyTransformers(encryption, (): StoredResource[] =>
        registry.resources.map((r: RegisteredResource) => ({
          prefix: r.registration.keyPrefix ?? defaultKeyPrefix(r.descriptor),
          group: r.descriptor.group,
          resource: r.descriptor.plural,
        })),
      )
    : undefined;
  const backend = keyTransformers ? transformStorage(instrumented, keyTransformers) : instrumented;
  const recordReload =
    keyTransformers && opts.encryptionProviderConfigAutomaticReload ? createReloadMetrics(metrics.registry, `kplane-${randomUUID()}`) : undefined;
  const encryptionReloader =
    keyTransformers && recordReload && opts.encryptionProviderConfig !== undefined
      ? new EncryptionConfigReloader({
          path: opts.encryptionProviderConfig,
          initialContent: encryptionContent,
          ...(opts.encryptionProviderConfigReloadIntervalMs !== undefined ? { intervalMs: opts.encryptionProviderConfigReloadIntervalMs } : {}),
          metrics: transformationMetrics,
          apply: (t) => keyTransformers.replace(t),
          onReload: (r) => {
            recordReload(r.ok);
            const reloadLog = asLogger(log);
            if (r.ok) reloadLog.info('Loaded new encryption config content', 'name', 'encryption-provider-config-automatic-reload-controller');
            else reloadLog.error(r.error, 'Encryption config reload failed', 'name', 'encryption-provider-config-automatic-reload-controller');
          },
        })
      : undefined;
  const consistencyLog = asLogger(log);
  // The flag (watchCache, --watch-cache) and the gate (KplaneWatchCache) must both allow the cache.
  const cacher =
    opts.watchCache === false || !features.enabled(KplaneWatchCache)
      ? undefined
      : new CachingStorage(backend, {
          consistentListFromCache: () => features.enabled(ConsistentListFromCache),
          consistencyCheckIntervalMs: opts.watchCacheConsistencyCheckIntervalMs ?? 0,
          onHistoryCapacity: (prefix, capacity, previous) => {
            const { group, resource } = groupResourceOf(prefix);
            metrics.recordWatchCacheCapacity(group, resource, capacity, previous);
          },
          onConsistencyCheck: (r) => {
            const { group, resource } = groupResourceOf(r.prefix);
            metrics.recordConsistencyCheck(group, resource, r.status);
            const rv = String(r.revision ?? '');
            if (r.status === 'success') {
              consistencyLog.v(3).info('Cache consistency check passed', 'group', group, 'resource', resource, 'resourceVersion', rv, 'digest', r.cacheDigest);
            } else if (r.status === 'failure') {
              consistencyLog.error(
                undefined,
                'Cache consistency check failed',
                'group',
                group,
                'resource',
                resource,
                'resourceVersion',
                rv,
                'storageDigest',
                r.storageDigest,
                'cacheDigest',
                r.cacheDigest,
                'diffDetail',
                r.diff,
              );
            } else {
              consistencyLog.error(r.error, 'Cache consistency check error', 'group', group, 'resource', resource);
            }
          },
        });
  /** group and resource of a registered key prefix (`/registry/[<group>/]<plural>/` or a resource's own). */
  const groupResourceOf = (prefix: string): { group: string; resource: string } => {
    for (const r of registry.resources) {
      if ((r.registration.keyPrefix ?? defaultKeyPrefix(r.descriptor)) === prefix) return { group: r.descriptor.group, resource: r.descriptor.plural };
    }
    const parts = prefix.split('/').filter(Boolean).slice(1);
    return parts.length >= 2 ? { group: parts[0]!, resource: parts[1]! } : { group: '', resource: parts[0] ?? prefix };
  };
  const storage: Storage = cacher ?? backend;
  const garbageCollection = opts.garbageCollection ?? (opts.controllers ?? []).some((c) => c.garbageCollection);
  // Registering a prefix starts its cache; requests wait for the cache themselves, and its `ready` never rejects.
  const registry = new ApiRegistry(storage, cacher ? (prefix) => void cacher.register(prefix) : undefined, { garbageCollection, features });
  registry.onChange(() => keyTransformers?.invalidate());
  // authentication.k8s.io is served whatever the modules: it answers from the authenticator, not storage.
  let authenticator: Authenticator | undefined;
  const givenModules = opts.apis ?? defaultModules();
  const modules = givenModules.some((m) => m.name === 'authentication.k8s.io')
    ? givenModules
    : [...givenModules, authentication({ reviewer: () => authenticator?.tokens })];
  const seenDefs = new Set<object>();
  for (const m of modules) {
    for (const r of m.resources) if (!r.featureGate || features.enabled(r.featureGate)) registry.add(r);
    if (m.definitions && !seenDefs.has(m.definitions)) {
      seenDefs.add(m.definitions);
      registry.addDefinitions(m.definitions);
    }
  }
  // ServiceAccount tokens: keys, the TokenRequest subresource and the token authenticator.
  const sa = serviceAccountSetup(opts.serviceAccounts ?? {}, dataDir, log);
  const saRegistration = registry.lookup('', 'v1', 'serviceaccounts');
  if (saRegistration) registry.add(withTokenRequest(saRegistration.registration, sa.issuer));
  const authz = buildAuthorization(opts.authorizationModes ?? ['AlwaysAllow'], opts.authorizationWebhook, metrics.registry, log);
  // The loopback client's credential: random per process, like kube-apiserver's loopback token.
  const loopbackToken = randomBytes(32).toString('base64url');
  // What the server itself writes (system namespaces, CRD status) goes through the API with the
  // user agent of kube-apiserver's loopback clientset (client-go's default for that binary), so its
  // managedFields name the manager "kube-apiserver" as upstream's do. The handler is looked up per
  // request: admission plugins below are built from ctx before the server exists.
  const serverClient = createLoopbackClient((req, res) => apiServer.handle(req, res), loopbackToken, { userAgent: kubeApiserverUserAgent() });
  // One service resolver for APIServices, webhooks and conversion webhooks (service-resolution.ts).
  const serviceResolution = setupServiceResolution(registry, opts.aggregation ?? {}, log);
  const ctx: ControlPlaneContext = {
    registry,
    client: serverClient,
    log,
    authorization: authz.authorization,
    metrics: metrics.registry,
    serviceResolver: serviceResolution.resolver,
  };
  // API aggregation: only where the apiRegistration() module serves APIServices.
  const aggregation = await setupAggregation(registry, dataDir, opts.aggregation ?? {}, {
    client: serverClient,
    metrics: metrics.registry,
    log,
    resolver: serviceResolution.resolver,
  });
  const requestHeaderConfig: RequestHeaderConfig | undefined =
    opts.requestHeader ?? (aggregation?.frontProxy ? { clientCA: aggregation.frontProxy.caCertPem, allowedNames: [FRONT_PROXY_CLIENT_NAME] } : undefined);
  const requestHeader = requestHeaderConfig
    ? requestHeaderAuthenticator(requestHeaderConfig, {
        clusterCAs: opts.clientCA !== undefined ? `${pki.caCertPem.trimEnd()}\n${opts.clientCA}` : pki.caCertPem,
      })
    : undefined;
  const admission: AdmissionPlugin[] = [...modules.flatMap((m) => m.admission?.(ctx) ?? []), ...(opts.admission ?? [])];
  // KEP-0007: spec.desired only for the features listed in dynamicFeatures.
  if (registry.lookup(FEATURES_GROUP, FEATURES_VERSION, 'features'))
    admission.push(featureDesiredAdmission({ known: (n) => features.getAll().has(n), isDynamic: (n) => features.isDynamic(n) }, dynamicNames));
  const health = createHealthChecks([
    { name: 'etcd', check: () => raw.ping(), endpoints: ['healthz', 'readyz'] },
    {
      name: 'bootstrap',
      check: async () => {
        if (!bootstrapped) throw new Error('not finished');
      },
      endpoints: ['healthz', 'readyz'],
    },
    ...(cacher
      ? [
          {
            // Not upstream's: kube-apiserver only counts and logs a diverged cache.
            name: 'watch-cache-consistency',
            endpoints: ['readyz' as const],
            check: async () => {
              const diverged = cacher.divergences();
              if (diverged.length === 0) return;
              const what = diverged.map((r) => `${r.prefix} at resourceVersion ${r.revision} (${r.diff})`).join(', ');
              throw new Error(`watch cache differs from storage: ${what}`);
            },
          },
        ]
      : []),
  ]);
  let bootstrapped = false;
  let port = opts.port ?? 6443;
  let issuerDocs: Promise<OpenIDMetadata | undefined> | undefined;
  const tokens = new Map(opts.tokens ?? []);
  const jwt = opts.authenticationConfig ? createJWTAuthenticators(opts.authenticationConfig, { cel: claimExpressions, log }) : undefined;
  tokens.set(loopbackToken, LOOPBACK_USER);
  const apiServer = new ApiServer({
    registry,
    admission,
    authenticate: (authenticator = createAuthenticator({
      tokens,
      tokenAuthenticators: [
        ...(opts.bootstrapTokenAuth ? [bootstrapTokenAuthenticator({ client: serverClient })] : []),
        createServiceAccountAuthenticator({
          issuers: sa.issuers,
          keys: sa.keys.verification,
          apiAudiences: sa.issuer.apiAudiences,
          getter: registryTokenGetter(registry),
          metrics: metrics.registry,
          log,
        }),
        ...(opts.tokenAuthenticators ?? []),
        ...(jwt?.authenticators ?? []),
      ],
      anonymous: opts.anonymousAuth ?? false,
      metrics: new AuthenticationMetrics(metrics.registry),
      ...(requestHeader ? { requestHeader } : {}),
    })),
    // Impersonate-* headers, each authorized as verb `impersonate` by the server's authorizer
    // (with AlwaysAllow and no authorizer in the chain, every impersonation is allowed).
    impersonator: createImpersonator(authz.authorization.authorizer ?? alwaysAllow),
    ...(authz.authorization.authorizer ? { authorizer: authz.authorization.authorizer } : {}),
    maxRequestBodyBytes: opts.maxRequestBodyBytes ?? 3 * 1024 * 1024,
    ...(opts.maxRequestsInFlight !== undefined ? { maxRequestsInFlight: opts.maxRequestsInFlight } : {}),
    ...(opts.maxMutatingRequestsInFlight !== undefined ? { maxMutatingRequestsInFlight: opts.maxMutatingRequestsInFlight } : {}),
    metrics,
    health: { handle: (path, query) => health.handle(path, query) },
    openapi: buildOpenAPIProvider(registry, versionInfo(), aggregation ? () => aggregation.aggregator.remoteGroupVersions() : undefined),
    ...(aggregation ? { aggregator: aggregation.aggregator } : {}),
    ...(sa.discoverable ? { serviceAccountIssuerDiscovery: () => (issuerDocs ??= sa.discovery(`${host.includes(':') ? `[${host}]` : host}:${port}`)) } : {}),
    version: versionInfo(),
    serverAddress: () => `${host.includes(':') ? `[${host}]` : host}:${port}`,
    metricsText: metricsHandler(metrics.registry),
    ...(opts.minRequestTimeoutSeconds !== undefined ? { minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds } : {}),
    ...(opts.watchBookmarkIntervalMs !== undefined ? { watchBookmarkIntervalMs: opts.watchBookmarkIntervalMs } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(opts.responseCompression !== undefined ? { responseCompression: opts.responseCompression } : {}),
    features,
    ...(audit ? { audit: audit.runtime } : {}),
    log,
  });
  let server: Http2SecureServer | undefined;
  let controllers: RunningControllers | undefined;
  const controllerClients: KubeClient[] = [];
  let objectCounter: NodeJS.Timeout | undefined;
  let identityLease: IdentityLeaseController | undefined;
  let featureUses: FeatureReporter | undefined;
  let flow: FeatureFlow | undefined;
  let dynamicWatch: DynamicFeatures | undefined;
  const sockets = new Set<import('node:net').Socket>();
  // apiserver_storage_objects, refreshed like kube-apiserver's storage object count tracker.
  const countObjects = async (): Promise<void> => {
    const seen = new Set<string>();
    for (const r of registry.resources) {
      const d = r.descriptor;
      const label = d.group ? `${d.plural}.${d.group}` : d.plural;
      if (seen.has(label)) continue;
      seen.add(label);
      try {
        metrics.setStorageObjects(label, await r.store.count());
      } catch {
        // storage unreachable: /readyz reports it; keep the last figure
      }
    }
  };
  const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
  const urlOf = (): string => `https://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const cp: ControlPlane = {
    registry,
    storage,
    metrics,
    pki,
    frontProxyPki: aggregation?.frontProxy,
    get url() {
      return urlOf();
    },
    get port() {
      return port;
    },
    kubeconfigPath,
    authorization: authz.authorization,
    loopbackClient: () => createLoopbackClient(apiServer.handle, loopbackToken),
    controllersLeading: () => controllers?.manager.isLeading() ?? false,
    async start() {
      await waitForStorage(raw, opts.storage.name, log, opts.storageStartTimeoutMs ?? STORAGE_START_TIMEOUT_MS);
      await serviceResolution.start();
      for (const m of modules) await m.bootstrap?.(ctx);
      await aggregation?.start(serverClient);
      // kube-system/extension-apiserver-authentication, for extension API servers' delegated authentication.
      if (registry.lookup('', 'v1', 'configmaps') && (requestHeader || aggregation)) {
        const clientCA = opts.clientCA !== undefined ? `${pki.caCertPem.trimEnd()}\n${opts.clientCA}` : pki.caCertPem;
        await publishExtensionApiserverAuthentication(serverClient, extensionApiserverAuthenticationData(clientCA, requestHeader?.config)).catch((e: unknown) =>
          log(`publishing ${'kube-system/extension-apiserver-authentication'}: ${e instanceof Error ? e.message : String(e)}`),
        );
      }
      // RBAC decides from its cache: it is filled (every kind listed once) before the server listens.
      await authz.rbac?.start(serverClient, log);
      bootstrapped = true;
      server = createSecureServer(
        {
          key: pki.servingKeyPem,
          cert: pki.servingCertPem,
          // The requestheader CA is listed too, so that a front proxy's client (Go's) sends its certificate.
          ca: [pki.caCertPem, ...(opts.clientCA !== undefined ? [opts.clientCA] : []), ...(requestHeader ? [requestHeader.config.clientCA] : [])],
          requestCert: true,
          rejectUnauthorized: false,
          allowHTTP1: true,
          ciphers: tlsSettings.ciphers,
          minVersion: tlsSettings.minVersion,
          honorCipherOrder: tlsSettings.honorCipherOrder,
          handshakeTimeout: readHeaderTimeoutMs,
          settings: { maxConcurrentStreams: maxStreams > 0 ? maxStreams : DEFAULT_HTTP2_MAX_STREAMS },
          // TCP_NODELAY on every connection, as Go's net package sets it: an HTTP/2 answer is several
          // writes (HEADERS and DATA, then END_STREAM), and with Nagle on a later one waits for the
          // peer's delayed ACK (up to 40 ms; seen through the aggregator, whose client reads the
          // answer by its Content-Length and sends the next request before the END_STREAM came).
          noDelay: true,
        },
        apiServer.handle as unknown as Parameters<typeof createSecureServer>[1],
      );
      // No inactivity timeout on sockets: a watch may send nothing for long. Connections without a
      // request in flight are closed by installConnectionTimeouts instead.
      server.setTimeout(0);
      installConnectionTimeouts(server, { idleTimeoutMs, readHeaderTimeoutMs });
      keepStreamTablesYoung(server);
      await new Promise<void>((ok, fail) => {
        const onError = (e: NodeJS.ErrnoException): void => fail(listenError(e, host, port));
        server!.once('error', onError);
        server!.listen(port, host, () => {
          server!.off('error', onError);
          ok();
        });
      });
      server.on('connection', (sock: import('node:net').Socket) => {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
      });
      port = (server.address() as AddressInfo).port;
      void countObjects();
      objectCounter = setInterval(() => void countObjects(), 30_000);
      objectCounter.unref();
      encryptionReloader?.start();
      await writeAdminKubeconfig(kubeconfigPath, { server: urlOf(), pki });
      // KEP-1965's identity Lease, where Leases are served (post-start hook upstream).
      if (features.enabled(APIServerIdentity) && registry.lookup('coordination.k8s.io', 'v1', 'leases')) {
        identityLease = apiserverIdentityController(serverClient, {
          id: `${hostname()}:${port}`,
          hostname: hostname(),
          log,
          ...(opts.featureFlow && opts.featureFlow.identityRenewIntervalMs ? { renewIntervalMs: opts.featureFlow.identityRenewIntervalMs } : {}),
        });
        await identityLease.start();
      }
      // KEP-0007: the features this server knows, and its use of each, reported off the request path.
      if (opts.reportFeatures !== false && registry.lookup(FEATURES_GROUP, FEATURES_VERSION, 'features')) {
        featureUses = featureReporter(serverClient, features, {
          component: 'kube-apiserver',
          identity: identityLease?.holderIdentity ?? `${identityLeaseName(`${hostname()}:${port}`)}_${randomUUID()}`,
          version: versionInfo().gitVersion,
          dynamic: (n) => dynamicNames.has(n),
          log,
        });
        featureUses.start();
      }
      // KEP-0007's dynamic features: spec.desired turns this server's gate when its watch sees it.
      if (dynamicNames.size > 0 && registry.lookup(FEATURES_GROUP, FEATURES_VERSION, 'features')) {
        dynamicWatch = dynamicFeatures(serverClient, features, { features: [...dynamicNames], onChange: () => featureUses?.trigger(), log });
        dynamicWatch.start();
      }
      // KEP-0007's server flow: the leader among live identity Leases owns Feature status.
      if (opts.featureFlow !== false && identityLease && registry.lookup(FEATURES_GROUP, FEATURES_VERSION, 'features')) {
        const { identityRenewIntervalMs: _r, tasks, ...settings } = opts.featureFlow ?? {};
        const gated = registry.resources.flatMap((r) =>
          r.registration.gatedFields?.length
            ? [{ gvr: { group: r.descriptor.group, version: r.descriptor.version, resource: r.descriptor.plural }, gatedFields: r.registration.gatedFields }]
            : [],
        );
        flow = featureFlow(serverClient, features, {
          ...settings,
          leaseName: identityLease.leaseName,
          version: versionInfo().gitVersion,
          tasks: mergeTasks(tasksFromGatedFields(gated), tasks),
          // ClearField through the registry's stores, not HTTP and JSON (feature-writes.ts).
          direct: registryWrites({ registry, admission: apiServer.admission, user: LOOPBACK_USER }),
          dynamicFeatures: [...dynamicNames],
          log,
        });
        flow.start();
      }
      // Controllers that come with an optional API module (the cloud module's EndpointSlice controller).
      const inProcessControllers = opts.controllers?.length ? withModuleControllers(opts.controllers, modules) : opts.controllers;
      if (inProcessControllers?.length) {
        const le = opts.controllerLeaderElection ?? opts.storage.name === 'etcd';
        const leaderElection: ManagerLeaderElection | undefined = le
          ? {
              ...CONTROLLER_LEASE,
              identity: `${hostname()}_${randomUUID()}`,
              onNewLeader: (who) => log(`controllers: leader is now ${who}`),
              ...(typeof le === 'object' ? le : {}),
            }
          : undefined;
        // Each identity gets a random credential the server's static token table maps to it.
        const loopbackAs = (user: AuthUser): KubeClient => {
          const token = randomBytes(32).toString('base64url');
          tokens.set(token, user);
          const c = createLoopbackClient(apiServer.handle, token);
          controllerClients.push(c);
          return c;
        };
        const root = loopbackAs({ name: KUBE_CONTROLLER_MANAGER_USER, groups: [] });
        const perController = new Map<string, KubeClient>();
        if (opts.useServiceAccountCredentials ?? true) {
          const names = controllerServiceAccountNames(inProcessControllers);
          await ensureControllerServiceAccounts(serverClient, names);
          for (const n of names) perController.set(n, loopbackAs(controllerServiceAccountUser(n)));
        }
        controllers = runControllers({
          client: root,
          clientFor: (c) => (c.serviceAccountName ? perController.get(c.serviceAccountName) : undefined),
          controllers: inProcessControllers,
          rootCA: pki.caCertPem,
          serviceAccountTokenSigner: (claims) => signToken(sa.keys.signing, claims),
          metrics: metrics.registry,
          log,
          ...(leaderElection ? { leaderElection } : {}),
        });
      }
    },
    async stop() {
      health.markShuttingDown();
      await flow?.stop();
      await dynamicWatch?.stop();
      await featureUses?.stop();
      await identityLease?.stop();
      jwt?.stop();
      await controllers?.stop();
      await Promise.all(controllerClients.map((c) => c.close()));
      apiServer.shutdown();
      await aggregation?.stop();
      for (const m of modules) await m.shutdown?.();
      await serviceResolution.close();
      await authz.rbac?.stop();
      await serverClient.close();
      if (objectCounter) clearInterval(objectCounter);
      encryptionReloader?.stop();
      if (server) {
        const s = server;
        const closed = new Promise<void>((ok) => s.close(() => ok()));
        // In-flight requests get a moment to finish; then idle keep-alive sockets and HTTP/2
        // sessions, which would hold close() open forever, are cut (watches were ended above).
        const grace = new Promise<void>((ok) => setTimeout(ok, 1000).unref());
        await Promise.race([closed, grace]);
        for (const sock of sockets) sock.destroy();
        await closed;
      }
      await audit?.shutdown();
      await storage.close();
    },
  };
  return cp;
}

/**
 * The authorizer chain of --authorization-mode (pkg/kubeapiserver/authorizer): system:masters
 * first (not counted, as upstream's privileged-group authorizer), then each mode, counted in
 * `apiserver_authorization_decisions_total{type,name,decision}`.
 */
function buildAuthorization(
  modes: readonly AuthorizationMode[],
  webhook: AuthorizationWebhookOptions | undefined,
  registry: import('prom-client').Registry,
  log: (message: string) => void,
): { authorization: ControlPlaneAuthorization; rbac: Rbac | undefined } {
  if (modes.length === 0) throw new Error('authorizationModes: at least one authorization-mode must be passed');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!AUTHORIZATION_MODES.includes(m)) throw new Error(`authorizationModes: authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    if (seen.has(m)) throw new Error(`authorizationModes: authorization-mode ${JSON.stringify(m)} has mode specified more than once`);
    seen.add(m);
  }
  // BuiltInAuthorizationOptions.Validate's texts.
  if (seen.has('Webhook') && !webhook?.configFile && !webhook?.connection)
    throw new Error("authorizationModes: authorization-mode Webhook's authorization config file not passed");
  if (!seen.has('Webhook') && (webhook?.configFile || webhook?.connection))
    throw new Error('authorizationWebhook: cannot specify --authorization-webhook-config-file without mode Webhook');
  if (webhook?.version !== undefined && !SUBJECT_ACCESS_REVIEW_VERSIONS.includes(webhook.version))
    throw new Error(`authorizationWebhook: unsupported webhook authorizer version ${JSON.stringify(webhook.version)}, supported versions are "v1", "v1beta1"`);
  const decisions = new Counter({
    name: 'apiserver_authorization_decisions_total',
    help: 'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
    labelNames: ['type', 'name', 'decision'],
    registers: [registry],
  });
  const record = (type: string, name: string, decision: string): void => decisions.inc({ type, name, decision });
  const rbac = modes.includes('RBAC') ? createRbac() : undefined;
  const authorizers: Authorizer[] = [privilegedGroups(SYSTEM_PRIVILEGED_GROUP)];
  const resolvers: RuleResolver[] = [];
  for (const m of modes) {
    // The legacy flag's authorizers are named after their mode in lower case.
    const named = (a: Authorizer): Authorizer => instrumentedAuthorizer(m, m.toLowerCase(), a, record);
    if (m === 'AlwaysAllow') {
      authorizers.push(named(alwaysAllow));
      resolvers.push(alwaysAllow);
    } else if (m === 'AlwaysDeny') {
      authorizers.push(named(alwaysDeny));
      resolvers.push(alwaysDeny);
    } else if (m === 'Webhook') {
      const w = createWebhookAuthorizer({
        // The file is read now: a broken one stops the start, naming the file and the field.
        connection: webhook!.connection ?? loadWebhookKubeconfig(webhook!.configFile!),
        ...(webhook!.version ? { version: webhook!.version } : {}),
        ...(webhook!.authorizedTTLMs !== undefined ? { authorizedTTLMs: webhook!.authorizedTTLMs } : {}),
        ...(webhook!.unauthorizedTTLMs !== undefined ? { unauthorizedTTLMs: webhook!.unauthorizedTTLMs } : {}),
        ...(webhook!.timeoutMs !== undefined ? { timeoutMs: webhook!.timeoutMs } : {}),
        ...(webhook!.retryBackoff ? { retryBackoff: webhook!.retryBackoff } : {}),
        name: WEBHOOK_NAME,
        metrics: webhookMetrics(registry),
        log,
      });
      // The legacy flag's webhook is named `default` (kube-apiserver's defaultWebhookName).
      authorizers.push(instrumentedAuthorizer(m, WEBHOOK_NAME, w, record));
      resolvers.push(w);
    } else {
      authorizers.push(named(rbac!.authorizer));
      resolvers.push(rbac!.resolver);
    }
  }
  return {
    authorization: { authorizer: unionAuthorizer(authorizers), ruleResolver: unionRuleResolver(resolvers), ...(rbac ? { rbac: rbac.resolver } : {}) },
    rbac,
  };
}

const WEBHOOK_NAME = 'default';

/** apiserver_authorization_webhook_* (plugin/pkg/authorizer/webhook/metrics). */
function webhookMetrics(registry: import('prom-client').Registry): WebhookMetrics {
  const evaluations = new Counter({
    name: 'apiserver_authorization_webhook_evaluations_total',
    help: 'Round-trips to authorization webhooks.',
    labelNames: ['name', 'result'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'apiserver_authorization_webhook_duration_seconds',
    help: 'Request latency in seconds.',
    labelNames: ['name', 'result'],
    // component-base's DefBuckets (prometheus.DefBuckets).
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const failOpen = new Counter({
    name: 'apiserver_authorization_webhook_evaluations_fail_open_total',
    help: 'NoOpinion results due to webhook timeout or error.',
    labelNames: ['name', 'result'],
    registers: [registry],
  });
  return {
    evaluation(name, result, seconds) {
      evaluations.inc({ name, result });
      duration.observe({ name, result }, seconds);
    },
    failOpen: (name, result) => failOpen.inc({ name, result }),
  };
}

/** Default of ControlPlaneOptions.storageStartTimeoutMs. */
const STORAGE_START_TIMEOUT_MS = 30_000;

/**
 * Waits until the storage answers a ping, saying so in the log (every 5 s), or fails with what the
 * last ping said and what to do about it.
 */
async function waitForStorage(storage: Storage, name: string, log: (m: string) => void, timeoutMs: number): Promise<void> {
  const started = Date.now();
  let lastLog = 0;
  for (;;) {
    try {
      await storage.ping();
      if (lastLog > 0) log(`storage: ${name} answers after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const waited = Date.now() - started;
      if (waited >= timeoutMs) {
        const hint =
          name === 'etcd' ? 'start etcd, or point kplane at a running one (kplane serve --etcd-servers; library: etcd({ endpoints }))' : 'check the storage';
        throw new Error(`storage does not answer after ${Math.round(waited / 1000)} s: ${why}; ${hint}`, { cause: e });
      }
      if (lastLog === 0 || Date.now() - lastLog >= 5_000) {
        log(`storage: waiting for ${name} to answer (up to ${Math.round(timeoutMs / 1000)} s): ${why}`);
        lastLog = Date.now();
      }
      await new Promise((r) => setTimeout(r, Math.min(1_000, Math.max(0, timeoutMs - waited))));
    }
  }
}

/** Listens on host:port and closes at once; a failure is listenError's. */
function checkCanListen(host: string, port: number): Promise<void> {
  return new Promise((ok, fail) => {
    const probe = createNetServer();
    probe.once('error', (e: NodeJS.ErrnoException) => fail(listenError(e, host, port)));
    probe.listen(port, host, () => probe.close(() => ok()));
  });
}

/** The listen failure said with what to do: a port in use or one that needs privileges. */
function listenError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (e.code === 'EADDRINUSE')
    return new Error(
      `cannot listen on ${where}: the address is in use (another kplane server or another program); stop it, or choose another port (kplane serve --secure-port, library option port; 0 picks a free one)`,
      { cause: e },
    );
  if (e.code === 'EACCES')
    return new Error(
      `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose a port of 1024 or more (kplane serve --secure-port)`,
      { cause: e },
    );
  if (e.code === 'EADDRNOTAVAIL')
    return new Error(`cannot listen on ${where}: no interface of this machine has that address; choose another (kplane serve --bind-address)`, { cause: e });
  return e;
}

/** The keys, issuer and discovery documents of ServiceAccount tokens, from the options. */
function serviceAccountSetup(
  o: ServiceAccountOptions,
  dataDir: string,
  log: (msg: string) => void,
): {
  keys: ReturnType<typeof loadServiceAccountKeys>;
  issuers: readonly string[];
  issuer: TokenIssuer;
  discoverable: boolean;
  discovery: (externalAddress: string) => Promise<OpenIDMetadata | undefined>;
} {
  const issuers = o.issuers?.length ? o.issuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  for (const i of issuers) if (i === '') throw new Error('service-account-issuer should not be an empty string');
  if (new Set(issuers).size !== issuers.length) throw new Error('service-account-issuer contains duplicated values');
  const max = o.maxTokenExpirationSeconds ?? 0;
  if (max !== 0 && !(max >= 3600 && max <= 2 ** 32)) throw new Error('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
  const keys = loadServiceAccountKeys({
    dataDir,
    log,
    ...(o.signingKeyFile ? { signingKeyFile: o.signingKeyFile } : {}),
    ...(o.keyFiles?.length ? { keyFiles: o.keyFiles } : {}),
  });
  const apiAudiences = o.apiAudiences?.length ? o.apiAudiences : [issuers[0]!];
  const issuer = tokenIssuer({ issuer: issuers[0]!, apiAudiences, maxExpirationSeconds: max, key: keys.signing });
  // Upstream installs the discovery endpoints only for an https issuer URL (and logs why not).
  let discoverable = true;
  try {
    const u = new URL(issuers[0]!);
    if (u.protocol !== 'https:' || u.search || u.hash) discoverable = false;
  } catch {
    discoverable = false;
  }
  if (!discoverable) log(`service account issuer discovery is off: the issuer ${JSON.stringify(issuers[0])} is not an https URL without query or fragment`);
  return {
    keys,
    issuers,
    issuer,
    discoverable,
    discovery: (externalAddress) =>
      openIDMetadata({ issuer: issuers[0]!, externalAddress, keys: keys.verification, ...(o.jwksURI ? { jwksURI: o.jwksURI } : {}) }).catch((e: unknown) => {
        log(`service account issuer discovery is off: ${(e as Error).message}`);
        return undefined;
      }),
  };
}

/**
 * The authenticator's view of ServiceAccounts and Secrets: the watch cache first, then storage for
 * what the cache does not have (yet), as upstream's getter reads its informers and then the API.
 */
function registryTokenGetter(registry: ApiRegistry): ServiceAccountTokenGetter {
  const read = async (resource: string, namespace: string, name: string): Promise<KubeObject | undefined> => {
    const r = registry.lookup('', 'v1', resource);
    if (!r) return undefined;
    const notFound = (e: unknown): undefined => {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    };
    const cached = await r.store.get(namespace, name, { resourceVersion: '0' }).catch(notFound);
    return cached ?? (await r.store.get(namespace, name).catch(notFound));
  };
  return {
    getServiceAccount: (namespace, name) => read('serviceaccounts', namespace, name),
    getSecret: (namespace, name) => read('secrets', namespace, name),
  };
}
