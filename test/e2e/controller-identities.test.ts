// kplane's in-process controllers under RBAC act under their own identities, as
// kube-controller-manager's --use-service-account-credentials: each as
// system:serviceaccount:kube-system:<controller>, bound to system:controller:<controller>; shared
// informers as system:kube-controller-manager. Namespace deletion and garbage collection still
// work, the audit log names the controllers' users, and a permission taken from a controller's role
// turns its request into a 403 that the controller logs (which could not happen as system:masters).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import type { KubeClient } from '../../src/client/types.js';
import { defaultControllers } from '../../src/controllers/index.js';
import { readAuditEvents } from '../support/audit.js';
import { eventually } from '../support/eventually.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';
import { repoRoot, run } from '../support/tools.js';
import { startTestServer, type TestServer } from '../support/server.js';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const SERVICE_ACCOUNTS = { group: '', version: 'v1', resource: 'serviceaccounts' };
const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const RESOURCE_QUOTAS = { group: '', version: 'v1', resource: 'resourcequotas' };

interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string; groups?: string[] };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/** The ServiceAccounts in kube-system the in-process controllers act as. */
const CONTROLLER_SERVICE_ACCOUNTS = [
  'namespace-controller',
  'generic-garbage-collector',
  'service-account-controller',
  'root-ca-cert-publisher',
  'clusterrole-aggregation-controller',
  'resourcequota-controller',
];

const sa = (name: string): string => `system:serviceaccount:kube-system:${name}`;

describe('in-process controllers under their own identities (RBAC)', { timeout: 120_000, concurrency: false }, () => {
  let server: TestServer;
  let dir: string;
  let auditPath: string;
  let admin: KubeClient;
  const logs: string[] = [];
  const events = (): AuditEvent[] => readAuditEvents<AuditEvent>(auditPath, 'ResponseComplete');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-ctrl-ident-'));
    auditPath = join(dir, 'audit.log');
    server = await startTestServer({
      storage: 'memory',
      authorizationModes: ['RBAC'],
      controllers: defaultControllers(),
      audit: {
        policy: {
          rules: [
            {
              level: 'Metadata',
              users: [],
              userGroups: [],
              verbs: [],
              resources: [],
              namespaces: [],
              nonResourceURLs: [],
              omitStages: [],
              omitManagedFields: undefined,
            },
          ],
          omitStages: [],
          omitManagedFields: false,
        },
        log: { path: auditPath },
      },
      log: (msg) => logs.push(msg),
    });
    // The admin kubeconfig's user (system:masters), over HTTPS; not the loopback's system:apiserver.
    admin = createHttpsClient(server.kubeconfig);
  });
  after(async () => {
    await admin?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the controllers ServiceAccounts exist in kube-system', async () => {
    for (const name of CONTROLLER_SERVICE_ACCOUNTS) {
      await admin.get(SERVICE_ACCOUNTS, 'kube-system', name);
    }
  });

  it('garbage collection and namespace deletion work, each controller acting as its own ServiceAccount', async () => {
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    const owner = await admin.create<KubeObject>(CONFIGMAPS, 'doomed', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    await admin.create(CONFIGMAPS, 'doomed', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }] },
    });
    // The ServiceAccount controller and the root CA publisher fill the new namespace.
    await eventually(15_000, 'default ServiceAccount in doomed', () => admin.get(SERVICE_ACCOUNTS, 'doomed', 'default'));
    await eventually(15_000, 'kube-root-ca.crt in doomed', () => admin.get(CONFIGMAPS, 'doomed', 'kube-root-ca.crt'));
    await admin.delete(CONFIGMAPS, 'doomed', 'owner');
    await eventually(15_000, 'the dependent collected', async () => {
      const left = await admin.list(CONFIGMAPS, 'doomed');
      return left.items.some((c) => c.metadata?.name === 'dependent') ? undefined : true;
    });
    await admin.delete(NAMESPACES, undefined, 'doomed');
    await eventually(30_000, 'namespace doomed gone', async () => {
      const all = await admin.list(NAMESPACES);
      return all.items.some((n) => n.metadata?.name === 'doomed') ? undefined : true;
    });

    const byUser = (user: string, pred: (e: AuditEvent) => boolean): AuditEvent | undefined => events().find((e) => e.user.username === user && pred(e));
    const inDoomed = (e: AuditEvent): boolean => e.objectRef?.namespace === 'doomed';
    const gc = await eventually(5_000, 'the GC delete in the audit log', async () =>
      byUser(sa('generic-garbage-collector'), (e) => e.verb === 'delete' && inDoomed(e) && e.objectRef?.name === 'dependent'),
    );
    assert.equal(gc.responseStatus?.code, 200);
    assert.deepEqual([...(gc.user.groups ?? [])].sort(), ['system:authenticated', 'system:serviceaccounts', 'system:serviceaccounts:kube-system']);
    assert.ok(
      byUser(sa('namespace-controller'), (e) => e.verb === 'deletecollection' && inDoomed(e)),
      'namespace controller empties the namespace',
    );
    assert.ok(
      byUser(
        sa('namespace-controller'),
        (e) => e.objectRef?.resource === 'namespaces' && e.objectRef?.name === 'doomed' && e.objectRef?.subresource === 'finalize' && e.verb === 'update',
      ),
      'namespace controller finalizes the namespace',
    );
    assert.ok(byUser(sa('service-account-controller'), (e) => e.verb === 'create' && e.objectRef?.resource === 'serviceaccounts' && inDoomed(e)));
    assert.ok(byUser(sa('root-ca-cert-publisher'), (e) => e.verb === 'create' && e.objectRef?.resource === 'configmaps' && inDoomed(e)));
    // Shared informers list (and watch) as kube-controller-manager's own user.
    assert.ok(byUser('system:kube-controller-manager', (e) => e.verb === 'list' && e.objectRef?.resource === 'namespaces'));
    // No write in the namespace went through as the loopback's system:apiserver (system:masters).
    const masters = events().filter((e) => e.user.username === 'system:apiserver' && inDoomed(e));
    assert.deepEqual(
      masters.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`),
      [],
    );
  });

  // The README's quota walk under `kplane serve` (RBAC): the quota controller writes the status that
  // turns enforcement on, as system:serviceaccount:kube-system:resourcequota-controller.
  it('the resource quota controller writes quota status as its own ServiceAccount', async () => {
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'quota-rbac' } });
    await admin.create(RESOURCE_QUOTAS, 'quota-rbac', {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'objects' },
      spec: { hard: { 'count/configmaps': '2' } },
    });
    await eventually(
      15_000,
      'quota-rbac/objects status.used',
      async () => {
        const q = await admin.get<KubeObject & { status?: { used?: Record<string, string> } }>(RESOURCE_QUOTAS, 'quota-rbac', 'objects');
        return q.status?.used?.['count/configmaps'] !== undefined ? true : undefined;
      },
      {
        context: () =>
          logs
            .filter((l) => l.includes('resourcequota'))
            .slice(-3)
            .join('\n'),
      },
    );
    const write = await eventually(5_000, 'the quota status update in the audit log', async () =>
      events().find(
        (e) =>
          e.verb === 'update' && e.objectRef?.resource === 'resourcequotas' && e.objectRef?.subresource === 'status' && e.objectRef?.namespace === 'quota-rbac',
      ),
    );
    assert.equal(write.user.username, sa('resourcequota-controller'));
    assert.equal(write.responseStatus?.code, 200);
  });

  it('a permission taken from a controller role makes its request a 403, and the controller logs it', async () => {
    const role = await admin.get<{ apiVersion: string; kind: string; metadata: { name: string }; rules: unknown[] }>(
      CLUSTER_ROLES,
      undefined,
      'system:controller:service-account-controller',
    );
    // Keep only the events rule: no more `create serviceaccounts`.
    await admin.update(CLUSTER_ROLES, undefined, { ...role, rules: role.rules.slice(1) });
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'no-sa' } });
    const denied = await eventually(15_000, 'the ServiceAccount controller denied', async () =>
      events().find(
        (e) =>
          e.user.username === sa('service-account-controller') && e.verb === 'create' && e.objectRef?.namespace === 'no-sa' && e.responseStatus?.code === 403,
      ),
    );
    assert.equal(denied.objectRef?.resource, 'serviceaccounts');
    await eventually(10_000, 'the controller logs the 403', async () =>
      logs.find(
        (l) =>
          l.includes('Reconciler error') &&
          l.includes(
            `serviceaccounts is forbidden: User \\"${sa('service-account-controller')}\\" cannot create resource \\"serviceaccounts\\" in API group \\"\\" in the namespace \\"no-sa\\"`,
          ),
      ),
    );
    await assert.rejects(admin.get(SERVICE_ACCOUNTS, 'no-sa', 'default'), /not found/);
  });
});

describe('kplane controller-manager --use-service-account-credentials (RBAC)', { timeout: 120_000, concurrency: false }, () => {
  const procs = kplaneProcesses();
  let dir: string;
  let auditPath: string;
  let admin: KubeClient;
  let cm: KplaneProcess;
  const events = (): AuditEvent[] => readAuditEvents<AuditEvent>(auditPath, 'ResponseComplete');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-cm-ident-'));
    auditPath = join(dir, 'audit.log');
    const policy = join(dir, 'policy.yaml');
    await writeFile(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n');
    // RBAC is serve's default authorization mode.
    await procs.start(
      ['serve', '--data-dir', dir, '--secure-port', '0', '--controllers=false', '--audit-policy-file', policy, '--audit-log-path', auditPath],
      /^kplane is serving on https:\/\/\S+/m,
    );
    const kubeconfig = join(dir, 'admin.kubeconfig');
    admin = createHttpsClient(kubeconfig);
    cm = await procs.start(
      ['controller-manager', '--kubeconfig', kubeconfig, '--leader-elect=false', '--use-service-account-credentials'],
      /identity \S+,.*$/m,
    );
  });
  after(async () => {
    await admin?.close();
    procs.killAll();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('each controller acts with a TokenRequest token of its ServiceAccount; GC and namespace deletion work', async () => {
    assert.match(cm.firstLine, /each as its own ServiceAccount/);
    for (const name of CONTROLLER_SERVICE_ACCOUNTS) {
      await admin.get(SERVICE_ACCOUNTS, 'kube-system', name);
    }
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
    const owner = await admin.create<KubeObject>(CONFIGMAPS, 'doomed', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } });
    await admin.create(CONFIGMAPS, 'doomed', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }] },
    });
    await eventually(20_000, 'default ServiceAccount in doomed', () => admin.get(SERVICE_ACCOUNTS, 'doomed', 'default'), { context: () => cm.log() });
    await admin.delete(CONFIGMAPS, 'doomed', 'owner');
    await eventually(
      20_000,
      'the dependent collected',
      async () => ((await admin.list(CONFIGMAPS, 'doomed')).items.some((c) => c.metadata?.name === 'dependent') ? undefined : true),
      { context: () => cm.log() },
    );
    await admin.delete(NAMESPACES, undefined, 'doomed');
    await eventually(
      30_000,
      'namespace doomed gone',
      async () => ((await admin.list(NAMESPACES)).items.some((n) => n.metadata?.name === 'doomed') ? undefined : true),
      { context: () => cm.log() },
    );
    const seen = await eventually(5_000, 'the controllers in the audit log', async () => {
      const all = events();
      const by = (user: string, verb: string, resource: string): boolean =>
        all.some((e) => e.user.username === user && e.verb === verb && e.objectRef?.resource === resource && e.objectRef?.namespace === 'doomed');
      const found = {
        gc: by(sa('generic-garbage-collector'), 'delete', 'configmaps'),
        namespace: by(sa('namespace-controller'), 'deletecollection', 'configmaps'),
        serviceAccounts: by(sa('service-account-controller'), 'create', 'serviceaccounts'),
        rootCA: by(sa('root-ca-cert-publisher'), 'create', 'configmaps'),
      };
      return Object.values(found).every(Boolean) ? found : undefined;
    });
    assert.ok(seen);
    // The tokens came from TokenRequest, asked for with the kubeconfig's (system:masters) credentials.
    const minted = events().filter((e) => e.verb === 'create' && e.objectRef?.resource === 'serviceaccounts' && e.objectRef?.subresource === 'token');
    assert.deepEqual([...new Set(minted.map((e) => e.objectRef?.name))].sort(), [...CONTROLLER_SERVICE_ACCOUNTS].sort());
  });

  it('a permission taken from a controller role makes its request a 403 in the controller-manager log', async () => {
    const role = await admin.get<{ apiVersion: string; kind: string; metadata: { name: string }; rules: unknown[] }>(
      CLUSTER_ROLES,
      undefined,
      'system:controller:service-account-controller',
    );
    await admin.update(CLUSTER_ROLES, undefined, { ...role, rules: role.rules.slice(1) });
    await admin.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'no-sa' } });
    await eventually(20_000, 'the controller-manager logs the 403', async () =>
      cm
        .log()
        .split('\n')
        .find(
          (l) => l.includes('Reconciler error') && l.includes(`cannot create resource \\"serviceaccounts\\" in API group \\"\\" in the namespace \\"no-sa\\"`),
        ),
    );
  });
});

describe('kplane controller-manager --use-service-account-credentials=<bool>', () => {
  it("reads the value as Go's strconv.ParseBool, with pflag's error for anything else", async () => {
    const cm = (value: string) =>
      run(
        process.execPath,
        [
          '--import',
          'tsx',
          join(repoRoot, 'src/cli/main.ts'),
          'controller-manager',
          '--kubeconfig',
          '/nonexistent/kubeconfig',
          `--use-service-account-credentials=${value}`,
        ],
        {
          timeoutMs: 60_000,
        },
      );
    for (const bad of ['maybe', 'TrUe', 'yes']) {
      const r = await cm(bad);
      assert.notEqual(r.code, 0);
      assert.equal(
        r.stderr.trim(),
        `kplane: invalid argument "${bad}" for "--use-service-account-credentials" flag: strconv.ParseBool: parsing "${bad}": invalid syntax`,
      );
    }
    // Accepted values get as far as reading the kubeconfig.
    for (const good of ['True', 'f']) assert.match((await cm(good)).stderr, /no such file or directory/);
  });
});
