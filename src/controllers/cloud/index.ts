// The cloud controllers (k8s.io/cloud-provider's cloud-controller-manager) as a library: pick the
// controllers with upstream's --controllers syntax, build them over a CloudProvider, and run them
// on one Manager — in `kplane cloud-controller-manager`, or in any process that has a KubeClient.
import type { Registry } from 'prom-client';
import type { KubeClient } from '../../client/types.js';
import { runControllers, type RunningControllers } from '../index.js';
import type { ManagerLeaderElection } from '../runtime/manager.js';
import type { ControllerFactory } from '../types.js';
import { registerFakeCloudProvider } from './fake.js';
import { CLOUD_NODE_CONTROLLER, cloudNodeController } from './node.js';
import { CLOUD_NODE_LIFECYCLE_CONTROLLER, cloudNodeLifecycleController } from './nodelifecycle.js';
import type { CloudProvider } from './provider.js';
import { NODE_ROUTE_CONTROLLER, routeController } from './route.js';
import { SERVICE_LB_CONTROLLER, serviceLBController } from './service.js';

export * from './provider.js';
export { FakeCloud, FAKE_PROVIDER_NAME, parseFakeCloudConfig, registerFakeCloudProvider } from './fake.js';
export type { FakeCall, FakeCloudConfig, FakeError, FakeInstance, FakeBalancer } from './fake.js';
export { EventRecorder } from './events.js';
export { boundedCall, DEFAULT_PROVIDER_CALL_TIMEOUT_MS, ProviderTimeoutError } from './service.js';
export { serviceLBController, needsUpdate, needsCleanup, wantsLoadBalancer, loadBalancerNode, SERVICE_LB_CONTROLLER } from './service.js';
export { cloudNodeController, CLOUD_NODE_CONTROLLER } from './node.js';
export { cloudNodeLifecycleController, CLOUD_NODE_LIFECYCLE_CONTROLLER } from './nodelifecycle.js';
export { routeController, NODE_ROUTE_CONTROLLER, parseClusterCIDRs } from './route.js';

registerFakeCloudProvider();
// The loopback cloud registers itself as `loopback` when imported.
export { LoopbackCloud, CloudAdminError, loopbackCloudFromConfig, serveCloudAdmin } from './loopback/index.js';
export type { LoopbackCloudConfig, LoopbackCloudOptions, Instance as LoopbackInstance, LoadBalancerInfo } from './loopback/index.js';

/** Upstream's CCM controller names, in start order. */
export const CLOUD_CONTROLLER_NAMES = [CLOUD_NODE_CONTROLLER, CLOUD_NODE_LIFECYCLE_CONTROLLER, SERVICE_LB_CONTROLLER, NODE_ROUTE_CONTROLLER] as const;

/** names.CCMControllerAliases. */
export const CLOUD_CONTROLLER_ALIASES: Readonly<Record<string, string>> = {
  'cloud-node': CLOUD_NODE_CONTROLLER,
  service: SERVICE_LB_CONTROLLER,
  route: NODE_ROUTE_CONTROLLER,
  'cloud-node-lifecycle': CLOUD_NODE_LIFECYCLE_CONTROLLER,
};

/**
 * Upstream's --controllers: `*` turns on every controller that is on by default (all four here),
 * `foo` turns foo on, `-foo` turns it off; aliases are accepted. Unknown names are an error naming
 * the known ones.
 */
export function selectCloudControllers(list: readonly string[]): Set<string> {
  const known = new Set<string>(CLOUD_CONTROLLER_NAMES);
  const canonical = (n: string): string => CLOUD_CONTROLLER_ALIASES[n] ?? n;
  const bad = list.filter((n) => n !== '*' && !known.has(canonical(n.replace(/^-/, ''))));
  if (bad.length) {
    throw new Error(
      `"${bad[0]}" is not in the list of known controllers; known controllers: ${[...CLOUD_CONTROLLER_NAMES, ...Object.keys(CLOUD_CONTROLLER_ALIASES)].sort().join(', ')}`,
    );
  }
  const on = new Set<string>();
  const star = list.includes('*');
  for (const name of CLOUD_CONTROLLER_NAMES) {
    if (list.includes(`-${name}`) || Object.entries(CLOUD_CONTROLLER_ALIASES).some(([a, c]) => c === name && list.includes(`-${a}`))) continue;
    if (star || list.includes(name) || Object.entries(CLOUD_CONTROLLER_ALIASES).some(([a, c]) => c === name && list.includes(a))) on.add(name);
  }
  return on;
}

export interface CloudControllersOptions {
  readonly provider: CloudProvider;
  /** --controllers (default `*`). */
  readonly controllers?: readonly string[];
  /** --cluster-name (default kubernetes). */
  readonly clusterName?: string;
  /** --concurrent-service-syncs (default 1). */
  readonly concurrentServiceSyncs?: number;
  /** --concurrent-node-syncs (default 1). */
  readonly concurrentNodeSyncs?: number;
  /** --node-monitor-period (default 5 s). */
  readonly nodeMonitorPeriodMs?: number;
  /** --node-status-update-frequency (default 5 min). */
  readonly nodeStatusUpdateFrequencyMs?: number;
  /** --configure-cloud-routes (default true). */
  readonly configureCloudRoutes?: boolean;
  /** --allocate-node-cidrs (default false). */
  readonly allocateNodeCIDRs?: boolean;
  /** --cluster-cidr. */
  readonly clusterCIDR?: string;
  /** --route-reconciliation-period (default 10 s). */
  readonly routeReconciliationPeriodMs?: number;
  /** The bound on each load balancer call (kplane's; default 5 min): a call that hangs fails the sync, retried with backoff. */
  readonly providerCallTimeoutMs?: number;
  /** Service controller retry backoff (upstream: 5 s to 300 s); tests shorten it. */
  readonly serviceRetryDelayMs?: { readonly min: number; readonly max: number };
  readonly log?: (msg: string) => void;
}

/**
 * The selected cloud controllers as ControllerFactories (to hand to `runControllers` or a control
 * plane's controller list). The route controller is left out, with a log line as upstream's, unless
 * routes are configured (--configure-cloud-routes, --allocate-node-cidrs and --cluster-cidr).
 */
export function cloudControllers(opts: CloudControllersOptions): ControllerFactory[] {
  const on = selectCloudControllers(opts.controllers ?? ['*']);
  const log = opts.log ?? (() => {});
  const out: ControllerFactory[] = [];
  if (on.has(CLOUD_NODE_CONTROLLER)) {
    out.push(
      cloudNodeController({
        provider: opts.provider,
        ...(opts.concurrentNodeSyncs ? { workers: opts.concurrentNodeSyncs } : {}),
        ...(opts.nodeStatusUpdateFrequencyMs ? { nodeStatusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs } : {}),
      }),
    );
  }
  if (on.has(CLOUD_NODE_LIFECYCLE_CONTROLLER)) {
    out.push(cloudNodeLifecycleController({ provider: opts.provider, ...(opts.nodeMonitorPeriodMs ? { nodeMonitorPeriodMs: opts.nodeMonitorPeriodMs } : {}) }));
  }
  if (on.has(SERVICE_LB_CONTROLLER)) {
    out.push(
      serviceLBController({
        provider: opts.provider,
        clusterName: opts.clusterName ?? 'kubernetes',
        ...(opts.concurrentServiceSyncs ? { workers: opts.concurrentServiceSyncs } : {}),
        ...(opts.providerCallTimeoutMs ? { providerCallTimeoutMs: opts.providerCallTimeoutMs } : {}),
        ...(opts.serviceRetryDelayMs ? { minRetryDelayMs: opts.serviceRetryDelayMs.min, maxRetryDelayMs: opts.serviceRetryDelayMs.max } : {}),
      }),
    );
  }
  if (on.has(NODE_ROUTE_CONTROLLER)) {
    if (!(opts.configureCloudRoutes ?? true)) {
      log(`Will not configure cloud provider routes, --configure-cloud-routes: false`);
    } else if (!opts.allocateNodeCIDRs || !opts.clusterCIDR) {
      log(`Will not configure cloud provider routes for allocate-node-cidrs: ${opts.allocateNodeCIDRs ?? false}, configure-cloud-routes: true.`);
    } else if (!opts.provider.routes()) {
      log('--configure-cloud-routes is set, but cloud provider does not support routes. Will not configure cloud provider routes.');
    } else {
      out.push(
        routeController({
          provider: opts.provider,
          clusterCIDR: opts.clusterCIDR,
          clusterName: opts.clusterName ?? 'kubernetes',
          ...(opts.routeReconciliationPeriodMs ? { reconciliationPeriodMs: opts.routeReconciliationPeriodMs } : {}),
        }),
      );
    }
  }
  return out;
}

export interface StartCloudControllersOptions extends CloudControllersOptions {
  /** The manager's client: informers, leader election, and (without clientFor) every controller. */
  readonly client: KubeClient;
  /** A client per controller (its own identity), e.g. from `serviceAccountClients`. */
  readonly clientFor?: (controller: ControllerFactory) => KubeClient | undefined;
  /** On a Lease (upstream: kube-system/cloud-controller-manager); without it everything runs at once. */
  readonly leaderElection?: ManagerLeaderElection;
  readonly metrics?: Registry;
}

export interface RunningCloudControllers extends RunningControllers {
  /** The controllers that run (the route controller may have been left out). */
  readonly names: readonly string[];
}

/**
 * Initializes the provider (once, with a client builder) and runs the selected cloud controllers
 * on one Manager until `stop()`: what `kplane cloud-controller-manager` does, for a library user or
 * a test running them in process.
 */
export async function startCloudControllers(opts: StartCloudControllersOptions): Promise<RunningCloudControllers> {
  const controllers = cloudControllers(opts);
  const stopProvider = new AbortController();
  await opts.provider.initialize({ client: () => opts.client }, stopProvider.signal);
  const running = runControllers({
    client: opts.client,
    controllers,
    ...(opts.clientFor ? { clientFor: opts.clientFor } : {}),
    ...(opts.leaderElection ? { leaderElection: opts.leaderElection } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  const done = running.done.finally(() => stopProvider.abort());
  done.catch(() => {});
  return {
    manager: running.manager,
    done,
    names: controllers.map((c) => c.controllerName),
    async stop() {
      await running.stop();
      stopProvider.abort();
    },
  };
}
