// The CCM test kit's whole catalogue, data plane included, against kplane + the cloud controllers
// + the loopback cloud + node-sim (3 nodes, each with its node proxy), through the built-in
// `loopback` driver (issue 26), pod-client halves included (node-sim's netexec /dial). Upgrades
// restart the cloud controllers with other flags; the control-plane upgrade (a kplane restart) is
// left to `kplane ccm-test env`. Then the mutation table's rows that need packets: a provider that
// drops session affinity and one that ignores ETP Local health checks, each failing exactly its
// tests. Addresses: 127.2.232.x nodes, 127.3.232+ pods, 127.4.232.x ingresses, 127.1.232.0/21
// cluster IPs, clear of the other tests' ranges.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { catalogue } from '../../src/ccm-testing/catalogue/index.js';
import { builtinDrivers } from '../../src/ccm-testing/drivers/index.js';
import type { CcmTestDriver } from '../../src/ccm-testing/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import { LoopbackCloud, serveCloudAdmin } from '../../src/controllers/cloud/loopback/index.js';
import { defaultControllers } from '../../src/controllers/index.js';
import { NodeSim } from '../../src/controllers/nodesim/index.js';
import { ProxyHost, startNodeProxy } from '../../src/controllers/proxy/index.js';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { type CcmUnderTest, failures, runCatalogue, startCcm, withOutcome } from '../support/ccm-env.js';
import { providerDefects, SwitchableProvider } from '../support/ccm-variants.js';
import { startTestServer, type TestServer } from '../support/server.js';

const byId = (...ids: string[]) => ids.map((id) => catalogue.find((t) => t.id === id) ?? assert.fail(`no test ${id} in the catalogue`));
const MUTATION_TIMEOUTS = { lbPropagationMs: 8000 };

let server: TestServer;
let client: KubeClient;
let lbCloud: LoopbackCloud;
let admin: { url: string; close(): Promise<void> };
let ccm: CcmUnderTest;
let proxies: ProxyHost;
let sim: NodeSim;
let driver: CcmTestDriver;

before(async () => {
  server = await startTestServer({
    storage: 'memory',
    apis: [...defaultModules(), cloud({ serviceClusterIPRange: '127.1.232.0/21' })],
    controllers: defaultControllers(),
  });
  client = createHttpsClient(server.kubeconfig);
  const inProcess = server.cp.loopbackClient();
  // VIP here so that lb/etp-local-from-pods runs too (the default, Proxy, skips it as upstream does).
  lbCloud = new LoopbackCloud({ ingressCIDR: '127.4.232.0/24', ingressIPMode: 'VIP', healthCheck: { intervalMs: 300, timeoutMs: 500 } });
  admin = await serveCloudAdmin(lbCloud);
  ccm = await startCcm(inProcess, new SwitchableProvider(lbCloud));
  proxies = new ProxyHost({ client: inProcess });
  let owner: string | undefined;
  sim = new NodeSim({
    client: inProcess,
    nodes: 3,
    namePrefix: 'ccm-',
    nodeCIDR: '127.2.232.0/24',
    podCIDR: '127.3.232.0/22',
    cloudProviderExternal: true,
    heartbeatIntervalMs: 1000,
    onNodeReady: (n) => startNodeProxy({ client: inProcess, host: proxies, nodeName: n.name, nodeIP: n.ip, clusterIPs: (owner ??= n.name) === n.name }),
  });
  await sim.start();
  const base = await builtinDrivers.loopback!({ client, config: { adminURL: admin.url, externalIP: '127.5.232.250', ingressIPMode: 'VIP' } });
  // "Upgrade" on the local environment: the cloud controllers restart with other flags; the
  // loopback cloud is this process's, so its load balancers outlive them.
  driver = {
    ...base,
    capabilities: new Set([...base.capabilities, 'upgrade', 'lb.survivesCcmRestart']),
    upgrade: { upgradeCcm: () => ccm.restart({ concurrentServiceSyncs: 4 }), downgradeCcm: () => ccm.restart({ concurrentServiceSyncs: 1 }) },
  };
});

after(async () => {
  await sim?.stop();
  await proxies?.stop();
  await ccm?.stop();
  await admin?.close();
  await lbCloud?.close();
  await client?.close();
  await server?.stop();
});

describe('CCM test kit, loopback driver', { concurrency: false }, () => {
  it('the whole catalogue passes, data plane included; what the loopback cloud cannot do is skipped', async () => {
    const tests = catalogue.filter((t) => t.id !== 'upgrade/control-plane');
    const results = await runCatalogue(client, driver, tests, { concurrency: 6 });
    assert.deepEqual(withOutcome(results, 'failed'), [], failures(results));
    assert.deepEqual(withOutcome(results, 'skipped'), ['lb/without-nodeports:controlPlane', 'lb/without-nodeports:dataPlane']);
  });

  describe('the mutation table (loopback cloud)', { concurrency: false }, () => {
    it('a provider that drops session affinity fails the Local affinity test', async () => {
      ccm.provider.defect = providerDefects(lbCloud).dropsSessionAffinity;
      try {
        const results = await runCatalogue(client, driver, byId('lb/affinity-local', 'lb/finalizer'), { timeouts: MUTATION_TIMEOUTS });
        assert.deepEqual(withOutcome(results, 'failed'), ['lb/affinity-local:dataPlane'], failures(results));
        assert.match(
          results.find((r) => r.outcome === 'failed')!.message ?? '',
          /load balancer of ccm-\S+\/affinity-lb-local \(ETP Local\): requests from one client to 127\.4\.232\.\d+:80 are not kept on one backend \(session affinity ClientIP\)/,
        );
      } finally {
        ccm.provider.defect = undefined;
      }
    });

    it('a provider that ignores ETP Local health checks fails the "only nodes with endpoints" test', async () => {
      ccm.provider.defect = providerDefects(lbCloud).ignoresEtpLocalHealthChecks;
      try {
        const results = await runCatalogue(
          client,
          driver,
          byId('lb/etp-local-only-endpoint-nodes', 'lb/etp-local-all-endpoint-nodes', 'lb/affinity-local', 'lb/etp-local-from-pods'),
          { timeouts: MUTATION_TIMEOUTS },
        );
        assert.deepEqual(withOutcome(results, 'failed'), ['lb/etp-local-only-endpoint-nodes:dataPlane'], failures(results));
        assert.match(
          results.find((r) => r.outcome === 'failed')!.message ?? '',
          /load balancer for ccm-\S+\/etp-local-only still sends to nodes without endpoints \(ccm-\d\) [\d.]+s after the pods became ready: its health checks ignore externalTrafficPolicy Local/,
        );
      } finally {
        ccm.provider.defect = undefined;
      }
    });
  });
});
