// The mutation table's broken clouds and CCMs (issue 26): each wraps the real provider (or the
// CCM's client) and delegates everything but one defect. `SwitchableProvider` is what the CCM under
// test holds, so a test swaps a defect in and out without restarting the controllers (the service
// controller asks the provider for its LoadBalancer once, at start).
import type { KubeClient } from '../../src/client/types.js';
import type {
  CloudProvider,
  ControllerClientBuilder,
  Ctx,
  InstanceMetadata,
  InstancesV2,
  LoadBalancer,
  LoadBalancerStatus,
  Node,
  Route,
  Routes,
  Service,
  Zones,
} from '../../src/controllers/cloud/provider.js';

/** A provider with one defect: overrides of LoadBalancer and InstancesV2 methods over the real ones. */
export interface Defect {
  readonly name: string;
  readonly loadBalancer?: Partial<LoadBalancer>;
  readonly instances?: Partial<InstancesV2>;
}

const strip = (svc: Readonly<Service>, change: (s: Service) => void): Service => {
  const s = structuredClone(svc) as Service;
  change(s);
  return s;
};

/** The defects of the mutation table that live in the provider. */
export function providerDefects(real: CloudProvider): Record<string, Defect> {
  const lb = real.loadBalancer()!;
  const inst = real.instancesV2()!;
  /** Ensure and Update given the Service as `change` rewrites it: the provider never sees what was removed. */
  const seesServiceAs = (change: (s: Service) => void): Partial<LoadBalancer> => ({
    ensureLoadBalancer: (ctx, cluster, svc, nodes) => lb.ensureLoadBalancer(ctx, cluster, strip(svc, change), nodes),
    updateLoadBalancer: (ctx, cluster, svc, nodes) => lb.updateLoadBalancer(ctx, cluster, strip(svc, change), nodes),
  });
  return {
    neverDeletesLoadBalancers: {
      name: 'never deletes load balancers',
      loadBalancer: { ensureLoadBalancerDeleted: async () => {} },
    },
    ignoresNodeSetChanges: {
      name: 'ignores node-set changes (UpdateLoadBalancer does nothing)',
      loadBalancer: { updateLoadBalancer: async () => {} },
    },
    dropsSessionAffinity: {
      name: 'drops session affinity',
      loadBalancer: seesServiceAs((s) => {
        s.spec = { ...s.spec, sessionAffinity: 'None' };
        delete s.spec.sessionAffinityConfig;
      }),
    },
    ignoresEtpLocalHealthChecks: {
      name: 'ignores ETP Local health checks',
      loadBalancer: seesServiceAs((s) => {
        s.spec = { ...s.spec, externalTrafficPolicy: 'Cluster' };
        delete s.spec.healthCheckNodePort;
      }),
    },
    doesNotDeleteNodes: {
      name: 'does not delete nodes of deleted instances (InstanceExists always true)',
      instances: { instanceExists: async () => true, instanceShutdown: (ctx, node) => inst.instanceShutdown(ctx, node).catch(() => false) },
    },
  };
}

/** The CloudProvider the CCM holds: the real one, with at most one defect switched in. */
export class SwitchableProvider implements CloudProvider {
  defect: Defect | undefined;

  constructor(readonly real: CloudProvider) {}

  private lb(): LoadBalancer {
    return this.real.loadBalancer()!;
  }
  private inst(): InstancesV2 {
    return this.real.instancesV2()!;
  }

  private readonly lbApi: LoadBalancer = {
    getLoadBalancer: (ctx: Ctx, c: string, s: Readonly<Service>) =>
      (this.defect?.loadBalancer?.getLoadBalancer ?? this.lb().getLoadBalancer.bind(this.lb()))(ctx, c, s),
    getLoadBalancerName: (ctx: Ctx, c: string, s: Readonly<Service>) => this.lb().getLoadBalancerName(ctx, c, s),
    ensureLoadBalancer: (ctx: Ctx, c: string, s: Readonly<Service>, n: readonly Readonly<Node>[]): Promise<LoadBalancerStatus> =>
      (this.defect?.loadBalancer?.ensureLoadBalancer ?? this.lb().ensureLoadBalancer.bind(this.lb()))(ctx, c, s, n),
    updateLoadBalancer: (ctx: Ctx, c: string, s: Readonly<Service>, n: readonly Readonly<Node>[]) =>
      (this.defect?.loadBalancer?.updateLoadBalancer ?? this.lb().updateLoadBalancer.bind(this.lb()))(ctx, c, s, n),
    ensureLoadBalancerDeleted: (ctx: Ctx, c: string, s: Readonly<Service>) =>
      (this.defect?.loadBalancer?.ensureLoadBalancerDeleted ?? this.lb().ensureLoadBalancerDeleted.bind(this.lb()))(ctx, c, s),
  };

  private readonly instApi: InstancesV2 = {
    instanceExists: (ctx: Ctx, n: Readonly<Node>) => (this.defect?.instances?.instanceExists ?? this.inst().instanceExists.bind(this.inst()))(ctx, n),
    instanceShutdown: (ctx: Ctx, n: Readonly<Node>) => (this.defect?.instances?.instanceShutdown ?? this.inst().instanceShutdown.bind(this.inst()))(ctx, n),
    instanceMetadata: (ctx: Ctx, n: Readonly<Node>): Promise<InstanceMetadata> =>
      (this.defect?.instances?.instanceMetadata ?? this.inst().instanceMetadata.bind(this.inst()))(ctx, n),
  };

  initialize(clients: ControllerClientBuilder, stop: AbortSignal): void | Promise<void> {
    return this.real.initialize(clients, stop);
  }
  loadBalancer(): LoadBalancer | undefined {
    return this.real.loadBalancer() ? this.lbApi : undefined;
  }
  instancesV2(): InstancesV2 | undefined {
    return this.real.instancesV2() ? this.instApi : undefined;
  }
  zones(): Zones | undefined {
    return this.real.zones();
  }
  routes(): Routes | undefined {
    return this.real.routes();
  }
  providerName(): string {
    return this.real.providerName();
  }
  hasClusterID(): boolean {
    return this.real.hasClusterID();
  }
}

/**
 * The CCM defect "leaves the finalizer": a client for the cloud controllers that drops the removal
 * of service.kubernetes.io/load-balancer-cleanup from every Service patch it sends (the rest of the
 * patch, e.g. clearing the ingress, goes through).
 */
export function leavesFinalizerClient(real: KubeClient): KubeClient {
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop !== 'patch') {
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      const patch: KubeClient['patch'] = (gvr, ns, name, type, body, opts) => {
        if (gvr.resource === 'services' && body && typeof body === 'object') {
          const b = structuredClone(body) as { metadata?: Record<string, unknown> };
          if (b.metadata) {
            delete b.metadata['$deleteFromPrimitiveList/finalizers'];
            if (Array.isArray(b.metadata['$setElementOrder/finalizers']) && !b.metadata.finalizers) delete b.metadata['$setElementOrder/finalizers'];
            if (Object.keys(b.metadata).length === 0) delete b.metadata;
          }
          return target.patch(gvr, ns, name, type, b, opts);
        }
        return target.patch(gvr, ns, name, type, body, opts);
      };
      return patch;
    },
  });
}

export type { Route };
