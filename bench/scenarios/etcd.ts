// [6] etcd: creates through kplane (etcd storage) over HTTPS against raw etcd3 client writes from
// this process at the same concurrency (put, and the create-if-absent transaction kplane sends),
// beside the stack's ceiling: a bare node:https server creating through the same etcd3 transaction
// (bare+etcd3). For reference, the same creates from h2load. Goal: kplane ≥ 60 % of raw puts.
import { Etcd3 } from 'etcd3';
import { startEtcd, type RunningEtcd } from '../../test/support/etcd.js';
import { BENCH_TOKEN, configMap } from '../common.js';
import { ServerProc, credsOf, fmt, h2loadCpuMs, withCpu, type Scenario } from '../context.js';
import { h2load } from '../h2load.js';
import { HttpClient, closedLoop, expectStatus, type RoundResult } from '../load.js';

export const etcd: Scenario = {
  names: ['etcd'],
  tools: true,
  async run(ctx) {
    const { cfg, rec, dataDir, cpuProfDir } = ctx;
    console.log(`\n[6] etcd: creates through kplane vs raw etcd3 writes from this process (closed loop, same concurrency, 1 KiB values)`);
    let server: RunningEtcd | undefined;
    let srv: ServerProc | undefined;
    let proxy: ServerProc | undefined;
    const client3 = { c: undefined as Etcd3 | undefined };
    try {
      server = await startEtcd();
      srv = await ServerProc.start('kplane-etcd', { dataDir, etcdEndpoint: server.endpoint, ...(cpuProfDir ? { cpuProfDir } : {}) });
      await srv.ensureNamespace('bench-etcd');
      const creds = credsOf(srv);
      // The ceiling of the stack: a bare node:https server (the same TLS and JSON as the bare
      // baseline) whose create is the same etcd3 transaction, without anything of kplane.
      const kp = srv.started.pki!;
      proxy = await ServerProc.start('bare-etcd', { dataDir, etcdEndpoint: server.endpoint, tls: { key: kp.servingKey, cert: kp.servingCert, ca: kp.ca } });
      client3.c = new Etcd3({ hosts: [server.endpoint] });
      const raw = client3.c;
      const value = Buffer.from(JSON.stringify(configMap('x', 'raw')));
      for (const c of cfg.etcdConcurrency) {
        const http = new HttpClient(srv.started.url, creds, c);
        const createRound = (client: HttpClient, tag: string, ms: number): Promise<RoundResult> =>
          closedLoop({
            concurrency: c,
            maxOps: cfg.maxOps,
            maxMs: ms,
            op: async (i) => {
              const name = `cm-${tag}-${i}`;
              expectStatus(await client.send('POST', '/api/v1/namespaces/bench-etcd/configmaps', JSON.stringify(configMap(name, 'bench-etcd'))), 201);
            },
          });
        await createRound(http, `w${c}`, cfg.warmMs);
        const kr = await withCpu(srv.started.pid, () => createRound(http, `m${c}`, cfg.measureMs));
        const k = rec.round('6-etcd', 'kplane+etcd', 'create (HTTPS)', c, kr.result, kr.cpu);
        http.close();
        const proxyHttp = new HttpClient(proxy.started.url, creds, c);
        await createRound(proxyHttp, `w${c}`, cfg.warmMs);
        const br = await withCpu(proxy.started.pid, () => createRound(proxyHttp, `m${c}`, cfg.measureMs));
        const b = rec.round('6-etcd', 'bare+etcd3', 'create (HTTPS)', c, br.result, `no kplane: the stack's ceiling; ${br.cpu}`);
        proxyHttp.close();
        const putRound = (tag: string, ms: number): Promise<RoundResult> =>
          closedLoop({ concurrency: c, maxOps: cfg.maxOps, maxMs: ms, op: async (i) => void (await raw.put(`/raw/${tag}/${i}`).value(value)) });
        await putRound(`pw${c}`, cfg.warmMs);
        const p = rec.round('6-etcd', 'etcd3 client', 'put', c, await putRound(`pm${c}`, cfg.measureMs));
        // What kplane's create really is: a transaction that puts only if the key is absent.
        const txnRound = (tag: string, ms: number): Promise<RoundResult> =>
          closedLoop({
            concurrency: c,
            maxOps: cfg.maxOps,
            maxMs: ms,
            op: async (i) => {
              const key = `/raw/${tag}/${i}`;
              await raw.if(key, 'Create', '==', 0).then(raw.put(key).value(value)).commit();
            },
          });
        await txnRound(`tw${c}`, cfg.warmMs);
        rec.round('6-etcd', 'etcd3 client', 'txn create-if-absent', c, await txnRound(`tm${c}`, cfg.measureMs));
        const ratio = (k.opsPerSec ?? 0) / (p.opsPerSec ?? 1);
        const ceiling = (b.opsPerSec ?? 0) / (p.opsPerSec ?? 1);
        const ofCeiling = (k.opsPerSec ?? 0) / (b.opsPerSec ?? 1);
        rec.row({ scenario: '6-etcd', target: 'kplane/etcd3 put', op: 'create', concurrency: String(c), value: `${(ratio * 100).toFixed(0)}%`, ratio });
        rec.row({
          scenario: '6-etcd',
          target: 'bare+etcd3/etcd3 put',
          op: 'create',
          concurrency: String(c),
          value: `${(ceiling * 100).toFixed(0)}%`,
          ratio: ceiling,
        });
        rec.row({
          scenario: '6-etcd',
          target: 'kplane/bare+etcd3',
          op: 'create',
          concurrency: String(c),
          value: `${(ofCeiling * 100).toFixed(0)}%`,
          ratio: ofCeiling,
        });
        rec.goal(
          `etcd create at c=${c} vs raw etcd3 put`,
          '≥ 60%',
          `${(ratio * 100).toFixed(0)}% (${fmt(k.opsPerSec)} vs ${fmt(p.opsPerSec)} ops/s; a bare node:https server creating through etcd3: ${(ceiling * 100).toFixed(0)}%)`,
          ratio >= 0.6,
        );
        // For reference: the same creates from h2load (C), c streams on one HTTP/2 connection, so the
        // load generator's own CPU (a Node HTTPS client above) is left to kplane and etcd.
        const h2 = {
          url: `${srv.started.url}/api/v1/namespaces/bench-etcd/configmaps`,
          seconds: cfg.measureMs / 1000,
          warmSeconds: cfg.warmMs / 1000,
          maxStreams: c,
          body: JSON.stringify(configMap('', 'bench-etcd')).replace('"name":""', '"generateName":"cm-h2-"'),
          headers: [`authorization: Bearer ${BENCH_TOKEN}`, 'content-type: application/json', 'accept: application/json'],
        };
        const hr = await withCpu(srv.started.pid, () => h2load(h2), h2loadCpuMs);
        const hk = rec.round(
          '6-etcd',
          'kplane+etcd',
          'create (h2load)',
          c,
          { ops: hr.result.answered, errors: hr.result.errors, seconds: cfg.measureMs / 1000, latencies: hr.result.latency.samples },
          `reference, not the goal's figure; ${hr.cpu}`,
        );
        const hkRatio = (hk.opsPerSec ?? 0) / (p.opsPerSec ?? 1);
        rec.row({
          scenario: '6-etcd',
          target: 'kplane (h2load)/etcd3 put',
          op: 'create',
          concurrency: String(c),
          value: `${(hkRatio * 100).toFixed(0)}%`,
          ratio: hkRatio,
        });
        const proxyUrl = proxy.started.url;
        const hp = await withCpu(proxy.started.pid, () => h2load({ ...h2, url: `${proxyUrl}/api/v1/namespaces/bench-etcd/configmaps` }), h2loadCpuMs);
        const hb = rec.round(
          '6-etcd',
          'bare+etcd3',
          'create (h2load)',
          c,
          { ops: hp.result.answered, errors: hp.result.errors, seconds: cfg.measureMs / 1000, latencies: hp.result.latency.samples },
          `no kplane; ${hp.cpu}`,
        );
        const hbRatio = (hb.opsPerSec ?? 0) / (p.opsPerSec ?? 1);
        rec.row({
          scenario: '6-etcd',
          target: 'bare+etcd3 (h2load)/etcd3 put',
          op: 'create',
          concurrency: String(c),
          value: `${(hbRatio * 100).toFixed(0)}%`,
          ratio: hbRatio,
        });
      }
    } finally {
      client3.c?.close();
      await proxy?.stop();
      await srv?.stop();
      await server?.stop();
    }
    return rec.result();
  },
};
