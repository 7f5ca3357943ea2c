// k/k test/e2e/cloud: what the CCM's node controllers must do when the cloud's instances change.
// Disruptive: a node is deleted, shut down or rebooted, so these run serially, after the others.
import { isStatusError } from '../../client/index.js';
import type { CcmTestCase, SuiteEnv, V1Node, V1Service } from '../types.js';
import {
  createService,
  expect,
  fail,
  NETEXEC_HTTP_PORT,
  NODES,
  needNodes,
  needReadyNodes,
  nodeReady,
  nodeTaints,
  podsOnNodes,
  readyNodes,
  svcRef,
  TAINT_SHUTDOWN,
  waitFor,
  waitForIngress,
  waitPodsReady,
} from './support.js';

const nodeName = (n: V1Node): string => n.metadata?.name ?? '';

async function getNode(env: SuiteEnv, name: string): Promise<V1Node | undefined> {
  try {
    return await env.client.get<V1Node>(NODES, undefined, name);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return undefined;
    throw e;
  }
}

async function waitNodeReadyAgain(env: SuiteEnv, name: string, after: string): Promise<V1Node> {
  return waitFor(env, env.timeouts.nodeDeletionMs, `node ${name} is not Ready without the shutdown taint {t} after ${after}`, async () => {
    const n = await getNode(env, name);
    return n && nodeReady(n) && !nodeTaints(n).some((t) => t.key === TAINT_SHUTDOWN) ? n : undefined;
  });
}

export const nodeTests: readonly CcmTestCase[] = [
  {
    id: 'nodes/deleted-when-instance-gone',
    upstream: "[sig-cloud-provider] [Feature:CloudProvider] [Disruptive] Nodes should be deleted on API server if it doesn't exist in the cloud provider",
    source: 'k/k test/e2e/cloud/nodes.go',
    labels: ['nodes', 'disruptive'],
    needs: { capabilities: ['instances.delete'], infra: ['nodes'], minNodes: 2, disruptive: true },
    async controlPlane(env) {
      const infra = needNodes(env);
      const nodes = await needReadyNodes(env, 2);
      const victim = nodes[nodes.length - 1]!;
      const name = nodeName(victim);
      // A load balancer in front of every node: the CCM must take the deleted node out of it.
      const lbs = env.driver.capabilities.has('lb.tcp') ? env.driver.loadBalancers : undefined;
      let svc: V1Service | undefined;
      if (lbs) {
        await createService(env, 'node-set', { type: 'LoadBalancer', selector: { app: 'node-set' }, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
        svc = (await waitForIngress(env, 'node-set')).svc as V1Service;
        await waitFor(
          env,
          env.timeouts.lbLagMs,
          `load balancer for ${svcRef(env, 'node-set')} does not send to node ${name} {t} after it was created`,
          async () => {
            const v = await lbs.describe(svc!);
            return v && (v.backends.length === 0 || v.backends.some((b) => b.nodeName === name)) ? true : undefined;
          },
        );
      }
      await infra.deleteInstance(victim);
      if (await infra.instanceExists(victim)) fail(`the cloud still reports instance ${name} after the driver deleted it`);
      await waitFor(
        env,
        env.timeouts.nodeDeletionMs,
        `node ${name} still exists on the API server {t} after its instance was deleted from the cloud`,
        async () => ((await getNode(env, name)) ? undefined : true),
      );
      const left = await readyNodes(env);
      expect(!left.some((n) => nodeName(n) === name), `node ${name} is still listed Ready after it was deleted`);
      if (lbs && svc) {
        await waitFor(
          env,
          env.timeouts.lbLagMs,
          `load balancer for ${svcRef(env, 'node-set')} still sends to node ${name} {t} after the Node was deleted: the CCM did not update the load balancer's node set`,
          async () => {
            const v = await lbs.describe(svc);
            return v && !v.backends.some((b) => b.nodeName === name) ? true : undefined;
          },
        );
      }
    },
  },
  {
    id: 'nodes/shutdown-taint',
    upstream: 'k8s.io/cloud-provider TestMonitorNodes: node is shutdown (no k/k e2e test; the seed lists it)',
    source: 'k8s.io/cloud-provider controllers/nodelifecycle/node_lifecycle_controller_test.go',
    labels: ['nodes', 'disruptive'],
    needs: { capabilities: ['instances.shutdown'], infra: ['nodes'], minNodes: 2, disruptive: true },
    async controlPlane(env) {
      const infra = needNodes(env);
      if (!infra.shutdownInstance || !infra.startInstance)
        fail(`driver ${env.driver.name} declares instances.shutdown but has no shutdownInstance/startInstance`);
      const nodes = await needReadyNodes(env, 2);
      const victim = nodes[0]!;
      const name = nodeName(victim);
      await infra.shutdownInstance(victim);
      try {
        await waitFor(
          env,
          env.timeouts.nodeDeletionMs,
          `node ${name} has no ${TAINT_SHUTDOWN}:NoSchedule taint {t} after its instance was shut down`,
          async () => {
            const n = await getNode(env, name);
            if (!n) fail(`node ${name} was deleted after its instance was shut down (a shut-down instance still exists)`);
            return nodeTaints(n).some((t) => t.key === TAINT_SHUTDOWN && t.effect === 'NoSchedule') ? true : undefined;
          },
        );
      } finally {
        await infra.startInstance(victim);
      }
      await waitNodeReadyAgain(env, name, 'its instance was started again');
    },
  },
  {
    id: 'nodes/reboot',
    upstream: '[sig-cloud-provider-gcp] Reboot [Disruptive] [Feature:Reboot] each node by ordering clean reboot and ensure they function upon restart',
    source: 'k/k test/e2e/cloud/gcp/reboot.go',
    labels: ['nodes', 'disruptive'],
    needs: { capabilities: ['instances.reboot'], infra: ['nodes'], minNodes: 1, disruptive: true },
    async controlPlane(env) {
      const infra = needNodes(env);
      if (!infra.rebootInstance) fail(`driver ${env.driver.name} declares instances.reboot but has no rebootInstance`);
      const nodes = (await needReadyNodes(env, 1)).slice(0, 3);
      // Pods run only where there are kubelets (a data plane); a fake cloud's Nodes have none.
      const pods = env.driver.capabilities.has('dataPlane') ? await podsOnNodes(env, 'reboot', nodes, { app: 'reboot' }) : [];
      await Promise.all(nodes.map((n) => infra.rebootInstance!(n)));
      for (const n of nodes) await waitNodeReadyAgain(env, nodeName(n), 'it was rebooted');
      if (pods.length === 0) return;
      await waitPodsReady(env, pods, env.timeouts.nodeDeletionMs).catch(() =>
        fail(`not every pod (${pods.length}) is Running and Ready again on the rebooted nodes within ${env.timeouts.nodeDeletionMs / 1000}s`),
      );
    },
  },
];
