// Shared by the benchmark driver (bench/run.ts, the load generator) and its child processes.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A 1 KiB (serialized) ConfigMap, the unit of every scenario. */
export function configMap(name: string, namespace: string | undefined, payloadTag = ''): Record<string, unknown> {
  const base = { apiVersion: 'v1', kind: 'ConfigMap', metadata: namespace ? { name, namespace } : { name }, data: { seq: payloadTag, payload: '' } };
  const pad = Math.max(0, 1024 - Buffer.byteLength(JSON.stringify(base)));
  base.data.payload = 'x'.repeat(pad);
  return base;
}

export interface Stats {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function stats(samples: number[]): Stats {
  if (samples.length === 0) return { n: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  const s = Float64Array.from(samples).sort();
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  let sum = 0;
  for (const v of s) sum += v;
  return { n: s.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[s.length - 1]!, mean: sum / s.length };
}

// ---- a tiny request/response protocol over the IPC channel of a forked child ------------------

export interface RpcRequest {
  readonly id: number;
  readonly cmd: string;
  readonly args: unknown;
}

export type RpcReply =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

export class RpcClient {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(readonly child: ChildProcess) {
    child.on('message', (m: RpcReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(m.error));
    });
    child.once('exit', (code, signal) => {
      for (const w of this.waiting.values()) w.reject(new Error(`bench child exited (${code ?? signal})`));
      this.waiting.clear();
    });
  }

  call<T>(cmd: string, args: unknown = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, cmd, args } satisfies RpcRequest);
    });
  }
}

export function serveRpc(handlers: Record<string, (args: never) => Promise<unknown>>): void {
  process.on('message', (m: RpcRequest) => {
    const h = handlers[m.cmd];
    const reply = (r: RpcReply): void => {
      process.send?.(r);
    };
    if (!h) {
      reply({ id: m.id, ok: false, error: `unknown command ${m.cmd}` });
      return;
    }
    h(m.args as never).then(
      (result) => reply({ id: m.id, ok: true, result }),
      (e: unknown) => reply({ id: m.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
    );
  });
}

/** The bearer token kplane accepts in benchmarks (h2load cannot present a client certificate). */
export const BENCH_TOKEN = 'kplane-bench-token';

export interface Credentials {
  readonly ca: string;
  /** A client certificate and its key; or, with `token`, none. */
  readonly cert?: string;
  readonly key?: string;
  /** A bearer token (a ServiceAccount's), sent instead of a client certificate. */
  readonly token?: string;
}

/** Pauses in the server process over a measured round. */
export interface Pauses {
  readonly loopDelayP50Ms: number;
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  readonly gcCount: number;
  readonly gcTotalMs: number;
  readonly gcMaxMs: number;
  readonly majorGcCount: number;
  readonly majorGcMaxMs: number;
}

export function describePauses(p: Pauses): string {
  const f = (n: number): string => n.toFixed(1);
  return `server loop delay p99 ${f(p.loopDelayP99Ms)} ms, max ${f(p.loopDelayMaxMs)} ms; GC ${p.gcCount} pauses, ${f(p.gcTotalMs)} ms, max ${f(p.gcMaxMs)} ms (${p.majorGcCount} major, max ${f(p.majorGcMaxMs)} ms)`;
}

export interface StartedServer {
  readonly url: string;
  readonly pid: number;
  /** kplane servers: their PKI, so the load generator and the bare server use the same one. */
  readonly pki?: { ca: string; servingCert: string; servingKey: string; adminCert: string; adminKey: string };
}

export interface Memory {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** CPU time (user+system, ms) a process (or one of its threads) has used so far, from /proc (Linux); NaN once it is gone. */
export function procCpuMs(pid: number, tid?: number): number {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}
const CLK_TCK = 100;

/** Resident memory (MB) of a process, from /proc (Linux); 0 once it is gone. */
export function rssMB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}
