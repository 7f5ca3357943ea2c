// k/k test/e2e/cloud/gcp/cluster_upgrade.go, provider-neutral: the driver replaces the control
// plane or the CCM with another version (capability `upgrade`); a functioning cluster before and
// after: the Service keeps its load balancer and its ingress, a new load balancer can be made, and
// (data plane) traffic keeps flowing within the disruption budget.
import type { CcmTestCase, SuiteEnv, UpgradeInfra } from '../types.js';
import {
  createService,
  deleteServiceAndWait,
  expect,
  fail,
  getService,
  ingressOf,
  NETEXEC_HTTP_PORT,
  needClient,
  needReadyNodes,
  podsOnNodes,
  reachableHTTP,
  svcRef,
  waitCloudLB,
  waitForIngress,
  waitReadyEndpoints,
} from './support.js';

const SOURCE = 'k/k test/e2e/cloud/gcp/cluster_upgrade.go';
/** Share of requests that may fail while the component is replaced. */
const DISRUPTION_BUDGET = 0.1;

type Action = keyof UpgradeInfra;

async function functioningAcross(env: SuiteEnv, action: Action, dataPlane: boolean): Promise<void> {
  const infra = env.driver.upgrade;
  if (!infra?.[action]) fail(`driver ${env.driver.name} declares capability upgrade but has no upgrade.${action}()`);
  const name = 'upgrade-lb';
  const labels = { app: name };
  await createService(env, name, { type: 'LoadBalancer', selector: labels, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
  if (dataPlane) {
    const nodes = (await needReadyNodes(env, 1)).slice(0, 2);
    await podsOnNodes(env, name, nodes, labels);
    await waitReadyEndpoints(env, name, nodes.length);
  }
  const { svc, ingress } = await waitForIngress(env, name);
  await waitCloudLB(env, svc);
  let ok = 0;
  let total = 0;
  let running = dataPlane;
  let hammer: Promise<void> = Promise.resolve();
  if (dataPlane) {
    await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)} before ${action}`);
    const c = needClient(env);
    hammer = (async () => {
      while (running) {
        const r = await c.httpGet(ingress, 80, '/echo?msg=hello', { timeoutMs: 2000 });
        total++;
        if (r.ok && r.body === 'hello') ok++;
        await new Promise((r2) => setTimeout(r2, 20));
      }
    })();
  }
  try {
    await infra[action]();
  } finally {
    running = false;
    await hammer;
  }
  const after = await getService(env, name);
  expect(
    ingressOf(after) === ingress,
    `Service ${svcRef(env, name)} changed its load balancer ingress from ${ingress} to ${ingressOf(after)} across ${action}`,
  );
  await waitCloudLB(env, after);
  if (dataPlane) {
    const failed = total ? (total - ok) / total : 0;
    env.log(`${action}: ${ok}/${total} requests succeeded`);
    if (failed > DISRUPTION_BUDGET) {
      fail(
        `${(failed * 100).toFixed(1)}% of ${total} requests through the load balancer of ${svcRef(env, name)} failed during ${action} (budget ${DISRUPTION_BUDGET * 100}%)`,
      );
    }
    await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)} after ${action}`);
  }
  // Still functioning: a new load balancer comes and goes.
  await createService(env, `${name}-new`, { type: 'LoadBalancer', selector: labels, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
  await waitForIngress(env, `${name}-new`);
  await deleteServiceAndWait(env, `${name}-new`, env.timeouts.lbLagMs, `Service ${svcRef(env, `${name}-new`)} is stuck deleting {t} after ${action}`);
}

function upgradeTest(id: string, upstream: string, action: Action): CcmTestCase {
  return {
    id,
    upstream,
    source: SOURCE,
    labels: ['upgrade', 'disruptive'],
    needs: {
      capabilities: ['upgrade', 'lb.tcp'],
      // Traffic keeps flowing while the CCM is replaced only where load balancers live outside its
      // process (every cloud; not the loopback cloud run as a CCM process, env up's).
      ...(action === 'upgradeControlPlane' ? {} : { dataPlane: { capabilities: ['lb.survivesCcmRestart'] as const } }),
      infra: ['upgrade', 'loadBalancers'],
      disruptive: true,
      slow: true,
    },
    controlPlane: (env) => functioningAcross(env, action, false),
    dataPlane: (env) => functioningAcross(env, action, true),
  };
}

export const upgradeTests: readonly CcmTestCase[] = [
  upgradeTest(
    'upgrade/control-plane',
    '[sig-cloud-provider-gcp] Upgrade [Feature:Upgrade] master upgrade should maintain a functioning cluster [Feature:MasterUpgrade]',
    'upgradeControlPlane',
  ),
  upgradeTest(
    'upgrade/cluster',
    '[sig-cloud-provider-gcp] Upgrade [Feature:Upgrade] cluster upgrade should maintain a functioning cluster [Feature:ClusterUpgrade]',
    'upgradeCcm',
  ),
  upgradeTest(
    'downgrade/cluster',
    '[sig-cloud-provider-gcp] Downgrade [Feature:Downgrade] cluster downgrade should maintain a functioning cluster [Feature:ClusterDowngrade]',
    'downgradeCcm',
  ),
];
