// The `loopback` cloud: a working cloud on one machine. Instances are the Nodes (one per name,
// providerID `loopback://<node>`), which an admin interface can delete, shut down and start;
// load balancers are real TCP and UDP proxies on their own 127.4.0.0/16 addresses, forwarding to
// the NodePorts of healthy nodes from the client's own address (every 127/8 address is local, so
// the onward socket binds to it): the client IP is preserved. The ingress ipMode is Proxy by
// default (node-sim's proxies never short-circuit a pod's traffic to the ingress address, as
// kube-proxy does for VIP); `ingressIPMode: VIP` says VIP, for kits whose tests need it.
// Without `stateDir` all state is in this process: a restart forgets every load balancer and
// instance, and the service controller's next EnsureLoadBalancer recreates it (maybe on another
// address). With `stateDir` the cloud outlives its process as a real one outlives its CCM:
// instances, load balancers and their ingress addresses are written (whole file, renamed into
// place) before each change is acknowledged, and read at start; `initialize` binds the load
// balancers' listeners again on the same addresses.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
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
  /** Keeps the cloud's state in `<stateDir>/state.json` (created if missing): a restart finds it again. */
  readonly stateDir?: string;
  /** The ingress `ipMode` written to Services' status: `Proxy` (default) or `VIP`. */
  readonly ingressIPMode?: 'Proxy' | 'VIP';
}

/** What `stateDir` holds: instances and load balancers (the Service fields the proxies need, their node set). */
interface PersistedState {
  readonly version: 1;
  readonly instances: Instance[];
  readonly loadBalancers: { key: string; ip: string; svc: Service; nodes: { name: string; address: string }[] }[];
}

/** A node-sim (or any machine agent) following the instances: what it simulates, when it last asked. */
interface Follower {
  nodes: Set<string>;
  lastSeen: number;
  waiting: number;
}

/** How long after its last long-poll a follower still counts as following (its poll timeout plus slack). */
const FOLLOWER_GRACE_MS = 45_000;

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

function statusFor(ip: string, svc: Readonly<Service>, ipMode: 'Proxy' | 'VIP'): LoadBalancerStatus {
  return {
    ingress: [{ ip, ipMode, ports: (svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP' })) }],
  };
}

/** The parts of a Service a load balancer is built from (what stateDir keeps). */
function persistedService(svc: Readonly<Service>): Service {
  const m = svc.metadata ?? {};
  const s = svc.spec ?? {};
  return {
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, ...(m.annotations ? { annotations: m.annotations } : {}) },
    spec: {
      ports: s.ports,
      sessionAffinity: s.sessionAffinity,
      sessionAffinityConfig: s.sessionAffinityConfig,
      externalTrafficPolicy: s.externalTrafficPolicy,
      healthCheckNodePort: s.healthCheckNodePort,
      loadBalancerIP: s.loadBalancerIP,
      loadBalancerSourceRanges: s.loadBalancerSourceRanges,
    },
  };
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
  /** Load balancers read from `stateDir` whose listeners are not bound (yet): their addresses stay theirs. */
  private readonly restoring = new Map<string, { ip: string; svc: Service; nodes: { name: string; address: string }[] }>();
  private readonly stateFile: string | undefined;
  /** Instance changes: `epoch` is new in every process, `revision` counts changes in it (watchInstances). */
  readonly epoch = randomUUID().slice(0, 8);
  private revision = 0;
  private readonly waiters = new Set<() => void>();
  private readonly followers = new Map<string, Follower>();
  /** Where the admin interface listens, once `initialize` has started it (config `adminAddress`). */
  adminUrl: string | undefined;

  constructor(opts: LoopbackCloudOptions = {}) {
    this.opts = opts;
    this.range = parseCIDR(opts.ingressCIDR ?? '127.4.0.0/16');
    this.health = new HealthChecker(opts.healthCheck ?? {}, () => void this.rerouteAll());
    if (opts.stateDir) {
      mkdirSync(opts.stateDir, { recursive: true });
      this.stateFile = join(opts.stateDir, 'state.json');
      this.load(this.stateFile);
    }
  }

  /** Binds the listeners of the load balancers read from `stateDir` again, on their addresses. */
  async initialize(_clients?: ControllerClientBuilder, stop?: AbortSignal): Promise<void> {
    const signal = stop ?? new AbortController().signal;
    for (const r of [...this.restoring.values()]) {
      const nodes = r.nodes.map((n) => ({
        metadata: { name: n.name },
        spec: { providerID: `${PROVIDER_ID_PREFIX}${n.name}` },
        status: { addresses: [{ type: 'InternalIP', address: n.address }] },
      }));
      try {
        await this.ensure({ signal }, r.svc, nodes);
      } catch {
        // Left in `restoring` (its address kept): the service controller's next sync ensures it.
      }
    }
  }

  private load(file: string): void {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new Error(`loopback cloud: cannot read stateDir file ${file}: ${(e as Error).message}`, { cause: e });
    }
    let st: PersistedState;
    try {
      st = JSON.parse(text) as PersistedState;
    } catch (e) {
      throw new Error(`loopback cloud: stateDir file ${file} is not JSON: ${(e as Error).message}`, { cause: e });
    }
    if (st?.version !== 1 || !Array.isArray(st.instances) || !Array.isArray(st.loadBalancers)) {
      throw new Error(`loopback cloud: stateDir file ${file} is not a version 1 state (instances, loadBalancers)`);
    }
    for (const i of st.instances) this.instancesByName.set(i.name, { name: i.name, providerID: i.providerID, state: i.state, addresses: i.addresses ?? [] });
    for (const lb of st.loadBalancers) {
      this.restoring.set(lb.key, { ip: lb.ip, svc: lb.svc, nodes: lb.nodes });
      this.usedIPs.add(lb.ip);
    }
  }

  /** Writes the whole state (when `stateDir` is set) and renames it into place: a kill -9 leaves the old or the new file. */
  private save(): void {
    if (!this.stateFile) return;
    const st: PersistedState = {
      version: 1,
      instances: [...this.instancesByName.values()],
      loadBalancers: [
        ...[...this.restoring].map(([key, r]) => ({ key, ...r })),
        ...[...this.lbs.values()].map((lb) => ({ key: lb.uid, ip: lb.ip, svc: persistedService(lb.svc), nodes: lb.nodes })),
      ],
    };
    const tmp = `${this.stateFile}.tmp`;
    writeFileSync(tmp, JSON.stringify(st));
    renameSync(tmp, this.stateFile);
  }
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
    this.save();
    void this.rerouteAll();
    this.revision++;
    for (const wake of [...this.waiters]) wake();
    for (const fn of this.instanceListeners) fn(inst);
    return inst;
  }

  /** Where the instances are now: `<epoch>:<revision>`. */
  get instancesCursor(): string {
    return `${this.epoch}:${this.revision}`;
  }

  /**
   * A long poll: answers at once when `cursor` is not the current one (changes since, or another
   * process of the cloud), else at the next change, at `timeoutMs` or when `signal` aborts; always
   * with every instance and the new cursor. `follower` names the caller (see registerFollower).
   */
  async watchInstances(cursor: string, timeoutMs: number, signal: AbortSignal, follower?: string): Promise<{ cursor: string; instances: Instance[] }> {
    const f = follower ? this.followers.get(follower) : undefined;
    if (f) {
      f.lastSeen = Date.now();
      f.waiting++;
    }
    try {
      if (cursor === this.instancesCursor && !signal.aborted) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            this.waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, timeoutMs);
          signal.addEventListener('abort', done, { once: true });
          this.waiters.add(done);
        });
      }
    } finally {
      if (f) {
        f.lastSeen = Date.now();
        f.waiting--;
      }
    }
    return { cursor: this.instancesCursor, instances: this.listInstances() };
  }

  /** A machine agent (node-sim) says which instances it runs: they count as followed while it polls. */
  registerFollower(id: string, nodes: readonly string[]): void {
    if (!id) throw new CloudAdminError(400, 'a follower needs an id');
    const cur = this.followers.get(id);
    this.followers.set(id, { nodes: new Set(nodes), lastSeen: Date.now(), waiting: cur?.waiting ?? 0 });
  }

  /** The follower running this instance, if one is polling now or did so lately. */
  followedBy(name: string): string | undefined {
    const now = Date.now();
    for (const [id, f] of this.followers) {
      if (f.nodes.has(name) && (f.waiting > 0 || now - f.lastSeen < FOLLOWER_GRACE_MS)) return id;
    }
    return undefined;
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
      if (ip) {
        inst.addresses = [
          { type: 'InternalIP', address: ip },
          { type: 'Hostname', address: name },
        ];
        this.save();
      }
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
    const bound = [...this.lbs.values()].map((lb) => ({
      name: lb.name,
      service: lb.service,
      ip: lb.ip,
      ports: (lb.svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP', nodePort: p.nodePort ?? 0 })),
      nodes: lb.nodes.map((n) => ({ ...n, healthy: this.nodeUsable(lb, n) })),
    }));
    // Read from stateDir, listeners not bound yet: in the cloud all the same.
    const restoring = [...this.restoring.values()].map((r) => ({
      name: defaultLoadBalancerName(r.svc),
      service: `${r.svc.metadata?.namespace ?? ''}/${r.svc.metadata?.name ?? ''}`,
      ip: r.ip,
      ports: (r.svc.spec?.ports ?? []).map((p) => ({ port: p.port ?? 0, protocol: p.protocol ?? 'TCP', nodePort: p.nodePort ?? 0 })),
      nodes: r.nodes.map((n) => ({ ...n, healthy: false })),
    }));
    return [...bound, ...restoring];
  }

  private readonly lbApi: LoadBalancer = {
    getLoadBalancer: async (_ctx, _cluster, svc) => {
      const lb = this.lbs.get(this.lbKey(svc));
      if (lb) return { exists: true, status: this.statusOf(lb) };
      const r = this.restoring.get(this.lbKey(svc));
      return r ? { exists: true, status: statusFor(r.ip, r.svc, this.opts.ingressIPMode ?? 'Proxy') } : { exists: false };
    },
    getLoadBalancerName: (_ctx, _cluster, svc) => defaultLoadBalancerName(svc),
    ensureLoadBalancer: async (ctx, _cluster, svc, nodes) => this.ensure(ctx, svc, nodes),
    updateLoadBalancer: async (ctx, _cluster, svc, nodes) => {
      const lb = this.lbs.get(this.lbKey(svc)) ?? this.restoring.get(this.lbKey(svc));
      if (!lb) throw new Error(`load balancer ${defaultLoadBalancerName(svc)} not found`);
      await this.ensure(ctx, svc, nodes);
    },
    ensureLoadBalancerDeleted: async (_ctx, _cluster, svc) => {
      const key = this.lbKey(svc);
      const r = this.restoring.get(key);
      if (r) {
        this.restoring.delete(key);
        this.usedIPs.delete(r.ip);
        this.save();
      }
      const lb = this.lbs.get(key);
      if (!lb) return;
      this.lbs.delete(lb.uid);
      this.usedIPs.delete(lb.ip);
      for (const k of lb.healthKeys.values()) this.health.release(k);
      await Promise.all([...lb.listeners.values()].map((c) => c.l.close(true)));
      this.save();
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
    // A restarted cloud (its state lives in this process) gives a Service back the address in its
    // status, as a real cloud's load balancer would have kept it.
    const had = svc.status?.loadBalancer?.ingress?.[0]?.ip;
    const hadN = had === undefined ? undefined : parseIPv4(had);
    if (had && hadN !== undefined && hadN > this.range.base && hadN < this.range.base + this.range.size - 1 && !this.usedIPs.has(had)) return had;
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
    const restored = this.restoring.get(uid);
    const ip = this.allocateIP(svc, lb?.ip ?? restored?.ip);
    if (restored && restored.ip !== ip) this.usedIPs.delete(restored.ip);
    this.restoring.delete(uid);
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
    this.save();
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
    return statusFor(lb.ip, lb.svc, this.opts.ingressIPMode ?? 'Proxy');
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
