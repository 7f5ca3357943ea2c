// Service's strategy (pkg/registry/core/service/strategy.go), defaults (pkg/apis/core/v1
// SetDefaults_Service) and printer columns (printers.go printService), with the REST's
// allocation hooks (./alloc.ts) around the generic store.
import type { KubeObject } from '../../../apimachinery/types.js';
import { nameIsDNS1035Label } from '../../../apimachinery/validation/names.js';
import { keepStoredField, type Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';
import type { ServiceAllocators } from './alloc.js';
import { externallyAccessible, needsClusterIP, needsHealthCheck, needsNodePort, sameList, serviceNodePorts, spec, type Service } from './types.js';
import { validateService, validateServiceStatus, validateServiceUpdate } from './validation.js';

const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;

/** SetDefaults_Service (and SetDefaults_LoadBalancerIngress's ipMode). */
export function defaultService(o: KubeObject): void {
  const svc = o as Service;
  if (svc.spec !== undefined && (typeof svc.spec !== 'object' || svc.spec === null)) return;
  const s = spec(svc);
  if (!s.sessionAffinity) s.sessionAffinity = 'None';
  if (s.sessionAffinity === 'None') delete s.sessionAffinityConfig;
  if (s.sessionAffinity === 'ClientIP' && s.sessionAffinityConfig?.clientIP?.timeoutSeconds === undefined) {
    s.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
  }
  if (!s.type) s.type = 'ClusterIP';
  for (const p of Array.isArray(s.ports) ? s.ports : []) {
    if (!p || typeof p !== 'object') continue;
    if (!p.protocol) p.protocol = 'TCP';
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port ?? 0;
  }
  if (externallyAccessible(svc) && !s.externalTrafficPolicy) s.externalTrafficPolicy = 'Cluster';
  if (s.internalTrafficPolicy === undefined && (s.type === 'NodePort' || s.type === 'LoadBalancer' || s.type === 'ClusterIP')) {
    s.internalTrafficPolicy = 'Cluster';
  }
  if (s.type === 'LoadBalancer') {
    if (s.allocateLoadBalancerNodePorts === undefined) s.allocateLoadBalancerNodePorts = true;
    for (const ing of svc.status?.loadBalancer?.ingress ?? []) if (ing.ip && ing.ipMode === undefined) ing.ipMode = 'VIP';
  }
}

/**
 * dropTypeDependentFields: on a type change, what the old type needed and the new one does not
 * is wiped, when the client did not change it itself (it was allocated or defaulted for them).
 */
export function dropTypeDependentFields(svc: Service, old: Service): void {
  const s = spec(svc);
  const o = old.spec ?? {};
  if (needsClusterIP(old) && !needsClusterIP(svc)) {
    if (sameList(o.clusterIPs, s.clusterIPs)) {
      delete s.clusterIP;
      delete s.clusterIPs;
    }
    if (sameList(o.ipFamilies, s.ipFamilies)) delete s.ipFamilies;
    if (o.ipFamilyPolicy === s.ipFamilyPolicy) delete s.ipFamilyPolicy;
  }
  if (needsNodePort(old) && !needsNodePort(svc) && sameList(serviceNodePorts(old), serviceNodePorts(svc))) {
    for (const p of s.ports ?? []) delete p.nodePort;
  }
  if (needsHealthCheck(old) && !needsHealthCheck(svc) && (o.healthCheckNodePort ?? 0) === (s.healthCheckNodePort ?? 0)) delete s.healthCheckNodePort;
  if (o.type === 'LoadBalancer' && s.type !== 'LoadBalancer') {
    if (s.allocateLoadBalancerNodePorts !== undefined && o.allocateLoadBalancerNodePorts === s.allocateLoadBalancerNodePorts)
      delete s.allocateLoadBalancerNodePorts;
    if (o.loadBalancerClass === s.loadBalancerClass) delete s.loadBalancerClass;
  }
  if (externallyAccessible(old) && !externallyAccessible(svc) && o.externalTrafficPolicy === s.externalTrafficPolicy) delete s.externalTrafficPolicy;
  // The load balancer status goes with the type at once (de-provisioning is the controller's business).
  if (s.type !== 'LoadBalancer') (svc.status ??= {}).loadBalancer = {};
}

/** printService's PORT(S): `80:30080/TCP,443/TCP`. */
export function servicePorts(svc: Service): string {
  const ports = svc.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`)).join(',');
}

/** printService's EXTERNAL-IP. */
export function serviceExternalIP(svc: Service): string {
  const s = svc.spec ?? {};
  const external = s.externalIPs ?? [];
  const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
  switch (s.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      // loadBalancerStatusStringer: the ingress list is cut to 16 characters (tables are not wide on the server).
      let ingress = lb.join(',');
      if (ingress.length > 16) ingress = `${ingress.slice(0, 15)}...`;
      const all = [...(ingress ? ingress.split(',') : []), ...external];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return s.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** labels.FormatLabels of the selector, `<none>` when empty. */
function selectorText(sel: Record<string, string> | undefined): string {
  const keys = Object.keys(sel ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${sel![k]}`).join(',') : '<none>';
}

export function serviceStrategy(alloc: ServiceAllocators): Strategy {
  return {
    namespaced: true,
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
    finalizerNames: 'kube',
    nameValidator: nameIsDNS1035Label,
    defaults: defaultService,
    beginCreate: (o, ctx) => alloc.beginCreate(o, ctx),
    beginUpdate: (o, old, ctx) => alloc.beginUpdate(o, old, ctx),
    afterDelete: (o, ctx) => alloc.release(o, ctx),
    // The status starts empty; Go writes its value structs, so it reads `{loadBalancer: {}}`.
    prepareForCreate(o) {
      o.status = { loadBalancer: {} };
    },
    prepareForUpdate(o, old) {
      keepStoredField(o, old, 'status');
      dropTypeDependentFields(o, old);
    },
    validate: (o) => validateService(o),
    validateUpdate: (o, old) => validateServiceUpdate(o, old),
    resetFields: { '': [['status']], status: [['spec']] },
    subresources: {
      status: {
        merge: (incoming) => incoming,
        prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
        validateUpdate: (o) => validateServiceStatus(o),
      },
    },
    tableColumns: [
      nameColumn,
      { name: 'Type', type: 'string', description: 'type determines how the Service is exposed.', priority: 0 },
      { name: 'Cluster-IP', type: 'string', description: 'clusterIP is the IP address of the service.', priority: 0 },
      {
        name: 'External-IP',
        type: 'string',
        description: 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.',
        priority: 0,
      },
      { name: 'Port(s)', type: 'string', description: 'The list of ports that are exposed by this service.', priority: 0 },
      ageColumn,
      { name: 'Selector', type: 'string', description: 'Route service traffic to pods with label keys and values matching this selector.', priority: 1 },
    ],
    tableCells: (o) => {
      const svc = o as Service;
      return [
        o.metadata?.name ?? '',
        svc.spec?.type ?? '',
        svc.spec?.type === 'ExternalName' ? '<none>' : svc.spec?.clusterIP || '<none>',
        serviceExternalIP(svc),
        servicePorts(svc),
        ageSince(o.metadata?.creationTimestamp),
        selectorText(svc.spec?.selector),
      ];
    },
  };
}
