// The install flow's pure parts: the order of an InstallPlan's steps and the RBAC generated from a
// CSV, the interim resolver (channel heads, startingCSV, upgrades along replaces/skips, one level of
// dependencies, OLM's messages), and the CSV state machine's transitions against a small fake client.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../../client/types.js';
import type { ApiBundle } from '../../api/api.js';
import type { CatalogSnapshot, ResolveInput } from '../resolver/types.js';
import { CsvSync } from './csv.js';
import { installModeProblem } from './operatorgroup.js';
import { simpleResolve } from './simple-resolve.js';
import { planSteps } from './steps.js';

type Json = Record<string, unknown>;

function bundle(csvName: string, over: Partial<ApiBundle> = {}, csvSpec: Json = {}, objects: Json[] = []): ApiBundle {
  const [pkg, v] = csvName.split('.v') as [string, string];
  const csv = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', metadata: { name: csvName }, spec: csvSpec };
  return {
    csvName,
    packageName: pkg,
    channelName: 'stable',
    csvJson: JSON.stringify(csv),
    object: [...objects, csv].map((o) => JSON.stringify(o)),
    bundlePath: '',
    providedApis: [],
    requiredApis: [],
    version: v,
    skipRange: '',
    dependencies: [],
    properties: [],
    replaces: '',
    skips: [],
    ...over,
  };
}

const crd = (name: string): Json => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } });
const key = { name: 'cat', namespace: 'ns' };

describe('planSteps', () => {
  it('orders CRDs of every bundle first, then CSVs, RBAC, and other objects', () => {
    const spec = {
      install: {
        spec: {
          permissions: [{ serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }],
          clusterPermissions: [{ serviceAccountName: 'op', rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] }],
        },
      },
    };
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } };
    const steps = planSteps(
      [
        { bundle: bundle('a.v1.0.0', {}, spec, [cm, crd('as.example.com')]), catalog: key, subscription: 'a' },
        { bundle: bundle('b.v2.0.0', {}, {}, [crd('bs.example.com')]), catalog: key, subscription: 'b', replaces: 'b.v1.0.0' },
      ],
      'ns',
    );
    assert.deepEqual(
      steps.map((s) => [s.resolving, s.resource.kind, s.resource.name, s.status]),
      [
        ['a.v1.0.0', 'CustomResourceDefinition', 'as.example.com', 'Unknown'],
        ['b.v2.0.0', 'CustomResourceDefinition', 'bs.example.com', 'Unknown'],
        ['a.v1.0.0', 'ClusterServiceVersion', 'a.v1.0.0', 'Unknown'],
        ['b.v2.0.0', 'ClusterServiceVersion', 'b.v2.0.0', 'Unknown'],
        ['a.v1.0.0', 'ServiceAccount', 'op', 'Unknown'],
        ['a.v1.0.0', 'Role', 'a.v1.0.0-op', 'Unknown'],
        ['a.v1.0.0', 'ClusterRole', 'a.v1.0.0-op', 'Unknown'],
        ['a.v1.0.0', 'RoleBinding', 'a.v1.0.0-op', 'Unknown'],
        ['a.v1.0.0', 'ClusterRoleBinding', 'a.v1.0.0-op', 'Unknown'],
        ['a.v1.0.0', 'ConfigMap', 'settings', 'Unknown'],
      ],
    );
    const csvB = JSON.parse(steps[3]!.resource.manifest) as Json;
    assert.equal((csvB.spec as Json).replaces, 'b.v1.0.0', 'an upgrade CSV names what it replaces');
    assert.equal((csvB.metadata as Json).namespace, 'ns');
    const crb = JSON.parse(steps[8]!.resource.manifest) as Json;
    assert.deepEqual(crb.subjects, [{ kind: 'ServiceAccount', name: 'op', namespace: 'ns' }]);
    assert.equal(((crb.metadata as Json).labels as Json)['olm.owner'], 'a.v1.0.0');
    assert.deepEqual(
      [steps[4]!.resource.group, steps[4]!.resource.version, steps[5]!.resource.group, steps[5]!.resource.catalogSource],
      ['', 'v1', 'rbac.authorization.k8s.io', 'cat'],
    );
  });
});

describe('simpleResolve', () => {
  const snapshot = (bundles: ApiBundle[], name = 'cat', priority = 0): CatalogSnapshot => ({
    key: { name, namespace: 'ns' },
    priority,
    bundles,
    defaultChannels: Object.fromEntries(bundles.map((b) => [b.packageName, 'stable'])),
  });
  const graph = [bundle('pg.v1.0.0'), bundle('pg.v1.1.0', { replaces: 'pg.v1.0.0' }), bundle('pg.v1.2.0', { replaces: 'pg.v1.1.0' })];
  const input = (sub: Partial<ResolveInput['subscriptions'][0]>, catalogs = [snapshot(graph)], installed: ResolveInput['installed'] = []): ResolveInput => ({
    namespace: 'ns',
    subscriptions: [{ name: 's', namespace: 'ns', package: 'pg', source: 'cat', sourceNamespace: 'ns', ...sub }],
    installed,
    catalogs,
  });
  const names = async (i: ResolveInput): Promise<string[]> => {
    const r = await simpleResolve(i);
    assert.ok(r.ok, JSON.stringify(r));
    return r.steps.map((s) => `${s.bundle.csvName}${s.replaces ? `<${s.replaces}` : ''}`);
  };

  it('picks the channel head, the startingCSV, or the next bundle along replaces', async () => {
    assert.deepEqual(await names(input({})), ['pg.v1.2.0']);
    assert.deepEqual(await names(input({ startingCSV: 'pg.v1.0.0' })), ['pg.v1.0.0']);
    assert.deepEqual(await names(input({ installedCSV: 'pg.v1.0.0' })), ['pg.v1.1.0<pg.v1.0.0']);
    assert.deepEqual(await names(input({ installedCSV: 'pg.v1.2.0' })), [], 'at the latest known');
  });

  it('follows skips to the head', async () => {
    const skipping = [
      bundle('pg.v1.0.0'),
      bundle('pg.v1.1.0', { replaces: 'pg.v1.0.0' }),
      bundle('pg.v1.2.0', { replaces: 'pg.v1.0.0', skips: ['pg.v1.1.0'] }),
    ];
    assert.deepEqual(await names(input({ installedCSV: 'pg.v1.0.0' }, [snapshot(skipping)])), ['pg.v1.2.0<pg.v1.0.0']);
  });

  it('explains missing packages, channels, catalogs and startingCSVs as OLM does', async () => {
    const fail = async (i: ResolveInput): Promise<string> => {
      const r = await simpleResolve(i);
      assert.ok(!r.ok);
      assert.equal(r.reason, 'ConstraintsNotSatisfiable');
      return r.message;
    };
    assert.equal(
      await fail(input({ package: 'nope' })),
      'constraints not satisfiable: no operators found in package nope in the catalog referenced by subscription s, subscription s exists',
    );
    assert.equal(
      await fail(input({ channel: 'fast' })),
      'constraints not satisfiable: no operators found in channel fast of package pg in the catalog referenced by subscription s, subscription s exists',
    );
    assert.match(await fail(input({ source: 'other' })), /no operators found from catalog other in namespace ns referenced by subscription s/);
    assert.match(await fail(input({ startingCSV: 'pg.v9.0.0' })), /no operators found with name pg.v9.0.0 in channel stable of package pg/);
  });

  it('adds what olm.package.required and olm.gvk.required ask for, one level deep, unless installed', async () => {
    const gvk = { group: 'monitoring.example.com', version: 'v1', kind: 'Monitor' };
    const app = bundle('app.v1.0.0', {
      dependencies: [
        { type: 'olm.package.required', value: JSON.stringify({ packageName: 'db', versionRange: '>=1.0.0 <2.0.0' }) },
        { type: 'olm.gvk.required', value: JSON.stringify(gvk) },
      ],
    });
    const db = [bundle('db.v1.5.0'), bundle('db.v2.0.0', { replaces: 'db.v1.5.0' })];
    db[1]!.channelName = 'next';
    const mon = bundle('mon.v1.0.0', { providedApis: [gvk] });
    const cats = [snapshot([app, ...db]), snapshot([mon], 'other', 10)];
    const i = input({ package: 'app' }, cats);
    assert.deepEqual(await names(i), ['mon.v1.0.0', 'db.v1.5.0', 'app.v1.0.0']);
    const r = await simpleResolve(i);
    assert.ok(r.ok);
    assert.deepEqual(r.steps[0]!.catalog, { name: 'other', namespace: 'ns' });
    assert.equal(r.steps[0]!.subscription, undefined);
    // Installed operators satisfy dependencies.
    const installed = [{ csvName: 'mon.v0.9.0', providedApis: [gvk] }];
    assert.deepEqual(await names(input({ package: 'app' }, cats, installed)), ['db.v1.5.0', 'app.v1.0.0']);
    // Nothing provides it.
    const r2 = await simpleResolve(input({ package: 'app' }, [snapshot([app, ...db])]));
    assert.ok(!r2.ok);
    assert.match(r2.message, /bundle app.v1.0.0 requires an operator providing monitoring.example.com\/v1\/Monitor/);
  });
});

/** Just what CsvSync uses: get, merge patch, delete, over a map of objects. */
class FakeClient {
  readonly objects = new Map<string, Json>();
  private k(gvr: GVR, ns: string | undefined, name: string): string {
    return `${gvr.resource}/${ns ?? ''}/${name}`;
  }
  put(gvr: GVR, o: Json): void {
    const meta = o.metadata as Json;
    this.objects.set(this.k(gvr, meta.namespace as string | undefined, meta.name as string), o);
  }
  get(gvr: GVR, ns: string | undefined, name: string): Promise<KubeObject> {
    const o = this.objects.get(this.k(gvr, ns, name));
    if (!o) return Promise.reject(new StatusError({ code: 404, reason: 'NotFound', message: `${name} not found` }));
    return Promise.resolve(structuredClone(o) as KubeObject);
  }
  patch(gvr: GVR, ns: string | undefined, name: string, _t: string, body: Json): Promise<KubeObject> {
    const o = this.objects.get(this.k(gvr, ns, name))!;
    const merge = (a: Json, b: Json): Json => {
      for (const [k, v] of Object.entries(b))
        a[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? merge(a[k] as Json, v as Json) : v;
      return a;
    };
    merge(o, structuredClone(body));
    return Promise.resolve(o as KubeObject);
  }
  delete(gvr: GVR, ns: string | undefined, name: string): Promise<KubeObject> {
    this.objects.delete(this.k(gvr, ns, name));
    return Promise.resolve({} as KubeObject);
  }
}

describe('CsvSync', () => {
  const CSVS: GVR = { group: 'operators.coreos.com', version: 'v1alpha1', resource: 'clusterserviceversions' };
  const CRDS: GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
  const SAS: GVR = { group: '', version: 'v1', resource: 'serviceaccounts' };
  const og = { metadata: { name: 'og', namespace: 'ns' }, spec: { targetNamespaces: ['ns'] } } as KubeObject;
  const csvSpec = {
    installModes: [{ type: 'OwnNamespace', supported: true }],
    customresourcedefinitions: { owned: [{ name: 'dbs.example.com', version: 'v1', kind: 'DB' }] },
    install: { spec: { deployments: [{ name: 'db-operator' }], permissions: [{ serviceAccountName: 'db' }] } },
  };

  async function phases(fake: FakeClient, name: string, ogs: KubeObject[], rounds: number): Promise<string[]> {
    const sync = new CsvSync(fake as unknown as KubeClient);
    const seen: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const csvs = [...fake.objects.entries()].filter(([k]) => k.startsWith('clusterserviceversions/')).map(([, o]) => structuredClone(o) as KubeObject);
      await sync.syncNamespace('ns', csvs, ogs, ['ns']);
      const o = fake.objects.get(`clusterserviceversions/ns/${name}`);
      const s = (o?.status ?? {}) as Json;
      seen.push(o ? `${String(s.phase)}/${String(s.reason)}` : 'deleted');
    }
    return seen;
  }

  it('walks Pending → InstallReady → Installing → Succeeded once the requirements are there', async () => {
    const fake = new FakeClient();
    fake.put(CSVS, { metadata: { name: 'db.v1', namespace: 'ns' }, spec: csvSpec });
    const before = await phases(fake, 'db.v1', [og], 3);
    // The first round writes the OperatorGroup's annotations.
    assert.deepEqual(before, ['undefined/undefined', 'Pending/RequirementsUnknown', 'Pending/RequirementsNotMet']);
    const reqs = (fake.objects.get('clusterserviceversions/ns/db.v1')!.status as Json).requirementStatus as Json[];
    assert.deepEqual(
      reqs.map((r) => [r.kind, r.name, r.status, r.message]),
      [
        ['CustomResourceDefinition', 'dbs.example.com', 'NotPresent', 'CRD is not present'],
        ['ServiceAccount', 'db', 'NotPresent', 'Service account does not exist'],
      ],
    );
    fake.put(CRDS, { metadata: { name: 'dbs.example.com', uid: 'u1' }, status: { conditions: [{ type: 'Established', status: 'True' }] } });
    fake.put(SAS, { metadata: { name: 'db', namespace: 'ns', uid: 'u2' } });
    assert.deepEqual(await phases(fake, 'db.v1', [og], 4), [
      'InstallReady/AllRequirementsMet',
      'Installing/InstallSucceeded',
      'Succeeded/InstallSucceeded',
      'Succeeded/InstallSucceeded',
    ]);
    const csv = fake.objects.get('clusterserviceversions/ns/db.v1')!;
    assert.match(String((csv.status as Json).message), /^install strategy completed with no errors; waiting for a container runtime: .*deployment db-operator/);
    assert.deepEqual((csv.metadata as Json).annotations, { 'olm.operatorGroup': 'og', 'olm.operatorNamespace': 'ns', 'olm.targetNamespaces': 'ns' });
    // The history of phases, as OLM keeps it in status.conditions.
    assert.deepEqual(
      ((csv.status as Json).conditions as Json[]).map((c) => c.phase),
      ['Pending', 'Pending', 'InstallReady', 'Installing', 'Succeeded'],
    );
  });

  it('fails without an OperatorGroup or with two, and starts over once there is one', async () => {
    const fake = new FakeClient();
    fake.put(CSVS, { metadata: { name: 'db.v1', namespace: 'ns' }, spec: csvSpec });
    assert.deepEqual(await phases(fake, 'db.v1', [], 2), ['Failed/NoOperatorGroup', 'Failed/NoOperatorGroup']);
    assert.equal((fake.objects.get('clusterserviceversions/ns/db.v1')!.status as Json).message, 'csv in namespace with no operatorgroups');
    assert.deepEqual(await phases(fake, 'db.v1', [og, og], 1), ['Failed/TooManyOperatorGroups']);
    assert.deepEqual(await phases(fake, 'db.v1', [og], 2), ['Failed/TooManyOperatorGroups', 'Pending/RequirementsUnknown']);
  });

  it('marks a replaced CSV Replacing, then deletes it once its successor Succeeded', async () => {
    const fake = new FakeClient();
    const annotations = { 'olm.operatorGroup': 'og', 'olm.operatorNamespace': 'ns', 'olm.targetNamespaces': 'ns' };
    fake.put(CSVS, { metadata: { name: 'db.v1', namespace: 'ns', annotations }, spec: csvSpec, status: { phase: 'Succeeded', reason: 'InstallSucceeded' } });
    fake.put(CSVS, { metadata: { name: 'db.v2', namespace: 'ns', annotations }, spec: { ...csvSpec, replaces: 'db.v1' }, status: { phase: 'Installing' } });
    assert.deepEqual(await phases(fake, 'db.v1', [og], 1), ['Replacing/BeingReplaced']);
    assert.equal((fake.objects.get('clusterserviceversions/ns/db.v1')!.status as Json).message, 'being replaced by csv: db.v2');
    (fake.objects.get('clusterserviceversions/ns/db.v2')!.status as Json).phase = 'Succeeded';
    assert.deepEqual(await phases(fake, 'db.v1', [og], 1), ['deleted']);
  });
});

describe('installModeProblem', () => {
  const csv = (modes: [string, boolean][]): KubeObject => ({ spec: { installModes: modes.map(([type, supported]) => ({ type, supported })) } });
  const own = csv([
    ['OwnNamespace', true],
    ['SingleNamespace', false],
    ['MultiNamespace', false],
    ['AllNamespaces', false],
  ]);
  const every = csv([
    ['OwnNamespace', true],
    ['SingleNamespace', true],
    ['MultiNamespace', true],
    ['AllNamespaces', true],
  ]);
  it('answers as InstallModeSet.Supports, with its texts', () => {
    const cases: [KubeObject, string[], string | undefined][] = [
      [own, ['ops'], undefined],
      [own, [''], 'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces'],
      [own, ['team-a'], 'SingleNamespace InstallModeType not supported, cannot configure to watch one namespace'],
      [own, ['ops', 'team-a'], 'MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces'],
      [own, [], 'operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces'],
      [every, ['ops', 'team-a', 'team-b'], undefined],
      [every, ['team-a', ''], 'operatorgroup has invalid selected namespaces, NamespaceAll found when |selected namespaces| > 1'],
      [csv([['MultiNamespace', true]]), ['ops', 'team-a'], 'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace'],
      [csv([]), ['ops'], 'OwnNamespace InstallModeType not supported, cannot configure to watch own namespace'],
    ];
    for (const [c, targets, want] of cases) {
      const got = installModeProblem(c, 'ops', targets);
      assert.equal(got?.message, want, targets.join(','));
      if (want) assert.equal(got?.reason, 'UnsupportedOperatorGroup');
    }
    assert.deepEqual(
      installModeProblem(
        csv([
          ['OwnNamespace', true],
          ['OwnNamespace', false],
        ]),
        'ops',
        ['ops'],
      ),
      {
        reason: 'InvalidInstallModes',
        message: 'InstallMode list contains duplicates, cannot make set: [{OwnNamespace true} {OwnNamespace false}]',
      },
    );
  });
});
