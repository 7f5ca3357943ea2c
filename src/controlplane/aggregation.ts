// API aggregation as the control plane wires it: when the apiRegistration() module serves
// APIServices, an Aggregator (server/aggregator/) routes their group/versions, the front-proxy PKI
// gives it a client certificate (or --proxy-client-cert-file / --proxy-client-key-file), and the
// autoregister controller keeps a local APIService for each group/version served here.
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { RequestHeaderConfig } from '../auth/authn/request-header.js';
import { isStatusError, type KubeClient } from '../client/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import { APIREGISTRATION_GROUP, APIREGISTRATION_VERSION } from '../registry/apiregistration/apiservices/types.js';
import { Aggregator } from '../server/aggregator/aggregator.js';
import { autoRegister, type AutoRegister } from '../server/aggregator/autoregister.js';
import type { ServiceAddress, ServiceResolver } from '../admission/webhook/service-resolver.js';
import { ensureFrontProxyPki, type FrontProxyPki } from '../server/certs.js';

export interface AggregationOptions {
  /**
   * Where `service` references (APIServices, webhooks, conversion webhooks) go before any Service is
   * looked at (kplane serves Services only with the cloud module): `<namespace>/<name>[:<port>]=<host>:<port>`
   * strings (`--aggregator-service-address`) or parsed entries. Loopback hosts only.
   */
  readonly serviceAddresses?: readonly (string | ServiceAddress)[];
  /**
   * kube-apiserver's --enable-aggregator-routing: with Services served (the cloud module), a
   * reference goes to an address of the Service's Endpoints rather than its cluster IP.
   */
  readonly enableAggregatorRouting?: boolean;
  /** kube-apiserver's --proxy-client-cert-file / --proxy-client-key-file; default the front-proxy client made in `<dataDir>/pki/`. */
  readonly proxyClientCertFile?: string;
  readonly proxyClientKeyFile?: string;
  /** How often each APIService's backend is checked (default 30,000 ms, upstream's resync; failures sooner). */
  readonly availabilityCheckIntervalMs?: number;
}

export interface Aggregation {
  readonly aggregator: Aggregator;
  /** The front-proxy PKI made in the data dir (undefined with --proxy-client-cert-file). */
  readonly frontProxy: FrontProxyPki | undefined;
  start(client: KubeClient): Promise<void>;
  stop(): Promise<void>;
}

/** Undefined when the control plane does not serve apiregistration.k8s.io/v1 apiservices. */
export async function setupAggregation(
  registry: ApiRegistry,
  dataDir: string,
  opts: AggregationOptions,
  deps: { client: KubeClient; metrics: Registry; log: (msg: string) => void; resolver: ServiceResolver },
): Promise<Aggregation | undefined> {
  if (!registry.lookup(APIREGISTRATION_GROUP, APIREGISTRATION_VERSION, 'apiservices')) return undefined;
  if ((opts.proxyClientCertFile === undefined) !== (opts.proxyClientKeyFile === undefined))
    throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  const frontProxy = opts.proxyClientCertFile === undefined ? await ensureFrontProxyPki(dataDir) : undefined;
  const proxyClientCert = frontProxy
    ? { certPem: frontProxy.clientCertPem, keyPem: frontProxy.clientKeyPem }
    : { certPem: readFileSync(opts.proxyClientCertFile!, 'utf8'), keyPem: readFileSync(opts.proxyClientKeyFile!, 'utf8') };
  const aggregator = new Aggregator({
    registry,
    client: deps.client,
    resolver: deps.resolver,
    proxyClientCert,
    metrics: deps.metrics,
    log: deps.log,
    ...(opts.availabilityCheckIntervalMs !== undefined ? { availabilityCheckIntervalMs: opts.availabilityCheckIntervalMs } : {}),
  });
  let auto: AutoRegister | undefined;
  return {
    aggregator,
    frontProxy,
    async start(client) {
      await aggregator.start();
      auto = autoRegister(client, registry, (g, v) => aggregator.isRemote(g, v), deps.log);
      await auto.start();
    },
    async stop() {
      await auto?.stop();
      await aggregator.close();
    },
  };
}

/** The ConfigMap kube-apiserver publishes for extension API servers' delegated authentication. */
export const EXTENSION_APISERVER_AUTHENTICATION = { namespace: 'kube-system', name: 'extension-apiserver-authentication' } as const;

/**
 * What kube-apiserver's ClusterAuthenticationInfo controller writes: the client CA, and the
 * requestheader settings (the lists as JSON arrays) when a front proxy is configured.
 */
export function extensionApiserverAuthenticationData(clientCA: string, requestHeader: Required<RequestHeaderConfig> | undefined): Record<string, string> {
  const data: Record<string, string> = { 'client-ca-file': clientCA };
  if (requestHeader) {
    data['requestheader-allowed-names'] = JSON.stringify(requestHeader.allowedNames);
    data['requestheader-client-ca-file'] = requestHeader.clientCA;
    data['requestheader-extra-headers-prefix'] = JSON.stringify(requestHeader.extraHeaderPrefixes);
    data['requestheader-group-headers'] = JSON.stringify(requestHeader.groupHeaders);
    data['requestheader-uid-headers'] = JSON.stringify(requestHeader.uidHeaders);
    data['requestheader-username-headers'] = JSON.stringify(requestHeader.usernameHeaders);
  }
  return data;
}

/** Creates or updates kube-system/extension-apiserver-authentication (where core/v1 configmaps are served). */
export async function publishExtensionApiserverAuthentication(client: KubeClient, data: Record<string, string>): Promise<void> {
  const gvr = { group: '', version: 'v1', resource: 'configmaps' };
  const { namespace, name } = EXTENSION_APISERVER_AUTHENTICATION;
  try {
    const cur = await client.get(gvr, namespace, name);
    if (JSON.stringify((cur as { data?: unknown }).data ?? {}) === JSON.stringify(data)) return;
    await client.update(gvr, namespace, { ...cur, data });
  } catch (e) {
    if (!(isStatusError(e) && e.code === 404)) throw e;
    await client.create(gvr, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
  }
}
