// The cloud node lifecycle controller (k8s.io/cloud-provider controllers/nodelifecycle): every
// --node-monitor-period (5 s) it looks at each Node. A Ready node loses the
// `node.cloudprovider.kubernetes.io/shutdown:NoSchedule` taint. A node that is not Ready (False,
// Unknown or no condition) is deleted when its instance no longer exists in the cloud (event
// DeletingNode), or tainted shutdown when the instance exists but is shut down.
import { asLogger, type Logger } from '../../golang/klog.js';
import { realClock, sleep, type Clock } from '../runtime/clock.js';
import { controllerFactory, type ControllerContext, type ControllerFactory } from '../types.js';
import { EventRecorder } from './events.js';
import { TAINT_SHUTDOWN, type CloudProvider, type Ctx, type InstancesV2, type Node, type Taint } from './provider.js';
import { NODES } from './service.js';

export interface CloudNodeLifecycleControllerOptions {
  readonly provider: CloudProvider;
  /** --node-monitor-period (default 5 s). */
  readonly nodeMonitorPeriodMs?: number;
  readonly clock?: Clock;
}

export const CLOUD_NODE_LIFECYCLE_CONTROLLER = 'cloud-node-lifecycle-controller';

export function cloudNodeLifecycleController(opts: CloudNodeLifecycleControllerOptions): ControllerFactory {
  return controllerFactory(CLOUD_NODE_LIFECYCLE_CONTROLLER, (ctx) => {
    const instances = opts.provider.instancesV2();
    if (!instances) {
      asLogger(ctx.log).info('failed to start cloud node lifecycle controller: cloud provider does not support instances');
      return { start: () => Promise.resolve() };
    }
    return new CloudNodeLifecycleController(ctx, instances, opts);
  });
}

const readyStatus = (n: Readonly<Node>): string => n.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
const hasShutdownTaint = (n: Readonly<Node>): boolean => (n.spec?.taints ?? []).some((t) => t.key === TAINT_SHUTDOWN && t.effect === 'NoSchedule');

export class CloudNodeLifecycleController {
  readonly needLeaderElection = true;
  private readonly nodes;
  private readonly events: EventRecorder;
  private readonly log: Logger;
  private readonly period: number;
  private readonly clock: Clock;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly instances: InstancesV2,
    opts: CloudNodeLifecycleControllerOptions,
  ) {
    this.log = asLogger(ctx.log);
    this.period = opts.nodeMonitorPeriodMs ?? 5_000;
    this.clock = opts.clock ?? realClock;
    this.nodes = ctx.manager.informer<Node>(NODES);
    this.events = new EventRecorder({ client: ctx.client, component: 'cloud-node-lifecycle-controller', log: ctx.log });
  }

  async start(signal: AbortSignal): Promise<void> {
    this.log.info('Starting cloud node lifecycle controller');
    try {
      while (!signal.aborted) {
        await this.monitorNodes({ signal });
        if (!(await sleep(this.clock, this.period, signal))) break;
      }
    } finally {
      await this.events.flush();
    }
  }

  /** One pass over every Node (MonitorNodes). Errors are logged per node; the next pass retries. */
  async monitorNodes(ctx: Ctx): Promise<void> {
    for (const node of this.nodes.store.list()) {
      if (ctx.signal.aborted) return;
      const name = node.metadata?.name ?? '';
      if (readyStatus(node) === 'True') {
        if (hasShutdownTaint(node)) await this.setShutdownTaint(node, false);
        continue;
      }
      let exists: boolean;
      try {
        exists = await this.instances.instanceExists(ctx, node);
      } catch (e) {
        this.log.error(e, 'error checking if node exists', 'node', name);
        continue;
      }
      if (!exists) {
        this.log.v(2).info('deleting node since it is no longer present in cloud provider', 'node', name);
        this.events.event(node, 'Node', 'Normal', 'DeletingNode', `Deleting node ${name} because it does not exist in the cloud provider`);
        try {
          await this.ctx.client.delete(NODES, undefined, name);
        } catch (e) {
          this.log.error(e, 'unable to delete node', 'node', name);
          this.events.event(node, 'Node', 'Warning', 'DeletingNodeFailed', `Failed deleting node ${name}: ${(e as Error).message}`);
        }
        continue;
      }
      let shutdown: boolean;
      try {
        shutdown = await this.instances.instanceShutdown(ctx, node);
      } catch (e) {
        this.log.error(e, 'error checking if node is shutdown', 'node', name);
        continue;
      }
      if (shutdown && !hasShutdownTaint(node)) await this.setShutdownTaint(node, true);
    }
  }

  /** AddOrUpdateTaintOnNode / RemoveTaintOffNode: the whole taint list, guarded by resourceVersion. */
  private async setShutdownTaint(node: Readonly<Node>, on: boolean): Promise<void> {
    const rest = (node.spec?.taints ?? []).filter((t) => t.key !== TAINT_SHUTDOWN);
    const taints: Taint[] = on ? [...rest, { key: TAINT_SHUTDOWN, effect: 'NoSchedule' }] : rest;
    try {
      await this.ctx.client.patch(NODES, undefined, node.metadata?.name ?? '', 'merge', {
        metadata: { resourceVersion: node.metadata?.resourceVersion },
        spec: { taints },
      });
    } catch (e) {
      this.log.error(e, on ? 'failed to apply shutdown taint to node, it may have been deleted' : 'error patching node taints', 'node', node.metadata?.name);
    }
  }
}
