// [resolver] OLM dependency resolution: one Subscription over a generated catalog of 500 packages
// and 30,000 bundles (bench/olm-resolve.ts), beside reading the snapshot alone. Goal: ≤ 1 s.
import type { Scenario } from '../context.js';
import { RESOLVE_FULL, RESOLVE_QUICK, runResolveBench } from '../olm-resolve.js';

export const olmResolve: Scenario = {
  names: ['resolver'],
  async run(ctx) {
    const { rec } = ctx;
    console.log('\n[resolver] OLM resolution of one Subscription over 500 packages × 60 bundles (in this process)');
    const rows = await runResolveBench(ctx.quick ? RESOLVE_QUICK : RESOLVE_FULL, (line) => console.log(`  ${line}`));
    for (const r of rows) {
      rec.row({ scenario: 'resolver', target: r.target, op: r.op, concurrency: '-', value: r.value });
      if (r.goal) rec.goal(`${r.target}: ${r.op}`, r.goal.target, r.value, r.goal.met);
    }
    return rec.result();
  },
};
