// Several API servers behind one client: requests stick to one server and move to the next when it
// cannot be reached. client-go has no such thing (one server per kubeconfig cluster, a load
// balancer in front for HA); kplane's own client takes a list, as etcd's clients do, so that a
// controller-manager keeps working when the API server it talks to is killed (KEP 0001).
import { ClientAbortError, ClientNetworkError } from './errors.js';
import type { Transport, TransportRequest, TransportResponse } from './rest.js';

/**
 * Errors that mean the request never reached a server: the connection was refused or could not
 * be opened, or the HTTP/2 session was already going away. Any request, a write too, may go to
 * another server after one of these.
 */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
]);

/** Every `code` along an error's cause chain. */
function codesOf(e: unknown): string[] {
  const codes: string[] = [];
  for (let cur = e, depth = 0; cur && typeof cur === 'object' && depth < 8; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/**
 * Whether a failed request may be sent to another server. A request that never left is always
 * safe. A GET is safe after any network failure: reads have no effect. A write whose connection
 * broke after it was sent may have been applied, so it fails, as it would with one server; the
 * caller sees a ClientNetworkError and decides (a create retried gets AlreadyExists, an update
 * with a resourceVersion gets Conflict).
 */
export function mayFailOver(method: string, e: unknown): boolean {
  if (!(e instanceof ClientNetworkError) || e instanceof ClientAbortError) return false;
  if (method === 'GET') return true;
  return codesOf(e).some((c) => NOT_SENT.has(c));
}

/**
 * HTTP statuses after which a GET moves on: the server answered but cannot serve now (shutting
 * down, its storage unreachable, or a proxy in front that lost it). Writes keep the answer.
 */
const READ_FAILOVER_STATUSES = new Set([502, 503]);

/**
 * A Transport over several servers' transports. Requests go to the current server; when one fails
 * in a way `mayFailOver` allows, the next server (in list order, wrapping) becomes current and the
 * request is tried there, each server at most once per request. The last error is thrown when all
 * failed.
 */
export class FailoverTransport implements Transport {
  private current = 0;

  constructor(
    private readonly transports: readonly Transport[],
    private readonly onFailover?: (from: number, to: number, reason: string) => void,
  ) {
    if (transports.length === 0) throw new TypeError('FailoverTransport needs at least one transport');
  }

  /** Index of the server requests go to now. */
  get currentIndex(): number {
    return this.current;
  }

  async request(r: TransportRequest): Promise<TransportResponse> {
    const n = this.transports.length;
    let lastError: unknown;
    const start = this.current;
    for (let i = 0; i < n; i++) {
      const index = (start + i) % n;
      if (r.signal?.aborted) throw new ClientAbortError();
      let res: TransportResponse;
      try {
        res = await this.transports[index]!.request(r);
      } catch (e) {
        if (!mayFailOver(r.method, e) || n === 1) throw e;
        lastError = e;
        this.moveOn(index, e instanceof Error ? e.message : String(e));
        continue;
      }
      if (r.method === 'GET' && READ_FAILOVER_STATUSES.has(res.status) && i < n - 1) {
        res.cancel();
        this.moveOn(index, `HTTP ${res.status}`);
        continue;
      }
      return res;
    }
    throw lastError;
  }

  /** Makes the server after `failed` current, unless another request already moved on. */
  private moveOn(failed: number, reason: string): void {
    if (this.current !== failed) return;
    this.current = (failed + 1) % this.transports.length;
    this.onFailover?.(failed, this.current, reason);
  }

  async close(): Promise<void> {
    await Promise.all(this.transports.map((t) => t.close()));
  }
}
