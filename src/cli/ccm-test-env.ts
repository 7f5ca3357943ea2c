// `kplane ccm-test env up|down`: a whole local environment for the CCM test kit in one folder:
// `kplane serve --modules cloud`, `kplane cloud-controller-manager` with the chosen provider and
// `kplane node-sim` with N nodes, as background processes with pid files and logs in DIR; `up`
// writes DIR/kubeconfig and DIR/ccm-testdriver.yaml for the provider's built-in driver, `down`
// stops what `up` started (by the pids it wrote, and only if they are still kplane processes).
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ENV_PARTS as PARTS, type EnvPart as Part, isOurs, pidFile, readPid, startPart, stopPart, writeEnvRecord } from '../ccm-testing/local-env.js';

export const CCM_TEST_ENV_USAGE = `Usage: kplane ccm-test env up --dir DIR [--nodes N] [--provider loopback|fake]
       kplane ccm-test env down --dir DIR

up: starts, in the background, kplane serve --modules cloud, the cloud-controller-manager with the
provider, and node-sim with N nodes (default 3); logs and pid files go to DIR; writes DIR/kubeconfig,
DIR/ccm-testdriver.yaml and DIR/env.json (each command line: the loopback driver's upgrade restarts
serve and the CCM from it). Then: kplane ccm-test --kubeconfig DIR/kubeconfig --capabilities DIR/ccm-testdriver.yaml
down: stops them (SIGTERM, then SIGKILL after 15 s) and says what it stopped.

Flags of up, to run beside another environment (loopback addresses only):
  --node-cidr CIDR        node-sim's node addresses (default 127.2.0.0/16)
  --pod-cidr CIDR         node-sim's pod addresses (default 127.3.0.0/16)
  --ingress-cidr CIDR     the loopback cloud's load balancer addresses (default 127.4.0.0/16)
  --service-cluster-ip-range CIDR
                          Services' cluster IPs (default 127.1.0.0/16)
  --start-timeout SECONDS how long each process may take to start (default 120)
`;

/** Timeouts the written capability file gives the built-in drivers: a local cloud answers in milliseconds. */
const LOCAL_TIMEOUTS = { lbCreate: '30s', lbLag: '10s', lbPropagation: '30s', nodeDeletion: '60s', proxyLag: '30s' };

async function freeLoopbackPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((ok, bad) => {
    srv.once('error', bad);
    srv.listen(0, '127.0.0.1', () => ok());
  });
  const { port } = srv.address() as { port: number };
  await new Promise((ok) => srv.close(ok));
  return port;
}

/** Where the command writes (process.stdout/stderr from main; strings in a test). */
export interface EnvIO {
  out(s: string): void;
  err(s: string): void;
}

export async function ccmTestEnv(argv: readonly string[], io: EnvIO): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        nodes: { type: 'string', default: '3' },
        provider: { type: 'string', default: 'loopback' },
        'node-cidr': { type: 'string' },
        'pod-cidr': { type: 'string' },
        'ingress-cidr': { type: 'string' },
        'service-cluster-ip-range': { type: 'string' },
        'start-timeout': { type: 'string', default: '120' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (e) {
    io.err(`kplane ccm-test env: ${(e as Error).message}\n\n${CCM_TEST_ENV_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(CCM_TEST_ENV_USAGE);
    return 0;
  }
  const usage = (msg: string): number => {
    io.err(`kplane ccm-test env: ${msg}\n`);
    return 2;
  };
  const verb = positionals[0];
  if (positionals.length !== 1 || (verb !== 'up' && verb !== 'down')) return usage(`expected "up" or "down", got ${JSON.stringify(positionals.join(' '))}`);
  if (!values.dir) return usage('--dir DIR is required (where logs, pid files and the kubeconfig go)');
  const dir = resolve(values.dir);

  if (verb === 'down') {
    if (!PARTS.some((p) => existsSync(pidFile(dir, p)))) {
      io.err(`kplane ccm-test env down: no environment in ${dir} (no pid files)\n`);
      return 1;
    }
    for (const part of [...PARTS].reverse()) io.out(`${await stopPart(dir, part)}\n`);
    return 0;
  }

  if (!/^\d+$/.test(values.nodes)) return usage(`--nodes must be a non-negative integer, got ${JSON.stringify(values.nodes)}`);
  const provider = values.provider;
  if (provider !== 'loopback' && provider !== 'fake') return usage(`--provider must be loopback or fake, got ${JSON.stringify(provider)}`);
  if (!/^[1-9]\d*$/.test(values['start-timeout']))
    return usage(`--start-timeout must be a positive number of seconds, got ${JSON.stringify(values['start-timeout'])}`);
  const timeoutMs = Number(values['start-timeout']) * 1000;
  const running = PARTS.filter((p) => {
    const pid = readPid(dir, p);
    return pid !== undefined && isOurs(pid, p);
  });
  if (running.length)
    return usage(`an environment is already up in ${dir} (${running.join(', ')} running): run kplane ccm-test env down --dir ${values.dir} first`);

  await mkdir(dir, { recursive: true });
  const kubeconfig = join(dir, 'kubeconfig');
  const started: Part[] = [];
  try {
    const serveArgs = ['--data-dir', join(dir, 'data'), '--secure-port', '0', '--modules', 'cloud'];
    if (values['service-cluster-ip-range']) serveArgs.push('--service-cluster-ip-range', values['service-cluster-ip-range']);
    const serve = await startPart(dir, 'serve', serveArgs, timeoutMs);
    started.push('serve');
    await copyFile(join(dir, 'data', 'admin.kubeconfig'), kubeconfig);

    const cloudConfig = join(dir, 'cloud-config.json');
    let adminURL: string;
    if (provider === 'loopback') {
      // The loopback cloud does not report the port it picks: one is chosen here and handed to it.
      const port = await freeLoopbackPort();
      adminURL = `http://127.0.0.1:${port}`;
      await writeFile(
        cloudConfig,
        `${JSON.stringify({ adminAddress: `127.0.0.1:${port}`, stateDir: join(dir, 'loopback-cloud'), ...(values['ingress-cidr'] ? { ingressCIDR: values['ingress-cidr'] } : {}) }, null, 2)}\n`,
      );
    } else {
      await rm(join(dir, 'fake-admin'), { force: true });
      await writeFile(
        cloudConfig,
        `${JSON.stringify({ adminAddress: '127.0.0.1:0', adminAddressFile: join(dir, 'fake-admin'), stateFile: join(dir, 'fake-state.json') }, null, 2)}\n`,
      );
      adminURL = '';
    }
    const ccmArgs = [
      `--cloud-provider=${provider}`,
      `--cloud-config=${cloudConfig}`,
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      // Instances deleted in the cloud lose their Nodes within seconds, not upstream's 5 s period plus lag.
      '--node-monitor-period=1s',
    ];
    const simArgs = ['--kubeconfig', kubeconfig, '--nodes', values.nodes, '--cloud-provider', 'external', '--heartbeat-interval', '2s'];
    if (values['node-cidr']) simArgs.push('--node-cidr', values['node-cidr']);
    if (values['pod-cidr']) simArgs.push('--pod-cidr', values['pod-cidr']);
    // The simulated machines follow the loopback cloud: a deleted or shut-down instance stops its kubelet.
    if (provider === 'loopback') simArgs.push('--cloud-admin', adminURL);
    // Both only need the server: started together, the environment is up a process start sooner.
    // When one fails, the other is stopped below by its pid file.
    await Promise.all([
      startPart(dir, 'cloud-controller-manager', ccmArgs, timeoutMs).then(() => started.push('cloud-controller-manager')),
      startPart(dir, 'node-sim', simArgs, timeoutMs).then(() => started.push('node-sim')),
    ]);
    if (provider === 'fake') adminURL = `http://${(await readFile(join(dir, 'fake-admin'), 'utf8')).trim()}`;
    // What a restart needs (the loopback driver's upgrade): each command line, serve's with the port
    // it was given, since the kubeconfig the others hold names it.
    const port = new URL(serve.match[1] ?? '').port;
    await writeEnvRecord(dir, {
      args: { serve: serveArgs.map((a, i) => (serveArgs[i - 1] === '--secure-port' ? port : a)), 'cloud-controller-manager': ccmArgs, 'node-sim': simArgs },
    });

    const driverFile = join(dir, 'ccm-testdriver.yaml');
    await writeFile(
      driverFile,
      [
        `# Written by kplane ccm-test env up: the built-in ${provider} driver for the environment in this folder.`,
        `driver: ${provider}`,
        'config:',
        `  adminURL: ${adminURL}`,
        // The loopback driver restarts serve and the CCM of this folder for capability upgrade.
        ...(provider === 'loopback' ? [`  envDir: ${JSON.stringify(dir)}`] : []),
        '# capabilities: the driver declares its own; list them here to claim fewer.',
        'timeouts:',
        ...Object.entries(LOCAL_TIMEOUTS).map(([k, v]) => `  ${k}: ${v}`),
        '',
      ].join('\n'),
    );
    io.out(
      [
        `Environment up in ${dir}:`,
        `  kplane serve             ${serve.match[1]} (pid ${serve.pid})`,
        `  cloud-controller-manager --cloud-provider=${provider}, cloud admin ${adminURL}`,
        `  node-sim                 ${values.nodes} nodes`,
        `Run the kit:  kplane ccm-test --kubeconfig ${kubeconfig} --capabilities ${driverFile}`,
        `Stop it:      kplane ccm-test env down --dir ${values.dir}`,
        '',
      ].join('\n'),
    );
    return 0;
  } catch (e) {
    io.err(`kplane ccm-test env up: ${(e as Error).message}\n`);
    for (const part of started.reverse()) io.err(`${await stopPart(dir, part)}\n`);
    // The part that failed to start may still be running (a timeout): it has a pid file too.
    for (const part of PARTS) if (!started.includes(part) && existsSync(pidFile(dir, part))) io.err(`${await stopPart(dir, part, 2_000)}\n`);
    return 1;
  }
}
