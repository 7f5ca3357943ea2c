// Timeouts of the local drivers: a cloud on one machine answers in milliseconds, so the suite's
// waits are seconds, not upstream's minutes (k/k: LB creation 20m, lag 2m, node deletion 5m).
import type { CcmTimeouts } from '../types.js';

export const LOCAL_TIMEOUTS: CcmTimeouts = {
  lbCreateMs: 30_000,
  lbLagMs: 20_000,
  lbPropagationMs: 20_000,
  nodeDeletionMs: 30_000,
  proxyLagMs: 20_000,
};

/** LOCAL_TIMEOUTS with a driver config's `timeouts` (milliseconds) over them. */
export function localTimeouts(over: Partial<CcmTimeouts> | undefined): CcmTimeouts {
  const out: CcmTimeouts = { ...LOCAL_TIMEOUTS };
  for (const [k, v] of Object.entries(over ?? {})) {
    if (!(k in out)) throw new Error(`config.timeouts.${k}: unknown timeout; known: ${Object.keys(out).join(', ')}`);
    if (typeof v !== 'number' || !(v > 0)) throw new Error(`config.timeouts.${k}: ${JSON.stringify(v)} is not a positive number of milliseconds`);
    out[k as keyof CcmTimeouts] = v;
  }
  return out;
}
