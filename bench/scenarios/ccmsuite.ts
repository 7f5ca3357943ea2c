// [ccmsuite] Issue 26's speed row: the CCM test kit's whole catalogue against the loopback
// environment, as a user brings it up (`kplane ccm-test env up`: kplane serve, the CCM with the
// loopback cloud and node-sim with 3 nodes as processes), run with `runSuite` from
// `kplane/ccm-testing` and the built-in loopback driver from the capability file env up wrote
// (`--parallel 4`, as workflow.md's job runs it). Rows: the wall time, the pass/fail/skip counts
// and each half's time. Goal: ≤ 3 minutes with no test failed.
// Addresses: nodes 127.2.241.x, pods 127.3.244.0/22, ingresses 127.4.241.x, cluster IPs
// 127.1.241.x, external IP 127.5.241.250, clear of the tests.
import { mkdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ccmTestEnv } from '../../src/cli/ccm-test-env.js';
import { catalogue, connectCluster, loadCapabilityFile, loadDriver, runSuite, type TestResult, withCapabilityFile } from '../../src/ccm-testing/index.js';
import { fmt, type Scenario } from '../context.js';

const PARALLEL = 4;
const GOAL_MS = 180_000;

export const ccmSuite: Scenario = {
  names: ['ccmsuite'],
  async run(ctx) {
    const { rec } = ctx;
    const load = (): string =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    console.log(`\n[ccmsuite] the CCM test kit's whole catalogue against kplane ccm-test env up (loopback cloud, 3 nodes), --parallel ${PARALLEL}`);
    const dir = join(ctx.dataDir, 'ccmsuite');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    let envLog = '';
    const io = { out: (s: string) => (envLog += s), err: (s: string) => (envLog += s) };
    const ranges = [
      '--node-cidr',
      '127.2.241.0/24',
      '--pod-cidr',
      '127.3.244.0/22',
      '--ingress-cidr',
      '127.4.241.0/24',
      '--service-cluster-ip-range',
      '127.1.241.0/24',
    ];
    const t0 = performance.now();
    if ((await ccmTestEnv(['up', '--dir', dir, '--nodes', '3', ...ranges], io)) !== 0) throw new Error(`kplane ccm-test env up failed:\n${envLog}`);
    const upMs = performance.now() - t0;
    let cluster: Awaited<ReturnType<typeof connectCluster>> | undefined;
    try {
      const file = await loadCapabilityFile(join(dir, 'ccm-testdriver.yaml'));
      cluster = await connectCluster(join(dir, 'kubeconfig'));
      const config = { ...file.config, externalIP: '127.5.241.250' };
      const driver = withCapabilityFile(await loadDriver({ spec: file.driver ?? 'loopback', baseDir: dir, context: { client: cluster.client, config } }), file);
      const loadAtStart = load();
      const t1 = performance.now();
      const results: TestResult[] = await runSuite({ client: cluster.client, driver, tests: catalogue, parallel: PARALLEL });
      const suiteMs = performance.now() - t1;
      const count = (o: TestResult['outcome']): number => results.filter((r) => r.outcome === o).length;
      rec.row({ scenario: 'ccmsuite', target: 'loopback env', op: 'env up', concurrency: '-', amount: upMs / 1000, unit: 's', value: `${fmt(upMs / 1000)} s` });
      rec.row({
        scenario: 'ccmsuite',
        target: 'loopback env',
        op: `whole suite, ${results.length} halves`,
        concurrency: String(PARALLEL),
        amount: suiteMs / 1000,
        unit: 's',
        value: `${fmt(suiteMs / 1000)} s`,
        note: `${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped; load ${loadAtStart} → ${load()}`,
      });
      for (const r of results) {
        rec.row({
          scenario: 'ccmsuite',
          target: 'loopback env',
          op: `${r.id} [${r.half}]`,
          concurrency: '-',
          ...(r.outcome === 'skipped' ? { value: 'skipped' } : { amount: r.durationMs / 1000, unit: 's', value: `${fmt(r.durationMs / 1000, 2)} s` }),
          ...(r.outcome === 'passed' ? {} : { note: `${r.outcome}: ${r.message ?? ''}` }),
        });
      }
      const lines = results.map(
        (r) => `    ${r.outcome.padEnd(7)} ${`${r.id} [${r.half}]`.padEnd(52)} ${r.outcome === 'skipped' ? '' : `${fmt(r.durationMs / 1000, 2)} s`}`,
      );
      console.log(`  env up ${fmt(upMs / 1000)} s; per half:\n${lines.join('\n')}`);
      for (const r of results) if (r.outcome === 'failed') console.log(`  FAILED ${r.id} [${r.half}]: ${r.message ?? ''}`);
      console.log(
        `  ${results.length} halves in ${fmt(suiteMs / 1000)} s: ${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped (load ${loadAtStart} at start, ${load()} at the end)`,
      );
      const failed = count('failed');
      rec.goal(
        'whole CCM suite against the loopback environment',
        '≤ 180 s, none failed',
        `${fmt(suiteMs / 1000)} s, ${failed} failed`,
        suiteMs <= GOAL_MS && failed === 0,
      );
    } finally {
      void cluster?.client.close().catch(() => {});
      await ccmTestEnv(['down', '--dir', dir], io);
    }
    return rec.result();
  },
};
