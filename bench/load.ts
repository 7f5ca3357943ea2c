// The load generator (runs in bench/run.ts's process, never in the server's): HTTPS keep-alive
// clients, closed-loop rounds, and HTTP/2 watchers. Open-loop rounds (fixed arrival rate) come from
// h2load, a C load generator (bench/h2load.ts).
import { Agent, request } from 'node:https';
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import type { Credentials } from './common.js';

export interface Response {
  readonly status: number;
  /** the body; with `discardBody`, only its first chunk (enough for an error message) */
  readonly body: Buffer;
  /** bytes of body received */
  readonly bytes: number;
}

export interface SendOptions {
  /**
   * Count the body's bytes instead of keeping them: for large answers the generator does not read
   * (lists), so its own copying and garbage collection do not cap what it measures.
   */
  readonly discardBody?: boolean;
}

/** HTTP/1.1 keep-alive client for one base URL; `maxSockets` = the round's concurrency. */
export class HttpClient {
  readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(
    url: string,
    private readonly creds: Credentials,
    maxSockets: number,
  ) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets, ca: creds.ca, cert: creds.cert, key: creds.key });
    // Count TLS connections opened: each costs the server a full handshake (with a client certificate).
    const create = this.agent.createConnection.bind(this.agent);
    this.agent.createConnection = (...args: Parameters<typeof create>) => {
      this.connectionsOpened++;
      return create(...args);
    };
  }

  /** TLS connections this client has opened so far. */
  connectionsOpened = 0;

  send(method: string, path: string, body?: string, contentType = 'application/json', opts: SendOptions = {}): Promise<Response> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { Accept: 'application/json' };
      if (this.creds.token !== undefined) headers['Authorization'] = `Bearer ${this.creds.token}`;
      if (body !== undefined) {
        headers['Content-Type'] = contentType;
        headers['Content-Length'] = Buffer.byteLength(body);
      }
      const req = request(
        { host: this.host, port: this.port, method, path, headers, agent: this.agent, ca: this.creds.ca, cert: this.creds.cert, key: this.creds.key },
        (res) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          res.on('data', (c: Buffer) => {
            bytes += c.length;
            if (!opts.discardBody || chunks.length === 0) chunks.push(c);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), bytes }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface RoundResult {
  readonly ops: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly seconds: number;
  /** Per-request latencies in ms. */
  readonly latencies: number[];
}

/**
 * Closed loop: `concurrency` workers each send the next request when their previous one is
 * answered, until `maxOps` were sent or `maxMs` passed.
 */
export async function closedLoop(opts: { concurrency: number; maxOps: number; maxMs: number; op: (i: number) => Promise<void> }): Promise<RoundResult> {
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const deadline = t0 + opts.maxMs;
  const worker = async (): Promise<void> => {
    while (next < opts.maxOps && performance.now() < deadline) {
      const i = next++;
      const s = performance.now();
      try {
        await opts.op(i);
        latencies.push(performance.now() - s);
      } catch (e) {
        errors++;
        firstError ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { ops: latencies.length, errors, seconds, latencies, ...(firstError ? { firstError } : {}) };
}

/**
 * Open loop: `op(i)` started every 1000/`rate` ms for `ms`, whether or not the earlier ones were
 * answered; latency from each start. `done` hears of each answered op (its due time, start and end,
 * in performance.now() ms). Ends when every op started has settled.
 */
export async function openLoop(opts: {
  rate: number;
  ms: number;
  op: (i: number) => Promise<void>;
  done?: (i: number, due: number, sent: number, end: number) => void;
}): Promise<RoundResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; ; i++) {
    const due = t0 + (i * 1000) / opts.rate;
    if (due > t0 + opts.ms) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const s = performance.now();
    inFlight.push(
      opts.op(i).then(
        () => {
          const e = performance.now();
          latencies.push(e - s);
          opts.done?.(i, due, s, e);
        },
        (e: unknown) => {
          errors++;
          firstError ??= e instanceof Error ? e.message : String(e);
        },
      ),
    );
  }
  await Promise.all(inFlight);
  return { ops: latencies.length, errors, seconds: opts.ms / 1000, latencies, ...(firstError ? { firstError } : {}) };
}

export function expectStatus(r: Response, want: number): void {
  if (r.status !== want) throw new Error(`HTTP ${r.status} (want ${want}): ${r.body.toString('utf8').slice(0, 200)}`);
}

// ---- watchers ------------------------------------------------------------------------------

/**
 * `count` watch streams spread over `sessions` HTTP/2 connections. Each event line's
 * resourceVersion and arrival time (performance.now()) go to `onEvent`.
 */
export class Watchers {
  private readonly sessions: ClientHttp2Session[] = [];
  private readonly streams: ClientHttp2Stream[] = [];
  failures = 0;

  constructor(
    private readonly url: string,
    private readonly creds: Credentials,
  ) {}

  async open(opts: { count: number; sessions: number; path: string; onEvent: (watcher: number, rv: number, at: number) => void }): Promise<void> {
    for (let s = 0; s < opts.sessions; s++) {
      const session = connect(this.url, { ca: this.creds.ca, cert: this.creds.cert, key: this.creds.key });
      session.on('error', () => this.failures++);
      await new Promise<void>((ok, fail) => {
        session.once('connect', () => ok());
        session.once('error', fail);
      });
      this.sessions.push(session);
    }
    const marker = '"resourceVersion":"';
    for (let w = 0; w < opts.count; w++) {
      const session = this.sessions[w % this.sessions.length]!;
      const stream = session.request({ ':path': opts.path, accept: 'application/json' });
      stream.setEncoding('utf8');
      let buf = '';
      stream.on('data', (chunk: string) => {
        const at = performance.now();
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          // The object's own resourceVersion (metadata comes before data in the line).
          const i = line.indexOf(marker);
          if (i >= 0) opts.onEvent(w, Number(line.slice(i + marker.length, line.indexOf('"', i + marker.length))), at);
        }
      });
      stream.on('error', () => this.failures++);
      this.streams.push(stream);
    }
  }

  close(): void {
    for (const s of this.streams) s.close();
    for (const s of this.sessions) s.destroy();
  }
}
