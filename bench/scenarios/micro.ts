// [micro] In-process microbenchmarks (bench/micro.ts): feature gate enabled() (goal ≤ 50 ns), parseJson against
// JSON.parse, CEL evaluation, the server-side apply merge.
import type { Scenario } from '../context.js';
import { runMicroBench } from '../micro.js';

export const micro: Scenario = {
  names: ['micro'],
  async run(ctx) {
    const { rec } = ctx;
    console.log('\n[micro] feature gate enabled(), parseJson vs JSON.parse, CEL evaluation, server-side apply merge (in this process)');
    for (const r of runMicroBench()) {
      console.log(`  ${r.op}: ${r.value}`);
      rec.row({ scenario: 'micro', target: 'kplane', op: r.op, concurrency: '-', value: r.value });
    }
    return rec.result();
  },
};
