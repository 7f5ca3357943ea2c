// [lb1000] [nodesim] The cloud module at scale (issue 25), with the real commands as child
// processes: `kplane serve --modules cloud` (SQLite), `kplane cloud-controller-manager
// --cloud-provider loopback`, `kplane node-sim`.
// - lb1000: 1,000 LoadBalancer Services created at once (20 clients) until every one has its
//   ingress in status; then one Node added, until all 1,000 load balancers were updated with it
//   (the CCM's service_controller_update_loadbalancer_host_latency_seconds_count). CPU and RSS of
//   the CCM process (it holds the loopback cloud: 1,000 LB listeners and their health checks).
//   Goals (KEP-0008): all ingresses ≤ 30 s; node-set change to 1,000 LBs ≤ 30 s.
// - nodesim: 100 nodes registered by one node-sim, then 3,000 pods created (20 clients) until all
//   are Running; node-sim's CPU over that and RSS after. Goal: < 1 core and < 500 MB.
// Addresses: nodes 127.2.210-211.x, pods 127.3.128.0/17, LB ingresses 127.6.0.0/16, clear of the tests.
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createHttpsClient, loadKubeconfig } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { kplaneProcesses, type KplaneProcess } from '../../test/support/kplane-process.js';
import { procCpuMs, rssMB } from '../common.js';
import { fmt, type Scenario } from '../context.js';

const SERVICES: GVR = { group: '', version: 'v1', resource: 'services' };
const PODS: GVR = { group: '', version: 'v1', resource: 'pods' };
const NODES: GVR = { group: '', version: 'v1', resource: 'nodes' };
/** The kplane commands this file starts (killed when the bench process exits). */
const procs = kplaneProcesses({ startTimeoutMs: 120_000 });

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, everyMs = 200): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs `n` creates with `workers` at once. */
async function createAll(n: number, workers: number, create: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < n; i = next++) await create(i);
    }),
  );
}

async function serve(dir: string): Promise<{ cli: KplaneProcess; kubeconfig: string; client: KubeClient }> {
  const cli = await procs.start(['serve', '--data-dir', join(dir, 'data'), '--secure-port', '0', '--modules', 'cloud'], /kplane is serving on https:\/\/\S+/);
  const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
  return { cli, kubeconfig, client: createHttpsClient(loadKubeconfig(kubeconfig)) };
}

/** A row whose figure is a duration (given in ms, shown in seconds). */
const secondsRow = (scenario: string, target: string, op: string, concurrency: string, ms: number) => ({
  scenario,
  target,
  op,
  concurrency,
  amount: ms / 1000,
  unit: 's',
  value: `${fmt(ms / 1000)} s`,
});

const stop = (c: KplaneProcess | undefined): void => void c?.child.kill('SIGTERM');

export const cloudScale: Scenario = {
  names: ['lb1000', 'nodesim'],
  async run(ctx) {
    const { rec, quick } = ctx;
    const load = (): string =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    if (ctx.only.has('lb1000')) {
      const n = quick ? 100 : 1000;
      console.log(`\n[lb1000] ${n} LoadBalancer Services on the loopback cloud (kplane serve, cloud-controller-manager, node-sim with 3 nodes)`);
      const dir = join(ctx.dataDir, 'lb1000');
      await mkdir(dir, { recursive: true });
      let server: Awaited<ReturnType<typeof serve>> | undefined;
      let ccm: KplaneProcess | undefined;
      let sim: KplaneProcess | undefined;
      try {
        server = await serve(dir);
        const client = server.client;
        const config = join(dir, 'loopback.json');
        await writeFile(config, JSON.stringify({ ingressCIDR: '127.6.0.0/16' }));
        ccm = await procs.start(
          [
            'cloud-controller-manager',
            '--cloud-provider',
            'loopback',
            '--cloud-config',
            config,
            '--kubeconfig',
            server.kubeconfig,
            '--leader-elect=false',
            '--concurrent-service-syncs',
            '4',
            '--metrics-port',
            '0',
          ],
          /metrics on (http:\/\/\S+\/metrics)/,
        );
        const metricsUrl = /metrics on (http:\/\/\S+\/metrics)/.exec(ccm.firstLine)?.[1] as string;
        sim = await procs.start(
          ['node-sim', '--kubeconfig', server.kubeconfig, '--nodes', '3', '--node-cidr', '127.2.210.0/24', '--pod-cidr', '127.3.128.0/17', '--no-cluster-ips'],
          /kplane node-sim started: .*\n/,
        );
        const ccmPid = ccm.child.pid as number;
        const cpu0 = procCpuMs(ccmPid);
        const t0 = performance.now();
        await createAll(n, 20, (i) =>
          client.create(SERVICES, 'default', {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: `lb-${i}` },
            spec: { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 8080 }] },
          }),
        );
        const createdMs = performance.now() - t0;
        await waitFor('every ingress', 300_000, async () => {
          const list = await client.list<{ status?: { loadBalancer?: { ingress?: unknown[] } } } & { metadata?: object }>(SERVICES, 'default');
          return list.items.filter((s) => s.status?.loadBalancer?.ingress?.length).length >= n;
        });
        const ingressMs = performance.now() - t0;
        const cpuMs = procCpuMs(ccmPid) - cpu0;
        const rss = rssMB(ccmPid);
        rec.row(secondsRow('lb1000', 'kplane', `${n} Services created`, '20', createdMs));
        rec.row(secondsRow('lb1000', 'loopback', `${n} LB ingress`, '20', ingressMs));
        rec.row({ scenario: 'lb1000', target: 'ccm', op: 'CPU', concurrency: '-', amount: cpuMs / 1000, unit: 's', value: `${fmt(cpuMs / 1000)} CPU-s` });
        rec.row({ scenario: 'lb1000', target: 'ccm', op: 'RSS', concurrency: '-', amount: rss, unit: 'MB', value: `${fmt(rss)} MB` });
        console.log(
          `  ${n} Services created in ${fmt(createdMs / 1000)} s; all with an ingress after ${fmt(ingressMs / 1000)} s; CCM ${fmt(cpuMs / 1000)} CPU-s, RSS ${fmt(rss)} MB (load ${load()})`,
        );
        rec.goal(`${n} LoadBalancer Services to ingress`, '≤ 30 s', `${fmt(ingressMs / 1000)} s`, ingressMs <= 30_000);

        // A node-set change: one more Node; every load balancer is updated with it.
        const updates = async (): Promise<number> => {
          const text = await (await fetch(metricsUrl)).text();
          return Number(/^service_controller_update_loadbalancer_host_latency_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
        };
        const before = await updates();
        const t1 = performance.now();
        const node = await client.create(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bench-extra' } });
        await client.updateStatus(NODES, undefined, { ...node, status: { addresses: [{ type: 'InternalIP', address: '127.2.211.1' }] } });
        await waitFor('node-set change reconciled', 300_000, async () => (await updates()) >= before + n);
        const nodeSyncMs = performance.now() - t1;
        rec.row(secondsRow('lb1000', 'loopback', `node-set change to ${n} LBs`, '-', nodeSyncMs));
        console.log(`  node-set change reconciled on ${n} load balancers in ${fmt(nodeSyncMs / 1000)} s`);
        rec.goal(`node-set change to ${n} LBs`, '≤ 30 s', `${fmt(nodeSyncMs / 1000)} s`, nodeSyncMs <= 30_000);
        await client.close();
      } finally {
        stop(sim);
        stop(ccm);
        stop(server?.cli);
      }
    }
    if (ctx.only.has('nodesim')) {
      const nodes = quick ? 10 : 100;
      const pods = quick ? 300 : 3000;
      console.log(`\n[nodesim] ${nodes} nodes and ${pods} pods in one node-sim process`);
      const dir = join(ctx.dataDir, 'nodesim');
      await mkdir(dir, { recursive: true });
      let server: Awaited<ReturnType<typeof serve>> | undefined;
      let sim: KplaneProcess | undefined;
      try {
        server = await serve(dir);
        const client = server.client;
        const t0 = performance.now();
        sim = await procs.start(
          [
            'node-sim',
            '--kubeconfig',
            server.kubeconfig,
            '--nodes',
            String(nodes),
            '--node-cidr',
            '127.2.210.0/24',
            '--pod-cidr',
            '127.3.128.0/17',
            '--no-cluster-ips',
          ],
          /kplane node-sim started: .*\n/,
        );
        const simPid = sim.child.pid as number;
        await waitFor('nodes Ready', 300_000, async () => {
          const list = await client.list<{ status?: { conditions?: { type?: string; status?: string }[] } } & { metadata?: object }>(NODES);
          return list.items.filter((x) => x.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= nodes;
        });
        const registeredMs = performance.now() - t0;
        const cpu0 = procCpuMs(simPid);
        const t1 = performance.now();
        await createAll(pods, 20, (i) =>
          client.create(PODS, 'default', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `p-${i}`, labels: { app: 'bench' } },
            spec: { containers: [{ name: 'c', image: 'registry.k8s.io/e2e-test-images/agnhost:2.53', args: ['netexec'], ports: [{ containerPort: 8080 }] }] },
          }),
        );
        await waitFor(
          'pods Running',
          600_000,
          async () => {
            const list = await client.list<{ status?: { phase?: string } } & { metadata?: object }>(PODS, 'default', { fieldSelector: 'status.phase=Running' });
            return list.items.length >= pods;
          },
          1000,
        );
        const runningMs = performance.now() - t1;
        const cpuMs = procCpuMs(simPid) - cpu0;
        const rss = rssMB(simPid);
        const cores = cpuMs / runningMs;
        rec.row(secondsRow('nodesim', 'node-sim', `${nodes} nodes Ready`, '-', registeredMs));
        rec.row(secondsRow('nodesim', 'node-sim', `${pods} pods Running`, '20', runningMs));
        rec.row({ scenario: 'nodesim', target: 'node-sim', op: 'CPU cores', concurrency: '-', amount: cores, unit: 'cores', value: `${fmt(cores, 2)} cores` });
        rec.row({ scenario: 'nodesim', target: 'node-sim', op: 'RSS', concurrency: '-', amount: rss, unit: 'MB', value: `${fmt(rss)} MB` });
        console.log(
          `  ${nodes} nodes Ready after ${fmt(registeredMs / 1000)} s; ${pods} pods Running ${fmt(runningMs / 1000)} s after the first create; node-sim ${fmt(cpuMs / 1000)} CPU-s (${fmt(cores, 2)} cores), RSS ${fmt(rss)} MB (load ${load()})`,
        );
        rec.goal(`${nodes} nodes and ${pods} pods in one node-sim`, '< 1 core and < 500 MB', `${fmt(cores, 2)} cores, ${fmt(rss)} MB`, cores < 1 && rss < 500);
        await client.close();
      } finally {
        stop(sim);
        stop(server?.cli);
      }
    }
    return rec.result();
  },
};
