// KEP-0007's downgrade story (issue 24): `kplane upgrade-check --target-version` says per feature
// whether stored data depends on a feature the target lacks (Lease spec.strategy under
// CoordinatedLeaderElection, which 1.30 does not have) and exits 1 while it does; a Feature that
// no live component declares any more (the server restarted without it) is kept as Unavailable,
// Available=False, for the retention window, then deleted by the leader.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { StatusError } from '../../src/apimachinery/errors.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { APIServerIdentity, Beta, CoordinatedLeaderElection, newKubeFeatureGate } from '../../src/featuregate/index.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { eventually } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run } from '../support/tools.js';
import { upgradeCheck as upgradeCheckInProcess } from '../../src/cli/upgrade-check.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
type Feature = KubeObject & FeatureObject;
const env = { NODE_OPTIONS: `--conditions=kplane-source ${process.env['NODE_OPTIONS'] ?? ''}` };
const upgradeCheck = (args: readonly string[]) =>
  run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'upgrade-check', ...args], { env, timeoutMs: 60_000 });
const flow = { intervalMs: 200, livenessMs: 3_000, identityRenewIntervalMs: 500, evaluationPeriodSeconds: 1 };

describe('downgrade: upgrade-check and the retention of undeclared features', { timeout: 180_000 }, () => {
  let dataDir: string;
  let s: TestServer | undefined;
  after(async () => {
    await s?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('upgrade-check: unsafe (exit 1) while Leases hold fields 1.30 lacks; safe for 1.31 and once cleared', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kplane-downgrade-'));
    const g = newKubeFeatureGate();
    g.add({ LibGone: { default: true, preRelease: Beta } });
    g.setFromMap({ [APIServerIdentity]: true, [CoordinatedLeaderElection]: true });
    s = await startTestServer({ dataDir, featureGates: g, reportFeatures: true, featureFlow: flow });
    const c = s.cp.loopbackClient();
    for (const name of ['a', 'b'])
      await c.create(LEASES, 'default', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: 'default' },
        spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion', preferredHolder: 'p' },
      });
    const unsafe = await upgradeCheck(['--kubeconfig', s.kubeconfig, '--target-version', '1.30']);
    assert.equal(unsafe.code, 1, `${unsafe.stdout}\n${unsafe.stderr}`);
    assert.match(unsafe.stdout, /^FEATURE\s+AT 1\.30\s+STORED DATA\s+DOWNGRADE$/m);
    assert.match(
      unsafe.stdout,
      /^CoordinatedLeaderElection\s+unavailable\s+2 leases\.coordination\.k8s\.io with spec\.strategy,spec\.preferredHolder\s+unsafe$/m,
    );
    assert.match(unsafe.stdout, /^WatchList\s+Alpha \(default off\)\s+none\s+safe$/m);
    assert.match(unsafe.stdout, /1 feature\(s\) still have stored data that kplane 1\.30 does not know: not safe to downgrade/);
    const at131 = await upgradeCheck(['--kubeconfig', s.kubeconfig, '--target-version', '1.31']);
    assert.equal(at131.code, 0, at131.stdout);
    assert.match(
      at131.stdout,
      /^CoordinatedLeaderElection\s+Alpha \(default off\)\s+2 leases\.coordination\.k8s\.io with spec\.strategy,spec\.preferredHolder\s+safe$/m,
    );
    for (const name of ['a', 'b']) {
      const l = await c.get(LEASES, 'default', name);
      await c.update(LEASES, 'default', { ...l, spec: { holderIdentity: 'h' } });
    }
    const cleared = await upgradeCheck(['--kubeconfig', s.kubeconfig, '--target-version', '1.30']);
    assert.equal(cleared.code, 0, cleared.stdout);
    assert.match(cleared.stdout, /Safe to downgrade to 1\.30/);
    const badFlag = await upgradeCheck(['--kubeconfig', s.kubeconfig, '--target-version', 'one']);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /invalid argument "one" for "--target-version" flag/);
    const newer = await upgradeCheck(['--kubeconfig', s.kubeconfig, '--target-version', '1.40']);
    assert.equal(newer.code, 2);
  });

  it('a Feature nobody declares after a restart: Unavailable for the retention window, then deleted', async () => {
    const c0 = s!.cp.loopbackClient();
    await eventually(30_000, 'LibGone announced', async () => (await c0.get<Feature>(FEATURES, 'kube-system', 'LibGone')).status?.state === 'On' || undefined);
    await s!.stop();
    const g = newKubeFeatureGate();
    g.setFromMap({ [APIServerIdentity]: true, [CoordinatedLeaderElection]: true });
    s = await startTestServer({ dataDir, featureGates: g, reportFeatures: true, featureFlow: { ...flow, unavailableRetentionMs: 6_000 } });
    const c = s.cp.loopbackClient();
    const kept = await eventually(
      30_000,
      'LibGone Unavailable',
      async () => {
        const f = await c.get<Feature>(FEATURES, 'kube-system', 'LibGone');
        return f.status?.conditions?.find((x) => x.type === 'Available')?.status === 'False' ? f : undefined;
      },
      100,
    );
    assert.equal(kept.status?.stability, 'Unavailable');
    assert.match(
      kept.status?.conditions?.find((x) => x.type === 'Available')?.message ?? '',
      /no live component declares this feature; it is deleted 6s after/,
    );
    await eventually(
      30_000,
      'LibGone deleted',
      async () => {
        try {
          await c.get<Feature>(FEATURES, 'kube-system', 'LibGone');
          return undefined;
        } catch (e) {
          return e instanceof StatusError && e.code === 404 ? true : undefined;
        }
      },
      200,
    );
    // kplane's own features stay.
    assert.equal((await c.get<Feature>(FEATURES, 'kube-system', CoordinatedLeaderElection)).status?.stability, 'Beta');
  });

  it("upgrade-check --data-dir: reads a stopped server's database offline; refuses while one runs", async () => {
    // In process (the CLI's own function): the flags and exit codes are those of `kplane upgrade-check`.
    const check = async (args: readonly string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await upgradeCheckInProcess(
        [...args],
        (t) => (stdout += t),
        (t) => (stderr += t),
      );
      return { code, stdout, stderr };
    };
    await s!.cp.loopbackClient().create(LEASES, 'kube-system', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'offline', namespace: 'kube-system' },
      spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion' },
    });
    const running = await check(['--data-dir', dataDir, '--target-version', '1.30']);
    assert.equal(running.code, 2);
    assert.match(running.stderr, /is in use by a running kplane server; stop it first \(or check it through the API with --kubeconfig\)/);
    await s!.stop();
    s = undefined;
    const unsafe = await check(['--data-dir', dataDir, '--target-version', '1.30']);
    assert.equal(unsafe.code, 1, `${unsafe.stdout}\n${unsafe.stderr}`);
    assert.match(
      unsafe.stdout,
      /^CoordinatedLeaderElection\s+unavailable\s+1 leases\.coordination\.k8s\.io with spec\.strategy,spec\.preferredHolder\s+unsafe$/m,
    );
    const at131 = await check(['--data-dir', dataDir, '--target-version', '1.31']);
    assert.equal(at131.code, 0, at131.stdout);
    const both = await check(['--data-dir', dataDir, '--kubeconfig', join(dataDir, 'admin.kubeconfig'), '--target-version', '1.30']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /takes one of --kubeconfig and --data-dir, not both/);
    const empty = await check(['--data-dir', join(dataDir, 'pki'), '--target-version', '1.30']);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /no kplane database at .*pki\/kplane\.db/);
  });
});
