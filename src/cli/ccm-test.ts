// `kplane ccm-test`: the CCM test kit (src/ccm-testing) against the cluster of a kubeconfig, with a
// driver and a capability file; `kplane ccm-test env up|down` is in ccm-test-env.ts. Exit codes:
// 0 no test failed, 1 a test failed, 2 bad usage or input (flags, capability file, driver module,
// unreachable cluster), reported before any test runs.
import { writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type CapabilityFile,
  type CcmTestCase,
  CcmTestConfigError,
  catalogue,
  connectCluster,
  junitReport,
  listLines,
  loadCapabilityFile,
  loadDriver,
  readyNodeCount,
  runSuite,
  type TestResult,
  withCapabilityFile,
} from '../ccm-testing/index.js';

export const CCM_TEST_USAGE = `Usage: kplane ccm-test [flags]
       kplane ccm-test env up --dir DIR [--nodes N] [--provider loopback|fake]
       kplane ccm-test env down --dir DIR

Runs the provider-neutral cloud-controller-manager tests against the cluster of --kubeconfig and
the CCM running there. Tests the driver cannot serve are skipped with the missing capability.

Flags:
  --kubeconfig FILE     the cluster under test (required)
  --capabilities FILE   the capability file (ccm-testdriver.yaml): driver, config, capabilities, timeouts
  --driver NAME|PATH    a built-in driver (fake, loopback) or a module exporting a CcmTestDriver or a
                        factory; overrides the capability file's driver:
  --list                print every test: id, what it needs, and per half whether it runs or why not
  --focus S             run only tests whose id contains S or that have label S (repeatable)
  --skip S              leave out tests whose id contains S or that have label S (repeatable)
  --parallel N          non-disruptive halves run at once (default 1); disruptive tests run alone, last
  --junit FILE          write JUnit XML (as ginkgo's reporter) there

Exit status: 0 when no test failed, 1 when one did, 2 on bad usage or input.
`;

export interface CcmTestIO {
  out(s: string): void;
  err(s: string): void;
  /** Aborts the run (the CLI wires SIGINT/SIGTERM to it). */
  readonly signal?: AbortSignal;
  /** Default: the catalogue. */
  readonly tests?: readonly CcmTestCase[];
}

const stdio: CcmTestIO = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

const seconds = (ms: number): string => `${(ms / 1000).toFixed(3)}s`;

/** The progress line of one half, as it ends. */
export function progressLine(r: TestResult): string {
  const tag = r.outcome === 'passed' ? 'PASS' : r.outcome === 'failed' ? 'FAIL' : 'SKIP';
  const head = `${tag} ${r.id} [${r.half}]`;
  if (r.outcome === 'skipped') return `${head}: ${r.message ?? ''}\n`;
  if (r.outcome === 'passed') return `${head} ${seconds(r.durationMs)}\n`;
  return `${head} ${seconds(r.durationMs)}\n${(r.message ?? '')
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
}

export async function ccmTest(argv: readonly string[], io: CcmTestIO = stdio): Promise<number> {
  if (argv[0] === 'env') {
    const { ccmTestEnv } = await import('./ccm-test-env.js');
    return ccmTestEnv(argv.slice(1), io);
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        kubeconfig: { type: 'string' },
        capabilities: { type: 'string' },
        driver: { type: 'string' },
        list: { type: 'boolean', default: false },
        focus: { type: 'string', multiple: true },
        skip: { type: 'string', multiple: true },
        parallel: { type: 'string', default: '1' },
        junit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }));
  } catch (e) {
    io.err(`kplane ccm-test: ${(e as Error).message}\n\n${CCM_TEST_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(CCM_TEST_USAGE);
    return 0;
  }
  const usage = (msg: string): number => {
    io.err(`kplane ccm-test: ${msg}\n`);
    return 2;
  };
  if (!values.kubeconfig) return usage('--kubeconfig FILE is required (the cluster under test)');
  if (!/^[1-9]\d*$/.test(values.parallel)) return usage(`--parallel must be a positive integer, got ${JSON.stringify(values.parallel)}`);
  const focus = values.focus ?? [];
  const skip = values.skip ?? [];
  const tests = io.tests ?? catalogue;

  let file: CapabilityFile | undefined;
  let cluster: Awaited<ReturnType<typeof connectCluster>> | undefined;
  try {
    if (values.capabilities) file = await loadCapabilityFile(values.capabilities);
    const spec = values.driver ?? file?.driver;
    if (!spec) return usage('no driver: give --driver NAME|PATH, or driver: in the capability file (--capabilities FILE)');
    cluster = await connectCluster(values.kubeconfig);
    // A module named in the file resolves from the file's folder; one given with --driver from here.
    const baseDir = values.driver !== undefined || !file ? process.cwd() : dirname(file.path);
    const driver = withCapabilityFile(await loadDriver({ spec, baseDir, context: { client: cluster.client, config: file?.config ?? {} } }), file);
    if (values.list) {
      const nodeCount = await readyNodeCount(cluster.client);
      io.out(`${listLines(tests, driver, { focus, skip, nodeCount }).join('\n')}\n`);
      return 0;
    }
    io.out(`Running the CCM test kit with driver ${driver.name} against ${cluster.server}\n`);
    const startedAt = new Date();
    const t0 = performance.now();
    const results = await runSuite({
      client: cluster.client,
      driver,
      tests,
      focus,
      skip,
      parallel: Number(values.parallel),
      ...(io.signal ? { signal: io.signal } : {}),
      onResult: (r) => io.out(progressLine(r)),
    });
    const durationMs = Math.round(performance.now() - t0);
    const count = (o: TestResult['outcome']): number => results.filter((r) => r.outcome === o).length;
    io.out(`Ran ${results.length} test halves in ${seconds(durationMs)}: ${count('passed')} passed, ${count('failed')} failed, ${count('skipped')} skipped\n`);
    if (values.junit) {
      await writeFile(values.junit, junitReport(results, { startedAt, durationMs, tests, focus, skip }));
      io.out(`JUnit report: ${values.junit}\n`);
    }
    return count('failed') > 0 ? 1 : 0;
  } catch (e) {
    if (e instanceof CcmTestConfigError) return usage(e.message);
    throw e;
  } finally {
    await cluster?.client.close().catch(() => {});
  }
}

/** From main: SIGINT/SIGTERM abort the run (a second one exits at once); the process exits with the run's code. */
export async function ccmTestMain(argv: readonly string[]): Promise<void> {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    if (++signals > 1) process.exit(130);
    process.stderr.write(`kplane ccm-test: ${sig}: stopping the tests in flight (again to exit now)\n`);
    controller.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await ccmTest(argv, { ...stdio, signal: controller.signal });
  // A driver may hold sockets open; the run is over.
  process.exit(code);
}
