// The `cloud` API module (issue 25, KEP-0008): core/v1 nodes, services, endpoints and pods, and
// discovery.k8s.io/v1 endpointslices, with kube's registry semantics. Not in the default set
// (KEP-4080: no pods, nodes or services unless a module adds them): `kplane serve --modules=cloud`
// or `createControlPlane({ apis: [...defaultModules(), cloud()] })`.
import type { ApiModule } from '../registry/registry.js';
import { ServiceAllocators, type ServiceAllocationOptions } from '../registry/core/services/alloc.js';
import { DEFAULT_REPAIR_INTERVAL_MS, ServiceAllocationRepair } from '../registry/core/services/repair.js';
import { services } from '../registry/core/services/index.js';
import { nodes } from '../registry/core/nodes/index.js';
import { pods } from '../registry/core/pods/index.js';
import { endpoints } from '../registry/core/endpoints/index.js';
import { endpointSlices } from '../registry/discovery/endpointslices/index.js';
import { endpointSliceController } from '../controllers/endpointslice/index.js';
import { endpointsController } from '../controllers/endpoints/index.js';
import type { ControllerFactory } from '../controllers/types.js';

export interface CloudModuleOptions extends ServiceAllocationOptions {
  /**
   * How often the cluster IP and node port repair loops run after the round at start (upstream's
   * RepairServicesInterval, 3 minutes); 0 runs only the round at start.
   */
  readonly repairIntervalMs?: number;
}

export function cloud(opts: CloudModuleOptions = {}): ApiModule {
  const alloc = new ServiceAllocators(opts);
  let repair: ServiceAllocationRepair | undefined;
  return {
    name: 'cloud',
    resources: [nodes, services(alloc), endpoints, pods, endpointSlices],
    async bootstrap(ctx) {
      // Upstream's repair controllers: a round at start rebuilds the stored bitmaps from the
      // Services (leaks freed at once: no create is in flight yet), then one every interval.
      const svc = ctx.registry.lookup('', 'v1', 'services');
      if (!svc) return;
      repair = new ServiceAllocationRepair({
        alloc,
        storage: ctx.registry.storage,
        store: svc.store,
        log: ctx.log ?? (() => {}),
        client: ctx.client,
        ...(ctx.metrics ? { metrics: ctx.metrics } : {}),
      });
      await repair.runOnce({ freeLeaksAtOnce: true });
      repair.start(opts.repairIntervalMs ?? DEFAULT_REPAIR_INTERVAL_MS);
    },
    async shutdown() {
      await repair?.stop();
    },
  };
}

/** The controllers that come with the cloud module (kube-controller-manager's for its resources: Endpoints, EndpointSlices). */
export function cloudControllers(): ControllerFactory[] {
  return [endpointsController(), endpointSliceController()];
}

/**
 * The in-process controllers plus those of the modules served (when the built-in ones run at all):
 * with the cloud module, the Endpoints and EndpointSlice controllers, unless ones of those names are given already.
 */
export function withModuleControllers(controllers: readonly ControllerFactory[], modules: readonly { readonly name: string }[]): readonly ControllerFactory[] {
  if (!modules.some((m) => m.name === 'cloud')) return controllers;
  const extra = cloudControllers().filter((c) => !controllers.some((g) => g.controllerName === c.controllerName));
  return extra.length ? [...controllers, ...extra] : controllers;
}
