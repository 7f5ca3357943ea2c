// Where an APIService's `spec.service` goes. kplane serves no Services by default, so a Service
// reference resolves through a static table (`--aggregator-service-address`), the role upstream's
// service resolvers (cluster IP, or endpoints with --enable-aggregator-routing) play. Only loopback
// addresses may be targets: the aggregator sends its proxy client certificate there.
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

/** Resolves `namespace/name:port` to where the backend listens; undefined when no Service is known. */
export interface ServiceResolver {
  resolve(namespace: string, name: string, port: number): ServiceTarget | undefined;
}

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

/** The table the flag builds; the last entry for a Service wins. */
export function staticServiceResolver(addresses: readonly ServiceAddress[]): ServiceResolver {
  const table = new Map<string, ServiceTarget>();
  for (const a of addresses) table.set(`${a.namespace}/${a.name}:${a.port}`, { host: a.host, port: a.targetPort });
  return { resolve: (namespace, name, port) => table.get(`${namespace}/${name}:${port}`) };
}
