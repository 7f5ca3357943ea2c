// [1] ConfigMap create/get/update/list over HTTPS/1.1 keep-alive, closed loop, kplane against the
// bare HTTPS baseline at each concurrency; ratio rows kplane/bare. Goals: create at c=64 ≥ 40 % of
// bare; p99 get ≤ 5 ms at each concurrency.
import { configMap } from '../common.js';
import { CRUD_POOL, fmt, sharedOf, withCpu, type Config, type Scenario } from '../context.js';
import { HttpClient, closedLoop, expectStatus, type RoundResult } from '../load.js';
import type { Row } from '../results.js';

export const CRUD_OPS = ['create', 'get', 'update', 'list'] as const;
export type CrudOp = (typeof CRUD_OPS)[number];

/** The namespaces a round writes to and reads from (the get pool holds CRUD_POOL `pool-N` objects). */
export interface CrudNamespaces {
  readonly create: string;
  readonly get: string;
}

const CRUD_NAMESPACES: CrudNamespaces = { create: 'bench-create', get: 'bench-get' };

/**
 * One request of `op`: a create of a new name, a get among the CRUD_POOL `pool-N` objects, an
 * update (PUT without resourceVersion: ConfigMaps allow unconditional update; in-flight requests
 * name different objects and every body differs, so every PUT writes), or a list of the list pool.
 * The rounds below and bench:ab (bench/ab.ts) send the same.
 */
export async function crudRequest(client: HttpClient, op: CrudOp, i: number, tag: string, ns: CrudNamespaces = CRUD_NAMESPACES): Promise<void> {
  switch (op) {
    case 'create': {
      const name = `cm-${tag}-${i}`;
      expectStatus(await client.send('POST', `/api/v1/namespaces/${ns.create}/configmaps`, JSON.stringify(configMap(name, ns.create))), 201);
      return;
    }
    case 'get':
      expectStatus(await client.send('GET', `/api/v1/namespaces/${ns.get}/configmaps/pool-${(i * 7919) % CRUD_POOL}`), 200);
      return;
    case 'update': {
      const name = `pool-${i % CRUD_POOL}`;
      expectStatus(
        await client.send('PUT', `/api/v1/namespaces/bench-update/configmaps/${name}`, JSON.stringify(configMap(name, 'bench-update', `${tag}-${i}`))),
        200,
      );
      return;
    }
    case 'list':
      expectStatus(await client.send('GET', '/api/v1/namespaces/bench-list/configmaps', undefined, undefined, { discardBody: true }), 200);
  }
}

/** One closed-loop round of `op` (create, get, update or list), also used by the audit and rbacload scenarios. */
export function crudRound(
  client: HttpClient,
  op: CrudOp,
  c: number,
  ms: number,
  maxOps: number,
  tag: string,
  ns: CrudNamespaces = CRUD_NAMESPACES,
): Promise<RoundResult> {
  return closedLoop({ concurrency: c, maxOps, maxMs: ms, op: (i) => crudRequest(client, op, i, tag, ns) });
}

/** The CRUD operations among the selected names, in their fixed order. */
export function crudOpsOf(only: ReadonlySet<string>): CrudOp[] {
  return CRUD_OPS.filter((o) => only.has(o));
}

export const crud: Scenario = {
  names: CRUD_OPS,
  shared: true,
  async run(ctx) {
    const { cfg, rec } = ctx;
    const servers = sharedOf(ctx);
    const ops = crudOpsOf(ctx.only);
    console.log(
      `\n[1] ConfigMaps of 1 KiB over HTTPS/1.1 keep-alive (closed loop; warm-up ${cfg.warmMs} ms, then ${cfg.measureMs} ms or ${cfg.maxOps} requests)`,
    );
    const byKey = new Map<string, Row>();
    for (const op of ops) {
      for (const c of cfg.concurrency) {
        for (const [target, srv] of [
          ['kplane', servers.kplane],
          ['bare-https', servers.bare],
        ] as const) {
          const client = new HttpClient(srv.started.url, servers.creds, c);
          await crudRound(client, op, c, cfg.warmMs, cfg.maxOps, `w${c}`);
          const { result: r, cpu, serverCpuMs } = await withCpu(srv.started.pid, () => crudRound(client, op, c, cfg.measureMs, cfg.maxOps, `m${c}`));
          client.close();
          const note = op === 'list' ? `${cfg.listPool} items/response; ${cpu}` : cpu;
          byKey.set(
            `${target}/${op}/${c}`,
            rec.round('1-crud', target, op, c, r, `${note}, ${((serverCpuMs / Math.max(1, r.ops)) * 1000).toFixed(0)} µs/op`, serverCpuMs),
          );
        }
        const k = byKey.get(`kplane/${op}/${c}`)!;
        const b = byKey.get(`bare-https/${op}/${c}`)!;
        const ratio = (k.opsPerSec ?? 0) / (b.opsPerSec ?? 1);
        rec.row({ scenario: '1-crud', target: 'kplane/bare', op, concurrency: String(c), value: `${(ratio * 100).toFixed(0)}%`, ratio });
        console.log(`  ${'kplane/bare'.padEnd(14)} ${op.padEnd(18)} c=${String(c).padEnd(5)} ${(ratio * 100).toFixed(0).padStart(6)}%`);
      }
    }
    goals(cfg, byKey, rec.goal.bind(rec));
    return rec.result();
  },
};

function goals(cfg: Config, byKey: ReadonlyMap<string, Row>, goal: (name: string, target: string, measured: string, met: boolean) => void): void {
  const k64 = byKey.get('kplane/create/64');
  const b64 = byKey.get('bare-https/create/64');
  if (k64 && b64) {
    const ratio = (k64.opsPerSec ?? 0) / (b64.opsPerSec ?? 1);
    goal('create at c=64 vs bare HTTPS', '≥ 40%', `${(ratio * 100).toFixed(0)}% (${fmt(k64.opsPerSec)} vs ${fmt(b64.opsPerSec)} ops/s)`, ratio >= 0.4);
  }
  for (const c of cfg.concurrency) {
    const g = byKey.get(`kplane/get/${c}`);
    if (g) goal(`p99 get at c=${c}`, '≤ 5 ms', `${fmt(g.p99, 2)} ms`, (g.p99 ?? Infinity) <= 5);
  }
}
