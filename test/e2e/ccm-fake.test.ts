// The CCM test kit's catalogue against kplane + the cloud controllers + the `fake` provider, driven
// through the fake's admin HTTP endpoint by the built-in `fake` driver (issue 26): every
// control-plane half passes, the data-plane halves and the upgrade tests are skipped with the
// missing capability. Then the mutation table's defects a fake cloud can show: a provider that
// never deletes load balancers, one that ignores node-set changes, one that does not delete Nodes
// of deleted instances, and a CCM that leaves the finalizer; each fails exactly its tests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { catalogue } from '../../src/ccm-testing/catalogue/index.js';
import { builtinDrivers } from '../../src/ccm-testing/drivers/index.js';
import type { CcmTestDriver } from '../../src/ccm-testing/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import { FakeCloud } from '../../src/controllers/cloud/fake.js';
import { defaultControllers } from '../../src/controllers/index.js';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { type CcmUnderTest, failures, runCatalogue, startCcm, withOutcome } from '../support/ccm-env.js';
import { providerDefects, SwitchableProvider } from '../support/ccm-variants.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NODES = { group: '', version: 'v1', resource: 'nodes' };
const byId = (...ids: string[]) => ids.map((id) => catalogue.find((t) => t.id === id) ?? assert.fail(`no test ${id} in the catalogue`));
/** Short waits where a defect makes a test wait for something that never comes. */
const MUTATION_TIMEOUTS = { lbLagMs: 4000, nodeDeletionMs: 4000 };

let server: TestServer;
let client: KubeClient;
let fake: FakeCloud;
let ccm: CcmUnderTest;
let driver: CcmTestDriver;

async function addNode(name: string, ip: string): Promise<void> {
  const n = await client.create<KubeObject>(NODES, undefined, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.updateStatus(NODES, undefined, {
    ...n,
    status: {
      addresses: [{ type: 'InternalIP', address: ip }],
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now }],
    },
  });
}

before(async () => {
  server = await startTestServer({
    storage: 'memory',
    apis: [...defaultModules(), cloud({ serviceClusterIPRange: '127.1.224.0/20' })],
    controllers: defaultControllers(),
  });
  client = createHttpsClient(server.kubeconfig);
  fake = new FakeCloud({ ingressPrefix: '127.0.224' });
  const adminAddress = await fake.startAdmin('127.0.0.1:0');
  for (let i = 0; i < 5; i++) await addNode(`fake-${i}`, `127.2.224.${i + 1}`);
  ccm = await startCcm(server.cp.loopbackClient(), new SwitchableProvider(fake));
  driver = await builtinDrivers.fake!({
    client,
    config: { adminURL: `http://${adminAddress}`, timeouts: { lbCreateMs: 15_000, lbLagMs: 15_000, nodeDeletionMs: 15_000 } },
  });
});

after(async () => {
  await ccm?.stop();
  await fake?.close();
  await client?.close();
  await server?.stop();
});

describe('CCM test kit, fake driver', { concurrency: false }, () => {
  it('every control-plane half passes; data-plane halves and upgrades are skipped with the missing capability', async () => {
    const results = await runCatalogue(client, driver, catalogue, { concurrency: 8 });
    assert.deepEqual(withOutcome(results, 'failed'), [], failures(results));
    const skipped = results.filter((r) => r.outcome === 'skipped');
    for (const r of skipped) {
      if (r.id.startsWith('upgrade/') || r.id.startsWith('downgrade/')) assert.match(r.message ?? '', /missing capability upgrade/, r.id);
      else assert.equal(r.half, 'dataPlane', `${r.id}: ${r.message}`);
    }
    const passed = withOutcome(results, 'passed');
    const wantPassed = catalogue
      .filter((t) => t.controlPlane && !t.needs.capabilities.includes('upgrade'))
      .map((t) => `${t.id}:controlPlane`)
      .sort();
    assert.deepEqual(passed, wantPassed);
  });

  describe('the mutation table (fake provider)', { concurrency: false }, () => {
    const defects = () => providerDefects(fake);

    it('a provider that never deletes load balancers fails the tests that take one away', async () => {
      ccm.provider.defect = defects().neverDeletesLoadBalancers;
      try {
        const results = await runCatalogue(
          client,
          driver,
          byId('lb/type-and-ports-tcp', 'lb/type-and-ports-udp', 'lb/finalizer', 'lb/affinity-cluster', 'svc/delete-collection'),
          {
            timeouts: MUTATION_TIMEOUTS,
          },
        );
        assert.deepEqual(
          withOutcome(results, 'failed'),
          ['lb/finalizer:controlPlane', 'lb/type-and-ports-tcp:controlPlane', 'lb/type-and-ports-udp:controlPlane'],
          failures(results),
        );
        for (const r of results.filter((x) => x.outcome === 'failed')) {
          assert.match(r.message ?? '', /^load balancer for ccm-\S+\/\S+ still exists in the cloud [\d.]+s after the Service became type ClusterIP$/, r.id);
        }
      } finally {
        ccm.provider.defect = undefined;
      }
    });

    it('a CCM that leaves the finalizer fails the finalizer test only', async () => {
      await ccm.restart({ leavesFinalizer: true });
      try {
        const results = await runCatalogue(client, driver, byId('lb/finalizer', 'lb/type-and-ports-tcp'), { timeouts: MUTATION_TIMEOUTS });
        assert.deepEqual(withOutcome(results, 'failed'), ['lb/finalizer:controlPlane'], failures(results));
        assert.match(
          results.find((r) => r.outcome === 'failed')!.message ?? '',
          /Service ccm-\S+\/lb-finalizer still carries the service.kubernetes.io\/load-balancer-cleanup finalizer [\d.]+s after it stopped being a LoadBalancer/,
        );
      } finally {
        await ccm.restart();
      }
    });

    it('a provider that ignores node-set changes fails the node deletion test, naming the stale load balancer', async () => {
      ccm.provider.defect = defects().ignoresNodeSetChanges;
      try {
        const results = await runCatalogue(client, driver, byId('nodes/deleted-when-instance-gone', 'lb/finalizer'), { timeouts: MUTATION_TIMEOUTS });
        assert.deepEqual(withOutcome(results, 'failed'), ['nodes/deleted-when-instance-gone:controlPlane'], failures(results));
        assert.match(
          results.find((r) => r.outcome === 'failed')!.message ?? '',
          /load balancer for ccm-\S+\/node-set still sends to node fake-\d [\d.]+s after the Node was deleted: the CCM did not update the load balancer's node set/,
        );
      } finally {
        ccm.provider.defect = undefined;
      }
    });

    it('a provider that does not delete nodes of deleted instances fails the node deletion test only', async () => {
      ccm.provider.defect = defects().doesNotDeleteNodes;
      try {
        const results = await runCatalogue(client, driver, byId('nodes/shutdown-taint', 'nodes/deleted-when-instance-gone'), { timeouts: MUTATION_TIMEOUTS });
        assert.deepEqual(withOutcome(results, 'failed'), ['nodes/deleted-when-instance-gone:controlPlane'], failures(results));
        assert.match(
          results.find((r) => r.outcome === 'failed')!.message ?? '',
          /^node fake-\d still exists on the API server [\d.]+s after its instance was deleted from the cloud$/,
        );
      } finally {
        ccm.provider.defect = undefined;
      }
    });
  });
});
