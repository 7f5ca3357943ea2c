// node-sim (kwok-like): N simulated Nodes in one process whose Pods really serve. It registers the
// Nodes (as a kubelet with --cloud-provider=external: tainted until the cloud node controller
// initializes them), heartbeats their Ready condition and their Leases in kube-node-lease, places
// unscheduled Pods on its ready, untainted Nodes round-robin (pods/binding, as a scheduler), and
// "runs" the Pods on its Nodes: an IP from the Node's /24, a netexec-compatible server per
// container port (netexec.ts), status Running with kubelet's conditions, readiness probes
// (httpGet, tcpSocket) honoured roughly, and graceful deletion: the servers keep answering for the
// grace period (the endpoint is terminating and serving), then stop and the Pod is deleted.
//
// Cost: one pod informer and one node informer (filtered in process), one heartbeat timer and one
// probe ticker for everything; per pod only its listening sockets (and a queue timer while
// terminating). A restart re-adopts its Nodes and the Pods bound to them (same IPs, new servers).
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { rfc3339 } from '../../apimachinery/times.js';
import { RestClient } from '../../client/rest.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { asLogger, type Logger } from '../../golang/klog.js';
import { Controller } from '../runtime/controller.js';
import { Informer, keyOf } from '../runtime/informer.js';
import { formatMicroTime, LEASES } from '../runtime/leaderelection.js';
import { nodeIP, parseLoopbackCIDR, podCIDR, PodIPPool } from './addresses.js';
import { type PodNetwork, type PodRoute, startHttp, startUdp, type NetexecServer } from './netexec.js';
import { connect } from 'node:net';

export { startHttp, startUdp } from './netexec.js';
export type { NetexecServer, PodNetwork, PodRoute } from './netexec.js';
export { nodeIP, podCIDR, parseLoopbackCIDR, PodIPPool } from './addresses.js';

const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
const PODS: GVR = { group: '', version: 'v1', resource: 'pods' };
const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** The taint a kubelet with --cloud-provider=external registers with (k8s.io/cloud-provider/api). */
export const TAINT_UNINITIALIZED = 'node.cloudprovider.kubernetes.io/uninitialized';
const DEFAULT_SCHEDULER = 'default-scheduler';
/** agnhost netexec's defaults (--http-port, --udp-port). */
const NETEXEC_HTTP_PORT = 8080;
const NETEXEC_UDP_PORT = 8081;

interface Taint {
  key?: string;
  value?: string;
  effect?: string;
}
interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
type Node = KubeObject & {
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; unschedulable?: boolean };
  status?: { conditions?: { type?: string; status?: string }[]; addresses?: { type?: string; address?: string }[] };
};
interface Probe {
  httpGet?: { path?: string; port?: number | string; host?: string };
  tcpSocket?: { port?: number | string };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}
interface Container {
  name?: string;
  image?: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort?: number; protocol?: string }[];
  readinessProbe?: Probe;
}
type Condition = { type: string; status: string; lastTransitionTime?: string; lastProbeTime?: string | null };
type Pod = KubeObject & {
  spec?: { nodeName?: string; schedulerName?: string; containers?: Container[]; tolerations?: Toleration[]; hostname?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: Condition[];
    containerStatuses?: { name?: string; ready?: boolean }[];
    startTime?: string;
  };
};

/** A node's agent (its kube-proxy), as `onNodeReady` starts it. */
export interface NodeAgent {
  stop(): Promise<void>;
  /**
   * The node's service proxy, when it can say where its pods' connections to a cluster IP go
   * (NodeProxy.routeFromPod): netexec's /dial in the node's pods asks it.
   */
  readonly proxy?: { routeFromPod?(protocol: 'TCP' | 'UDP', ip: string, port: number, podIP: string): PodRoute };
}

/** What `onNodeReady` is told about a Node once it is registered. */
export interface SimNodeInfo {
  readonly name: string;
  /** Its InternalIP (a loopback address). */
  readonly ip: string;
}

export interface NodeSimOptions {
  readonly client: KubeClient;
  /** How many Nodes (named `<prefix><i>`, i from 0). */
  readonly nodes: number;
  /** Default `sim-`. */
  readonly namePrefix?: string;
  /** Where Node addresses come from (default 127.2.0.0/16; loopback only). */
  readonly nodeCIDR?: string;
  /** Where each Node's /24 pod range comes from (default 127.3.0.0/16; loopback only). */
  readonly podCIDR?: string;
  /** As a kubelet with --cloud-provider=external: new Nodes carry the uninitialized taint. */
  readonly cloudProviderExternal?: boolean;
  /** Ready heartbeats and Lease renewals (default 10 s, the kubelet's). */
  readonly heartbeatIntervalMs?: number;
  /**
   * Called once per Node after it is registered (and again for each re-adopted Node after a
   * restart): the place to start per-node agents (a kube-proxy). What it returns is stopped when
   * node-sim stops or the Node is deleted.
   */
  readonly onNodeReady?: (node: SimNodeInfo) => Promise<NodeAgent>;
  readonly log?: (msg: string) => void;
}

interface SimNode {
  readonly name: string;
  readonly ip: string;
  readonly podCIDR: string;
  readonly pool: PodIPPool;
  readyTransition: string;
  gone: boolean;
  /** Its machine is off (powerOff): no heartbeats, no pods served, no node agent. */
  off: boolean;
  /** powerOff's Unknown conditions are written (until then a repeated powerOff writes them again). */
  offReported?: boolean;
  agent?: NodeAgent;
}

interface ProbeState {
  readonly probe: Probe;
  readonly host: string;
  readonly port: number;
  readonly path?: string;
  nextAt: number;
  successes: number;
  failures: number;
  inFlight: boolean;
}

interface RunningPod {
  readonly uid: string;
  readonly ip: string;
  readonly node: SimNode;
  readonly servers: NetexecServer[];
  readonly startedAt: string;
  readonly probes: ProbeState[];
  ready: boolean;
}

function tolerates(tols: readonly Toleration[], t: Taint): boolean {
  return tols.some((x) => {
    if (x.effect && x.effect !== t.effect) return false;
    if (x.operator === 'Exists') return !x.key || x.key === t.key;
    return x.key === t.key && (x.value ?? '') === (t.value ?? '');
  });
}

/** The ports a pod's containers serve: declared ones, netexec's --http-port/--udp-port, else netexec's defaults. */
export function podPorts(containers: readonly Container[]): { port: number; protocol: 'TCP' | 'UDP' }[] {
  const out = new Map<string, { port: number; protocol: 'TCP' | 'UDP' }>();
  const add = (port: number, protocol: 'TCP' | 'UDP'): void => {
    if (Number.isInteger(port) && port > 0 && port < 65536) out.set(`${protocol}/${port}`, { port, protocol });
  };
  for (const c of containers) {
    for (const p of c.ports ?? []) if (p.protocol !== 'SCTP') add(p.containerPort ?? 0, p.protocol === 'UDP' ? 'UDP' : 'TCP');
    const args = [...(c.command ?? []), ...(c.args ?? [])];
    args.forEach((a, i) => {
      const m = /^--?(http|udp)-port(?:=(\d+))?$/.exec(a);
      if (!m) return;
      const v = Number(m[2] ?? args[i + 1]);
      add(v, m[1] === 'udp' ? 'UDP' : 'TCP');
    });
  }
  if (out.size === 0) {
    add(NETEXEC_HTTP_PORT, 'TCP');
    add(NETEXEC_UDP_PORT, 'UDP');
  }
  return [...out.values()];
}

/**
 * How a pod's own connections leave it (netexec /dial): from its IP, and to a cluster IP through
 * the proxy of its node as it is at the time of the dial (the agent changes across power cycles).
 */
function podNetwork(sn: { readonly agent?: NodeAgent }, podIP: string): PodNetwork {
  return { podIP, route: (protocol, ip, port) => sn.agent?.proxy?.routeFromPod?.(protocol, ip, port, podIP) };
}

const statusCode = (e: unknown): number | undefined => (e instanceof StatusError ? e.code : undefined);

export class NodeSim {
  private readonly log: Logger;
  private readonly nodes = new Map<string, SimNode>();
  private readonly running = new Map<string, RunningPod>();
  private readonly podInformer: Informer<Pod>;
  private readonly nodeInformer: Informer<Node>;
  private readonly controller: Controller;
  private readonly abort = new AbortController();
  private readonly tasks: Promise<unknown>[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private prober: NodeJS.Timeout | undefined;
  private rr = 0;
  private readonly prefix: string;

  constructor(private readonly opts: NodeSimOptions) {
    if (!Number.isInteger(opts.nodes) || opts.nodes < 0) throw new Error(`--nodes must be a non-negative integer, got ${opts.nodes}`);
    this.log = asLogger(opts.log);
    this.prefix = opts.namePrefix ?? 'sim-';
    const nodeCIDR = parseLoopbackCIDR('--node-cidr', opts.nodeCIDR ?? '127.2.0.0/16');
    const pods = parseLoopbackCIDR('--pod-cidr', opts.podCIDR ?? '127.3.0.0/16');
    for (let i = 0; i < opts.nodes; i++) {
      const cidr = podCIDR(pods, i);
      const name = `${this.prefix}${i}`;
      this.nodes.set(name, {
        name,
        ip: nodeIP(nodeCIDR, i),
        podCIDR: cidr,
        pool: new PodIPPool(cidr),
        readyTransition: rfc3339(Date.now()),
        gone: false,
        off: false,
      });
    }
    this.podInformer = new Informer<Pod>({ client: opts.client, gvr: PODS, log: opts.log ?? (() => {}) });
    this.nodeInformer = new Informer<Node>({ client: opts.client, gvr: NODES, log: opts.log ?? (() => {}) });
    this.controller = new Controller({
      name: 'node-sim',
      workers: 8,
      needLeaderElection: false,
      log: opts.log ?? (() => {}),
      reconciler: (key) => this.syncPod(key),
    });
    this.controller.watches(this.podInformer, (p) => (this.concerns(p) ? [keyOf(p)] : []));
    // A Node turning schedulable (the cloud node controller removed its taint) may place waiting pods.
    this.nodeInformer.addEventHandler({
      onUpdate: (_o, n) => {
        if (this.nodes.has(n.metadata?.name ?? '')) this.enqueuePending();
      },
      onDelete: (n) => {
        const sn = this.nodes.get(n.metadata?.name ?? '');
        if (sn) void this.nodeGone(sn);
      },
    });
  }

  /** The simulated Nodes' names and addresses. */
  get nodeList(): SimNodeInfo[] {
    return [...this.nodes.values()].map((n) => ({ name: n.name, ip: n.ip }));
  }

  /** Whether a pod is this simulator's business: on one of its Nodes, or waiting for a scheduler. */
  private concerns(p: Pod): boolean {
    const n = p.spec?.nodeName;
    if (n) return this.nodes.has(n);
    return (p.spec?.schedulerName ?? DEFAULT_SCHEDULER) === DEFAULT_SCHEDULER;
  }

  private enqueuePending(): void {
    for (const p of this.podInformer.store.list()) if (!p.spec?.nodeName && this.concerns(p)) this.controller.enqueue(keyOf(p));
  }

  /** Registers (or re-adopts) the Nodes, then runs the pods; resolves once the Nodes are up. */
  async start(): Promise<void> {
    const signal = this.abort.signal;
    await this.ensureNamespace(NODE_LEASE_NAMESPACE);
    for (const n of this.nodes.values()) await this.register(n);
    this.tasks.push(this.nodeInformer.run(signal), this.podInformer.run(signal));
    if (!(await this.podInformer.waitForSync(signal)) || !(await this.nodeInformer.waitForSync(signal))) return;
    // Pods already running here keep their IPs (claimed before any new pod takes one).
    for (const p of this.podInformer.store.list()) {
      const sn = this.nodes.get(p.spec?.nodeName ?? '');
      if (sn && p.status?.podIP) sn.pool.claim(p.status.podIP);
    }
    this.tasks.push(this.controller.start(signal));
    this.heartbeat = setInterval(() => void this.beat(), this.opts.heartbeatIntervalMs ?? 10_000);
    this.prober = setInterval(() => this.probeDue(), 250);
    for (const n of this.nodes.values()) {
      if (this.opts.onNodeReady && !n.gone) n.agent = await this.opts.onNodeReady({ name: n.name, ip: n.ip });
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearInterval(this.heartbeat);
    clearInterval(this.prober);
    await Promise.allSettled(this.tasks);
    await Promise.allSettled([...this.running.keys()].map((k) => this.stopPod(k)));
    await Promise.allSettled([...this.nodes.values()].flatMap((n) => (n.agent ? [n.agent.stop()] : [])));
  }

  private async ensureNamespace(name: string): Promise<void> {
    try {
      await this.opts.client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (statusCode(e) !== 409) throw e;
    }
  }

  private nodeConditions(n: SimNode): Record<string, unknown>[] {
    const now = rfc3339(Date.now());
    const ok = (type: string, reason: string, message: string): Record<string, unknown> => ({
      type,
      status: 'False',
      lastHeartbeatTime: now,
      lastTransitionTime: n.readyTransition,
      reason,
      message,
    });
    return [
      ok('MemoryPressure', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      ok('DiskPressure', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      ok('PIDPressure', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      {
        type: 'Ready',
        status: 'True',
        lastHeartbeatTime: now,
        lastTransitionTime: n.readyTransition,
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
      },
    ];
  }

  /** Creates the Node (or adopts the one there), writes its status and its Lease. */
  private async register(n: SimNode): Promise<void> {
    const c = this.opts.client;
    let node: Node;
    try {
      node = await c.get<Node>(NODES, undefined, n.name);
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
      node = await c.create<Node>(NODES, undefined, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: n.name,
          labels: {
            'kubernetes.io/hostname': n.name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            'beta.kubernetes.io/os': 'linux',
            'beta.kubernetes.io/arch': 'amd64',
          },
          annotations: {
            'node.alpha.kubernetes.io/ttl': '0',
            ...(this.opts.cloudProviderExternal ? { 'alpha.kubernetes.io/provided-node-ip': n.ip } : {}),
          },
        },
        spec: {
          podCIDR: n.podCIDR,
          podCIDRs: [n.podCIDR],
          ...(this.opts.cloudProviderExternal ? { taints: [{ key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' }] } : {}),
        },
      });
    }
    const resources = { cpu: '32', memory: '256Gi', pods: '250', 'ephemeral-storage': '100Gi' };
    const hasAddresses = (node.status?.addresses ?? []).length > 0;
    await c.patch(
      NODES,
      undefined,
      n.name,
      'merge',
      {
        status: {
          // A cloud node controller may have set addresses already: they are left alone.
          ...(hasAddresses
            ? {}
            : {
                addresses: [
                  { type: 'InternalIP', address: n.ip },
                  { type: 'Hostname', address: n.name },
                ],
              }),
          capacity: resources,
          allocatable: resources,
          conditions: this.nodeConditions(n),
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: {
            machineID: n.name,
            systemUUID: n.name,
            bootID: n.name,
            kernelVersion: 'kplane-sim',
            osImage: 'kplane node-sim',
            containerRuntimeVersion: 'kplane-sim://0.1.0',
            kubeletVersion: 'v1.33.0',
            kubeProxyVersion: '',
            operatingSystem: 'linux',
            architecture: 'amd64',
          },
        },
      },
      { subresource: 'status' },
    );
    await this.renewLease(n, node.metadata?.uid ?? '');
  }

  private async renewLease(n: SimNode, uid?: string): Promise<void> {
    const c = this.opts.client;
    const spec = { holderIdentity: n.name, leaseDurationSeconds: 40, renewTime: formatMicroTime(Date.now()) };
    try {
      await c.patch(LEASES, NODE_LEASE_NAMESPACE, n.name, 'merge', { spec });
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
      const ownerUid = uid ?? this.nodeInformer.store.get(n.name)?.metadata?.uid;
      await c.create(LEASES, NODE_LEASE_NAMESPACE, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: n.name,
          ...(ownerUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: n.name, uid: ownerUid }] } : {}),
        },
        spec,
      });
    }
  }

  private beating = false;

  /** One heartbeat for every Node: the Ready condition and the Lease. */
  private async beat(): Promise<void> {
    if (this.beating) return;
    this.beating = true;
    try {
      const live = [...this.nodes.values()].filter((n) => !n.gone && !n.off);
      for (let i = 0; i < live.length; i += 10) {
        await Promise.all(
          live.slice(i, i + 10).map(async (n) => {
            try {
              await this.opts.client.patch(NODES, undefined, n.name, 'merge', { status: { conditions: this.nodeConditions(n) } }, { subresource: 'status' });
              await this.renewLease(n);
            } catch (e) {
              if (statusCode(e) === 404) await this.nodeGone(n);
              else if (!this.abort.signal.aborted) this.log.error(e, 'Heartbeat failed', 'node', n.name);
            }
          }),
        );
      }
    } finally {
      this.beating = false;
    }
  }

  /**
   * The Node's machine stops (its cloud instance was shut down or deleted): the kubelet stops
   * heartbeating, its pods stop serving (they stay bound, as on a real node), its agent (the node
   * proxy) stops. node-sim then writes what kube-controller-manager's node lifecycle controller
   * writes once the kubelet has been silent for --node-monitor-grace-period: every condition
   * Unknown, reason NodeStatusUnknown (kplane has no such controller, and the cloud node lifecycle
   * controller acts only on Nodes that are not Ready).
   */
  async powerOff(name: string): Promise<void> {
    const n = this.nodes.get(name);
    if (!n || n.gone || (n.off && n.offReported)) return;
    if (!n.off) {
      n.off = true;
      n.offReported = false;
      this.log.info('Node powered off', 'node', name);
      await n.agent?.stop().catch(() => {});
      n.agent = undefined;
      for (const [k, r] of this.running) if (r.node === n) await this.stopPod(k);
      n.readyTransition = rfc3339(Date.now());
    }
    const now = n.readyTransition;
    const unknown = (type: string): Record<string, unknown> => ({
      type,
      status: 'Unknown',
      lastTransitionTime: now,
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
    });
    try {
      await this.opts.client.patch(
        NODES,
        undefined,
        name,
        'strategic',
        { status: { conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'].map(unknown) } },
        { subresource: 'status' },
      );
      n.offReported = true;
    } catch (e) {
      if (statusCode(e) === 404) await this.nodeGone(n);
      else throw e;
    }
  }

  /** The machine starts again: the kubelet registers (Ready), the agent starts, the Node's pods run again. */
  async powerOn(name: string): Promise<void> {
    const n = this.nodes.get(name);
    if (!n || n.gone || !n.off) return;
    n.off = false;
    n.readyTransition = rfc3339(Date.now());
    this.log.info('Node powered on', 'node', name);
    await this.register(n);
    if (this.opts.onNodeReady) n.agent = await this.opts.onNodeReady({ name: n.name, ip: n.ip });
    for (const p of this.podInformer.store.list()) if (p.spec?.nodeName === name) this.controller.enqueue(keyOf(p));
  }

  /** A Node deleted (e.g. by the cloud node lifecycle controller): not registered again, its pods stop. */
  private async nodeGone(n: SimNode): Promise<void> {
    if (n.gone) return;
    n.gone = true;
    this.log.info('Node deleted; no longer simulated', 'node', n.name);
    await n.agent?.stop().catch(() => {});
    n.agent = undefined;
    for (const [k, r] of this.running) if (r.node === n) await this.stopPod(k);
  }

  private schedulable(sn: SimNode, pod: Pod): boolean {
    if (sn.gone || sn.off) return false;
    const node = this.nodeInformer.store.get(sn.name);
    if (!node || node.spec?.unschedulable) return false;
    if (!(node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')) return false;
    const tols = pod.spec?.tolerations ?? [];
    return (node.spec?.taints ?? []).every((t) => (t.effect !== 'NoSchedule' && t.effect !== 'NoExecute') || tolerates(tols, t));
  }

  private async schedule(pod: Pod): Promise<{ requeueAfterMs?: number } | void> {
    if (pod.metadata?.deletionTimestamp) return;
    const candidates = [...this.nodes.values()].filter((n) => this.schedulable(n, pod));
    if (!candidates.length) return { requeueAfterMs: 2000 };
    const target = candidates[this.rr++ % candidates.length]!;
    const ns = pod.metadata?.namespace ?? '';
    const name = pod.metadata?.name ?? '';
    const c = this.opts.client;
    if (!(c instanceof RestClient)) throw new Error('node-sim needs a REST client (HTTPS or loopback) to bind pods');
    const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/binding`;
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace: ns, uid: pod.metadata?.uid },
      target: { apiVersion: 'v1', kind: 'Node', name: target.name },
    };
    try {
      await c.request('POST', path, Buffer.from(JSON.stringify(body)), 'application/json');
    } catch (e) {
      // Bound meanwhile (409) or gone (404): the informer will tell.
      if (statusCode(e) === 409 || statusCode(e) === 404) return;
      throw e;
    }
  }

  private async syncPod(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const pod = this.podInformer.store.get(key);
    const r = this.running.get(key);
    if (r && (!pod || pod.metadata?.uid !== r.uid)) await this.stopPod(key);
    if (!pod) return;
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) {
      if (this.concerns(pod)) return this.schedule(pod);
      return;
    }
    const sn = this.nodes.get(nodeName);
    // A machine that is off runs nothing; its pods start again when it comes back (powerOn).
    if (!sn || sn.gone || sn.off) return;
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return;
    if (pod.metadata?.deletionTimestamp) {
      // Graceful deletion: serve until the grace period is over, then stop and remove the pod.
      const left = Date.parse(pod.metadata.deletionTimestamp) - Date.now();
      if (left > 0 && this.running.has(key)) return { requeueAfterMs: left };
      await this.stopPod(key);
      try {
        await this.opts.client.delete(PODS, pod.metadata.namespace, pod.metadata.name ?? '', {
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid ?? '' },
        });
      } catch (e) {
        if (statusCode(e) !== 404 && statusCode(e) !== 409) throw e;
      }
      return;
    }
    let run = this.running.get(key);
    if (!run) {
      run = await this.startPod(key, pod, sn);
      if (!run) return { requeueAfterMs: 10_000 };
    }
    await this.writeStatus(pod, run);
  }

  private async startPod(key: string, pod: Pod, sn: SimNode): Promise<RunningPod | undefined> {
    const prior = pod.status?.podIP;
    let ip: string | undefined;
    if (prior && sn.pool.claim(prior)) ip = prior;
    else if (prior && this.ownsIP(sn, prior, key)) ip = prior;
    else ip = sn.pool.take();
    if (!ip) {
      this.log.error(new Error(`no pod IP left in ${sn.podCIDR}`), 'Cannot start pod', 'pod', key);
      return undefined;
    }
    const hostname = pod.spec?.hostname || pod.metadata?.name || '';
    const containers = pod.spec?.containers ?? [];
    const servers: NetexecServer[] = [];
    for (const p of podPorts(containers)) {
      try {
        servers.push(p.protocol === 'UDP' ? await startUdp(ip, p.port, hostname) : await startHttp(ip, p.port, hostname, podNetwork(sn, ip)));
      } catch (e) {
        this.log.error(e, 'Cannot listen for pod', 'pod', key, 'address', `${ip}:${p.port}/${p.protocol}`);
      }
    }
    const probes: ProbeState[] = [];
    for (const c of containers) {
      const pr = c.readinessProbe;
      if (!pr) continue;
      const portOf = (v: number | string | undefined): number =>
        typeof v === 'number' ? v : ((c.ports ?? []).find((p) => p.name === v)?.containerPort ?? Number(v));
      const port = portOf(pr.httpGet?.port ?? pr.tcpSocket?.port);
      if (!pr.httpGet && !pr.tcpSocket) continue; // exec/grpc probes: taken as passing
      probes.push({
        probe: pr,
        host: pr.httpGet?.host || ip,
        port,
        ...(pr.httpGet ? { path: pr.httpGet.path ?? '/' } : {}),
        nextAt: Date.now() + (pr.initialDelaySeconds ?? 0) * 1000,
        successes: 0,
        failures: 0,
        inFlight: false,
      });
    }
    const run: RunningPod = {
      uid: pod.metadata?.uid ?? '',
      ip,
      node: sn,
      servers,
      startedAt: pod.status?.startTime ?? rfc3339(Date.now()),
      probes,
      ready: probes.length === 0,
    };
    this.running.set(key, run);
    return run;
  }

  /** Whether `ip` was claimed for this very pod at start-up (re-adoption). */
  private ownsIP(_sn: SimNode, ip: string, key: string): boolean {
    const p = this.podInformer.store.get(key);
    return p?.status?.podIP === ip && ![...this.running.values()].some((r) => r.ip === ip);
  }

  private async stopPod(key: string): Promise<void> {
    const r = this.running.get(key);
    if (!r) return;
    this.running.delete(key);
    await Promise.allSettled(r.servers.map((s) => s.close()));
    r.node.pool.release(r.ip);
  }

  /** Status as a kubelet writes it for a running pod; only written when it differs. */
  private async writeStatus(pod: Pod, run: RunningPod): Promise<void> {
    const st = pod.status ?? {};
    const readyText = run.ready ? 'True' : 'False';
    const cond = (type: string, status: string): Condition => {
      const old = (st.conditions ?? []).find((c) => c.type === type);
      return {
        type,
        status,
        lastProbeTime: null,
        lastTransitionTime: old?.status === status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(Date.now()),
      };
    };
    const same =
      st.phase === 'Running' &&
      st.podIP === run.ip &&
      (st.conditions ?? []).find((c) => c.type === 'Ready')?.status === readyText &&
      (st.containerStatuses ?? []).length === (pod.spec?.containers ?? []).length &&
      (st.containerStatuses ?? []).every((c) => c.ready === run.ready);
    if (same) return;
    const status = {
      phase: 'Running',
      hostIP: run.node.ip,
      hostIPs: [{ ip: run.node.ip }],
      podIP: run.ip,
      podIPs: [{ ip: run.ip }],
      startTime: run.startedAt,
      conditions: [
        cond('PodReadyToStartContainers', 'True'),
        cond('Initialized', 'True'),
        cond('Ready', readyText),
        cond('ContainersReady', readyText),
        cond('PodScheduled', 'True'),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: c.image,
        containerID: `kplane-sim://${run.uid}/${c.name}`,
        ready: run.ready,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: run.startedAt } },
      })),
    };
    try {
      await this.opts.client.patch(PODS, pod.metadata?.namespace, pod.metadata?.name ?? '', 'merge', { status }, { subresource: 'status' });
    } catch (e) {
      if (statusCode(e) !== 404) throw e;
    }
  }

  /** Runs the readiness probes that are due (one ticker for every pod). */
  private probeDue(): void {
    const now = Date.now();
    for (const [key, r] of this.running) {
      for (const p of r.probes) {
        if (p.inFlight || p.nextAt > now) continue;
        p.inFlight = true;
        p.nextAt = now + (p.probe.periodSeconds ?? 10) * 1000;
        void this.probeOnce(p).then((ok) => {
          p.inFlight = false;
          if (ok) {
            p.successes++;
            p.failures = 0;
          } else {
            p.failures++;
            p.successes = 0;
          }
          const wasReady = r.ready;
          if (ok && p.successes >= (p.probe.successThreshold ?? 1)) r.ready = r.probes.every((q) => q === p || q.successes > 0);
          if (!ok && (p.failures >= (p.probe.failureThreshold ?? 3) || !wasReady)) r.ready = false;
          if (r.ready !== wasReady && this.running.get(key) === r) this.controller.enqueue(key);
        });
      }
    }
  }

  private probeOnce(p: ProbeState): Promise<boolean> {
    const timeoutMs = (p.probe.timeoutSeconds ?? 1) * 1000;
    if (p.path === undefined) {
      return new Promise((resolve) => {
        const s = connect({ host: p.host, port: p.port, timeout: timeoutMs });
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
        s.once('timeout', () => {
          s.destroy();
          resolve(false);
        });
      });
    }
    const url = `http://${p.host}:${p.port}${p.path.startsWith('/') ? '' : '/'}${p.path}`;
    return fetch(url, { signal: AbortSignal.timeout(timeoutMs) }).then(
      async (res) => {
        await res.arrayBuffer().catch(() => undefined);
        return res.status >= 200 && res.status < 400;
      },
      () => false,
    );
  }
}
