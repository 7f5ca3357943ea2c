// io.k8s.api.core.v1.Service: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions, OpenAPISchema } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import {
  CORE,
  META,
  apiVersionField,
  arrayOf,
  bool,
  int32,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  stringMap,
  struct,
} from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** Definitions several core kinds share (IntOrString, metav1.Condition). */
export const sharedCoreDefinitions: Definitions = {
  [INT_OR_STRING]: {
    type: 'string',
    format: 'int-or-string',
    description: 'IntOrString holds an int32 or a string (a port number or a port name, a count or a percentage).',
  },
  [META + 'Condition']: struct(
    'Condition is one aspect of the current state of an object.',
    {
      lastTransitionTime: ref(META + 'Time', 'When the condition last changed from one status to another.'),
      message: str('A human readable message about the transition. May be empty.'),
      observedGeneration: { type: 'integer', format: 'int64', description: 'The .metadata.generation the condition was set from.' },
      reason: str('A programmatic CamelCase identifier of the reason for the last transition.'),
      status: str('True, False or Unknown.'),
      type: str('The type of the condition, in CamelCase or as foo.example.com/CamelCase.'),
    },
    { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
  ),
};

const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
const mapKeys = (keys: string[], mergeKey: string): Partial<OpenAPISchema> => ({
  'x-kubernetes-list-map-keys': keys,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': mergeKey,
  'x-kubernetes-patch-strategy': 'merge',
});

export const serviceDefinitions: Definitions = {
  ...sharedCoreDefinitions,
  [CORE + 'Service']: kind(
    { group: '', kind: 'Service', version: 'v1' },
    'Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(CORE + 'ServiceSpec', 'The behavior of the service: type, ports, selector, addresses.'),
      status: ref(CORE + 'ServiceStatus', 'The most recently observed status of the service (its load balancer). Written by controllers.'),
    },
  ),

  [CORE + 'ServiceSpec']: struct('ServiceSpec describes the attributes that a user creates on a service.', {
    allocateLoadBalancerNodePorts: bool(
      'Whether NodePorts are allocated for a Service of type LoadBalancer (default true). May only be set for that type; existing NodePorts are not released when it turns false.',
    ),
    clusterIP: str(
      'The IP address of the service, allocated from --service-cluster-ip-range unless given; "None" makes a headless service. Cannot change once set except to or from type ExternalName.',
    ),
    clusterIPs: stringList('The IP addresses of the service, clusterIP first. Cannot change once set except to or from type ExternalName.', atomic),
    externalIPs: stringList('IP addresses for which nodes also accept traffic for this service. Not managed by Kubernetes.', atomic),
    externalName: str('The DNS name (a CNAME record) a service of type ExternalName returns. Must be a lowercase RFC-1123 hostname.'),
    externalTrafficPolicy: str(
      'How traffic from outside the cluster is routed: "Cluster" (to all endpoints) or "Local" (only to endpoints on the receiving node, preserving the client address).',
    ),
    healthCheckNodePort: int32(
      'The NodePort on which kube-proxy answers health checks, for type LoadBalancer with externalTrafficPolicy Local. Allocated unless given; cannot be updated once set.',
    ),
    internalTrafficPolicy: str('How traffic from inside the cluster is routed: "Cluster" or "Local" (only to endpoints on the same node).'),
    ipFamilies: stringList('The IP families (IPv4, IPv6) of the service, in the order of clusterIPs.', atomic),
    ipFamilyPolicy: str('SingleStack, PreferDualStack or RequireDualStack. Defaults to SingleStack.'),
    loadBalancerClass: str(
      'The class of the load balancer implementation; the default controller ignores services that set it. Only for type LoadBalancer; immutable.',
    ),
    loadBalancerIP: str('Deprecated: the IP address asked of the load balancer, where the implementation supports it.'),
    loadBalancerSourceRanges: stringList('CIDRs allowed to reach the load balancer, where the implementation supports it.', atomic),
    ports: arrayOf(refTo(CORE + 'ServicePort'), 'The ports exposed by this service.', mapKeys(['port', 'protocol'], 'port')),
    publishNotReadyAddresses: bool('Endpoints of pods that are not ready are published too.'),
    selector: stringMap('Pods with these labels receive the traffic. Empty or absent: endpoints are managed outside Kubernetes.'),
    sessionAffinity: str('"ClientIP" or "None" (default): whether a client keeps reaching the same endpoint.'),
    sessionAffinityConfig: ref(CORE + 'SessionAffinityConfig', 'The configuration of session affinity.'),
    trafficDistribution: str('A preference for how traffic is distributed to endpoints: "PreferClose".'),
    type: str('How the service is exposed: ClusterIP (default), NodePort, LoadBalancer or ExternalName.'),
  }),

  [CORE + 'ServicePort']: struct(
    "ServicePort contains information on service's port.",
    {
      appProtocol: str('The application protocol of this port, a standard service name or a domain-prefixed name.'),
      name: str('The name of this port; required (a DNS_LABEL, unique) when the service has more than one port.'),
      nodePort: int32('The port on each node on which this service is exposed, for types NodePort and LoadBalancer. Allocated unless given.'),
      port: int32('The port that will be exposed by this service.'),
      protocol: str('TCP (default), UDP or SCTP.'),
      targetPort: ref(INT_OR_STRING, 'The port number or name on the pods targeted by the service. Defaults to `port`.'),
    },
    { required: ['port'] },
  ),

  [CORE + 'SessionAffinityConfig']: struct('SessionAffinityConfig represents the configurations of session affinity.', {
    clientIP: ref(CORE + 'ClientIPConfig', 'The configuration of ClientIP session affinity.'),
  }),

  [CORE + 'ClientIPConfig']: struct('ClientIPConfig represents the configurations of Client IP based session affinity.', {
    timeoutSeconds: int32('The seconds of ClientIP session stickiness: 0 < value <= 86400, default 10800.'),
  }),

  [CORE + 'ServiceStatus']: struct('ServiceStatus represents the current status of a service.', {
    conditions: arrayOf(refTo(META + 'Condition'), 'The current conditions of the service.', mapKeys(['type'], 'type')),
    loadBalancer: ref(CORE + 'LoadBalancerStatus', 'The status of the load balancer, if one is present.'),
  }),

  [CORE + 'LoadBalancerStatus']: struct('LoadBalancerStatus represents the status of a load-balancer.', {
    ingress: arrayOf(refTo(CORE + 'LoadBalancerIngress'), 'The points of entry of the load balancer.', atomic),
  }),

  [CORE + 'LoadBalancerIngress']: struct('LoadBalancerIngress represents the status of a load-balancer ingress point.', {
    hostname: str('Set for load balancers with a DNS name.'),
    ip: str('Set for load balancers with an IP address.'),
    ipMode: str('"VIP" (traffic arrives with the ingress address as destination) or "Proxy" (with the node\'s). Defaults to VIP when ip is set.'),
    ports: arrayOf(refTo(CORE + 'PortStatus'), 'The status of each port of the service.', atomic),
  }),

  [CORE + 'PortStatus']: struct(
    'PortStatus represents the error condition of a service port.',
    {
      error: str('Empty when the port is fine, else a CamelCase reason.'),
      port: int32('The port number of the service port.'),
      protocol: str('TCP, UDP or SCTP.'),
    },
    { required: ['port', 'protocol'] },
  ),

  [CORE + 'ServiceList']: listKind(V1, CORE + 'Service', 'Service', 'The services.'),
};
