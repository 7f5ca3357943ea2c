// Where a `service` reference goes (an APIService's `spec.service`, a webhook's or a conversion
// webhook's `clientConfig.service`): one resolver the aggregator and the webhook clients share, as
// kube-apiserver builds one (buildServiceResolver) for both. Upstream's resolvers read Services:
// the cluster IP and port (proxy.ResolveCluster), or with --enable-aggregator-routing an endpoint
// address (proxy.ResolveEndpoint). kplane serves Services only with the cloud module, so a static
// table (`--aggregator-service-address`) comes first; only loopback addresses may be its targets:
// the aggregator sends its proxy client certificate there.
import { isIP } from 'node:net';

export interface ServiceAddress {
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly host: string;
  readonly targetPort: number;
}

export interface ServiceTarget {
  readonly host: string;
  readonly port: number;
}

/** Why a Service reference cannot be resolved (the aggregator's availability reasons). */
export type ServiceResolutionReason = 'ServiceNotFound' | 'ServicePortError' | 'MissingEndpoints' | 'Unroutable';

/** A failure to resolve, in upstream's words (`service "api" not found`, ...). */
export class ServiceResolutionError extends Error {
  override readonly name = 'ServiceResolutionError';
  constructor(
    readonly reason: ServiceResolutionReason,
    message: string,
  ) {
    super(message);
  }
}

/** Resolves `namespace/name:port` to where the backend listens; throws ServiceResolutionError when it cannot. */
export interface ServiceResolver {
  resolve(namespace: string, name: string, port: number): ServiceTarget;
}

/** The DNS name a Service's serving certificate is verified against (webhookutil's ServerName). */
export const serviceServerName = (namespace: string, name: string): string => `${name}.${namespace}.svc`;

/** 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.split('.')[0] === '127';
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

function portOf(text: string, what: string, flag: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535)
    throw new Error(`${flag}: ${what} ${JSON.stringify(text)} must be a port number from 1 to 65535`);
  return Number(text);
}

/**
 * Parses one `--aggregator-service-address` value: `<namespace>/<name>[:<port>]=<host>:<port>`
 * (the Service port defaults to 443, as `spec.service.port`; an IPv6 host goes in brackets).
 */
export function parseServiceAddress(value: string, flag = '--aggregator-service-address'): ServiceAddress {
  const at = value.indexOf('=');
  if (at < 0) throw new Error(`${flag}: ${JSON.stringify(value)} must be <namespace>/<name>[:<port>]=<host>:<port>`);
  const service = value.slice(0, at);
  const target = value.slice(at + 1);
  const m = /^([^/:]+)\/([^/:]+)(?::([^:]+))?$/.exec(service);
  if (!m) throw new Error(`${flag}: ${JSON.stringify(service)} must be <namespace>/<name>[:<port>]`);
  const port = m[3] !== undefined ? portOf(m[3], 'service port', flag) : 443;
  const t = /^\[([^\]]+)\]:([^:]+)$/.exec(target) ?? /^([^:]+):([^:]+)$/.exec(target);
  if (!t) throw new Error(`${flag}: ${JSON.stringify(target)} must be <host>:<port>`);
  const host = t[1]!;
  if (!isLoopbackHost(host)) throw new Error(`${flag}: ${JSON.stringify(host)} is not a loopback address (127.0.0.0/8, ::1 or localhost)`);
  return { namespace: m[1]!, name: m[2]!, port, host, targetPort: portOf(t[2]!, 'target port', flag) };
}

/** A lister's NotFound: `service "api" not found`. */
const serviceNotFound = (name: string): ServiceResolutionError => new ServiceResolutionError('ServiceNotFound', `service ${JSON.stringify(name)} not found`);

/** The table the flag builds; the last entry for a Service wins. Answers undefined for what it does not hold. */
export function staticServiceTable(addresses: readonly ServiceAddress[]): (namespace: string, name: string, port: number) => ServiceTarget | undefined {
  const table = new Map<string, ServiceTarget>();
  for (const a of addresses) table.set(`${a.namespace}/${a.name}:${a.port}`, { host: a.host, port: a.targetPort });
  return (namespace, name, port) => table.get(`${namespace}/${name}:${port}`);
}

/** The table alone: a Service it does not hold is not found. */
export function staticServiceResolver(addresses: readonly ServiceAddress[]): ServiceResolver {
  const table = staticServiceTable(addresses);
  return {
    resolve(namespace, name, port) {
      const t = table(namespace, name, port);
      if (!t) throw serviceNotFound(name);
      return t;
    },
  };
}

/** The parts of core/v1 Service and Endpoints the resolvers read. */
export interface ServiceLike {
  metadata?: { name?: string };
  spec?: { type?: string; clusterIP?: string; externalName?: string; ports?: { name?: string; port?: number }[] };
}
export interface EndpointsLike {
  subsets?: { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }[];
}

export interface ServiceLookups {
  readonly service: (namespace: string, name: string) => ServiceLike | undefined;
  /** With --enable-aggregator-routing: the Service's Endpoints. */
  readonly endpoints?: (namespace: string, name: string) => EndpointsLike | undefined;
}

const ROUTED_TYPES = new Set(['ClusterIP', 'LoadBalancer', 'NodePort']);

/** proxy.findServicePort. */
function servicePort(svc: ServiceLike, name: string, port: number): { name?: string; port?: number } {
  const p = svc.spec?.ports?.find((sp) => sp.port === port);
  if (!p) throw new ServiceResolutionError('ServicePortError', `no service port ${port} found for service ${JSON.stringify(name)}`);
  return p;
}

/** proxy.ResolveCluster: the Service's cluster IP and the port asked for (an ExternalName's name). */
export function resolveCluster(l: ServiceLookups, namespace: string, name: string, port: number): ServiceTarget {
  const svc = l.service(namespace, name);
  if (!svc) throw serviceNotFound(name);
  const type = svc.spec?.type ?? 'ClusterIP';
  if (type === 'ClusterIP' && svc.spec?.clusterIP === 'None') throw new ServiceResolutionError('Unroutable', 'cannot route to service with ClusterIP "None"');
  if (ROUTED_TYPES.has(type)) {
    const p = servicePort(svc, name, port);
    return { host: svc.spec?.clusterIP ?? '', port: p.port ?? port };
  }
  if (type === 'ExternalName') return { host: svc.spec?.externalName ?? '', port };
  throw new ServiceResolutionError('Unroutable', `unsupported service type ${JSON.stringify(type)}`);
}

/** proxy.ResolveEndpoint: a ready address of the Service's Endpoints, on the port named as the Service's. */
export function resolveEndpoint(l: ServiceLookups, namespace: string, name: string, port: number): ServiceTarget {
  const svc = l.service(namespace, name);
  if (!svc) throw serviceNotFound(name);
  const type = svc.spec?.type ?? 'ClusterIP';
  if (!ROUTED_TYPES.has(type)) throw new ServiceResolutionError('Unroutable', `unsupported service type ${JSON.stringify(type)}`);
  const sp = servicePort(svc, name, port);
  const eps = l.endpoints?.(namespace, name);
  if (!eps) throw new ServiceResolutionError('MissingEndpoints', `endpoints ${JSON.stringify(name)} not found`);
  const subsets = eps.subsets ?? [];
  const none = new ServiceResolutionError('MissingEndpoints', `no endpoints available for service ${JSON.stringify(name)}`);
  if (subsets.length === 0) throw none;
  // A random subset to start from and a random address in it, as upstream spreads the load.
  const seed = Math.floor(Math.random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(seed + i) % subsets.length]!;
    const addrs = ss.addresses ?? [];
    if (addrs.length === 0) continue;
    const p = (ss.ports ?? []).find((x) => (x.name ?? '') === (sp.name ?? ''));
    if (p?.port) return { host: addrs[Math.floor(Math.random() * addrs.length)]!.ip ?? '', port: p.port };
  }
  throw none;
}

/**
 * The control plane's resolver: the static table first, then (when Services are served) the
 * Service's cluster IP, or its endpoints with `endpointRouting`.
 */
export function serviceResolver(addresses: readonly ServiceAddress[], lookups: ServiceLookups | undefined, endpointRouting = false): ServiceResolver {
  const table = staticServiceTable(addresses);
  return {
    resolve(namespace, name, port) {
      const t = table(namespace, name, port);
      if (t) return t;
      if (!lookups) throw serviceNotFound(name);
      return endpointRouting ? resolveEndpoint(lookups, namespace, name, port) : resolveCluster(lookups, namespace, name, port);
    },
  };
}
