// The cloud node controller (k8s.io/cloud-provider controllers/node): initializes Nodes that carry
// the `node.cloudprovider.kubernetes.io/uninitialized` taint (kubelet's --cloud-provider=external)
// from InstancesV2.InstanceMetadata — providerID, instance type / zone / region labels (GA and
// beta), the provider's additional labels, then the taint removed, all in one Node update — then
// patches status.addresses and records `Synced`. Initialized nodes get their beta labels
// reconciled, and every --node-status-update-frequency their addresses refreshed.
import { isIP } from 'node:net';
import { isStatusError } from '../../apimachinery/errors.js';
import { asLogger, type Logger } from '../../golang/klog.js';
import { realClock, sleep } from '../runtime/clock.js';
import { Controller } from '../runtime/controller.js';
import { keyOf } from '../runtime/informer.js';
import { controllerFactory, type ControllerContext, type ControllerFactory } from '../types.js';
import { EventRecorder } from './events.js';
import {
  ANNOTATION_PROVIDED_NODE_IP,
  TAINT_UNINITIALIZED,
  type CloudProvider,
  type Ctx,
  type InstanceMetadata,
  type InstancesV2,
  type Node,
  type NodeAddress,
} from './provider.js';
import { NODES } from './service.js';

export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_INSTANCE_TYPE = 'node.kubernetes.io/instance-type';
export const LABEL_BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_BETA_REGION = 'failure-domain.beta.kubernetes.io/region';
export const LABEL_BETA_INSTANCE_TYPE = 'beta.kubernetes.io/instance-type';

/** Upstream's labelReconcileInfo: the beta label is primary, the GA one kept equal to it. */
const LABEL_RECONCILE: readonly [primary: string, secondary: string][] = [
  [LABEL_BETA_ZONE, LABEL_ZONE],
  [LABEL_BETA_REGION, LABEL_REGION],
  [LABEL_BETA_INSTANCE_TYPE, LABEL_INSTANCE_TYPE],
];

const K8S_NAMESPACE = /(^|\.)(kubernetes|k8s)\.io\//;

/**
 * component-helpers' GetNodeAddressesFromNodeIP: each provided IP (one, or two for dual stack,
 * comma-separated) must be among the cloud's addresses; for the address types it matched, only the
 * provided IP is kept, and the cloud's addresses of other types follow.
 */
export function nodeAddressesFromNodeIP(provided: string, cloud: readonly NodeAddress[]): NodeAddress[] {
  const ips = provided.split(',').map((s) => s.trim());
  if (ips.length > 2 || ips.some((ip) => !isIP(ip))) throw new Error(`failed to parse node IP ${JSON.stringify(provided)}`);
  const out: NodeAddress[] = [];
  const types = new Set<string>();
  for (const ip of ips) {
    const matched = cloud.filter((a) => sameIP(a.address, ip));
    if (!matched.length) throw new Error(`failed to get node address from cloud provider that matches ip: ${ip}`);
    for (const a of matched) {
      out.push({ type: a.type, address: a.address });
      types.add(a.type);
    }
  }
  for (const a of cloud) if (!types.has(a.type)) out.push({ type: a.type, address: a.address });
  return out;
}

function sameIP(a: string, b: string): boolean {
  if (!isIP(a) || !isIP(b)) return false;
  const norm = (s: string): string => (isIP(s) === 6 ? new URL(`http://[${s}]/`).hostname : s.replace(/(^|\.)0+(\d)/g, '$1$2'));
  return norm(a) === norm(b);
}

/** nodeAddressesChangeDetected: a different length, or a type whose address differs. */
export function nodeAddressesChanged(a: readonly NodeAddress[], b: readonly NodeAddress[]): boolean {
  if (a.length !== b.length) return true;
  const m = new Map(a.map((x) => [x.type, x.address]));
  return b.some((x) => m.get(x.type) !== x.address);
}

/** What updateNodeAddress writes: the cloud's addresses, the kubelet's Hostname if the cloud gave none, the provided IP first. */
export function desiredNodeAddresses(node: Readonly<Node>, meta: Pick<InstanceMetadata, 'nodeAddresses'>): NodeAddress[] | undefined {
  let addrs = [...meta.nodeAddresses];
  if (!addrs.length) return undefined;
  if (!addrs.some((a) => a.type === 'Hostname')) addrs.push(...(node.status?.addresses ?? []).filter((a) => a.type === 'Hostname'));
  const provided = node.metadata?.annotations?.[ANNOTATION_PROVIDED_NODE_IP];
  if (provided !== undefined) addrs = nodeAddressesFromNodeIP(provided, addrs);
  return addrs;
}

/** The Node as initialization leaves it (getNodeModifiersFromCloudProvider, then the taint removed). */
export function initializedNode(node: Readonly<Node>, meta: InstanceMetadata, log?: Logger): Node {
  const n = structuredClone(node) as Node;
  const m = (n.metadata ??= {});
  const spec = (n.spec ??= {});
  if (!spec.providerID && meta.providerID) spec.providerID = meta.providerID;
  const labels = (m.labels ??= {});
  if (meta.instanceType) labels[LABEL_BETA_INSTANCE_TYPE] = labels[LABEL_INSTANCE_TYPE] = meta.instanceType;
  if (meta.zone) labels[LABEL_BETA_ZONE] = labels[LABEL_ZONE] = meta.zone;
  if (meta.region) labels[LABEL_BETA_REGION] = labels[LABEL_REGION] = meta.region;
  for (const [k, v] of Object.entries(meta.additionalLabels ?? {})) {
    if (K8S_NAMESPACE.test(k)) {
      log?.info('Discarding node label with kubernetes namespace', 'label', k);
      continue;
    }
    if (k in labels) {
      if (labels[k] !== v) log?.info('Discarding node label that is already present', 'label', k);
      continue;
    }
    labels[k] = v;
  }
  spec.taints = (spec.taints ?? []).filter((t) => t.key !== TAINT_UNINITIALIZED);
  return n;
}

export interface CloudNodeControllerOptions {
  readonly provider: CloudProvider;
  /** --node-status-update-frequency (default 5 min). */
  readonly nodeStatusUpdateFrequencyMs?: number;
  /** --concurrent-node-syncs (default 1). */
  readonly workers?: number;
}

export const CLOUD_NODE_CONTROLLER = 'cloud-node-controller';

export function cloudNodeController(opts: CloudNodeControllerOptions): ControllerFactory {
  return controllerFactory(CLOUD_NODE_CONTROLLER, (ctx) => {
    const instances = opts.provider.instancesV2();
    if (!instances) {
      asLogger(ctx.log).info('failed to start cloud node controller: cloud provider does not support instances');
      return { start: () => Promise.resolve() };
    }
    return new CloudNodeController(ctx, instances, opts);
  });
}

class CloudNodeController {
  readonly needLeaderElection = true;
  private readonly nodes;
  private readonly controller: Controller;
  private readonly events: EventRecorder;
  private readonly log: Logger;
  private readonly period: number;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly instances: InstancesV2,
    opts: CloudNodeControllerOptions,
  ) {
    this.log = asLogger(ctx.log);
    this.period = opts.nodeStatusUpdateFrequencyMs ?? 5 * 60_000;
    this.nodes = ctx.manager.informer<Node>(NODES);
    this.events = new EventRecorder({ client: ctx.client, component: 'cloud-node-controller', log: ctx.log });
    this.controller = new Controller({
      name: 'cloud-node',
      workers: opts.workers ?? 1,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: (key, signal) => this.syncNode(key, { signal }),
    });
    // Add and update only: a deleted Node needs nothing.
    this.nodes.addEventHandler({ onAdd: (n) => this.controller.enqueue(keyOf(n)), onUpdate: (_o, n) => this.controller.enqueue(keyOf(n)) });
  }

  async start(signal: AbortSignal): Promise<void> {
    const running = this.controller.start(signal);
    for (const n of this.nodes.store.list()) this.controller.enqueue(keyOf(n));
    const loop = (async () => {
      while (!signal.aborted) {
        await this.updateNodeStatus({ signal });
        if (!(await sleep(realClock, this.period, signal))) break;
      }
    })();
    try {
      await Promise.all([running, loop]);
    } finally {
      await this.events.flush();
    }
  }

  /** The periodic address refresh of initialized nodes (UpdateNodeStatus). */
  private async updateNodeStatus(ctx: Ctx): Promise<void> {
    for (const node of this.nodes.store.list()) {
      if (ctx.signal.aborted) return;
      if ((node.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED)) continue;
      try {
        const meta = await this.instances.instanceMetadata(ctx, node);
        await this.updateNodeAddress(node, meta);
      } catch (e) {
        this.log.error(e, 'Error getting instance metadata for node addresses', 'node', node.metadata?.name);
      }
    }
  }

  private async updateNodeAddress(node: Readonly<Node>, meta: InstanceMetadata): Promise<void> {
    if ((node.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED)) return;
    let addrs: NodeAddress[] | undefined;
    try {
      addrs = desiredNodeAddresses(node, meta);
    } catch (e) {
      this.log.error(e, 'Failed to update node addresses for node', 'node', node.metadata?.name);
      return;
    }
    if (!addrs || !nodeAddressesChanged(node.status?.addresses ?? [], addrs)) return;
    try {
      await this.ctx.client.patch(NODES, undefined, node.metadata?.name ?? '', 'merge', { status: { addresses: addrs } }, { subresource: 'status' });
    } catch (e) {
      this.log.error(e, 'Error patching node with cloud ip addresses', 'node', node.metadata?.name);
    }
  }

  private async syncNode(name: string, ctx: Ctx): Promise<void> {
    const cur = this.nodes.store.get(name);
    if (!cur) return;
    if (!(cur.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED)) return this.reconcileNodeLabels(cur);
    this.log.info('Initializing node with cloud provider', 'node', name);
    let meta: InstanceMetadata;
    try {
      meta = await this.instances.instanceMetadata(ctx, cur);
      // A JavaScript provider may answer nothing, as Go's may answer nil.
      if (!meta) {
        this.log.info('Skip sync node because cloud provided nil metadata', 'node', name);
        return;
      }
      if (!meta.providerID) {
        if (!cur.spec?.providerID) throw new Error(`cloud provider does not set node provider ID for node ${name}`);
        meta = { ...meta, providerID: cur.spec.providerID };
      }
    } catch (e) {
      throw new Error(`failed to get instance metadata for node ${name}: ${(e as Error).message}`, { cause: e });
    }
    const provided = cur.metadata?.annotations?.[ANNOTATION_PROVIDED_NODE_IP];
    if (provided !== undefined) {
      try {
        nodeAddressesFromNodeIP(provided, meta.nodeAddresses);
      } catch (e) {
        throw new Error(`failed to get node modifiers from cloud provider: provided node ip for node "${name}" is not valid: ${(e as Error).message}`, {
          cause: e,
        });
      }
    }
    // RetryOnConflict around one Update that carries every change, read fresh each time.
    let updated: Node | undefined;
    for (let attempt = 0; ; attempt++) {
      const fresh = attempt === 0 ? cur : await this.ctx.client.get<Node>(NODES, undefined, name);
      try {
        updated = await this.ctx.client.update<Node>(NODES, undefined, initializedNode(fresh, meta, this.log));
        break;
      } catch (e) {
        if (!(isStatusError(e) && e.code === 409) || attempt >= 19) throw e;
        await new Promise((r) => setTimeout(r, 50 * (1 + Math.random())));
      }
    }
    await this.updateNodeAddress(updated, meta);
    this.log.info('Successfully initialized node with cloud provider', 'node', name);
    this.events.event(cur, 'Node', 'Normal', 'Synced', 'Node synced successfully');
  }

  /** Initialized nodes: the GA label follows its beta label (reconcileNodeLabels). */
  private async reconcileNodeLabels(node: Readonly<Node>): Promise<void> {
    const labels = node.metadata?.labels;
    if (!labels) return;
    const update: Record<string, string> = {};
    for (const [primary, secondary] of LABEL_RECONCILE) {
      const v = labels[primary];
      if (v === undefined) continue;
      if (labels[secondary] !== v) update[secondary] = v;
    }
    if (!Object.keys(update).length) return;
    await this.ctx.client.patch(NODES, undefined, node.metadata?.name ?? '', 'strategic', { metadata: { labels: update } });
  }
}
