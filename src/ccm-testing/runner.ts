// The kit's runner: selects halves (plan.ts), skips what the driver cannot serve (never fails it),
// runs control-plane halves, then data-plane halves, then disruptive tests one at a time, each in a
// namespace of its own between the driver's beforeEach and afterEach, within a per-test timeout.
import type { KubeObject } from '../apimachinery/types.js';
import { catalogue } from './catalogue/index.js';
import { type Half, isSelected, type PlannedHalf, planSuite } from './plan.js';
import type { CcmTestCase, CcmTimeouts, RunSuiteOptions, SuiteEnv, TestResult } from './types.js';

/** Upstream's e2e framework defaults (k/k test/e2e/framework/service/const.go, cloud/nodes.go). */
export const DEFAULT_CCM_TIMEOUTS: CcmTimeouts = {
  lbCreateMs: 20 * 60_000,
  lbLagMs: 2 * 60_000,
  lbPropagationMs: 10 * 60_000,
  nodeDeletionMs: 5 * 60_000,
  proxyLagMs: 5 * 60_000,
};

/** RunSuiteOptions (types.ts) plus what the runner adds; kept here so the contract file stays as agreed. */
export interface RunOptions extends RunSuiteOptions {
  /** Non-disruptive halves run at once (default 1); disruptive tests always run alone. */
  parallel?: number;
  /**
   * How long one half may take, driver hooks included. Default: the sum of the timeouts, the
   * longest a test that waits once for each of them may legitimately need.
   */
  testTimeoutMs?: number;
}

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' } as const;
const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;

/**
 * Ready schedulable Nodes, as upstream's e2enode.GetReadySchedulableNodes counts them before a
 * test that needs several: Ready, network available, not cordoned, and no NoSchedule or NoExecute
 * taint (a pod without tolerations could not land there).
 */
export async function readyNodeCount(client: RunSuiteOptions['client'], signal?: AbortSignal): Promise<number> {
  type NodeObj = KubeObject & {
    spec?: { unschedulable?: boolean; taints?: { effect?: string }[] };
    status?: { conditions?: { type: string; status: string }[] };
  };
  const list = await client.list<NodeObj>(NODES, undefined, signal ? { signal } : {});
  const condition = (n: NodeObj, type: string): string | undefined => n.status?.conditions?.find((c) => c.type === type)?.status;
  return list.items.filter(
    (n) =>
      condition(n, 'Ready') === 'True' &&
      condition(n, 'NetworkUnavailable') !== 'True' &&
      !n.spec?.unschedulable &&
      !(n.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'),
  ).length;
}

export function effectiveTimeouts(opts: Pick<RunSuiteOptions, 'driver' | 'timeouts'>): CcmTimeouts {
  return { ...DEFAULT_CCM_TIMEOUTS, ...opts.driver.timeouts, ...opts.timeouts };
}

function namespaceFor(id: string, half: Half): string {
  const slug = id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `ccm-${slug}-${half === 'controlPlane' ? 'cp' : 'dp'}-${Math.random().toString(36).slice(2, 7)}`;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Runs the suite; resolves with one result per selected half, in plan order. Never rejects for a test's failure. */
export async function runSuite(opts: RunOptions): Promise<TestResult[]> {
  const tests: readonly CcmTestCase[] = opts.tests ?? catalogue;
  const suiteSignal = opts.signal ?? new AbortController().signal;
  const timeouts = effectiveTimeouts(opts);
  const testTimeoutMs = opts.testTimeoutMs ?? (Object.values(timeouts) as number[]).reduce((a, b) => a + b, 0);
  const parallel = Math.max(1, Math.floor(opts.parallel ?? 1));
  const planOpts = { ...(opts.focus ? { focus: opts.focus } : {}), ...(opts.skip ? { skip: opts.skip } : {}) };
  // Counted whenever a selected test has a minimum, so a skip names every reason, as --list does.
  const needsNodes = tests.some((t) => (t.needs.minNodes ?? 0) > 0 && isSelected(t, planOpts));
  const nodeCount = needsNodes ? await readyNodeCount(opts.client, suiteSignal) : undefined;
  const plan = planSuite(tests, opts.driver, { ...planOpts, ...(nodeCount !== undefined ? { nodeCount } : {}) });
  const results = new Map<PlannedHalf, TestResult>();
  const report = (p: PlannedHalf, r: TestResult): void => {
    results.set(p, r);
    opts.onResult?.(r);
  };

  const runHalf = async (p: PlannedHalf): Promise<void> => {
    const { test, half } = p;
    if (p.skip) return report(p, { id: test.id, half, outcome: 'skipped', durationMs: 0, message: p.skip });
    if (suiteSignal.aborted)
      return report(p, {
        id: test.id,
        half,
        outcome: 'skipped',
        durationMs: 0,
        message: `not run: the suite was interrupted (${message(suiteSignal.reason)})`,
      });
    const start = performance.now();
    const namespace = namespaceFor(test.id, half);
    const controller = new AbortController();
    const onSuiteAbort = (): void => controller.abort(new Error(`interrupted: ${message(suiteSignal.reason)}`));
    suiteSignal.addEventListener('abort', onSuiteAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${testTimeoutMs} ms`)), testTimeoutMs);
    // The half's promise is raced with its signal: a test that ignores the signal cannot hold the suite.
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true });
    });
    aborted.catch(() => {});
    const scope = { testId: test.id, namespace };
    const env: SuiteEnv = {
      ...scope,
      client: opts.client,
      driver: opts.driver,
      timeouts,
      signal: controller.signal,
      log: (m) => opts.log?.(`[${test.id}] ${m}`),
    };
    let failure: string | undefined;
    let created = false;
    try {
      await Promise.race([
        (async () => {
          await opts.client.create(
            NAMESPACES,
            undefined,
            { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
            { signal: controller.signal },
          );
          created = true;
          await opts.driver.beforeEach?.(scope);
          await test[half]!(env);
        })(),
        aborted,
      ]);
    } catch (e) {
      failure = created ? message(e) : `could not create namespace ${namespace}: ${message(e)}`;
    } finally {
      clearTimeout(timer);
      suiteSignal.removeEventListener('abort', onSuiteAbort);
      if (!controller.signal.aborted) controller.abort(new Error('test ended'));
    }
    // Upstream's AfterEach runs whatever the test did; its failure fails a test that passed.
    if (created) {
      try {
        await opts.driver.afterEach?.(scope);
      } catch (e) {
        failure ??= `afterEach: ${message(e)}`;
      }
      // Namespace deletion is asynchronous in kube; the suite does not wait for it.
      await opts.client
        .delete(NAMESPACES, undefined, namespace)
        .catch((e: unknown) => opts.log?.(`[${test.id}] deleting namespace ${namespace}: ${message(e)}`));
    }
    const durationMs = Math.round(performance.now() - start);
    report(
      p,
      failure === undefined ? { id: test.id, half, outcome: 'passed', durationMs } : { id: test.id, half, outcome: 'failed', durationMs, message: failure },
    );
  };

  const pool = async (halves: readonly PlannedHalf[], width: number): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < halves.length) await runHalf(halves[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(width, halves.length) }, worker));
  };
  const calm = (half: Half): PlannedHalf[] => plan.filter((p) => !p.test.needs.disruptive && p.half === half);
  await pool(calm('controlPlane'), parallel);
  await pool(calm('dataPlane'), parallel);
  await pool(
    plan.filter((p) => p.test.needs.disruptive),
    1,
  );
  return plan.map((p) => results.get(p)!);
}
