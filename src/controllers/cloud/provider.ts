// The cloud-provider interface: the TypeScript shape of k8s.io/cloud-provider's cloud.go. A provider
// is a library value: the cloud controllers (service, node, node lifecycle, route) call it, and a
// third party registers its own with `registerCloudProvider` and runs the same controllers.
// Go's `(impl, ok)` pairs become `undefined` when a provider does not support a part; Go's sentinel
// errors (errors.Is) become classes so `instanceof` works across packages.
import type { KubeObject } from '../../apimachinery/types.js';
import type { LoadBalancerIngress, Service } from '../../registry/core/services/types.js';

export type { Service, LoadBalancerIngress };

/** core/v1 NodeAddress. */
export interface NodeAddress {
  /** Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS. */
  type: string;
  address: string;
}

/** core/v1 Taint. */
export interface Taint {
  key: string;
  value?: string;
  /** NoSchedule, PreferNoSchedule or NoExecute. */
  effect: string;
  timeAdded?: string;
}

/** The parts of core/v1 Node the cloud controllers read and write. */
export type Node = KubeObject & {
  spec?: { providerID?: string; podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; unschedulable?: boolean };
  status?: {
    addresses?: NodeAddress[];
    conditions?: { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string }[];
    nodeInfo?: Record<string, string>;
  };
};

/** core/v1 LoadBalancerStatus. */
export interface LoadBalancerStatus {
  ingress?: LoadBalancerIngress[];
}

/** Stands in for Go's context.Context: cancelled when the caller gives up (shutdown, deadline). */
export interface Ctx {
  signal: AbortSignal;
}

export interface LoadBalancer {
  /** Go's GetLoadBalancer: whether it exists, and its status if so. */
  getLoadBalancer(ctx: Ctx, clusterName: string, service: Readonly<Service>): Promise<{ exists: boolean; status?: LoadBalancerStatus }>;
  getLoadBalancerName(ctx: Ctx, clusterName: string, service: Readonly<Service>): string;
  ensureLoadBalancer(ctx: Ctx, clusterName: string, service: Readonly<Service>, nodes: readonly Readonly<Node>[]): Promise<LoadBalancerStatus>;
  updateLoadBalancer(ctx: Ctx, clusterName: string, service: Readonly<Service>, nodes: readonly Readonly<Node>[]): Promise<void>;
  ensureLoadBalancerDeleted(ctx: Ctx, clusterName: string, service: Readonly<Service>): Promise<void>;
}

export interface InstanceMetadata {
  providerID: string;
  instanceType?: string;
  nodeAddresses: NodeAddress[];
  zone?: string;
  region?: string;
  additionalLabels?: Record<string, string>;
}

export interface InstancesV2 {
  instanceExists(ctx: Ctx, node: Readonly<Node>): Promise<boolean>;
  instanceShutdown(ctx: Ctx, node: Readonly<Node>): Promise<boolean>;
  instanceMetadata(ctx: Ctx, node: Readonly<Node>): Promise<InstanceMetadata>;
}

export interface Zone {
  failureDomain: string;
  region: string;
}

/** Deprecated upstream; consulted only when a provider has no InstancesV2. */
export interface Zones {
  getZone(ctx: Ctx): Promise<Zone>;
  getZoneByProviderID(ctx: Ctx, providerID: string): Promise<Zone>;
  getZoneByNodeName(ctx: Ctx, nodeName: string): Promise<Zone>;
}

export interface Route {
  name: string;
  targetNode: string;
  enableNodeAddresses?: boolean;
  targetNodeAddresses?: NodeAddress[];
  destinationCIDR: string;
  blackhole?: boolean;
}

export interface Routes {
  listRoutes(ctx: Ctx, clusterName: string): Promise<Route[]>;
  createRoute(ctx: Ctx, clusterName: string, nameHint: string, route: Route): Promise<void>;
  deleteRoute(ctx: Ctx, clusterName: string, route: Route): Promise<void>;
}

/** What `initialize` gets: clients for the controllers, under their own names (user agents). */
export interface ControllerClientBuilder {
  /** A client acting as `name` (upstream: the controller's ServiceAccount or user agent). */
  client(name: string): unknown;
}

export interface CloudProvider {
  /** Called once before any controller starts; `stop` aborts when the manager stops. */
  initialize(clients: ControllerClientBuilder, stop: AbortSignal): void | Promise<void>;
  loadBalancer(): LoadBalancer | undefined;
  instancesV2(): InstancesV2 | undefined;
  zones(): Zones | undefined;
  routes(): Routes | undefined;
  providerName(): string;
  hasClusterID(): boolean;
}

/** The provider says another component does this (the caller skips it without error). */
export class ImplementedElsewhereError extends Error {
  constructor(message = 'implemented elsewhere') {
    super(message);
    this.name = 'ImplementedElsewhereError';
  }
}

/** Go's cloudprovider.InstanceNotFound. */
export class InstanceNotFoundError extends Error {
  constructor(message = 'instance not found') {
    super(message);
    this.name = 'InstanceNotFoundError';
  }
}

/** Go's cloudprovider.NotImplemented. */
export class NotImplementedError extends Error {
  constructor(message = 'unimplemented') {
    super(message);
    this.name = 'NotImplementedError';
  }
}

/** Go's api.RetryError: retry after `retryAfterMs` without counting it as a failure. */
export class RetryError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
    this.name = 'RetryError';
  }
}

// Well-known keys (k8s.io/cloud-provider/api, service helpers, well_known_taints.go).
export const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
export const TAINT_UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';
export const TAINT_SHUTDOWN = 'node.cloudprovider.kubernetes.io/shutdown';
export const ANNOTATION_PROVIDED_NODE_IP = 'alpha.kubernetes.io/provided-node-ip';
export const LABEL_EXCLUDE_FROM_LB = 'node.kubernetes.io/exclude-from-external-load-balancers';
export const TAINT_TO_BE_DELETED_BY_CA = 'ToBeDeletedByClusterAutoscaler';

/** k8s.io/cloud-provider's DefaultLoadBalancerName: "a" + the Service's UID without dashes, at most 32 characters. */
export function defaultLoadBalancerName(service: Readonly<Service>): string {
  return `a${(service.metadata?.uid ?? '').replaceAll('-', '')}`.slice(0, 32);
}

/** A named provider factory; `config` is the text of `--cloud-config` when given. */
export type CloudProviderFactory = (config: string | undefined) => CloudProvider | Promise<CloudProvider>;

const providers = new Map<string, CloudProviderFactory>();

/** Upstream's cloudprovider.RegisterCloudProvider. A second registration of a name throws. */
export function registerCloudProvider(name: string, factory: CloudProviderFactory): void {
  if (providers.has(name)) throw new Error(`cloud provider ${JSON.stringify(name)} was registered twice`);
  providers.set(name, factory);
}

/** The registered names, sorted (for `--cloud-provider` errors and help). */
export function cloudProviderNames(): string[] {
  return [...providers.keys()].sort();
}

/** Upstream's InitCloudProvider: undefined when no provider has that name. */
export async function newCloudProvider(name: string, config?: string): Promise<CloudProvider | undefined> {
  const factory = providers.get(name);
  return factory ? await factory(config) : undefined;
}
