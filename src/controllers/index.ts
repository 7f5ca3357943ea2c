// The generic controllers (KEP-4080) and how to run them: `runControllers` starts a Manager over
// any KubeClient — the loopback client inside `kplane serve`, the HTTPS client in
// `kplane controller-manager` — so the same controller code runs in and out of process.
import type { Registry } from 'prom-client';
import type { KubeClient } from '../client/types.js';
import { Manager, type ManagerLeaderElection } from './runtime/manager.js';
import type { ControllerFactory } from './types.js';
import { namespaceDeletion } from './namespace/index.js';
import { garbageCollector } from './gc/index.js';
import { clusterRoleAggregation } from './clusterroleaggregation/index.js';
import { rootCACertPublisher } from './rootcacert/index.js';
import { serviceAccountController, serviceAccountTokenController } from './serviceaccount/index.js';
import { resourceQuotaController } from './resourcequota/index.js';

export { namespaceDeletion } from './namespace/index.js';
export type { NamespaceDeletionOptions } from './namespace/index.js';
export { garbageCollector } from './gc/index.js';
export { clusterRoleAggregation } from './clusterroleaggregation/index.js';
export type { GarbageCollectorOptions } from './gc/index.js';
export { rootCACertPublisher, ROOT_CA_CONFIGMAP } from './rootcacert/index.js';
export { serviceAccountController, serviceAccountTokenController } from './serviceaccount/index.js';
export { resourceQuotaController, ResourceQuotaController } from './resourcequota/index.js';
export type { ResourceQuotaControllerOptions } from './resourcequota/index.js';
export { controllerFactory } from './types.js';
export { endpointSliceController } from './endpointslice/index.js';
export type { EndpointSliceControllerOptions } from './endpointslice/index.js';
export { endpointsController } from './endpoints/index.js';
export type { EndpointsControllerOptions } from './endpoints/index.js';
export { NodeSim } from './nodesim/index.js';
export type { NodeSimOptions, SimNodeInfo } from './nodesim/index.js';
export {
  CONTROLLER_SERVICE_ACCOUNT_NAMESPACE,
  controllerServiceAccountNames,
  controllerServiceAccountUser,
  ensureControllerServiceAccounts,
  serviceAccountClients,
} from './credentials.js';
export type { ServiceAccountClients, ServiceAccountClientsOptions } from './credentials.js';
export { featureReporter, stabilityOf } from './featurereporter.js';
export { dynamicFeatures, invalidDynamicFeatures, type DynamicFeatures, type DynamicFeaturesOptions } from './dynamicfeatures.js';
export * from './featureflow/index.js';
export type { FeatureReporter, FeatureReporterOptions } from './featurereporter.js';
export type { ControllerContext, ControllerFactory } from './types.js';
// The controller runtime too, so `kplane/controllers` is all a controller author imports.
export * from './runtime/index.js';

/**
 * The built-in controllers: namespace deletion, garbage collection, the ServiceAccount controller
 * (`default` in every namespace), the token controller (fills `kubernetes.io/service-account-token`
 * Secrets), the root CA publisher (`kube-root-ca.crt` in every namespace), ClusterRole
 * aggregation and the resource quota controller (ResourceQuota status).
 */
export function defaultControllers(): ControllerFactory[] {
  return [
    namespaceDeletion(),
    garbageCollector(),
    serviceAccountController(),
    serviceAccountTokenController(),
    rootCACertPublisher(),
    clusterRoleAggregation(),
    resourceQuotaController(),
  ];
}

export interface RunControllersOptions {
  /** The manager's own client: shared informers and leader election (kube-controller-manager's root client). */
  readonly client: KubeClient;
  /**
   * The client a controller acts with (kube-controller-manager's --use-service-account-credentials:
   * one identity per controller, see `serviceAccountClients`). Absent, or undefined for a
   * controller: `client`.
   */
  readonly clientFor?: (controller: ControllerFactory) => KubeClient | undefined;
  readonly controllers: readonly ControllerFactory[];
  /** Without it every controller runs at once (one process, e.g. inside `kplane serve`). */
  readonly leaderElection?: ManagerLeaderElection;
  readonly metrics?: Registry;
  readonly log?: (msg: string) => void;
  /** See ControllerContext.rootCA. */
  readonly rootCA?: string;
  /** See ControllerContext.serviceAccountTokenSigner. */
  readonly serviceAccountTokenSigner?: (claims: object) => Promise<string>;
}

export interface RunningControllers {
  readonly manager: Manager;
  /** Settles when the manager stops (rejects when a controller failed). */
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/** Builds every controller on one Manager and starts it. */
export function runControllers(opts: RunControllersOptions): RunningControllers {
  const log = opts.log ?? (() => {});
  const manager = new Manager({
    client: opts.client,
    log,
    ...(opts.leaderElection ? { leaderElection: opts.leaderElection } : {}),
    ...(opts.metrics ? { registry: opts.metrics } : {}),
  });
  for (const f of opts.controllers) {
    manager.add(
      f({
        client: opts.clientFor?.(f) ?? opts.client,
        manager,
        log,
        ...(opts.metrics ? { metrics: opts.metrics } : {}),
        ...(opts.rootCA !== undefined ? { rootCA: opts.rootCA } : {}),
        ...(opts.serviceAccountTokenSigner ? { serviceAccountTokenSigner: opts.serviceAccountTokenSigner } : {}),
      }),
    );
  }
  const abort = new AbortController();
  const done = manager.start(abort.signal);
  // An unobserved rejection must not crash the process; callers that care await `done`.
  done.catch(() => {});
  return {
    manager,
    done,
    async stop() {
      abort.abort();
      await done.catch(() => {});
    },
  };
}
