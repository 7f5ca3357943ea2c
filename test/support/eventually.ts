// Polls until `probe` returns a value (not undefined), failing the test after `ms` with the last error.
import assert from 'node:assert/strict';

export interface EventuallyOptions {
  /** Pause between probes (default 50 ms). */
  intervalMs?: number;
  /** Appended to the failure message, e.g. the log of a child process. */
  context?: () => string;
}

export async function eventually<T>(ms: number, what: string, probe: () => Promise<T | undefined>, opts: number | EventuallyOptions = 50): Promise<T> {
  const { intervalMs = 50, context } = typeof opts === 'number' ? { intervalMs: opts } : opts;
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}${last ? ` (last error: ${String(last)})` : ''}${context ? `\n${context()}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
