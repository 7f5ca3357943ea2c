// What waking a sleeping thread costs on this machine: a worker thread answers each message from
// this one, sent every `gapMs` (so the worker has gone back to sleep), and the round trip and the
// time inside postMessage are timed. On bare metal a round trip is some tens of µs; on a VM whose
// vCPUs halt when idle each wake-up is an inter-processor interrupt through the hypervisor, and on
// the 2-vCPU VM behind docs/benchmarks.md (nested PVM) a round trip took 130–190 µs at the median.
// A webhook call adds such wake-ups to every create (kplane → webhook process → kplane), so the
// webhook scenario prints this beside its figures: it tells how much of the "added" is the machine.
import { Worker } from 'node:worker_threads';

export interface Wakeup {
  /** Round trip (message to the sleeping worker and its answer), µs. */
  readonly roundTripP50: number;
  readonly roundTripP99: number;
  /** Time spent inside postMessage by the sender, µs. */
  readonly sendP50: number;
  readonly n: number;
  /** The pause before each message, ms. */
  readonly gapMs: number;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? Number.NaN;
};

/** `n` round trips to a worker thread, one every `gapMs` ms. */
export async function wakeupRoundTrip(n = 200, gapMs = 5): Promise<Wakeup> {
  const worker = new Worker("require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));", {
    eval: true,
  });
  try {
    const rtt: number[] = [];
    const send: number[] = [];
    for (let i = 0; i < n; i++) {
      await new Promise((r) => setTimeout(r, gapMs));
      const answered = new Promise((r) => worker.once('message', r));
      const t0 = performance.now();
      worker.postMessage(i);
      send.push((performance.now() - t0) * 1000);
      await answered;
      rtt.push((performance.now() - t0) * 1000);
    }
    // The first few wake a worker still starting up.
    const steady = (xs: number[]): number[] => xs.slice(Math.min(10, xs.length - 1));
    return { roundTripP50: quantile(steady(rtt), 0.5), roundTripP99: quantile(steady(rtt), 0.99), sendP50: quantile(steady(send), 0.5), n, gapMs };
  } finally {
    await worker.terminate();
  }
}

export const describeWakeup = (w: Wakeup): string =>
  `thread wake-up round trip p50 ${w.roundTripP50.toFixed(0)} µs, p99 ${w.roundTripP99.toFixed(0)} µs (postMessage itself p50 ${w.sendP50.toFixed(0)} µs; ${w.n} messages ${w.gapMs} ms apart)`;
