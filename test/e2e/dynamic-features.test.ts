// KEP-0007's dynamic features (issue 24): with `--dynamic-features=APIResponseCompression`, a
// cluster admin sets the Feature's `spec.desired` with kubectl (1.33 and 1.20) and the server's
// gate turns without a restart: large answers stop (and start) being gzipped, the server's use
// reports the new value, and the flow goes TurningOff/TurningOn → Off/On, Settled. `spec.desired`
// on a feature that is not dynamic, or not listed, is a 422 with its field path; a user with the
// `admin` role (no `update` on features) gets a 403; an unknown value a 422; a bad flag exits 2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { APIResponseCompression, APIServerIdentity, Beta, newKubeFeatureGate } from '../../src/featuregate/index.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession, writeTokenKubeconfig } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, tools } from '../support/tools.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
const CMS = '/api/v1/namespaces/default/configmaps';
type Feature = KubeObject & FeatureObject;

describe('dynamic features: spec.desired turns a feature at runtime', { timeout: 180_000 }, () => {
  let s: TestServer;
  let raw: RawClient;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-dynamic-'));
    const g = newKubeFeatureGate();
    // A library feature marked dynamic but not listed in dynamicFeatures.
    g.add({ ExampleDynamic: { default: false, preRelease: Beta, dynamic: true } });
    g.setFromMap({ [APIServerIdentity]: true });
    s = await startTestServer({
      featureGates: g,
      reportFeatures: true,
      dynamicFeatures: [APIResponseCompression],
      featureFlow: { intervalMs: 200, livenessMs: 5_000, identityRenewIntervalMs: 500, evaluationPeriodSeconds: 1 },
      tokens: new Map([['alice-token', { name: 'alice', groups: [] }]]),
      authorizationModes: ['RBAC'],
    });
    raw = new RawClient(s.url, adminCredentials(s.dataDir));
    // Enough data for a list over 128 KiB, which is gzipped while compression is on.
    const big = 'x'.repeat(60_000);
    for (let i = 0; i < 4; i++) {
      const r = await raw.request({
        method: 'POST',
        path: CMS,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } }),
      });
      assert.equal(r.status, 201, r.text());
    }
  });
  after(async () => {
    raw?.agent.destroy();
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const gzipped = async (): Promise<boolean> =>
    (await raw.request({ path: CMS, headers: { accept: 'application/json', 'accept-encoding': 'gzip' } })).headers['content-encoding'] === 'gzip';
  const settled = (state: 'On' | 'Off', source: string): Promise<Feature> =>
    eventually(
      60_000,
      `${APIResponseCompression} ${state} from ${source}`,
      async () => {
        const f = await s.cp.loopbackClient().get<Feature>(FEATURES, 'kube-system', APIResponseCompression);
        const st = f.status ?? {};
        const use = st.uses?.find((u) => u.component === 'kube-apiserver');
        const isSettled = st.conditions?.find((c) => c.type === 'Settled')?.status === 'True';
        return st.state === state && st.source === source && isSettled && use?.value === (state === 'On' ? 'Enabled' : 'Disabled') ? f : undefined;
      },
      100,
    );

  it('kubectl 1.33 turns it off and 1.20 back on, without a restart', async () => {
    const k133 = kubectlSession(tools.kubectl, s.kubeconfig, dir);
    const k120 = kubectlSession(tools.kubectl120, s.kubeconfig, dir);
    const on = await settled('On', 'Default');
    assert.equal(on.status?.dynamic, true);
    assert.equal(await gzipped(), true);

    await k133.ok(['patch', 'feature', '-n', 'kube-system', APIResponseCompression, '--type=merge', '-p', '{"spec":{"desired":"Disabled"}}']);
    const off = await settled('Off', 'API');
    assert.equal(off.status?.intended, 'Disabled');
    assert.equal(await gzipped(), false);
    // The flow went through TurningOff: its events say so.
    const events = await k133.ok(['get', 'events', '-n', 'kube-system', '--field-selector', `involvedObject.name=${APIResponseCompression}`]);
    assert.match(events, /FeatureTransitionStarted/);
    assert.match(events, /TurningOff: intended Disabled \(API\)/);
    const table = await k133.ok(['get', 'features', '-n', 'kube-system', APIResponseCompression]);
    assert.match(table, new RegExp(`${APIResponseCompression}\\s+Off\\s+Disabled\\s+API\\s+Beta\\s+True`));

    // kubectl 1.20 shows the wide columns, TASK among them (empty once settled).
    const wide = await k120.ok(['get', 'features', '-n', 'kube-system', APIResponseCompression, '-o', 'wide']);
    assert.match(wide, /NAME\s+STATE\s+INTENDED\s+SOURCE\s+STABILITY\s+USES AGREE\s+AGE\s+USES\s+VERSION\s+TASK/);
    await k120.ok(['patch', 'feature', '-n', 'kube-system', APIResponseCompression, '--type=merge', '-p', '{"spec":{"desired":"Enabled"}}']);
    await settled('On', 'API');
    assert.equal(await gzipped(), true);
    // Unset: back to the command line or the default.
    await k120.ok(['patch', 'feature', '-n', 'kube-system', APIResponseCompression, '--type=json', '-p', '[{"op":"remove","path":"/spec/desired"}]']);
    await settled('On', 'Default');
  });

  it('bad input: not dynamic, not listed, unknown value (422); no RBAC (403)', async () => {
    for (const bin of [tools.kubectl, tools.kubectl120]) {
      const k = kubectlSession(bin, s.kubeconfig, dir);
      const patch = (name: string, desired: string) =>
        k.k(['patch', 'feature', '-n', 'kube-system', name, '--type=merge', '-p', JSON.stringify({ spec: { desired } })]);
      const notDynamic = await patch('WatchList', 'Disabled');
      assert.equal(notDynamic.code, 1, notDynamic.stdout);
      assert.match(
        notDynamic.stderr,
        /Feature(.features.kplane.io)? "WatchList" is invalid: spec.desired: Forbidden: feature WatchList is not dynamic: it can only be set with --feature-gates/,
      );
      const notListed = await patch('ExampleDynamic', 'Enabled');
      assert.equal(notListed.code, 1, notListed.stdout);
      assert.match(notListed.stderr, /spec.desired: Forbidden: feature ExampleDynamic is not listed in the API server's --dynamic-features/);
      const unknown = await patch(APIResponseCompression, 'Maybe');
      assert.equal(unknown.code, 1, unknown.stdout);
      assert.match(unknown.stderr, /spec.desired: Unsupported value: "Maybe": supported values: "Enabled", "Disabled"/);
    }
    // alice holds, cluster-wide, the feature rules view and admin aggregate (the test server runs
    // no aggregation controller): she reads features but may not update them.
    const admin = kubectlSession(tools.kubectl, s.kubeconfig, dir);
    await admin.ok(['create', 'clusterrolebinding', 'alice-view', '--clusterrole=system:kplane:aggregate-features-to-view', '--user=alice']);
    await admin.ok(['create', 'clusterrolebinding', 'alice-admin', '--clusterrole=system:kplane:aggregate-features-to-admin', '--user=alice']);
    const alice = kubectlSession(tools.kubectl, await writeTokenKubeconfig(dir, s, 'alice', 'alice-token'), dir);
    await eventually(10_000, 'alice may list features', async () => ((await alice.k(['get', 'features', '-n', 'kube-system'])).code === 0 ? true : undefined));
    const denied = await alice.k(['patch', 'feature', '-n', 'kube-system', APIResponseCompression, '--type=merge', '-p', '{"spec":{"desired":"Disabled"}}']);
    assert.equal(denied.code, 1, denied.stdout);
    assert.match(
      denied.stderr,
      /features.features.kplane.io "APIResponseCompression" is forbidden: User "alice" cannot patch resource "features" in API group "features.kplane.io" in the namespace "kube-system"/,
    );
    const can = await alice.k(['auth', 'can-i', 'update', 'features.features.kplane.io', '-n', 'kube-system']);
    assert.equal(can.stdout.trim(), 'no');
  });

  it('kplane serve refuses --dynamic-features naming a feature that is not dynamic or not known', () => {
    for (const [value, message] of [
      ['WatchList', 'feature gate WatchList is not dynamic'],
      ['Nope', 'unrecognized feature gate: Nope'],
    ] as const) {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', join(dir, 'never'), `--dynamic-features=${value}`],
        {
          cwd: repoRoot,
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, NODE_OPTIONS: `--conditions=kplane-source ${process.env['NODE_OPTIONS'] ?? ''}` },
        },
      );
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`invalid argument "${value}" for "--dynamic-features" flag: ${message}`));
    }
  });
});
