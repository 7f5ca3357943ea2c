// Issue 22's user story across the pieces: a ServiceAccount with a namespaced Role, its token from
// `kubectl create token`, used by kubectl 1.33 (`auth whoami`, `auth can-i --list --as`),
// @kubernetes/client-node, the Python client and helm 4: allowed in its namespace, 403 with
// upstream's message in another; impersonation refused without the `impersonate` verb.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run, tools } from '../support/tools.js';

const SA = 'system:serviceaccount:team-a:ci';
const FORBIDDEN_B = `configmaps is forbidden: User "${SA}" cannot list resource "configmaps" in API group "" in the namespace "team-b"`;

describe('a ServiceAccount under RBAC, through kubectl, client-node, python and helm', { timeout: 240_000, concurrency: false }, () => {
  let server: TestServer;
  let dir: string;
  let admin: KubectlSession;
  let token: string;
  let saKubeconfig: string;

  before(async () => {
    server = await startTestServer({ authorizationModes: ['RBAC'] });
    dir = await mkdtemp(join(tmpdir(), 'kplane-rbac-sa-'));
    admin = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    for (const ns of ['team-a', 'team-b']) await admin.ok(['create', 'namespace', ns]);
    await admin.ok(['create', 'serviceaccount', 'ci', '-n', 'team-a']);
    // What helm needs in its namespace: configmaps (the chart) and secrets (its release records).
    await admin.ok(['create', 'role', 'deployer', '-n', 'team-a', '--verb=get,list,watch,create,update,patch,delete', '--resource=configmaps,secrets']);
    await admin.ok(['create', 'rolebinding', 'ci-deployer', '-n', 'team-a', '--role=deployer', '--serviceaccount=team-a:ci']);
    token = (await admin.ok(['create', 'token', 'ci', '-n', 'team-a', '--duration', '1h'])).trim();
    const cfg = JSON.parse(await admin.ok(['config', 'view', '--raw', '-o', 'json'])) as {
      clusters: { name: string; cluster: Record<string, unknown> }[];
    };
    const cluster = cfg.clusters[0]!;
    saKubeconfig = join(dir, 'ci.kubeconfig');
    await writeFile(
      saKubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [cluster],
        users: [{ name: 'ci', user: { token } }],
        contexts: [{ name: 'ci', context: { cluster: cluster.name, user: 'ci', namespace: 'team-a' } }],
        'current-context': 'ci',
      }),
    );
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl: whoami names the ServiceAccount; can-i answers for it; another namespace is a 403', async () => {
    const who = kubectlSession(tools.kubectl, saKubeconfig, dir);
    const whoami = await who.ok(['auth', 'whoami', '-o', 'json']);
    const status = (JSON.parse(whoami) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    assert.equal(status.username, SA);
    assert.deepEqual([...status.groups].sort(), ['system:authenticated', 'system:serviceaccounts', 'system:serviceaccounts:team-a']);
    await who.ok(['get', 'configmaps', '-n', 'team-a']);
    const denied = await who.k(['get', 'configmaps', '-n', 'team-b']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, new RegExp(FORBIDDEN_B.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal((await admin.ok(['auth', 'can-i', 'create', 'secrets', '-n', 'team-a', '--as', SA])).trim(), 'yes');
    const no = await admin.k(['auth', 'can-i', 'delete', 'secrets', '-n', 'team-b', '--as', SA]);
    assert.equal(no.stdout.trim(), 'no');
    const list = await admin.ok(['auth', 'can-i', '--list', '-n', 'team-a', '--as', SA]);
    assert.match(list, /^configmaps\s+\[\]\s+\[\]\s+\[get list watch create update patch delete\]$/m);
    // Impersonation needs the `impersonate` verb, which the ServiceAccount does not hold.
    const imp = await who.k(['get', 'configmaps', '-n', 'team-a', '--as', 'alice']);
    assert.notEqual(imp.code, 0);
    assert.match(
      imp.stderr,
      /users "alice" is forbidden: User "system:serviceaccount:team-a:ci" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
  });

  it('client-node: allowed in team-a, 403 Forbidden in team-b', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(saKubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'from-node' }, data: { a: '1' } } });
    const listed = await core.listNamespacedConfigMap({ namespace: 'team-a' });
    assert.ok(listed.items.some((c) => c.metadata?.name === 'from-node'));
    await assert.rejects(core.listNamespacedConfigMap({ namespace: 'team-b' }), (e: unknown) => {
      assert.ok(e instanceof k8s.ApiException);
      assert.equal(e.code, 403);
      const body = JSON.parse(String(e.body)) as { reason: string; message: string };
      assert.equal(body.reason, 'Forbidden');
      assert.equal(body.message, FORBIDDEN_B);
      return true;
    });
  });

  it('python client: allowed in team-a, 403 Forbidden in team-b', async () => {
    const script = `
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
v1.create_namespaced_config_map("team-a", {"metadata": {"name": "from-python"}, "data": {"a": "1"}})
names = [c.metadata.name for c in v1.list_namespaced_config_map("team-a").items]
try:
    v1.list_namespaced_config_map("team-b")
    denied = None
except ApiException as e:
    denied = {"status": e.status, "body": json.loads(e.body)}
print(json.dumps({"names": names, "denied": denied}))
`;
    const r = await run(tools.python, ['-c', script, saKubeconfig], { timeoutMs: 45_000, env: { PYTHONDONTWRITEBYTECODE: '1' } });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { names: string[]; denied: { status: number; body: { message: string } } | null };
    assert.ok(out.names.includes('from-python'));
    assert.equal(out.denied?.status, 403);
    assert.equal(out.denied?.body.message, FORBIDDEN_B);
  });

  it('helm 4 installs a chart into its namespace as the ServiceAccount, and not into another', async () => {
    const chart = join(dir, 'chart');
    await mkdir(join(chart, 'templates'), { recursive: true });
    await writeFile(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: sa-demo\nversion: 0.1.0\n');
    await writeFile(join(chart, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-helm\ndata:\n  a: "1"\n');
    const env = {
      KUBECONFIG: saKubeconfig,
      HOME: dir,
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    };
    const ok = await run(tools.helm, ['install', 'demo', chart, '-n', 'team-a'], { env, timeoutMs: 60_000 });
    assert.equal(ok.code, 0, `${ok.stdout}\n${ok.stderr}`);
    assert.match(await admin.ok(['get', 'configmap', 'from-helm', '-n', 'team-a', '-o', 'name']), /configmap\/from-helm/);
    const no = await run(tools.helm, ['install', 'demo', chart, '-n', 'team-b'], { env, timeoutMs: 60_000 });
    assert.notEqual(no.code, 0);
    assert.match(no.stderr, /forbidden: User "system:serviceaccount:team-a:ci" cannot/);
  });
});
