// Userspace forwarding shared by the node proxy and the loopback cloud's load balancers: a TCP
// listener that pipes each accepted connection to a backend, a UDP listener with a per-client
// flow table, and the backend picker (round-robin, ClientIP affinity with a timeout).
// A listener's route is swapped in place on updates, so established connections and flows of an
// unchanged listener survive every resync.
import dgram from 'node:dgram';
import net from 'node:net';

export interface Backend {
  readonly ip: string;
  readonly port: number;
}

const backendKey = (b: Backend): string => `${b.ip}:${b.port}`;

/**
 * Round-robin over the backends; with an affinity timeout, a client IP keeps its backend while it
 * is still a backend and the client came back within the timeout (iptables' `recent` match,
 * refreshed on every new connection).
 */
export class Picker {
  private backends: Backend[] = [];
  private keys = new Set<string>();
  private next = 0;
  private affinityMs: number | undefined;
  private readonly sticky = new Map<string, { backend: Backend; lastSeen: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** New backends and affinity; affinity entries whose backend is gone are dropped. */
  set(backends: readonly Backend[], affinityTimeoutMs: number | undefined): void {
    this.backends = [...backends];
    this.keys = new Set(this.backends.map(backendKey));
    if (affinityTimeoutMs !== this.affinityMs) this.sticky.clear();
    this.affinityMs = affinityTimeoutMs;
    for (const [ip, s] of this.sticky) if (!this.keys.has(backendKey(s.backend))) this.sticky.delete(ip);
  }

  get size(): number {
    return this.backends.length;
  }

  has(b: Backend): boolean {
    return this.keys.has(backendKey(b));
  }

  list(): readonly Backend[] {
    return this.backends;
  }

  pick(clientIP: string): Backend | undefined {
    if (this.backends.length === 0) return undefined;
    const now = this.now();
    if (this.affinityMs !== undefined) {
      const s = this.sticky.get(clientIP);
      if (s && now - s.lastSeen <= this.affinityMs && this.keys.has(backendKey(s.backend))) {
        s.lastSeen = now;
        return s.backend;
      }
    }
    const b = this.backends[this.next++ % this.backends.length] as Backend;
    if (this.next >= 1 << 30) this.next = 0;
    if (this.affinityMs !== undefined) {
      if (this.sticky.size > 65_536) this.reap(now);
      this.sticky.set(clientIP, { backend: b, lastSeen: now });
    }
    return b;
  }

  private reap(now: number): void {
    for (const [ip, s] of this.sticky) if (now - s.lastSeen > (this.affinityMs ?? 0)) this.sticky.delete(ip);
  }
}

/** Where one listener sends a client; replaced as a whole on updates. */
export interface Route {
  /** A backend for this client, or undefined to refuse it (no endpoints: kube-proxy's REJECT). */
  pick(clientIP: string): Backend | undefined;
  /** Still a backend (UDP flows to a removed backend are dropped, as kube-proxy clears conntrack). */
  has(b: Backend): boolean;
  /** The address to connect from: the client's own (source kept) or the proxy's (SNAT). */
  source(clientIP: string): string | undefined;
  /** False: drop the client (loadBalancerSourceRanges). */
  allow?(clientIP: string): boolean;
}

const plainIP = (a: string | undefined): string => (a?.startsWith('::ffff:') ? a.slice(7) : (a ?? ''));

export interface Listener {
  readonly protocol: 'TCP' | 'UDP';
  route: Route;
  /** Stops accepting; `drop` also closes established connections and flows. */
  close(drop?: boolean): Promise<void>;
}

export class TcpListener implements Listener {
  readonly protocol = 'TCP';
  private readonly server: net.Server;
  private readonly conns = new Set<net.Socket>();

  private constructor(public route: Route) {
    this.server = net.createServer({ allowHalfOpen: true, noDelay: true }, (c) => this.accept(c));
  }

  static async listen(host: string, port: number, route: Route): Promise<TcpListener> {
    const l = new TcpListener(route);
    await new Promise<void>((resolve, reject) => {
      l.server.once('error', reject);
      l.server.listen({ host, port, exclusive: true }, () => {
        l.server.off('error', reject);
        resolve();
      });
    });
    l.server.on('error', () => {});
    return l;
  }

  get connections(): number {
    return this.conns.size;
  }

  private accept(client: net.Socket): void {
    const route = this.route;
    const ip = plainIP(client.remoteAddress);
    client.on('error', () => {});
    if (route.allow && !route.allow(ip)) {
      client.resetAndDestroy();
      return;
    }
    const b = route.pick(ip);
    if (!b) {
      client.resetAndDestroy();
      return;
    }
    const localAddress = route.source(ip);
    const upstream = net.connect({ host: b.ip, port: b.port, allowHalfOpen: true, noDelay: true, ...(localAddress ? { localAddress } : {}) });
    this.conns.add(client);
    this.conns.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
    });
    upstream.on('error', () => {
      // Nothing listens there: the client sees a reset, as it would from the backend itself.
      if (!connected) client.resetAndDestroy();
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const done = (s: net.Socket, other: net.Socket) => (hadError: boolean) => {
      this.conns.delete(s);
      if (hadError && !other.destroyed) other.destroy();
    };
    client.on('close', done(client, upstream));
    upstream.on('close', done(upstream, client));
  }

  async close(drop = false): Promise<void> {
    // The port is free at once; established connections keep running unless dropped.
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (!drop) return;
    for (const c of this.conns) c.destroy();
    await closed;
  }
}

interface Flow {
  readonly sock: dgram.Socket;
  readonly backend: Backend;
  lastSeen: number;
  pending: Buffer[] | undefined;
}

export class UdpListener implements Listener {
  readonly protocol = 'UDP';
  private readonly flows = new Map<string, Flow>();
  private readonly sweeper: NodeJS.Timeout;

  private constructor(
    private readonly sock: dgram.Socket,
    public route: Route,
    private readonly idleMs: number,
  ) {
    sock.on('message', (msg, rinfo) => this.receive(msg, rinfo));
    sock.on('error', () => {});
    this.sweeper = setInterval(() => this.sweep(), Math.max(100, Math.min(idleMs / 2, 5000)));
    this.sweeper.unref();
  }

  /** `idleMs`: a flow with no packet either way for this long is forgotten (conntrack's UDP timeout). */
  static async listen(host: string, port: number, route: Route, idleMs = 30_000): Promise<UdpListener> {
    const sock = dgram.createSocket({ type: 'udp4' });
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind({ address: host, port, exclusive: true }, () => {
        sock.off('error', reject);
        resolve();
      });
    });
    return new UdpListener(sock, route, idleMs);
  }

  get flowCount(): number {
    return this.flows.size;
  }

  private receive(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    const route = this.route;
    const ip = plainIP(rinfo.address);
    if (route.allow && !route.allow(ip)) return;
    const key = `${ip}:${rinfo.port}`;
    let flow = this.flows.get(key);
    if (flow && !route.has(flow.backend)) {
      this.endFlow(key, flow);
      flow = undefined;
    }
    if (!flow) {
      const b = route.pick(ip);
      if (!b) return;
      const sock = dgram.createSocket({ type: 'udp4' });
      const f: Flow = { sock, backend: b, lastSeen: Date.now(), pending: [] };
      flow = f;
      this.flows.set(key, f);
      sock.on('error', () => this.endFlow(key, f));
      sock.on('message', (reply) => {
        f.lastSeen = Date.now();
        this.sock.send(reply, rinfo.port, rinfo.address);
      });
      const localAddress = route.source(ip);
      sock.bind({ address: localAddress ?? '127.0.0.1', port: 0 }, () => {
        const queued = f.pending ?? [];
        f.pending = undefined;
        for (const m of queued) sock.send(m, b.port, b.ip);
      });
    }
    flow.lastSeen = Date.now();
    if (flow.pending) flow.pending.push(msg);
    else flow.sock.send(msg, flow.backend.port, flow.backend.ip);
  }

  private endFlow(key: string, f: Flow): void {
    if (this.flows.get(key) === f) this.flows.delete(key);
    try {
      f.sock.close();
    } catch {
      // already closed
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, f] of this.flows) if (now - f.lastSeen > this.idleMs) this.endFlow(k, f);
  }

  async close(_drop = false): Promise<void> {
    clearInterval(this.sweeper);
    // Replies travel back through the listening socket: without it a flow is dead either way.
    for (const [k, f] of this.flows) this.endFlow(k, f);
    await new Promise<void>((resolve) => this.sock.close(() => resolve()));
  }
}
