// The contract of the provider-neutral CCM test kit (issue 26; research ccm.md §5.2–5.3): what a
// driver offers (infrastructure actions, ground truth, an external client), what a test declares
// it needs, and what a test receives. The runner (runner.ts) and the catalogue (catalogue/) are
// built against this file; a provider author implements `CcmTestDriver` and nothing else.
import type { KubeObject } from '../apimachinery/types.js';
import type { KubeClient } from '../client/index.js';

/** What a driver can do or the cluster offers; a test needing one the driver lacks is skipped. */
export const CAPABILITIES = [
  'lb.tcp',
  'lb.udp',
  'lb.mixedProtocol',
  'lb.sessionAffinity.clientIP',
  'lb.sourceRanges',
  'lb.etpLocal.healthCheckNodePort',
  'lb.clientIPPreserved',
  'lb.withoutNodePorts',
  'lb.loadBalancerIP',
  'lb.ingressHostname',
  'lb.ipv4',
  'lb.ipv6',
  'lb.dualStack',
  'instances.delete',
  'instances.shutdown',
  'instances.reboot',
  'routes',
  'upgrade',
  'lb.survivesCcmRestart',
  'dataPlane',
  'podDial',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** How long the suite waits for the cloud; milliseconds, named as upstream's e2e framework's timeouts. */
export interface CcmTimeouts {
  /** k/k GetServiceLoadBalancerCreationTimeout (20m there). */
  lbCreateMs: number;
  /** k/k LoadBalancerLagTimeoutDefault (2m there). */
  lbLagMs: number;
  /** k/k GetServiceLoadBalancerPropagationTimeout. */
  lbPropagationMs: number;
  /** k/k nodes.go: a deleted instance's node is gone within this (5m there). */
  nodeDeletionMs: number;
  /** k/k KubeProxyLagTimeout / endpoint lag: a Service change reaches the data plane within this. */
  proxyLagMs: number;
}

export type V1Node = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
export type V1Service = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

export interface InstanceMetadataView {
  providerID?: string;
  instanceType?: string;
  zone?: string;
  region?: string;
  addresses?: Array<{ type: string; address: string }>;
}

/** Infrastructure actions on the instances behind Nodes (k/k ProviderInterface.DeleteNode and friends). */
export interface NodeInfra {
  /** Delete the backing instance so the cloud no longer reports it. */
  deleteInstance(node: V1Node): Promise<void>;
  /** Ground truth from the cloud, independent of the CCM under test. */
  instanceExists(node: V1Node): Promise<boolean>;
  /** Capability `instances.shutdown`: the node should get the shutdown taint. */
  shutdownInstance?(node: V1Node): Promise<void>;
  startInstance?(node: V1Node): Promise<void>;
  /** Capability `instances.reboot`: the node goes NotReady then Ready again, its pods running again. */
  rebootInstance?(node: V1Node): Promise<void>;
  /** What the CCM should have written for this node (providerID, labels' sources, addresses). */
  expectedMetadata?(node: V1Node): Promise<InstanceMetadataView>;
}

/** The provider-side view of a Service's load balancer. */
export interface CloudLoadBalancerView {
  name: string;
  frontends: Array<{ address: string; port: number; protocol: 'TCP' | 'UDP' | 'SCTP' }>;
  backends: Array<{ nodeName?: string; address: string; port: number; healthy?: boolean }>;
  healthCheck?: { port: number; path: string };
  sourceRanges?: string[];
  sessionAffinity?: 'None' | 'ClientIP';
}

export interface LoadBalancerInfra {
  /** The provider-side load balancer for a Service, or undefined when the cloud holds none. */
  describe(svc: V1Service): Promise<CloudLoadBalancerView | undefined>;
  /** Best-effort leak clean-up after a test (k/k CleanupServiceResources). */
  forceCleanup(svc: V1Service): Promise<void>;
  /** Every load balancer the cloud holds (leak checks). */
  list?(): Promise<CloudLoadBalancerView[]>;
}

export interface ProbeResult {
  ok: boolean;
  status?: number;
  body?: string;
  /** 'timeout' | 'refused' | 'reset' | another message. */
  error?: string;
}

/** A client outside the cluster, as the k/k tests probe from the ginkgo process. */
export interface ExternalClient {
  httpGet(host: string, port: number, path: string, opts?: { timeoutMs?: number }): Promise<ProbeResult>;
  udpExchange(host: string, port: number, payload: string, opts?: { timeoutMs?: number }): Promise<ProbeResult>;
  tcpConnect(host: string, port: number, opts?: { timeoutMs?: number }): Promise<ProbeResult>;
  /** The source addresses backends see when the client IP is preserved. */
  sourceIPs(): string[];
}

export type V1Pod = KubeObject & { spec?: Record<string, unknown>; status?: { podIP?: string } & Record<string, unknown> };

/** One agnhost netexec `/dial` (test/images/agnhost/netexec): `tries` requests from the pod to host:port. */
export interface PodDialRequest {
  host: string;
  port: number;
  /** Default 'http'. */
  protocol?: 'http' | 'udp';
  /** The HTTP path without its leading slash ("hostname", "clientip", "echo?msg=x"), or the UDP payload ("hostname"). */
  request: string;
  /** Default 1. */
  tries?: number;
}

/** netexec's answer: the bodies of the successful tries and the error of each failed one. */
export interface PodDialResult {
  /** netexec lists them only when the last try answered (its quirk, kept): empty otherwise. */
  responses: string[];
  errors: string[];
}

/**
 * A client inside the cluster (capability `podDial`): a pod running agnhost netexec with
 * --http-port=8080 (the kit's client pods) makes the request, so it leaves the pod as the pod's own
 * packets do: from the pod's IP, through the service proxy of the pod's node. k/k's tests exec curl
 * in a pod or call netexec's /dial through the API server's pods/proxy; a driver for a real
 * cluster does the latter (drivers/pod-client.ts), the loopback driver calls the pod directly.
 */
export interface PodClient {
  dial(pod: V1Pod, req: PodDialRequest): Promise<PodDialResult>;
}

/** Replaces the control plane or the CCM with another build or flags (capability `upgrade`). */
export interface UpgradeInfra {
  upgradeControlPlane?(): Promise<void>;
  upgradeCcm?(): Promise<void>;
  downgradeCcm?(): Promise<void>;
}

/** What a provider author implements. */
export interface CcmTestDriver {
  readonly name: string;
  readonly capabilities: ReadonlySet<Capability>;
  readonly timeouts: CcmTimeouts;
  readonly nodes?: NodeInfra;
  readonly loadBalancers?: LoadBalancerInfra;
  readonly externalClient?: ExternalClient;
  readonly upgrade?: UpgradeInfra;
  /** Capability `podDial`: requests made from inside a pod. */
  readonly podClient?: PodClient;
  /**
   * An address not assigned to any node that the cluster's service proxy answers on when a
   * Service lists it in `externalIPs`, and that `externalClient` can reach (svc/externalip's data
   * plane). Without one that half fails with a message saying so; it never probes a default.
   */
  readonly testExternalIP?: string;
  beforeEach?(scope: TestScope): Promise<void>;
  afterEach?(scope: TestScope): Promise<void>;
}

export interface TestScope {
  readonly testId: string;
  /** A namespace created for this test and deleted after it. */
  readonly namespace: string;
}

/** What a test receives. */
export interface SuiteEnv extends TestScope {
  readonly client: KubeClient;
  readonly driver: CcmTestDriver;
  readonly timeouts: CcmTimeouts;
  readonly signal: AbortSignal;
  log(message: string): void;
}

export type InfraNeed = 'nodes' | 'loadBalancers' | 'externalClient' | 'upgrade' | 'podClient';

/** One test of the catalogue: an upstream test split into a control-plane and a data-plane half. */
export interface CcmTestCase {
  /** Stable, e.g. "lb/finalizer". */
  readonly id: string;
  /** The upstream ginkgo text it comes from. */
  readonly upstream: string;
  /** e.g. "k/k test/e2e/network/loadbalancer.go". */
  readonly source: string;
  readonly labels?: readonly string[];
  readonly needs: {
    readonly capabilities: readonly Capability[];
    readonly infra?: readonly InfraNeed[];
    readonly minNodes?: number;
    /** Runs serially, after the others. */
    readonly disruptive?: boolean;
    readonly slow?: boolean;
    /** What the data-plane half needs on top (e.g. podDial and a podClient, lb.survivesCcmRestart); the control-plane half runs without. */
    readonly dataPlane?: { readonly capabilities?: readonly Capability[]; readonly infra?: readonly InfraNeed[] };
  };
  /** API semantics and what the CCM wrote: runs with any driver that has the capabilities. */
  controlPlane?(env: SuiteEnv): Promise<void>;
  /** Packets: runs only with capability `dataPlane` and an external client. */
  dataPlane?(env: SuiteEnv): Promise<void>;
}

export type TestOutcome = 'passed' | 'failed' | 'skipped';

export interface TestResult {
  readonly id: string;
  readonly half: 'controlPlane' | 'dataPlane';
  readonly outcome: TestOutcome;
  readonly durationMs: number;
  /** Failure message, or for a skip the missing capability/infra. */
  readonly message?: string;
}

export interface RunSuiteOptions {
  client: KubeClient;
  driver: CcmTestDriver;
  tests?: readonly CcmTestCase[];
  /** Ids or labels (substring of an id, or an exact label). */
  focus?: readonly string[];
  skip?: readonly string[];
  timeouts?: Partial<CcmTimeouts>;
  signal?: AbortSignal;
  onResult?(r: TestResult): void;
  log?(message: string): void;
}
