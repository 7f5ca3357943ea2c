// The `loopback` cloud: a working cloud on one machine. Instances are the Nodes (one per name,
// providerID `loopback://<node>`), which an admin interface can delete, shut down and start;
// load balancers are real TCP and UDP proxies on their own 127.4.0.0/16 addresses, forwarding to
// the NodePorts of healthy nodes from the client's own address (every 127/8 address is local, so
// the onward socket binds to it): the client IP is preserved, and the ingress ipMode is VIP. All
// state is in this process: a restart forgets every load balancer, and the service controller's
// next EnsureLoadBalancer recreates it.
import net from 'node:net';
import { type Backend, type Listener, Picker, type Route, TcpListener, UdpListener } from '../../proxy/forward.js';
import {
  type CloudProvider,
  type ControllerClientBuilder,
  defaultLoadBalancerName,
  type Ctx,
  type InstanceMetadata,
  InstanceNotFoundError,
  type InstancesV2,
  type LoadBalancer,
  type LoadBalancerStatus,
  type Node,
  type NodeAddress,
  type Service,
} from '../provider.js';
import { type HealthCheckOptions, HealthChecker } from './health.js';

export const PROVIDER_NAME = 'loopback';
export const PROVIDER_ID_PREFIX = 'loopback://';
const SOURCE_RANGES_ANNOTATION = 'service.beta.kubernetes.io/load-balancer-source-ranges';
const DEFAULT_AFFINITY_SECONDS = 10800;

export interface LoopbackCloudOptions {
  /** Where load balancer ingress addresses come from; default 127.4.0.0/16 (must be in 127.0.0.0/8). */
  readonly ingressCIDR?: string;
  /** Every instance's zone, region and type; defaults `loopback-a`, `loopback`, `loopback-node`. */
  readonly zone?: string;
  readonly region?: string;
  readonly instanceType?: string;
  /** kube-proxy's healthz port on the nodes, health-checked for externalTrafficPolicy Cluster; default 10256. */
  readonly nodeHealthzPort?: number;
  readonly healthCheck?: HealthCheckOptions;
  /** UDP flows idle this long are forgotten; default 30 s. */
  readonly udpIdleTimeoutMs?: number;
}

export type InstanceState = 'running' | 'shutdown' | 'deleted';

export interface Instance {
  readonly name: string;
  readonly providerID: string;
  state: InstanceState;
  /** From the Node's InternalIP when first seen, or given when created through the admin interface. */
  addresses: NodeAddress[];
}

export interface LoadBalancerInfo {
  readonly name: string;
  readonly service: string;
  readonly ip: string;
  readonly ports: { port: number; protocol: string; nodePort: number }[];
  readonly nodes: { name: string; address: string; healthy: boolean }[];
}

/** An admin error: the HTTP status the admin interface answers with. */
export class CloudAdminError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'CloudAdminError';
  }
}

function parseIPv4(s: string): number | undefined {
  if (!net.isIPv4(s)) return undefined;
  return s.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
}

const formatIPv4 = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

function parseCIDR(cidr: string): { base: number; size: number } {
  const [ip, bits] = cidr.split('/');
  const base = parseIPv4(ip ?? '');
  const prefix = Number(bits);
  if (base === undefined || !Number.isInteger(prefix) || prefix < 8 || prefix > 30) throw new Error(`invalid ingress CIDR ${JSON.stringify(cidr)}`);
  const size = 2 ** (32 - prefix);
  const start = base - (base % size);
  if (Math.floor(start / 2 ** 24) !== 127) throw new Error(`ingress CIDR ${cidr} is outside 127.0.0.0/8`);
  return { base: start, size };
}

const internalIP = (n: Readonly<Node>): string | undefined => n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
const nodeNameOf = (n: Readonly<Node>): string => {
  const pid = n.spec?.providerID;
  return pid?.startsWith(PROVIDER_ID_PREFIX) ? pid.slice(PROVIDER_ID_PREFIX.length) : (n.metadata?.name ?? '');
};

interface LB {
  readonly uid: string;
  readonly name: string;
  readonly service: string;
  ip: string;
  svc: Readonly<Service>;
  nodes: { name: string; address: string }[];
  readonly listeners: Map<string, { l: Listener; route: LBRoute }>;
  healthKeys: Map<string, string>;
}

class LBRoute implements Route {
  readonly picker = new Picker();
  allowed: net.BlockList | undefined;
  constructor(public ingressIP: string) {}
  pick(clientIP: string): Backend | undefined {
    return this.picker.pick(clientIP);
  }
  has(b: Backend): boolean {
    return this.picker.has(b);
  }
  /**
   * The client's own address (ipMode VIP): the node proxy sees the client, and keeps it up to the
   * pod with externalTrafficPolicy Local. Only a client outside 127.0.0.0/8 (which cannot reach a
   * loopback address anyway) is sent from the ingress address.
   */
  source(clientIP: string): string {
    return clientIP.startsWith('127.') ? clientIP : this.ingressIP;
  }
  allow(clientIP: string): boolean {
    return !this.allowed || this.allowed.check(clientIP, 'ipv4');
  }
}

export class LoopbackCloud implements CloudProvider {
  private readonly instancesByName = new Map<string, Instance>();
  private readonly lbs = new Map<string, LB>();
  private readonly usedIPs = new Set<string>();
  private readonly range: { base: number; size: number };
  private readonly health: HealthChecker;
  private readonly opts: LoopbackCloudOptions;
  private readonly instanceListeners = new Set<(inst: Readonly<Instance>) => void>();
  /** Where the admin interface listens, once `initialize` has started it (config `adminAddress`). */
  adminUrl: string | undefined;

  constructor(opts: LoopbackCloudOptions = {}) {
    this.opts = opts;
    this.range = parseCIDR(opts.ingressCIDR ?? '127.4.0.0/16');
    this.health = new HealthChecker(opts.healthCheck ?? {}, () => void this.rerouteAll());
  }

  initialize(_clients?: ControllerClientBuilder, _stop?: AbortSignal): void | Promise<void> {}
  loadBalancer(): LoadBalancer {
    return this.lbApi;
  }
  instancesV2(): InstancesV2 {
    return this.instancesApi;
  }
  zones(): undefined {
    return undefined;
  }
  routes(): undefined {
    return undefined;
  }
  providerName(): string {
    return PROVIDER_NAME;
  }
  hasClusterID(): boolean {
    return true;
  }

  // ---- instances: the admin side (the TS API behind the admin HTTP interface) ----

  listInstances(): Instance[] {
    return [...this.instancesByName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  getInstance(name: string): Instance | undefined {
    return this.instancesByName.get(name);
  }

  /**
   * Calls `fn` after an instance is created, shut down, started or deleted through the admin side:
   * what the machine itself would notice (node-sim powers its Node off or on). Returns a remover.
   */
  onInstanceChange(fn: (inst: Readonly<Instance>) => void): () => void {
    this.instanceListeners.add(fn);
    return () => this.instanceListeners.delete(fn);
  }

  private changed(inst: Instance): Instance {
    void this.rerouteAll();
    for (const fn of this.instanceListeners) fn(inst);
    return inst;
  }

  /** Creates (or brings back) a running instance; `address` becomes its InternalIP. */
  createInstance(name: string, address?: string): Instance {
    if (!name) throw new CloudAdminError(400, 'an instance needs a name');
    if (address !== undefined && !(net.isIPv4(address) && address.startsWith('127.')))
      throw new CloudAdminError(400, `address ${JSON.stringify(address)} is not in 127.0.0.0/8`);
    const inst = this.instancesByName.get(name) ?? { name, providerID: `${PROVIDER_ID_PREFIX}${name}`, state: 'running', addresses: [] };
    inst.state = 'running';
    if (address)
      inst.addresses = [
        { type: 'InternalIP', address },
        { type: 'Hostname', address: name },
      ];
    this.instancesByName.set(name, inst);
    return this.changed(inst);
  }

  private known(name: string): Instance {
    const inst = this.instancesByName.get(name);
    if (!inst || inst.state === 'deleted') throw new CloudAdminError(404, `instance ${JSON.stringify(name)} not found`);
    return inst;
  }

  /** The instance stops: its Node gets the shutdown taint, load balancers stop sending to it. */
  shutdownInstance(name: string): Instance {
    const inst = this.known(name);
    inst.state = 'shutdown';
    return this.changed(inst);
  }

  startInstance(name: string): Instance {
    const inst = this.known(name);
    inst.state = 'running';
    return this.changed(inst);
  }

  /** The instance is gone for good: InstanceExists answers false and the Node is deleted. */
  deleteInstance(name: string): Instance {
    const inst = this.known(name);
    inst.state = 'deleted';
    return this.changed(inst);
  }

  /** First sight of a Node makes its instance (the simulated machines exist before their Nodes). */
  private instanceFor(node: Readonly<Node>): Instance {
    const name = nodeNameOf(node);
    let inst = this.instancesByName.get(name);
    if (!inst) {
      inst = { name, providerID: `${PROVIDER_ID_PREFIX}${name}`, state: 'running', addresses: [] };
      this.instancesByName.set(name, inst);
    }
    if (inst.addresses.length === 0) {
      const ip = internalIP(node);
      if (ip)
        inst.addresses = [
          { type: 'InternalIP', address: ip },
          { type: 'Hostname', address: name },
        ];
    }
    return inst;
  }

  private readonly instancesApi: InstancesV2 = {
    instanceExists: async (_ctx: Ctx, node: Readonly<Node>) => this.instanceFor(node).state !== 'deleted',
    instanceShutdown: async (_ctx: Ctx, node: Readonly<Node>) => this.instanceFor(node).state === 'shutdown',
    instanceMetadata: async (_ctx: Ctx, node: Readonly<Node>): Promise<InstanceMetadata> => {
      const inst = this.instanceFor(node);
      if (inst.state === 'deleted') throw new InstanceNotFoundError();
      return {
        providerID: inst.providerID,
        instanceType: this.opts.instanceType ?? 'loopback-node',
        nodeAddresses: inst.addresses.map((a) => ({ ...a })),
        zone: this.opts.zone ?? 'loopback-a',
        region: this.opts.region ?? 'loopback',
      };
    },
  };

  // ---- load balancers ----

  listLoadBalancers(): LoadBalancerInfo[] {
    return [...this.lbs.values()].map((lb) => ({
      name: lb.name,
      service: lb.service,
      ip: lb.ip,
      ports: (lb.svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP', nodePort: p.nodePort ?? 0 })),
      nodes: lb.nodes.map((n) => ({ ...n, healthy: this.nodeUsable(lb, n) })),
    }));
  }

  private readonly lbApi: LoadBalancer = {
    getLoadBalancer: async (_ctx, _cluster, svc) => {
      const lb = this.lbs.get(this.lbKey(svc));
      return lb ? { exists: true, status: this.statusOf(lb) } : { exists: false };
    },
    getLoadBalancerName: (_ctx, _cluster, svc) => defaultLoadBalancerName(svc),
    ensureLoadBalancer: async (ctx, _cluster, svc, nodes) => this.ensure(ctx, svc, nodes),
    updateLoadBalancer: async (ctx, _cluster, svc, nodes) => {
      const lb = this.lbs.get(this.lbKey(svc));
      if (!lb) throw new Error(`load balancer ${defaultLoadBalancerName(svc)} not found`);
      await this.ensure(ctx, svc, nodes);
    },
    ensureLoadBalancerDeleted: async (_ctx, _cluster, svc) => {
      const lb = this.lbs.get(this.lbKey(svc));
      if (!lb) return;
      this.lbs.delete(lb.uid);
      this.usedIPs.delete(lb.ip);
      for (const k of lb.healthKeys.values()) this.health.release(k);
      await Promise.all([...lb.listeners.values()].map((c) => c.l.close(true)));
    },
  };

  private lbKey(svc: Readonly<Service>): string {
    return svc.metadata?.uid || `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`;
  }

  private allocateIP(svc: Readonly<Service>, current: string | undefined): string {
    const wanted = svc.spec?.loadBalancerIP;
    if (wanted) {
      const n = parseIPv4(wanted);
      if (n === undefined || n < this.range.base || n >= this.range.base + this.range.size) {
        throw new Error(
          `loadBalancerIP ${wanted} is not in the loopback cloud's ingress range ${formatIPv4(this.range.base)}/${32 - Math.log2(this.range.size)}`,
        );
      }
      if (wanted !== current && this.usedIPs.has(wanted)) throw new Error(`loadBalancerIP ${wanted} is in use by another load balancer`);
      return wanted;
    }
    if (current) return current;
    for (let n = this.range.base + 1; n < this.range.base + this.range.size - 1; n++) {
      const ip = formatIPv4(n);
      if (!this.usedIPs.has(ip)) return ip;
    }
    throw new Error('the loopback cloud has no free ingress address');
  }

  private async ensure(ctx: Ctx, svc: Readonly<Service>, nodes: readonly Readonly<Node>[]): Promise<LoadBalancerStatus> {
    const uid = this.lbKey(svc);
    const spec = svc.spec ?? {};
    for (const p of spec.ports ?? []) {
      const proto = p.protocol ?? 'TCP';
      if (proto !== 'TCP' && proto !== 'UDP') throw new Error(`the loopback cloud does not balance ${proto} (port ${p.port})`);
      if (!p.nodePort)
        throw new Error(
          `port ${p.port}/${proto} has no nodePort: the loopback cloud sends to NodePorts (allocateLoadBalancerNodePorts=false is not supported)`,
        );
    }
    const allowed = this.sourceRanges(svc);
    let lb = this.lbs.get(uid);
    const ip = this.allocateIP(svc, lb?.ip);
    if (lb && lb.ip !== ip) {
      // A new loadBalancerIP: the old listeners go.
      await Promise.all([...lb.listeners.values()].map((c) => c.l.close(true)));
      lb.listeners.clear();
      this.usedIPs.delete(lb.ip);
    }
    if (!lb) {
      lb = {
        uid,
        name: defaultLoadBalancerName(svc),
        service: `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`,
        ip,
        svc,
        nodes: [],
        listeners: new Map(),
        healthKeys: new Map(),
      };
      this.lbs.set(uid, lb);
    }
    lb.ip = ip;
    lb.svc = svc;
    this.usedIPs.add(ip);
    lb.nodes = nodes.flatMap((n) => {
      this.instanceFor(n);
      const address = internalIP(n);
      return address ? [{ name: nodeNameOf(n), address }] : [];
    });

    // Health targets: healthCheckNodePort for ETP Local, kube-proxy's healthz otherwise.
    const hcPort = spec.externalTrafficPolicy === 'Local' && spec.healthCheckNodePort ? spec.healthCheckNodePort : (this.opts.nodeHealthzPort ?? 10256);
    const keys = new Map<string, string>();
    for (const n of lb.nodes) keys.set(n.address, this.health.acquire(n.address, hcPort));
    for (const k of lb.healthKeys.values()) this.health.release(k);
    lb.healthKeys = keys;
    await this.health.checkNew(keys.values());
    if (ctx.signal.aborted) throw new Error('ensureLoadBalancer cancelled');

    const desired = new Map<string, { protocol: 'TCP' | 'UDP'; port: number; nodePort: number }>();
    for (const p of spec.ports ?? []) {
      const protocol = (p.protocol ?? 'TCP') as 'TCP' | 'UDP';
      desired.set(`${protocol}/${p.port}`, { protocol, port: p.port ?? 0, nodePort: p.nodePort ?? 0 });
    }
    for (const [key, cur] of lb.listeners) {
      if (desired.has(key)) continue;
      lb.listeners.delete(key);
      await cur.l.close(true);
    }
    for (const [key, d] of desired) {
      let cur = lb.listeners.get(key);
      if (!cur) {
        const route = new LBRoute(ip);
        const l = d.protocol === 'TCP' ? await TcpListener.listen(ip, d.port, route) : await UdpListener.listen(ip, d.port, route, this.opts.udpIdleTimeoutMs);
        cur = { l, route };
        lb.listeners.set(key, cur);
      }
      cur.route.allowed = allowed;
    }
    this.reroute(lb);
    return this.statusOf(lb);
  }

  /** spec.loadBalancerSourceRanges, else the annotation (GetLoadBalancerSourceRanges); none = everyone. */
  private sourceRanges(svc: Readonly<Service>): net.BlockList | undefined {
    let ranges = svc.spec?.loadBalancerSourceRanges ?? [];
    if (ranges.length === 0) {
      const ann = svc.metadata?.annotations?.[SOURCE_RANGES_ANNOTATION]?.trim();
      if (ann) ranges = ann.split(',').map((s) => s.trim());
    }
    if (ranges.length === 0) return undefined;
    const list = new net.BlockList();
    for (const r of ranges) {
      const [addr, bits] = r.trim().split('/');
      const prefix = Number(bits);
      if (!addr || !Number.isInteger(prefix)) throw new Error(`invalid loadBalancerSourceRanges entry ${JSON.stringify(r)}`);
      if (net.isIPv4(addr)) list.addSubnet(addr, prefix, 'ipv4');
      else if (net.isIPv6(addr)) list.addSubnet(addr, prefix, 'ipv6');
      else throw new Error(`invalid loadBalancerSourceRanges entry ${JSON.stringify(r)}`);
    }
    return list;
  }

  private nodeUsable(lb: LB, n: { name: string; address: string }): boolean {
    const state = this.instancesByName.get(n.name)?.state ?? 'running';
    const key = lb.healthKeys.get(n.address);
    return state === 'running' && key !== undefined && this.health.healthy(key);
  }

  private reroute(lb: LB): void {
    const spec = lb.svc.spec ?? {};
    const affinityMs =
      spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) * 1000 : undefined;
    const usable = lb.nodes.filter((n) => this.nodeUsable(lb, n));
    for (const [key, cur] of lb.listeners) {
      const p = (spec.ports ?? []).find((x) => `${x.protocol ?? 'TCP'}/${x.port}` === key);
      const nodePort = p?.nodePort ?? 0;
      cur.route.picker.set(
        usable.map((n) => ({ ip: n.address, port: nodePort })),
        affinityMs,
      );
    }
  }

  private rerouteAll(): void {
    for (const lb of this.lbs.values()) this.reroute(lb);
  }

  private statusOf(lb: LB): LoadBalancerStatus {
    return {
      ingress: [
        {
          ip: lb.ip,
          ipMode: 'VIP',
          ports: (lb.svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP' })),
        },
      ],
    };
  }

  /** Closes every load balancer (dropping connections) and stops health checks. */
  async close(): Promise<void> {
    this.health.stop();
    const all = [...this.lbs.values()];
    this.lbs.clear();
    this.usedIPs.clear();
    await Promise.all(all.flatMap((lb) => [...lb.listeners.values()].map((c) => c.l.close(true))));
  }
}
