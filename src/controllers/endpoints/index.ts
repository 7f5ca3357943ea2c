// The Endpoints controller (kube-controller-manager's endpoint-controller, pkg/controller/endpoint):
// core/v1 Endpoints named after each Service with a selector, from the Pods it selects, so that
// `kubectl describe svc` and older clients see the endpoints. Ready pods (or every pod with
// publishNotReadyAddresses) are `addresses`, the others `notReadyAddresses`; terminating pods are
// left out unless publishNotReadyAddresses. Subsets are repacked as endpoints.RepackSubsets does:
// addresses with the same ports share a subset, addresses and subsets sorted. An Endpoints object
// whose Service is gone is deleted (upstream also checks for such leftovers at start).
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR } from '../../client/types.js';
import { Controller } from '../runtime/controller.js';
import { keyOf, NAMESPACE_INDEX, splitKey } from '../runtime/informer.js';
import { controllerFactory, type ControllerFactory } from '../types.js';
import { findPort, isPodReady, LABEL_HEADLESS, type Pod, type Service } from '../endpointslice/endpoints.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const PODS: GVR = { group: '', version: 'v1', resource: 'pods' };
const ENDPOINTS: GVR = { group: '', version: 'v1', resource: 'endpoints' };
/** Endpoints used as a leader-election lock (old controller-managers) are not ours. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** Upstream labels the Endpoints it writes so the EndpointSlice mirroring controller skips them. */
const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
}
export interface EndpointsPort {
  name?: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}
export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointsPort[];
}
export type Endpoints = KubeObject & { subsets?: EndpointSubset[] };

const portKey = (ports: readonly EndpointsPort[]): string =>
  JSON.stringify(ports.map((p) => [p.name ?? '', p.port, p.protocol, p.appProtocol ?? '']).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)));

const compareAddr = (a: EndpointAddress, b: EndpointAddress): number =>
  a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : (a.targetRef?.uid ?? '') < (b.targetRef?.uid ?? '') ? -1 : 1;

/** The Endpoints subsets a Service gets from these pods (syncService + RepackSubsets + SortSubsets). */
export function endpointsSubsets(svc: Service, pods: readonly Pod[]): EndpointSubset[] {
  const publishNotReady = !!svc.spec?.publishNotReadyAddresses;
  // address (ip + pod) → its ports and readiness
  const byAddr = new Map<string, { addr: EndpointAddress; ready: boolean; ports: EndpointsPort[] }>();
  for (const pod of pods) {
    const ip = pod.status?.podIP;
    if (!ip) continue;
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') continue;
    if (pod.metadata?.deletionTimestamp && !publishNotReady) continue;
    const addr: EndpointAddress = {
      ip,
      ...(pod.spec?.hostname && pod.spec.subdomain === svc.metadata?.name ? { hostname: pod.spec.hostname } : {}),
      ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
    };
    const ready = publishNotReady || isPodReady(pod);
    const ports: EndpointsPort[] = [];
    for (const sp of svc.spec?.ports ?? []) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      ports.push({ ...(sp.name ? { name: sp.name } : {}), port, protocol: sp.protocol ?? 'TCP', ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
    }
    // A Service without ports still lists its pods (upstream's headless case), with no ports.
    if (!ports.length && (svc.spec?.ports ?? []).length) continue;
    byAddr.set(`${ip}/${addr.targetRef!.uid}`, { addr, ready, ports });
  }
  const subsets = new Map<string, EndpointSubset>();
  for (const { addr, ready, ports } of byAddr.values()) {
    const k = portKey(ports);
    let s = subsets.get(k);
    if (!s) subsets.set(k, (s = { ...(ports.length ? { ports: [...ports].sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : 1)) } : {}) }));
    if (ready) (s.addresses ??= []).push(addr);
    else (s.notReadyAddresses ??= []).push(addr);
  }
  const out = [...subsets.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, s]) => s);
  for (const s of out) {
    s.addresses?.sort(compareAddr);
    s.notReadyAddresses?.sort(compareAddr);
  }
  return out;
}

function endpointsLabels(svc: Service): Record<string, string> {
  const labels: Record<string, string> = { ...(svc.metadata?.labels ?? {}) };
  delete labels[LABEL_HEADLESS];
  if (svc.spec?.clusterIP === 'None') labels[LABEL_HEADLESS] = '';
  labels[LABEL_SKIP_MIRROR] = 'true';
  return labels;
}

const canon = (v: unknown): string => JSON.stringify(v ?? null);

export interface EndpointsControllerOptions {
  /** --concurrent-endpoint-syncs (upstream's default 5). */
  readonly workers?: number;
}

/** The Endpoints controller, as kube-controller-manager's `endpoint-controller`. */
export function endpointsController(opts: EndpointsControllerOptions = {}): ControllerFactory {
  return controllerFactory({ name: 'endpoint-controller', serviceAccountName: 'endpoint-controller' }, (ctx) => {
    const services = ctx.manager.informer<Service>(SERVICES);
    const pods = ctx.manager.informer<Pod>(PODS);
    const endpoints = ctx.manager.informer<Endpoints>(ENDPOINTS);
    const selects = (sel: Record<string, string>, l: Record<string, string> | undefined): boolean => Object.entries(sel).every(([k, v]) => l?.[k] === v);
    const sync = async (key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> => {
      const { namespace, name } = splitKey(key);
      const svc = services.store.get(key);
      const current = endpoints.store.get(key);
      if (!svc) {
        // The Service is gone: so are its Endpoints (unless they are a leader-election lock).
        if (!current || current.metadata?.annotations?.[LEADER_ANNOTATION] !== undefined) return;
        try {
          await ctx.client.delete(ENDPOINTS, namespace, name, { signal, preconditions: { uid: current.metadata?.uid ?? '' } });
        } catch (e) {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
        }
        return;
      }
      if (!svc.spec?.selector || svc.spec.type === 'ExternalName' || svc.metadata?.deletionTimestamp) return;
      const selector = svc.spec.selector;
      const selected = pods.store.byIndex(NAMESPACE_INDEX, namespace ?? '').filter((p) => selects(selector, p.metadata?.labels));
      const subsets = endpointsSubsets(svc, selected);
      const labels = endpointsLabels(svc);
      if (current && canon(current.subsets ?? []) === canon(subsets) && canon(current.metadata?.labels ?? {}) === canon(labels)) return;
      try {
        if (!current) {
          await ctx.client.create<Endpoints>(ENDPOINTS, namespace, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, labels }, subsets }, { signal });
        } else {
          await ctx.client.update<Endpoints>(ENDPOINTS, namespace, { ...current, metadata: { ...current.metadata, labels }, subsets }, { signal });
        }
      } catch (e) {
        // Our cache is behind (someone created or changed it): again once the informer caught up.
        if (e instanceof StatusError && (e.code === 409 || e.code === 404)) return { requeueAfterMs: 100 };
        if (e instanceof StatusError && e.code === 403 && /being terminated/.test(e.message)) return;
        throw e;
      }
    };
    const controller = new Controller({
      name: 'endpoint-controller',
      workers: opts.workers ?? 5,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: (key, signal) => sync(key, signal),
    });
    controller.for(services);
    controller.watches(pods, (p) =>
      services.store
        .byIndex(NAMESPACE_INDEX, p.metadata?.namespace ?? '')
        .filter((s) => s.spec?.selector && selects(s.spec.selector, p.metadata?.labels))
        .map((s) => keyOf(s)),
    );
    // Deleted Endpoints of a Service are made again (upstream's onEndpointsDelete).
    endpoints.addEventHandler({ onDelete: (e) => controller.enqueue(keyOf(e)) });
    return {
      needLeaderElection: true,
      async start(signal: AbortSignal): Promise<void> {
        const running = controller.start(signal);
        // checkLeftoverEndpoints: every Endpoints object once, so that those of Services deleted
        // while no controller ran go too.
        for (const e of endpoints.store.list()) if (e.metadata?.annotations?.[LEADER_ANNOTATION] === undefined) controller.enqueue(keyOf(e));
        await running;
      },
    };
  });
}
