// `kplane cloud-controller-manager`: k8s.io/cloud-provider's cloud-controller-manager over a
// registered CloudProvider (`fake`, or a third party's registered in code), against any
// kube-compatible server through a kubeconfig, with upstream's flag names and defaults and leader
// election on the kube-system/cloud-controller-manager Lease.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import { createHttpsClient, loadKubeconfig } from '../client/https.js';
import { cloudProviderNames, newCloudProvider, startCloudControllers } from '../controllers/cloud/index.js';
import { parseFlags, UsageError } from '../golang/pflag.js';
import { parseGoDuration } from '../golang/time.js';
import { collectProcessMetrics } from '../server/metrics.js';
import { serveMetrics, stopOnSignals } from './daemon.js';
import { loggerFromFlags, normalizeShortVerbosity } from './logging.js';

export const CLOUD_CONTROLLER_MANAGER_USAGE = `kplane cloud-controller-manager flags (k8s.io/cloud-provider's names and defaults):
  --cloud-provider NAME                the registered cloud provider to use (required; built in: fake)
  --cloud-config FILE                  the provider's configuration file (for fake: JSON, see README)
  --kubeconfig FILE                    the server to manage and the credentials to use (required)
  --controllers LIST                   controllers to run: * (all: cloud-node-controller,
                                       cloud-node-lifecycle-controller, service-lb-controller,
                                       node-route-controller), NAME to enable, -NAME to disable; aliases
                                       cloud-node, cloud-node-lifecycle, service, route (default *)
  --cluster-name NAME                  the instance prefix for the cluster (default kubernetes)
  --concurrent-service-syncs N         services synced at once (default 1)
  --concurrent-node-syncs N            nodes initialized at once (default 1)
  --node-monitor-period DUR            how often node lifecycle checks instances (default 5s)
  --node-status-update-frequency DUR   how often node addresses are refreshed (default 5m0s)
  --configure-cloud-routes[=BOOL]      configure routes for allocated pod CIDRs (default true)
  --allocate-node-cidrs[=BOOL]         pod CIDRs are allocated and set on the cloud (default false)
  --cluster-cidr CIDR                  CIDR range of pods (with --allocate-node-cidrs)
  --route-reconciliation-period DUR    how often routes are reconciled (default 10s)
  --cloud-provider-call-timeout DUR    kplane's: a load balancer call taking longer fails the sync,
                                       which is retried with backoff (default 5m0s)
  --leader-elect[=BOOL]                run only while holding the Lease (default true)
  --leader-elect-resource-name NAME    name of the Lease (default cloud-controller-manager)
  --leader-elect-resource-namespace NS namespace of the Lease (default kube-system)
  --leader-elect-lease-duration DUR    (default 15s)
  --leader-elect-renew-deadline DUR    (default 10s)
  --leader-elect-retry-period DUR      (default 2s)
  --metrics-port PORT                  serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port; default off)
  --metrics-bind-address ADDR          address of the metrics endpoint (default 127.0.0.1)
  -v, --v N                            log verbosity (default 0)
  --logging-format FORMAT              text or json (default text)
`;

const VALUE_FLAGS = [
  'cloud-provider',
  'cloud-config',
  'kubeconfig',
  'controllers',
  'cluster-name',
  'concurrent-service-syncs',
  'concurrent-node-syncs',
  'node-monitor-period',
  'node-status-update-frequency',
  'cluster-cidr',
  'route-reconciliation-period',
  'cloud-provider-call-timeout',
  'leader-elect-resource-name',
  'leader-elect-resource-namespace',
  'leader-elect-lease-duration',
  'leader-elect-renew-deadline',
  'leader-elect-retry-period',
  'metrics-port',
  'metrics-bind-address',
  'v',
  'logging-format',
];
const BOOL_FLAGS = ['configure-cloud-routes', 'allocate-node-cidrs', 'leader-elect', 'help'];

/** A flag's Go duration in ms, or a usage error in pflag's words. */
function durationMs(flag: string, v: string): number {
  const d = parseGoDuration(v);
  if ('error' in d) throw new UsageError(`invalid argument ${JSON.stringify(v)} for "--${flag}" flag: ${d.error}`);
  return Number(d.ns / 1_000_000n);
}

function positiveInt(flag: string, v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${flag} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** Runs until SIGTERM/SIGINT; a bad command line or unknown provider exits 1 with the reason on stderr. */
export async function cloudControllerManager(argv: string[]): Promise<void> {
  let flags;
  try {
    flags = parseFlags(
      normalizeShortVerbosity(argv).map((a) => (a === '-h' ? '--help' : /^-v$/.test(a) ? '--v' : a)),
      {
        values: new Set(VALUE_FLAGS),
        bools: new Set(BOOL_FLAGS),
      },
    );
  } catch (e) {
    process.stderr.write(`Error: ${(e as Error).message}\n`);
    process.exit(1);
  }
  const { values, bools } = flags;
  if (bools.help) {
    process.stdout.write(CLOUD_CONTROLLER_MANAGER_USAGE);
    return;
  }
  const fail = (msg: string): never => {
    process.stderr.write(`Error: ${msg}\n`);
    process.exit(1);
  };
  try {
    if (flags.args.length) fail(`unexpected arguments: ${flags.args.join(' ')}`);
    const logging = loggerFromFlags({ v: values.v ?? '0', 'logging-format': values['logging-format'] ?? 'text' });
    if ('invalid' in logging) return fail(logging.invalid);
    const log = logging.logger;
    const providerName = values['cloud-provider'];
    if (!providerName) fail(`--cloud-provider is required; known cloud providers: ${cloudProviderNames().join(', ')}`);
    if (!cloudProviderNames().includes(providerName!)) {
      fail(`--cloud-provider: unknown cloud provider ${JSON.stringify(providerName)}; known cloud providers: ${cloudProviderNames().join(', ')}`);
    }
    if (!values.kubeconfig) fail('--kubeconfig is required');
    const cloudConfig = values['cloud-config'] !== undefined ? readFileSync(values['cloud-config'], 'utf8') : undefined;
    const provider = await newCloudProvider(providerName!, cloudConfig).catch((e: unknown) =>
      fail(`cloud provider could not be initialized: ${(e as Error).message}`),
    );
    if (!provider) return fail('cloud provider is nil');
    const controllers = (values.controllers ?? '*')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const opts = {
      controllers,
      clusterName: values['cluster-name'] ?? 'kubernetes',
      concurrentServiceSyncs: positiveInt('concurrent-service-syncs', values['concurrent-service-syncs'] ?? '1'),
      concurrentNodeSyncs: positiveInt('concurrent-node-syncs', values['concurrent-node-syncs'] ?? '1'),
      nodeMonitorPeriodMs: durationMs('node-monitor-period', values['node-monitor-period'] ?? '5s'),
      nodeStatusUpdateFrequencyMs: durationMs('node-status-update-frequency', values['node-status-update-frequency'] ?? '5m'),
      configureCloudRoutes: bools['configure-cloud-routes'] ?? true,
      allocateNodeCIDRs: bools['allocate-node-cidrs'] ?? false,
      ...(values['cluster-cidr'] !== undefined ? { clusterCIDR: values['cluster-cidr'] } : {}),
      routeReconciliationPeriodMs: durationMs('route-reconciliation-period', values['route-reconciliation-period'] ?? '10s'),
      providerCallTimeoutMs: durationMs('cloud-provider-call-timeout', values['cloud-provider-call-timeout'] ?? '5m'),
    };
    const leaderElect = bools['leader-elect'] ?? true;
    const leaseName = values['leader-elect-resource-name'] ?? 'cloud-controller-manager';
    const leaseNamespace = values['leader-elect-resource-namespace'] ?? 'kube-system';
    const identity = `${hostname()}_${randomUUID()}`;
    const leaderElection = {
      namespace: leaseNamespace,
      name: leaseName,
      identity,
      leaseDurationMs: durationMs('leader-elect-lease-duration', values['leader-elect-lease-duration'] ?? '15s'),
      renewDeadlineMs: durationMs('leader-elect-renew-deadline', values['leader-elect-renew-deadline'] ?? '10s'),
      retryPeriodMs: durationMs('leader-elect-retry-period', values['leader-elect-retry-period'] ?? '2s'),
      onNewLeader: (who: string) => log.info('New leader elected', 'identity', who, 'thisProcess', who === identity),
    };
    const client = createHttpsClient(loadKubeconfig(values.kubeconfig!));
    const registry = new Registry();
    collectProcessMetrics(registry);
    let metrics: Awaited<ReturnType<typeof serveMetrics>>;
    try {
      metrics = await serveMetrics(registry, values['metrics-port'], values['metrics-bind-address']);
    } catch (e) {
      return fail((e as Error).message);
    }
    const { server: metricsServer, note: metricsNote } = metrics;
    const running = await startCloudControllers({
      client,
      provider,
      ...opts,
      metrics: registry,
      log,
      ...(leaderElect ? { leaderElection } : {}),
    });
    process.stdout.write(
      `kplane cloud-controller-manager started: cloud provider ${providerName}, identity ${identity}, controllers ${running.names.join(',')}, leader election ${leaderElect ? `on Lease ${leaseNamespace}/${leaseName}` : 'off'}${metricsNote}\n`,
    );
    stopOnSignals(
      log,
      async () => {
        await running.stop();
        await client.close();
        metricsServer?.close();
      },
      { promise: running.done, failure: 'Cloud controller manager failed' },
    );
  } catch (e) {
    fail((e as Error).message);
  }
}
