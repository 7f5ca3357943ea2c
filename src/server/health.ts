// kube-style health endpoints (k8s.io/apiserver/pkg/server/healthz/healthz.go): /healthz, /livez
// and /readyz list named checks, `/<endpoint>/<check>` runs one. Texts match upstream byte for
// byte because probes, kubeadm and humans parse them. Unlike upstream, every check is bounded
// by a timeout: a storage ping stuck on a dead backend must turn /readyz red, not hang the probe.

export interface HealthCheck {
  readonly name: string;
  check(): Promise<void>;
  /** Which endpoints list this check; default all three. Readiness-only checks leave out `livez`. */
  readonly endpoints?: readonly HealthEndpoint[];
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

export interface HealthResponse {
  readonly status: 200 | 500;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface CheckFailure {
  readonly name: string;
  readonly reason: string;
}

export interface HealthChecksOptions {
  /** A check that has not settled by then fails with a timeout. Default 2000 ms. */
  readonly checkTimeoutMs?: number;
  /** Failures with their reasons, which the public response withholds; for the server log. */
  readonly onFailure?: (endpoint: HealthEndpoint, failures: readonly CheckFailure[]) => void;
}

export interface HealthChecks {
  /**
   * Answers a health path, or returns undefined when the path is not a health endpoint (or names
   * an unknown check), so the router can fall through to 404.
   */
  handle(path: string, query?: URLSearchParams | string): Promise<HealthResponse> | undefined;
  /** Registers another check (e.g. a post-start hook); names are unique. */
  add(check: HealthCheck): void;
  /** From now on the `shutdown` check fails, so /readyz tells load balancers to stop sending traffic. */
  markShuttingDown(): void;
  readonly shuttingDown: boolean;
  /** Check names per endpoint, in the order they are listed. */
  names(endpoint: HealthEndpoint): string[];
}

export const HEALTH_ENDPOINTS: readonly HealthEndpoint[] = ['healthz', 'livez', 'readyz'];
export const DEFAULT_CHECK_TIMEOUT_MS = 2000;
const TEXT_PLAIN = 'text/plain; charset=utf-8';
const HEADERS = { 'x-content-type-options': 'nosniff' } as const;

/** Run a check with a deadline. Concurrent probes share one in-flight call, so a hanging check never piles up calls. */
class BoundedCheck {
  private inFlight: Promise<void> | undefined;
  constructor(
    readonly check: HealthCheck,
    private readonly timeoutMs: number,
  ) {}

  get name(): string {
    return this.check.name;
  }

  /** Resolves to undefined when healthy, else the reason. Never rejects. */
  run(): Promise<string | undefined> {
    if (!this.inFlight) {
      const call = Promise.resolve()
        .then(() => this.check.check())
        .finally(() => {
          if (this.inFlight === call) this.inFlight = undefined;
        });
      this.inFlight = call;
    }
    const call = this.inFlight;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<string>((resolve) => {
      // Not unref'd: someone is waiting for this answer, and the timer is cleared once the race settles.
      timer = setTimeout(() => resolve(`timed out after ${this.timeoutMs}ms`), this.timeoutMs);
    });
    const outcome = call.then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    return Promise.race([outcome, deadline]).finally(() => clearTimeout(timer));
  }
}

/** Go's %q for the names in the "cannot be excluded" warning. */
const quoted = (names: readonly string[]): string => names.map((n) => JSON.stringify(n)).join(',');

export function createHealthChecks(checks: readonly HealthCheck[], opts: HealthChecksOptions = {}): HealthChecks {
  const timeoutMs = opts.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  let shuttingDown = false;
  const registered: BoundedCheck[] = [];

  const add = (check: HealthCheck): void => {
    if (!/^[A-Za-z0-9._\-/]+$/.test(check.name)) throw new Error(`invalid health check name ${JSON.stringify(check.name)}`);
    if (registered.some((c) => c.name === check.name)) throw new Error(`health check ${JSON.stringify(check.name)} is registered twice`);
    registered.push(new BoundedCheck(check, timeoutMs));
  };

  if (!checks.some((c) => c.name === 'ping')) add({ name: 'ping', check: async () => {} });
  for (const c of checks) add(c);
  const shutdownCheck = new BoundedCheck(
    {
      name: 'shutdown',
      endpoints: ['readyz'],
      check: async () => {
        if (shuttingDown) throw new Error('process is shutting down');
      },
    },
    timeoutMs,
  );

  /** The shutdown check stays last, after checks added later, as upstream lists it. */
  const checksFor = (endpoint: HealthEndpoint): BoundedCheck[] => {
    const list = registered.filter((c) => (c.check.endpoints ?? HEALTH_ENDPOINTS).includes(endpoint));
    if (endpoint === 'readyz' && !registered.some((c) => c.name === 'shutdown')) list.push(shutdownCheck);
    return list;
  };

  async function root(endpoint: HealthEndpoint, query: URLSearchParams): Promise<HealthResponse> {
    const excluded = new Set(query.getAll('exclude'));
    const list = checksFor(endpoint);
    const reasons = await Promise.all(list.map((c) => (excluded.has(c.name) ? Promise.resolve(undefined) : c.run())));
    let listing = '';
    const failures: CheckFailure[] = [];
    list.forEach((c, i) => {
      if (excluded.delete(c.name)) {
        listing += `[+]${c.name} excluded: ok\n`;
        return;
      }
      const reason = reasons[i];
      if (reason === undefined) {
        listing += `[+]${c.name} ok\n`;
      } else {
        // Upstream withholds the reason because these endpoints are public; it goes to the log.
        listing += `[-]${c.name} failed: reason withheld\n`;
        failures.push({ name: c.name, reason });
      }
    });
    if (excluded.size > 0) listing += `warn: some health checks cannot be excluded: no matches for ${quoted([...excluded].sort())}\n`;
    if (failures.length > 0) {
      opts.onFailure?.(endpoint, failures);
      // Go's http.Error terminates the body with a newline.
      return { status: 500, contentType: TEXT_PLAIN, headers: HEADERS, body: `${listing}${endpoint} check failed\n` };
    }
    const body = query.has('verbose') ? `${listing}${endpoint} check passed\n` : 'ok';
    return { status: 200, contentType: TEXT_PLAIN, headers: HEADERS, body };
  }

  async function single(endpoint: HealthEndpoint, check: BoundedCheck): Promise<HealthResponse> {
    const reason = await check.run();
    if (reason === undefined) return { status: 200, contentType: TEXT_PLAIN, headers: HEADERS, body: 'ok' };
    opts.onFailure?.(endpoint, [{ name: check.name, reason }]);
    return { status: 500, contentType: TEXT_PLAIN, headers: HEADERS, body: `internal server error: ${reason}\n` };
  }

  return {
    handle(path, query) {
      const match = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
      if (!match) return undefined;
      const endpoint = match[1] as HealthEndpoint;
      const checkName = match[2];
      if (checkName === undefined) return root(endpoint, typeof query === 'string' || query === undefined ? new URLSearchParams(query) : query);
      const check = checksFor(endpoint).find((c) => c.name === checkName);
      return check ? single(endpoint, check) : undefined;
    },
    add,
    markShuttingDown() {
      shuttingDown = true;
    },
    get shuttingDown() {
      return shuttingDown;
    },
    names(endpoint) {
      return checksFor(endpoint).map((c) => c.name);
    },
  };
}
