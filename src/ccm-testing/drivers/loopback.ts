// The `loopback` driver: the loopback cloud (src/controllers/cloud/loopback) through its admin HTTP
// interface (`adminAddress` in the CCM's --cloud-config), and this process's sockets as the
// external client: the load balancers' ingress addresses (127.4.x), node ports and external IPs are
// on this machine's loopback, and so are the pods, whose netexec /dial is called directly (the pod
// client). Everything runs, data plane included, except what the loopback cloud does not do: load
// balancers without node ports, hostnames, IPv6 and routes.
//
// config: adminURL (or adminAddress); timeouts? (partial CcmTimeouts, ms); localAddress? (the
// external client's source address); externalIP? (an address in 127.0.0.0/8 the node proxies may
// listen on, for the ExternalIP test; default 127.5.0.250).
import type { Capability, CcmTestDriver, CcmTimeouts, CloudLoadBalancerView, V1Node } from '../types.js';
import { adminHttp, adminOK, adminURLFrom } from './admin-http.js';
import { localExternalClient } from './external.js';
import { directPodClient } from './pod-client.js';
import type { DriverContext } from './context.js';
import { KubeletStopEmulation } from './kubelet-stop.js';
import { localTimeouts } from './timeouts.js';

interface Instance {
  name: string;
  providerID: string;
  state: 'running' | 'shutdown' | 'deleted';
  addresses: { type: string; address: string }[];
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
  'lb.clientIPPreserved',
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
  const localAddress = typeof ctx.config.localAddress === 'string' ? ctx.config.localAddress : undefined;
  const externalIP = typeof ctx.config.externalIP === 'string' ? ctx.config.externalIP : '127.5.0.250';
  const lbs = async (): Promise<LoadBalancerInfo[]> => (await adminOK<{ loadBalancers: LoadBalancerInfo[] }>(admin, 'GET', '/loadbalancers')).loadBalancers;
  const path = (n: V1Node, tail = ''): string => `/instances/${encodeURIComponent(nameOf(n))}${tail}`;

  const driver: CcmTestDriver & { testExternalIP: string } = {
    name: 'loopback',
    capabilities: new Set(LOOPBACK_CAPABILITIES),
    timeouts: localTimeouts(ctx.config.timeouts as Partial<CcmTimeouts> | undefined),
    testExternalIP: externalIP,
    nodes: {
      async deleteInstance(node) {
        await adminOK(admin, 'DELETE', path(node));
        await kubelet.hold(nameOf(node));
      },
      async instanceExists(node) {
        const r = await admin.call<Instance>('GET', path(node));
        if (r.status === 404) return false;
        if (r.status !== 200) throw new Error(`cloud admin endpoint ${admin.url}: GET ${path(node)} answered ${r.status}`);
        return r.body.state !== 'deleted';
      },
      async shutdownInstance(node) {
        await adminOK(admin, 'POST', path(node, '/shutdown'));
        await kubelet.hold(nameOf(node));
      },
      async startInstance(node) {
        await adminOK(admin, 'POST', path(node, '/start'));
        // node-sim's next heartbeat makes it Ready again.
        kubelet.release(nameOf(node));
      },
      async rebootInstance(node) {
        await adminOK(admin, 'POST', path(node, '/shutdown'));
        await kubelet.hold(nameOf(node));
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
    // node-sim's pods listen on this machine's loopback: their netexec is called directly.
    podClient: directPodClient(ctx.client),
    async afterEach() {
      kubelet.releaseAll();
    },
  };
  return driver;
}
