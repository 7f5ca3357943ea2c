// `kplane node-sim`: simulated Nodes whose Pods really serve on loopback addresses
// (src/controllers/nodesim), against any server with the cloud module, reached through a kubeconfig.
import { parseArgs } from 'node:util';
import { parseGoDuration } from '../golang/time.js';
import { createHttpsClient, loadKubeconfig } from '../client/https.js';
import { followCloud, parseCloudAdminURL } from '../controllers/nodesim/cloud-follow.js';
import { NodeSim } from '../controllers/nodesim/index.js';
import { ProxyHost, startNodeProxy } from '../controllers/proxy/index.js';
import { stopOnSignals } from './daemon.js';
import { LOGGING_OPTIONS, LOGGING_USAGE, loggerFromFlags, normalizeShortVerbosity } from './logging.js';

export const NODE_SIM_USAGE = `kplane node-sim flags:
  --kubeconfig FILE          the server (with --modules=cloud) and the credentials to use (required)
  --nodes N                  how many Nodes to simulate (default 1)
  --node-name-prefix PREFIX  Node i is named PREFIX<i> (default sim-)
  --node-cidr CIDR           Node addresses: node i gets the i-th address, 250 per /24 from .1
                             (default 127.2.0.0/16; loopback only)
  --pod-cidr CIDR            node i's pods get IPs from the i-th /24 of it, recorded as spec.podCIDR
                             (default 127.3.0.0/16; loopback only)
  --cloud-provider NAME      external: Nodes register with the node.cloudprovider.kubernetes.io/uninitialized
                             taint, for a cloud-controller-manager to initialize (default none)
  --cloud-admin URL          follow the loopback cloud at its admin interface (the CCM's cloud-config
                             adminAddress, e.g. http://127.0.0.1:4100): an instance deleted or shut
                             down there stops its Node's heartbeats and pods; started, they resume
                             (default none: the Nodes run until node-sim stops)
  --heartbeat-interval DUR   Ready heartbeats and node Lease renewals (default 10s)
  --no-proxy                 do not play kube-proxy; by default each node forwards its NodePorts to
                             the Services' endpoints and answers /healthz on NODE-IP:10256
  --no-cluster-ips           do not serve ClusterIP:port (by default the first node's proxy does:
                             a cluster IP is one address on the machine, so one process may own them)
${LOGGING_USAGE}`;

/** A Go duration flag (as every kplane command reads them), in milliseconds; must be above 0. */
function duration(flag: string, v: string): number {
  const d = parseGoDuration(v.trim());
  if ('error' in d || d.ns <= 0n) throw new Error(`${flag} must be a duration like 10s or 500ms, got "${v}"`);
  return Number(d.ns / 1_000_000n);
}

export async function nodeSim(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: normalizeShortVerbosity(argv),
    options: {
      ...LOGGING_OPTIONS,
      kubeconfig: { type: 'string' },
      nodes: { type: 'string', default: '1' },
      'node-name-prefix': { type: 'string', default: 'sim-' },
      'node-cidr': { type: 'string', default: '127.2.0.0/16' },
      'pod-cidr': { type: 'string', default: '127.3.0.0/16' },
      'cloud-provider': { type: 'string', default: '' },
      'heartbeat-interval': { type: 'string', default: '10s' },
      'cloud-admin': { type: 'string' },
      'no-proxy': { type: 'boolean', default: false },
      'no-cluster-ips': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(NODE_SIM_USAGE);
    return;
  }
  const logging = loggerFromFlags(values);
  if ('invalid' in logging) throw new Error(logging.invalid);
  const log = logging.logger;
  if (!values.kubeconfig) throw new Error('node-sim needs --kubeconfig FILE');
  if (!/^\d+$/.test(values.nodes)) throw new Error(`--nodes must be a non-negative integer, got "${values.nodes}"`);
  const cp = values['cloud-provider'];
  if (cp !== '' && cp !== 'external') throw new Error(`--cloud-provider: only "external" is supported (or none), got "${cp}"`);
  const cloudAdmin = values['cloud-admin'] !== undefined ? parseCloudAdminURL(values['cloud-admin']) : undefined;
  const client = createHttpsClient(loadKubeconfig(values.kubeconfig));
  // kube-proxy per node, sharing one set of informers; the first node to come up owns cluster IPs.
  const proxies = values['no-proxy'] ? undefined : new ProxyHost({ client, log });
  let clusterIPOwner = values['no-cluster-ips'] ? '' : undefined;
  const sim = new NodeSim({
    ...(proxies
      ? {
          onNodeReady: (node: { name: string; ip: string }) =>
            startNodeProxy({ client, host: proxies, nodeName: node.name, nodeIP: node.ip, clusterIPs: (clusterIPOwner ??= node.name) === node.name }),
        }
      : {}),
    client,
    nodes: Number(values.nodes),
    namePrefix: values['node-name-prefix'],
    nodeCIDR: values['node-cidr'],
    podCIDR: values['pod-cidr'],
    cloudProviderExternal: cp === 'external',
    heartbeatIntervalMs: duration('--heartbeat-interval', values['heartbeat-interval']),
    log,
  });
  await sim.start();
  const link = cloudAdmin ? followCloud({ adminURL: cloudAdmin, sim, log }) : undefined;
  const list = sim.nodeList;
  process.stdout.write(
    `kplane node-sim started: ${list.length} nodes${list.length ? ` (${list[0]!.name} ${list[0]!.ip}${list.length > 1 ? ` … ${list.at(-1)!.name} ${list.at(-1)!.ip}` : ''})` : ''}${cloudAdmin ? `, following the cloud at ${cloudAdmin}` : ''}\n`,
  );
  stopOnSignals(log, async () => {
    await link?.stop();
    await sim.stop();
    await proxies?.stop();
    await client.close();
  });
}
