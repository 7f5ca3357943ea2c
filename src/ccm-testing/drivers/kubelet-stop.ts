// What a machine that stops does to its Node on a real cluster: the kubelet stops posting status
// and kube-controller-manager's node lifecycle controller marks the Node's Ready condition Unknown
// ("Kubelet stopped posting node status."). Simulated nodes (node-sim) and hand-made Nodes do not
// know the cloud, so the local drivers do it for them: while an instance is shut down or deleted,
// its Node's Ready condition is held at Unknown (written again every `intervalMs`, since node-sim
// keeps heartbeating), until the instance starts again or the Node is gone.
import type { KubeClient } from '../../client/index.js';
import { isStatusError } from '../../client/index.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' };

export class KubeletStopEmulation {
  private readonly held = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly client: KubeClient,
    private readonly intervalMs = 500,
  ) {}

  /** Marks the Node NotReady (Unknown) now and keeps it so. */
  async hold(node: string): Promise<void> {
    if (this.held.has(node)) return;
    const timer = setInterval(() => void this.markUnknown(node), this.intervalMs);
    timer.unref();
    this.held.set(node, timer);
    await this.markUnknown(node);
  }

  /** The kubelet posts again (the instance started): stop holding. */
  release(node: string): void {
    clearInterval(this.held.get(node));
    this.held.delete(node);
  }

  releaseAll(): void {
    for (const n of [...this.held.keys()]) this.release(n);
  }

  private async markUnknown(node: string): Promise<void> {
    try {
      await setNodeReady(this.client, node, 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.');
    } catch (e) {
      if (isStatusError(e) && e.code === 404) this.release(node);
    }
  }
}

/** Writes the Node's Ready condition (status subresource), as a kubelet or the node lifecycle controller does. */
export function setNodeReady(client: KubeClient, node: string, status: 'True' | 'Unknown', reason: string, message: string): Promise<unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = { type: 'Ready', status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now };
  return client.patch(NODES, undefined, node, 'strategic', { status: { conditions: [condition] } }, { subresource: 'status' });
}
