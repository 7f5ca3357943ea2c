// KEP-0007's server flow as an operator meets it (issue 24): kplane restarted with a feature off
// that stored data while on goes TurningOff, clears the data (ClearField), waits for the uses and
// ends Off, all visible in `kubectl get features -A` and `kubectl describe feature`; two API
// servers on one etcd with disagreeing gates show UsesAgree=False and clear nothing while one
// still uses the feature; the leader, a process of its own, killed with SIGKILL mid-ClearField while
// a writer keeps writing the Leases: the other server takes over once the dead one's identity Lease
// is stale and resumes from the stored progress, no write is lost and no Lease keeps the field.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { StatusError } from '../../src/apimachinery/errors.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import type { KubeClient } from '../../src/client/types.js';
import { identityLeaseName } from '../../src/controllers/apiserveridentity.js';
import type { CustomTask } from '../../src/controllers/featureflow/index.js';
import { APIServerIdentity, Beta, CoordinatedLeaderElection, newKubeFeatureGate } from '../../src/featuregate/index.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, tools } from '../support/tools.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const CLE = CoordinatedLeaderElection;

const gates = (cle: boolean) => {
  const g = newKubeFeatureGate();
  g.setFromMap({ [APIServerIdentity]: true, [CLE]: cle });
  return g;
};
// Fast timings for tests: a round every 200 ms, a server dead 5 s after its last renewal.
const flowSettings = (pageSize = 100) => ({ intervalMs: 200, livenessMs: 5_000, identityRenewIntervalMs: 500, evaluationPeriodSeconds: 1, pageSize });

const serve = (cle: boolean, storage: Parameters<typeof startTestServer>[0], pageSize?: number): Promise<TestServer> =>
  startTestServer({ featureGates: gates(cle), reportFeatures: true, featureFlow: flowSettings(pageSize), ...storage });

/** A Lease written by three field managers, the gated fields shared between two of them. */
async function leaseOfThreeManagers(c: KubeClient, name: string): Promise<void> {
  await c.create(
    LEASES,
    'default',
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'default' },
      spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion' },
    },
    { fieldManager: 'creator' },
  );
  await c.patch(LEASES, 'default', name, 'merge', { spec: { preferredHolder: 'p' } }, { fieldManager: 'editor' });
  await c.patch(
    LEASES,
    'default',
    name,
    'apply',
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { strategy: 'OldestEmulationVersion', leaseDurationSeconds: 10 } },
    { fieldManager: 'applier' },
  );
}
/** What of a Lease an update may change: spec and managedFields (times apart). */
const clearedView = (l: KubeObject): { spec: unknown; managedFields: { manager?: string }[] | undefined; times: Record<string, string | undefined> } => ({
  spec: l['spec'],
  managedFields: l.metadata?.managedFields?.map(({ time: _t, ...e }) => e),
  times: Object.fromEntries((l.metadata?.managedFields ?? []).map((e) => [e.manager ?? '', e.time])),
});

type Feature = KubeObject & FeatureObject;
/** apiserver_request_total summed over codes and scopes for one verb and resource. */
const requestCount = (metrics: string, verb: string, resource: string): number =>
  metrics
    .split('\n')
    .filter((l) => l.startsWith('apiserver_request_total{') && l.includes(`verb="${verb}"`) && l.includes(`resource="${resource}"`))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
const feature = (c: KubeClient, name = CLE): Promise<Feature> => c.get<Feature>(FEATURES, 'kube-system', name);
const waitState = (c: KubeClient, state: string, ms = 60_000): Promise<Feature> =>
  eventually(
    ms,
    `${CLE} ${state}`,
    async () => {
      const f = await feature(c);
      return f.status?.state === state ? f : undefined;
    },
    100,
  );

const leaseBody = (name: string, holder = 'h'): KubeObject => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: 'default' },
  spec: { holderIdentity: holder, strategy: 'OldestEmulationVersion', preferredHolder: 'p' },
});

async function createLeases(c: KubeClient, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => c.create(LEASES, 'default', leaseBody(`${prefix}-${i + j}`))));
  }
}

async function leasesWithField(c: KubeClient): Promise<string[]> {
  const out: string[] = [];
  let cont: string | undefined;
  do {
    const page = await c.list(LEASES, 'default', { limit: 500, ...(cont ? { continue: cont } : {}) });
    for (const l of page.items) {
      const spec = l['spec'] as Record<string, unknown>;
      if ('strategy' in spec || 'preferredHolder' in spec) out.push(l.metadata!.name!);
    }
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return out;
}

const hashOf = (port: number): string =>
  createHash('sha256')
    .update(identityLeaseName(`${hostname()}:${port}`))
    .digest('hex');
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}
/** Children forked by forkFlowServer: killed by the suite's after() (a failed test must not leave one holding the run open). */
const forked = new Set<ChildProcess>();

/** test/support/flow-server.fixture.ts in a child process, once it serves. */
async function forkFlowServer(cfg: object): Promise<{ child: ChildProcess; exited: Promise<void> }> {
  const child = fork(join(repoRoot, 'test/support/flow-server.fixture.ts'), [JSON.stringify(cfg)], {
    execArgv: ['--import', 'tsx', '--conditions=kplane-source'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  forked.add(child);
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  void exited.then(() => forked.delete(child));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('{"url"')) resolve();
    });
    child.once('exit', (code, sig) => reject(new Error(`flow server exited (${code ?? sig}) before serving: ${stderr}`)));
  });
  return { child, exited };
}

/** Two free ports, the first the one whose identity Lease leads (lowest hash). */
async function portsLeaderFirst(): Promise<[number, number]> {
  const a = await freePort();
  let b = await freePort();
  while (b === a) b = await freePort();
  return hashOf(a) < hashOf(b) ? [a, b] : [b, a];
}

describe('feature transitions: restart with CoordinatedLeaderElection off (SQLite)', { timeout: 180_000, concurrency: false }, () => {
  let dir = '';
  let server: TestServer | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-transitions-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('TurningOff clears the Lease fields, waits for the uses, ends Off; kubectl shows it', async () => {
    server = await serve(true, { dataDir: join(dir, 'data') });
    let c = server.cp.loopbackClient();
    const on = await waitState(c, 'On');
    assert.equal(on.status?.intended, 'Enabled');
    await createLeases(c, 30, 'app');
    await c.create(LEASES, 'default', leaseBody('guarded'));
    // The same Lease twice: one cleared by an update through the API (what the field manager
    // makes of it is the reference), one left for the flow, which writes in process.
    await leaseOfThreeManagers(c, 'mf-api');
    await leaseOfThreeManagers(c, 'mf-flow');
    const byApi = await c.get(LEASES, 'default', 'mf-api');
    const spec = byApi['spec'] as Record<string, unknown>;
    delete spec['strategy'];
    delete spec['preferredHolder'];
    const expected = clearedView(await c.update(LEASES, 'default', byApi));
    const flowBefore = clearedView(await c.get(LEASES, 'default', 'mf-flow'));
    assert.equal((await leasesWithField(c)).length, 32);
    await server.stop();

    // Admission runs on the flow's writes: a plugin refuses to let the flow clear one Lease, and
    // the refusal is the task's failure until the plugin lets it through.
    let guard = true;
    const guardPlugin = {
      name: 'TestGuard',
      validate(a: { operation: string; name: string; resource: { resource: string } }) {
        if (guard && a.operation === 'UPDATE' && a.resource.resource === 'leases' && a.name === 'guarded') {
          throw new StatusError({ code: 403, reason: 'Forbidden', message: 'leases "guarded" is guarded by the test' });
        }
      },
    };
    server = await startTestServer({
      dataDir: join(dir, 'data'),
      featureGates: gates(false),
      reportFeatures: true,
      featureFlow: flowSettings(),
      admission: [guardPlugin],
    });
    c = server.cp.loopbackClient();
    const failed = await eventually(
      30_000,
      'the ClearField failed on the guarded Lease',
      async () => {
        const t = (await feature(c)).status?.transition?.tasks?.[0];
        return t?.phase === 'Failed' ? t : undefined;
      },
      50,
    );
    assert.match(failed.message ?? '', /leases "guarded" is guarded by the test/);
    guard = false;
    const turning = await eventually(
      30_000,
      'TurningOff or Off',
      async () => {
        const f = await feature(c);
        return f.status?.intended === 'Disabled' && f.status.state !== 'On' ? f : undefined;
      },
      50,
    );
    assert.equal(turning.status?.source, 'CommandLine');
    const off = await waitState(c, 'Off');
    assert.equal(off.status?.transition, undefined);
    assert.deepEqual(await leasesWithField(c), []);
    // Cleared as an update through the API clears: the fields leave every manager's set, the
    // manager that owned only them is gone, no time moved.
    const byFlow = clearedView(await c.get(LEASES, 'default', 'mf-flow'));
    assert.deepEqual({ spec: byFlow.spec, managedFields: byFlow.managedFields }, { spec: expected.spec, managedFields: expected.managedFields });
    assert.deepEqual(
      byFlow.managedFields?.map((e) => e.manager),
      ['applier', 'creator'],
    );
    assert.deepEqual(byFlow.times, { applier: flowBefore.times['applier'], creator: flowBefore.times['creator'] });
    // Only the live server's use is left: the old one's identity Lease went stale.
    assert.deepEqual(
      off.status?.uses?.map((u) => u.value),
      ['Disabled'],
    );
    const conds = Object.fromEntries((off.status?.conditions ?? []).map((x) => [x.type, x.status]));
    assert.deepEqual(conds, { UsesAgree: 'True', Progressing: 'False', Settled: 'True', TasksBlocked: 'False' });

    // Settled, the leader writes nothing more, and reads nothing more either: its informers
    // watch Features and identity Leases, so no LIST is made while nothing changes (the old loop
    // listed both every interval, 200 ms here). The identity Lease is renewed every 500 ms
    // meanwhile: the leader sees it by watch. The reporter's own resync lists Features every
    // 30 s, so one LIST of them may fall in the window; none of the Leases may.
    const lists = async (): Promise<{ leases: number; features: number }> => {
      const text = await server!.cp.metrics.registry.metrics();
      return { leases: requestCount(text, 'LIST', 'leases'), features: requestCount(text, 'LIST', 'features') };
    };
    const before = await lists();
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await feature(c)).metadata?.resourceVersion, off.metadata?.resourceVersion);
    const idle = await lists();
    assert.equal(idle.leases - before.leases, 0, 'no LIST of the identity Leases while idle');
    assert.ok(idle.features - before.features <= 1, `at most the reporter's LIST of Features while idle, saw ${idle.features - before.features}`);

    const k = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    const table = await k.ok(['get', 'features', '-A']);
    assert.match(table, /^kube-system\s+CoordinatedLeaderElection\s+Off\s+Disabled\s+CommandLine\s+Beta\s+True\s+\S+$/m);
    const described = await k.ok(['describe', 'feature', '-n', 'kube-system', CLE]);
    assert.match(described, /State:\s+Off/);
    assert.match(described, /FeatureTransitionStarted\s+.*TurningOff: intended Disabled \(CommandLine\), state was On/);
    assert.match(described, /FeatureTransitionCompleted\s+.*Off: 2 task\(s\) succeeded/);
    const strategy = await k.ok(['-n', 'default', 'get', 'lease', 'app-0', '-o', 'jsonpath={.spec.holderIdentity}|{.spec.strategy}|{.spec.preferredHolder}']);
    assert.equal(strategy, 'h||');
  });
});

describe('feature transitions: a library feature with DeleteCollection, Custom and WaitForObjectsRemoved', { timeout: 180_000, concurrency: false }, () => {
  let dir = '';
  let server: TestServer | undefined;
  const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
  const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
  const labelled = (kind: string, name: string): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, namespace: 'default', labels: { acme: 'widget' } },
  });
  let customCalls = 0;
  // A custom task that takes two units (its progress is stored between them).
  const drain: CustomTask = async ({ progress, params }) => {
    customCalls++;
    const processed = (progress.processed ?? 0) + 1;
    return { done: processed >= 2, progress: { processed }, message: `drained ${processed} of 2 (${params['name']})` };
  };
  const acme = (on: boolean | undefined) => {
    const g = newKubeFeatureGate();
    if (on !== undefined) g.add({ AcmeWidgets: { default: true, preRelease: Beta } });
    g.setFromMap({ [APIServerIdentity]: true, ...(on !== undefined ? { AcmeWidgets: on } : {}) });
    return g;
  };
  const start = (on: boolean | undefined) =>
    startTestServer({
      dataDir: join(dir, 'data'),
      featureGates: acme(on),
      reportFeatures: true,
      featureFlow: {
        ...flowSettings(),
        tasks: {
          AcmeWidgets: {
            disable: [
              {
                name: 'delete-widget-secrets',
                type: 'DeleteCollection',
                params: { resource: 'v1/secrets', namespace: 'default', labelSelector: 'acme=widget' },
              },
              { name: 'drain-widgets', type: 'Custom', params: { name: 'acme-drain' } },
              {
                name: 'widget-configmaps-gone',
                type: 'WaitForObjectsRemoved',
                params: { resource: 'v1/configmaps', namespace: 'default', labelSelector: 'acme=widget' },
              },
            ],
          },
        },
        custom: { 'acme-drain': drain },
      },
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-transitions-lib-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('turned off: deletes the opt-in collection, runs the custom task, waits until the objects are gone', async () => {
    server = await start(true);
    let c = server.cp.loopbackClient();
    await eventually(30_000, 'AcmeWidgets On', async () => ((await feature(c, 'AcmeWidgets')).status?.state === 'On' ? true : undefined), 100);
    await c.create(SECRETS, 'default', labelled('Secret', 's1'));
    await c.create(SECRETS, 'default', labelled('Secret', 's2'));
    await c.create(CONFIGMAPS, 'default', labelled('ConfigMap', 'c1'));
    await server.stop();

    server = await start(false);
    c = server.cp.loopbackClient();
    const blocked = await eventually(
      30_000,
      'waiting for the ConfigMaps',
      async () => {
        const f = await feature(c, 'AcmeWidgets');
        const t = f.status?.transition?.tasks?.find((x) => x.name === 'widget-configmaps-gone');
        return t?.phase === 'Blocked' ? f : undefined;
      },
      100,
    );
    const tasks = blocked.status!.transition!.tasks!;
    assert.deepEqual(
      tasks.map((t) => `${t.name}:${t.phase}`),
      ['delete-widget-secrets:Succeeded', 'drain-widgets:Succeeded', 'widget-configmaps-gone:Blocked', 'wait-for-uses:Pending'],
    );
    assert.equal(tasks[2]!.message, '1 v1/configmaps in default (acme=widget) left');
    assert.equal(tasks[1]!.message, 'drained 2 of 2 (acme-drain)');
    assert.equal(customCalls, 2);
    assert.equal((await c.list(SECRETS, 'default', { labelSelector: 'acme=widget' })).items.length, 0);
    assert.equal(blocked.status?.conditions?.find((x) => x.type === 'TasksBlocked')?.status, 'True');
    // WaitForObjectsRemoved never deletes: the ConfigMap is still there until someone removes it.
    assert.equal((await c.get(CONFIGMAPS, 'default', 'c1')).metadata?.name, 'c1');
    await c.delete(CONFIGMAPS, 'default', 'c1');
    await eventually(30_000, 'AcmeWidgets Off', async () => ((await feature(c, 'AcmeWidgets')).status?.state === 'Off' ? true : undefined), 100);
    await server.stop();

    // A version of the component that does not know the feature keeps its object, Unavailable.
    server = await start(undefined);
    c = server.cp.loopbackClient();
    const kept = await eventually(
      30_000,
      'AcmeWidgets Unavailable',
      async () => {
        const f = await feature(c, 'AcmeWidgets');
        return f.status?.stability === 'Unavailable' ? f : undefined;
      },
      100,
    );
    assert.match(kept.status?.unavailableSinceVersion ?? '', /^v1\.33\.0/);
    assert.equal(kept.status?.state, 'Off');
  });
});

describe('feature transitions: two API servers on etcd', { timeout: 300_000, concurrency: false }, () => {
  let etcd: RunningEtcd;
  const servers: TestServer[] = [];
  let dir = '';

  before(async () => {
    etcd = await startEtcd();
    dir = await mkdtemp(join(tmpdir(), 'kplane-transitions-etcd-'));
  });
  after(async () => {
    for (const c of forked) c.kill('SIGKILL');
    for (const s of servers) await s.stop().catch(() => undefined);
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('disagreeing gates: UsesAgree=False, the ClearField Blocked and nothing cleared while one still uses it', async () => {
    // The leader (lowest hash) runs the gate off; the other still runs it on.
    const [leaderPort, otherPort] = await portsLeaderFirst();
    const storage = { etcd: etcd.endpoint };
    const other = await startTestServer({ storage, port: otherPort, featureGates: gates(true), reportFeatures: true, featureFlow: flowSettings() });
    servers.push(other);
    const oc = other.cp.loopbackClient();
    await createLeases(oc, 20, 'ha');
    const leader = await startTestServer({ storage, port: leaderPort, featureGates: gates(false), reportFeatures: true, featureFlow: flowSettings() });
    servers.push(leader);
    const lc = leader.cp.loopbackClient();
    let last: Feature | undefined;
    const blocked = await eventually(
      30_000,
      'the ClearField blocked by the other server’s use',
      async () => {
        const f = await feature(lc);
        const task = f.status?.transition?.tasks?.[0];
        // (Blocked at first because the leader itself has not reported yet, then by the other's use.)
        last = f;
        return f.status?.state === 'TurningOff' && task?.phase === 'Blocked' && /still report Enabled/.test(task.message ?? '') ? f : undefined;
      },
      { intervalMs: 100, context: () => JSON.stringify(last?.status, null, 1) },
    );
    assert.equal(blocked.status?.transition?.leader, identityLeaseName(`${hostname()}:${leaderPort}`));
    assert.match(
      blocked.status.transition.tasks![0]!.message!,
      /waiting for uses before changing data: 1 use\(s\) still report Enabled \(component=kube-apiserver identity=apiserver-/,
    );
    const conds = Object.fromEntries((blocked.status?.conditions ?? []).map((x) => [x.type, x.status]));
    assert.equal(conds['UsesAgree'], 'False');
    assert.equal(conds['TasksBlocked'], 'True');
    assert.equal((await leasesWithField(lc)).length, 20);

    const k = kubectlSession(tools.kubectl, leader.kubeconfig, dir);
    const described = await k.ok(['describe', 'feature', '-n', 'kube-system', CLE]);
    assert.match(described, /Transition:/);
    assert.match(described, /Name:\s+clear-leases\.coordination\.k8s\.io/);
    assert.match(described, /Phase:\s+Blocked/);
    assert.match(described, /FeatureUsesDisagree/);
    const table = await k.ok(['get', 'features', '-A']);
    assert.match(table, /^kube-system\s+CoordinatedLeaderElection\s+TurningOff\s+Disabled\s+CommandLine\s+Beta\s+False\s/m);
    const wide = await k.ok(['get', 'features', '-n', 'kube-system', CLE, '-o', 'wide']);
    assert.match(wide.split('\n')[0]!, /\sUSES\s+VERSION\s+TASK$/);
    assert.match(wide, /\s0\/2 clear-leases\.coordination\.k8s\.io Blocked$/m);

    // The server that used it stops: once its identity Lease is stale the leader clears and ends Off.
    await other.stop();
    servers.splice(servers.indexOf(other), 1);
    await waitState(lc, 'Off');
    assert.deepEqual(await leasesWithField(lc), []);
    await leader.stop();
    servers.splice(servers.indexOf(leader), 1);
  });

  it('the leader killed (SIGKILL) mid-ClearField: the other takes over, resumes from the stored progress; no write lost, no field left', async () => {
    await etcd.stop();
    etcd = await startEtcd();
    const storage = { etcd: etcd.endpoint };
    // Enough pages (25 of 20) that the leader is stopped well inside the pass; 2,000 took two
    // minutes of CI for the same proof. The 10,000-object run belongs to the benchmarks.
    const N = 500;
    const PAGE = 20;
    {
      const seed = await startTestServer({ storage, featureGates: gates(true), reportFeatures: true, featureFlow: false });
      await createLeases(seed.cp.loopbackClient(), N, 'bulk');
      await seed.stop();
    }
    const [leaderPort, otherPort] = await portsLeaderFirst();
    // The leader is a process of its own, killed with SIGKILL mid-pass: no shutdown, its identity
    // Lease left to go stale, its page in flight abandoned half done.
    const leader = await forkFlowServer({
      etcd: etcd.endpoint,
      port: leaderPort,
      dataDir: await mkdtemp(join(dir, 'leader-')),
      gates: { [APIServerIdentity]: true, [CLE]: false },
      // Paced (25 pages of 20 in 5 s), so that the test sees it mid-pass however fast the machine.
      featureFlow: { ...flowSettings(PAGE), clearFieldObjectsPerSecond: 100 },
    });
    const other = await serve(false, { storage, port: otherPort }, PAGE);
    servers.push(other);
    const oc = other.cp.loopbackClient();

    // A writer on the surviving server, changing holderIdentity of Leases all along.
    const written = new Map<string, string>();
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const name = `bulk-${(n * 37) % N}`;
        const value = `w-${n}`;
        await oc.patch(LEASES, 'default', name, 'merge', { spec: { holderIdentity: value } });
        written.set(name, value);
      }
    })();

    const mid = await eventually(
      60_000,
      'ClearField under way',
      async () => {
        const f = await feature(oc);
        const t = f.status?.transition?.tasks?.[0];
        return t?.phase === 'Running' && (t.progress?.processed ?? 0) >= 100 ? f : undefined;
      },
      20,
    );
    assert.equal(mid.status?.transition?.leader, identityLeaseName(`${hostname()}:${leaderPort}`));
    leader.child.kill('SIGKILL');
    await leader.exited;
    assert.equal(leader.child.signalCode, 'SIGKILL');
    const stoppedAt = (await feature(oc)).status!.transition!.tasks![0]!.progress!;
    assert.ok((stoppedAt.processed ?? 0) < N, JSON.stringify(stoppedAt));

    const resumed = await eventually(
      60_000,
      'the other server resumes',
      async () => {
        const f = await feature(oc);
        return f.status?.transition?.leader === identityLeaseName(`${hostname()}:${otherPort}`) ? f : undefined;
      },
      50,
    );
    // It continued from the stored token, not from the start.
    assert.ok((resumed.status!.transition!.tasks![0]!.progress?.processed ?? 0) >= (stoppedAt.processed ?? 0));
    const off = await waitState(oc, 'Off', 120_000);
    writing = false;
    await writer;
    assert.deepEqual(await leasesWithField(oc), []);
    for (const [name, value] of written) {
      const l = await oc.get(LEASES, 'default', name);
      assert.equal((l['spec'] as { holderIdentity?: string }).holderIdentity, value, name);
    }
    assert.ok(written.size > 0);
    assert.ok(off.status?.conditions?.some((x) => x.type === 'Settled' && x.status === 'True'));
    assert.equal(off.status?.intended, 'Disabled');
    assert.equal(off.status?.transition, undefined);
    // The killed server's use (Disabled, as it ran) was dropped with its stale identity Lease; the
    // survivor's is the one left.
    const uses = (off.status?.uses ?? []).filter((u) => u.component === 'kube-apiserver');
    assert.deepEqual(
      uses.map((u) => [u.identity.split('_')[0], u.value]),
      [[identityLeaseName(`${hostname()}:${otherPort}`), 'Disabled']],
    );
    // Counted once: the page abandoned by the stopped leader is redone (at most one page more than
    // the Leases there are: N, and the servers' identity Leases), never the whole pass again.
    const events = await oc.list({ group: '', version: 'v1', resource: 'events' }, 'kube-system');
    const done = events.items.map((e) => String(e['message'])).find((m) => m.startsWith('task clear-leases.coordination.k8s.io (ClearField): cleared'));
    const [, changed, processed] = /on (\d+) of (\d+) object/.exec(done ?? '') ?? [];
    assert.ok(Number(processed) >= N && Number(processed) <= N + PAGE + 10, done);
    assert.ok(Number(changed) > 0 && Number(changed) <= N, done);
  });
});
