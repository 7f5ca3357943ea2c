// The control plane's one service resolver (kube-apiserver's buildServiceResolver): the static
// `--aggregator-service-address` table, then, when the cloud module serves Services, the Service's
// cluster IP, or with --enable-aggregator-routing an address of its Endpoints. Services and
// Endpoints are read from memory (list+watch of their stores), never from storage per call.
import {
  serviceResolver,
  parseServiceAddress,
  type EndpointsLike,
  type ServiceAddress,
  type ServiceLike,
  type ServiceResolver,
} from '../admission/webhook/service-resolver.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import { WatchedObjects } from '../registry/watched-objects.js';

export interface ServiceResolution {
  readonly resolver: ServiceResolver;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function setupServiceResolution(
  registry: ApiRegistry,
  opts: { readonly serviceAddresses?: readonly (string | ServiceAddress)[]; readonly enableAggregatorRouting?: boolean },
  log?: (msg: string) => void,
): ServiceResolution {
  const addresses = (opts.serviceAddresses ?? []).map((a) => (typeof a === 'string' ? parseServiceAddress(a) : a));
  const store = (plural: string) => () => registry.lookup('', 'v1', plural)?.store;
  const servesServices = registry.lookup('', 'v1', 'services') !== undefined;
  const services = servesServices ? new WatchedObjects<KubeObject & ServiceLike>(store('services'), 'service resolver: services', () => {}, log) : undefined;
  const endpoints =
    servesServices && opts.enableAggregatorRouting && registry.lookup('', 'v1', 'endpoints')
      ? new WatchedObjects<KubeObject & EndpointsLike>(store('endpoints'), 'service resolver: endpoints', () => {}, log)
      : undefined;
  const resolver = serviceResolver(
    addresses,
    services
      ? {
          service: (ns, name) => services.items.get(`${ns}/${name}`),
          ...(endpoints ? { endpoints: (ns: string, name: string) => endpoints.items.get(`${ns}/${name}`) } : {}),
        }
      : undefined,
    opts.enableAggregatorRouting ?? false,
  );
  return {
    resolver,
    async start() {
      await Promise.all([services?.start(), endpoints?.start()]);
    },
    async close() {
      await Promise.all([services?.close(), endpoints?.close()]);
    },
  };
}
