// k/k test/e2e/network/service.go: the Service tests of the seed's list. Their control-plane halves
// are the API server's semantics (allocation, release, type transitions); their data-plane halves
// probe node ports and external IPs from outside the cluster, and cluster IPs from a client pod
// (capability podDial), as upstream probes from an exec pod.
import { isStatusError } from '../../client/index.js';
import type { CcmTestCase, SuiteEnv } from '../types.js';
import {
  clientPod,
  createPod,
  createService,
  dialFromPod,
  endpointsOf,
  expect,
  fail,
  getService,
  NETEXEC_HTTP_PORT,
  NETEXEC_UDP_PORT,
  needClient,
  needPodClient,
  needReadyNodes,
  nodeIP,
  PODS,
  podsOnNodes,
  reachableHTTP,
  SERVICES,
  svcRef,
  type Svc,
  updateService,
  waitFor,
  waitPodsReady,
  waitReadyEndpoints,
} from './support.js';

const SOURCE = 'k/k test/e2e/network/service.go';
const SVC = '[sig-network] Services';

/**
 * An address for the ExternalIP test: the driver's `testExternalIP`. The control-plane half only
 * stores it in a Service, so without one it uses upstream's 203.0.113.250 (TEST-NET-3); the
 * data-plane half sends packets, so it needs the driver's and never probes a default.
 */
export const externalIPFor = (env: SuiteEnv, probing = false): string => {
  if (env.driver.testExternalIP !== undefined) return env.driver.testExternalIP;
  if (probing)
    throw new Error(
      `driver ${env.driver.name} names no testExternalIP: svc/externalip's data plane needs an address the service proxy answers on and the external client reaches`,
    );
  return '203.0.113.250';
};

const nodePorts = (s: Svc): number[] => (s.spec.ports ?? []).map((p) => p.nodePort ?? 0);
const hasClusterIP = (s: Svc): boolean => !!s.spec.clusterIP && s.spec.clusterIP !== 'None';

async function reachNodePort(env: SuiteEnv, port: number, what: string): Promise<void> {
  const nodes = await needReadyNodes(env, 1);
  for (const n of nodes.slice(0, 2)) await reachableHTTP(env, nodeIP(n), port, '/hostname', env.timeouts.proxyLagMs, `${what} on node ${n.metadata?.name}`);
}

/** ExternalName → ClusterIP/NodePort, and back. */
function typeChange(from: 'ExternalName' | 'ClusterIP' | 'NodePort', to: 'ClusterIP' | 'NodePort' | 'ExternalName'): CcmTestCase {
  const id = `svc/type-${from.toLowerCase()}-to-${to.toLowerCase()}`;
  const name = `${from.toLowerCase()}-to-${to.toLowerCase()}`;
  const run = async (env: SuiteEnv, dataPlane: boolean): Promise<void> => {
    const labels = { app: name };
    if (dataPlane) await createPod(env, `${name}-0`, { labels });
    if (from === 'ExternalName') {
      await createService(env, name, { type: 'ExternalName', externalName: 'foo.example.com' });
      const s = await updateService(env, name, (x) => {
        x.spec.type = to;
        delete x.spec.externalName;
        x.spec.selector = labels;
        x.spec.ports = [{ port: 80, targetPort: NETEXEC_HTTP_PORT }];
      });
      expect(hasClusterIP(s), `Service ${svcRef(env, name)} got no cluster IP when it changed from ExternalName to ${to}`);
      expect(!s.spec.externalName, `Service ${svcRef(env, name)} kept externalName ${s.spec.externalName} as type ${to}`);
      if (to === 'NodePort') expect(nodePorts(s)[0]! > 0, `Service ${svcRef(env, name)} got no node port when it changed from ExternalName to NodePort`);
      if (dataPlane && to === 'NodePort') {
        await waitPodsReady(env, [`${name}-0`]);
        await reachNodePort(env, nodePorts(s)[0]!, `node port ${nodePorts(s)[0]} of ${svcRef(env, name)}`);
      }
      if (dataPlane && to === 'ClusterIP') {
        // Upstream: CheckServiceReachability from an exec pod, over the cluster IP.
        await waitPodsReady(env, [`${name}-0`]);
        const client = await clientPod(env, `${name}-client`);
        await dialFromPod(
          env,
          client,
          { host: s.spec.clusterIP ?? '', port: 80, request: 'hostname' },
          env.timeouts.proxyLagMs,
          (last) =>
            `cluster IP ${s.spec.clusterIP}:80 of ${svcRef(env, name)} (was ExternalName) from pod ${client.metadata?.name} ${last} {t} after the change, not ${name}-0`,
          (r) => (r.responses.at(-1) === `${name}-0` ? true : undefined),
        );
      }
      return;
    }
    const created = await createService(env, name, { type: from, selector: labels, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
    const oldPort = nodePorts(created)[0] ?? 0;
    // The client sends the old clusterIP and node ports back; the API server drops them.
    const s = await updateService(env, name, (x) => {
      x.spec.type = 'ExternalName';
      x.spec.externalName = `externalsvc.${env.namespace}.svc.cluster.local`;
    });
    expect(!hasClusterIP(s), `Service ${svcRef(env, name)} kept cluster IP ${s.spec.clusterIP} as type ExternalName`);
    if (from === 'NodePort') {
      expect(
        nodePorts(s).every((p) => p === 0),
        `Service ${svcRef(env, name)} kept node port ${nodePorts(s).join(',')} as type ExternalName`,
      );
      // Released: another Service may take it.
      try {
        await createService(env, `${name}-reuse`, { type: 'NodePort', ports: [{ port: 80, nodePort: oldPort }] });
      } catch (e) {
        if (isStatusError(e) && /already allocated/.test(e.message))
          fail(`node port ${oldPort} of ${svcRef(env, name)} was not released when it became type ExternalName`);
        throw e;
      }
    }
  };
  const conformance = `${SVC} should be able to change the type from ${from} to ${to} [Conformance]`;
  return {
    id,
    upstream: conformance,
    source: SOURCE,
    labels: ['services', 'conformance'],
    // ExternalName → ClusterIP: reached from a pod (podDial), as upstream.
    needs: { capabilities: [], ...(to === 'ClusterIP' ? { dataPlane: { capabilities: ['podDial'], infra: ['podClient'] } } : {}) },
    controlPlane: (env) => run(env, false),
    ...(to === 'NodePort' || (from === 'ExternalName' && to === 'ClusterIP') ? { dataPlane: (env: SuiteEnv) => run(env, true) } : {}),
  };
}

/**
 * Fallback to terminating endpoints (KEP-1669), from client pods as upstream: the only endpoint
 * terminates (its slice says ready=false, serving=true, terminating=true) and still takes the
 * cluster IP's traffic: from every node with ITP Cluster; with ITP Local only from its own node
 * (a pod on another node has no local endpoint: its connection is dropped).
 */
function fallback(itp: 'Cluster' | 'Local'): CcmTestCase {
  const name = `fallback-itp-${itp.toLowerCase()}`;
  return {
    id: `svc/fallback-terminating-itp-${itp.toLowerCase()}`,
    upstream:
      itp === 'Cluster'
        ? `${SVC} should fallback to terminating endpoints when there are no ready endpoints with internallTrafficPolicy=Cluster`
        : `${SVC} should fallback to local terminating endpoints when there are no ready endpoints with internalTrafficPolicy=Local`,
    source: SOURCE,
    labels: ['services', 'terminating'],
    needs: { capabilities: [], minNodes: 2, dataPlane: { capabilities: ['podDial'], infra: ['podClient'] } },
    async controlPlane(env) {
      const s = await createService(env, name, {
        type: 'ClusterIP',
        internalTrafficPolicy: itp,
        selector: { app: name },
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      expect(s.spec.internalTrafficPolicy === itp, `Service ${svcRef(env, name)} has internalTrafficPolicy ${s.spec.internalTrafficPolicy}, not ${itp}`);
    },
    async dataPlane(env) {
      const nodes = (await needReadyNodes(env, 2)).slice(0, 2);
      const labels = { app: name };
      const svc = await createService(env, name, {
        type: 'ClusterIP',
        internalTrafficPolicy: itp,
        selector: labels,
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      const cip = svc.spec.clusterIP ?? '';
      // The server on node 0 keeps serving for its grace period; a client pod on each node.
      const [[pod], clients] = await Promise.all([
        podsOnNodes(env, name, nodes.slice(0, 1), labels, { gracePeriodSeconds: 30, delayShutdownSeconds: 30 }),
        Promise.all(nodes.map((n, i) => clientPod(env, `${name}-client-${i}`, n.metadata?.name))),
      ]);
      await waitReadyEndpoints(env, name, 1);
      await env.client.delete(PODS, env.namespace, pod!);
      await waitFor(
        env,
        env.timeouts.proxyLagMs,
        `the endpoint of terminating pod ${pod} of ${svcRef(env, name)} is not ready=false, serving=true, terminating=true {t} after its deletion`,
        async () => {
          const eps = await endpointsOf(env, name);
          const e = eps.find((x) => x.targetRef?.name === pod);
          return e && e.conditions?.ready === false && e.conditions.serving === true && e.conditions.terminating === true ? true : undefined;
        },
      );
      const reach = (client: (typeof clients)[number], on: string): Promise<true> =>
        dialFromPod(
          env,
          client,
          { host: cip, port: 80, request: 'hostname' },
          env.timeouts.proxyLagMs,
          (last) =>
            `cluster IP ${cip}:80 of ${svcRef(env, name)} (ITP ${itp}) from pod ${client.metadata?.name} on ${on} ${last} {t} after its only endpoint ${pod} began terminating, not from ${pod}`,
          (r) => (r.responses.length > 0 && r.responses.every((b) => b === pod) ? true : undefined),
        );
      const [node0, node1] = nodes.map((n) => `node ${n.metadata?.name}`);
      await reach(clients[0]!, node0!);
      if (itp === 'Cluster') await reach(clients[1]!, node1!);
      else {
        // The proxy of node 0 has synced (the dial above); node 1's has no local endpoint.
        const r = await needPodClient(env).dial(clients[1]!, { host: cip, port: 80, request: 'hostname' });
        expect(
          r.responses.length === 0 && r.errors.length > 0,
          `cluster IP ${cip}:80 of ${svcRef(env, name)} (ITP Local) answered pod ${clients[1]!.metadata?.name} on ${node1} with ${JSON.stringify(r.responses)}: that node has no local endpoint, the connection should fail`,
        );
      }
      await env.client.delete(PODS, env.namespace, pod!, { gracePeriodSeconds: 0 }).catch(() => {});
    },
  };
}

export const serviceTests: readonly CcmTestCase[] = [
  {
    id: 'svc/externalip',
    upstream: `${SVC} should be possible to connect to a service via ExternalIP when the external IP is not assigned to a node`,
    source: SOURCE,
    labels: ['services'],
    needs: { capabilities: [] },
    async controlPlane(env) {
      const ip = externalIPFor(env);
      const s = await createService(env, 'externalip-test', {
        type: 'ClusterIP',
        externalIPs: [ip],
        selector: { app: 'externalip-test' },
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      expect(
        s.spec.externalIPs?.[0] === ip,
        `Service ${svcRef(env, 'externalip-test')} did not keep externalIPs [${ip}]: ${JSON.stringify(s.spec.externalIPs)}`,
      );
    },
    async dataPlane(env) {
      const ip = externalIPFor(env, true);
      const labels = { app: 'externalip-test' };
      await createService(env, 'externalip-test', {
        type: 'ClusterIP',
        externalIPs: [ip],
        selector: labels,
        ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
      });
      const nodes = (await needReadyNodes(env, 1)).slice(0, 2);
      await podsOnNodes(env, 'externalip-test', nodes, labels);
      await waitReadyEndpoints(env, 'externalip-test', nodes.length);
      await reachableHTTP(env, ip, 80, '/hostname', env.timeouts.proxyLagMs, `external IP ${ip} of ${svcRef(env, 'externalip-test')}`);
    },
  },
  {
    id: 'svc/nodeport-same-port-diff-proto',
    upstream: `${SVC} should be able to update service type to NodePort listening on same port number but different protocols`,
    source: SOURCE,
    labels: ['services'],
    needs: { capabilities: [] },
    controlPlane: (env) => sameNodePortDiffProto(env, false),
    dataPlane: (env) => sameNodePortDiffProto(env, true),
  },
  typeChange('ExternalName', 'ClusterIP'),
  typeChange('ExternalName', 'NodePort'),
  typeChange('ClusterIP', 'ExternalName'),
  typeChange('NodePort', 'ExternalName'),
  {
    id: 'svc/etp-local-nodeport',
    upstream: `${SVC} should implement NodePort and HealthCheckNodePort correctly when ExternalTrafficPolicy changes`,
    source: SOURCE,
    labels: ['services', 'etp-local'],
    needs: { capabilities: [], minNodes: 2 },
    controlPlane: (env) => etpLocalNodePort(env, false),
    dataPlane: (env) => etpLocalNodePort(env, true),
  },
  fallback('Cluster'),
  fallback('Local'),
  {
    id: 'svc/release-nodeports-on-delete',
    upstream: `${SVC} should release NodePorts on delete`,
    source: SOURCE,
    labels: ['services'],
    needs: { capabilities: [] },
    controlPlane: (env) => releaseNodePorts(env, false),
    dataPlane: (env) => releaseNodePorts(env, true),
  },
  {
    id: 'svc/delete-collection',
    upstream: `${SVC} should delete a collection of services [Conformance]`,
    source: SOURCE,
    labels: ['services', 'conformance'],
    needs: { capabilities: [] },
    async controlPlane(env) {
      for (const [i, v] of ['delete', 'delete', 'keep'].entries()) {
        await createService(
          env,
          `e2e-svc-${'abc'[i]}-${i}`,
          { type: 'ClusterIP', ports: [{ name: 'http', port: 8001 + i, targetPort: 8001 + i }] },
          { 'e2e-test-service': v },
        );
      }
      const count = async (): Promise<number> => (await env.client.list(SERVICES, env.namespace)).items.length;
      expect((await count()) === 3, `expected 3 Services in ${env.namespace} before the collection delete, found ${await count()}`);
      await env.client.deleteCollection(SERVICES, env.namespace, { labelSelector: 'e2e-test-service=delete' });
      await waitFor(env, 10_000, `DELETE of the collection e2e-test-service=delete left ${env.namespace} with other than 1 Service after {t}`, async () =>
        (await count()) === 1 ? true : undefined,
      );
    },
  },
];

async function sameNodePortDiffProto(env: SuiteEnv, dataPlane: boolean): Promise<void> {
  const name = 'nodeport-update-service';
  const labels = { app: name };
  if (dataPlane) await createPod(env, `${name}-0`, { labels });
  await createService(env, name, {
    type: 'ClusterIP',
    selector: labels,
    ports: [{ name: 'tcp-port', port: 80, protocol: 'TCP', targetPort: NETEXEC_HTTP_PORT }],
  });
  let s = await updateService(env, name, (x) => {
    x.spec.type = 'NodePort';
  });
  const tcp = nodePorts(s)[0]!;
  expect(tcp > 0, `Service ${svcRef(env, name)} got no node port as type NodePort`);
  s = await updateService(env, name, (x) => {
    x.spec.ports = [
      { name: 'tcp-port', port: 80, protocol: 'TCP', targetPort: NETEXEC_HTTP_PORT, nodePort: tcp },
      { name: 'udp-port', port: 80, protocol: 'UDP', targetPort: NETEXEC_UDP_PORT },
    ];
  });
  const ports = nodePorts(s);
  expect(
    ports.length === 2 && ports.every((p) => p > 0),
    `Service ${svcRef(env, name)} does not have 2 ports with node ports: ${JSON.stringify(s.spec.ports)}`,
  );
  expect(ports[0] === tcp, `Service ${svcRef(env, name)} moved its TCP node port from ${tcp} to ${ports[0]} when a UDP port was added`);
  if (!dataPlane) return;
  const c = needClient(env);
  await waitPodsReady(env, [`${name}-0`]);
  await waitReadyEndpoints(env, name, 1);
  const [n] = await needReadyNodes(env, 1);
  await reachableHTTP(env, nodeIP(n!), ports[0], '/hostname', env.timeouts.proxyLagMs, `TCP node port ${ports[0]} of ${svcRef(env, name)}`);
  await waitFor(
    env,
    env.timeouts.proxyLagMs,
    `UDP node port ${ports[1]} of ${svcRef(env, name)} on ${nodeIP(n!)} does not answer "hostname" {t} after the port was added`,
    async () => {
      const r = await c.udpExchange(nodeIP(n!), ports[1]!, 'hostname', { timeoutMs: 1000 });
      return r.ok && r.body === `${name}-0` ? true : undefined;
    },
  );
}

async function etpLocalNodePort(env: SuiteEnv, dataPlane: boolean): Promise<void> {
  const name = 'external-local-update';
  const labels = { app: name };
  const svc = await createService(env, name, {
    type: 'LoadBalancer',
    externalTrafficPolicy: 'Local',
    selector: labels,
    ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }],
  });
  const hcnp = svc.spec.healthCheckNodePort ?? 0;
  const nodePort = nodePorts(svc)[0]!;
  expect(hcnp > 0, `Service ${svcRef(env, name)} with externalTrafficPolicy Local got no healthCheckNodePort`);
  const c = dataPlane ? needClient(env) : undefined;
  const nodes = dataPlane ? await needReadyNodes(env, 2) : [];
  const [endpointNode, other] = nodes;
  const status = async (ip: string, port: number, path: string): Promise<number | string> => {
    const r = await c!.httpGet(ip, port, path, { timeoutMs: 1000 });
    return r.status ?? r.error ?? 'none';
  };
  if (dataPlane) {
    await podsOnNodes(env, name, [endpointNode!], labels);
    await waitReadyEndpoints(env, name, 1);
    for (const [n, want] of [[endpointNode!, 200] as const, [other!, 503] as const]) {
      await waitFor(
        env,
        env.timeouts.proxyLagMs,
        `healthCheckNodePort ${hcnp} on node ${n.metadata?.name} does not answer ${want} {t} after the endpoint became ready`,
        async () => ((await status(nodeIP(n), hcnp, '/healthz')) === want ? true : undefined),
      );
    }
    await reachableHTTP(env, nodeIP(endpointNode!), nodePort, '/hostname', env.timeouts.proxyLagMs, `node port ${nodePort} on the endpoint's node`);
    await waitFor(
      env,
      env.timeouts.proxyLagMs,
      `node port ${nodePort} of ${svcRef(env, name)} answers on node ${other!.metadata?.name}, which has no endpoint (externalTrafficPolicy Local) {t} after`,
      async () => {
        const r = await c!.httpGet(nodeIP(other!), nodePort, '/hostname', { timeoutMs: 1000 });
        return r.ok ? undefined : true;
      },
    );
  }
  // To Cluster: the health check node port goes.
  let s = await updateService(env, name, (x) => {
    x.spec.externalTrafficPolicy = 'Cluster';
  });
  expect(!s.spec.healthCheckNodePort, `Service ${svcRef(env, name)} kept healthCheckNodePort ${s.spec.healthCheckNodePort} with externalTrafficPolicy Cluster`);
  if (dataPlane) {
    await reachableHTTP(
      env,
      nodeIP(other!),
      nodePort,
      '/hostname',
      env.timeouts.proxyLagMs,
      `node port ${nodePort} on a node without endpoint (externalTrafficPolicy Cluster)`,
    );
    await waitFor(
      env,
      env.timeouts.proxyLagMs,
      `healthCheckNodePort ${hcnp} still answers on node ${endpointNode!.metadata?.name} {t} after externalTrafficPolicy became Cluster`,
      async () => {
        const r = await c!.httpGet(nodeIP(endpointNode!), hcnp, '/healthz', { timeoutMs: 1000 });
        return r.status === undefined ? true : undefined;
      },
    );
  }
  // Back to Local, asking for the same health check node port.
  s = await updateService(env, name, (x) => {
    x.spec.externalTrafficPolicy = 'Local';
    x.spec.healthCheckNodePort = hcnp;
  });
  expect(s.spec.healthCheckNodePort === hcnp, `Service ${svcRef(env, name)} did not get back healthCheckNodePort ${hcnp}: ${s.spec.healthCheckNodePort}`);
}

async function releaseNodePorts(env: SuiteEnv, dataPlane: boolean): Promise<void> {
  const name = 'nodeport-reuse';
  const svc = await createService(env, name, { type: 'NodePort', selector: { app: name }, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT }] });
  const port = nodePorts(svc)[0]!;
  expect(port >= 30000 && port <= 32767, `Service ${svcRef(env, name)} got node port ${port}, outside the default range 30000-32767`);
  await env.client.delete(SERVICES, env.namespace, name);
  if (dataPlane) {
    const c = needClient(env);
    for (const n of (await needReadyNodes(env, 1)).slice(0, 2)) {
      await waitFor(
        env,
        env.timeouts.proxyLagMs,
        `node port ${port} still accepts connections on node ${n.metadata?.name} {t} after its Service was deleted`,
        async () => ((await c.tcpConnect(nodeIP(n), port, { timeoutMs: 1000 })).ok ? undefined : true),
      );
    }
  }
  try {
    await createService(env, name, { type: 'NodePort', selector: { app: name }, ports: [{ port: 80, targetPort: NETEXEC_HTTP_PORT, nodePort: port }] });
  } catch (e) {
    if (isStatusError(e) && /already allocated/.test(e.message))
      fail(`node port ${port} was not released when Service ${svcRef(env, name)} was deleted: ${e.message}`);
    throw e;
  }
  await getService(env, name);
}
