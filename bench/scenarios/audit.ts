// [audit] ConfigMap create and get over HTTPS/1.1 keep-alive against two kplane servers of their
// own, one auditing every request at Metadata level into a JSON-lines file (blocking mode, the
// default) and one without a policy; ratio rows audited/off. Goal: each op at every concurrency
// ≥ 80 % of audit off (issue 22).
import { join } from 'node:path';
import { CRUD_POOL, ServerProc, credsOf, fmt, type Scenario } from '../context.js';
import { HttpClient } from '../load.js';
import { crudRound } from './crud.js';

const OPS = ['create', 'get'] as const;

const round = (client: HttpClient, op: (typeof OPS)[number], c: number, ms: number, maxOps: number, tag: string) =>
  crudRound(client, op, c, ms, maxOps, tag, { create: 'bench-audit', get: 'bench-audit-get' });

export const audit: Scenario = {
  names: ['audit'],
  async run(ctx) {
    const { cfg, rec, dataDir } = ctx;
    console.log(`\n[audit] ConfigMap create/get with every request audited at Metadata (JSON lines, blocking) vs no audit policy`);
    const servers = {
      off: await ServerProc.start('kplane-sqlite', { dataDir, storageDir: join(dataDir, 'audit-off-db') }),
      audited: await ServerProc.start('kplane-sqlite', {
        dataDir,
        storageDir: join(dataDir, 'audit-on-db'),
        auditLogPath: join(dataDir, 'audit', 'audit.log'),
      }),
    };
    let worst = Infinity;
    let worstAt = '';
    try {
      for (const srv of Object.values(servers)) {
        await srv.ensureNamespace('bench-audit');
        await srv.preload('bench-audit-get', CRUD_POOL, 'pool-');
      }
      let n = 0;
      for (const op of OPS) {
        for (const c of cfg.concurrency) {
          const rps: Record<string, number> = {};
          // Alternate which server goes first, so that neither always meets the warmer machine.
          const order = Object.entries(servers);
          if (n++ % 2 === 1) order.reverse();
          for (const [target, srv] of order) {
            const client = new HttpClient(srv.started.url, credsOf(srv), c);
            await round(client, op, c, cfg.warmMs, cfg.maxOps, `w${c}`);
            const r = await round(client, op, c, cfg.measureMs, cfg.maxOps, `m${c}`);
            client.close();
            rps[target] = rec.round('audit', `audit ${target}`, op, c, r).opsPerSec ?? 0;
          }
          const ratio = rps.audited! / rps.off!;
          rec.row({ scenario: 'audit', target: 'audited/off', op, concurrency: String(c), value: `${(ratio * 100).toFixed(0)}%`, ratio });
          console.log(`  ${'audited/off'.padEnd(14)} ${op.padEnd(18)} c=${String(c).padEnd(5)} ${(ratio * 100).toFixed(0).padStart(6)}%`);
          if (ratio < worst) {
            worst = ratio;
            worstAt = `${op} at c=${c}`;
          }
        }
      }
    } finally {
      for (const srv of Object.values(servers)) await srv.stop();
    }
    rec.goal(
      'throughput with audit at Metadata for every request vs audit off (worst op and concurrency)',
      '≥ 80 %',
      `${fmt(worst * 100, 0)}% (${worstAt})`,
      worst >= 0.8,
    );
    return rec.result();
  },
};
