// [catalog] A 300-package × 100-bundle catalog: load + validate, `kplane catalog serve`
// GetBundleForChannel at 2,000/s open loop beside its baselines, a semver template render
// (bench/catalog.ts). Goals: ≤ 5 s and ≤ 1.5 GiB; p99 ≤ 2 ms; warm render ≤ 1 s.
import { CATALOG_FULL, CATALOG_QUICK, runCatalogBench } from '../catalog.js';
import type { Scenario } from '../context.js';

export const catalog: Scenario = {
  names: ['catalog'],
  tools: true,
  async run(ctx) {
    const { rec } = ctx;
    console.log('\n[catalog] 300 packages × 100 bundles: load + validate, kplane catalog serve GetBundleForChannel, template render');
    const catalogRows = await runCatalogBench({ ...(ctx.quick ? CATALOG_QUICK : CATALOG_FULL), log: (line) => console.log(`  ${line}`) });
    for (const r of catalogRows) {
      const s = r.stats;
      rec.row({
        scenario: 'catalog',
        target: r.target,
        op: r.op,
        concurrency: '-',
        ...(s ? { p50: s.p50, p99: s.p99, max: s.max, n: s.n } : {}),
        ...(r.errors ? { errors: r.errors } : {}),
        value: r.value,
      });
      if (r.goal !== '-') rec.goal(`${r.target}: ${r.op}`, r.goal, r.value, r.met);
    }
    return rec.result();
  },
};
