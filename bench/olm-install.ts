// Installing operators from a catalog (issue 27's second speed goal): 50 operators' bundles (a CRD,
// a CSV with namespaced and cluster permissions, one deployment each) from one generated catalog,
// served in this process as `kplane catalog serve` serves it, into a fresh kplane (memory storage,
// in this process): an OperatorGroup and 50 Subscriptions created, timed until every CSV is
// Succeeded (resolution, InstallPlans, CRDs Established, RBAC, CSV phases). Goal: ≤ 30 s.
// Baseline, in the same run, on a second fresh kplane: the same objects the plans apply (CRDs,
// waited for Established, then CSVs, ServiceAccounts, Roles, RoleBindings, ClusterRoles,
// ClusterRoleBindings) created straight through the loopback client, no OLM flow.
// Standalone: node --import tsx bench/olm-install.ts [--operators N]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../src/apimachinery/types.js';
import { serveCatalog } from '../src/catalog/serve/index.js';
import type { GVR, KubeClient } from '../src/client/types.js';
import { defaultControllers } from '../src/controllers/index.js';
import { createControlPlane, type ControlPlane } from '../src/controlplane/controlplane.js';
import { defaultModules } from '../src/controlplane/modules.js';
import { olm } from '../src/controlplane/olm-module.js';
import { memory } from '../src/storage/factories.js';

type Json = Record<string, unknown>;

export interface InstallBenchRow {
  readonly op: string;
  readonly target: string;
  readonly value: string;
  readonly ms: number;
  readonly goal?: { readonly target: string; readonly met: boolean };
}

const OPS = 'operators.coreos.com';
const gvr = (group: string, version: string, resource: string): GVR => ({ group, version, resource });
const NAMESPACES = gvr('', 'v1', 'namespaces');
const CRDS = gvr('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
const CSVS = gvr(OPS, 'v1alpha1', 'clusterserviceversions');
const KINDS: Record<string, GVR> = {
  CustomResourceDefinition: CRDS,
  ClusterServiceVersion: CSVS,
  ServiceAccount: gvr('', 'v1', 'serviceaccounts'),
  Role: gvr('rbac.authorization.k8s.io', 'v1', 'roles'),
  RoleBinding: gvr('rbac.authorization.k8s.io', 'v1', 'rolebindings'),
  ClusterRole: gvr('rbac.authorization.k8s.io', 'v1', 'clusterroles'),
  ClusterRoleBinding: gvr('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings'),
};
const NS = 'operators';

const pkgName = (i: number): string => `operator-${String(i).padStart(2, '0')}`;

function crdOf(i: number): Json {
  const group = `p${i}.bench.example.com`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: `Thing${i}`, listKind: `Thing${i}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
        },
      ],
    },
  };
}

function csvOf(i: number): Json {
  const pkg = pkgName(i);
  const group = `p${i}.bench.example.com`;
  return {
    apiVersion: `${OPS}/v1alpha1`,
    kind: 'ClusterServiceVersion',
    metadata: { name: `${pkg}.v1.0.0` },
    spec: {
      version: '1.0.0',
      displayName: pkg,
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: { owned: [{ name: `things.${group}`, version: 'v1', kind: `Thing${i}` }] },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: `${pkg}-controller`, spec: {} }],
          permissions: [{ serviceAccountName: pkg, rules: [{ apiGroups: [group], resources: ['things'], verbs: ['*'] }] }],
          clusterPermissions: [{ serviceAccountName: pkg, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }] }],
        },
      },
    },
  };
}

/** The catalog as FBC: one package per operator, one channel, one bundle carrying its objects. */
async function writeCatalog(dir: string, n: number): Promise<void> {
  const docs: Json[] = [];
  for (let i = 0; i < n; i++) {
    const pkg = pkgName(i);
    const name = `${pkg}.v1.0.0`;
    docs.push({ schema: 'olm.package', name: pkg, defaultChannel: 'stable' });
    docs.push({ schema: 'olm.channel', name: 'stable', package: pkg, entries: [{ name }] });
    docs.push({
      schema: 'olm.bundle',
      name,
      package: pkg,
      image: `registry.bench.example/${pkg}-bundle:v1.0.0`,
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version: '1.0.0' } },
        { type: 'olm.gvk', value: { group: `p${i}.bench.example.com`, kind: `Thing${i}`, version: 'v1' } },
        ...[crdOf(i), csvOf(i)].map((o) => ({ type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(o)).toString('base64') } })),
      ],
    });
  }
  await writeFile(join(dir, 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
}

async function freshKplane(dataDir: string): Promise<ControlPlane> {
  const cp = await createControlPlane({
    storage: memory(),
    dataDir,
    port: 0,
    apis: [...defaultModules(), olm({ log: () => {} })],
    controllers: defaultControllers(),
    reportFeatures: false,
  });
  await cp.start();
  return cp;
}

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const create = (c: KubeClient, g: GVR, ns: string | undefined, o: Json): Promise<KubeObject> => c.create(g, ns, o);

async function installThroughOlm(client: KubeClient, address: string, n: number): Promise<number> {
  await create(client, NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await create(client, gvr(OPS, 'v1alpha1', 'catalogsources'), NS, {
    apiVersion: `${OPS}/v1alpha1`,
    kind: 'CatalogSource',
    metadata: { name: 'bench', namespace: NS },
    spec: { sourceType: 'grpc', address },
  });
  await until('the catalog READY', 60_000, async () => {
    const cs = await client.get<KubeObject & Json>(gvr(OPS, 'v1alpha1', 'catalogsources'), NS, 'bench');
    return ((cs.status as Json | undefined)?.connectionState as Json | undefined)?.lastObservedState === 'READY';
  });
  const t0 = performance.now();
  await create(client, gvr(OPS, 'v1', 'operatorgroups'), NS, {
    apiVersion: `${OPS}/v1`,
    kind: 'OperatorGroup',
    metadata: { name: NS, namespace: NS },
    spec: { targetNamespaces: [NS] },
  });
  for (let i = 0; i < n; i++)
    await create(client, gvr(OPS, 'v1alpha1', 'subscriptions'), NS, {
      apiVersion: `${OPS}/v1alpha1`,
      kind: 'Subscription',
      metadata: { name: pkgName(i), namespace: NS },
      spec: { name: pkgName(i), channel: 'stable', source: 'bench', sourceNamespace: NS },
    });
  await until(`${n} CSVs Succeeded`, 300_000, async () => {
    const csvs = (await client.list(CSVS, NS)).items;
    return csvs.length === n && csvs.every((c) => ((c as Json).status as Json | undefined)?.phase === 'Succeeded');
  });
  return performance.now() - t0;
}

/** What the InstallPlans apply, created directly: CRDs (Established), then the CSVs and their RBAC. */
async function applyDirectly(client: KubeClient, n: number): Promise<number> {
  await create(client, NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await create(client, CRDS, undefined, crdOf(i));
  await until('the CRDs Established', 120_000, async () => {
    const crds = (await client.list(CRDS)).items;
    const ok = crds.filter((c) =>
      (((c as Json).status as Json | undefined)?.conditions as Json[] | undefined)?.some((x) => x.type === 'Established' && x.status === 'True'),
    );
    return ok.length >= n;
  });
  for (let i = 0; i < n; i++) {
    const pkg = pkgName(i);
    const csv = csvOf(i);
    await create(client, KINDS.ClusterServiceVersion!, NS, { ...csv, metadata: { name: (csv.metadata as Json).name, namespace: NS } });
    await create(client, KINDS.ServiceAccount!, NS, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: pkg } });
    const rules = [{ apiGroups: [`p${i}.bench.example.com`], resources: ['things'], verbs: ['*'] }];
    const subject = [{ kind: 'ServiceAccount', name: pkg, namespace: NS }];
    await create(client, KINDS.Role!, NS, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: pkg }, rules });
    await create(client, KINDS.RoleBinding!, NS, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: pkg },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: pkg },
      subjects: subject,
    });
    await create(client, KINDS.ClusterRole!, undefined, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: pkg },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }],
    });
    await create(client, KINDS.ClusterRoleBinding!, undefined, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: pkg },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: pkg },
      subjects: subject,
    });
  }
  return performance.now() - t0;
}

export async function runInstallBench(operators = 50, log: (line: string) => void = console.log): Promise<InstallBenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'kplane-bench-olm-install-'));
  await writeCatalog(dir, operators);
  const served = await serveCatalog(dir);
  try {
    const a = await freshKplane(join(dir, 'olm'));
    let olmMs: number;
    try {
      olmMs = await installThroughOlm(a.loopbackClient(), served.address, operators);
    } finally {
      await a.stop();
    }
    const b = await freshKplane(join(dir, 'direct'));
    let directMs: number;
    try {
      directMs = await applyDirectly(b.loopbackClient(), operators);
    } finally {
      await b.stop();
    }
    log(`install ${operators} operators through Subscriptions: ${(olmMs / 1000).toFixed(1)} s until every CSV Succeeded`);
    log(`baseline (the same objects created directly): ${(directMs / 1000).toFixed(1)} s; OLM flow/baseline ${(olmMs / directMs).toFixed(1)}x`);
    return [
      {
        op: `install ${operators} operators (Subscriptions → CSVs Succeeded)`,
        target: 'kplane',
        value: `${(olmMs / 1000).toFixed(1)} s`,
        ms: olmMs,
        goal: { target: '≤ 30 s', met: olmMs <= 30_000 },
      },
      {
        op: `create the same ${operators} bundles' objects directly`,
        target: 'baseline',
        value: `${(directMs / 1000).toFixed(1)} s (${(olmMs / directMs).toFixed(1)}x)`,
        ms: directMs,
      },
    ];
  } finally {
    await served.stop(1000);
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--operators');
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  await runInstallBench(i > 0 ? Number(process.argv[i + 1]) : 50);
}
