// KEP-0007 (issue 24): `kplane controller-manager --feature-gates` parses the flag as `kplane serve`
// does (upstream's errors, exit 2) and reports its gate's values to the Feature API as component
// kube-controller-manager, so `kubectl describe feature` shows both components, and a controller
// manager whose value differs from the API server's turns UsesAgree False.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { APIServerIdentity, newKubeFeatureGate, WatchList } from '../../src/featuregate/index.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, tools } from '../support/tools.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
type Feature = KubeObject & FeatureObject;
const env = { ...process.env, NODE_OPTIONS: `--conditions=kplane-source ${process.env['NODE_OPTIONS'] ?? ''}` };
const cli = (args: readonly string[]): string[] => ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args];

describe('kplane controller-manager --feature-gates', { timeout: 120_000 }, () => {
  let s: TestServer;
  let cm: ChildProcess | undefined;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-cm-features-'));
    const g = newKubeFeatureGate();
    g.setFromMap({ [APIServerIdentity]: true });
    s = await startTestServer({
      featureGates: g,
      reportFeatures: true,
      featureFlow: { intervalMs: 200, livenessMs: 5_000, identityRenewIntervalMs: 500, evaluationPeriodSeconds: 1 },
    });
  });
  after(async () => {
    if (cm && cm.exitCode === null && cm.signalCode === null) cm.kill('SIGKILL');
    await s?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('bad --feature-gates: the same errors as kplane serve, exit 2', () => {
    for (const [value, message] of [
      ['Nope=true', 'unrecognized feature gate: Nope'],
      ['WatchList', 'missing bool value for WatchList'],
      ['WatchList=maybe', 'invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'],
    ] as const) {
      const r = spawnSync(process.execPath, cli(['controller-manager', '--kubeconfig', s.kubeconfig, `--feature-gates=${value}`]), {
        cwd: repoRoot,
        encoding: 'utf8',
        timeout: 60_000,
        env,
      });
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr, `kplane: invalid argument ${JSON.stringify(value)} for "--feature-gates" flag: ${message}\n`);
    }
  });

  it('reports its uses as kube-controller-manager; a different value turns UsesAgree False', async () => {
    cm = spawn(
      process.execPath,
      cli(['controller-manager', '--kubeconfig', s.kubeconfig, '--leader-elect=false', '--controllers=namespace', `--feature-gates=${WatchList}=false`]),
      { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    cm.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const c = s.cp.loopbackClient();
    const f = await eventually(
      60_000,
      'both components report WatchList, and they disagree',
      async () => {
        const o = await c.get<Feature>(FEATURES, 'kube-system', WatchList);
        const uses = o.status?.uses ?? [];
        const byComponent = new Map(uses.map((u) => [u.component, u.value]));
        const agree = o.status?.conditions?.find((x) => x.type === 'UsesAgree');
        return byComponent.get('kube-apiserver') === 'Enabled' && byComponent.get('kube-controller-manager') === 'Disabled' && agree?.status === 'False'
          ? o
          : undefined;
      },
      200,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\ncontroller-manager stderr: ${err}`);
    });
    assert.equal(f.status?.intended, 'Enabled');
    // A feature where both agree: UsesAgree stays True with both uses.
    const agreeing = await eventually(30_000, 'both components report APIResponseCompression', async () => {
      const o = await c.get<Feature>(FEATURES, 'kube-system', 'APIResponseCompression');
      return (o.status?.uses ?? []).length === 2 ? o : undefined;
    });
    assert.equal(agreeing.status?.conditions?.find((x) => x.type === 'UsesAgree')?.status, 'True');
    for (const bin of [tools.kubectl, tools.kubectl120]) {
      const k = kubectlSession(bin, s.kubeconfig, dir);
      const described = await k.ok(['describe', 'feature', '-n', 'kube-system', WatchList]);
      assert.match(described, /Component:\s+kube-apiserver/);
      assert.match(described, /Component:\s+kube-controller-manager/);
      assert.match(described, /uses disagree: 1 Enabled, 1 Disabled/);
      const table = await k.ok(['get', 'features', '-n', 'kube-system', WatchList]);
      assert.match(table, new RegExp(`${WatchList}\\s+On\\s+Enabled\\s+\\S+\\s+Beta\\s+False`));
    }
    const exited = new Promise((ok) => cm!.once('exit', ok));
    cm.kill('SIGTERM');
    await exited;
  });
});
