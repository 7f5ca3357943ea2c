// A raw HTTPS (HTTP/1.1) client for end-to-end tests: exact bytes in, status/headers/bytes out,
// every request bounded by a deadline. Uses the admin client certificate from `<dataDir>/pki/`.
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';

export interface Credentials {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

/** The admin credentials `kplane serve` writes into `<dataDir>/pki/`. */
export function adminCredentials(dataDir: string): Required<Credentials> {
  const dir = join(dataDir, 'pki');
  return {
    ca: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(dir, 'admin.crt'), 'utf8'),
    key: readFileSync(join(dir, 'admin.key'), 'utf8'),
  };
}

export interface RawResponse {
  readonly status: number;
  readonly httpVersion: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  text(): string;
  json<T = Record<string, unknown>>(): T;
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string | number | string[]>;
  /** A Buffer/string is sent with content-length; an iterable of chunks is sent chunked. */
  readonly body?: Buffer | string | Iterable<Buffer> | AsyncIterable<Buffer>;
  readonly timeoutMs?: number;
}

export class RawClient {
  readonly agent: Agent;
  private readonly base: URL;

  constructor(url: string, creds: Credentials, opts: { keepAlive?: boolean; maxSockets?: number } = {}) {
    this.base = new URL(url);
    this.agent = new Agent({
      keepAlive: opts.keepAlive ?? true,
      maxSockets: opts.maxSockets ?? 8,
      ca: creds.ca,
      ...(creds.cert ? { cert: creds.cert } : {}),
      ...(creds.key ? { key: creds.key } : {}),
    });
  }

  request(r: RawRequest): Promise<RawResponse> {
    const timeoutMs = r.timeoutMs ?? 15_000;
    return new Promise<RawResponse>((resolve, reject) => {
      const headers: Record<string, string | number | string[]> = { ...(r.headers ?? {}) };
      const fixed = typeof r.body === 'string' ? Buffer.from(r.body) : Buffer.isBuffer(r.body) ? r.body : undefined;
      if (fixed && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['content-length'] = fixed.length;
      const req = httpsRequest({
        agent: this.agent,
        host: this.base.hostname,
        port: this.base.port,
        method: r.method ?? 'GET',
        path: r.path,
        headers,
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`${r.method ?? 'GET'} ${r.path}: no complete answer within ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
        res.on('end', () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            httpVersion: res.httpVersion,
            headers: res.headers,
            body,
            text: () => body.toString('utf8'),
            json: <T>() => JSON.parse(body.toString('utf8')) as T,
          });
        });
      });
      if (r.body === undefined || fixed) {
        req.end(fixed);
        return;
      }
      const body = r.body;
      void (async () => {
        try {
          for await (const chunk of body as AsyncIterable<Buffer>) {
            if (req.destroyed) return;
            // The server may answer (413) and stop reading while we still send: stop then.
            if (!req.write(chunk)) {
              await new Promise<void>((ok) => {
                const done = (): void => {
                  req.off('drain', done);
                  req.off('close', done);
                  ok();
                };
                req.on('drain', done);
                req.on('close', done);
              });
            }
          }
          if (!req.destroyed) req.end();
        } catch (e) {
          req.destroy(e as Error);
        }
      })();
    });
  }

  /** Opens a long-running GET (a watch); resolves once the response headers are in. */
  stream(r: { path: string; headers?: Record<string, string>; timeoutMs?: number }): Promise<RawStream> {
    return new Promise<RawStream>((resolve, reject) => {
      const req = httpsRequest({ agent: this.agent, host: this.base.hostname, port: this.base.port, method: 'GET', path: r.path, headers: r.headers ?? {} });
      const timer = setTimeout(() => req.destroy(new Error(`GET ${r.path}: no response headers within ${r.timeoutMs ?? 10_000} ms`)), r.timeoutMs ?? 10_000);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.on('response', (res) => {
        clearTimeout(timer);
        const chunks: Buffer[] = [];
        const listeners = new Set<() => void>();
        let ended = false;
        const notify = (): void => {
          for (const l of [...listeners]) l();
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          notify();
        });
        const endedP = new Promise<void>((ok) => {
          const fin = (): void => {
            ended = true;
            notify();
            ok();
          };
          res.on('end', fin);
          res.on('close', fin);
          res.on('error', fin);
        });
        const data = (): Buffer => Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          data,
          ended: endedP,
          get isEnded() {
            return ended;
          },
          waitFor<T>(pred: (d: Buffer) => T | undefined | false, timeoutMs = 10_000): Promise<T> {
            return new Promise<T>((ok, fail) => {
              const check = (): void => {
                const v = pred(data());
                if (v !== undefined && v !== false) {
                  cleanup();
                  ok(v);
                } else if (ended) {
                  cleanup();
                  fail(new Error(`stream ${r.path} ended before the condition held; got: ${data().toString('latin1').slice(-500)}`));
                }
              };
              const t = setTimeout(() => {
                cleanup();
                fail(new Error(`stream ${r.path}: condition not met within ${timeoutMs} ms; got: ${data().toString('latin1').slice(-500)}`));
              }, timeoutMs);
              const cleanup = (): void => {
                clearTimeout(t);
                listeners.delete(check);
              };
              listeners.add(check);
              check();
            });
          },
          close: () => req.destroy(),
        });
      });
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface RawStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every byte received so far. */
  data(): Buffer;
  /** Resolves with the predicate's first truthy answer; rejects on timeout or when the stream ends first. */
  waitFor<T>(pred: (data: Buffer) => T | undefined | false, timeoutMs?: number): Promise<T>;
  readonly ended: Promise<void>;
  readonly isEnded: boolean;
  close(): void;
}

/** JSON watch events (one per line) in `data`. */
export function watchLines(
  data: Buffer,
): { type: string; object: Record<string, unknown> & { metadata?: { name?: string; resourceVersion?: string; uid?: string } } }[] {
  return data
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { type: string; object: Record<string, unknown> }];
      } catch {
        return []; // a partial last line
      }
    });
}

/** Asserts nothing; just the shape of a kube Status for messages. */
export interface KubeStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  code?: number;
  reason?: string;
  message?: string;
  details?: { causes?: { reason?: string; message?: string; field?: string }[]; retryAfterSeconds?: number };
  metadata?: Record<string, unknown>;
}
