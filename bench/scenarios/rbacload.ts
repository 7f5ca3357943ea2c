// [rbacload] ConfigMap create and get over HTTPS/1.1 keep-alive against one kplane authorizing
// with RBAC (as `kplane serve` does): as a ServiceAccount whose Role allows ConfigMaps in its
// namespace (a bearer token from TokenRequest), and as the admin (system:masters, a client
// certificate). Ratio rows serviceaccount/masters. Goal: each op at c=64 ≥ 90 % of the admin's
// throughput (issue 22).
import { join } from 'node:path';
import { CRUD_POOL, ServerProc, credsOf, fmt, type Scenario } from '../context.js';
import { HttpClient } from '../load.js';
import { crudRound } from './crud.js';

const OPS = ['create', 'get'] as const;
const NS = 'bench-rbac-load';
const round = (client: HttpClient, op: (typeof OPS)[number], c: number, ms: number, maxOps: number, tag: string) =>
  crudRound(client, op, c, ms, maxOps, tag, { create: NS, get: NS });

export const rbacload: Scenario = {
  names: ['rbacload'],
  async run(ctx) {
    const { cfg, rec, dataDir } = ctx;
    console.log(`\n[rbacload] ConfigMap create/get under RBAC: a ServiceAccount with a namespaced Role vs system:masters`);
    const srv = await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'rbacload-db'), rbac: true });
    let worst = Infinity;
    let worstAt = '';
    try {
      const { token } = await srv.serviceAccountToken(NS, 'bench');
      await srv.preload(NS, CRUD_POOL, 'pool-');
      const admin = credsOf(srv);
      const creds = { masters: admin, serviceaccount: { ca: admin.ca, token } };
      let n = 0;
      for (const op of OPS) {
        for (const c of cfg.concurrency) {
          const rps: Record<string, number> = {};
          // Alternate who goes first, so that neither always meets the warmer server.
          const order = Object.entries(creds);
          if (n++ % 2 === 1) order.reverse();
          for (const [target, cr] of order) {
            const client = new HttpClient(srv.started.url, cr, c);
            await round(client, op, c, cfg.warmMs, cfg.maxOps, `w${target}${c}`);
            const r = await round(client, op, c, cfg.measureMs, cfg.maxOps, `m${target}${c}`);
            client.close();
            rps[target] = rec.round('rbacload', `rbac ${target}`, op, c, r).opsPerSec ?? 0;
          }
          const ratio = rps.serviceaccount! / rps.masters!;
          rec.row({ scenario: 'rbacload', target: 'serviceaccount/masters', op, concurrency: String(c), value: `${(ratio * 100).toFixed(0)}%`, ratio });
          console.log(`  ${'sa/masters'.padEnd(14)} ${op.padEnd(18)} c=${String(c).padEnd(5)} ${(ratio * 100).toFixed(0).padStart(6)}%`);
          if (c === 64 && ratio < worst) {
            worst = ratio;
            worstAt = `${op} at c=${c}`;
          }
        }
      }
    } finally {
      await srv.stop();
    }
    rec.goal(
      'throughput at c=64 as a ServiceAccount under RBAC vs system:masters (worse op)',
      '≥ 90 %',
      Number.isFinite(worst) ? `${fmt(worst * 100, 0)}% (${worstAt})` : 'not measured (no c=64 round)',
      worst >= 0.9,
    );
    return rec.result();
  },
};
