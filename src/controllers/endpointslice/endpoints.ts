// What the EndpointSlice controller computes, as pure functions (k8s.io/endpointslice utils.go and
// reconciler.go): which pods are endpoints of a Service and how (podToEndpoint: ready / serving /
// terminating), the ports a pod gives a Service (FindPort: targetPort by number or by a named
// container port), and how endpoints are packed into slices of at most 100 with few writes.
import type { KubeObject, OwnerReference } from '../../apimachinery/types.js';

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
/** Upstream's --max-endpoints-per-slice default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export interface ServicePort {
  name?: string;
  protocol?: string;
  port?: number;
  targetPort?: number | string;
  appProtocol?: string;
}
export type Service = KubeObject & {
  spec?: {
    selector?: Record<string, string>;
    ports?: ServicePort[];
    type?: string;
    clusterIP?: string;
    ipFamilies?: string[];
    publishNotReadyAddresses?: boolean;
  };
};
export interface ContainerPort {
  name?: string;
  containerPort?: number;
  protocol?: string;
}
export type Pod = KubeObject & {
  spec?: {
    nodeName?: string;
    hostname?: string;
    subdomain?: string;
    restartPolicy?: string;
    containers?: { name?: string; ports?: ContainerPort[] }[];
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip?: string }[];
    conditions?: { type?: string; status?: string }[];
  };
};
export interface Endpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef?: { kind: string; namespace?: string; name?: string; uid?: string };
}
export interface EndpointPort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}
export type EndpointSlice = KubeObject & {
  addressType?: string;
  endpoints?: Endpoint[] | null;
  ports?: EndpointPort[] | null;
};
export type AddressType = 'IPv4' | 'IPv6';

/** podutil.IsPodReady: the Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** ShouldPodBeInEndpoints (terminating pods included): has an IP and is not finished for good. */
export function shouldPodBeInEndpoints(pod: Pod): boolean {
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).some((p) => p.ip)) return false;
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  return true;
}

const familyOf = (ip: string): AddressType => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** getEndpointAddresses: the pod's IPs of this family (podIPs, else podIP). */
export function endpointAddresses(pod: Pod, addressType: AddressType): string[] {
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip ?? '').filter(Boolean);
  if (!ips.length && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips.filter((ip) => familyOf(ip) === addressType).slice(0, 1);
}

/** getAddressTypesForService: from spec.ipFamilies, else the cluster IP's family, else IPv4. */
export function addressTypesFor(svc: Service): AddressType[] {
  const fams = (svc.spec?.ipFamilies ?? []).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  if (fams.length) return fams;
  const ip = svc.spec?.clusterIP;
  if (ip && ip !== 'None') return [familyOf(ip)];
  return ['IPv4'];
}

/** podToEndpoint: serving = pod ready; ready = serving and not terminating (or publishNotReadyAddresses). */
export function podToEndpoint(pod: Pod, svc: Service, addressType: AddressType, zone?: string): Endpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata?.deletionTimestamp;
  const ready = !!svc.spec?.publishNotReadyAddresses || (serving && !terminating);
  const ep: Endpoint = {
    addresses: endpointAddresses(pod, addressType),
    conditions: { ready, serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
  };
  if (pod.spec?.nodeName) ep.nodeName = pod.spec.nodeName;
  if (zone) ep.zone = zone;
  // ShouldSetHostname: the pod names this Service as its subdomain.
  if (pod.spec?.hostname && pod.spec.subdomain === svc.metadata?.name && pod.metadata?.namespace === svc.metadata?.namespace) ep.hostname = pod.spec.hostname;
  return ep;
}

/** podutil.FindPort: a number is taken as is; a name is looked up among the pod's container ports of the same protocol. */
export function findPort(pod: Pod, sp: ServicePort): number | undefined {
  const tp = sp.targetPort ?? sp.port;
  if (typeof tp === 'number') return tp > 0 ? tp : undefined;
  if (typeof tp === 'string') {
    if (/^\d+$/.test(tp)) return Number(tp);
    const proto = sp.protocol ?? 'TCP';
    for (const c of pod.spec?.containers ?? []) {
      for (const p of c.ports ?? []) if (p.name === tp && (p.protocol ?? 'TCP') === proto && p.containerPort) return p.containerPort;
    }
  }
  return undefined;
}

/** getEndpointPorts: one per Service port the pod can serve. */
export function endpointPorts(svc: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of svc.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    out.push({ name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
  }
  return out;
}

/** The key slices are grouped by (upstream's port-mapping hash): the ports, in a fixed order. */
export function portsKey(ports: readonly EndpointPort[] | null | undefined): string {
  return JSON.stringify(
    [...(ports ?? [])]
      .map((p) => [p.name ?? '', p.protocol ?? 'TCP', p.port ?? 0, p.appProtocol ?? ''])
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
}

/** What identifies an endpoint across updates (upstream's endpoint hash): addresses and target. */
export function endpointKey(ep: Endpoint): string {
  return JSON.stringify([[...ep.addresses].sort(), ep.hostname ?? '', ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '']);
}

function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  return (
    JSON.stringify([a.addresses, a.conditions.ready, a.conditions.serving, a.conditions.terminating, a.hostname, a.nodeName, a.zone, a.targetRef?.uid]) ===
    JSON.stringify([b.addresses, !!b.conditions?.ready, !!b.conditions?.serving, !!b.conditions?.terminating, b.hostname, b.nodeName, b.zone, b.targetRef?.uid])
  );
}

/** The desired endpoints of a Service for one address type, grouped by their ports. */
export interface DesiredGroup {
  readonly ports: EndpointPort[];
  readonly endpoints: Endpoint[];
}

/** The endpoints (and their port groups) a Service wants from these pods, per address type. */
export function desiredEndpoints(
  svc: Service,
  pods: readonly Pod[],
  zoneOf?: (node: string) => string | undefined,
): Map<AddressType, Map<string, DesiredGroup>> {
  const out = new Map<AddressType, Map<string, DesiredGroup>>();
  const sorted = [...pods].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  for (const at of addressTypesFor(svc)) {
    const groups = new Map<string, DesiredGroup>();
    out.set(at, groups);
    for (const pod of sorted) {
      if (!shouldPodBeInEndpoints(pod)) continue;
      const ep = podToEndpoint(pod, svc, at, pod.spec?.nodeName ? zoneOf?.(pod.spec.nodeName) : undefined);
      if (!ep.addresses.length) continue;
      const ports = endpointPorts(svc, pod);
      const key = portsKey(ports);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { ports, endpoints: [] }));
      g.endpoints.push(ep);
    }
  }
  return out;
}

/** The labels every managed slice of `svc` carries: the Service's own, plus the controller's. */
export function sliceLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(svc.metadata?.labels ?? {})) if (k !== LABEL_HEADLESS) labels[k] = v;
  labels[LABEL_SERVICE_NAME] = svc.metadata?.name ?? '';
  labels[LABEL_MANAGED_BY] = CONTROLLER_NAME;
  if (svc.spec?.clusterIP === 'None') labels[LABEL_HEADLESS] = '';
  return labels;
}

export function ownerRef(svc: Service): OwnerReference {
  return { apiVersion: 'v1', kind: 'Service', name: svc.metadata?.name ?? '', uid: svc.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** A new managed slice (name chosen by the server from generateName `<service>-`). */
export function newSlice(svc: Service, addressType: AddressType, ports: EndpointPort[] | null, endpoints: Endpoint[]): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${svc.metadata?.name ?? ''}-`,
      namespace: svc.metadata?.namespace ?? '',
      labels: sliceLabels(svc),
      ownerReferences: [ownerRef(svc)],
    },
    addressType,
    endpoints,
    ports,
  };
}

export interface SlicePlan {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
}

const isPlaceholder = (s: EndpointSlice): boolean => !(s.endpoints ?? []).length && !(s.ports ?? []).length;

function labelsDiffer(s: EndpointSlice, want: Record<string, string>): boolean {
  const have = s.metadata?.labels ?? {};
  const ka = Object.keys(have);
  return ka.length !== Object.keys(want).length || ka.some((k) => have[k] !== want[k]);
}

function ownerDiffers(s: EndpointSlice, svc: Service): boolean {
  const refs = s.metadata?.ownerReferences ?? [];
  return !refs.some((r) => r.controller && r.kind === 'Service' && r.uid === svc.metadata?.uid);
}

/**
 * reconciler.reconcile: turns the existing managed slices of a Service into the desired ones with
 * as few writes as it can. Endpoints stay in the slice they are in (changed in place when their
 * conditions change), gone ones are removed, slices left empty are deleted, and new endpoints
 * fill slices being updated anyway, then slices with room, then new slices of at most `max`.
 * A Service with no endpoints at all keeps one placeholder slice (no endpoints, no ports).
 */
export function planSlices(
  svc: Service,
  desired: Map<AddressType, Map<string, DesiredGroup>>,
  existing: readonly EndpointSlice[],
  max = MAX_ENDPOINTS_PER_SLICE,
): SlicePlan {
  const create: EndpointSlice[] = [];
  const update = new Map<EndpointSlice, EndpointSlice>();
  const del: EndpointSlice[] = [];
  const kept: EndpointSlice[] = [];
  const labels = sliceLabels(svc);
  const byType = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const at = s.addressType ?? '';
    if (!desired.has(at as AddressType)) {
      del.push(s);
      continue;
    }
    let l = byType.get(at);
    if (!l) byType.set(at, (l = []));
    l.push(s);
  }
  for (const [at, groups] of desired) {
    const slices = byType.get(at) ?? [];
    const byPorts = new Map<string, EndpointSlice[]>();
    for (const s of slices) {
      const k = portsKey(s.ports);
      if (!groups.has(k)) {
        del.push(s);
        continue;
      }
      let l = byPorts.get(k);
      if (!l) byPorts.set(k, (l = []));
      l.push(s);
    }
    for (const [k, g] of groups) {
      const want = new Map(g.endpoints.map((e) => [endpointKey(e), e]));
      const updating: EndpointSlice[] = [];
      const unchanged: EndpointSlice[] = [];
      for (const s of byPorts.get(k) ?? []) {
        let changed = false;
        const eps: Endpoint[] = [];
        for (const e of s.endpoints ?? []) {
          const key = endpointKey(e);
          const d = want.get(key);
          if (!d) {
            changed = true;
            continue;
          }
          want.delete(key);
          if (sameEndpoint(d, e)) eps.push(e);
          else {
            eps.push(d);
            changed = true;
          }
        }
        if (!eps.length) {
          del.push(s);
          continue;
        }
        const next = { ...s, endpoints: eps };
        if (changed || labelsDiffer(s, labels) || ownerDiffers(s, svc)) updating.push(next);
        else unchanged.push(next);
      }
      let rest = [...want.values()];
      // 1. Slices being written anyway, fullest first.
      updating.sort((a, b) => b.endpoints!.length - a.endpoints!.length);
      for (const s of updating) {
        const room = max - s.endpoints!.length;
        if (room > 0 && rest.length) {
          s.endpoints = [...s.endpoints!, ...rest.slice(0, room)];
          rest = rest.slice(room);
        }
      }
      // 2. Unchanged slices with room, fullest first (each one taken costs a write).
      unchanged.sort((a, b) => b.endpoints!.length - a.endpoints!.length);
      for (const s of unchanged) {
        const room = max - s.endpoints!.length;
        if (room > 0 && rest.length) {
          s.endpoints = [...s.endpoints!, ...rest.slice(0, room)];
          rest = rest.slice(room);
          updating.push(s);
        } else kept.push(s);
      }
      for (const s of updating) update.set(s, s);
      // 3. New slices.
      while (rest.length) {
        create.push(newSlice(svc, at, g.ports, rest.slice(0, max)));
        rest = rest.slice(max);
      }
    }
  }
  const out = [...update.values()].map((s) => ({ ...s, metadata: { ...s.metadata, labels, ownerReferences: withOwner(s, svc) } }));
  if (!create.length && !out.length && !kept.length) {
    // The placeholder: reuse one that exists, else make one.
    const i = del.findIndex(isPlaceholder);
    if (i >= 0) {
      const p = del.splice(i, 1)[0]!;
      if (labelsDiffer(p, labels) || ownerDiffers(p, svc)) out.push({ ...p, metadata: { ...p.metadata, labels, ownerReferences: withOwner(p, svc) } });
    } else {
      create.push(newSlice(svc, addressTypesFor(svc)[0]!, null, []));
    }
  } else {
    // Endpoints exist: a placeholder among the kept ones is not needed any more.
    for (let i = kept.length - 1; i >= 0; i--) if (isPlaceholder(kept[i]!)) del.push(...kept.splice(i, 1));
  }
  return { create, update: out, delete: del };
}

function withOwner(s: EndpointSlice, svc: Service): OwnerReference[] {
  const refs = (s.metadata?.ownerReferences ?? []).filter((r) => !(r.controller && r.kind === 'Service'));
  return [...refs, ownerRef(svc)];
}
