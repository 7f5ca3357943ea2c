// API aggregation as the control plane wires it: when the apiRegistration() module serves
// APIServices, an Aggregator (server/aggregator/) routes their group/versions, the front-proxy PKI
// gives it a client certificate (or --proxy-client-cert-file / --proxy-client-key-file), and the
// autoregister controller keeps a local APIService for each group/version served here.
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../client/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import { APIREGISTRATION_GROUP, APIREGISTRATION_VERSION } from '../registry/apiregistration/apiservices/types.js';
import { Aggregator } from '../server/aggregator/aggregator.js';
import { autoRegister, type AutoRegister } from '../server/aggregator/autoregister.js';
import { parseServiceAddress, staticServiceResolver, type ServiceAddress } from '../server/aggregator/service-resolver.js';
import { ensureFrontProxyPki, type FrontProxyPki } from '../server/certs.js';

export interface AggregationOptions {
  /**
   * Where `spec.service` references go (kplane serves no Services): `<namespace>/<name>[:<port>]=<host>:<port>`
   * strings (`--aggregator-service-address`) or parsed entries. Loopback hosts only.
   */
  readonly serviceAddresses?: readonly (string | ServiceAddress)[];
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
  deps: { client: KubeClient; metrics: Registry; log: (msg: string) => void },
): Promise<Aggregation | undefined> {
  if (!registry.lookup(APIREGISTRATION_GROUP, APIREGISTRATION_VERSION, 'apiservices')) return undefined;
  const addresses = (opts.serviceAddresses ?? []).map((a) => (typeof a === 'string' ? parseServiceAddress(a) : a));
  if ((opts.proxyClientCertFile === undefined) !== (opts.proxyClientKeyFile === undefined))
    throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  const frontProxy = opts.proxyClientCertFile === undefined ? await ensureFrontProxyPki(dataDir) : undefined;
  const proxyClientCert = frontProxy
    ? { certPem: frontProxy.clientCertPem, keyPem: frontProxy.clientKeyPem }
    : { certPem: readFileSync(opts.proxyClientCertFile!, 'utf8'), keyPem: readFileSync(opts.proxyClientKeyFile!, 'utf8') };
  const aggregator = new Aggregator({
    registry,
    client: deps.client,
    resolver: staticServiceResolver(addresses),
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
