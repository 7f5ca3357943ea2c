// [cr] Custom resources (20-field schema, 2 CEL rules) against ConfigMaps of the same size in the
// same server, alternating rounds (bench/cr.ts); ratio rows CR/configmap. Goal: the worst ratio
// (op and concurrency) ≥ 70 %.
import { CR_CEL_RULES, CR_OPS, CR_SCHEMA_FIELDS, runCr } from '../cr.js';
import { sharedOf, type Scenario } from '../context.js';

export const cr: Scenario = {
  names: ['cr'],
  shared: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const { kplane, creds } = sharedOf(ctx);
    console.log(
      `\n[cr] Custom resources (${CR_SCHEMA_FIELDS}-field schema, ${CR_CEL_RULES} CEL rules, 1 KiB) vs 1 KiB ConfigMaps, same server, alternating rounds`,
    );
    for (const suffix of ['create', 'get', 'list']) await kplane.ensureNamespace(`bench-cr-${suffix}`);
    const rounds = await runCr(kplane.started.url, creds, {
      namespace: 'bench-cr',
      ops: CR_OPS,
      concurrency: cfg.concurrency,
      warmMs: cfg.warmMs,
      measureMs: cfg.measureMs,
      maxOps: cfg.maxOps,
      pool: 500,
      listPool: cfg.listPool,
    });
    const ratios: number[] = [];
    for (const r of rounds) {
      const cm = rec.round('cr', 'kplane configmap', r.op, r.concurrency, r.configmap, r.op === 'list' ? `${cfg.listPool} items/response` : undefined);
      const c = rec.round('cr', 'kplane CR', r.op, r.concurrency, r.cr, r.op === 'list' ? `${cfg.listPool} items/response` : undefined);
      const ratio = (c.opsPerSec ?? 0) / (cm.opsPerSec ?? 1);
      ratios.push(ratio);
      rec.row({ scenario: 'cr', target: 'CR/configmap', op: r.op, concurrency: String(r.concurrency), value: `${(ratio * 100).toFixed(0)}%`, ratio });
      console.log(`  ${'CR/configmap'.padEnd(14)} ${r.op.padEnd(18)} c=${String(r.concurrency).padEnd(5)} ${(ratio * 100).toFixed(0).padStart(6)}%`);
    }
    if (ratios.length) {
      const worst = Math.min(...ratios);
      const at = rounds[ratios.indexOf(worst)]!;
      rec.goal(
        'custom resource throughput vs configmaps (worst op and concurrency)',
        '≥ 70%',
        `${(worst * 100).toFixed(0)}% (${at.op} at c=${at.concurrency})`,
        worst >= 0.7,
      );
    }
    return rec.result();
  },
};
