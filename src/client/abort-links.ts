// Ties many requests to one caller's AbortSignal with one listener on that signal.
//
// Each request runs under its own AbortController (it also aborts on timeout, or when a watch is
// left early) that must follow the caller's signal. One `addEventListener` per request would put
// as many listeners on the caller's signal as it has requests in flight: discovery runs one per
// group-version in parallel, and Node warns ("Possible EventTarget memory leak detected. 11 abort
// listeners added to [AbortSignal]") past ten. Here the signal gets a single listener, shared by
// every request linked to it and removed when the last one is released.

interface Link {
  readonly callbacks: Set<() => void>;
  readonly fire: () => void;
}

export class AbortLinks {
  private readonly links = new WeakMap<AbortSignal, Link>();

  /** Calls `onAbort` once when `signal` aborts, until the returned release function is called. */
  link(signal: AbortSignal, onAbort: () => void): () => void {
    let link = this.links.get(signal);
    if (!link) {
      const callbacks = new Set<() => void>();
      const fire = (): void => {
        this.links.delete(signal);
        for (const cb of [...callbacks]) cb();
        callbacks.clear();
      };
      link = { callbacks, fire };
      this.links.set(signal, link);
      signal.addEventListener('abort', fire, { once: true });
    }
    // A wrapper per call, so that linking one function twice still gives two independent links.
    const cb = (): void => onAbort();
    const current = link;
    current.callbacks.add(cb);
    return () => {
      if (!current.callbacks.delete(cb) || current.callbacks.size > 0) return;
      signal.removeEventListener('abort', current.fire);
      if (this.links.get(signal) === current) this.links.delete(signal);
    };
  }
}
