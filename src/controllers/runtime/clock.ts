// Time as a value passed in (k8s.io/utils/clock): real timers in production, a stepped fake in
// tests so that backoffs, delays, lease expiry and resyncs are checked without sleeping.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms`; cancel() before it fires prevents it. */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  },
};

/** Resolves after `ms` on `clock`, or at once (false) when `signal` aborts; true when the time passed. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to; timers fire in due order during `step`/`set`. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => (timer.cancelled = true) };
  }

  /** Timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** When the next live timer is due, if any. */
  nextTimerAt(): number | undefined {
    let min: number | undefined;
    for (const t of this.timers) if (!t.cancelled && (min === undefined || t.at < min)) min = t.at;
    return min;
  }

  /** Advances by `ms`, firing every timer due on the way (including ones those timers set). */
  step(ms: number): void {
    this.set(this.t + ms);
  }

  set(time: number): void {
    for (;;) {
      this.timers = this.timers.filter((x) => !x.cancelled);
      const due = this.timers.filter((x) => x.at <= time).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.t = Math.max(this.t, due.at);
      due.cancelled = true;
      due.fn();
    }
    this.t = Math.max(this.t, time);
  }
}
