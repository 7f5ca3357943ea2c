// What the CCM test kit's e2e files share: the cloud controllers in process over a switchable
// provider, and the catalogue run with independent tests side by side (the runner placeholder runs
// one test at a time; disruptive tests still run one by one, last).
import type { KubeClient } from '../../src/client/types.js';
import { startCloudControllers, type RunningCloudControllers } from '../../src/controllers/cloud/index.js';
import { runSuite } from '../../src/ccm-testing/runner.js';
import type { CcmTestCase, CcmTestDriver, CcmTimeouts, TestResult } from '../../src/ccm-testing/types.js';
import { leavesFinalizerClient, SwitchableProvider } from './ccm-variants.js';

export interface CcmUnderTest {
  readonly provider: SwitchableProvider;
  running: RunningCloudControllers;
  /** Restarts the controllers (e.g. "another version": other flags, or a broken client). */
  restart(opts?: { concurrentServiceSyncs?: number; leavesFinalizer?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

export async function startCcm(client: KubeClient, provider: SwitchableProvider): Promise<CcmUnderTest> {
  const start = (o: { concurrentServiceSyncs?: number; leavesFinalizer?: boolean } = {}) =>
    startCloudControllers({
      provider,
      client: o.leavesFinalizer ? leavesFinalizerClient(client) : client,
      nodeMonitorPeriodMs: 200,
      concurrentServiceSyncs: o.concurrentServiceSyncs ?? 2,
      concurrentNodeSyncs: 2,
      serviceRetryDelayMs: { min: 100, max: 1000 },
    });
  const ccm: CcmUnderTest = {
    provider,
    running: await start(),
    async restart(o) {
      await ccm.running.stop();
      ccm.running = await start(o);
    },
    stop: () => ccm.running.stop(),
  };
  return ccm;
}

export interface RunOptions {
  readonly concurrency?: number;
  readonly timeouts?: Partial<CcmTimeouts>;
  readonly log?: (m: string) => void;
}

/** Runs `tests` with the kit's runner: the non-disruptive halves `concurrency` at a time, then the disruptive ones alone. */
export function runCatalogue(client: KubeClient, driver: CcmTestDriver, tests: readonly CcmTestCase[], o: RunOptions = {}): Promise<TestResult[]> {
  return runSuite({ client, driver, tests, parallel: o.concurrency ?? 6, ...(o.timeouts ? { timeouts: o.timeouts } : {}), ...(o.log ? { log: o.log } : {}) });
}

export const keyOf = (r: TestResult): string => `${r.id}:${r.half}`;

/** `id:half` of the results with this outcome, sorted. */
export const withOutcome = (results: readonly TestResult[], outcome: TestResult['outcome']): string[] =>
  results
    .filter((r) => r.outcome === outcome)
    .map(keyOf)
    .sort();

/** One line per failure, for assertion messages. */
export const failures = (results: readonly TestResult[]): string =>
  results
    .filter((r) => r.outcome === 'failed')
    .map((r) => `${keyOf(r)}: ${r.message}`)
    .join('\n');

/** Per-test times, slowest first (for the report). */
export const timings = (results: readonly TestResult[]): string =>
  [...results]
    .filter((r) => r.outcome !== 'skipped')
    .sort((a, b) => b.durationMs - a.durationMs)
    .map((r) => `${keyOf(r)} ${r.durationMs} ms`)
    .join('\n');
