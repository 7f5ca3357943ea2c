// The `loopback` driver: the loopback cloud (src/controllers/cloud/loopback) through its admin HTTP
// interface (`adminAddress` in the CCM's --cloud-config), and this process's sockets as the
// external client: the load balancers' ingress addresses (127.4.x), node ports and external IPs are
// on this machine's loopback, and so are the pods, whose netexec /dial is called directly (the pod
// client). Everything runs, data plane included, except what the loopback cloud does not do: load
// balancers without node ports, hostnames, IPv6 and routes.
//
// config: adminURL (or adminAddress); timeouts? (partial CcmTimeouts, ms); localAddress? (the
// external client's source address); externalIP? (an address in 127.0.0.0/8 the node proxies may
// listen on, for the ExternalIP test; default 127.5.0.250); ingressIPMode? ("VIP" when the cloud's
// cloud-config says so: then it claims lb.clientIPPreserved; default Proxy); kubeletStop? ("auto", "always" or
// "never"; default auto): whether the driver marks the Node of a deleted or shut-down instance
// NotReady itself, as the kubelet's silence would (KubeletStopEmulation). node-sim started with
// --cloud-admin follows the cloud and stops its kubelet itself: its instances show `followedBy` in
// the admin interface, and "auto" emulates only for instances nobody follows (hand-made Nodes, an
// in-process node-sim without the link); envDir? (the folder of `kplane ccm-test env up`:
// capability `upgrade` restarts its serve and CCM with other flags, env-upgrade.ts).
import type { Capability, CcmTestDriver, CcmTimeouts, CloudLoadBalancerView, V1Node } from '../types.js';
import { adminHttp, adminOK, adminURLFrom } from './admin-http.js';
import { localExternalClient } from './external.js';
import { directPodClient } from './pod-client.js';
import type { DriverContext } from './context.js';
import { envUpgrade } from './env-upgrade.js';
import { KubeletStopEmulation } from './kubelet-stop.js';
import { localTimeouts } from './timeouts.js';

interface Instance {
  name: string;
  providerID: string;
  state: 'running' | 'shutdown' | 'deleted';
  addresses: { type: string; address: string }[];
  /** The node-sim (a machine agent) following this instance through the admin interface, if any. */
  followedBy?: string;
}
interface LoadBalancerInfo {
  name: string;
  service: string;
  ip: string;
  ports: { port: number; protocol: string; nodePort: number }[];
  nodes: { name: string; address: string; healthy: boolean }[];
}

export const LOOPBACK_CAPABILITIES: readonly Capability[] = [
  'lb.tcp',
  'lb.udp',
  'lb.mixedProtocol',
  'lb.sessionAffinity.clientIP',
  'lb.sourceRanges',
  'lb.etpLocal.healthCheckNodePort',
  'lb.loadBalancerIP',
  'lb.ipv4',
  'instances.delete',
  'instances.shutdown',
  'instances.reboot',
  'dataPlane',
  'podDial',
];

const nameOf = (n: V1Node): string => n.metadata?.name ?? '';

function view(lb: LoadBalancerInfo): CloudLoadBalancerView {
  return {
    name: lb.name,
    frontends: lb.ports.map((p) => ({ address: lb.ip, port: p.port, protocol: p.protocol as 'TCP' | 'UDP' })),
    backends: lb.nodes.map((n) => ({ nodeName: n.name, address: n.address, port: lb.ports[0]?.nodePort ?? 0, healthy: n.healthy })),
  };
}

export async function loopbackDriver(ctx: DriverContext): Promise<CcmTestDriver> {
  const admin = adminHttp(adminURLFrom('loopback', ctx.config));
  await adminOK(admin, 'GET', '/instances');
  const kubelet = new KubeletStopEmulation(ctx.client);
  const kubeletStop = ctx.config.kubeletStop ?? 'auto';
  if (kubeletStop !== 'auto' && kubeletStop !== 'always' && kubeletStop !== 'never') {
    throw new Error(`driver loopback: config.kubeletStop must be auto, always or never, got ${JSON.stringify(kubeletStop)}`);
  }
  const localAddress = typeof ctx.config.localAddress === 'string' ? ctx.config.localAddress : undefined;
  const externalIP = typeof ctx.config.externalIP === 'string' ? ctx.config.externalIP : '127.5.0.250';
  const lbs = async (): Promise<LoadBalancerInfo[]> => (await adminOK<{ loadBalancers: LoadBalancerInfo[] }>(admin, 'GET', '/loadbalancers')).loadBalancers;
  const path = (n: V1Node, tail = ''): string => `/instances/${encodeURIComponent(nameOf(n))}${tail}`;
  /** Whether the driver plays the stopped kubelet for this node (asked before the instance goes away). */
  const emulates = async (n: V1Node): Promise<boolean> => {
    if (kubeletStop !== 'auto') return kubeletStop === 'always';
    const r = await admin.call<Instance>('GET', path(n));
    return !(r.status === 200 && r.body.followedBy);
  };
  /** A followed instance's node-sim stops the kubelet by itself: wait until the Node says so. */
  const notReady = async (n: V1Node): Promise<void> => {
    const deadline = Date.now() + driver.timeouts.nodeDeletionMs;
    for (;;) {
      const node = await ctx.client
        .get<{ status?: { conditions?: { type?: string; status?: string }[] } }>({ group: '', version: 'v1', resource: 'nodes' }, undefined, nameOf(n))
        .catch(() => undefined);
      if (!node || !(node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')) return;
      if (Date.now() > deadline)
        throw new Error(
          `node ${nameOf(n)} is still Ready ${driver.timeouts.nodeDeletionMs / 1000}s after its instance was shut down: is its node-sim following the cloud?`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const stopped = async (n: V1Node, emulate: boolean): Promise<void> => (emulate ? kubelet.hold(nameOf(n)) : notReady(n));
  // Only on an environment whose processes it can restart.
  const upgrade = await envUpgrade(ctx.config, ctx.client, admin);

  const driver: CcmTestDriver & { testExternalIP: string } = {
    name: 'loopback',
    capabilities: new Set<Capability>([
      ...LOOPBACK_CAPABILITIES,
      ...(upgrade ? (['upgrade'] as const) : []),
      // The cloud preserves the client's address either way; the kit's capability means ipMode VIP.
      ...(ctx.config.ingressIPMode === 'VIP' ? (['lb.clientIPPreserved'] as const) : []),
    ]),
    timeouts: localTimeouts(ctx.config.timeouts as Partial<CcmTimeouts> | undefined),
    testExternalIP: externalIP,
    nodes: {
      async deleteInstance(node) {
        const emulate = await emulates(node);
        await adminOK(admin, 'DELETE', path(node));
        if (emulate) await kubelet.hold(nameOf(node));
      },
      async instanceExists(node) {
        const r = await admin.call<Instance>('GET', path(node));
        if (r.status === 404) return false;
        if (r.status !== 200) throw new Error(`cloud admin endpoint ${admin.url}: GET ${path(node)} answered ${r.status}`);
        return r.body.state !== 'deleted';
      },
      async shutdownInstance(node) {
        const emulate = await emulates(node);
        await adminOK(admin, 'POST', path(node, '/shutdown'));
        if (emulate) await kubelet.hold(nameOf(node));
      },
      async startInstance(node) {
        await adminOK(admin, 'POST', path(node, '/start'));
        // node-sim's next heartbeat (or, following the cloud, its kubelet starting) makes it Ready again.
        kubelet.release(nameOf(node));
      },
      async rebootInstance(node) {
        const emulate = await emulates(node);
        await adminOK(admin, 'POST', path(node, '/shutdown'));
        // Down first (NotReady), then up: a start sent before node-sim saw the shutdown would be no reboot.
        await stopped(node, emulate);
        await adminOK(admin, 'POST', path(node, '/start'));
        kubelet.release(nameOf(node));
      },
      async expectedMetadata(node) {
        const inst = await adminOK<Instance>(admin, 'GET', path(node));
        return { providerID: inst.providerID, addresses: inst.addresses };
      },
    },
    loadBalancers: {
      async describe(svc) {
        const k = `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`;
        const lb = (await lbs()).find((x) => x.service === k);
        return lb ? view(lb) : undefined;
      },
      // The loopback cloud's load balancers live in the CCM's process: there is nothing to delete
      // from outside, and a restart of that process forgets them.
      async forceCleanup() {},
      async list() {
        return (await lbs()).map(view);
      },
    },
    externalClient: localExternalClient(localAddress ? { localAddress } : {}),
    ...(upgrade ? { upgrade } : {}),
    // node-sim's pods listen on this machine's loopback: their netexec is called directly.
    podClient: directPodClient(ctx.client),
    async afterEach() {
      kubelet.releaseAll();
    },
  };
  return driver;
}
