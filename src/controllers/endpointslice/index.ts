// The EndpointSlice controller (kube-controller-manager's endpointslice-controller,
// pkg/controller/endpointslice): keeps discovery.k8s.io/v1 EndpointSlices for every Service with
// a selector from the Pods it selects (endpoints.ts computes what they should be). Slices are
// owned by their Service (the garbage collector deletes them with it); Services without a
// selector, and ExternalName Services, are left alone, as upstream.
//
// As upstream's endpointSliceTracker, the controller remembers the resourceVersion of each slice it
// wrote (and the slices it deleted) and does not act for a Service while its informer has not seen
// those writes yet: acting on a stale cache would create slices twice.
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR } from '../../client/types.js';
import { asLogger } from '../../golang/klog.js';
import { Controller } from '../runtime/controller.js';
import { keyOf, NAMESPACE_INDEX, splitKey } from '../runtime/informer.js';
import { controllerFactory, type ControllerFactory } from '../types.js';
import {
  desiredEndpoints,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  CONTROLLER_NAME,
  planSlices,
  type EndpointSlice,
  type Pod,
  type Service,
} from './endpoints.js';

export * from './endpoints.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const PODS: GVR = { group: '', version: 'v1', resource: 'pods' };
const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
const ENDPOINTSLICES: GVR = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };
const BY_SERVICE = 'service';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** An expectation the cache never meets (a write lost in a relist) is dropped after this long. */
const EXPECTATION_TTL_MS = 30_000;

export interface EndpointSliceControllerOptions {
  /** --concurrent-service-endpoint-syncs (upstream's default 5). */
  readonly workers?: number;
  /** --max-endpoints-per-slice (upstream's default 100). */
  readonly maxEndpointsPerSlice?: number;
}

function selects(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return Object.entries(selector).every(([k, v]) => l[k] === v);
}

const managedBy = (s: KubeObject): boolean => s.metadata?.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME;

/** The EndpointSlice controller, as kube-controller-manager's `endpointslice-controller`. */
export function endpointSliceController(opts: EndpointSliceControllerOptions = {}): ControllerFactory {
  return controllerFactory({ name: 'endpointslice-controller', serviceAccountName: 'endpointslice-controller' }, (ctx) => {
    const log = asLogger(ctx.log);
    const services = ctx.manager.informer<Service>(SERVICES);
    const pods = ctx.manager.informer<Pod>(PODS);
    const nodes = ctx.manager.informer(NODES);
    const slices = ctx.manager.informer<EndpointSlice>(ENDPOINTSLICES, {
      labelSelector: `${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`,
      indexers: { [BY_SERVICE]: (s) => (s.metadata?.labels?.[LABEL_SERVICE_NAME] ? [`${s.metadata.namespace}/${s.metadata.labels[LABEL_SERVICE_NAME]}`] : []) },
    });
    // slice key → the resourceVersion we wrote ('' = we deleted it), and when.
    const expected = new Map<string, { rv: string; at: number; service: string }>();
    const seen = (s: KubeObject, deleted: boolean): void => {
      const k = keyOf(s);
      const e = expected.get(k);
      if (!e) return;
      if (deleted ? e.rv === '' : e.rv === s.metadata?.resourceVersion) expected.delete(k);
    };
    slices.addEventHandler({ onAdd: (s) => seen(s, false), onUpdate: (_o, s) => seen(s, false), onDelete: (s) => seen(s, true) });
    const stale = (svcKey: string): boolean => {
      const now = Date.now();
      for (const [k, e] of expected) {
        if (now - e.at > EXPECTATION_TTL_MS) expected.delete(k);
        else if (e.service === svcKey) return true;
      }
      return false;
    };
    const servicesSelecting = (p: Pod): string[] => {
      const ns = p.metadata?.namespace ?? '';
      return services.store
        .byIndex(NAMESPACE_INDEX, ns)
        .filter((s) => s.spec?.selector && selects(s.spec.selector, p.metadata?.labels))
        .map((s) => keyOf(s));
    };
    const zoneOf = (node: string): string | undefined => nodes.store.get(node)?.metadata?.labels?.[ZONE_LABEL];

    const sync = async (key: string, signal: AbortSignal): Promise<{ requeueAfterMs?: number } | void> => {
      const svc = services.store.get(key);
      if (!svc || svc.metadata?.deletionTimestamp) return; // the garbage collector removes the slices
      if (svc.spec?.type === 'ExternalName' || !svc.spec?.selector) return;
      if (stale(key)) return { requeueAfterMs: 1000 };
      const { namespace } = splitKey(key);
      const selector = svc.spec.selector;
      const selected = pods.store.byIndex(NAMESPACE_INDEX, namespace ?? '').filter((p) => selects(selector, p.metadata?.labels));
      const existing = slices.store.byIndex(BY_SERVICE, key).filter(managedBy);
      const plan = planSlices(svc, desiredEndpoints(svc, selected, zoneOf), existing, opts.maxEndpointsPerSlice);
      const note = (s: KubeObject, rv: string): void => {
        // The watch event may have come in before the write's answer.
        const cached = slices.store.get(keyOf(s));
        if (rv === '' ? !cached : cached?.metadata?.resourceVersion === rv) return;
        expected.set(keyOf(s), { rv, at: Date.now(), service: key });
      };
      try {
        for (const s of plan.create) {
          const out = await ctx.client.create<EndpointSlice>(ENDPOINTSLICES, namespace, s, { signal });
          note(out, out.metadata?.resourceVersion ?? '');
        }
        for (const s of plan.update) {
          const out = await ctx.client.update<EndpointSlice>(ENDPOINTSLICES, namespace, s, { signal });
          note(out, out.metadata?.resourceVersion ?? '');
        }
        for (const s of plan.delete) {
          try {
            await ctx.client.delete(ENDPOINTSLICES, namespace, s.metadata?.name ?? '', { signal, preconditions: { uid: s.metadata?.uid ?? '' } });
            note(s, '');
          } catch (e) {
            if (!(e instanceof StatusError && e.code === 404)) throw e;
          }
        }
      } catch (e) {
        // A conflict means our cache is behind: try again once it has caught up.
        if (e instanceof StatusError && (e.code === 409 || e.code === 404)) return { requeueAfterMs: 100 };
        // The namespace is going away: nothing can be created in it any more.
        if (e instanceof StatusError && e.code === 403 && /being terminated/.test(e.message)) return;
        throw e;
      }
      if (plan.create.length || plan.update.length || plan.delete.length) {
        log.v(2).info('Reconciled EndpointSlices', 'service', key, 'created', plan.create.length, 'updated', plan.update.length, 'deleted', plan.delete.length);
      }
    };
    const controller = new Controller({
      name: 'endpointslice-controller',
      workers: opts.workers ?? 5,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: (key, signal) => sync(key, signal),
    });
    controller.for(services);
    controller.watches(pods, (p) => servicesSelecting(p));
    controller.watches(slices, (s) => {
      const svc = s.metadata?.labels?.[LABEL_SERVICE_NAME];
      return svc ? [`${s.metadata?.namespace}/${svc}`] : [];
    });
    return controller;
  });
}
