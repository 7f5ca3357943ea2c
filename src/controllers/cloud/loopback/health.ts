// Health checks of the loopback cloud's load balancers, as cloud LBs (and cloud-provider-kind's
// Envoy) run them: HTTP GET /healthz on kube-proxy's port (10256) for externalTrafficPolicy
// Cluster, on the Service's healthCheckNodePort for Local; healthy on a 200, unhealthy after
// `unhealthyThreshold` failures in a row, healthy again after `healthyThreshold` successes.
// One target (node address, port) is checked once per round however many LBs use it.
import http from 'node:http';

export interface HealthCheckOptions {
  /** Between rounds; default 2000 ms (cloud-provider-kind's Envoy interval). */
  readonly intervalMs?: number;
  /** Per probe; default 1000 ms. */
  readonly timeoutMs?: number;
  /** Default 2. */
  readonly unhealthyThreshold?: number;
  /** Default 1. */
  readonly healthyThreshold?: number;
}

interface Target {
  readonly host: string;
  readonly port: number;
  refs: number;
  /** Undefined until the first probe answers. */
  healthy: boolean | undefined;
  streak: number;
}

export const targetKey = (host: string, port: number): string => `${host}:${port}`;

function probe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/healthz', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

export class HealthChecker {
  private readonly targets = new Map<string, Target>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly down: number;
  private readonly up: number;

  /** `onChange` runs after a round in which some target changed state. */
  constructor(
    opts: HealthCheckOptions,
    private readonly onChange: () => void,
  ) {
    this.intervalMs = opts.intervalMs ?? 2000;
    this.timeoutMs = opts.timeoutMs ?? 1000;
    this.down = opts.unhealthyThreshold ?? 2;
    this.up = opts.healthyThreshold ?? 1;
  }

  acquire(host: string, port: number): string {
    const key = targetKey(host, port);
    const t = this.targets.get(key);
    if (t) t.refs++;
    else this.targets.set(key, { host, port, refs: 1, healthy: undefined, streak: 0 });
    this.timer ??= setInterval(() => void this.round(), this.intervalMs).unref();
    return key;
  }

  release(key: string): void {
    const t = this.targets.get(key);
    if (t && --t.refs <= 0) this.targets.delete(key);
    if (this.targets.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  healthy(key: string): boolean {
    return this.targets.get(key)?.healthy === true;
  }

  /** Probes the targets not yet probed (a new LB or node), at once. */
  async checkNew(keys: Iterable<string>): Promise<void> {
    const fresh = [...keys].map((k) => this.targets.get(k)).filter((t): t is Target => t !== undefined && t.healthy === undefined);
    await Promise.all(fresh.map((t) => this.check(t)));
  }

  private async check(t: Target): Promise<boolean> {
    const ok = await probe(t.host, t.port, this.timeoutMs);
    const before = t.healthy;
    if (t.healthy === undefined) {
      t.healthy = ok;
      t.streak = 0;
    } else if (ok === t.healthy) {
      t.streak = 0;
    } else if (++t.streak >= (ok ? this.up : this.down)) {
      t.healthy = ok;
      t.streak = 0;
    }
    return before !== t.healthy;
  }

  private round(): Promise<void> {
    this.running ??= (async () => {
      const changed = await Promise.all([...this.targets.values()].map((t) => this.check(t)));
      if (changed.some(Boolean)) this.onChange();
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.targets.clear();
  }
}
