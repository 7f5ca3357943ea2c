// `kplane controller-manager`: the built-in controllers in their own process, against any
// kube-compatible server reached through a kubeconfig (HTTPS client), with leader election on a
// coordination.k8s.io Lease so that several replicas can run and only one acts.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { createHttpsClient } from '../client/https.js';
import { defaultControllers, runControllers } from '../controllers/index.js';

export const CONTROLLER_MANAGER_USAGE = `kplane controller-manager flags:
  --kubeconfig FILE                    the server to manage and the credentials to use (required)
  --controllers LIST                   comma-separated controllers to run (default: all: namespace,garbagecollector)
  --leader-elect=true|false            run only while holding the Lease (default true)
  --lease-namespace NS                 namespace of the Lease (default kube-system)
  --lease-name NAME                    name of the Lease (default kplane-controller-manager)
  --leader-elect-lease-duration DUR    how long a held Lease is respected by others (default 15s)
  --leader-elect-renew-deadline DUR    how long the leader retries renewing before giving up (default 10s)
  --leader-elect-retry-period DUR      time between attempts (default 2s)
`;

function duration(flag: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(v.trim());
  if (!m) throw new Error(`${flag} must be a duration like 15s or 500ms, got "${v}"`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

export async function controllerManager(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string' },
      controllers: { type: 'string' },
      'leader-elect': { type: 'string', default: 'true' },
      'lease-namespace': { type: 'string', default: 'kube-system' },
      'lease-name': { type: 'string', default: 'kplane-controller-manager' },
      'leader-elect-lease-duration': { type: 'string', default: '15s' },
      'leader-elect-renew-deadline': { type: 'string', default: '10s' },
      'leader-elect-retry-period': { type: 'string', default: '2s' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(CONTROLLER_MANAGER_USAGE);
    return;
  }
  if (!values.kubeconfig) throw new Error('controller-manager needs --kubeconfig FILE');
  const all = defaultControllers();
  const names = values.controllers ? values.controllers.split(',').map((s) => s.trim()).filter(Boolean) : all.map((c) => c.controllerName);
  const unknown = names.filter((n) => !all.some((c) => c.controllerName === n));
  if (unknown.length) throw new Error(`unknown controller(s) ${unknown.join(', ')}; known: ${all.map((c) => c.controllerName).join(', ')}`);
  const controllers = all.filter((c) => names.includes(c.controllerName));
  const log = (m: string): void => void process.stderr.write(`${new Date().toISOString()} ${m}\n`);
  const client = createHttpsClient(values.kubeconfig);
  const identity = `${hostname()}_${randomUUID()}`;
  const leaderElect = values['leader-elect'] !== 'false';
  const running = runControllers({
    client,
    controllers,
    metrics: new Registry(),
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
            onNewLeader: (who) => log(`leader is now ${who}${who === identity ? ' (this process)' : ''}`),
          },
        }
      : {}),
  });
  process.stdout.write(`kplane controller-manager started: identity ${identity}, controllers ${names.join(',')}, leader election ${leaderElect ? `on Lease ${values['lease-namespace']}/${values['lease-name']}` : 'off'}\n`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log(`received ${sig}, shutting down`);
    running
      .stop()
      .then(() => client.close())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          log(`shutdown failed: ${String(e)}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  running.done.then(
    () => {
      if (!stopping) process.exit(0);
    },
    (e: unknown) => {
      log(`controller-manager failed: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    },
  );
}
