// Gated fields as a user meets them (issue 24): Lease spec.strategy and spec.preferredHolder exist
// only while CoordinatedLeaderElection is on. Two control planes in one process with the gate on
// and off answer differently (the gate is per instance); with it off a create drops the fields and
// `kubectl explain` does not show them; a restart with the gate off keeps the fields a stored Lease
// already has (ratcheting) but still drops one it did not have.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoordinatedLeaderElection } from '../../src/featuregate/index.js';
import { KUBECTLS, kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { quietFeatureGates, startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const gates = (on: boolean) => {
  const g = quietFeatureGates();
  g.setFromMap({ [CoordinatedLeaderElection]: on });
  return g;
};

const lease = (name: string, spec: Record<string, string>): string =>
  `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n` +
  Object.entries(spec)
    .map(([k, v]) => `  ${k}: ${v}\n`)
    .join('');

for (const kubectl of KUBECTLS) {
  describe(`kubectl ${kubectl.name}: Lease fields gated by CoordinatedLeaderElection`, { concurrency: false, timeout: 120_000 }, () => {
    let dir = '';
    let on: TestServer | undefined;
    let off: TestServer | undefined;
    let kOn: KubectlSession;
    let kOff: KubectlSession;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), `kplane-gated-${kubectl.name}-`));
      [on, off] = await Promise.all([
        startTestServer({ dataDir: join(dir, 'on'), featureGates: gates(true) }),
        startTestServer({ dataDir: join(dir, 'off'), featureGates: gates(false) }),
      ]);
      kOn = kubectlSession(kubectl.bin, on.kubeconfig, join(dir, 'on'));
      kOff = kubectlSession(kubectl.bin, off.kubeconfig, join(dir, 'off'));
    });
    after(async () => {
      await Promise.all([on?.stop(), off?.stop()]);
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    // kubectl 1.20 validates on the client against /openapi/v2, which leaves the fields out while
    // the gate is off: it refuses them there (kubectl 1.33 leaves validation to the server, which
    // accepts and drops them). --validate=false sends them anyway.
    const noClientValidation = kubectl.name === '1.20' ? ['--validate=false'] : [];
    const get = (k: KubectlSession, name: string) =>
      k.ok(['-n', 'default', 'get', 'lease', name, '-o', 'jsonpath={.spec.holderIdentity}|{.spec.strategy}|{.spec.preferredHolder}']);

    it('create keeps the fields with the gate on and drops them with it off', async () => {
      const text = lease('l1', { holderIdentity: 'a', strategy: 'OldestEmulationVersion', preferredHolder: 'b' });
      await kOn.ok(['create', '-f', await kOn.file('l1.yaml', text)]);
      if (kubectl.name === '1.20') {
        const refused = await kOff.k(['create', '-f', await kOff.file('l1.yaml', text)]);
        assert.match(refused.stderr, /unknown field "strategy" in io\.k8s\.api\.coordination\.v1\.LeaseSpec/);
      }
      await kOff.ok(['create', ...noClientValidation, '-f', await kOff.file('l1.yaml', text)]);
      assert.equal(await get(kOn, 'l1'), 'a|OldestEmulationVersion|b');
      assert.equal(await get(kOff, 'l1'), 'a||');
    });

    it('validates the fields as upstream while the gate is on; with it off they are dropped before validation', async () => {
      const bad = lease('bad', { holderIdentity: 'a', strategy: 'Youngest', preferredHolder: 'b' });
      const r = await kOn.k(['create', '-f', await kOn.file('bad.yaml', bad)]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Lease "bad" is invalid: spec\.strategy\.strategy: Unsupported value: "Youngest": supported values: "OldestEmulationVersion"/);
      const noStrategy = await kOn.k(['create', '-f', await kOn.file('ph.yaml', lease('ph', { preferredHolder: 'b' }))]);
      assert.match(noStrategy.stderr, /spec\.preferredHolder: Forbidden: may only be specified if `strategy` is defined/);
      await kOff.ok(['create', ...noClientValidation, '-f', await kOff.file('bad.yaml', bad)]);
      assert.equal(await get(kOff, 'bad'), 'a||');
    });

    it('kubectl explain lease.spec shows the fields only with the gate on', async () => {
      const withField = await kOn.ok(['explain', 'lease.spec']);
      const without = await kOff.ok(['explain', 'lease.spec']);
      for (const f of ['strategy', 'preferredHolder']) {
        const re = new RegExp(`^\\s+${f}\\s+<string>`, 'm');
        assert.match(withField, re);
        assert.doesNotMatch(without, re);
      }
      assert.match(without, /^\s+holderIdentity\s+<string>/m);
    });

    it('ratcheting: restarted with the gate off, an update keeps the fields the stored Lease has and drops new ones', async () => {
      await kOn.ok(['create', '-f', await kOn.file('r.yaml', lease('r', { holderIdentity: 'a', strategy: 'OldestEmulationVersion' }))]);
      await on!.stop();
      on = await startTestServer({ dataDir: join(dir, 'on'), featureGates: gates(false) });
      const k = kubectlSession(kubectl.bin, on.kubeconfig, join(dir, 'on'));
      // An update of the whole object (replace): strategy was stored, preferredHolder was not.
      const text = lease('r', { holderIdentity: 'c', strategy: 'OldestEmulationVersion', preferredHolder: 'd' });
      await k.ok(['replace', ...noClientValidation, '-f', await k.file('r2.yaml', text)]);
      assert.equal(await get(k, 'r'), 'c|OldestEmulationVersion|');
      // A patch that leaves the stored field alone keeps it too.
      await k.ok(['-n', 'default', 'patch', 'lease', 'r', '--type=merge', '-p', '{"spec":{"holderIdentity":"e"}}']);
      assert.equal(await get(k, 'r'), 'e|OldestEmulationVersion|');
      // And the Lease created while the gate was on keeps both.
      await k.ok(['-n', 'default', 'patch', 'lease', 'l1', '--type=merge', '-p', '{"spec":{"holderIdentity":"z"}}']);
      assert.equal(await get(k, 'l1'), 'z|OldestEmulationVersion|b');
    });
  });
}
