// `kplane controller-manager`: the built-in controllers in their own process, against any
// kube-compatible server reached through a kubeconfig (HTTPS client), with leader election on a
// coordination.k8s.io Lease so that several replicas can run and only one acts.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { readFileSync } from 'node:fs';
import { parsePrivateKeyPEM } from '../auth/serviceaccount/keys.js';
import { goQuote, NumError, parseGoBool } from '../golang/strconv.js';
import { signToken } from '../auth/serviceaccount/token.js';
import { createHttpsClient, loadKubeconfig } from '../client/https.js';
import { defaultControllers, runControllers, serviceAccountClients } from '../controllers/index.js';
import { collectProcessMetrics } from '../server/metrics.js';
import { cloudControllers } from '../controlplane/cloud-module.js';
import type { KubeClient } from '../client/types.js';
import { featureReporter, KUBE_CONTROLLER_MANAGER_COMPONENT } from '../controllers/featurereporter.js';
import { versionInfo } from '../controlplane/controlplane.js';
import { featureGateFromFlags } from './feature-flags.js';
import { serveMetrics, stopOnSignals } from './daemon.js';
import { LOGGING_OPTIONS, LOGGING_USAGE, loggerFromFlags, normalizeShortVerbosity } from './logging.js';

export const CONTROLLER_MANAGER_USAGE = `kplane controller-manager flags:
  --kubeconfig FILE                    the server to manage and the credentials to use (required)
  --controllers LIST                   comma-separated controllers to run (default: all: namespace,garbagecollector,
                                       serviceaccount,serviceaccount-token,root-ca-cert-publisher,
                                       clusterrole-aggregation,resourcequota, and endpoint-controller,
                                       endpointslice-controller when the server serves
                                       discovery.k8s.io/v1 endpointslices: the cloud module)
  --leader-elect=true|false            run only while holding the Lease (default true)
  --lease-namespace NS                 namespace of the Lease (default kube-system)
  --lease-name NAME                    name of the Lease (default kplane-controller-manager)
  --leader-elect-lease-duration DUR    how long a held Lease is respected by others (default 15s)
  --leader-elect-renew-deadline DUR    how long the leader retries renewing before giving up (default 10s)
  --leader-elect-retry-period DUR      time between attempts (default 2s)
  --metrics-port PORT                  serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port; default off)
  --metrics-bind-address ADDR          address of the metrics endpoint (default 127.0.0.1)
  --root-ca-file FILE                  CA bundle published as kube-root-ca.crt and put in token Secrets
                                       (default: the kubeconfig's certificate authority)
  --use-service-account-credentials[=true|false]
                                       each controller acts as its own ServiceAccount
                                       system:serviceaccount:kube-system:<controller> (bound to
                                       system:controller:<controller>), with tokens asked for through
                                       TokenRequest with the kubeconfig's credentials and renewed before
                                       they expire; shared informers and leader election keep the
                                       kubeconfig's credentials (default false: every controller uses them)
  --service-account-private-key-file FILE
                                       PEM private key that signs the tokens of kubernetes.io/service-account-token
                                       Secrets (the API server's --service-account-signing-key-file); without it
                                       those Secrets are not filled
  --feature-gates LIST                 feature gates with kube's syntax, as kplane serve takes them (repeatable); the
                                       value of each is reported to the Feature API as component
                                       kube-controller-manager (kubectl describe feature shows it next to the API servers')
  --emulated-version VER               behave as this Kubernetes version for features' stages and defaults
${LOGGING_USAGE}`;

/** Go's flag package takes `--flag`, `--flag=true` and `--flag=false` for a boolean; node's parseArgs only the first. */
function normalizeBoolFlags(argv: string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    const m = /^--([^=]+)=(.*)$/.exec(a);
    if (m && names.includes(m[1]!)) {
      const b = parseGoBool(m[2]!);
      if (b instanceof NumError) throw new Error(`invalid argument ${goQuote(m[2]!)} for "--${m[1]}" flag: ${b.message}`);
      if (b) out.push(`--${m[1]}`);
      continue;
    }
    out.push(a);
  }
  return out;
}

function duration(flag: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v.trim());
  if (!m) throw new Error(`${flag} must be a duration like 15s or 500ms, got "${v}"`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

export async function controllerManager(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: normalizeBoolFlags(normalizeShortVerbosity(argv), ['use-service-account-credentials']),
    options: {
      ...LOGGING_OPTIONS,
      kubeconfig: { type: 'string' },
      controllers: { type: 'string' },
      'leader-elect': { type: 'string', default: 'true' },
      'lease-namespace': { type: 'string', default: 'kube-system' },
      'lease-name': { type: 'string', default: 'kplane-controller-manager' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      'metrics-port': { type: 'string' },
      'metrics-bind-address': { type: 'string', default: '127.0.0.1' },
      'root-ca-file': { type: 'string' },
      'service-account-private-key-file': { type: 'string' },
      'use-service-account-credentials': { type: 'boolean', default: false },
      'feature-gates': { type: 'string', multiple: true },
      'emulated-version': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(CONTROLLER_MANAGER_USAGE);
    return;
  }
  const logging = loggerFromFlags(values);
  if ('invalid' in logging) throw new Error(logging.invalid);
  const log = logging.logger;
  const gate = featureGateFromFlags(values['emulated-version'], values['feature-gates'], log);
  if ('error' in gate) {
    // pflag's flag errors exit 2, as kplane serve's.
    process.stderr.write(`kplane: ${gate.error}\n`);
    process.exit(2);
  }
  gate.close();
  if (!values.kubeconfig) throw new Error('controller-manager needs --kubeconfig FILE');
  // The cloud module's controllers run by default only against a server that serves their resources.
  const optional = cloudControllers();
  const all = [...defaultControllers(), ...optional];
  const clientConfig = loadKubeconfig(values.kubeconfig);
  const client = createHttpsClient(clientConfig);
  const names = values.controllers
    ? values.controllers
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [...defaultControllers().map((c) => c.controllerName), ...((await servesEndpointSlices(client)) ? optional.map((c) => c.controllerName) : [])];
  const unknown = names.filter((n) => !all.some((c) => c.controllerName === n));
  if (unknown.length) throw new Error(`unknown controller(s) ${unknown.join(', ')}; known: ${all.map((c) => c.controllerName).join(', ')}`);
  const controllers = all.filter((c) => names.includes(c.controllerName));
  const saClients = values['use-service-account-credentials']
    ? await serviceAccountClients({ root: client, config: clientConfig, controllers, log: (msg) => log.info(msg) })
    : undefined;
  const rootCA = values['root-ca-file'] ? readFileSync(values['root-ca-file'], 'utf8') : clientConfig.caPem;
  const signingKeyFile = values['service-account-private-key-file'];
  const signingKey = signingKeyFile ? parsePrivateKeyPEM(readFileSync(signingKeyFile, 'utf8'), signingKeyFile) : undefined;
  const identity = `${hostname()}_${randomUUID()}`;
  const leaderElect = values['leader-elect'] !== 'false';
  const registry = new Registry();
  collectProcessMetrics(registry);
  const { server: metricsServer, note: metricsNote } = await serveMetrics(registry, values['metrics-port'], values['metrics-bind-address']);
  const running = runControllers({
    client,
    ...(saClients ? { clientFor: (c) => saClients.clientFor(c) } : {}),
    controllers,
    ...(rootCA !== undefined ? { rootCA } : {}),
    ...(signingKey ? { serviceAccountTokenSigner: (claims: object) => signToken(signingKey, claims) } : {}),
    metrics: registry,
    log,
    ...(leaderElect
      ? {
          leaderElection: {
            namespace: values['lease-namespace'],
            name: values['lease-name'],
            identity,
            leaseDurationMs: duration('--leader-elect-lease-duration', values['leader-elect-lease-duration']),
            renewDeadlineMs: duration('--leader-elect-renew-deadline', values['leader-elect-renew-deadline']),
            retryPeriodMs: duration('--leader-elect-retry-period', values['leader-elect-retry-period']),
            onNewLeader: (who) => log.info('New leader elected', 'identity', who, 'thisProcess', who === identity),
          },
        }
      : {}),
  });
  // KEP-0007: this process's gate values, reported as kube-controller-manager's uses (every
  // replica, leading or not: each runs with its own flags), off the controllers' path.
  const uses = featureReporter(client, gate, {
    component: KUBE_CONTROLLER_MANAGER_COMPONENT,
    identity,
    version: versionInfo().gitVersion,
    log,
  });
  uses.start();
  process.stdout.write(
    `kplane controller-manager started: identity ${identity}, controllers ${names.join(',')}${saClients ? ' (each as its own ServiceAccount)' : ''}, leader election ${leaderElect ? `on Lease ${values['lease-namespace']}/${values['lease-name']}` : 'off'}${metricsNote}\n`,
  );
  stopOnSignals(
    log,
    async () => {
      await running.stop();
      await uses.stop();
      await saClients?.close();
      await client.close();
      metricsServer?.close();
    },
    { promise: running.done, failure: 'Controller manager failed' },
  );
}

/** Whether the server serves discovery.k8s.io/v1 endpointslices (the cloud module is on). */
async function servesEndpointSlices(client: KubeClient): Promise<boolean> {
  try {
    const lists = await client.discovery();
    return lists.some((l) => l.groupVersion === 'discovery.k8s.io/v1' && l.resources.some((r) => r.name === 'endpointslices'));
  } catch {
    return false;
  }
}
