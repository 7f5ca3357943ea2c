// `kplane serve`: its flags, parsed and checked, wired into a control plane. Argument parsing and
// wiring only; the work is in the library. Loaded by main.ts only for serve (and the help text).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createControlPlane, defaultModules, type AuthorizationMode } from '../controlplane/controlplane.js';
import type { RequestHeaderConfig } from '../auth/authn/request-header.js';
import type { AggregationOptions } from '../controlplane/aggregation.js';
import { parseServiceAddress } from '../admission/webhook/service-resolver.js';
import { optionalModulesFromFlag, optionalModulesUsage } from './optional-modules.js';
import { isDNS1123Label } from '../apimachinery/validation/names.js';
import { etcd, sqlite } from '../storage/factories.js';
import { readFile } from 'node:fs/promises';
import { loadTokenFile } from '../server/filters/authentication.js';
import { loadClientCA } from '../auth/authn/client-ca.js';
import { loadAuthenticationConfiguration, type AuthenticationConfiguration } from '../auth/authn/jwt-config.js';
import { parseGoDuration } from '../golang/time.js';
import { loadWebhookKubeconfig, type WebhookConnection } from '../auth/authz-webhook/kubeconfig.js';
import type { Logger } from '../golang/klog.js';
import { AggregateError, type FeatureGate, KUBE_BINARY_VERSION, newKubeFeatureGate } from '../featuregate/index.js';
import type { AuditLogFormat, AuditLogMode } from '../server/audit/index.js';
import { checkTLSCipherSuites, checkTLSVersion } from '../server/tls-options.js';
import { defaultControllers } from '../controllers/index.js';
import { invalidDynamicFeatures } from '../controllers/dynamicfeatures.js';
import { featureGateFromFlags } from './feature-flags.js';
import { argumentError, unreadableFlagFile } from './flag-errors.js';
import { CONTROLLER_MANAGER_USAGE } from './controller-manager.js';
import { LOGGING_OPTIONS, LOGGING_USAGE, loggerFromFlags, normalizeShortVerbosity } from './logging.js';

/** The serve flags' part of `kplane --help` (main.ts prints the commands before it). */
export const SERVE_USAGE = `kplane serve flags:
  --data-dir DIR            where data, certificates and the admin kubeconfig live (default .kplane)
  --storage sqlite|etcd     storage backend (default sqlite)
  --etcd-servers URLS       comma-separated etcd client URLs (with --storage etcd)
  --etcd-prefix PREFIX      key prefix in etcd (default none)
  --etcd-compaction-interval DUR
                            how often history is compacted, with etcd and SQLite alike: each round keeps the
                            last interval's history (default 5m0s, a Go duration; 0 = never)
  --bind-address ADDR       address to listen on (default 127.0.0.1)
  --secure-port PORT        HTTPS port (default 6443; 0 picks a free one)
  --token-auth-file FILE    static bearer tokens (token,user,uid,"group1,group2")
  --client-ca-file FILE     PEM CA bundle: client certificates it signed authenticate (CN user, O groups),
                            as well as those of kplane's own CA
  --enable-bootstrap-token-auth
                            bootstrap.kubernetes.io/token Secrets in kube-system authenticate as
                            system:bootstrap:<id>
  --authentication-config FILE
                            AuthenticationConfiguration (apiserver.config.k8s.io/v1beta1 or v1): JWT/OIDC issuers
  --anonymous-auth=true     requests without credentials are system:anonymous (default false)
  --authorization-mode LIST comma-separated authorizers asked in order: RBAC, Webhook, AlwaysAllow,
                            AlwaysDeny (default RBAC); system:masters is always allowed
  --authorization-webhook-config-file FILE
                            kubeconfig naming the authorization webhook (cluster: server, certificate-authority)
                            and kplane's credentials to it (user: client certificate or token), for mode Webhook
  --authorization-webhook-version VER
                            SubjectAccessReview version sent to the webhook: v1beta1 (default) or v1
  --authorization-webhook-cache-authorized-ttl DUR
                            how long an allowed answer of the webhook is reused (default 5m0s)
  --authorization-webhook-cache-unauthorized-ttl DUR
                            how long a not-allowed answer of the webhook is reused (default 30s)
  --max-request-bytes N     largest request body accepted (default 3145728)
  --max-requests-inflight N get and list requests served at once before 429 (default 400; 0 = no limit)
  --max-mutating-requests-inflight N
                            requests of other verbs served at once before 429 (default 200; 0 = no limit);
                            system:masters are served past both limits, as on kube-apiserver
  --request-timeout DUR     deadline of every request but a watch, a Go duration (default 1m0s)
  --response-compression=false
                            never gzip responses (default: bodies over 128 KiB are gzipped when asked)
  --tls-cipher-suites LIST  comma-separated TLS 1.2 cipher suites, Go's names (default: Go's defaults,
                            ECDHE with AES-GCM, ChaCha20-Poly1305 or AES-CBC-SHA)
  --tls-min-version VER     VersionTLS10, VersionTLS11, VersionTLS12 (default) or VersionTLS13
  --http2-max-streams-per-connection N
                            concurrent streams per HTTP/2 connection (default 0: 100)
  --watch-cache=false       serve lists and watches from storage instead of memory (as
                            --feature-gates=KplaneWatchCache=false; the cache runs only when both allow it)
  --watch-cache-consistency-check-interval DUR
                            compare each watch cache with storage this often, a Go duration (default 0s: off;
                            kube's period is 5m); a difference fails /readyz (KEP 0001)
  --modules LIST            comma-separated API modules to serve besides the default ones; known:
                            ${indent(optionalModulesUsage())}
  --global-catalog-namespace NS
                            with --modules=olm: the namespace whose CatalogSources every namespace sees (default olm)
  --aggregator-service-address NS/NAME[:PORT]=HOST:PORT
                            (repeatable) where a service reference (an APIService's spec.service, a webhook's
                            or conversion webhook's clientConfig.service) goes, before any Service is looked
                            at: without --modules cloud kplane serves no Services; loopback addresses only
  --enable-aggregator-routing
                            (with --modules cloud) send service references to an address of the Service's
                            Endpoints rather than its cluster IP
  --proxy-client-cert-file FILE, --proxy-client-key-file FILE
                            the client certificate the aggregator shows backends (default: front-proxy-client,
                            signed by <data-dir>/pki/front-proxy-ca.crt, made at first start)
  --requestheader-client-ca-file FILE
                            a front proxy whose client certificate this CA signed asserts the user in headers
                            (default with --modules apiregistration: <data-dir>/pki/front-proxy-ca.crt)
  --requestheader-allowed-names LIST
                            common names the front proxy's certificate may have (default: any the CA signed;
                            front-proxy-client with the default CA)
  --requestheader-username-headers LIST, --requestheader-group-headers LIST,
  --requestheader-uid-headers LIST, --requestheader-extra-headers-prefix LIST
                            the headers read (default X-Remote-User, X-Remote-Group, X-Remote-Uid, X-Remote-Extra-)
  --service-cluster-ip-range CIDR
                            (module cloud) the IPv4 range Services' cluster IPs come from (default 127.1.0.0/16)
  --service-node-port-range RANGE
                            (module cloud) the ports NodePorts come from (default 30000-32767)
  --controllers=false       do not run the built-in controllers in process (run kplane controller-manager)
  --use-service-account-credentials=false
                            in-process controllers act as system:kube-controller-manager instead of each as
                            its own ServiceAccount system:serviceaccount:kube-system:<controller> (default true)
  --feature-gates LIST      ${indent(newKubeFeatureGate().flagUsage())}
  --dynamic-features LIST   features a cluster admin may turn on and off at runtime with the Feature's
                            spec.desired (comma-separated, repeatable; each must be marked dynamic:
                            ${indent(dynamicFeaturesUsage())})
  --unavailable-feature-retention DUR
                            how long a Feature object no live component declares (a downgrade) is kept, with
                            stability Unavailable, before the feature flow's leader deletes it (default 168h)
  --emulated-version VER    behave as this Kubernetes version for features' stages and defaults, 1.30 to
                            ${KUBE_BINARY_VERSION.toString()} (default ${KUBE_BINARY_VERSION.toString()}), e.g. 1.32 or kube=1.32
  --encryption-provider-config FILE
                            encrypt resources at rest as this EncryptionConfiguration (apiserver.config.k8s.io/v1,
                            YAML or JSON) says: aescbc, aesgcm, secretbox or identity, read at start
  --encryption-provider-config-automatic-reload
                            read that file again every minute and use it when it changed and loads
  --audit-policy-file FILE  audit.k8s.io/v1 Policy: which requests are audited, at which level and stages
  --audit-log-path PATH     write audit events there as JSON lines (- is stdout); needs --audit-policy-file
  --audit-log-maxsize MB    rotate the audit log at this size (default 0: 100 MB)
  --audit-log-maxbackup N   rotated audit logs kept (default 0: all, unless --audit-log-maxage)
  --audit-log-maxage DAYS   days a rotated audit log is kept, by the time in its name (default 0: no limit)
  --audit-log-compress      gzip rotated audit logs
  --audit-log-format FMT    json (default) or legacy (one line of text per event)
  --audit-log-mode MODE     blocking (default: each event is written before the request goes on; a failed
                            write is counted in apiserver_audit_error_total and the request still answered),
                            blocking-strict (a failed write at RequestReceived fails the request) or batch
                            (written off the request's path; a full buffer drops events)
  --audit-log-batch-buffer-size N
                            events batch mode queues before it drops (default 10000)
  --service-account-signing-key-file FILE
                            PEM private key (RSA or ECDSA) ServiceAccount tokens are signed with
                            (default: <data-dir>/pki/sa.key, made at first start)
  --service-account-key-file FILE
                            PEM keys (public, private or certificates) tokens are verified with; repeat
                            for rotation (default: the signing key). Servers sharing an etcd need the same keys
  --service-account-issuer URL
                            the iss of new tokens; repeat: the first issues, all are accepted
                            (default https://kubernetes.default.svc.cluster.local)
  --api-audiences LIST      comma-separated audiences a token must name one of (default: the first issuer)
  --service-account-max-token-expiration DUR
                            longest token a TokenRequest gets, a Go duration from 1h (default 0: no cap)
  --service-account-jwks-uri URL
                            jwks_uri of /.well-known/openid-configuration (default https://<host:port>/openid/v1/jwks)
${LOGGING_USAGE}
${CONTROLLER_MANAGER_USAGE}`;

/** Continues a multi-line help text in the flag descriptions' column. */
function indent(text: string): string {
  return text.split('\n').join('\n                            ');
}

/** --emulated-version and --feature-gates (repeatable, cumulative), with pflag's message for a bad value. */
function featureGatesFromFlags(emulated: string | undefined, gates: readonly string[] | undefined, log: Logger): FeatureGate {
  const gate = featureGateFromFlags(emulated, gates, log);
  if ('error' in gate) fail(gate.error);
  return gate;
}

/** --dynamic-features (KEP-0007): comma-separated, repeatable; each a known feature marked dynamic. */
function dynamicFeaturesFromFlags(gate: FeatureGate, values: readonly string[] | undefined): string[] {
  const names: string[] = [];
  for (const value of values ?? []) {
    const these = value
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    const bad = invalidDynamicFeatures(gate, these);
    if (bad.length) fail(`invalid argument ${JSON.stringify(value)} for "--dynamic-features" flag: ${new AggregateError(bad).message}`);
    names.push(...these);
  }
  return [...new Set(names)];
}

/** The features marked dynamic, for the help text. */
function dynamicFeaturesUsage(): string {
  const g = newKubeFeatureGate();
  return [...g.getAll().keys()]
    .filter((n) => g.isDynamic(n))
    .sort()
    .join(', ');
}

/** `kplane serve`; `commandsUsage` is the help text's first part, main.ts's list of commands. */
/**
 * The flags naming a file serve reads, checked before anything starts. Not here: the files whose
 * loaders already name them as kube-apiserver does (--authorization-webhook-config-file,
 * --encryption-provider-config, --audit-policy-file).
 */
const FILE_FLAGS = [
  'token-auth-file',
  'client-ca-file',
  'authentication-config',
  'requestheader-client-ca-file',
  'proxy-client-cert-file',
  'proxy-client-key-file',
  'service-account-signing-key-file',
  'service-account-key-file',
] as const;

/** serve's flags, parsed; a flag it does not know or a stray argument stops it (exit 2) with a hint. */
function parseServeArgs(argv: string[]): ReturnType<typeof parseServeOptions> {
  try {
    return parseServeOptions(argv);
  } catch (e) {
    const flags = [...new Set((SERVE_USAGE.match(/--[a-z0-9][a-z0-9-]*/g) ?? []).map((f) => f.slice(2)))];
    return fail(argumentError((e as Error).message, flags));
  }
}

function parseServeOptions(argv: string[]) {
  return parseArgs({
    args: normalizeShortVerbosity(argv),
    options: {
      ...LOGGING_OPTIONS,
      'data-dir': { type: 'string', default: '.kplane' },
      storage: { type: 'string', default: 'sqlite' },
      'etcd-servers': { type: 'string' },
      'etcd-prefix': { type: 'string' },
      'etcd-compaction-interval': { type: 'string', default: '5m0s' },
      'bind-address': { type: 'string', default: '127.0.0.1' },
      'secure-port': { type: 'string', default: '6443' },
      'token-auth-file': { type: 'string' },
      'client-ca-file': { type: 'string' },
      'enable-bootstrap-token-auth': { type: 'boolean', default: false },
      'authentication-config': { type: 'string' },
      'anonymous-auth': { type: 'string', default: 'false' },
      'authorization-mode': { type: 'string', default: 'RBAC' },
      'authorization-webhook-config-file': { type: 'string' },
      'authorization-webhook-version': { type: 'string', default: 'v1beta1' },
      'authorization-webhook-cache-authorized-ttl': { type: 'string', default: '5m0s' },
      'authorization-webhook-cache-unauthorized-ttl': { type: 'string', default: '30s' },
      'max-request-bytes': { type: 'string' },
      'max-requests-inflight': { type: 'string', default: '400' },
      'max-mutating-requests-inflight': { type: 'string', default: '200' },
      'request-timeout': { type: 'string', default: '1m0s' },
      'response-compression': { type: 'string', default: 'true' },
      'watch-cache': { type: 'string', default: 'true' },
      'tls-cipher-suites': { type: 'string' },
      'tls-min-version': { type: 'string', default: '' },
      'http2-max-streams-per-connection': { type: 'string', default: '0' },
      'watch-cache-consistency-check-interval': { type: 'string', default: '0s' },
      modules: { type: 'string', multiple: true },
      'global-catalog-namespace': { type: 'string' },
      'aggregator-service-address': { type: 'string', multiple: true },
      'enable-aggregator-routing': { type: 'boolean' },
      'proxy-client-cert-file': { type: 'string' },
      'proxy-client-key-file': { type: 'string' },
      'requestheader-client-ca-file': { type: 'string' },
      'requestheader-allowed-names': { type: 'string', multiple: true },
      'requestheader-username-headers': { type: 'string', multiple: true },
      'requestheader-group-headers': { type: 'string', multiple: true },
      'requestheader-uid-headers': { type: 'string', multiple: true },
      'requestheader-extra-headers-prefix': { type: 'string', multiple: true },
      'service-cluster-ip-range': { type: 'string' },
      'service-node-port-range': { type: 'string' },
      controllers: { type: 'string', default: 'true' },
      'use-service-account-credentials': { type: 'string', default: 'true' },
      'feature-gates': { type: 'string', multiple: true },
      'dynamic-features': { type: 'string', multiple: true },
      'unavailable-feature-retention': { type: 'string' },
      'emulated-version': { type: 'string' },
      'encryption-provider-config': { type: 'string' },
      'encryption-provider-config-automatic-reload': { type: 'boolean' },
      'audit-policy-file': { type: 'string' },
      'audit-log-path': { type: 'string' },
      'audit-log-maxsize': { type: 'string', default: '0' },
      'audit-log-maxbackup': { type: 'string', default: '0' },
      'audit-log-maxage': { type: 'string', default: '0' },
      'audit-log-compress': { type: 'boolean', default: false },
      'audit-log-format': { type: 'string', default: 'json' },
      'audit-log-mode': { type: 'string', default: 'blocking' },
      'audit-log-batch-buffer-size': { type: 'string', default: '10000' },
      'service-account-signing-key-file': { type: 'string' },
      'service-account-key-file': { type: 'string', multiple: true },
      'service-account-issuer': { type: 'string', multiple: true },
      'api-audiences': { type: 'string' },
      'service-account-max-token-expiration': { type: 'string', default: '0s' },
      'service-account-jwks-uri': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
}

export async function serve(argv: string[], commandsUsage: string): Promise<void> {
  const { values } = parseServeArgs(argv);
  if (values.help) {
    process.stdout.write(commandsUsage + SERVE_USAGE);
    return;
  }
  // Every file a flag names is checked before anything starts: a missing one names its flag.
  const unreadable = unreadableFlagFile(FILE_FLAGS.map((f) => [f, values[f]]));
  if (unreadable) fail(unreadable);
  const logging = loggerFromFlags(values);
  if ('invalid' in logging) fail(logging.invalid);
  const { logger } = logging;
  const featureGates = featureGatesFromFlags(values['emulated-version'], values['feature-gates'], logger);
  const dynamicFeatureNames = dynamicFeaturesFromFlags(featureGates, values['dynamic-features']);
  let unavailableRetentionMs: number | undefined;
  if (values['unavailable-feature-retention'] !== undefined) {
    const d = parseGoDuration(values['unavailable-feature-retention']);
    if ('error' in d)
      fail(`invalid argument ${JSON.stringify(values['unavailable-feature-retention'])} for "--unavailable-feature-retention" flag: ${d.error}`);
    unavailableRetentionMs = Number(d.ns / 1_000_000n);
  }
  const globalCatalogNamespace = values['global-catalog-namespace'];
  if (globalCatalogNamespace !== undefined) {
    const problems = isDNS1123Label(globalCatalogNamespace);
    if (problems.length) fail(`invalid argument ${JSON.stringify(globalCatalogNamespace)} for "--global-catalog-namespace" flag: ${problems.join('; ')}`);
  }
  const optional = optionalModulesFromFlag(values.modules ?? [], {
    ...(globalCatalogNamespace ? { globalCatalogNamespace } : {}),
    serviceClusterIPRange: values['service-cluster-ip-range'],
    serviceNodePortRange: values['service-node-port-range'],
  });
  if ('error' in optional) fail(optional.error);
  const dataDir = resolve(values['data-dir']);
  // kube-apiserver's flag, kept for SQLite too: kplane's SQLite is compacted as that flag compacts etcd.
  const compaction = parseGoDuration(values['etcd-compaction-interval']);
  if ('error' in compaction)
    fail(`invalid argument ${JSON.stringify(values['etcd-compaction-interval'])} for "--etcd-compaction-interval" flag: ${compaction.error}`);
  if (compaction.ns < 0n) fail('--etcd-compaction-interval can not be negative value');
  const compactIntervalMs = Number(compaction.ns) / 1e6;
  let storage;
  if (values.storage === 'sqlite') storage = sqlite({ dir: dataDir, compactIntervalMs });
  else if (values.storage === 'etcd') {
    const servers = (values['etcd-servers'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (!servers.length) fail('--storage etcd needs --etcd-servers, e.g. --etcd-servers http://127.0.0.1:2379');
    storage = etcd({ endpoints: servers, compactIntervalMs, ...(values['etcd-prefix'] ? { prefix: values['etcd-prefix'] } : {}) });
  } else fail(`unknown --storage "${values.storage}": use sqlite or etcd`);
  const port = Number(values['secure-port']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--secure-port must be a port number, got "${values['secure-port']}"`);
  const tokens = values['token-auth-file'] ? (await loadTokenFile(values['token-auth-file'])).tokens : undefined;
  let clientCA: string | undefined;
  if (values['client-ca-file']) {
    try {
      clientCA = loadClientCA(await readFile(values['client-ca-file'], 'utf8'), values['client-ca-file']);
    } catch (e) {
      fail((e as Error).message);
    }
  }
  let requestHeader: RequestHeaderConfig | undefined;
  if (values['requestheader-client-ca-file']) {
    try {
      const list = (name: string): readonly string[] | undefined => {
        const v = values[name as keyof typeof values] as string[] | undefined;
        return v === undefined
          ? undefined
          : v
              .flatMap((x) => x.split(','))
              .map((x) => x.trim())
              .filter(Boolean);
      };
      const allowedNames = list('requestheader-allowed-names');
      const usernameHeaders = list('requestheader-username-headers');
      const groupHeaders = list('requestheader-group-headers');
      const uidHeaders = list('requestheader-uid-headers');
      const extraHeaderPrefixes = list('requestheader-extra-headers-prefix');
      requestHeader = {
        clientCA: loadClientCA(await readFile(values['requestheader-client-ca-file'], 'utf8'), values['requestheader-client-ca-file']),
        ...(allowedNames ? { allowedNames } : {}),
        ...(usernameHeaders ? { usernameHeaders } : {}),
        ...(groupHeaders ? { groupHeaders } : {}),
        ...(uidHeaders ? { uidHeaders } : {}),
        ...(extraHeaderPrefixes ? { extraHeaderPrefixes } : {}),
      };
    } catch (e) {
      fail((e as Error).message);
    }
  }
  let authenticationConfig: AuthenticationConfiguration | undefined;
  if (values['authentication-config']) {
    try {
      authenticationConfig = await loadAuthenticationConfiguration(values['authentication-config']);
    } catch (e) {
      fail((e as Error).message);
    }
  }
  // pflag's StringSlice, as kube-apiserver's flag; checked again (and named) by createControlPlane.
  const authorizationModes = (values['authorization-mode'] ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean) as AuthorizationMode[];
  if (authorizationModes.length === 0) fail('--authorization-mode: at least one authorization-mode must be passed');
  for (const m of authorizationModes)
    if (!['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Webhook'].includes(m))
      fail(`--authorization-mode: authorization-mode ${JSON.stringify(m)} is not a valid mode`);
  // BuiltInAuthorizationOptions.Validate's texts; the file itself is read (and its errors named) below.
  const webhookConfigFile = values['authorization-webhook-config-file'];
  if (authorizationModes.includes('Webhook') && !webhookConfigFile)
    fail("--authorization-mode: authorization-mode Webhook's authorization config file not passed");
  if (webhookConfigFile && !authorizationModes.includes('Webhook')) fail('cannot specify --authorization-webhook-config-file without mode Webhook');
  const webhookVersion = values['authorization-webhook-version'];
  const isWebhookVersion = (v: string): v is 'v1' | 'v1beta1' => v === 'v1' || v === 'v1beta1';
  if (!isWebhookVersion(webhookVersion))
    fail(`--authorization-webhook-version: unsupported webhook authorizer version ${JSON.stringify(webhookVersion)}, supported versions are "v1", "v1beta1"`);
  const ttlMs = (flag: 'authorization-webhook-cache-authorized-ttl' | 'authorization-webhook-cache-unauthorized-ttl'): number => {
    const d = parseGoDuration(values[flag]);
    if ('error' in d) fail(`invalid argument ${JSON.stringify(values[flag])} for "--${flag}" flag: ${d.error}`);
    // A negative TTL caches nothing, as a zero one (the entry is expired when added).
    return Math.max(0, Number(d.ns) / 1e6);
  };
  // The file is read once, here: a broken one is a usage error naming the file and the field, and
  // the control plane gets the checked connection rather than reading the file again.
  const webhookConnection = (file: string): WebhookConnection => {
    try {
      return loadWebhookKubeconfig(file);
    } catch (e) {
      return fail((e as Error).message);
    }
  };
  const authorizationWebhook = webhookConfigFile
    ? {
        version: webhookVersion,
        authorizedTTLMs: ttlMs('authorization-webhook-cache-authorized-ttl'),
        unauthorizedTTLMs: ttlMs('authorization-webhook-cache-unauthorized-ttl'),
        // Last: a bad TTL flag is reported before a bad file, as when the file was checked after.
        connection: webhookConnection(webhookConfigFile),
      }
    : undefined;
  const maxBytes = values['max-request-bytes'] ? Number(values['max-request-bytes']) : undefined;
  if (maxBytes !== undefined && !(maxBytes > 0)) fail('--max-request-bytes must be a positive number');
  const inflight = (flag: 'max-requests-inflight' | 'max-mutating-requests-inflight'): number => {
    const text = values[flag];
    if (!/^[+-]?[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text)))
      fail(`invalid argument ${JSON.stringify(text)} for "--${flag}" flag: not a whole number`);
    const n = Number(text);
    if (n < 0) fail(`--${flag} can not be negative value`);
    return n;
  };
  const maxRequestsInFlight = inflight('max-requests-inflight');
  const maxMutatingRequestsInFlight = inflight('max-mutating-requests-inflight');
  // pflag's StringSlice: comma-separated, spaces around names kept out.
  const cipherSuites = (values['tls-cipher-suites'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  try {
    checkTLSCipherSuites(cipherSuites);
    checkTLSVersion(values['tls-min-version']);
  } catch (e) {
    fail((e as Error).message);
  }
  const maxStreamsText = values['http2-max-streams-per-connection'];
  if (!/^[+-]?[0-9]+$/.test(maxStreamsText) || !Number.isSafeInteger(Number(maxStreamsText)))
    fail(`invalid argument ${JSON.stringify(maxStreamsText)} for "--http2-max-streams-per-connection" flag: not a whole number`);
  const http2MaxStreamsPerConnection = Math.max(0, Number(maxStreamsText));
  const requestTimeout = parseGoDuration(values['request-timeout']);
  if ('error' in requestTimeout) fail(`invalid argument ${JSON.stringify(values['request-timeout'])} for "--request-timeout" flag: ${requestTimeout.error}`);
  if (requestTimeout.ns < 0n) fail('--request-timeout can not be negative value');
  const checkInterval = parseGoDuration(values['watch-cache-consistency-check-interval']);
  if ('error' in checkInterval)
    fail(
      `invalid argument ${JSON.stringify(values['watch-cache-consistency-check-interval'])} for "--watch-cache-consistency-check-interval" flag: ${checkInterval.error}`,
    );
  if (checkInterval.ns < 0n) fail('--watch-cache-consistency-check-interval can not be negative value');
  if (values['encryption-provider-config-automatic-reload'] && !values['encryption-provider-config'])
    fail('--encryption-provider-config-automatic-reload must be set with --encryption-provider-config');
  const auditInt = (flag: 'audit-log-maxsize' | 'audit-log-maxbackup' | 'audit-log-maxage' | 'audit-log-batch-buffer-size'): number => {
    const text = values[flag];
    if (!/^[+-]?[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text)))
      fail(`invalid argument ${JSON.stringify(text)} for "--${flag}" flag: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
    return Number(text);
  };
  const auditLogPath = values['audit-log-path'];
  const audit = {
    ...(values['audit-policy-file'] ? { policyFile: values['audit-policy-file'] } : {}),
    ...(auditLogPath
      ? {
          log: {
            path: auditLogPath,
            maxSizeMB: auditInt('audit-log-maxsize'),
            maxBackups: auditInt('audit-log-maxbackup'),
            maxAgeDays: auditInt('audit-log-maxage'),
            compress: values['audit-log-compress'],
            format: values['audit-log-format'] as AuditLogFormat,
            mode: values['audit-log-mode'] as AuditLogMode,
            batchBufferSize: auditInt('audit-log-batch-buffer-size'),
          },
        }
      : {}),
  };
  const maxTokenExpiration = parseGoDuration(values['service-account-max-token-expiration']);
  if ('error' in maxTokenExpiration)
    fail(
      `invalid argument ${JSON.stringify(values['service-account-max-token-expiration'])} for "--service-account-max-token-expiration" flag: ${maxTokenExpiration.error}`,
    );
  // pflag's StringSlice: each value comma-separated too.
  const slice = (v: string | string[] | undefined): string[] =>
    (Array.isArray(v) ? v : v === undefined ? [] : [v])
      .flatMap((x) => x.split(','))
      .map((x) => x.trim())
      .filter(Boolean);
  // API aggregation's flags (the apiregistration module): checked here, before anything starts.
  let aggregation: AggregationOptions | undefined;
  try {
    aggregation = {
      serviceAddresses: (values['aggregator-service-address'] ?? []).map((v) => parseServiceAddress(v)),
      ...(values['enable-aggregator-routing'] ? { enableAggregatorRouting: true } : {}),
      ...(values['proxy-client-cert-file'] !== undefined ? { proxyClientCertFile: values['proxy-client-cert-file'] } : {}),
      ...(values['proxy-client-key-file'] !== undefined ? { proxyClientKeyFile: values['proxy-client-key-file'] } : {}),
    };
  } catch (e) {
    fail((e as Error).message);
  }
  const cp = await createControlPlane({
    storage,
    dataDir,
    ...(aggregation ? { aggregation } : {}),
    ...(requestHeader ? { requestHeader } : {}),
    ...(optional.modules.length ? { apis: [...defaultModules(), ...optional.modules] } : {}),
    host: values['bind-address'],
    port,
    ...(tokens ? { tokens } : {}),
    ...(clientCA ? { clientCA } : {}),
    ...(authenticationConfig ? { authenticationConfig } : {}),
    bootstrapTokenAuth: values['enable-bootstrap-token-auth'] === true,
    anonymousAuth: values['anonymous-auth'] === 'true',
    authorizationModes,
    ...(authorizationWebhook ? { authorizationWebhook } : {}),
    ...(maxBytes ? { maxRequestBodyBytes: maxBytes } : {}),
    maxRequestsInFlight,
    maxMutatingRequestsInFlight,
    watchCache: values['watch-cache'] !== 'false',
    ...(cipherSuites.length ? { tlsCipherSuites: cipherSuites } : {}),
    tlsMinVersion: values['tls-min-version'],
    http2MaxStreamsPerConnection,
    watchCacheConsistencyCheckIntervalMs: Number(checkInterval.ns) / 1e6,
    requestTimeout: Number(requestTimeout.ns) / 1e6,
    responseCompression: values['response-compression'] !== 'false',
    featureGates,
    ...(dynamicFeatureNames.length ? { dynamicFeatures: dynamicFeatureNames } : {}),
    ...(unavailableRetentionMs !== undefined ? { featureFlow: { unavailableRetentionMs } } : {}),
    // DELETE adds GC finalizers either way: the collector may run in a separate controller-manager.
    garbageCollection: true,
    ...(values.controllers !== 'false' ? { controllers: defaultControllers() } : {}),
    useServiceAccountCredentials: values['use-service-account-credentials'] !== 'false',
    ...(values['encryption-provider-config'] ? { encryptionProviderConfig: values['encryption-provider-config'] } : {}),
    ...(values['encryption-provider-config-automatic-reload'] ? { encryptionProviderConfigAutomaticReload: true } : {}),
    ...(audit.policyFile || audit.log ? { audit } : {}),
    serviceAccounts: {
      ...(values['service-account-signing-key-file'] ? { signingKeyFile: values['service-account-signing-key-file'] } : {}),
      keyFiles: values['service-account-key-file'] ?? [],
      issuers: values['service-account-issuer'] ?? [],
      apiAudiences: slice(values['api-audiences']),
      maxTokenExpirationSeconds: Number(maxTokenExpiration.ns / 1_000_000_000n),
      ...(values['service-account-jwks-uri'] ? { jwksURI: values['service-account-jwks-uri'] } : {}),
    },
    log: logger,
  });
  await cp.start();
  process.stdout.write(`kplane is serving on ${cp.url} (storage: ${values.storage}, data: ${dataDir})\n`);
  process.stdout.write(`To use it: export KUBECONFIG=${cp.kubeconfigPath} && kubectl get namespaces\n`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info('Received signal, shutting down', 'signal', sig);
    cp.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        logger.error(e, 'Shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

function fail(msg: string): never {
  process.stderr.write(`kplane: ${msg}\n`);
  process.exit(2);
}
