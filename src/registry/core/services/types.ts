// The parts of core/v1 Service the registry reads and writes (the JSON shape; absent = Go's zero).
import type { KubeObject } from '../../../apimachinery/types.js';

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port?: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface ServiceSpec {
  type?: string;
  ports?: ServicePort[];
  selector?: Record<string, string>;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  externalIPs?: string[];
  externalName?: string;
  externalTrafficPolicy?: string;
  internalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  loadBalancerIP?: string;
  loadBalancerSourceRanges?: string[];
  loadBalancerClass?: string;
  allocateLoadBalancerNodePorts?: boolean;
  publishNotReadyAddresses?: boolean;
  trafficDistribution?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ipMode?: string;
  ports?: { port?: number; protocol?: string; error?: string }[];
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
  conditions?: unknown[];
}

export type Service = KubeObject & { spec?: ServiceSpec; status?: ServiceStatus };

export const spec = (s: Service): ServiceSpec => (s.spec ??= {});

/** needsClusterIP: every type but ExternalName. */
export const needsClusterIP = (s: Service): boolean => s.spec?.type !== 'ExternalName';
/** needsNodePort: NodePort and LoadBalancer. */
export const needsNodePort = (s: Service): boolean => s.spec?.type === 'NodePort' || s.spec?.type === 'LoadBalancer';
/** apiservice.NeedsHealthCheck / needsHCNodePort: LoadBalancer with externalTrafficPolicy Local. */
export const needsHealthCheck = (s: Service): boolean => s.spec?.type === 'LoadBalancer' && s.spec?.externalTrafficPolicy === 'Local';
/** ExternallyAccessible: NodePort, LoadBalancer, or ClusterIP with externalIPs. */
export const externallyAccessible = (s: Service): boolean =>
  s.spec?.type === 'LoadBalancer' || s.spec?.type === 'NodePort' || (s.spec?.type === 'ClusterIP' && (s.spec?.externalIPs?.length ?? 0) > 0);
/** Headless: clusterIP None. */
export const isHeadless = (s: Service): boolean => s.spec?.clusterIP === 'None';

/** shouldAllocateNodePorts: NodePort always; LoadBalancer unless allocateLoadBalancerNodePorts is false. */
export const shouldAllocateNodePorts = (s: Service): boolean =>
  s.spec?.type === 'NodePort' || (s.spec?.type === 'LoadBalancer' && s.spec.allocateLoadBalancerNodePorts !== false);

/** The nodePorts a Service holds (non-zero), in port order. */
export function serviceNodePorts(s: Service): number[] {
  return (s.spec?.ports ?? []).map((p) => p.nodePort).filter((n): n is number => typeof n === 'number' && n !== 0);
}

export const sameList = (a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean =>
  (a?.length ?? 0) === (b?.length ?? 0) && (a ?? []).every((v, i) => v === b?.[i]);
