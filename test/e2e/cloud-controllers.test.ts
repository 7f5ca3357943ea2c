// The cloud-controller-manager end to end (issue 25): `kplane serve --modules cloud` and
// `kplane cloud-controller-manager --cloud-provider fake` as child processes, kubectl 1.33 as the
// user. The fake cloud in the CCM process is driven through its loopback admin endpoint
// (`adminAddress` in --cloud-config): instances deleted or shut down, errors injected, calls read.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually as pollUntil } from '../support/eventually.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { repoRoot, run, tools } from '../support/tools.js';

const procs = kplaneProcesses({ startTimeoutMs: 90_000 });
const SERVING = /^kplane is serving on https:\/\/\S+/m;
const CCM_STARTED = /^kplane cloud-controller-manager started: .*$/m;
const FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

let dir = '';
let kubeconfig = '';
let cloudConfig = '';
let ccm: KplaneProcess | undefined;
let kubectl: KubectlSession;

const eventually = <T>(ms: number, what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  pollUntil(ms, what, probe, { intervalMs: 100, context: () => `cloud-controller-manager log:\n${ccm?.log().slice(-3000)}` });

async function startCCM(): Promise<void> {
  await rm(join(dir, 'fake-admin'), { force: true });
  ccm = await procs.start(
    [
      'cloud-controller-manager',
      '--cloud-provider=fake',
      `--cloud-config=${cloudConfig}`,
      `--kubeconfig=${kubeconfig}`,
      '--node-monitor-period=200ms',
      // A short Lease, so that a CCM started after a kill -9 leads soon.
      '--leader-elect-lease-duration=2s',
      '--leader-elect-renew-deadline=1500ms',
      '--leader-elect-retry-period=200ms',
      '--metrics-port=0',
      '-v=2',
    ],
    CCM_STARTED,
  );
}

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  const addr = (await readFile(join(dir, 'fake-admin'), 'utf8')).trim();
  const res = await fetch(`http://${addr}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  assert.equal(res.status, 200, `${method} ${path}: ${await res.clone().text()}`);
  return res.json();
}

const calls = async (): Promise<{ method: string; target: string }[]> => (await admin('GET', '/calls')) as { method: string; target: string }[];

async function json<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl.ok([...args, '-o', 'json'])) as T;
}

interface Svc {
  metadata: { finalizers?: string[]; deletionTimestamp?: string };
  status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
}
interface NodeObj {
  metadata: { labels?: Record<string, string> };
  spec?: { providerID?: string; taints?: { key: string; effect: string }[] };
}

async function absent(args: string[]): Promise<true | undefined> {
  const r = await kubectl.k([...args, '-o', 'name']);
  return r.code !== 0 && /NotFound|not found/.test(r.stderr) ? true : undefined;
}

const nodeYAML = (name: string) => `apiVersion: v1
kind: Node
metadata:
  name: ${name}
spec:
  taints:
  - key: node.cloudprovider.kubernetes.io/uninitialized
    value: "true"
    effect: NoSchedule
`;

const setReady = (name: string, status: string) =>
  kubectl.ok([
    'patch',
    'node',
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: { conditions: [{ type: 'Ready', status, reason: 'Test', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] },
    }),
  ]);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-ccm-'));
  const dataDir = join(dir, 'data');
  await procs.start(['serve', '--data-dir', dataDir, '--secure-port', '0', '--modules', 'cloud'], SERVING);
  kubeconfig = join(dataDir, 'admin.kubeconfig');
  cloudConfig = join(dir, 'cloud.json');
  await writeFile(
    cloudConfig,
    JSON.stringify({
      adminAddress: '127.0.0.1:0',
      adminAddressFile: join(dir, 'fake-admin'),
      stateFile: join(dir, 'fake-state.json'),
      zone: 'zone-e2e',
      region: 'region-e2e',
    }),
  );
  kubectl = kubectlSession(tools.kubectl, kubeconfig, dir);
  await startCCM();
});

after(async () => {
  procs.killAll();
  for (const c of procs.children) if (c.exitCode === null && c.signalCode === null) await new Promise((r) => c.once('exit', r));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('kplane cloud-controller-manager --cloud-provider fake', () => {
  it('a Node with the uninitialized taint is initialized: providerID, labels, taint gone', async () => {
    await kubectl.ok(['apply', '-f', await kubectl.file('n1.yaml', nodeYAML('n1'))]);
    await setReady('n1', 'True');
    const n = await eventually(20_000, 'n1 initialized', async () => {
      const n = await json<NodeObj>(['get', 'node', 'n1']);
      return n.spec?.providerID && !(n.spec.taints ?? []).length ? n : undefined;
    });
    assert.equal(n.spec?.providerID, 'fake://n1');
    assert.equal(n.metadata.labels?.['topology.kubernetes.io/zone'], 'zone-e2e');
    assert.equal(n.metadata.labels?.['topology.kubernetes.io/region'], 'region-e2e');
    assert.equal(n.metadata.labels?.['node.kubernetes.io/instance-type'], 'fake.small');
    assert.equal(n.metadata.labels?.['failure-domain.beta.kubernetes.io/zone'], 'zone-e2e');
    await eventually(10_000, 'Synced in describe', async () =>
      /Normal\s+Synced\s+\S+\s+cloud-node-controller\s+Node synced successfully/.test(await kubectl.ok(['describe', 'node', 'n1'])) ? true : undefined,
    );
  });

  it('a LoadBalancer Service gets the finalizer, an ingress and events', async () => {
    await kubectl.ok(['create', 'service', 'loadbalancer', 'web', '--tcp=80:8080']);
    const s = await eventually(20_000, 'ingress', async () => {
      const s = await json<Svc>(['get', 'svc', 'web']);
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    assert.deepEqual(s.metadata.finalizers, [FINALIZER]);
    assert.match(s.status!.loadBalancer!.ingress![0]!.ip!, /^127\.0\.200\.\d+$/);
    const described = await eventually(10_000, 'events in describe', async () => {
      const d = await kubectl.ok(['describe', 'svc', 'web']);
      return /EnsuredLoadBalancer/.test(d) ? d : undefined;
    });
    assert.match(described, /LoadBalancer Ingress:\s+127\.0\.200\.\d+/);
    assert.match(described, /Normal\s+EnsuringLoadBalancer\s+\S+\s+service-controller\s+Ensuring load balancer/);
    assert.match(described, /Normal\s+EnsuredLoadBalancer\s+\S+\s+service-controller\s+Ensured load balancer/);
    // The metrics endpoint the first line names: the service queue has worked.
    const metricsURL = /metrics on (http:\/\/\S+\/metrics)/.exec(ccm!.firstLine)![1]!;
    const metrics = await (await fetch(metricsURL)).text();
    assert.match(metrics, /^workqueue_adds_total\{name="service"\} [1-9]/m);
    assert.match(metrics, /^controller_runtime_reconcile_total\{controller="service",result="success"\} [1-9]/m);
    const wide = await kubectl.ok(['get', 'svc', 'web']);
    assert.match(wide, /web\s+LoadBalancer\s+\S+\s+127\.0\.200\.\d+\s+80:\d+\/TCP/);
  });

  it('deleting the Service deletes the load balancer, then the finalizer goes and the Service with it', async () => {
    await kubectl.ok(['delete', 'svc', 'web', '--timeout=30s']);
    assert.equal(await absent(['get', 'svc', 'web']), true);
    assert.ok((await calls()).some((c) => c.method === 'ensureLoadBalancerDeleted' && c.target === 'default/web'));
    assert.deepEqual(await admin('GET', '/balancers'), []);
  });

  it('a provider error: SyncLoadBalancerFailed in describe, then the retry succeeds', async () => {
    await admin('PUT', '/errors/ensureLoadBalancer', { message: 'the cloud API is down', times: 1 });
    await kubectl.ok(['create', 'service', 'loadbalancer', 'flaky', '--tcp=80:8080']);
    const d = await eventually(20_000, 'SyncLoadBalancerFailed', async () => {
      const d = await kubectl.ok(['describe', 'svc', 'flaky']);
      return /SyncLoadBalancerFailed/.test(d) ? d : undefined;
    });
    assert.match(
      d,
      /Warning\s+SyncLoadBalancerFailed\s+\S+\s+service-controller\s+Error syncing load balancer: failed to ensure load balancer: the cloud API is down/,
    );
    // Upstream's first retry comes after 5 s.
    await eventually(30_000, 'ingress after the retry', async () =>
      (await json<Svc>(['get', 'svc', 'flaky'])).status?.loadBalancer?.ingress?.length ? true : undefined,
    );
    assert.equal((await calls()).filter((c) => c.method === 'ensureLoadBalancer' && c.target === 'default/flaky').length, 2);
  });

  it('an instance shut down: NotReady node gets the shutdown taint; deleted instance: the Node is deleted', async () => {
    await admin('PUT', '/instances/n1', { shutdown: true });
    await setReady('n1', 'False');
    const n = await eventually(20_000, 'shutdown taint', async () => {
      const n = await json<NodeObj>(['get', 'node', 'n1']);
      return (n.spec?.taints ?? []).some((t) => t.key === 'node.cloudprovider.kubernetes.io/shutdown') ? n : undefined;
    });
    assert.deepEqual(n.spec?.taints, [{ key: 'node.cloudprovider.kubernetes.io/shutdown', effect: 'NoSchedule' }]);
    await admin('DELETE', '/instances/n1');
    await eventually(20_000, 'n1 deleted', () => absent(['get', 'node', 'n1']));
  });

  it('kill -9 mid-reconcile and restart: the load balancer is ensured, and deleted with no stuck finalizer', async () => {
    // The cloud call hangs: the finalizer is on (added first), the ingress not yet.
    await admin('PUT', '/delays/ensureLoadBalancer', { ms: 60_000 });
    await kubectl.ok(['create', 'service', 'loadbalancer', 'crash', '--tcp=80:8080']);
    await eventually(20_000, 'ensureLoadBalancer in flight', async () =>
      (await calls()).some((c) => c.method === 'ensureLoadBalancer' && c.target === 'default/crash') ? true : undefined,
    );
    assert.deepEqual((await json<Svc>(['get', 'svc', 'crash'])).metadata.finalizers, [FINALIZER]);
    ccm!.child.kill('SIGKILL');
    await ccm!.exited;
    await startCCM();
    const s = await eventually(30_000, 'ingress after the restart', async () => {
      const s = await json<Svc>(['get', 'svc', 'crash']);
      return s.status?.loadBalancer?.ingress?.length ? s : undefined;
    });
    assert.deepEqual(s.metadata.finalizers, [FINALIZER]);
    // Killed again while deleting: the Service stays, held by the finalizer, until a CCM finishes.
    await admin('PUT', '/delays/ensureLoadBalancerDeleted', { ms: 60_000 });
    await kubectl.ok(['delete', 'svc', 'crash', '--wait=false']);
    await eventually(20_000, 'deletion in flight', async () =>
      (await calls()).some((c) => c.method === 'ensureLoadBalancerDeleted' && c.target === 'default/crash') ? true : undefined,
    );
    const held = await json<Svc>(['get', 'svc', 'crash']);
    assert.ok(held.metadata.deletionTimestamp);
    assert.deepEqual(held.metadata.finalizers, [FINALIZER]);
    ccm!.child.kill('SIGKILL');
    await ccm!.exited;
    await startCCM();
    await eventually(30_000, 'crash gone', () => absent(['get', 'svc', 'crash']));
    // The cloud (its state file) outlived both CCMs: the restarted one found the load balancer and
    // deleted it; none is left behind.
    const after = await calls();
    assert.ok(after.some((c) => c.method === 'getLoadBalancer' && c.target === 'default/crash'));
    assert.ok(after.some((c) => c.method === 'ensureLoadBalancerDeleted' && c.target === 'default/crash'));
    assert.deepEqual(
      ((await admin('GET', '/balancers')) as { service: string }[]).map((b) => b.service),
      ['default/flaky'],
    );
  });
});

describe('kplane cloud-controller-manager: bad command lines', () => {
  const ccmCLI = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'cloud-controller-manager', ...args], { timeoutMs: 60_000 });

  it('an unknown --cloud-provider exits 1 naming the flag and the known providers', async () => {
    const r = await ccmCLI(['--cloud-provider=nocloud', `--kubeconfig=${kubeconfig}`]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error: --cloud-provider: unknown cloud provider "nocloud"; known cloud providers: fake, loopback\n');
  });

  it('a bad duration or an unknown controller exits 1 with the reason', async () => {
    const d = await ccmCLI(['--cloud-provider=fake', `--kubeconfig=${kubeconfig}`, '--node-monitor-period=5']);
    assert.equal(d.code, 1);
    assert.match(d.stderr, /invalid argument "5" for "--node-monitor-period" flag: time: missing unit in duration "5"/);
    const c = await ccmCLI(['--cloud-provider=fake', `--kubeconfig=${kubeconfig}`, '--controllers=*,nodeipam']);
    assert.equal(c.code, 1);
    assert.match(c.stderr, /"nodeipam" is not in the list of known controllers/);
  });
});
