// Polls until `probe` returns a value (not undefined), failing the test after `ms` with the last error.
import assert from 'node:assert/strict';

export async function eventually<T>(ms: number, what: string, probe: () => Promise<T | undefined>, intervalMs = 50): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
