// Calls a webhook (k8s.io/apiserver/pkg/util/webhook's REST client, as the dispatchers use it): a
// POST of the AdmissionReview to the URL with `?timeout=<n>s`, trusting `caBundle` (else the
// system's roots), bounded by the webhook's timeout. Failures are described in Go's words, as
// upstream's `failed to call webhook: ...` texts carry them. A `service` reference is called at
// https://<name>.<namespace>.svc:<port><path>, its certificate verified for that name, and dialled
// where the service resolver says at each call (webhookutil's ClientManager dials so).
//
// The calls' transport (TLS, HTTP/1.1, the keep-alive connections: transport.ts) runs on the API
// server's thread while few calls are under way, and on a worker thread of its own for the calls
// beyond those (see setInlineCalls). A call's transport costs about as much CPU as the create it is
// made for: under load the server's thread would spend half its time on it, where Go's apiserver
// spreads that work over every core. A call on the thread costs the server a message each way
// (the body out as text, the answer back as text) and a thread's wake-up, which at low load would
// only add latency.
import { Worker } from 'node:worker_threads';
import type { EndpointSpec, FromTransport, ToTransport } from './transport-protocol.js';
import { Transport } from './transport.js';
import { serviceServerName, type ServiceResolver } from './service-resolver.js';

export class CallError extends Error {
  override readonly name = 'CallError';
  /** For a non-2xx answer, client-go's StatusError code: the answer's Status code, else its HTTP status. */
  readonly code: number | undefined;
  constructor(message: string, code?: number) {
    super(message);
    this.code = code;
  }
}

/** A `clientConfig.service` (port defaulted to 443 by the registry). */
export interface ServiceReference {
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly path?: string;
}

let nextEndpointId = 1;

/**
 * Where a webhook is called: its URL (or service reference) and CA. Its keep-alive connections live
 * in the transports (inline and thread), shared by the webhooks naming the same URL and CA, and close when it is
 * released (once the calls under way have ended).
 */
export class WebhookEndpoint {
  readonly url: URL;
  /** A service reference and what resolves it; undefined for a URL. */
  readonly service: { readonly ref: ServiceReference; readonly resolver: ServiceResolver; readonly hostPort: string } | undefined;
  readonly id = nextEndpointId++;
  readonly spec: EndpointSpec;
  /** Opened on the inline transport. */
  inline = false;
  /** The transport thread this endpoint was opened on (a thread that died is replaced, and the endpoint opened again there). */
  thread: ThreadTransport | undefined;
  private readonly shown = new Map<number, string>();

  constructor(rawURL: string | { ref: ServiceReference; resolver: ServiceResolver }, caBundle: string | undefined) {
    let service: EndpointSpec['service'];
    if (typeof rawURL === 'string') {
      this.url = new URL(rawURL);
      this.service = undefined;
    } else {
      const serverName = serviceServerName(rawURL.ref.namespace, rawURL.ref.name);
      const hostPort = `${serverName}:${rawURL.ref.port}`;
      this.url = new URL(`https://${hostPort}${rawURL.ref.path ?? ''}`);
      this.service = { ...rawURL, hostPort };
      service = { serverName, hostPort };
    }
    const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
    this.spec = { url: this.url.href, ca, service };
    // The transport thread starts with the first endpoint, so that it is ready before calls overflow.
    thread ??= new ThreadTransport();
  }

  /** The `Post "<url>"` a call's transport failures start with, as Go's url.Error prints it. */
  shownFor(timeoutSeconds: number): string {
    let shown = this.shown.get(timeoutSeconds);
    if (shown === undefined) {
      const target = new URL(this.url);
      target.searchParams.set('timeout', `${timeoutSeconds}s`);
      // Go prints the service's host with its port, even 443.
      shown = `Post ${JSON.stringify(this.service ? `https://${this.service.hostPort}${target.pathname === '/' && !this.service.ref.path ? '' : target.pathname}${target.search}` : target.toString())}`;
      this.shown.set(timeoutSeconds, shown);
    }
    return shown;
  }

  /** Closes the connections once the calls under way have ended: a configuration change must not cut them. */
  release(): void {
    inline.release(this);
    this.thread?.release(this);
  }
}

/** A call waiting for its transport's answer. */
class PendingCall {
  constructor(
    readonly ep: WebhookEndpoint,
    readonly timeoutSeconds: number,
    readonly resolve: (data: string) => void,
    readonly reject: (e: CallError) => void,
  ) {}

  fail(why: string, prefixed: boolean, code: number | undefined): void {
    this.reject(new CallError(prefixed ? `${this.ep.shownFor(this.timeoutSeconds)}: ${why}` : why, code));
  }
}

/** The calls under way on one transport, by id, until it answers. */
class Calls {
  protected readonly pending = new Map<number, PendingCall>();
  protected nextCall = 1;

  get underWay(): number {
    return this.pending.size;
  }

  protected add(p: PendingCall): number {
    const id = this.nextCall++;
    this.pending.set(id, p);
    return id;
  }

  protected settle(m: FromTransport): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('data' in m) p.resolve(m.data);
    else p.fail(m.why, m.prefixed, m.code);
  }
}

/** The transport on the API server's thread: a call costs no message, and no thread's wake-up. */
class InlineTransport extends Calls {
  private readonly transport = new Transport((m) => this.settle(m));

  call(ep: WebhookEndpoint, body: string, timeoutSeconds: number, dial: Dial, p: PendingCall): void {
    if (!ep.inline) {
      ep.inline = true;
      this.transport.open(ep.id, ep.spec);
    }
    this.transport.call(this.add(p), ep.id, body, timeoutSeconds, dial);
  }

  release(ep: WebhookEndpoint): void {
    if (ep.inline) this.transport.release(ep.id);
    ep.inline = false;
  }
}

/**
 * The transport on a worker thread of its own, one per process, started with the first endpoint
 * (or, after one died, at the next overflow) and given calls only once it is ready: starting it
 * takes a few hundred milliseconds, which no call should wait for. It does not keep the process
 * alive while no call is under way. If it dies, the calls under way on it fail.
 */
class ThreadTransport extends Calls {
  readonly worker: Worker;
  dead = false;
  isReady = false;
  readonly ready: Promise<void>;
  private markReady: () => void = () => undefined;

  constructor() {
    super();
    const ts = import.meta.url.endsWith('.ts');
    this.worker = new Worker(new URL('../../runtime/thread-entry.mjs', import.meta.url), {
      workerData: { script: new URL(ts ? './transport-worker.ts' : './transport-worker.js', import.meta.url).href, registerTsx: ts },
      // As the SQLite writer's: the parent's flags but these make the Worker constructor throw or do not apply.
      execArgv: process.execArgv.filter((arg) => arg === '--enable-source-maps' || arg.startsWith('--conditions=')),
      name: 'webhook-transport',
    });
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.worker.on('message', (m: readonly FromTransport[] | { readonly ready: true }) => {
      if ('ready' in m) {
        this.isReady = true;
        this.markReady();
        return;
      }
      for (const end of m) this.settle(end);
      if (this.pending.size === 0) this.worker.unref();
    });
    this.worker.on('error', (e) => this.die(`the webhook transport thread failed: ${e.message}`));
    this.worker.on('exit', (code) => this.die(`the webhook transport thread exited with code ${code}`));
    // After the listeners: adding one refs the worker again.
    this.worker.unref();
  }

  call(ep: WebhookEndpoint, body: string, timeoutSeconds: number, dial: Dial, p: PendingCall): void {
    if (ep.thread !== this) {
      ep.thread = this;
      this.send({ t: 'open', ep: ep.id, spec: ep.spec });
    }
    if (this.pending.size === 0) this.worker.ref();
    this.send({ t: 'call', id: this.add(p), ep: ep.id, body, timeoutSeconds, dial });
  }

  release(ep: WebhookEndpoint): void {
    if (ep.thread === this && !this.dead) this.send({ t: 'release', ep: ep.id });
    ep.thread = undefined;
  }

  /**
   * Messages go out together once this turn of the event loop has run its callbacks (one
   * setImmediate): each postMessage costs the server's thread a structured clone and, when the
   * thread sleeps, a wake-up, and at c=64 several calls begin in the same turn.
   */
  private send(m: ToTransport): void {
    if (this.outbox.push(m) === 1) setImmediate(this.flush);
  }

  private outbox: ToTransport[] = [];
  private readonly flush = (): void => {
    const batch = this.outbox;
    this.outbox = [];
    if (!this.dead) this.worker.postMessage(batch);
  };

  private die(why: string): void {
    if (this.dead) return;
    this.dead = true;
    if (thread === this) thread = undefined;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) p.fail(why, true, undefined);
    void this.worker.terminate();
  }
}

type Dial = { host: string; port: number } | undefined;

/**
 * How many calls may be under way (inline and on the thread together) for the next to run on the
 * server's thread; beyond that it goes to the transport thread.
 * Few calls under way: the server's thread has time to spare, and a call made there answers
 * soonest. Many: the server's thread is the bottleneck, and the transport's CPU (about what the
 * create it is made for costs) is better spent on another core.
 */
let inlineCalls = 4;
const inline = new InlineTransport();
let thread: ThreadTransport | undefined;

/** For tests and benchmarks: below how many calls under way a call runs inline (0: every call on a ready thread; Infinity: every call inline); answers the previous setting. */
export function setInlineCalls(n: number): number {
  const previous = inlineCalls;
  inlineCalls = n;
  return previous;
}

/** The transport thread's worker (started if it is not) once it is ready, for tests. */
export async function transportWorker(): Promise<Worker> {
  const t = (thread ??= new ThreadTransport());
  // Kept alive while waited for.
  t.worker.ref();
  await t.ready;
  if (t.underWay === 0) t.worker.unref();
  return t.worker;
}

/** For tests: whether the transport thread is there, and ready for calls. */
export function transportThreadState(): 'none' | 'starting' | 'ready' {
  return !thread ? 'none' : thread.isReady ? 'ready' : 'starting';
}

export function newEndpoint(rawURL: string, caBundle: string | undefined): WebhookEndpoint {
  return new WebhookEndpoint(rawURL, caBundle);
}

/** An endpoint for a `service` reference, resolved by `resolver` at each call. */
export function newServiceEndpoint(ref: ServiceReference, caBundle: string | undefined, resolver: ServiceResolver): WebhookEndpoint {
  return new WebhookEndpoint({ ref, resolver }, caBundle);
}

/** POSTs `body` (JSON text) and answers the response body; throws CallError with Go's text for what is not a 2xx answer. */
export function post(ep: WebhookEndpoint, body: string, timeoutSeconds: number): Promise<string> {
  let dial: Dial;
  if (ep.service) {
    try {
      const target = ep.service.resolver.resolve(ep.service.ref.namespace, ep.service.ref.name, ep.service.ref.port);
      dial = { host: target.host, port: target.port };
    } catch (e) {
      return Promise.reject(new CallError(`${ep.shownFor(timeoutSeconds)}: ${e instanceof Error ? e.message : String(e)}`));
    }
  }
  return new Promise<string>((resolve, reject) => {
    const p = new PendingCall(ep, timeoutSeconds, resolve, reject);
    // Few calls under way in all (not only inline: at c=64 the inline ones end soonest, and would
    // take most calls), or no thread ready: inline.
    if (inline.underWay + (thread?.underWay ?? 0) < inlineCalls) inline.call(ep, body, timeoutSeconds, dial, p);
    else if ((thread ??= new ThreadTransport()).isReady) thread.call(ep, body, timeoutSeconds, dial, p);
    else inline.call(ep, body, timeoutSeconds, dial, p);
  });
}
