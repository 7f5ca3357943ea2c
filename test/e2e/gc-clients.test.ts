// Garbage collection seen through real clients: @kubernetes/client-node 1.x and python3-kubernetes
// 22.6 against a kplane server running the garbage collector and namespace controllers. Owner
// chains across kinds (ConfigMap ← Secret ← ServiceAccount ← Lease), foreground deletion followed
// step by step through watch events and ordered by resourceVersion, background and orphan deletion.
//
// Upstream's order for a foreground chain (pkg/controller/garbagecollector/garbagecollector.go,
// attemptToDeleteItem / processDeletingDependentsItem): the root gets deletionTimestamp and the
// foregroundDeletion finalizer; a dependent whose owner is deleting its dependents and which has
// dependents itself is deleted in Foreground too, one without dependents in Background; an owner's
// finalizer is removed, so the owner is DELETED, only once its blocking dependents are gone.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { garbageCollector, namespaceDeletion } from '../../src/controllers/index.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, run, tools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';

let server: TestServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let coord: k8s.CoordinationV1Api;
let seq = 0;

before(async () => {
  server = await startTestServer({ storage: 'sqlite', controllers: [namespaceDeletion(), garbageCollector({ discoveryPeriodMs: 5000 })] });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  coord = kc.makeApiClient(k8s.CoordinationV1Api);
});
after(async () => {
  await server?.stop();
});

async function newNamespace(): Promise<string> {
  const name = `gcc-${++seq}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** What a test keeps of one watch event. */
interface Seen {
  type: string;
  kind: string;
  name: string;
  rv: number;
  deletionTimestamp?: string;
  finalizers: string[];
  ownerUids: string[];
}

const show = (events: readonly Seen[]): string =>
  events
    .map((e) => `${e.rv} ${e.type} ${e.kind}/${e.name}${e.deletionTimestamp ? ` terminating[${e.finalizers.join(',')}]` : ''} owners=${e.ownerUids.length}`)
    .join('\n');

/** Metadata as the watch delivers it: client-node's Watch hands over the parsed JSON, not a model. */
interface RawMeta {
  name?: string;
  resourceVersion?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerReferences?: { uid: string }[];
}

/** One client-node Watch per kind in a namespace, each from the resourceVersion of a list. */
class KindWatches {
  readonly events: Seen[] = [];
  readonly errors: unknown[] = [];
  private readonly ctrls: AbortController[] = [];

  static async start(ns: string): Promise<KindWatches> {
    const w = new KindWatches();
    const kinds: [string, string, () => Promise<{ metadata?: { resourceVersion?: string } }>][] = [
      ['ConfigMap', `/api/v1/namespaces/${ns}/configmaps`, () => core.listNamespacedConfigMap({ namespace: ns })],
      ['Secret', `/api/v1/namespaces/${ns}/secrets`, () => core.listNamespacedSecret({ namespace: ns })],
      ['ServiceAccount', `/api/v1/namespaces/${ns}/serviceaccounts`, () => core.listNamespacedServiceAccount({ namespace: ns })],
      ['Lease', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, () => coord.listNamespacedLease({ namespace: ns })],
    ];
    for (const [kind, path, list] of kinds) {
      const rv = (await list()).metadata?.resourceVersion;
      assert.match(rv ?? '', /^\d+$/);
      const ctrl = await new k8s.Watch(kc).watch(
        path,
        { resourceVersion: rv, allowWatchBookmarks: false },
        (type: string, obj: { kind?: string; metadata?: RawMeta }) => {
          const m = obj.metadata ?? {};
          w.events.push({
            type,
            kind: obj.kind ?? kind,
            name: m.name ?? '',
            rv: Number(m.resourceVersion),
            deletionTimestamp: m.deletionTimestamp,
            finalizers: m.finalizers ?? [],
            ownerUids: (m.ownerReferences ?? []).map((r) => r.uid),
          });
        },
        (err: unknown) => {
          if (err && !(err instanceof Error && err.name === 'AbortError')) w.errors.push(err);
        },
      );
      w.ctrls.push(ctrl);
    }
    return w;
  }

  stop(): void {
    for (const c of this.ctrls) c.abort();
  }

  /** Events sorted by resourceVersion (one global sequence across kinds, like etcd's revision). */
  sorted(): Seen[] {
    return [...this.events].sort((a, b) => a.rv - b.rv);
  }

  deleted(kind: string, name: string): Seen | undefined {
    return this.events.find((e) => e.type === 'DELETED' && e.kind === kind && e.name === name);
  }
}

interface Chain {
  cm: k8s.V1ConfigMap;
  secret: k8s.V1Secret;
  sa: k8s.V1ServiceAccount;
  lease: k8s.V1Lease;
}

function ownerRef(apiVersion: string, kind: string, o: { metadata?: k8s.V1ObjectMeta }): k8s.V1OwnerReference {
  return { apiVersion, kind, name: o.metadata!.name!, uid: o.metadata!.uid!, blockOwnerDeletion: true };
}

/** ConfigMap "root" ← Secret "s" ← ServiceAccount "sa" ← Lease "lease", each reference by uid and blocking. */
async function chain(ns: string, leaseFinalizers?: string[]): Promise<Chain> {
  const cm = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'root' }, data: { level: '0' } } });
  const secret = await core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 's', ownerReferences: [ownerRef('v1', 'ConfigMap', cm)] }, stringData: { level: '1' } },
  });
  const sa = await core.createNamespacedServiceAccount({
    namespace: ns,
    body: { metadata: { name: 'sa', ownerReferences: [ownerRef('v1', 'Secret', secret)] } },
  });
  const lease = await coord.createNamespacedLease({
    namespace: ns,
    body: {
      metadata: { name: 'lease', ownerReferences: [ownerRef('v1', 'ServiceAccount', sa)], ...(leaseFinalizers ? { finalizers: leaseFinalizers } : {}) },
      spec: { holderIdentity: 'gc-clients' },
    },
  });
  // The references are stored as sent.
  assert.deepEqual(refs(lease.metadata?.ownerReferences), [
    { apiVersion: 'v1', kind: 'ServiceAccount', name: 'sa', uid: sa.metadata!.uid!, blockOwnerDeletion: true, controller: undefined },
  ]);
  assert.equal(secret.metadata?.ownerReferences?.[0]?.uid, cm.metadata?.uid);
  return { cm, secret, sa, lease };
}

/** client-node returns model classes (V1OwnerReference); compare their fields as plain data. */
const refs = (r: k8s.V1OwnerReference[] | undefined): unknown =>
  r?.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, blockOwnerDeletion: o.blockOwnerDeletion, controller: o.controller }));

async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof k8s.ApiException && e.code === 404) return undefined;
    throw e;
  }
}

const CHAIN: readonly [kind: string, name: string][] = [
  ['ConfigMap', 'root'],
  ['Secret', 's'],
  ['ServiceAccount', 'sa'],
  ['Lease', 'lease'],
];

/** Waits for the chain's four DELETED events and stops the watches: all events in order, their log, the DELETED ones as kind/name. */
async function chainDeleted(w: KindWatches): Promise<{ all: Seen[]; log: string; deleted: string[] }> {
  await eventually(15_000, 'four DELETED events', async () => (CHAIN.every(([k, n]) => w.deleted(k, n)) ? true : undefined));
  w.stop();
  const all = w.sorted();
  return { all, log: show(all), deleted: all.filter((e) => e.type === 'DELETED').map((e) => `${e.kind}/${e.name}`) };
}

describe('client-node: owner chain across kinds', { timeout: 60_000 }, () => {
  it('foreground: owners wait with foregroundDeletion, dependents go bottom-up, each step seen through watches', async () => {
    const ns = await newNamespace();
    const w = await KindWatches.start(ns);
    try {
      // The Lease holds its own finalizer: the chain stops half-way so the intermediate state can be checked.
      const c = await chain(ns, ['example.com/hold']);
      await core.deleteNamespacedConfigMap({ name: 'root', namespace: ns, body: { propagationPolicy: 'Foreground' } });

      // Step 1: every object of the chain is terminating; the owners with foregroundDeletion, the Lease (no
      // dependents, deleted in Background by the collector) with only its own finalizer. Nothing is gone.
      const held = await eventually(10_000, 'the whole chain terminating', async () => {
        const l = await coord.readNamespacedLease({ name: 'lease', namespace: ns });
        return l.metadata?.deletionTimestamp ? l : undefined;
      });
      assert.deepEqual(held.metadata?.finalizers, ['example.com/hold']);
      const cm = await core.readNamespacedConfigMap({ name: 'root', namespace: ns });
      const secret = await core.readNamespacedSecret({ name: 's', namespace: ns });
      const sa = await core.readNamespacedServiceAccount({ name: 'sa', namespace: ns });
      for (const o of [cm, secret, sa]) {
        assert.ok(o.metadata?.deletionTimestamp, `${o.metadata?.name} has a deletionTimestamp`);
        assert.deepEqual(o.metadata?.finalizers, ['foregroundDeletion'], `${o.metadata?.name}`);
      }
      assert.equal(cm.metadata?.uid, c.cm.metadata?.uid);
      // Held: a moment later still nothing is gone.
      await new Promise((r) => setTimeout(r, 1000));
      assert.ok(await readOrUndefined(() => core.readNamespacedConfigMap({ name: 'root', namespace: ns })), 'the root waits for its dependents');
      assert.ok(await readOrUndefined(() => core.readNamespacedServiceAccount({ name: 'sa', namespace: ns })), 'the ServiceAccount waits for the Lease');
      assert.equal(w.events.filter((e) => e.type === 'DELETED').length, 0, `nothing DELETED while the Lease is held:\n${show(w.sorted())}`);

      // Step 2: release the Lease; the chain unwinds bottom-up.
      await coord.patchNamespacedLease(
        { name: 'lease', namespace: ns, body: { metadata: { finalizers: null } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await eventually(15_000, 'four DELETED events', async () => (CHAIN.every(([k, n]) => w.deleted(k, n)) ? true : undefined));
      // Nothing more comes after a short grace (no re-creation, no duplicate DELETED).
      await new Promise((r) => setTimeout(r, 300));
      w.stop();
      assert.deepEqual(w.errors, []);

      const all = w.sorted();
      const log = show(all);
      assert.equal(new Set(all.map((e) => e.rv)).size, all.length, `one resourceVersion per event across kinds:\n${log}`);
      const mine = all.filter((e) => CHAIN.some(([k, n]) => e.kind === k && e.name === n));
      assert.equal(mine.length, all.length, `only the chain's objects:\n${log}`);
      for (const [k, n] of CHAIN) {
        assert.equal(all.filter((e) => e.kind === k && e.name === n && e.type === 'DELETED').length, 1, `${k}/${n} DELETED once:\n${log}`);
        assert.equal(all.filter((e) => e.kind === k && e.name === n && e.type === 'ADDED').length, 1, `${k}/${n} ADDED once:\n${log}`);
      }
      const rvOf = (k: string, n: string, pred: (e: Seen) => boolean, what: string): number => {
        const e = all.find((x) => x.kind === k && x.name === n && pred(x));
        assert.ok(e, `${what} for ${k}/${n}:\n${log}`);
        return e.rv;
      };
      const delRv = (k: string, n: string) => rvOf(k, n, (e) => e.type === 'DELETED', 'DELETED');
      const fgRv = (k: string, n: string) =>
        rvOf(k, n, (e) => e.type === 'MODIFIED' && !!e.deletionTimestamp && e.finalizers.includes('foregroundDeletion'), 'MODIFIED with foregroundDeletion');

      // The owner is marked first: its first event after ADDED is the MODIFIED with deletionTimestamp and
      // exactly the foregroundDeletion finalizer, before anything happens to a dependent.
      const rootEvents = all.filter((e) => e.kind === 'ConfigMap');
      assert.equal(rootEvents[1]?.type, 'MODIFIED', log);
      assert.deepEqual(rootEvents[1]?.finalizers, ['foregroundDeletion'], log);
      assert.ok(rootEvents[1]?.deletionTimestamp, log);
      const firstDependentChange = all.find((e) => e.type !== 'ADDED' && e.kind !== 'ConfigMap');
      assert.ok(firstDependentChange && firstDependentChange.rv > rootEvents[1].rv, `the owner is marked before any dependent changes:\n${log}`);

      // Owners with dependents are deleted in Foreground, top-down; the leaf gets deletionTimestamp only.
      assert.ok(fgRv('ConfigMap', 'root') < fgRv('Secret', 's'), log);
      assert.ok(fgRv('Secret', 's') < fgRv('ServiceAccount', 'sa'), log);
      const leaseTerminating = rvOf('Lease', 'lease', (e) => e.type === 'MODIFIED' && !!e.deletionTimestamp, 'MODIFIED with deletionTimestamp');
      assert.ok(fgRv('ServiceAccount', 'sa') < leaseTerminating, log);
      assert.ok(!all.some((e) => e.kind === 'Lease' && e.finalizers.includes('foregroundDeletion')), `the leaf is deleted in Background:\n${log}`);

      // DELETED bottom-up, each owner still there (terminating) while its dependent existed.
      assert.ok(delRv('Lease', 'lease') < delRv('ServiceAccount', 'sa'), log);
      assert.ok(delRv('ServiceAccount', 'sa') < delRv('Secret', 's'), log);
      assert.ok(delRv('Secret', 's') < delRv('ConfigMap', 'root'), log);
      assert.deepEqual(
        all.filter((e) => e.type === 'DELETED').map((e) => `${e.kind}/${e.name}`),
        ['Lease/lease', 'ServiceAccount/sa', 'Secret/s', 'ConfigMap/root'],
        log,
      );
      // Once terminating, an object stays terminating with the same deletionTimestamp until DELETED.
      for (const [k, n] of CHAIN) {
        const evs = all.filter((e) => e.kind === k && e.name === n);
        const firstTerm = evs.findIndex((e) => e.deletionTimestamp);
        assert.ok(firstTerm > 0, `${k}/${n} terminating before DELETED:\n${log}`);
        const ts = evs[firstTerm]!.deletionTimestamp;
        assert.ok(
          evs.slice(firstTerm).every((e) => e.deletionTimestamp === ts),
          `${k}/${n} keeps its deletionTimestamp:\n${log}`,
        );
        assert.equal(evs.at(-1)?.type, 'DELETED', `${k}/${n} ends DELETED:\n${log}`);
      }
      // The DELETED objects carry the owner references they were collected for.
      assert.deepEqual(w.deleted('Lease', 'lease')?.ownerUids, [c.sa.metadata!.uid!]);
      assert.deepEqual(w.deleted('ServiceAccount', 'sa')?.ownerUids, [c.secret.metadata!.uid!]);
      assert.deepEqual(w.deleted('Secret', 's')?.ownerUids, [c.cm.metadata!.uid!]);

      assert.equal(await readOrUndefined(() => core.readNamespacedConfigMap({ name: 'root', namespace: ns })), undefined);
    } finally {
      w.stop();
    }
  });

  it('foreground without a hold: the same bottom-up order when the collector runs free', async () => {
    const ns = await newNamespace();
    const w = await KindWatches.start(ns);
    try {
      await chain(ns);
      await core.deleteNamespacedConfigMap({ name: 'root', namespace: ns, propagationPolicy: 'Foreground' });
      const { all, log, deleted } = await chainDeleted(w);
      assert.deepEqual(deleted, ['Lease/lease', 'ServiceAccount/sa', 'Secret/s', 'ConfigMap/root'], log);
      const rootFg = all.find((e) => e.kind === 'ConfigMap' && e.type === 'MODIFIED' && e.finalizers.includes('foregroundDeletion'));
      assert.ok(rootFg?.deletionTimestamp, log);
      assert.ok(rootFg.rv < w.deleted('Lease', 'lease')!.rv, `the owner is terminating while its dependents exist:\n${log}`);
    } finally {
      w.stop();
    }
  });

  it('background: the root goes at once, then each level after its owner, top-down', async () => {
    const ns = await newNamespace();
    const w = await KindWatches.start(ns);
    try {
      await chain(ns);
      await core.deleteNamespacedConfigMap({ name: 'root', namespace: ns, propagationPolicy: 'Background' });
      assert.equal(
        await readOrUndefined(() => core.readNamespacedConfigMap({ name: 'root', namespace: ns })),
        undefined,
        'the root is gone when the call returns',
      );
      const { all, log, deleted } = await chainDeleted(w);
      assert.deepEqual(deleted, ['ConfigMap/root', 'Secret/s', 'ServiceAccount/sa', 'Lease/lease'], log);
      assert.ok(!all.some((e) => e.finalizers.includes('foregroundDeletion') || e.finalizers.includes('orphan')), `no GC finalizer in background:\n${log}`);
      assert.equal(await readOrUndefined(() => core.readNamespacedSecret({ name: 's', namespace: ns })), undefined);
      assert.equal(await readOrUndefined(() => core.readNamespacedServiceAccount({ name: 'sa', namespace: ns })), undefined);
      assert.equal(await readOrUndefined(() => coord.readNamespacedLease({ name: 'lease', namespace: ns })), undefined);
    } finally {
      w.stop();
    }
  });

  it('orphan: the root goes, its direct dependent loses the reference, the rest of the chain is untouched', async () => {
    const ns = await newNamespace();
    const w = await KindWatches.start(ns);
    try {
      const c = await chain(ns);
      await core.deleteNamespacedConfigMap({ name: 'root', namespace: ns, body: { propagationPolicy: 'Orphan' } });
      await eventually(10_000, 'root DELETED', async () => w.deleted('ConfigMap', 'root'));
      // Nothing else may go: give the collector time to (wrongly) act.
      await new Promise((r) => setTimeout(r, 1500));
      w.stop();
      const all = w.sorted();
      const log = show(all);
      const rootOrphan = all.find((e) => e.kind === 'ConfigMap' && e.type === 'MODIFIED' && e.finalizers.includes('orphan'));
      assert.ok(rootOrphan?.deletionTimestamp, `the root waits with the orphan finalizer:\n${log}`);
      const secretOrphaned = all.find((e) => e.kind === 'Secret' && e.type === 'MODIFIED' && e.ownerUids.length === 0);
      assert.ok(secretOrphaned, `the Secret is MODIFIED without its reference:\n${log}`);
      assert.ok(rootOrphan.rv < secretOrphaned.rv && secretOrphaned.rv < w.deleted('ConfigMap', 'root')!.rv, `orphaned before the owner is DELETED:\n${log}`);
      assert.deepEqual(
        all.filter((e) => e.type === 'DELETED').map((e) => `${e.kind}/${e.name}`),
        ['ConfigMap/root'],
        log,
      );

      const s = await core.readNamespacedSecret({ name: 's', namespace: ns });
      assert.equal(s.metadata?.uid, c.secret.metadata?.uid);
      assert.equal(s.metadata?.ownerReferences, undefined);
      assert.equal(s.metadata?.deletionTimestamp, undefined);
      const sa = await core.readNamespacedServiceAccount({ name: 'sa', namespace: ns });
      assert.deepEqual(refs(sa.metadata?.ownerReferences), refs([ownerRef('v1', 'Secret', c.secret)]), 'only direct dependents are orphaned');
      const lease = await coord.readNamespacedLease({ name: 'lease', namespace: ns });
      assert.deepEqual(refs(lease.metadata?.ownerReferences), refs([ownerRef('v1', 'ServiceAccount', c.sa)]));
      assert.equal(lease.metadata?.uid, c.lease.metadata?.uid);
    } finally {
      w.stop();
    }
  });
});

/** One line printed by gc_chain.py: a watch event, or the last line. */
interface PyLine {
  event?: Omit<Seen, 'rv'> & { resourceVersion: string };
  done?: boolean;
  delete_response?: { kind?: string; metadata?: { resource_version?: string } };
  created?: Record<string, { uid: string; ownerReferences: { api_version: string; kind: string; name: string; uid: string; block_owner_deletion: boolean }[] }>;
}

describe('python3-kubernetes: foreground deletion of a chain followed with watch.Watch().stream', { timeout: 60_000 }, () => {
  it('gc_chain.py: root marked first, leaf, then Secret, then root DELETED', async () => {
    const ns = await newNamespace();
    const r = await run(tools.python, [join(repoRoot, 'test', 'e2e', 'python', 'gc_chain.py'), server.kubeconfig, ns], {
      timeoutMs: 50_000,
      env: { PYTHONDONTWRITEBYTECODE: '1' },
    });
    assert.equal(r.code, 0, `gc_chain.py failed\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PyLine);
    const last = lines.at(-1)!;
    assert.equal(last.done, true, `all three DELETED within the deadline\n${r.stdout}`);
    // The answer to a foreground delete is the object as marked (python-kubernetes reads it as a V1Status).
    const resp = last.delete_response!;
    assert.equal(resp.kind, 'ConfigMap', r.stdout);
    const created = last.created!;
    assert.deepEqual(
      created.mid!.ownerReferences.map((o) => [o.api_version, o.kind, o.name, o.uid, o.block_owner_deletion]),
      [['v1', 'ConfigMap', 'root', created.root!.uid, true]],
    );
    assert.deepEqual(
      created.leaf!.ownerReferences.map((o) => [o.api_version, o.kind, o.name, o.uid, o.block_owner_deletion]),
      [['v1', 'Secret', 'mid', created.mid!.uid, true]],
    );
    const all: Seen[] = lines
      .flatMap((l) => (l.event ? [l.event] : []))
      .map((e) => ({ ...e, rv: Number(e.resourceVersion) }))
      .sort((a, b) => a.rv - b.rv);
    const log = show(all);
    assert.ok(
      all.every((e) => Number.isInteger(e.rv) && e.rv > 0),
      log,
    );
    assert.equal(new Set(all.map((e) => e.rv)).size, all.length, `one resourceVersion per event:\n${log}`);
    // The watches start after the creations: what they see is the deletion only.
    assert.ok(!all.some((e) => e.type === 'ADDED'), log);
    assert.deepEqual(
      all.filter((e) => e.type === 'DELETED').map((e) => `${e.kind}/${e.name}`),
      ['ConfigMap/leaf', 'Secret/mid', 'ConfigMap/root'],
      log,
    );
    const first = all[0]!;
    assert.deepEqual(
      [first.type, first.kind, first.name, first.finalizers],
      ['MODIFIED', 'ConfigMap', 'root', ['foregroundDeletion']],
      `the owner is marked first:\n${log}`,
    );
    assert.ok(first.deletionTimestamp, log);
    assert.equal(resp.metadata?.resource_version, String(first.rv), 'the delete answered with the object of the MODIFIED event');
    const midFg = all.find((e) => e.kind === 'Secret' && e.type === 'MODIFIED' && e.finalizers.includes('foregroundDeletion'));
    assert.ok(midFg?.deletionTimestamp, `the Secret, which has a dependent, is deleted in Foreground:\n${log}`);
    const del = (k: string, n: string): number => all.find((e) => e.type === 'DELETED' && e.kind === k && e.name === n)!.rv;
    assert.ok(first.rv < midFg.rv && midFg.rv < del('ConfigMap', 'leaf'), log);
    // Every event for root before its DELETED shows it terminating: it existed while its dependents did.
    const rootEvents = all.filter((e) => e.kind === 'ConfigMap' && e.name === 'root');
    assert.ok(
      rootEvents.every((e) => e.deletionTimestamp === first.deletionTimestamp),
      log,
    );
    assert.deepEqual(all.find((e) => e.type === 'DELETED' && e.name === 'leaf')?.ownerUids, [created.mid!.uid]);
    assert.deepEqual(all.find((e) => e.type === 'DELETED' && e.name === 'mid')?.ownerUids, [created.root!.uid]);
  });
});
