// The install flow's faults (issue 27), with kubectl 1.33 and bundles handed to the flow by a test
// resolver (the Resolve the olm module takes): a bundle with an invalid CRD (InstallPlan Failed with
// the server's 422, nothing after the CRD applied, the Subscription's InstallPlanFailed); a CRD
// upgrade that would break stored custom resources (refused with OLM's message, the CRD unchanged);
// kplane stopped mid-plan and started again on the same data (the plan resumes at the step it
// stopped at and completes).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ApiBundle } from '../../src/catalog/api/api.js';
import type { Resolve, ResolvedStep } from '../../src/catalog/olm/resolver/types.js';
import { defaultControllers } from '../../src/controllers/index.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { olm } from '../../src/controlplane/olm-module.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tools } from '../support/tools.js';

type Json = Record<string, unknown>;

function crd(plural: string, kind: string, properties: Json): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } } } },
      ],
    },
  };
}

function bundle(pkg: string, version: string, crds: Json[], installModes: Json[] = [{ type: 'OwnNamespace', supported: true }]): ApiBundle {
  const csvName = `${pkg}.v${version}`;
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: csvName },
    spec: {
      displayName: pkg,
      version,
      installModes,
      customresourcedefinitions: { owned: crds.map((c) => ({ name: (c.metadata as Json).name, version: 'v1', kind: ((c.spec as Json).names as Json).kind })) },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: `${pkg}-operator`, spec: {} }],
          permissions: [{ serviceAccountName: pkg, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }],
        },
      },
    },
  };
  return {
    csvName,
    packageName: pkg,
    channelName: 'stable',
    csvJson: JSON.stringify(csv),
    object: [...crds, csv].map((o) => JSON.stringify(o)),
    bundlePath: '',
    providedApis: [],
    requiredApis: [],
    version,
    skipRange: '',
    dependencies: [],
    properties: [],
    replaces: '',
    skips: [],
  };
}

/** A resolver over an in-memory catalog: package → its bundles, oldest first; an installed one moves to the next. */
function testResolver(catalog: Map<string, ApiBundle[]>): Resolve {
  return (input) => {
    const steps: ResolvedStep[] = [];
    for (const sub of input.subscriptions) {
      const list = catalog.get(sub.package);
      if (!list) return { ok: false, reason: 'ConstraintsNotSatisfiable', message: `no package ${sub.package}` };
      const key = { name: sub.source, namespace: sub.sourceNamespace };
      if (sub.installedCSV) {
        const next = list[list.findIndex((b) => b.csvName === sub.installedCSV) + 1];
        if (next) steps.push({ bundle: next, catalog: key, subscription: sub.name, replaces: sub.installedCSV });
      } else steps.push({ bundle: list[0]!, catalog: key, subscription: sub.name });
    }
    return { ok: true, steps };
  };
}

const setup = (ns: string, sub: string, pkg: string, ogSpec = `{targetNamespaces: [${ns}]}`): string =>
  [
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}`,
    `apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata:\n  name: og\n  namespace: ${ns}\nspec: ${ogSpec}`,
    `apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: ${sub}\n  namespace: ${ns}\nspec:\n  name: ${pkg}\n  source: test\n  sourceNamespace: ${ns}`,
  ].join('\n---\n');

describe('OLM install flow faults', { timeout: 300_000 }, () => {
  const catalog = new Map<string, ApiBundle[]>();
  let dir: string;
  let dataDir: string;
  let server: TestServer | undefined;
  let kc: KubectlSession;

  const start = async (beforeInstallStep?: (plan: string, index: number) => void): Promise<void> => {
    server = await startTestServer({
      storage: 'sqlite',
      dataDir,
      apis: [
        ...defaultModules(),
        olm({ log: () => {}, resolve: testResolver(catalog), installResyncMs: 300, ...(beforeInstallStep ? { beforeInstallStep } : {}) }),
      ],
      controllers: defaultControllers(),
    });
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-olm-faults-'));
    dataDir = join(dir, 'data');
    await start();
  });

  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const getJson = async (args: string[]): Promise<Json> => JSON.parse(await kc.ok([...args, '-o', 'json'])) as Json;
  const apply = async (name: string, yaml: string): Promise<void> => {
    await kc.ok(['apply', '-f', await kc.file(name, yaml)]);
  };
  const plans = async (ns: string): Promise<Json[]> => (await getJson(['get', 'installplans', '-n', ns])).items as Json[];
  const planWith = (ns: string, what: string, probe: (p: Json) => boolean): Promise<Json> =>
    eventually(60_000, what, async () => (await plans(ns)).find(probe));
  const phaseOf = (p: Json): string => String((p.status as Json | undefined)?.phase ?? '');

  it('fails the InstallPlan with the server’s 422 for an invalid CRD; nothing after it is applied', async () => {
    const bad = crd('things', 'Thing', {});
    ((bad.spec as Json).names as Json).plural = 'Not_A_Plural';
    catalog.set('bad', [bundle('bad', '1.0.0', [bad])]);
    await apply('bad.yaml', setup('bad', 'bad', 'bad'));
    const plan = await planWith('bad', 'a failed plan', (p) => phaseOf(p) === 'Failed');
    const cond = ((plan.status as Json).conditions as Json[])[0]!;
    assert.equal(cond.type, 'Installed');
    assert.equal(cond.status, 'False');
    assert.equal(cond.reason, 'InstallComponentFailed');
    assert.match(String(cond.message), /^CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid: /);
    assert.deepEqual(
      ((plan.status as Json).plan as Json[]).map((s) => s.status),
      ['Unknown', 'Unknown', 'Unknown', 'Unknown', 'Unknown'],
    );
    const csvs = await kc.ok(['get', 'csv', '-n', 'bad', '-o', 'name']);
    assert.equal(csvs.trim(), '', 'no CSV without its CRDs');
    const failed = await eventually(30_000, 'the Subscription to report InstallPlanFailed', async () => {
      const s = (await getJson(['get', 'subscription', 'bad', '-n', 'bad'])).status as Json | undefined;
      return ((s?.conditions ?? []) as Json[]).find((c) => c.type === 'InstallPlanFailed');
    });
    assert.equal(failed.reason, 'InstallComponentFailed');
    assert.equal(failed.message, cond.message);
  });

  it('refuses a CRD upgrade that stored custom resources would not pass, with OLM’s message', async () => {
    catalog.set('widget', [bundle('widget', '1.0.0', [crd('widgets', 'Widget', { size: { type: 'string' } })])]);
    await apply('widget.yaml', setup('widget', 'widget', 'widget'));
    await eventually(60_000, 'widget v1 installed', async () => {
      const s: Json = await getJson(['get', 'csv', 'widget.v1.0.0', '-n', 'widget']).catch(() => ({}));
      return (s.status as Json | undefined)?.phase === 'Succeeded' ? true : undefined;
    });
    await apply('w1.yaml', 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: widget\nspec:\n  size: big\n');
    catalog.get('widget')!.push(bundle('widget', '2.0.0', [crd('widgets', 'Widget', { size: { type: 'integer' } })]));
    const plan = await planWith('widget', 'the upgrade plan to fail', (p) => phaseOf(p) === 'Failed');
    assert.deepEqual((plan.spec as Json).clusterServiceVersionNames, ['widget.v2.0.0']);
    const cond = ((plan.status as Json).conditions as Json[])[0]!;
    assert.equal(cond.reason, 'InstallComponentFailed');
    assert.match(
      String(cond.message),
      /^error validating existing CRs against new CRD's schema for "widgets.example.com": error validating custom resource against new schema for Widget widget\/w1: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"/,
    );
    const stored = await getJson(['get', 'crd', 'widgets.example.com']);
    const schema = JSON.stringify(stored.spec);
    assert.match(schema, /"size":\{"type":"string"\}/, 'the CRD is not changed');
    // The old operator stays.
    const csv = await getJson(['get', 'csv', 'widget.v1.0.0', '-n', 'widget']);
    assert.equal((csv.status as Json).phase, 'Succeeded');
  });

  it('checks install modes against the OperatorGroup and copies the CSV into its target namespaces', async () => {
    const csvOf = async (ns: string): Promise<Json | undefined> => {
      const items = (await getJson(['get', 'csv', '-n', ns])).items as Json[];
      return items.find((c) => (c.metadata as Json).name === 'modes.v1.0.0');
    };
    const csvWith = (ns: string, what: string, probe: (c: Json) => boolean): Promise<Json> =>
      eventually(60_000, what, async () => {
        const c = await csvOf(ns);
        return c && probe(c) ? c : undefined;
      });
    const status = (c: Json): Json => (c.status ?? {}) as Json;
    catalog.set('modes', [
      bundle(
        'modes',
        '1.0.0',
        [],
        [
          { type: 'OwnNamespace', supported: true },
          { type: 'SingleNamespace', supported: false },
          { type: 'MultiNamespace', supported: true },
          { type: 'AllNamespaces', supported: false },
        ],
      ),
    ]);
    await apply('teams.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n');
    // A group of every namespace: the operator does not support AllNamespaces.
    await apply('modes.yaml', setup('modes', 'modes', 'modes', '{}'));
    const failed = await csvWith('modes', 'the CSV to fail on the OperatorGroup', (c) => status(c).phase === 'Failed');
    assert.equal(status(failed).reason, 'UnsupportedOperatorGroup');
    assert.equal(status(failed).message, 'AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces');
    assert.equal(((failed.metadata as Json).annotations as Json)['olm.targetNamespaces'], '');
    assert.equal(await csvOf('team-a'), undefined, 'a failed CSV is not copied');
    // Its own namespace and team-a: MultiNamespace.
    await kc.ok(['patch', 'operatorgroup', 'og', '-n', 'modes', '--type=merge', '-p', '{"spec":{"targetNamespaces":["modes","team-a"]}}']);
    const ok = await csvWith('modes', 'the CSV to succeed', (c) => status(c).phase === 'Succeeded');
    const history = (status(ok).conditions as Json[]).map((c) => `${String(c.phase)}/${String(c.reason)}`);
    assert.ok(history.includes('Pending/RequirementsUnknown'), history.join(' '));
    assert.equal((status(ok).conditions as Json[]).find((c) => c.message === 'InstallModes now support target namespaces')?.phase, 'Pending');
    const og = await getJson(['get', 'operatorgroup', 'og', '-n', 'modes']);
    assert.deepEqual((og.status as Json).namespaces, ['modes', 'team-a']);
    const copy = await csvWith('team-a', 'the copied CSV in team-a', (c) => status(c).phase === 'Succeeded');
    assert.equal(((copy.metadata as Json).labels as Json)['olm.copiedFrom'], 'modes');
    assert.equal(status(copy).reason, 'Copied');
    assert.equal(status(copy).message, 'The operator is running in modes but is managing this namespace');
    assert.equal(((copy.metadata as Json).annotations as Json)['olm.targetNamespaces'], undefined);
    assert.equal(await csvOf('team-b'), undefined, 'no copy where the group does not look');
    // The group moves to team-b: the copy moves with it.
    await kc.ok(['patch', 'operatorgroup', 'og', '-n', 'modes', '--type=merge', '-p', '{"spec":{"targetNamespaces":["modes","team-b"]}}']);
    await csvWith('team-b', 'the copy in team-b', (c) => status(c).reason === 'Copied');
    await eventually(60_000, 'the copy in team-a to go', async () => ((await csvOf('team-a')) ? undefined : true));
    // Uninstall: the copies go with the original.
    await kc.ok(['delete', 'subscription', 'modes', '-n', 'modes']);
    await kc.ok(['delete', 'csv', 'modes.v1.0.0', '-n', 'modes']);
    await eventually(60_000, 'the copy in team-b to go', async () => ((await csvOf('team-b')) ? undefined : true));
  });

  it('resumes an InstallPlan after kplane stopped in the middle of it', async () => {
    await server!.stop();
    server = undefined;
    let reached!: () => void;
    const stopped = new Promise<void>((r) => (reached = r));
    // The first server fails at the third step (the ServiceAccount) every time it gets there.
    await start((_plan, index) => {
      if (index >= 2) {
        reached();
        throw new Error('injected: kplane stops here');
      }
    });
    catalog.set('resume', [bundle('resume', '1.0.0', [crd('gadgets', 'Gadget', {})])]);
    await apply('resume.yaml', setup('resume', 'resume', 'resume'));
    await stopped;
    const half = await planWith('resume', 'the first steps applied', (p) => ((p.status as Json).plan as Json[] | undefined)?.[1]?.status === 'Created');
    assert.equal(phaseOf(half), 'Installing');
    assert.deepEqual(
      ((half.status as Json).plan as Json[]).map((s) => [(s.resource as Json).kind, s.status]),
      [
        ['CustomResourceDefinition', 'Created'],
        ['ClusterServiceVersion', 'Created'],
        ['ServiceAccount', 'Unknown'],
        ['Role', 'Unknown'],
        ['RoleBinding', 'Unknown'],
      ],
    );
    await server!.stop();
    server = undefined;

    await start();
    const done = await planWith('resume', 'the plan to complete after the restart', (p) => phaseOf(p) === 'Complete');
    assert.equal((done.metadata as Json).name, (half.metadata as Json).name, 'the same plan, not a new one');
    assert.deepEqual(
      ((done.status as Json).plan as Json[]).map((s) => s.status),
      ['Created', 'Created', 'Created', 'Created', 'Created'],
    );
    await eventually(60_000, 'the CSV to succeed', async () => {
      const csv = await getJson(['get', 'csv', 'resume.v1.0.0', '-n', 'resume']);
      return (csv.status as Json | undefined)?.phase === 'Succeeded' ? true : undefined;
    });
    await kc.ok(['get', 'rolebinding', 'resume.v1.0.0-resume', '-n', 'resume']);
  });
});
