// [10] etcdha: recovery after an etcd leader kill (issue 21). Two `kplane serve --storage etcd`
// on a 3-member etcd cluster (loopback), a light mixed load through both; each round kills the
// etcd leader with kill -9 and measures, from the kill: writes accepted again (probe creates
// through a client that fails over, one every 50 ms without waiting for earlier ones, until one is
// acknowledged; see measureRecovery) and caches converged (that write listed by every server's
// watch cache, resourceVersion=0); and the slowest write of the load
// in the round, which is a write in flight at the kill waiting for etcd. The killed member is
// restarted and the cluster settles between rounds. Goals: writes p99 ≤ 5 s, caches p99 ≤ 10 s.
import { setTimeout as sleep } from 'node:timers/promises';
import { createHttpsClient } from '../../src/client/https.js';
import { startEtcdCluster, type EtcdCluster } from '../../test/support/etcd-cluster.js';
import { measureRecovery, mixedLoad, quantile, startHaControlPlane, type HaControlPlane } from '../../test/support/etcd-cluster-ha.js';
import { fmt, type Scenario } from '../context.js';

const NS = 'bench-etcdha';

export const etcdHa: Scenario = {
  names: ['etcdha'],
  tools: true,
  async run(ctx) {
    const { quick, rec } = ctx;
    const rounds = quick ? 3 : 10;
    console.log(`\n[10] etcdha: recovery after kill -9 of the etcd leader (3-member etcd, 2 kplane servers, ${rounds} rounds)`);
    let etcd: EtcdCluster | undefined;
    let ha: HaControlPlane | undefined;
    const own = [] as ReturnType<typeof createHttpsClient>[];
    try {
      etcd = await startEtcdCluster();
      ha = await startHaControlPlane(etcd, { servers: 2, controllerManagers: 0, consistencyCheckInterval: '0s' });
      for (const s of ha.servers) own.push(createHttpsClient(s.kubeconfig, { requestTimeoutMs: 10_000 }));
      await ha
        .client(0)
        .create({ group: '', version: 'v1', resource: 'namespaces' }, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      const writes: number[] = [];
      const caches: number[] = [];
      const stalls: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const load = mixedLoad([ha.client(0), ha.client(1)], NS, { writersPerClient: 1, pauseMs: 20 });
        try {
          await sleep(500);
          const leader = await etcd.waitForLeader();
          const since = Date.now();
          await leader.kill();
          const rcv = await measureRecovery(ha.client(0), own, NS, since, { tag: `r${r}`, timeoutMs: 60_000 });
          writes.push(rcv.writesBackMs);
          caches.push(rcv.convergedMs);
          console.log(
            `  round ${r + 1}: ${leader.name} killed; writes accepted again after ${rcv.writesBackMs} ms, caches converged after ${rcv.convergedMs} ms`,
          );
          await leader.restart();
          await etcd.waitForLeader();
        } finally {
          await load.stop();
        }
        stalls.push(Math.max(...load.latenciesMs));
        await sleep(1_000);
      }
      const row = (op: string, values: number[]): void => {
        rec.row({
          scenario: '10-etcdha',
          target: 'kplane+etcd×3',
          op,
          concurrency: '-',
          p50: quantile(values, 0.5),
          p99: quantile(values, 0.99),
          max: Math.max(...values),
          n: values.length,
          value: `${fmt(quantile(values, 0.99) / 1000, 2)} s`,
          note: `p99 over ${values.length} leader kills`,
        });
      };
      row('writes accepted after leader kill', writes);
      row('caches converged after leader kill', caches);
      // A write in flight when the leader died waits for etcd's request timeout (5 s + 2 elections).
      row('slowest load write in a leader-kill round', stalls);
      const w99 = quantile(writes, 0.99);
      const c99 = quantile(caches, 0.99);
      rec.goal('writes accepted again after an etcd leader kill (p99)', '≤ 5 s', `${fmt(w99 / 1000, 2)} s`, w99 <= 5_000);
      rec.goal('caches converged after an etcd leader kill (p99)', '≤ 10 s', `${fmt(c99 / 1000, 2)} s`, c99 <= 10_000);
    } finally {
      for (const c of own) await c.close();
      await ha?.stop();
      await etcd?.stop();
    }
    return rec.result();
  },
};
