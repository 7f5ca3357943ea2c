// A driver for a real cloud, as a skeleton to copy: every place a provider fills in says what the
// suite expects of it. A provider repository keeps its driver in its own tree and points the
// capability file's `driver:` at the module (the kit loads the module's default export, a
// DriverFactory, or a `driver` export). Declare only the capabilities the cloud really has: a test
// needing another one is reported skipped with the missing capability, never failed.
//
//   # ccm-testdriver.yaml
//   driver: ./test/ccm/my-cloud-driver.ts
//   config: { region: eu-west-1, clusterTag: e2e-123 }
//   capabilities: [lb.tcp, lb.udp, lb.sessionAffinity.clientIP, instances.delete, dataPlane]
//   timeouts: { lbCreate: 20m, lbLag: 10m, lbPropagation: 10m, nodeDeletion: 5m, proxyLag: 5m }
//
// This file is not registered as a built-in driver; its factory throws until it is filled in.
import type { Capability, CcmTestDriver, CloudLoadBalancerView, V1Node, V1Service } from '../types.js';
import type { DriverContext } from './context.js';
import { localExternalClient } from './external.js';
import { apiServerPodClient } from './pod-client.js';

/** Upstream's defaults (k/k test/e2e/framework/service/const.go, cloud/nodes.go). */
export const CLOUD_TIMEOUTS = {
  /** GetServiceLoadBalancerCreationTimeout: 20 minutes (2 hours above 100 nodes). */
  lbCreateMs: 20 * 60_000,
  /** LoadBalancerLagTimeoutDefault (AWS: 10 minutes). */
  lbLagMs: 2 * 60_000,
  /** GetServiceLoadBalancerPropagationTimeout. */
  lbPropagationMs: 10 * 60_000,
  /** cloud/nodes.go: the Node of a deleted instance is gone within 5 minutes. */
  nodeDeletionMs: 5 * 60_000,
  /** KubeProxyLagTimeout. */
  proxyLagMs: 5 * 60_000,
};

const TODO = (what: string): never => {
  throw new Error(`skeleton driver: ${what} is not implemented; fill it in for your cloud (src/ccm-testing/drivers/skeleton.ts)`);
};

export async function skeletonDriver(ctx: DriverContext): Promise<CcmTestDriver> {
  // Read what the cloud's SDK needs from ctx.config (region, credentials' profile, cluster tag);
  // ctx.client is the cluster's API client, for anything the driver must read from the cluster.
  void ctx;
  const capabilities = new Set<Capability>([
    // 'lb.tcp', 'lb.udp', 'lb.sessionAffinity.clientIP', 'lb.etpLocal.healthCheckNodePort',
    // 'lb.clientIPPreserved' (only if the ingress ipMode is VIP), 'instances.delete', 'dataPlane',
    // 'upgrade' with 'lb.survivesCcmRestart' (a cloud's load balancers outlive the CCM),
    // 'podDial' (with podClient below), ...
  ]);
  return {
    name: 'my-cloud',
    capabilities,
    timeouts: CLOUD_TIMEOUTS,
    nodes: {
      // Delete the VM behind the Node (k/k ProviderInterface.DeleteNode). Its kubelet stops with it;
      // the CCM must then delete the Node within nodeDeletionMs.
      deleteInstance: async (node: V1Node) => TODO(`deleteInstance(${node.metadata?.name})`),
      // Ground truth from the cloud's API, not from the CCM under test (spec.providerID names the VM).
      instanceExists: async (node: V1Node) => TODO(`instanceExists(${String(node.spec?.providerID)})`),
      // Optional (capability instances.shutdown): stop the VM; the Node must get the shutdown taint.
      // shutdownInstance: async (node) => { ... },
      // startInstance: async (node) => { ... },
      // Optional (capability instances.reboot): a clean reboot; the Node must be Ready again.
      // rebootInstance: async (node) => { ... },
    },
    loadBalancers: {
      // The cloud's own view of the Service's load balancer: frontends (address, port, protocol),
      // backends (node, address, port, healthy), health check, source ranges, session affinity.
      // Undefined when the cloud holds none: the suite checks deletions with it.
      describe: async (svc: V1Service): Promise<CloudLoadBalancerView | undefined> => TODO(`describe(${svc.metadata?.namespace}/${svc.metadata?.name})`),
      // Best effort after each test: delete whatever the cloud still holds for the Service
      // (k/k CleanupServiceResources), so a failed test leaks nothing billable.
      forceCleanup: async (svc: V1Service) => TODO(`forceCleanup(${svc.metadata?.name})`),
    },
    // A client outside the cluster (capability dataPlane). This process's sockets do when the test
    // host routes to the load balancers' addresses; otherwise run the probes from a bastion.
    externalClient: localExternalClient(),
    // A client inside the cluster (capability podDial): the kit's client pods run agnhost netexec,
    // and their /dial is called through the API server's pods/proxy subresource, so the test host
    // needs no route to pod IPs (RBAC: get pods/proxy). Requests leave the pod as its own packets do.
    podClient: apiServerPodClient(ctx.client),
    // Per-test hooks: e.g. check for leaked load balancers tagged with scope.namespace.
    // beforeEach: async (scope) => {}, afterEach: async (scope) => {},
  };
}
