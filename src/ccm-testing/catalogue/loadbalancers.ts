// k/k test/e2e/network/loadbalancer.go, provider-neutral: each upstream test split into what the
// API server and the CCM must have written (control plane) and what packets must do (data plane).
import { isStatusError } from '../../client/index.js';
import type { CcmTestCase, SuiteEnv, V1Service } from '../types.js';
import {
  checkAffinity,
  clientIPOf,
  clientPod,
  createPod,
  createService,
  deleteServiceAndWait,
  dialFromPod,
  endpointsOf,
  expect,
  fail,
  getService,
  ingressOf,
  LB_CLEANUP_FINALIZER,
  NETEXEC_HTTP_PORT,
  NETEXEC_UDP_PORT,
  needClient,
  needLoadBalancers,
  needReadyNodes,
  nodeIP,
  PODS,
  podsOnNodes,
  reachableHTTP,
  reachableUDP,
  svcRef,
  type Svc,
  unreachableHTTP,
  unreachableUDP,
  updateService,
  waitCloudLB,
  waitCloudLBGone,
  waitFor,
  waitForIngress,
  waitForNoIngress,
  waitPodsReady,
  waitReadyEndpoints,
} from './support.js';

const SOURCE = 'k/k test/e2e/network/loadbalancer.go';
const LB = '[sig-network] LoadBalancers [Feature:LoadBalancer]';
const LOCAL = '[sig-network] LoadBalancers ExternalTrafficPolicy: Local [Feature:LoadBalancer]';

const nodePortOf = (s: Svc, i = 0): number => s.spec.ports?.[i]?.nodePort ?? 0;

/** jig.ChangeServiceNodePort: walk the range from the current port until the update is accepted. */
async function changeNodePort(env: SuiteEnv, name: string, from: number): Promise<Svc> {
  for (let i = 1; i < 200; i++) {
    const next = 30000 + ((from - 30000 + i) % 2768);
    try {
      return await updateService(env, name, (s) => {
        s.spec.ports![0]!.nodePort = next;
      });
    } catch (e) {
      if (isStatusError(e) && e.code === 422 && /already allocated/.test(e.message)) continue;
      throw e;
    }
  }
  return fail(`could not move Service ${svcRef(env, name)} to another node port: every port tried is allocated`);
}

/** "should be able to change the type and ports of a TCP/UDP service", one body for both halves and protocols. */
async function typeAndPorts(env: SuiteEnv, protocol: 'TCP' | 'UDP', dataPlane: boolean): Promise<void> {
  const name = `mutability-test-${protocol.toLowerCase()}`;
  const labels = { app: name };
  const targetPort = protocol === 'TCP' ? NETEXEC_HTTP_PORT : NETEXEC_UDP_PORT;
  if (dataPlane) {
    needClient(env);
    await createPod(env, `${name}-0`, { labels });
  }
  await createService(env, name, { type: 'ClusterIP', selector: labels, ports: [{ port: 80, protocol, targetPort }] });
  if (dataPlane) {
    await waitPodsReady(env, [`${name}-0`]);
    await waitReadyEndpoints(env, name, 1);
  }
  const reach = async (ip: string, port: number, what: string): Promise<void> => {
    if (!dataPlane) return;
    if (protocol === 'TCP') await reachableHTTP(env, ip, port, '/echo?msg=hello', env.timeouts.lbPropagationMs, what);
    else await reachableUDP(env, ip, port, env.timeouts.lbPropagationMs, what);
  };
  const unreach = async (ip: string, port: number, what: string): Promise<void> => {
    if (!dataPlane) return;
    if (protocol === 'TCP') await unreachableHTTP(env, ip, port, env.timeouts.lbLagMs, what);
    else await unreachableUDP(env, ip, port, env.timeouts.lbLagMs, what);
  };

  // ClusterIP → NodePort.
  let svc = await updateService(env, name, (s) => {
    s.spec.type = 'NodePort';
  });
  const nodePort = nodePortOf(svc);
  expect(nodePort > 0, `Service ${svcRef(env, name)} got no node port when it became type NodePort`);

  // NodePort → LoadBalancer: the node port is kept.
  await updateService(env, name, (s) => {
    s.spec.type = 'LoadBalancer';
  });
  const first = await waitForIngress(env, name);
  svc = first.svc;
  const ingress = first.ingress;
  expect(
    nodePortOf(svc) === nodePort,
    `Service ${svcRef(env, name)} changed its node port from ${nodePort} to ${nodePortOf(svc)} when it became type LoadBalancer`,
  );
  const view = await waitCloudLB(env, svc);
  expect(
    view.frontends.length === 0 || view.frontends.some((f) => f.port === 80),
    `the cloud's load balancer for ${svcRef(env, name)} has no frontend on port 80 (it has ${view.frontends.map((f) => `${f.port}/${f.protocol}`).join(', ')})`,
  );
  await reach(ingress, 80, `load balancer of ${svcRef(env, name)}`);

  // A new node port: the ingress stays.
  svc = await changeNodePort(env, name, nodePort);
  const nodePort2 = nodePortOf(svc);
  await waitFor(
    env,
    env.timeouts.lbLagMs,
    `Service ${svcRef(env, name)} lost or changed its load balancer ingress (${ingress}) {t} after its node port changed`,
    async () => {
      const s = await getService(env, name);
      if (ingressOf(s) !== ingress) return undefined;
      return true;
    },
  );
  await reach(ingress, 80, `load balancer of ${svcRef(env, name)} after the node port changed to ${nodePort2}`);

  // Port 80 → 81: node port and ingress stay.
  svc = await updateService(env, name, (s) => {
    s.spec.ports![0]!.port = 81;
  });
  expect(nodePortOf(svc) === nodePort2, `Service ${svcRef(env, name)} changed its node port from ${nodePort2} to ${nodePortOf(svc)} when its port changed`);
  const lbs = needLoadBalancers(env);
  await waitFor(
    env,
    env.timeouts.lbLagMs,
    `the cloud's load balancer for ${svcRef(env, name)} does not listen on the Service's new port 81 {t} after the change`,
    async () => {
      const v = await lbs.describe(svc as V1Service);
      return v && (v.frontends.length === 0 || v.frontends.some((f) => f.port === 81)) ? true : undefined;
    },
  );
  expect(ingressOf(await getService(env, name)) === ingress, `Service ${svcRef(env, name)} changed its load balancer ingress when its port changed`);
  await reach(ingress, 81, `load balancer of ${svcRef(env, name)} on the new port 81`);

  if (dataPlane) {
    // No backends: not reachable; one again: reachable.
    await env.client.delete(PODS, env.namespace, `${name}-0`, { gracePeriodSeconds: 0 });
    await unreach(ingress, 81, `load balancer of ${svcRef(env, name)} with no backend pod`);
    await createPod(env, `${name}-1`, { labels });
    await waitPodsReady(env, [`${name}-1`]);
    await reach(ingress, 81, `load balancer of ${svcRef(env, name)} with a backend pod again`);
  }

  // LoadBalancer → ClusterIP: node port cleared, ingress and cloud load balancer gone.
  svc = await updateService(env, name, (s) => {
    s.spec.type = 'ClusterIP';
    for (const p of s.spec.ports ?? []) delete p.nodePort;
  });
  expect(nodePortOf(svc) === 0, `Service ${svcRef(env, name)} kept node port ${nodePortOf(svc)} after it became type ClusterIP`);
  await waitForNoIngress(env, name, 'it became type ClusterIP');
  await waitCloudLBGone(env, svc, 'the Service became type ClusterIP');
  await unreach(ingress, 81, `load balancer of ${svcRef(env, name)} after the Service became type ClusterIP`);
}

/** Session affinity ClientIP through the load balancer, with the given external traffic policy. */
function affinity(policy: 'Local' | 'Cluster'): CcmTestCase {
  const name = `affinity-lb-${policy.toLowerCase()}`;
  return {
    id: `lb/affinity-${policy.toLowerCase()}`,
    upstream: `${LB} should have session affinity work for LoadBalancer service with ${policy} traffic policy [Slow] [LinuxOnly]`,
    source: SOURCE,
    labels: ['loadbalancer', 'affinity'],
    needs: {
      capabilities:
        policy === 'Local' ? ['lb.tcp', 'lb.sessionAffinity.clientIP', 'lb.etpLocal.healthCheckNodePort'] : ['lb.tcp', 'lb.sessionAffinity.clientIP'],
      infra: ['loadBalancers'],
      slow: true,
    },
    async controlPlane(env) {
      await createService(env, name, {
        type: 'LoadBalancer',
        externalTrafficPolicy: policy,
        sessionAffinity: 'ClientIP',
        selector: { app: name },
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      const { svc } = await waitForIngress(env, name);
      expect(svc.spec.sessionAffinity === 'ClientIP', `Service ${svcRef(env, name)} lost sessionAffinity ClientIP: ${svc.spec.sessionAffinity}`);
      const view = await waitCloudLB(env, svc);
      expect(
        view.sessionAffinity === undefined || view.sessionAffinity === 'ClientIP',
        `the cloud's load balancer for ${svcRef(env, name)} has session affinity ${view.sessionAffinity}, the Service asks for ClientIP`,
      );
    },
    async dataPlane(env) {
      const nodes = (await needReadyNodes(env, 1)).slice(0, 3);
      const labels = { app: name };
      await createService(env, name, {
        type: 'LoadBalancer',
        externalTrafficPolicy: policy,
        sessionAffinity: 'ClientIP',
        selector: labels,
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      await podsOnNodes(env, name, nodes, labels);
      const { ingress } = await waitForIngress(env, name);
      await waitReadyEndpoints(env, name, nodes.length);
      await reachableHTTP(env, ingress, 80, '/hostname', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)}`);
      await checkAffinity(env, ingress, 80, true, `load balancer of ${svcRef(env, name)} (ETP ${policy})`);
    },
  };
}

/** Pods of an ETP Local LoadBalancer Service on `count` nodes; the nodes with and without endpoints. */
async function localLB(env: SuiteEnv, name: string, count: number, min: number) {
  const nodes = await needReadyNodes(env, min);
  const labels = { app: name };
  const svc = await createService(env, name, {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    selector: labels,
    ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
  });
  const withPods = nodes.slice(0, count);
  await podsOnNodes(env, name, withPods, labels);
  const { ingress } = await waitForIngress(env, name);
  await waitReadyEndpoints(env, name, count);
  return { svc, ingress, nodes, withPods, without: nodes.slice(count) };
}

async function localControlPlane(env: SuiteEnv, name: string): Promise<void> {
  const svc = await createService(env, name, {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    selector: { app: name },
    ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
  });
  const hcnp = svc.spec.healthCheckNodePort ?? 0;
  expect(hcnp > 0, `Service ${svcRef(env, name)} with externalTrafficPolicy Local got no healthCheckNodePort`);
  const { svc: withIngress } = await waitForIngress(env, name);
  const view = await waitCloudLB(env, withIngress);
  expect(
    !view.healthCheck || view.healthCheck.port === hcnp,
    `the cloud's load balancer for ${svcRef(env, name)} health-checks port ${view.healthCheck?.port}, not the Service's healthCheckNodePort ${hcnp}`,
  );
}

export const loadBalancerTests: readonly CcmTestCase[] = [
  {
    id: 'lb/type-and-ports-tcp',
    upstream: `${LB} should be able to change the type and ports of a TCP service [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer'],
    needs: { capabilities: ['lb.tcp'], infra: ['loadBalancers'], slow: true },
    controlPlane: (env) => typeAndPorts(env, 'TCP', false),
    dataPlane: (env) => typeAndPorts(env, 'TCP', true),
  },
  {
    id: 'lb/type-and-ports-udp',
    upstream: `${LB} should be able to change the type and ports of a UDP service [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer'],
    needs: { capabilities: ['lb.udp'], infra: ['loadBalancers'], slow: true },
    controlPlane: (env) => typeAndPorts(env, 'UDP', false),
    dataPlane: (env) => typeAndPorts(env, 'UDP', true),
  },
  affinity('Local'),
  affinity('Cluster'),
  {
    id: 'lb/finalizer',
    upstream: `${LB} should handle load balancer cleanup finalizer for service [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer'],
    needs: { capabilities: ['lb.tcp'], infra: ['loadBalancers'], slow: true },
    async controlPlane(env) {
      const name = 'lb-finalizer';
      const ref = svcRef(env, name);
      await createService(env, name, { type: 'LoadBalancer', selector: { app: name }, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
      const hasFinalizer = async (want: boolean, after: string): Promise<Svc> =>
        waitFor(
          env,
          env.timeouts.lbLagMs,
          want
            ? `Service ${ref} has no ${LB_CLEANUP_FINALIZER} finalizer {t} after ${after}`
            : `Service ${ref} still carries the ${LB_CLEANUP_FINALIZER} finalizer {t} after ${after}`,
          async () => {
            const s = await getService(env, name);
            return (s.metadata?.finalizers ?? []).includes(LB_CLEANUP_FINALIZER) === want ? s : undefined;
          },
        );
      const { svc } = await waitForIngress(env, name);
      await hasFinalizer(true, 'it got a load balancer');
      await waitCloudLB(env, svc);
      await updateService(env, name, (s) => {
        s.spec.type = 'ClusterIP';
        for (const p of s.spec.ports ?? []) delete p.nodePort;
      });
      await waitForNoIngress(env, name, 'it became type ClusterIP');
      await waitCloudLBGone(env, svc, 'the Service became type ClusterIP');
      await hasFinalizer(false, 'it stopped being a LoadBalancer');
      await updateService(env, name, (s) => {
        s.spec.type = 'LoadBalancer';
      });
      await waitForIngress(env, name);
      const again = await hasFinalizer(true, 'it became a LoadBalancer again');
      await deleteServiceAndWait(
        env,
        name,
        env.timeouts.lbLagMs,
        `Service ${ref} is stuck deleting {t} after DELETE: the ${LB_CLEANUP_FINALIZER} finalizer was not removed`,
      );
      await waitCloudLBGone(env, again, 'the Service was deleted');
    },
  },
  {
    id: 'lb/without-nodeports',
    upstream: `${LB} should be able to create LoadBalancer Service without NodePort and change it [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer'],
    needs: { capabilities: ['lb.tcp', 'lb.withoutNodePorts'], infra: ['loadBalancers'], slow: true },
    controlPlane: (env) => withoutNodePorts(env, false),
    dataPlane: (env) => withoutNodePorts(env, true),
  },
  rollingUpdate('Cluster'),
  rollingUpdate('Local'),
  {
    id: 'lb/etp-local-all-endpoint-nodes',
    upstream: `${LOCAL} should target all nodes with endpoints [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer', 'etp-local'],
    needs: { capabilities: ['lb.tcp', 'lb.etpLocal.healthCheckNodePort'], infra: ['loadBalancers'], minNodes: 2, slow: true },
    controlPlane: (env) => localControlPlane(env, 'etp-local-all'),
    async dataPlane(env) {
      const name = 'etp-local-all';
      const { svc, ingress, withPods } = await localLB(env, name, 2, 2);
      const lbs = needLoadBalancers(env);
      const want = withPods.map((n) => n.metadata?.name ?? '');
      await waitFor(
        env,
        env.timeouts.lbPropagationMs,
        (last) =>
          `the cloud's load balancer for ${svcRef(env, name)} does not count nodes ${want.join(', ')} (with endpoints) healthy {t} after the pods became ready${last ? '' : ''}`,
        async () => {
          const v = await lbs.describe(svc as V1Service);
          if (!v) return undefined;
          const healthy = new Set(v.backends.filter((b) => b.healthy !== false).map((b) => b.nodeName));
          return want.every((n) => healthy.has(n)) ? true : undefined;
        },
      );
      await checkAffinity(env, ingress, 80, false, `load balancer of ${svcRef(env, name)} (ETP Local, endpoints on ${want.join(', ')})`);
    },
  },
  {
    id: 'lb/etp-local-only-endpoint-nodes',
    upstream: `${LOCAL} should only target nodes with endpoints [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer', 'etp-local'],
    needs: { capabilities: ['lb.tcp', 'lb.etpLocal.healthCheckNodePort'], infra: ['loadBalancers'], minNodes: 2, slow: true },
    controlPlane: (env) => localControlPlane(env, 'etp-local-only'),
    async dataPlane(env) {
      const name = 'etp-local-only';
      const { svc, ingress, withPods, without } = await localLB(env, name, 1, 2);
      const c = needClient(env);
      const hcnp = (await getService(env, name)).spec.healthCheckNodePort ?? 0;
      const endpointNode = withPods[0]!;
      // kube-proxy's health check node port: 200 where the endpoint is, 503 elsewhere.
      for (const [n, code] of [[endpointNode, 200] as const, ...without.map((w) => [w, 503] as const)]) {
        await waitFor(
          env,
          env.timeouts.proxyLagMs,
          `healthCheckNodePort ${hcnp} on node ${n.metadata?.name} does not answer ${code} {t} after the pods became ready`,
          async () => {
            const r = await c.httpGet(nodeIP(n), hcnp, '/healthz', { timeoutMs: 1000 });
            return r.status === code ? true : undefined;
          },
        );
      }
      const lbs = needLoadBalancers(env);
      await waitFor(
        env,
        env.timeouts.lbPropagationMs,
        `load balancer for ${svcRef(env, name)} still sends to nodes without endpoints (${without.map((n) => n.metadata?.name).join(', ')}) {t} after the pods became ready: its health checks ignore externalTrafficPolicy Local`,
        async () => {
          const v = await lbs.describe(svc as V1Service);
          if (!v) return undefined;
          const healthy = v.backends.filter((b) => b.healthy !== false).map((b) => b.nodeName);
          if (v.backends.every((b) => b.healthy === undefined)) return true;
          return healthy.length > 0 && healthy.every((h) => h === endpointNode.metadata?.name) ? true : undefined;
        },
      );
      // Every request through the load balancer reaches the one endpoint.
      const want = `${name}-0`;
      let failures = 0;
      await waitFor(
        env,
        env.timeouts.lbPropagationMs,
        () =>
          `requests through the load balancer of ${svcRef(env, name)} (${ingress}:80) fail or miss the endpoint (${failures} of the last 10): it sends traffic to nodes without endpoints`,
        async () => {
          failures = 0;
          for (let i = 0; i < 10; i++) {
            const r = await c.httpGet(ingress, 80, '/hostname', { timeoutMs: 1000 });
            if (!(r.ok && r.body === want)) failures++;
          }
          return failures === 0 ? true : undefined;
        },
        250,
      );
    },
  },
  {
    id: 'lb/etp-local-from-pods',
    upstream: `${LOCAL} should work from pods [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer', 'etp-local'],
    // Upstream skips itself when the ingress ipMode is Proxy: capability lb.clientIPPreserved.
    needs: {
      capabilities: ['lb.tcp', 'lb.etpLocal.healthCheckNodePort', 'lb.clientIPPreserved'],
      infra: ['loadBalancers'],
      slow: true,
      dataPlane: { capabilities: ['podDial'], infra: ['podClient'] },
    },
    async controlPlane(env) {
      await localControlPlane(env, 'etp-local-pods');
      const s = await getService(env, 'etp-local-pods');
      const mode = s.status?.loadBalancer?.ingress?.[0]?.ipMode;
      expect(
        mode === undefined || mode === 'VIP',
        `Service ${svcRef(env, 'etp-local-pods')} has ingress ipMode ${mode}: the client IP is not preserved (capability lb.clientIPPreserved)`,
      );
    },
    // From a pod, the load balancer's /clientip shows the pod's own IP.
    async dataPlane(env) {
      const name = 'etp-local-pods';
      const { ingress, nodes } = await localLB(env, name, 1, 1);
      const client = await clientPod(env, `${name}-client`, nodes[0]!.metadata?.name);
      const podIP = client.status?.podIP ?? '';
      await dialFromPod(
        env,
        client,
        { host: ingress, port: 80, request: 'clientip' },
        env.timeouts.lbPropagationMs,
        (last) =>
          `source IP not preserved from pod ${client.metadata?.name}: ${ingress}:80/clientip of the load balancer of ${svcRef(env, name)} (ETP Local) ${last}, not the pod's IP ${podIP}, {t} after its endpoint became ready`,
        (r) => (clientIPOf(r.responses.at(-1)) === podIP ? true : undefined),
      );
    },
  },
];

async function withoutNodePorts(env: SuiteEnv, dataPlane: boolean): Promise<void> {
  const name = 'lb-no-nodeports';
  const labels = { app: name };
  if (dataPlane) await createPod(env, `${name}-0`, { labels });
  await createService(env, name, { type: 'ClusterIP', selector: labels, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
  let svc = await updateService(env, name, (s) => {
    s.spec.type = 'LoadBalancer';
    s.spec.allocateLoadBalancerNodePorts = false;
  });
  expect(nodePortOf(svc) === 0, `Service ${svcRef(env, name)} got node port ${nodePortOf(svc)} with allocateLoadBalancerNodePorts false`);
  const { ingress } = await waitForIngress(env, name);
  if (dataPlane)
    await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)} without node ports`);
  svc = await updateService(env, name, (s) => {
    s.spec.allocateLoadBalancerNodePorts = true;
  });
  expect(nodePortOf(svc) > 0, `Service ${svcRef(env, name)} got no node port after allocateLoadBalancerNodePorts became true`);
  expect(ingressOf(await getService(env, name)) === ingress, `Service ${svcRef(env, name)} changed its ingress when it got node ports`);
  if (dataPlane)
    await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)} with node ports`);
}

/** Rounds of pod replacement (upstream: 5 DaemonSet rollouts); the local suite keeps it short. */
const ROLLING_ROUNDS = 2;
const SUCCESS_BUDGET = 0.95;

function rollingUpdate(policy: 'Cluster' | 'Local'): CcmTestCase {
  const name = `rolling-${policy.toLowerCase()}`;
  return {
    id: `lb/rolling-update-${policy.toLowerCase()}`,
    upstream: `${LB} should not have connectivity disruption during rolling update with externalTrafficPolicy=${policy} [Slow]`,
    source: SOURCE,
    labels: ['loadbalancer', 'disruption'],
    needs: {
      capabilities: policy === 'Local' ? ['lb.tcp', 'lb.etpLocal.healthCheckNodePort', 'dataPlane'] : ['lb.tcp', 'dataPlane'],
      infra: ['loadBalancers', 'externalClient'],
      minNodes: 2,
      slow: true,
    },
    // A data-plane quality test: the control plane's share (ingress, health check node port) is
    // proven by the other tests.
    async dataPlane(env) {
      const c = needClient(env);
      const nodes = (await needReadyNodes(env, 2)).slice(0, 3);
      const labels = { app: name };
      await createService(env, name, {
        type: 'LoadBalancer',
        externalTrafficPolicy: policy,
        selector: labels,
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      // One pod per node, as the DaemonSet of the upstream test; replaced node by node.
      let current = await podsOnNodes(env, `${name}-v0`, nodes, labels, { gracePeriodSeconds: 3, delayShutdownSeconds: 3 });
      const { ingress } = await waitForIngress(env, name);
      await waitReadyEndpoints(env, name, nodes.length);
      await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)}`);
      let ok = 0;
      let total = 0;
      let running = true;
      const hammer = (async () => {
        while (running) {
          const r = await c.httpGet(ingress, 80, '/echo?msg=hello', { timeoutMs: 2000 });
          total++;
          if (r.ok && r.body === 'hello') ok++;
        }
      })();
      try {
        for (let round = 1; round <= ROLLING_ROUNDS; round++) {
          ok = 0;
          total = 0;
          const next: string[] = [];
          for (const [i, n] of nodes.entries()) {
            const pod = `${name}-v${round}-${i}`;
            await createPod(env, pod, {
              labels,
              nodeName: n.metadata?.name ?? '',
              gracePeriodSeconds: 3,
              delayShutdownSeconds: 3,
              env: { VERSION: String(round) },
            });
            await waitPodsReady(env, [pod]);
            // Surge first: the old pod goes once the new one is a ready endpoint.
            await waitFor(env, env.timeouts.proxyLagMs, `new pod ${pod} of ${svcRef(env, name)} is not a ready endpoint {t} after it became ready`, async () =>
              (await endpointsOf(env, name)).some((e) => e.targetRef?.name === pod && e.conditions?.ready) ? true : undefined,
            );
            await env.client.delete(PODS, env.namespace, current[i]!);
            next.push(pod);
          }
          const gone = new Set(current);
          await waitFor(env, env.timeouts.proxyLagMs, `old pods of ${svcRef(env, name)} still listed as endpoints {t} after round ${round}`, async () => {
            const eps = await endpointsOf(env, name);
            return eps.some((e) => gone.has(e.targetRef?.name ?? '')) || eps.filter((e) => e.conditions?.ready).length < nodes.length ? undefined : true;
          });
          current = next;
          const rate = total ? ok / total : 0;
          env.log(`round ${round}: ${ok}/${total} requests succeeded`);
          if (rate < SUCCESS_BUDGET) {
            fail(
              `only ${(rate * 100).toFixed(1)}% of ${total} requests through the load balancer of ${svcRef(env, name)} succeeded during rolling update round ${round} (externalTrafficPolicy ${policy}; budget ${SUCCESS_BUDGET * 100}%)`,
            );
          }
        }
      } finally {
        running = false;
        await hammer;
      }
      await reachableHTTP(env, ingress, 80, '/echo?msg=hello', env.timeouts.lbPropagationMs, `load balancer of ${svcRef(env, name)} after the rolling update`);
    },
  };
}
