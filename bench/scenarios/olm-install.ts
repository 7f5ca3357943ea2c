// [olm-install] Installing 50 operators' bundles from one catalog through Subscriptions
// (bench/olm-install.ts), beside creating the same objects directly. Goal: ≤ 30 s.
import type { Scenario } from '../context.js';
import { runInstallBench } from '../olm-install.js';

export const olmInstall: Scenario = {
  names: ['olm-install'],
  async run(ctx) {
    const { rec } = ctx;
    console.log('\n[olm-install] 50 operators installed from one catalog through Subscriptions (in this process)');
    const rows = await runInstallBench(50, (line) => console.log(`  ${line}`));
    for (const r of rows) {
      rec.row({ scenario: 'olm-install', target: r.target, op: r.op, concurrency: '-', value: r.value });
      if (r.goal) rec.goal(`${r.target}: ${r.op}`, r.goal.target, r.value, r.goal.met);
    }
    return rec.result();
  },
};
