// `kplane catalog test interop CATALOG` (issue 27, story 2): a whole catalog's operators installed
// together in a throw-away kplane (in this process, memory storage, loopback only) through OLM's
// objects, then checked against each other on the real API server:
//   - each channel's upgrade edges, from the default channel's tail to its head (a Subscription
//     with startingCSV = the tail, in a namespace of its own, before anything else is installed);
//   - every package's default channel head resolved together (one namespace, one OperatorGroup,
//     one Subscription per package) and installed: InstallPlan Complete, RBAC applied, CSV Succeeded;
//   - no two operators own the same CRD or API service; every required CRD is owned by one of them;
//   - every alm-examples custom resource of every CSV is accepted (schema, CEL, defaulting) and
//     round-trips: what was sent reads back unchanged.
// The catalog is served in process as `kplane catalog serve` serves it; the results are one
// TestSuite, written as text and JUnit XML by the caller.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { loadFS } from '../catalog/declcfg/load.js';
import { convertToModel } from '../catalog/model/convert.js';
import { channelHead } from '../catalog/model/graph.js';
import type { Model } from '../catalog/model/types.js';
import { runCase, type TestCase, type TestSuite } from '../catalog/repo/report.js';
import { serveCatalog } from '../catalog/serve/index.js';
import type { GVR, KubeClient } from '../client/types.js';
import { defaultControllers } from '../controllers/index.js';
import { memory } from '../storage/factories.js';
import { createControlPlane } from './controlplane.js';
import { defaultModules } from './modules.js';
import { DEFAULT_GLOBAL_CATALOG_NAMESPACE, olm } from './olm-module.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const OPS = 'operators.coreos.com';
const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const CATALOG_SOURCES: GVR = { group: OPS, version: 'v1alpha1', resource: 'catalogsources' };
const SUBSCRIPTIONS: GVR = { group: OPS, version: 'v1alpha1', resource: 'subscriptions' };
const INSTALL_PLANS: GVR = { group: OPS, version: 'v1alpha1', resource: 'installplans' };
const CSVS: GVR = { group: OPS, version: 'v1alpha1', resource: 'clusterserviceversions' };
const OPERATOR_GROUPS: GVR = { group: OPS, version: 'v1', resource: 'operatorgroups' };
const CRDS: GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const RBAC_KINDS = new Set(['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

export const INTEROP_SUITE = 'interoperability-install';
const NS = 'interop';
const CATALOG = 'interop';
/** The catalog lives in the global catalog namespace, so every test namespace sees it. */
const CATALOG_NS = DEFAULT_GLOBAL_CATALOG_NAMESPACE;

export interface InteropOptions {
  /** A file-based catalog directory (what `kplane catalog serve` takes). */
  readonly catalogDir: string;
  /** How long each wait may take (the catalog READY, a resolution, an install, an upgrade). Default 120 s. */
  readonly timeoutMs?: number;
  /** Check the upgrade edges (default true). */
  readonly upgrades?: boolean;
  /** Only these packages (and what they depend on); default every package of the catalog. */
  readonly packages?: readonly string[];
  readonly progress?: (line: string) => void;
}

interface Head {
  pkg: string;
  channel: string;
  head: string;
  /** The oldest bundle of the channel's replaces chain from its head (the head when alone). */
  tail: string;
  installModes: Map<string, boolean>;
}

/** Each package's default channel: its head, its tail and the head's install modes. */
export function channelHeads(model: Model): Head[] {
  const out: Head[] = [];
  for (const pkg of [...model.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const ch = pkg.defaultChannel;
    if (!ch) continue;
    const head = channelHead(ch);
    let tail = head;
    const seen = new Set([head.name]);
    for (let next = ch.bundles.get(tail.replaces); next && !seen.has(next.name); next = ch.bundles.get(tail.replaces)) {
      seen.add(next.name);
      tail = next;
    }
    const modes = new Map<string, boolean>();
    const csv = head.objects.map((o) => obj(JSON.parse(o))).find((o) => o.kind === 'ClusterServiceVersion');
    for (const m of arr(obj(csv?.spec).installModes).map(obj)) modes.set(str(m.type), m.supported === true);
    out.push({ pkg: pkg.name, channel: ch.name, head: head.name, tail: tail.name, installModes: modes });
  }
  return out;
}

export async function runInteropInstall(o: InteropOptions): Promise<TestSuite> {
  const say = o.progress ?? ((): void => {});
  const timeoutMs = o.timeoutMs ?? 120_000;
  const suite: TestSuite = { name: INTEROP_SUITE, timestamp: new Date().toISOString(), cases: [] };
  const add = (c: TestCase): void => {
    suite.cases.push(c);
    say(`  ${c.status.toUpperCase()} ${c.name}${c.status === 'fail' && c.message ? `: ${c.message.split('\n')[0]}` : ''}`);
  };

  say(`loading ${o.catalogDir}`);
  const model = convertToModel(await loadFS(o.catalogDir));
  const all = channelHeads(model);
  const unknown = (o.packages ?? []).filter((p) => !all.some((h) => h.pkg === p));
  if (unknown.length) throw new Error(`no package ${unknown.join(', ')} in ${o.catalogDir}`);
  const heads = o.packages?.length ? all.filter((h) => o.packages!.includes(h.pkg)) : all;
  const dataDir = await mkdtemp(join(tmpdir(), 'kplane-interop-'));
  const served = await serveCatalog(o.catalogDir);
  const cp = await createControlPlane({
    storage: memory(),
    dataDir,
    host: '127.0.0.1',
    port: 0,
    apis: [...defaultModules(), olm({ log: () => {}, installResyncMs: 1000, initialBackoffMs: 200, maxBackoffMs: 2000 })],
    controllers: defaultControllers(),
    reportFeatures: false,
  });
  try {
    await cp.start();
    const client = cp.loopbackClient();
    const wait = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => waitFor(timeoutMs, what, probe);
    say('starting a throw-away kplane and connecting the catalog');
    await createNs(client, CATALOG_NS);
    await createNs(client, NS);
    await client.create(CATALOG_SOURCES, CATALOG_NS, {
      apiVersion: `${OPS}/v1alpha1`,
      kind: 'CatalogSource',
      metadata: { name: CATALOG, namespace: CATALOG_NS },
      spec: { sourceType: 'grpc', address: served.address, displayName: 'interop' },
    });
    const ready = await runCase('catalog: CatalogSource READY', async () => {
      await wait('the CatalogSource to be READY', async () => {
        const cs = await client.get(CATALOG_SOURCES, CATALOG_NS, CATALOG);
        return str(obj(obj((cs as Json).status).connectionState).lastObservedState) === 'READY' ? true : undefined;
      });
    });
    add(ready);
    if (ready.status !== 'pass') return suite;

    // Upgrade edges, each package alone in a namespace of its own.
    if (o.upgrades !== false) {
      for (const h of heads) {
        if (h.tail === h.head) continue;
        say(`upgrade ${h.pkg}: ${h.tail} → ${h.head}`);
        const ns = `upgrade-${h.pkg}`.slice(0, 63).replace(/-+$/, '');
        add(
          await runCase(`${h.pkg}: upgrades from ${h.tail} to ${h.head} (channel ${h.channel})`, async () => {
            await createNs(client, ns);
            await createGroup(client, ns, groupTargets(h, ns));
            await subscribe(client, ns, h, h.tail);
            await wait(`${h.pkg} to reach ${h.head}`, async () => {
              const failed = await planFailure(client, ns);
              if (failed) throw new Terminal(failed);
              const sub = obj(obj(await client.get(SUBSCRIPTIONS, ns, h.pkg)).status);
              const res = arr(sub.conditions)
                .map(obj)
                .find((c) => c.type === 'ResolutionFailed' && c.status === 'True');
              if (res) throw new Terminal(`resolution failed: ${str(res.message)}`);
              if (str(sub.installedCSV) !== h.head) return undefined;
              const csv = await client.get(CSVS, ns, h.head).catch(() => undefined);
              return str(obj(csv?.status).phase) === 'Succeeded' ? true : undefined;
            });
          }),
        );
      }
    }

    // Every head together.
    const allModes = heads.every((h) => h.installModes.get('AllNamespaces') === true);
    say(`installing ${heads.length} packages' channel heads together in namespace ${NS} (${allModes ? 'AllNamespaces' : 'OwnNamespace'} OperatorGroup)`);
    await createGroup(client, NS, allModes ? undefined : [NS]);
    for (const h of heads) await subscribe(client, NS, h);
    const resolved = await runCase(`resolution: ${heads.length} channel heads resolve together`, async () => {
      await wait('every Subscription to be resolved', async () => {
        const subs = (await client.list(SUBSCRIPTIONS, NS)).items;
        for (const s of subs) {
          const c = arr(obj((s as Json).status).conditions)
            .map(obj)
            .find((x) => x.type === 'ResolutionFailed' && x.status === 'True');
          if (c) throw new Terminal(`${str(c.reason)}: ${str(c.message)}`);
        }
        return subs.every((s) => str(obj((s as Json).status).currentCSV)) ? true : undefined;
      });
    });
    add(resolved);
    if (resolved.status !== 'pass') return suite;

    const installed = new Map<string, KubeObject>();
    for (const h of heads) {
      add(
        await runCase(`${h.pkg}: ${h.head} installs`, async () => {
          const csv = await wait(`${h.pkg}'s CSV to succeed`, async () => {
            const failed = await planFailure(client, NS);
            if (failed) throw new Terminal(failed);
            const sub = obj(obj(await client.get(SUBSCRIPTIONS, NS, h.pkg)).status);
            const name = str(sub.installedCSV) || str(sub.currentCSV);
            const c = name ? await client.get(CSVS, NS, name).catch(() => undefined) : undefined;
            const st = obj(c?.status);
            if (str(st.phase) === 'Failed') throw new Terminal(`CSV ${name} Failed: ${str(st.reason)}: ${str(st.message)}`);
            return str(st.phase) === 'Succeeded' ? c : undefined;
          });
          installed.set(h.pkg, csv);
          const name = csv.metadata?.name ?? '';
          if (name !== h.head) return { status: 'warn', message: `installed ${name}, not the channel head ${h.head}` };
          return undefined;
        }),
      );
    }
    // RBAC of every plan applied.
    add(
      await runCase('rbac: the CSVs’ permissions are applied', async () => {
        const problems: string[] = [];
        for (const p of (await client.list(INSTALL_PLANS, NS)).items) {
          for (const s of arr(obj((p as Json).status).plan).map(obj)) {
            const r = obj(s.resource);
            if (RBAC_KINDS.has(str(r.kind)) && str(s.status) !== 'Created' && str(s.status) !== 'Present')
              problems.push(`${str(s.resolving)}: ${str(r.kind)} ${str(r.name)} is ${str(s.status)}`);
          }
        }
        if (problems.length) throw new Error(problems.join('\n'));
      }),
    );
    add(await runCase('ownership: no two operators own the same CRD or API', async () => ownershipProblems([...installed.values()])));
    add(await runCase('requirements: every required CRD is owned by an installed operator', async () => requiredProblems([...installed.values()])));
    for (const [pkg, csv] of installed) {
      const examples = almExamples(csv);
      if (examples === undefined) continue;
      add(await runCase(`${pkg}: alm-examples accepted and round-trip`, async () => checkExamples(client, examples)));
    }
    return suite;
  } finally {
    await cp.stop().catch(() => {});
    await served.stop(1000).catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** A failure no further waiting fixes. */
class Terminal extends Error {}

async function waitFor<T>(timeoutMs: number, what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      if (e instanceof Terminal) throw e;
      last = e;
    }
    if (Date.now() > until) throw new Error(`not within ${Math.round(timeoutMs / 1000)} s: ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function createNs(client: KubeClient, name: string): Promise<void> {
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** OwnNamespace when the head supports it, else every namespace. */
function groupTargets(h: Head, ns: string): string[] | undefined {
  return h.installModes.get('OwnNamespace') === true || h.installModes.get('AllNamespaces') !== true ? [ns] : undefined;
}

async function createGroup(client: KubeClient, ns: string, targets: string[] | undefined): Promise<void> {
  await client.create(OPERATOR_GROUPS, ns, {
    apiVersion: `${OPS}/v1`,
    kind: 'OperatorGroup',
    metadata: { name: ns, namespace: ns },
    spec: targets ? { targetNamespaces: targets } : {},
  });
}

async function subscribe(client: KubeClient, ns: string, h: Head, startingCSV?: string): Promise<void> {
  await client.create(SUBSCRIPTIONS, ns, {
    apiVersion: `${OPS}/v1alpha1`,
    kind: 'Subscription',
    metadata: { name: h.pkg, namespace: ns },
    spec: {
      name: h.pkg,
      channel: h.channel,
      source: CATALOG,
      sourceNamespace: CATALOG_NS,
      installPlanApproval: 'Automatic',
      ...(startingCSV ? { startingCSV } : {}),
    },
  });
}

/** The Installed condition's message of a failed InstallPlan of the namespace. */
async function planFailure(client: KubeClient, ns: string): Promise<string | undefined> {
  for (const p of (await client.list(INSTALL_PLANS, ns)).items) {
    const st = obj((p as Json).status);
    if (str(st.phase) !== 'Failed') continue;
    const c = arr(st.conditions)
      .map(obj)
      .find((x) => x.type === 'Installed');
    return `InstallPlan ${p.metadata?.name ?? ''} (${arr(obj((p as Json).spec).clusterServiceVersionNames).join(', ')}) Failed: ${str(c?.message)}`;
  }
  return undefined;
}

function ownershipProblems(csvs: readonly KubeObject[]): void {
  const owners = new Map<string, string[]>();
  const own = (key: string, csv: string): void => {
    const l = owners.get(key) ?? [];
    if (!l.includes(csv)) l.push(csv);
    owners.set(key, l);
  };
  for (const c of csvs) {
    const spec = obj((c as Json).spec);
    const name = c.metadata?.name ?? '';
    for (const d of arr(obj(spec.customresourcedefinitions).owned).map(obj)) own(`CRD ${str(d.name)}`, name);
    for (const d of arr(obj(spec.apiservicedefinitions).owned).map(obj)) own(`API ${str(d.group)}/${str(d.version)} ${str(d.kind)}`, name);
  }
  const dup = [...owners].filter(([, l]) => l.length > 1).map(([k, l]) => `${k} is owned by ${l.join(' and ')}`);
  if (dup.length) throw new Error(dup.sort().join('\n'));
}

function requiredProblems(csvs: readonly KubeObject[]): void {
  const owned = new Set<string>();
  for (const c of csvs) for (const d of arr(obj(obj((c as Json).spec).customresourcedefinitions).owned).map(obj)) owned.add(str(d.name));
  const missing: string[] = [];
  for (const c of csvs)
    for (const d of arr(obj(obj((c as Json).spec).customresourcedefinitions).required).map(obj))
      if (!owned.has(str(d.name))) missing.push(`${c.metadata?.name ?? ''} requires CRD ${str(d.name)}, which no installed operator owns`);
  if (missing.length) throw new Error(missing.join('\n'));
}

/** The CSV's alm-examples annotation, or undefined when it has none. */
function almExamples(csv: KubeObject): string | undefined {
  const raw = csv.metadata?.annotations?.['alm-examples'];
  return raw === undefined || raw.trim() === '' ? undefined : raw;
}

async function checkExamples(client: KubeClient, text: string): Promise<void> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`alm-examples is not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (!Array.isArray(raw)) throw new Error('alm-examples is not a JSON array');
  const crds = (await client.list(CRDS)).items;
  const problems: string[] = [];
  for (const [i, e] of raw.entries()) {
    const ex = obj(e);
    const apiVersion = str(ex.apiVersion);
    const kind = str(ex.kind);
    const name = str(obj(ex.metadata).name) || `example-${i}`;
    const what = `${kind} ${name}`;
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    const crd = crds.find((c) => {
      const s = obj((c as Json).spec);
      return str(s.group) === group && str(obj(s.names).kind) === kind;
    });
    if (!crd) {
      problems.push(`${what}: no CRD serves ${apiVersion} ${kind}`);
      continue;
    }
    const spec = obj((crd as Json).spec);
    const namespaced = str(spec.scope) !== 'Cluster';
    const gvr: GVR = { group, version, resource: str(obj(spec.names).plural) };
    const ns = namespaced ? str(obj(ex.metadata).namespace) || NS : undefined;
    const body = { ...ex, metadata: { ...obj(ex.metadata), name, ...(ns ? { namespace: ns } : {}) } } as KubeObject;
    try {
      const created = await client.create(gvr, ns, body, { fieldManager: 'kplane-interop' });
      const back = await client.get(gvr, ns, created.metadata?.name ?? name);
      const diffs = differences(ex, back as Json, '').filter((p) => !p.startsWith('.metadata'));
      if (diffs.length) problems.push(`${what} does not round-trip: ${diffs.join('; ')}`);
    } catch (err) {
      problems.push(`${what}: ${err instanceof StatusError ? err.message : String(err)}`);
    }
  }
  if (problems.length) throw new Error(problems.join('\n'));
}

/** Paths where `sent` is not found unchanged in `got` (fields the server pruned or changed). */
function differences(sent: unknown, got: unknown, path: string): string[] {
  if (sent && typeof sent === 'object' && !Array.isArray(sent)) {
    if (!got || typeof got !== 'object' || Array.isArray(got)) return [`${path || '.'} changed`];
    const out: string[] = [];
    for (const [k, v] of Object.entries(sent)) {
      if (!(k in (got as Json))) out.push(`${path}.${k} was dropped`);
      else out.push(...differences(v, (got as Json)[k], `${path}.${k}`));
    }
    return out;
  }
  if (Array.isArray(sent)) {
    if (!Array.isArray(got) || got.length !== sent.length) return [`${path} changed`];
    return sent.flatMap((v, i) => differences(v, got[i], `${path}[${i}]`));
  }
  return sent === got ? [] : [`${path} changed from ${JSON.stringify(sent)} to ${JSON.stringify(got)}`];
}
