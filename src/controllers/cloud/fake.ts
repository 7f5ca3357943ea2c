// The `fake` cloud provider: the shape of k8s.io/cloud-provider/fake (FakeCloud). Everything is in
// memory: it records every call (method and arguments), returns injected errors and waits injected
// delays per method, answers instance questions from a table tests fill (exists / shutdown /
// metadata), hands out load balancer ingress addresses from a 127.x range, and keeps routes.
// A test in the same process drives it directly; a CCM in another process is driven through the
// optional admin HTTP endpoint (`adminAddress` in --cloud-config), on loopback only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  InstanceNotFoundError,
  registerCloudProvider,
  RetryError,
  type CloudProvider,
  type ControllerClientBuilder,
  defaultLoadBalancerName,
  type Ctx,
  type InstanceMetadata,
  type InstancesV2,
  type LoadBalancer,
  type LoadBalancerStatus,
  type Node,
  type Route,
  type Routes,
  type Service,
  type Zone,
  type Zones,
} from './provider.js';

export const FAKE_PROVIDER_NAME = 'fake';

/** One recorded call: the method (Go's name, lower camel case) and what it was given. */
export interface FakeCall {
  readonly method: string;
  /** Service calls: `namespace/name`; instance calls: the node name; route calls: the route or cluster. */
  readonly target: string;
  readonly nodes?: readonly string[];
}

/** What the fake answers for one instance (by node name). */
export interface FakeInstance {
  /** Default true. */
  exists?: boolean;
  /** Default false. */
  shutdown?: boolean;
  /** Merged over the generated metadata (providerID `fake://<node>`, zone, region, type). */
  metadata?: Partial<InstanceMetadata>;
}

/** A load balancer the fake holds. */
export interface FakeBalancer {
  readonly name: string;
  readonly service: string;
  nodes: string[];
  status: LoadBalancerStatus;
}

/** An injected failure: thrown `times` more times (default: until cleared). */
export interface FakeError {
  readonly message: string;
  /** A RetryError with this delay instead of a plain Error. */
  readonly retryAfterMs?: number;
  times?: number;
}

/** `--cloud-config` for the fake (JSON; every field optional). */
export interface FakeCloudConfig {
  /** `host:port` (127.0.0.0/8 only) of the admin HTTP endpoint; port 0 picks one. */
  adminAddress?: string;
  /** The chosen address is written to this file once listening (for a test to read). */
  adminAddressFile?: string;
  /**
   * Keeps the cloud's state (load balancers, ingress addresses, instances, routes) in this JSON
   * file, written on every change and read at start: a cloud outlives the CCM that talks to it, so
   * a test can kill -9 the CCM and check that nothing leaked.
   */
  stateFile?: string;
  /** Where ingress IPs come from: the first three octets of a 127.x.y.0/24 (default 127.0.200). */
  ingressPrefix?: string;
  /** Whether the fake offers Routes (default true); LoadBalancer and InstancesV2 can be turned off too. */
  routes?: boolean;
  loadBalancer?: boolean;
  instances?: boolean;
  /** Instances known at start, by node name. */
  instanceTable?: Record<string, FakeInstance>;
  /** What an instance not in the table answers (default: exists, running). */
  unknownInstances?: FakeInstance;
  /** Zone and region of generated metadata (defaults zone-a, region-1) and of Zones. */
  zone?: string;
  region?: string;
  instanceType?: string;
}

interface FakeState {
  balancers?: FakeBalancer[];
  ingress?: Record<string, string>;
  instances?: Record<string, FakeInstance>;
  routes?: Route[];
  nextIngress?: number;
}

const svcKey = (s: Readonly<Service>): string => `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`;

function abortable(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export class FakeCloud implements CloudProvider, LoadBalancer, InstancesV2, Zones, Routes {
  /** Every call, in order. */
  readonly calls: FakeCall[] = [];
  readonly instances = new Map<string, FakeInstance>();
  readonly balancers = new Map<string, FakeBalancer>();
  readonly routeTable = new Map<string, Route>();
  private readonly errors = new Map<string, FakeError>();
  private readonly delays = new Map<string, number>();
  /** Methods whose calls hang, ignoring cancellation, until `setHang(method, false)` lets them go on. */
  private readonly hangs = new Map<string, { readonly released: Promise<void>; readonly release: () => void }>();
  private readonly ingressPrefix: string;
  private readonly ingressByService = new Map<string, string>();
  private nextIngress = 1;
  private admin: Server | undefined;
  /** The admin endpoint's `host:port` once listening. */
  adminAddress: string | undefined;
  initialized = false;

  constructor(readonly config: FakeCloudConfig = {}) {
    const prefix = config.ingressPrefix ?? '127.0.200';
    if (!/^127\.\d{1,3}\.\d{1,3}$/.test(prefix) || prefix.split('.').some((o) => Number(o) > 255)) {
      throw new Error(`fake cloud: ingressPrefix must be the first three octets of an address in 127.0.0.0/8, got ${JSON.stringify(prefix)}`);
    }
    this.ingressPrefix = prefix;
    for (const [name, inst] of Object.entries(config.instanceTable ?? {})) this.instances.set(name, { ...inst });
    if (config.stateFile && existsSync(config.stateFile)) this.load(config.stateFile);
  }

  private load(file: string): void {
    let st: FakeState;
    try {
      st = JSON.parse(readFileSync(file, 'utf8')) as FakeState;
    } catch (e) {
      throw new Error(`fake cloud: stateFile ${file} is not readable JSON: ${(e as Error).message}`, { cause: e });
    }
    for (const b of st.balancers ?? []) this.balancers.set(b.service, b);
    for (const [k, ip] of Object.entries(st.ingress ?? {})) this.ingressByService.set(k, ip);
    for (const [k, i] of Object.entries(st.instances ?? {})) this.instances.set(k, i);
    for (const r of st.routes ?? []) this.routeTable.set(r.name, r);
    this.nextIngress = st.nextIngress ?? this.nextIngress;
  }

  /** Writes the state file (when configured) after a change: whole file, renamed into place. */
  private save(): void {
    const file = this.config.stateFile;
    if (!file) return;
    const st: FakeState = {
      balancers: [...this.balancers.values()],
      ingress: Object.fromEntries(this.ingressByService),
      instances: Object.fromEntries(this.instances),
      routes: [...this.routeTable.values()],
      nextIngress: this.nextIngress,
    };
    writeFileSync(`${file}.tmp`, JSON.stringify(st));
    renameSync(`${file}.tmp`, file);
  }

  // --- test controls -------------------------------------------------------------------------

  /** Makes `method` fail (every call, or the next `times` calls); undefined clears it. */
  setError(method: string, err: FakeError | undefined): void {
    if (err) this.errors.set(method, { ...err });
    else this.errors.delete(method);
  }

  /** Makes `method` wait `ms` (cancelled with the caller's context) before answering. */
  setDelay(method: string, ms: number): void {
    if (ms > 0) this.delays.set(method, ms);
    else this.delays.delete(method);
  }

  /**
   * Makes calls of `method` hang and ignore their context's cancellation, as a stuck cloud API
   * whose client has no deadline; `false` lets the waiting calls go on (and later ones run).
   */
  setHang(method: string, on: boolean): void {
    const cur = this.hangs.get(method);
    if (on && !cur) {
      let release = (): void => {};
      const released = new Promise<void>((r) => {
        release = r;
      });
      this.hangs.set(method, { released, release });
    } else if (!on && cur) {
      this.hangs.delete(method);
      cur.release();
    }
  }

  setInstance(node: string, inst: FakeInstance): void {
    this.instances.set(node, { ...this.instances.get(node), ...inst });
    this.save();
  }

  /** The calls of one method, in order. */
  callsOf(method: string): FakeCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  clearCalls(): void {
    this.calls.length = 0;
  }

  private async enter(ctx: Ctx, call: FakeCall): Promise<void> {
    this.calls.push(call);
    await this.hangs.get(call.method)?.released;
    const delay = this.delays.get(call.method);
    if (delay) await abortable(delay, ctx.signal);
    const err = this.errors.get(call.method);
    if (!err) return;
    if (err.times !== undefined) {
      err.times--;
      if (err.times <= 0) this.errors.delete(call.method);
    }
    throw err.retryAfterMs !== undefined ? new RetryError(err.message, err.retryAfterMs) : new Error(err.message);
  }

  private instance(node: Readonly<Node>): Required<Pick<FakeInstance, 'exists' | 'shutdown'>> & FakeInstance {
    const name = node.metadata?.name ?? '';
    const known = this.instances.get(name) ?? this.config.unknownInstances ?? {};
    return { exists: true, shutdown: false, ...known };
  }

  // --- CloudProvider -------------------------------------------------------------------------

  async initialize(_clients: ControllerClientBuilder, stop: AbortSignal): Promise<void> {
    this.initialized = true;
    if (this.config.adminAddress === undefined || this.admin) return;
    await this.startAdmin(this.config.adminAddress);
    stop.addEventListener('abort', () => void this.close(), { once: true });
  }

  loadBalancer(): LoadBalancer | undefined {
    return this.config.loadBalancer === false ? undefined : this;
  }

  instancesV2(): InstancesV2 | undefined {
    return this.config.instances === false ? undefined : this;
  }

  zones(): Zones | undefined {
    return this;
  }

  routes(): Routes | undefined {
    return this.config.routes === false ? undefined : this;
  }

  providerName(): string {
    return FAKE_PROVIDER_NAME;
  }

  hasClusterID(): boolean {
    return true;
  }

  // --- LoadBalancer --------------------------------------------------------------------------

  async getLoadBalancer(ctx: Ctx, _clusterName: string, service: Readonly<Service>): Promise<{ exists: boolean; status?: LoadBalancerStatus }> {
    await this.enter(ctx, { method: 'getLoadBalancer', target: svcKey(service) });
    const lb = this.balancers.get(svcKey(service));
    return lb ? { exists: true, status: structuredClone(lb.status) } : { exists: false };
  }

  getLoadBalancerName(_ctx: Ctx, _clusterName: string, service: Readonly<Service>): string {
    return defaultLoadBalancerName(service);
  }

  async ensureLoadBalancer(ctx: Ctx, _clusterName: string, service: Readonly<Service>, nodes: readonly Readonly<Node>[]): Promise<LoadBalancerStatus> {
    const key = svcKey(service);
    const names = nodes.map((n) => n.metadata?.name ?? '');
    await this.enter(ctx, { method: 'ensureLoadBalancer', target: key, nodes: names });
    let ip = this.ingressByService.get(key);
    if (!ip) {
      if (this.nextIngress > 254) throw new Error(`fake cloud: no ingress address left in ${this.ingressPrefix}.0/24`);
      ip = `${this.ingressPrefix}.${this.nextIngress++}`;
      this.ingressByService.set(key, ip);
    }
    const status: LoadBalancerStatus = { ingress: [{ ip, ipMode: 'VIP' }] };
    this.balancers.set(key, { name: defaultLoadBalancerName(service), service: key, nodes: names, status });
    this.save();
    return structuredClone(status);
  }

  async updateLoadBalancer(ctx: Ctx, _clusterName: string, service: Readonly<Service>, nodes: readonly Readonly<Node>[]): Promise<void> {
    const key = svcKey(service);
    const names = nodes.map((n) => n.metadata?.name ?? '');
    await this.enter(ctx, { method: 'updateLoadBalancer', target: key, nodes: names });
    const lb = this.balancers.get(key);
    if (!lb) throw new Error(`fake cloud: no load balancer for service ${key}`);
    lb.nodes = names;
    this.save();
  }

  async ensureLoadBalancerDeleted(ctx: Ctx, _clusterName: string, service: Readonly<Service>): Promise<void> {
    const key = svcKey(service);
    await this.enter(ctx, { method: 'ensureLoadBalancerDeleted', target: key });
    this.balancers.delete(key);
    this.ingressByService.delete(key);
    this.save();
  }

  // --- InstancesV2 ---------------------------------------------------------------------------

  async instanceExists(ctx: Ctx, node: Readonly<Node>): Promise<boolean> {
    await this.enter(ctx, { method: 'instanceExists', target: node.metadata?.name ?? '' });
    return this.instance(node).exists;
  }

  async instanceShutdown(ctx: Ctx, node: Readonly<Node>): Promise<boolean> {
    await this.enter(ctx, { method: 'instanceShutdown', target: node.metadata?.name ?? '' });
    const inst = this.instance(node);
    if (!inst.exists) throw new InstanceNotFoundError();
    return inst.shutdown;
  }

  async instanceMetadata(ctx: Ctx, node: Readonly<Node>): Promise<InstanceMetadata> {
    const name = node.metadata?.name ?? '';
    await this.enter(ctx, { method: 'instanceMetadata', target: name });
    const inst = this.instance(node);
    if (!inst.exists) throw new InstanceNotFoundError();
    return {
      providerID: `${FAKE_PROVIDER_NAME}://${name}`,
      instanceType: this.config.instanceType ?? 'fake.small',
      nodeAddresses: [{ type: 'Hostname', address: name }],
      zone: this.config.zone ?? 'zone-a',
      region: this.config.region ?? 'region-1',
      ...structuredClone(inst.metadata ?? {}),
    };
  }

  // --- Zones ---------------------------------------------------------------------------------

  private zone(): Zone {
    return { failureDomain: this.config.zone ?? 'zone-a', region: this.config.region ?? 'region-1' };
  }

  async getZone(ctx: Ctx): Promise<Zone> {
    await this.enter(ctx, { method: 'getZone', target: '' });
    return this.zone();
  }

  async getZoneByProviderID(ctx: Ctx, providerID: string): Promise<Zone> {
    await this.enter(ctx, { method: 'getZoneByProviderID', target: providerID });
    return this.zone();
  }

  async getZoneByNodeName(ctx: Ctx, nodeName: string): Promise<Zone> {
    await this.enter(ctx, { method: 'getZoneByNodeName', target: nodeName });
    return this.zone();
  }

  // --- Routes --------------------------------------------------------------------------------

  async listRoutes(ctx: Ctx, clusterName: string): Promise<Route[]> {
    await this.enter(ctx, { method: 'listRoutes', target: clusterName });
    return [...this.routeTable.values()].map((r) => structuredClone(r));
  }

  async createRoute(ctx: Ctx, clusterName: string, nameHint: string, route: Route): Promise<void> {
    await this.enter(ctx, { method: 'createRoute', target: `${route.targetNode} ${route.destinationCIDR}` });
    // Upstream's fake names a route "<clusterName>-<nameHint>" and ignores route.Name.
    const name = `${clusterName}-${nameHint}`;
    this.routeTable.set(name, { ...structuredClone(route), name });
    this.save();
  }

  async deleteRoute(ctx: Ctx, _clusterName: string, route: Route): Promise<void> {
    await this.enter(ctx, { method: 'deleteRoute', target: `${route.targetNode} ${route.destinationCIDR}` });
    this.routeTable.delete(route.name);
    this.save();
  }

  // --- the admin endpoint ----------------------------------------------------------------------

  /**
   * Serves the test controls over HTTP (JSON):
   *   GET    /calls                      every recorded call
   *   GET    /balancers                  the load balancers
   *   GET    /routes                     the routes
   *   PUT    /instances/NODE             set what NODE answers ({exists, shutdown, metadata})
   *   DELETE /instances/NODE             the instance is gone (exists false)
   *   PUT    /errors/METHOD              inject a failure ({message, retryAfterMs?, times?})
   *   DELETE /errors/METHOD              clear it
   *   PUT    /delays/METHOD              {ms}
   */
  async startAdmin(address: string): Promise<string> {
    const m = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})$/.exec(address);
    if (!m) throw new Error(`fake cloud: adminAddress must be HOST:PORT with a host in 127.0.0.0/8, got ${JSON.stringify(address)}`);
    const srv = createServer((req, res) => {
      this.handleAdmin(req, res).catch((e: unknown) => send(res, 500, { error: String(e) }));
    });
    await new Promise<void>((ok, fail) => {
      srv.once('error', fail);
      srv.listen(Number(m[2]), m[1], () => ok());
    });
    this.admin = srv;
    const a = srv.address() as AddressInfo;
    this.adminAddress = `${a.address}:${a.port}`;
    if (this.config.adminAddressFile) writeFileSync(this.config.adminAddressFile, this.adminAddress);
    return this.adminAddress;
  }

  async close(): Promise<void> {
    const srv = this.admin;
    this.admin = undefined;
    if (!srv) return;
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }

  private async handleAdmin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const body = req.method === 'PUT' || req.method === 'POST' ? await readJSON(req) : undefined;
    if (body instanceof Error) return send(res, 400, { error: body.message });
    const [what, name] = parts;
    if (req.method === 'GET' && parts.length === 1) {
      if (what === 'calls') return send(res, 200, this.calls);
      if (what === 'balancers') return send(res, 200, [...this.balancers.values()]);
      if (what === 'routes') return send(res, 200, [...this.routeTable.values()]);
      if (what === 'instances') return send(res, 200, Object.fromEntries(this.instances));
    }
    if (parts.length === 2 && name) {
      if (what === 'instances' && req.method === 'PUT') {
        this.setInstance(name, body as FakeInstance);
        return send(res, 200, this.instances.get(name));
      }
      if (what === 'instances' && req.method === 'DELETE') {
        this.setInstance(name, { exists: false });
        return send(res, 200, this.instances.get(name));
      }
      if (what === 'errors' && req.method === 'PUT') {
        const e = body as Partial<FakeError>;
        if (typeof e?.message !== 'string') return send(res, 400, { error: 'an error needs a "message"' });
        this.setError(name, e as FakeError);
        return send(res, 200, e);
      }
      if (what === 'errors' && req.method === 'DELETE') {
        this.setError(name, undefined);
        return send(res, 200, {});
      }
      if (what === 'delays' && req.method === 'PUT') {
        const ms = (body as { ms?: unknown })?.ms;
        if (typeof ms !== 'number' || !(ms >= 0)) return send(res, 400, { error: 'a delay needs "ms", a number ≥ 0' });
        this.setDelay(name, ms);
        return send(res, 200, { ms });
      }
    }
    send(res, 404, { error: `no such admin route: ${req.method} ${path}` });
  }
}

function send(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJSON(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > 1 << 20) return new Error('body too large');
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    return new Error(`body is not JSON: ${(e as Error).message}`);
  }
}

/** Parses the fake's --cloud-config (JSON); a syntax error names the problem. */
export function parseFakeCloudConfig(text: string | undefined): FakeCloudConfig {
  if (text === undefined || !text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`fake cloud: --cloud-config is not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('fake cloud: --cloud-config must be a JSON object');
  return v;
}

let registered = false;

/** Registers `fake` (idempotent: importing the cloud controllers does it). */
export function registerFakeCloudProvider(): void {
  if (registered) return;
  registered = true;
  registerCloudProvider(FAKE_PROVIDER_NAME, (config) => new FakeCloud(parseFakeCloudConfig(config)));
}
