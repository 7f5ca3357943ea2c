// The `fake` driver: the fake cloud provider (src/controllers/cloud/fake.ts) through its admin HTTP
// endpoint (`adminAddress` in the CCM's --cloud-config). Everything happens in memory, so it offers
// every capability but `dataPlane` (there are no packets) and `upgrade` (that needs the
// environment's processes): the control-plane half of every test runs against it.
//
// config: adminURL (or adminAddress), timeouts? (partial CcmTimeouts, milliseconds).
import type { CcmTestDriver, Capability, CcmTimeouts, CloudLoadBalancerView, V1Node, V1Service } from '../types.js';
import { CAPABILITIES } from '../types.js';
import { adminHttp, adminOK, adminURLFrom } from './admin-http.js';
import type { DriverContext } from './context.js';
import { KubeletStopEmulation, setNodeReady } from './kubelet-stop.js';
import { localTimeouts } from './timeouts.js';

interface FakeBalancer {
  name: string;
  service: string;
  nodes: string[];
  status: { ingress?: { ip?: string; hostname?: string }[] };
}
interface FakeInstance {
  exists?: boolean;
  shutdown?: boolean;
}

const key = (o: { metadata?: { namespace?: string; name?: string } }): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const nameOf = (n: V1Node): string => n.metadata?.name ?? '';

export async function fakeDriver(ctx: DriverContext): Promise<CcmTestDriver> {
  const admin = adminHttp(adminURLFrom('fake', ctx.config));
  // Fails early, naming the endpoint, when nothing answers there.
  await adminOK(admin, 'GET', '/instances');
  const kubelet = new KubeletStopEmulation(ctx.client);
  const capabilities = new Set<Capability>(CAPABILITIES.filter((c) => c !== 'dataPlane' && c !== 'upgrade' && c !== 'podDial'));

  const view = (b: FakeBalancer, svc: V1Service): CloudLoadBalancerView => {
    const ports = (svc.spec?.ports ?? []) as { port?: number; protocol?: string; nodePort?: number }[];
    const addr = b.status.ingress?.[0]?.ip ?? b.status.ingress?.[0]?.hostname ?? '';
    return {
      name: b.name,
      frontends: ports.map((p) => ({ address: addr, port: p.port ?? 0, protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP' })),
      backends: b.nodes.map((n) => ({ nodeName: n, address: '', port: ports[0]?.nodePort ?? 0 })),
    };
  };

  return {
    name: 'fake',
    capabilities,
    timeouts: localTimeouts(ctx.config.timeouts as Partial<CcmTimeouts> | undefined),
    nodes: {
      async deleteInstance(node) {
        await adminOK(admin, 'DELETE', `/instances/${encodeURIComponent(nameOf(node))}`);
        await kubelet.hold(nameOf(node));
      },
      async instanceExists(node) {
        const all = await adminOK<Record<string, FakeInstance>>(admin, 'GET', '/instances');
        return all[nameOf(node)]?.exists !== false;
      },
      async shutdownInstance(node) {
        await adminOK(admin, 'PUT', `/instances/${encodeURIComponent(nameOf(node))}`, { shutdown: true });
        await kubelet.hold(nameOf(node));
      },
      async startInstance(node) {
        await adminOK(admin, 'PUT', `/instances/${encodeURIComponent(nameOf(node))}`, { shutdown: false });
        kubelet.release(nameOf(node));
        await markReady(ctx, nameOf(node));
      },
      async rebootInstance(node) {
        await this.shutdownInstance?.(node);
        await this.startInstance?.(node);
      },
      async expectedMetadata(node) {
        return { providerID: `fake://${nameOf(node)}` };
      },
    },
    loadBalancers: {
      async describe(svc) {
        const all = await adminOK<FakeBalancer[]>(admin, 'GET', '/balancers');
        const b = all.find((x) => x.service === key(svc));
        return b ? view(b, svc) : undefined;
      },
      // The fake holds nothing outside the process: a leak dies with it.
      async forceCleanup() {},
      async list() {
        const all = await adminOK<FakeBalancer[]>(admin, 'GET', '/balancers');
        return all.map((b) => view(b, {}));
      },
    },
    async afterEach() {
      kubelet.releaseAll();
    },
  };
}

/** Hand-made Nodes have no kubelet to post Ready again after a start: the driver does. */
async function markReady(ctx: DriverContext, node: string): Promise<void> {
  await setNodeReady(ctx.client, node, 'True', 'KubeletReady', 'kubelet is posting ready status').catch(() => {});
}
