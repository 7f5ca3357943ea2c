// The node proxy: kube-proxy for one simulated node, in userspace. From Services and
// EndpointSlices it listens on nodeIP:nodePort for every NodePort/LoadBalancer port (and, on the
// one proxy that owns them, on clusterIP:port), and forwards each connection or UDP flow to an
// endpoint chosen as kube-proxy chooses (CategorizeEndpoints, ETP/ITP, ClientIP affinity).
// A ProxyHost holds the informers once for all node proxies of a process.
import type { KubeClient } from '../../client/types.js';
import type { Logger } from '../../golang/klog.js';
import { asLogger } from '../../golang/klog.js';
import { Informer, keyOf } from '../runtime/index.js';
import {
  categorizeEndpoints,
  type Endpoint,
  type EndpointSlice,
  endpointsFor,
  externalPolicyLocal,
  internalPolicyLocal,
  localReadyEndpoints,
  SERVICE_NAME_LABEL,
  type Service,
} from './endpoints.js';
import { type Backend, type Listener, Picker, type Route, TcpListener, UdpListener } from './forward.js';
import { ProxierHealthServer, ServiceHealthServer } from './health.js';

const SERVICES = { group: '', version: 'v1', resource: 'services' };
const ENDPOINT_SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };
const NODES = { group: '', version: 'v1', resource: 'nodes' };
const BY_SERVICE = 'service';
const TO_BE_DELETED_TAINT = 'ToBeDeletedByClusterAutoscaler';
const DEFAULT_AFFINITY_SECONDS = 10800;
const RETRY_FAILED_PORTS_MS = 5000;

type Node = { metadata: { name?: string; deletionTimestamp?: string }; spec?: { taints?: { key: string }[] } };

export interface NodeProxyOptions {
  readonly nodeName: string;
  /** The node's InternalIP: NodePorts, /healthz and healthCheckNodePorts listen here. */
  readonly nodeIP: string;
  /**
   * Also listen on clusterIP:port for every Service. A cluster IP is one address on the machine:
   * exactly one proxy of all processes may own them (node-sim turns it on for its first node).
   * The same proxy serves `externalIPs` (externalIP:port, with the external traffic policy).
   */
  readonly clusterIPs?: boolean;
  /** kube-proxy's --healthz-bind-address port; default 10256, 0 = none. */
  readonly healthzPort?: number;
  /** A UDP flow idle this long is forgotten (conntrack's UDP timeout); default 30 s. */
  readonly udpIdleTimeoutMs?: number;
}

export interface ProxyHostOptions {
  readonly client: KubeClient;
  readonly log?: ((msg: string) => void) | Logger;
}

/** One kube-proxy per node, sharing the Services, EndpointSlices and Nodes informers of its host. */
export class ProxyHost {
  readonly services: Informer<Service>;
  readonly slices: Informer<EndpointSlice>;
  readonly nodes: Informer<Node>;
  private readonly proxies = new Set<NodeProxy>();
  private readonly abort = new AbortController();
  private readonly log: Logger;
  private scheduled = false;
  private started: Promise<void> | undefined;

  constructor(opts: ProxyHostOptions) {
    this.log = asLogger(opts.log);
    this.services = new Informer<Service>({ client: opts.client, gvr: SERVICES, log: opts.log });
    this.slices = new Informer<EndpointSlice>({
      client: opts.client,
      gvr: ENDPOINT_SLICES,
      log: opts.log,
      indexers: {
        [BY_SERVICE]: (s) => {
          const svc = s.metadata?.labels?.[SERVICE_NAME_LABEL];
          return svc ? [`${s.metadata?.namespace ?? ''}/${svc}`] : [];
        },
      },
    });
    this.nodes = new Informer<Node>({ client: opts.client, gvr: NODES, log: opts.log, metadataOnly: false });
    const changed = { onAdd: () => this.schedule(), onUpdate: () => this.schedule(), onDelete: () => this.schedule() };
    this.services.addEventHandler(changed);
    this.slices.addEventHandler(changed);
    this.nodes.addEventHandler(changed);
  }

  /** Runs the informers and waits for their first lists. */
  start(): Promise<void> {
    this.started ??= (async () => {
      for (const inf of [this.services, this.slices, this.nodes]) {
        inf.run(this.abort.signal).catch((e: unknown) => this.log.error(e, 'Informer stopped', 'resource', inf.gvr.resource));
      }
      for (const inf of [this.services, this.slices, this.nodes]) await inf.waitForSync(this.abort.signal);
    })();
    return this.started;
  }

  /** Starts a node proxy (listeners bound, /healthz up) once the informers have synced. */
  async addNode(opts: NodeProxyOptions): Promise<NodeProxy> {
    await this.start();
    const p = new NodeProxy(this, opts, this.log.withName(`proxy ${opts.nodeName}`));
    this.proxies.add(p);
    try {
      await p.open();
    } catch (e) {
      // /healthz could not listen (the address is someone else's): nothing of this node stays open.
      await p.stop();
      throw e;
    }
    return p;
  }

  /** @internal */
  removed(p: NodeProxy): void {
    this.proxies.delete(p);
  }

  slicesOf(svc: Service): EndpointSlice[] {
    return this.slices.store.byIndex(BY_SERVICE, keyOf(svc));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const p of this.proxies) p.requestSync();
    });
  }

  /** Stops every node proxy (dropping their connections) and the informers. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([...this.proxies].map((p) => p.stop()));
  }
}

/** A listener's route: backends from CategorizeEndpoints, source kept or replaced by the node IP. */
class ServiceRoute implements Route {
  readonly picker = new Picker();
  keepSource = true;
  constructor(private readonly nodeIP: string) {}
  pick(clientIP: string): Backend | undefined {
    return this.picker.pick(clientIP);
  }
  has(b: Backend): boolean {
    return this.picker.has(b);
  }
  source(clientIP: string): string {
    return this.keepSource ? clientIP : this.nodeIP;
  }
}

interface Desired {
  readonly protocol: 'TCP' | 'UDP';
  readonly ip: string;
  readonly port: number;
  readonly backends: Endpoint[];
  readonly affinityMs: number | undefined;
  readonly keepSource: boolean;
}

/** A cluster IP port as this node's proxy sends its own pods' traffic (kube-proxy's internal traffic chain). */
interface PodServiceRoute {
  readonly picker: Picker;
  /** No usable endpoint but some elsewhere (ITP Local): DROP; none at all: REJECT. */
  hasAnyEndpoints: boolean;
}

export class NodeProxy {
  private readonly listeners = new Map<string, { l: Listener; route: ServiceRoute }>();
  /** Per node: `${protocol}/${clusterIP}:${port}` → how a connection from a pod on this node goes. */
  private readonly podRoutes = new Map<string, PodServiceRoute>();
  private readonly healthChecks = new Map<string, ServiceHealthServer>();
  private readonly healthz = new ProxierHealthServer();
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  /** Ports that failed to open, with why (kept for the next sync to retry). */
  readonly failures = new Map<string, string>();

  constructor(
    private readonly host: ProxyHost,
    readonly opts: NodeProxyOptions,
    private readonly log: Logger,
  ) {}

  get nodeName(): string {
    return this.opts.nodeName;
  }

  /** @internal */
  async open(): Promise<void> {
    await this.sync();
    const port = this.opts.healthzPort ?? 10256;
    if (port) await this.healthz.listen(this.opts.nodeIP, port);
  }

  /** @internal Coalesces: one sync runs at a time, and one more after it when asked meanwhile. */
  requestSync(): void {
    if (this.stopped) return;
    if (this.syncing) {
      this.dirty = true;
      return;
    }
    this.syncing = this.sync()
      .catch((e: unknown) => this.log.error(e, 'Sync failed'))
      .finally(() => {
        this.syncing = undefined;
        if (this.dirty) {
          this.dirty = false;
          this.requestSync();
        }
      });
  }

  /** Resolves once every sync asked for so far has run (tests, node-sim). */
  async settled(): Promise<void> {
    while (this.syncing) await this.syncing;
  }

  private async sync(): Promise<void> {
    const { nodeName, nodeIP } = this.opts;
    const desired = new Map<string, Desired>();
    const hc = new Map<string, { ns: string; name: string; port: number; count: number }>();
    const fromPods = new Map<string, Desired & { hasAnyEndpoints: boolean }>();
    for (const svc of this.host.services.store.list()) {
      const spec = svc.spec ?? {};
      if (spec.type === 'ExternalName') continue;
      const slices = this.host.slicesOf(svc);
      const affinityMs =
        spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS) * 1000 : undefined;
      const perPort: Endpoint[][] = [];
      for (const port of spec.ports ?? []) {
        const protocol = port.protocol ?? 'TCP';
        if (protocol !== 'TCP' && protocol !== 'UDP') continue;
        const eps = endpointsFor(slices, port, nodeName);
        perPort.push(eps);
        const cat = categorizeEndpoints(eps, svc);
        if ((spec.type === 'NodePort' || spec.type === 'LoadBalancer') && port.nodePort) {
          const local = externalPolicyLocal(svc);
          // ETP Cluster masquerades to the node's address; ETP Local keeps the client's.
          desired.set(`${protocol}/${nodeIP}:${port.nodePort}`, {
            protocol,
            ip: nodeIP,
            port: port.nodePort,
            backends: local ? cat.localEndpoints : cat.clusterEndpoints,
            affinityMs,
            keepSource: local,
          });
        }
        if (this.opts.clusterIPs && port.port) {
          // externalIPs are external traffic (ETP applies), on one machine-wide address each, like cluster IPs.
          const local = externalPolicyLocal(svc);
          for (const ip of spec.externalIPs ?? []) {
            desired.set(`${protocol}/${ip}:${port.port}`, {
              protocol,
              ip,
              port: port.port,
              backends: local ? cat.localEndpoints : cat.clusterEndpoints,
              affinityMs,
              keepSource: true,
            });
          }
        }
        const cip = spec.clusterIP;
        if (cip && cip !== 'None' && port.port) {
          const key = `${protocol}/${cip}:${port.port}`;
          const route: Desired = {
            protocol,
            ip: cip,
            port: port.port,
            backends: internalPolicyLocal(svc) ? cat.localEndpoints : cat.clusterEndpoints,
            affinityMs,
            keepSource: true,
          };
          fromPods.set(key, { ...route, hasAnyEndpoints: cat.hasAnyEndpoints });
          if (this.opts.clusterIPs) desired.set(key, route);
        }
      }
      if (spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' && spec.healthCheckNodePort) {
        hc.set(keyOf(svc), {
          ns: svc.metadata?.namespace ?? '',
          name: svc.metadata?.name ?? '',
          port: spec.healthCheckNodePort,
          count: localReadyEndpoints(perPort),
        });
      }
    }
    if (this.stopped) return;
    this.setPodRoutes(fromPods);

    // Listeners: closed when no longer wanted (their connections run on), opened when new, re-routed in place otherwise.
    for (const [key, cur] of this.listeners) {
      if (desired.get(key)?.protocol === cur.l.protocol) continue;
      this.listeners.delete(key);
      await cur.l.close(false);
    }
    for (const [key, d] of desired) {
      let cur = this.listeners.get(key);
      if (!cur) {
        const route = new ServiceRoute(nodeIP);
        try {
          const l =
            d.protocol === 'TCP' ? await TcpListener.listen(d.ip, d.port, route) : await UdpListener.listen(d.ip, d.port, route, this.opts.udpIdleTimeoutMs);
          cur = { l, route };
          this.listeners.set(key, cur);
          this.failures.delete(key);
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          if (this.failures.get(key) !== msg) this.log.error(e, "Can't open port", 'port', key);
          this.failures.set(key, msg);
          continue;
        }
      }
      cur.route.keepSource = d.keepSource;
      cur.route.picker.set(
        d.backends.map((e) => ({ ip: e.ip, port: e.port })),
        d.affinityMs,
      );
    }
    for (const key of this.failures.keys()) if (!desired.has(key)) this.failures.delete(key);

    for (const [key, s] of this.healthChecks) {
      const want = hc.get(key);
      if (want && want.port === s.port) continue;
      this.healthChecks.delete(key);
      await s.close();
    }
    for (const [key, want] of hc) {
      let s = this.healthChecks.get(key);
      if (!s) {
        s = new ServiceHealthServer(want.ns, want.name, want.port);
        try {
          await s.listen(nodeIP);
          this.healthChecks.set(key, s);
        } catch (e) {
          this.log.error(e, "Can't open health check port", 'service', key, 'port', want.port);
          continue;
        }
      }
      s.localEndpoints = want.count;
    }

    // A port that could not be opened (in use, not permitted) is tried again in a while.
    if (this.failures.size > 0 && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.requestSync();
      }, RETRY_FAILED_PORTS_MS).unref();
    }

    const node = this.host.nodes.store.get(nodeName);
    this.healthz.nodeEligible = !node?.metadata.deletionTimestamp && !(node?.spec?.taints ?? []).some((t) => t.key === TO_BE_DELETED_TAINT);
    this.healthz.lastUpdated = new Date();
  }

  private setPodRoutes(desired: ReadonlyMap<string, Desired & { hasAnyEndpoints: boolean }>): void {
    for (const key of this.podRoutes.keys()) if (!desired.has(key)) this.podRoutes.delete(key);
    for (const [key, d] of desired) {
      let r = this.podRoutes.get(key);
      if (!r) {
        r = { picker: new Picker(), hasAnyEndpoints: false };
        this.podRoutes.set(key, r);
      }
      r.hasAnyEndpoints = d.hasAnyEndpoints;
      r.picker.set(
        d.backends.map((e) => ({ ip: e.ip, port: e.port })),
        d.affinityMs,
      );
    }
  }

  /**
   * Where a connection from a pod on this node to ip:port goes when ip is a cluster IP: an
   * endpoint picked with this node's view (internalTrafficPolicy Local: its own endpoints only;
   * ClientIP affinity by the pod's IP), 'reject' when the Service has no endpoint at all, 'drop'
   * when it has some but none this node may use (kube-proxy's REJECT and DROP); undefined when
   * ip:port is no cluster IP port (the connection goes to the address itself).
   */
  routeFromPod(protocol: 'TCP' | 'UDP', ip: string, port: number, podIP: string): { ip: string; port: number } | 'reject' | 'drop' | undefined {
    const r = this.podRoutes.get(`${protocol}/${ip}:${port}`);
    if (!r) return undefined;
    const b = r.picker.pick(podIP);
    if (b) return { ip: b.ip, port: b.port };
    return r.hasAnyEndpoints ? 'drop' : 'reject';
  }

  /** Closes every port of this node and drops its connections. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retry);
    this.host.removed(this);
    await this.settled();
    await Promise.all([...this.listeners.values()].map((c) => c.l.close(true)));
    await Promise.all([...this.healthChecks.values()].map((s) => s.close()));
    this.listeners.clear();
    this.healthChecks.clear();
    this.podRoutes.clear();
    await this.healthz.close();
  }
}

export interface StartNodeProxyOptions extends NodeProxyOptions, ProxyHostOptions {
  /** Share this host's informers; default a host of its own, stopped with the proxy. */
  readonly host?: ProxyHost;
}

/** kube-proxy for one node; `stop` closes its ports (and its own host, if it made one). */
export async function startNodeProxy(opts: StartNodeProxyOptions): Promise<{ readonly proxy: NodeProxy; stop(): Promise<void> }> {
  const host = opts.host ?? new ProxyHost(opts);
  let proxy: NodeProxy;
  try {
    proxy = await host.addNode(opts);
  } catch (e) {
    if (!opts.host) await host.stop();
    throw e;
  }
  return {
    proxy,
    async stop() {
      await proxy.stop();
      if (!opts.host) await host.stop();
    },
  };
}
