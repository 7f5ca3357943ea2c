// Where a webhook call's time goes, for the `webhook` scenario's tail (issue 23): preloaded with
// `--import` into the kplane servers and the example webhook when KPLANE_BENCH_WEBHOOK_TRACE names
// a directory (bench/scenarios/extending.ts adds it). It only listens: undici's and node:http's
// diagnostics channels (a call created, its headers written, its answer's headers and end, new
// connections with their handshake), V8's GC pauses and the event loop's delay, each stamped in
// epoch milliseconds (performance.timeOrigin + now, comparable across the processes), and writes
// them as JSON lines to <dir>/<role>-<pid>.jsonl. bench/webhook-trace-report.ts joins them with the
// generator's sends and tells what a create in the tail waited on. It sees the calls made on the
// server's thread, which at 200/s are all of them; those made on the webhook transport's thread (the
// calls made while 4 or more are under way, src/admission/webhook/client.ts) are not traced.
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';

const dir = process.env.KPLANE_BENCH_WEBHOOK_TRACE;
if (dir) {
  const role = process.env.KPLANE_BENCH_WEBHOOK_TRACE_ROLE ?? 'kplane';
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${role}-${process.pid}.jsonl`);
  const now = (): number => performance.timeOrigin + performance.now();
  let lines: string[] = [];
  const emit = (o: Record<string, unknown>): void => void lines.push(JSON.stringify(o));
  const flush = (): void => {
    if (lines.length === 0) return;
    appendFileSync(file, `${lines.join('\n')}\n`);
    lines = [];
  };
  setInterval(flush, 1000).unref();
  process.on('exit', flush);

  // The object's name in the AdmissionReview a call carries: what joins a call to its create.
  const nameOf = (body: unknown): string | undefined => {
    if (!Buffer.isBuffer(body)) return undefined;
    const m = /"object":\{[^]*?"name":"([^"]+)"/.exec(body.toString('latin1'));
    return m?.[1];
  };
  interface Call {
    name: string | undefined;
    created: number;
    sent?: number;
    headers?: number;
    done?: number;
    local?: number;
  }
  const calls = new WeakMap<object, Call>();
  subscribe('undici:request:create', (m) => {
    const { request } = m as { request: { body?: unknown } };
    calls.set(request, { name: nameOf(request.body), created: now() });
  });
  subscribe('undici:client:sendHeaders', (m) => {
    const { request, socket } = m as { request: object; socket: { localPort?: number } };
    const c = calls.get(request);
    if (c) {
      c.sent = now();
      c.local = socket.localPort;
    }
  });
  subscribe('undici:request:headers', (m) => {
    const c = calls.get((m as { request: object }).request);
    if (c) c.headers = now();
  });
  subscribe('undici:request:trailers', (m) => {
    const c = calls.get((m as { request: object }).request);
    if (!c) return;
    c.done = now();
    emit({ t: 'call', ...c });
  });
  subscribe('undici:request:error', (m) => {
    const c = calls.get((m as { request: object }).request);
    if (c) emit({ t: 'callError', ...c, at: now(), error: String((m as { error?: unknown }).error) });
  });
  const connecting = new WeakMap<object, number>();
  subscribe('undici:client:beforeConnect', (m) => connecting.set((m as { connectParams: object }).connectParams, now()));
  subscribe('undici:client:connected', (m) => {
    const { socket } = m as { socket: { localPort?: number } };
    emit({ t: 'connected', at: now(), local: socket.localPort });
  });
  subscribe('undici:client:connectError', (m) => emit({ t: 'connectError', at: now(), error: String((m as { error?: unknown }).error) }));

  // The server side (the example webhook): each request's arrival and the end of its answer.
  const served = new WeakMap<object, number>();
  subscribe('http.server.request.start', (m) => served.set((m as { request: object }).request, now()));
  subscribe('http.server.response.finish', (m) => {
    const { request, socket } = m as { request: object; socket: { remotePort?: number } };
    const start = served.get(request);
    if (start !== undefined) emit({ t: 'served', start, end: now(), remote: socket.remotePort });
  });
  let handshakes = 0;
  subscribe('http.server.request.start', (m) => {
    const { socket } = m as { socket: { __traced?: boolean; remotePort?: number } };
    if (!socket.__traced) {
      socket.__traced = true;
      handshakes++;
      emit({ t: 'newConnection', at: now(), remote: socket.remotePort, count: handshakes });
    }
  });

  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      emit({ t: 'gc', start: performance.timeOrigin + e.startTime, ms: e.duration, kind: (e as { detail?: { kind?: number } }).detail?.kind ?? 0 });
    }
  }).observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  setInterval(() => {
    emit({ t: 'loop', at: now(), p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 });
    delay.reset();
  }, 1000).unref();
  emit({ t: 'start', at: now(), role, pid: process.pid });
}
