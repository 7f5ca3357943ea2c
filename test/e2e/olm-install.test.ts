// Installing operators with OLM's objects on kplane (issue 27), with kubectl 1.33 against a real
// `kplane catalog serve` of the DBaaS catalog: CatalogSource + OperatorGroup + Subscription →
// InstallPlan Complete → CRDs Established, CSV Succeeded (its deployments reported as waiting for a
// container runtime), RBAC from the CSV's permissions; Manual approval; an upgrade along `replaces`
// (the old CSV replaced and deleted), and again when the catalog publishes a newer bundle; a package that does not exist (ResolutionFailed); no
// OperatorGroup (NoOperatorGroup); uninstall (delete subscription keeps the CSV, delete csv removes
// its RBAC, CRDs kept); the catalog server stopped (CatalogSourcesUnhealthy).
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultControllers } from '../../src/controllers/index.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { olm } from '../../src/controlplane/olm-module.js';
import { serveCatalog, stopCatalog, type ServedCatalog } from '../support/catalog-serve.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tools } from '../support/tools.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const catalogDir = join(root, 'examples/dbaas-catalog/catalog');

type Json = Record<string, unknown>;

const setup = (ns: string, address: string, withGroup = true): string =>
  [
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}`,
    `apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  name: dbaas\n  namespace: ${ns}\nspec:\n  sourceType: grpc\n  address: "${address}"\n  displayName: DBaaS Operators`,
    ...(withGroup
      ? [`apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: ${ns}\nspec:\n  targetNamespaces: [${ns}]`]
      : []),
  ].join('\n---\n');

const subscription = (ns: string, name: string, pkg: string, extra: string[] = []): string =>
  [
    'apiVersion: operators.coreos.com/v1alpha1',
    'kind: Subscription',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${ns}`,
    'spec:',
    `  name: ${pkg}`,
    '  source: dbaas',
    `  sourceNamespace: ${ns}`,
    ...extra.map((l) => `  ${l}`),
    '',
  ].join('\n');

describe('OLM install flow: Subscription → InstallPlan → CSV', { timeout: 300_000 }, () => {
  let server: TestServer;
  let kc: KubectlSession;
  let dir: string;
  let catalog: ServedCatalog | undefined;
  let address: string;

  before(async () => {
    catalog = await serveCatalog();
    address = `127.0.0.1:${catalog.port}`;
    server = await startTestServer({
      storage: 'memory',
      apis: [...defaultModules(), olm({ initialBackoffMs: 100, maxBackoffMs: 500, log: () => {}, installResyncMs: 1000 })],
      controllers: defaultControllers(),
    });
    dir = await mkdtemp(join(tmpdir(), 'kplane-olm-install-'));
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
  });

  after(async () => {
    await stopCatalog(catalog);
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const getJson = async (args: string[]): Promise<Json> => JSON.parse(await kc.ok([...args, '-o', 'json'])) as Json;
  const status = async (kind: string, name: string, ns: string): Promise<Json> => ((await getJson(['get', kind, name, '-n', ns])).status ?? {}) as Json;
  const conditions = (s: Json): Json[] => (s.conditions ?? []) as Json[];
  const apply = async (name: string, yaml: string): Promise<void> => {
    await kc.ok(['apply', '-f', await kc.file(name, yaml)]);
  };
  const catalogReady = async (ns: string): Promise<void> => {
    await eventually(30_000, `the catalog of ${ns} to be READY`, async () => {
      const s = await status('catalogsource', 'dbaas', ns);
      return (s.connectionState as Json | undefined)?.lastObservedState === 'READY' ? true : undefined;
    });
  };
  const csvPhase = async (name: string, ns: string, phase: string): Promise<Json> =>
    eventually(60_000, `csv ${name} to be ${phase}`, async () => {
      const s: Json = await status('csv', name, ns).catch(() => ({}));
      return s.phase === phase ? s : undefined;
    });

  it('installs pg-operator from a Subscription: InstallPlan Complete, CRDs Established, CSV Succeeded, RBAC', async () => {
    await apply('dbaas.yaml', setup('dbaas', address));
    await catalogReady('dbaas');
    await apply('sub.yaml', subscription('dbaas', 'pg', 'pg-operator', ['channel: stable-v2']));

    const sub = await eventually(60_000, 'the Subscription to be at the latest known CSV', async () => {
      const s = await status('subscription', 'pg', 'dbaas');
      return s.state === 'AtLatestKnown' ? s : undefined;
    });
    assert.equal(sub.currentCSV, 'pg-operator.v2.4.0');
    assert.equal(sub.installedCSV, 'pg-operator.v2.4.0');
    const ref = sub.installPlanRef as Json;
    assert.equal(ref.kind, 'InstallPlan');
    assert.match(String(ref.name), /^install-/);
    const health = conditions(sub).find((c) => c.type === 'CatalogSourcesUnhealthy');
    assert.equal(health?.status, 'False');
    assert.equal(health?.reason, 'AllCatalogSourcesHealthy');

    const plan = await getJson(['get', 'installplan', String(ref.name), '-n', 'dbaas']);
    const spec = plan.spec as Json;
    assert.deepEqual(spec.clusterServiceVersionNames, ['pg-operator.v2.4.0']);
    assert.equal(spec.approval, 'Automatic');
    assert.equal(spec.approved, true);
    assert.equal(((plan.metadata as Json).ownerReferences as Json[])[0]?.kind, 'Subscription');
    const ps = plan.status as Json;
    assert.equal(ps.phase, 'Complete');
    const steps = (ps.plan as Json[]).map((s) => [(s.resource as Json).kind, (s.resource as Json).name, s.status]);
    // OLM's order: CRDs, the CSV, then the RBAC of the CSV's permissions.
    assert.deepEqual(
      steps.map((s) => s[0]),
      ['CustomResourceDefinition', 'CustomResourceDefinition', 'ClusterServiceVersion', 'ServiceAccount', 'Role', 'RoleBinding'],
    );
    assert.ok(
      steps.every((s) => s[2] === 'Created'),
      JSON.stringify(steps),
    );
    for (const s of ps.plan as Json[]) assert.equal((s.resource as Json).catalogSource, 'dbaas');

    const ipTable = await kc.ok(['get', 'installplans', '-n', 'dbaas']);
    assert.match(ipTable, /^NAME\s+CSV\s+APPROVAL\s+APPROVED\n/);
    assert.match(ipTable, /install-\S+\s+pg-operator.v2.4.0\s+Automatic\s+true/);

    for (const crd of ['perconapgclusters.pg.dbaas.example.com', 'servicemonitors.monitoring.coreos.com']) {
      const c = await getJson(['get', 'crd', crd]);
      const est = ((c.status as Json).conditions as Json[]).find((x) => x.type === 'Established');
      assert.equal(est?.status, 'True', crd);
    }
    const csv = await csvPhase('pg-operator.v2.4.0', 'dbaas', 'Succeeded');
    assert.equal(csv.reason, 'InstallSucceeded');
    assert.match(String(csv.message), /^install strategy completed with no errors; waiting for a container runtime: .*deployment pg-operator/);
    const reqs = (csv.requirementStatus as Json[]).map((r) => [r.kind, r.name, r.status]);
    assert.deepEqual(reqs, [
      ['CustomResourceDefinition', 'perconapgclusters.pg.dbaas.example.com', 'Present'],
      ['CustomResourceDefinition', 'servicemonitors.monitoring.coreos.com', 'Present'],
      ['ServiceAccount', 'pg-operator', 'Present'],
    ]);
    const phases = conditions(csv).map((c) => c.phase);
    assert.deepEqual(phases, ['Pending', 'InstallReady', 'Installing', 'Succeeded']);
    const annotations = ((await getJson(['get', 'csv', 'pg-operator.v2.4.0', '-n', 'dbaas'])).metadata as Json).annotations as Record<string, string>;
    assert.equal(annotations['olm.operatorGroup'], 'og');
    assert.equal(annotations['olm.targetNamespaces'], 'dbaas');

    const table = await kc.ok(['get', 'csv', '-n', 'dbaas']);
    assert.match(table, /^NAME\s+DISPLAY\s+VERSION\s+RELEASE\s+REPLACES\s+PHASE\n/);
    assert.match(table, /^pg-operator.v2.4.0\s+Percona Operator for PostgreSQL\s+2.4.0\s+Succeeded$/m);

    // The RBAC of the CSV's permissions, owned by the CSV.
    const sa = await getJson(['get', 'serviceaccount', 'pg-operator', '-n', 'dbaas']);
    assert.equal(((sa.metadata as Json).ownerReferences as Json[])[0]?.name, 'pg-operator.v2.4.0');
    const role = await getJson(['get', 'role', 'pg-operator.v2.4.0-pg-operator', '-n', 'dbaas']);
    assert.deepEqual(((role.rules as Json[])[0] as Json).verbs, ['*']);
    await kc.ok(['get', 'rolebinding', 'pg-operator.v2.4.0-pg-operator', '-n', 'dbaas']);
    // The operator's API works: a custom resource is accepted.
    await apply('cluster.yaml', 'apiVersion: pg.dbaas.example.com/v2\nkind: PerconaPGCluster\nmetadata:\n  name: db1\n  namespace: dbaas\nspec: {}\n');
  });

  it('waits for approval with installPlanApproval: Manual, then installs', async () => {
    await apply('manual.yaml', setup('manual', address));
    await catalogReady('manual');
    await apply('sub-manual.yaml', subscription('manual', 'pg', 'pg-operator', ['channel: stable-v2', 'installPlanApproval: Manual']));
    const sub = await eventually(60_000, 'an InstallPlan waiting for approval', async () => {
      const s = await status('subscription', 'pg', 'manual');
      const pending = conditions(s).find((c) => c.type === 'InstallPlanPending');
      return pending?.reason === 'RequiresApproval' ? s : undefined;
    });
    assert.equal(sub.state, 'UpgradePending');
    const name = String((sub.installPlanRef as Json).name);
    const plan = await getJson(['get', 'installplan', name, '-n', 'manual']);
    assert.equal((plan.status as Json).phase, 'RequiresApproval');
    assert.equal((plan.spec as Json).approved, false);
    const none = await kc.k(['get', 'csv', '-n', 'manual', '-o', 'name']);
    assert.equal(none.stdout.trim(), '', 'nothing is installed before approval');

    await kc.ok(['patch', 'installplan', name, '-n', 'manual', '--type', 'merge', '-p', '{"spec":{"approved":true}}']);
    await eventually(60_000, 'the approved plan to complete', async () =>
      (await status('installplan', name, 'manual')).phase === 'Complete' ? true : undefined,
    );
    await csvPhase('pg-operator.v2.4.0', 'manual', 'Succeeded');
  });

  it('upgrades along replaces: startingCSV v2.3.0, then a second InstallPlan for v2.4.0; the old CSV goes', async () => {
    await apply('upgrade.yaml', setup('upgrade', address));
    await catalogReady('upgrade');
    await apply('sub-upgrade.yaml', subscription('upgrade', 'pg', 'pg-operator', ['channel: stable-v2', 'startingCSV: pg-operator.v2.3.0']));
    const sub = await eventually(90_000, 'the Subscription to reach v2.4.0', async () => {
      const s = await status('subscription', 'pg', 'upgrade');
      return s.installedCSV === 'pg-operator.v2.4.0' && s.state === 'AtLatestKnown' ? s : undefined;
    });
    assert.equal(sub.currentCSV, 'pg-operator.v2.4.0');
    const plans = (await getJson(['get', 'installplans', '-n', 'upgrade'])).items as Json[];
    assert.deepEqual(plans.map((p) => (p.spec as Json).clusterServiceVersionNames).sort(), [['pg-operator.v2.3.0'], ['pg-operator.v2.4.0']]);
    await eventually(60_000, 'the replaced CSV to be deleted', async () => {
      const r = await kc.k(['get', 'csv', 'pg-operator.v2.3.0', '-n', 'upgrade']);
      return r.code !== 0 && /not found/.test(r.stderr) ? true : undefined;
    });
    const csv = await csvPhase('pg-operator.v2.4.0', 'upgrade', 'Succeeded');
    assert.equal(csv.reason, 'InstallSucceeded');
    const table = await kc.ok(['get', 'csv', '-n', 'upgrade']);
    assert.match(table, /^pg-operator.v2.4.0\s+Percona Operator for PostgreSQL\s+2.4.0\s+pg-operator.v2.3.0\s+Succeeded$/m);
    // The ServiceAccount both versions use survives the old CSV.
    await kc.ok(['get', 'serviceaccount', 'pg-operator', '-n', 'upgrade']);
  });

  it('story 1: pxc-operator from the one catalog brings the operators it depends on (resolved), all Succeeded', async () => {
    await apply('story.yaml', setup('story', address));
    await catalogReady('story');
    await apply('sub-pxc.yaml', subscription('story', 'pxc', 'pxc-operator', ['channel: stable-v1']));
    const sub = await eventually(90_000, 'the pxc Subscription at the latest known CSV', async () => {
      const s = await status('subscription', 'pxc', 'story');
      return s.state === 'AtLatestKnown' ? s : undefined;
    });
    assert.equal(sub.installedCSV, 'pxc-operator.v1.2.0');
    const plan = await getJson(['get', 'installplan', String((sub.installPlanRef as Json).name), '-n', 'story']);
    const csvs = ((plan.spec as Json).clusterServiceVersionNames as string[]).slice().sort();
    // pxc-operator 1.2.0 requires monitoring-operator 1.x (olm.package.required) and the
    // cloud.dbaas.example.com/v1alpha1 BackupLocation API (olm.gvk.required): the resolver picks both.
    assert.equal(csvs.length, 3, JSON.stringify(csvs));
    assert.match(csvs[0]!, /^cloud-provider-operator\.v0\./);
    assert.match(csvs[1]!, /^monitoring-operator\.v1\./);
    assert.equal(csvs[2], 'pxc-operator.v1.2.0');
    for (const csv of csvs) await csvPhase(csv, 'story', 'Succeeded');
    // The APIs of all three answer: a cluster, its monitoring config and its backup location.
    await apply(
      'story-crs.yaml',
      [
        'apiVersion: cloud.dbaas.example.com/v1alpha1\nkind: BackupLocation\nmetadata:\n  name: s3\n  namespace: story\nspec: {}',
        'apiVersion: pxc.dbaas.example.com/v1\nkind: PerconaXtraDBCluster\nmetadata:\n  name: db1\n  namespace: story\nspec: {}',
      ].join('\n---\n'),
    );
  });

  it('reports ResolutionFailed for a package that does not exist', async () => {
    await apply('missing.yaml', setup('missing', address));
    await catalogReady('missing');
    await apply('sub-missing.yaml', subscription('missing', 'nope', 'no-such-operator'));
    const failed = await eventually(60_000, 'ResolutionFailed', async () => {
      const s = await status('subscription', 'nope', 'missing');
      return conditions(s).find((c) => c.type === 'ResolutionFailed');
    });
    assert.equal(failed.status, 'True');
    assert.equal(failed.reason, 'ConstraintsNotSatisfiable');
    assert.match(String(failed.message), /no operators found in package no-such-operator in the catalog referenced by subscription nope/);
    const plans = (await getJson(['get', 'installplans', '-n', 'missing'])).items as Json[];
    assert.equal(plans.length, 0);
  });

  it('fails a CSV in a namespace without an OperatorGroup (NoOperatorGroup)', async () => {
    await apply('noog.yaml', setup('noog', address, false));
    await catalogReady('noog');
    await apply('sub-noog.yaml', subscription('noog', 'pg', 'pg-operator', ['channel: stable-v2']));
    const csv = await csvPhase('pg-operator.v2.4.0', 'noog', 'Failed');
    assert.equal(csv.reason, 'NoOperatorGroup');
    assert.equal(csv.message, 'csv in namespace with no operatorgroups');
  });

  it('uninstalls: delete subscription keeps the CSV; delete csv removes its RBAC, the CRDs stay', async () => {
    await kc.ok(['delete', 'subscription', 'pg', '-n', 'dbaas']);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await status('csv', 'pg-operator.v2.4.0', 'dbaas')).phase, 'Succeeded');
    await kc.ok(['delete', 'csv', 'pg-operator.v2.4.0', '-n', 'dbaas']);
    await eventually(60_000, 'the ServiceAccount, Role and RoleBinding to be collected', async () => {
      for (const [kind, name] of [
        ['serviceaccount', 'pg-operator'],
        ['role', 'pg-operator.v2.4.0-pg-operator'],
        ['rolebinding', 'pg-operator.v2.4.0-pg-operator'],
      ] as const) {
        const r = await kc.k(['get', kind, name, '-n', 'dbaas']);
        if (r.code === 0) return undefined;
      }
      return true;
    });
    await kc.ok(['get', 'crd', 'perconapgclusters.pg.dbaas.example.com']);
    await kc.ok(['get', 'perconapgcluster', 'db1', '-n', 'dbaas']);
  });

  it('upgrades when the catalog publishes a newer bundle in the channel', async () => {
    // A copy of the catalog whose stable-v2 channel ends at v2.3.0; then v2.4.0 is published.
    const copy = join(dir, 'catalog-copy');
    await cp(catalogDir, copy, { recursive: true });
    const file = join(copy, 'pg-operator', 'catalog.yaml');
    const published = await readFile(file, 'utf8');
    const entry = '- name: pg-operator.v2.4.0\n  replaces: pg-operator.v2.3.0\nname: stable-v2\n';
    assert.ok(published.includes(entry));
    await writeFile(file, published.replace(entry, 'name: stable-v2\n'));
    let served = await serveCatalog(copy);
    try {
      await apply('publish.yaml', setup('publish', `127.0.0.1:${served.port}`));
      await catalogReady('publish');
      await apply('sub-publish.yaml', subscription('publish', 'pg', 'pg-operator', ['channel: stable-v2']));
      await csvPhase('pg-operator.v2.3.0', 'publish', 'Succeeded');
      const before = await status('subscription', 'pg', 'publish');
      assert.equal(before.state, 'AtLatestKnown');
      assert.equal(before.installedCSV, 'pg-operator.v2.3.0');

      // The new catalog, served at the same address: the CatalogSource reconnects and reads it again.
      const port = served.port;
      await stopCatalog(served);
      await writeFile(file, published);
      served = await serveCatalog(copy, port);
      const after = await eventually(90_000, 'the Subscription to move to v2.4.0', async () => {
        const s = await status('subscription', 'pg', 'publish');
        return s.installedCSV === 'pg-operator.v2.4.0' && s.state === 'AtLatestKnown' ? s : undefined;
      });
      assert.equal(after.currentCSV, 'pg-operator.v2.4.0');
      const csv = await csvPhase('pg-operator.v2.4.0', 'publish', 'Succeeded');
      assert.equal(csv.reason, 'InstallSucceeded');
      await eventually(60_000, 'the replaced CSV to be deleted', async () => {
        const r = await kc.k(['get', 'csv', 'pg-operator.v2.3.0', '-n', 'publish']);
        return r.code !== 0 ? true : undefined;
      });
    } finally {
      await stopCatalog(served);
    }
  });

  it('reports CatalogSourcesUnhealthy when the catalog server is gone', async () => {
    await stopCatalog(catalog);
    const cond = await eventually(60_000, 'CatalogSourcesUnhealthy', async () => {
      const s = await status('subscription', 'pg', 'manual');
      const c = conditions(s).find((x) => x.type === 'CatalogSourcesUnhealthy');
      return c?.status === 'True' ? c : undefined;
    });
    assert.equal(cond.reason, 'UnhealthyCatalogSourceFound');
    assert.equal(cond.message, 'targeted catalogsource manual/dbaas unhealthy');
  });
});
