// Which endpoints a Service port sends to, as kube-proxy decides it (pkg/proxy/topology.go
// CategorizeEndpoints; topology hints are not modelled): ready endpoints, falling back to
// serving-and-terminating ones when none is ready; node-local ones only for a Local traffic policy.
import type { KubeObject } from '../../apimachinery/types.js';
import type { Service, ServicePort } from '../../registry/core/services/types.js';

export type { Service, ServicePort };

/** discovery.k8s.io/v1 EndpointSlice, the parts the proxy reads. */
export type EndpointSlice = KubeObject & {
  addressType?: string;
  endpoints?: {
    addresses?: string[];
    conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
    nodeName?: string;
  }[];
  ports?: { name?: string | null; port?: number | null; protocol?: string | null }[] | null;
};

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** One backend of one Service port (pkg/proxy's BaseEndpointInfo). */
export interface Endpoint {
  readonly ip: string;
  readonly port: number;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly local: boolean;
}

export const endpointString = (e: Endpoint): string => `${e.ip}:${e.port}`;

/**
 * The endpoints of the Service port named `portName` (slice ports match by name, and protocol),
 * de-duplicated by ip:port as the EndpointsMap is. Unset conditions read as upstream's: ready
 * nil = true, serving nil = true, terminating nil = false
 * (kube-proxy's endpointslicecache.go).
 */
export function endpointsFor(slices: readonly EndpointSlice[], port: ServicePort, nodeName: string): Endpoint[] {
  const seen = new Map<string, Endpoint>();
  const name = port.name ?? '';
  const protocol = port.protocol ?? 'TCP';
  for (const s of slices) {
    if (s.addressType !== undefined && s.addressType !== 'IPv4') continue;
    const sp = (s.ports ?? []).find((p) => (p.name ?? '') === name && (p.protocol ?? 'TCP') === protocol);
    if (!sp?.port) continue;
    for (const e of s.endpoints ?? []) {
      const ip = e.addresses?.[0];
      if (!ip) continue;
      const ready = e.conditions?.ready ?? true;
      const ep: Endpoint = {
        ip,
        port: sp.port,
        ready,
        serving: e.conditions?.serving ?? true,
        terminating: e.conditions?.terminating ?? false,
        local: e.nodeName === nodeName,
      };
      const key = endpointString(ep);
      if (!seen.has(key)) seen.set(key, ep);
    }
  }
  return [...seen.values()];
}

const externallyAccessible = (s: Service): boolean => s.spec?.type === 'LoadBalancer' || s.spec?.type === 'NodePort' || (s.spec?.externalIPs?.length ?? 0) > 0;

/** ServicePort.ExternalPolicyLocal: externally accessible with externalTrafficPolicy Local. */
export const externalPolicyLocal = (s: Service): boolean => externallyAccessible(s) && s.spec?.externalTrafficPolicy === 'Local';
/** ServicePort.InternalPolicyLocal. */
export const internalPolicyLocal = (s: Service): boolean => s.spec?.internalTrafficPolicy === 'Local';

export interface Categorized {
  /** For traffic under a Cluster policy (empty when no policy of the Service is Cluster). */
  clusterEndpoints: Endpoint[];
  /** For traffic under a Local policy (empty when no policy of the Service is Local). */
  localEndpoints: Endpoint[];
  /** Some ready or serving-terminating endpoint exists anywhere. */
  hasAnyEndpoints: boolean;
}

/** CategorizeEndpoints, without topology hints. */
export function categorizeEndpoints(endpoints: readonly Endpoint[], svc: Service): Categorized {
  const usesCluster = !internalPolicyLocal(svc) || (externallyAccessible(svc) && !externalPolicyLocal(svc));
  const usesLocal = internalPolicyLocal(svc) || externalPolicyLocal(svc);
  let clusterEndpoints: Endpoint[] = [];
  let localEndpoints: Endpoint[] = [];
  let hasAnyEndpoints = false;
  if (usesCluster) {
    clusterEndpoints = endpoints.filter((e) => e.ready);
    // No ready endpoint anywhere: the serving ones that are terminating still take traffic.
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter((e) => e.serving && e.terminating);
    hasAnyEndpoints = clusterEndpoints.length > 0;
  }
  if (usesLocal) {
    let localReady = false;
    let localServingTerminating = false;
    for (const e of endpoints) {
      if (e.ready) {
        hasAnyEndpoints = true;
        if (e.local) localReady = true;
      } else if (e.serving && e.terminating) {
        hasAnyEndpoints = true;
        if (e.local) localServingTerminating = true;
      }
    }
    if (localReady) localEndpoints = endpoints.filter((e) => e.local && e.ready);
    else if (localServingTerminating) localEndpoints = endpoints.filter((e) => e.local && e.serving && e.terminating);
  }
  return { clusterEndpoints, localEndpoints, hasAnyEndpoints };
}

/** The count healthCheckNodePort reports (EndpointsMap.LocalReadyEndpoints): local ready ip:ports over all ports. */
export function localReadyEndpoints(perPort: readonly (readonly Endpoint[])[]): number {
  const set = new Set<string>();
  for (const eps of perPort) for (const e of eps) if (e.local && e.ready) set.add(endpointString(e));
  return set.size;
}
