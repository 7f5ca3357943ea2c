// [ssa] Server-side apply of an unchanged 50-field ConfigMap (bench/ssa.ts). Goal: p99 at c=1 ≤ 10 ms.
import { fmt, sharedOf, type Scenario } from '../context.js';
import { SSA_FIELDS, runSsa } from '../ssa.js';

export const ssa: Scenario = {
  names: ['ssa'],
  shared: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const { kplane, creds } = sharedOf(ctx);
    console.log(
      `\n[ssa] Server-side apply of an unchanged ${SSA_FIELDS}-field ConfigMap (PATCH application/apply-patch+yaml, fieldManager=bench; no write expected)`,
    );
    await kplane.ensureNamespace('bench-ssa');
    const rounds = await runSsa(kplane.started.url, creds, {
      namespace: 'bench-ssa',
      concurrency: cfg.concurrency,
      warmMs: cfg.warmMs,
      measureMs: cfg.measureMs,
      maxOps: cfg.maxOps,
    });
    for (const r of rounds) rec.round('ssa', 'kplane', 'apply unchanged', r.concurrency, r.result);
    const c1 = rounds.find((r) => r.concurrency === 1);
    if (c1) rec.goal(`p99 apply of an unchanged ${SSA_FIELDS}-field object at c=1`, '≤ 10 ms', `${fmt(c1.p99, 2)} ms`, c1.p99 <= 10);
    return rec.result();
  },
};
