// The CRD lifecycle end to end, on a server started without controllers (like
// `kplane serve --controllers=false`: naming, establishing and the clean-up finalizer run inside the
// API module, as in upstream's apiextensions-apiserver): `kubectl wait --for condition=established`;
// kubectl 1.20 and 1.33 `delete crd` with instances in two namespaces returns once the CRD and its
// stored instances are gone; an instance with its own finalizer keeps the CRD Terminating
// (InstanceDeletionInProgress, creates refused) until the finalizer goes; a CRD whose names
// conflict gets NamesAccepted=False with upstream's reason and is not served; `kubectl delete
// namespace` removes custom resources too (namespace controller over HTTPS, found via discovery).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { namespaceDeletion, runControllers } from '../../src/controllers/index.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { crdObject, waitServed } from '../support/crd.js';
import { CRDS, NS } from '../support/gvrs.js';
import { adminCredentials, RawClient, type RawResponse } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';
import { KUBECTLS, kubectlSession } from '../support/kubectl.js';

ensureTools();

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
type CRD = KubeObject & { status?: { conditions?: Condition[]; acceptedNames?: Record<string, unknown> } };

let server: TestServer;
let client: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'sqlite' });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  await client?.close();
  await server?.stop();
});

function crdYAML(group: string, plural: string, kind: string, opts: { shortNames?: string[]; singular?: string; scope?: string } = {}): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  group: ${group}
  scope: ${opts.scope ?? 'Namespaced'}
  names:
    plural: ${plural}
    singular: ${opts.singular ?? kind.toLowerCase()}
    kind: ${kind}
${opts.shortNames ? `    shortNames: [${opts.shortNames.join(', ')}]\n` : ''}  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`;
}

async function kubectl(bin: string, args: string[], input?: string, timeoutMs = 40_000): Promise<string> {
  const r = await run(bin, ['--kubeconfig', server.kubeconfig, ...args], { timeoutMs, ...(input !== undefined ? { input } : {}) });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function condition(crd: CRD, type: string): Condition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

async function notFound(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (e) {
    return (e as { code?: number }).code === 404;
  }
}

async function storedKeys(group: string, plural: string): Promise<string[]> {
  return (await server.cp.storage.list(`/registry/${group}/${plural}/`)).items.map((kv) => kv.key);
}

async function createInstances(gvr: GVR, kind: string, namespaces: string[]): Promise<void> {
  for (const ns of namespaces) {
    if (await notFound(client.get(NS, undefined, ns))) await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (let i = 0; i < 3; i++) {
      await client.create(gvr, ns, { apiVersion: `${gvr.group}/v1`, kind, metadata: { name: `w-${i}` }, spec: { i } });
    }
  }
}

for (const k of [
  { name: '1.20', bin: tools.kubectl120 },
  { name: '1.33', bin: tools.kubectl },
]) {
  const tag = k.name.replace('.', '');
  describe(`kubectl ${k.name}: CRD lifecycle`, { timeout: 60_000 }, () => {
    it('wait --for condition=established, then delete crd removes every instance first', async () => {
      const group = `life${tag}.example.com`;
      const gvr: GVR = { group, version: 'v1', resource: 'widgets' };
      await kubectl(k.bin, ['apply', '-f', '-'], crdYAML(group, 'widgets', 'Widget'));
      const waited = await kubectl(k.bin, ['wait', '--for', 'condition=established', '--timeout=20s', `crd/widgets.${group}`]);
      assert.match(waited, new RegExp(`widgets.${group.replace(/\./g, '\\.')} condition met`));
      const crd = await client.get<CRD>(CRDS, undefined, `widgets.${group}`);
      assert.equal(condition(crd, 'NamesAccepted')?.reason, 'NoConflicts');
      assert.equal(condition(crd, 'Established')?.reason, 'InitialNamesAccepted');
      assert.deepEqual(crd.metadata?.finalizers ?? [], [], 'the clean-up finalizer comes with DELETE, as upstream');
      // The naming and establishing loops' status writes are recorded as upstream's controllers' are.
      const byServer = (crd.metadata?.managedFields ?? []).filter((m) => m.manager === 'kube-apiserver');
      assert.deepEqual(
        byServer.map((m) => ({ operation: m.operation, subresource: m.subresource, apiVersion: m.apiVersion })),
        [{ operation: 'Update', subresource: 'status', apiVersion: 'apiextensions.k8s.io/v1' }],
      );
      const statusFields = (byServer[0]?.fieldsV1 as Record<string, Record<string, unknown>> | undefined)?.['f:status'] ?? {};
      assert.ok('f:acceptedNames' in statusFields && 'f:conditions' in statusFields, JSON.stringify(byServer[0]?.fieldsV1));

      await createInstances(gvr, 'Widget', [`a-${tag}`, `b-${tag}`]);
      assert.equal((await storedKeys(group, 'widgets')).length, 6);
      const out = await kubectl(k.bin, ['delete', 'crd', `widgets.${group}`, '--timeout=30s']);
      assert.match(out, /deleted/);
      assert.ok(await notFound(client.get(CRDS, undefined, `widgets.${group}`)), 'the CRD is gone when kubectl returns');
      assert.deepEqual(await storedKeys(group, 'widgets'), [], 'no instance is left in storage');
      // Its resource is no longer served.
      assert.ok(await notFound(client.list(gvr, `a-${tag}`)));
      const r = await run(k.bin, ['--kubeconfig', server.kubeconfig, 'get', `widgets.${group}`, '-A'], { timeoutMs: 30_000 });
      assert.notEqual(r.code, 0);
    });
  });
}

describe('CRD deletion with an instance that has its own finalizer', { timeout: 60_000 }, () => {
  it('stays Terminating (InstanceDeletionInProgress, creates refused) until the finalizer is removed', async () => {
    const group = 'held.example.com';
    const gvr: GVR = { group, version: 'v1', resource: 'gadgets' };
    await kubectl(tools.kubectl, ['apply', '-f', '-'], crdYAML(group, 'gadgets', 'Gadget'));
    await kubectl(tools.kubectl, ['wait', '--for', 'condition=established', '--timeout=20s', `crd/gadgets.${group}`]);
    await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'held' } });
    await client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'plain' } });
    await client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'pinned', finalizers: ['example.com/hold'] } });

    const first = (await client.delete(CRDS, undefined, `gadgets.${group}`)) as CRD;
    assert.ok(first.metadata?.deletionTimestamp, 'DELETE answers the CRD, now with a deletionTimestamp');
    assert.ok(first.metadata?.finalizers?.includes('customresourcecleanup.apiextensions.k8s.io'));
    assert.deepEqual(
      { reason: condition(first, 'Terminating')?.reason, message: condition(first, 'Terminating')?.message, status: condition(first, 'Terminating')?.status },
      { reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon', status: 'True' },
    );

    const terminating = await eventually(10_000, 'InstanceDeletionInProgress while the pinned instance stays', async () => {
      const crd = await client.get<CRD>(CRDS, undefined, `gadgets.${group}`);
      const plainGone = await notFound(client.get(gvr, 'held', 'plain'));
      return condition(crd, 'Terminating')?.reason === 'InstanceDeletionInProgress' && plainGone ? crd : undefined;
    });
    assert.deepEqual(condition(terminating, 'Terminating'), {
      ...condition(terminating, 'Terminating'),
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionInProgress',
      message: 'CustomResource deletion is in progress',
    });
    // The instance is being deleted, and held by its finalizer; the resource still serves reads.
    const pinned = await client.get(gvr, 'held', 'pinned');
    assert.ok(pinned.metadata?.deletionTimestamp);
    assert.equal((await client.list(gvr, 'held')).items.length, 1);
    // Creates are refused while the CRD is terminating (upstream's forbidCreateAdmission).
    await assert.rejects(client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'late' } }), (e: unknown) => {
      const err = e as { code?: number; message?: string };
      assert.equal(err.code, 403);
      assert.match(err.message ?? '', /gadgets\.held\.example\.com "late" is forbidden: create not allowed while custom resource definition is terminating/);
      return true;
    });
    // Discovery lists only the verbs upstream keeps for a terminating CRD.
    const lists = await client.discovery();
    const listed = lists.find((l) => l.groupVersion === `${group}/v1`)?.resources.find((r) => r.name === 'gadgets');
    assert.deepEqual([...(listed?.verbs ?? [])].sort(), ['delete', 'deletecollection', 'get', 'list', 'watch']);
    // A second DELETE changes nothing.
    const again = (await client.delete(CRDS, undefined, `gadgets.${group}`)) as CRD;
    assert.equal(again.metadata?.deletionTimestamp, first.metadata?.deletionTimestamp);
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(condition(await client.get<CRD>(CRDS, undefined, `gadgets.${group}`), 'Terminating')?.reason, 'InstanceDeletionInProgress');

    // kubectl patch removes the instance's finalizer (patch still works while terminating).
    await kubectl(tools.kubectl, ['patch', `gadgets.${group}`, 'pinned', '-n', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await eventually(10_000, 'the CRD is gone', async () => ((await notFound(client.get(CRDS, undefined, `gadgets.${group}`))) ? true : undefined));
    assert.deepEqual(await storedKeys(group, 'gadgets'), []);
  });
});

describe('CRD names conflicting with another CRD of the group', { timeout: 60_000 }, () => {
  it('gets NamesAccepted=False with upstream reason and message and is not served', async () => {
    const group = 'names.example.com';
    await kubectl(tools.kubectl, ['apply', '-f', '-'], crdYAML(group, 'foos', 'Foo', { shortNames: ['fo'] }));
    await kubectl(tools.kubectl, ['wait', '--for', 'condition=established', '--timeout=20s', `crd/foos.${group}`]);
    // Plural "bars" is free, but the kind Foo (and so FooList) is taken.
    await kubectl(tools.kubectl, ['apply', '-f', '-'], crdYAML(group, 'bars', 'Foo', { singular: 'bar' }));
    const bars = await eventually(10_000, 'NamesAccepted=False on bars', async () => {
      const crd = await client.get<CRD>(CRDS, undefined, `bars.${group}`);
      return condition(crd, 'NamesAccepted')?.status === 'False' ? crd : undefined;
    });
    // Kind and listKind (defaulted to FooList) both conflict; upstream reports the last check.
    assert.equal(condition(bars, 'NamesAccepted')?.reason, 'ListKindConflict');
    assert.equal(condition(bars, 'NamesAccepted')?.message, '"FooList" is already in use');
    assert.deepEqual({ plural: bars.status?.acceptedNames?.['plural'], kind: bars.status?.acceptedNames?.['kind'] }, { plural: 'bars', kind: '' });
    assert.deepEqual(
      { status: condition(bars, 'Established')?.status, reason: condition(bars, 'Established')?.reason, message: condition(bars, 'Established')?.message },
      { status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' },
    );
    assert.ok(await notFound(client.list({ group, version: 'v1', resource: 'bars' }, 'default')), 'not served');
    const r = await run(tools.kubectl, ['--kubeconfig', server.kubeconfig, 'wait', '--for', 'condition=established', '--timeout=1s', `crd/bars.${group}`], {
      timeoutMs: 20_000,
    });
    assert.notEqual(r.code, 0, 'never established');

    // A short name in use by another CRD: ShortNamesConflict.
    await kubectl(tools.kubectl, ['apply', '-f', '-'], crdYAML(group, 'bazs', 'Baz', { shortNames: ['fo'] }));
    const bazs = await eventually(10_000, 'NamesAccepted=False on bazs', async () => {
      const crd = await client.get<CRD>(CRDS, undefined, `bazs.${group}`);
      return condition(crd, 'NamesAccepted')?.status === 'False' ? crd : undefined;
    });
    assert.equal(condition(bazs, 'NamesAccepted')?.reason, 'ShortNamesConflict');
    assert.equal(condition(bazs, 'NamesAccepted')?.message, '"fo" is already in use');

    // Deleting the holder frees its names: bars is accepted and established.
    await kubectl(tools.kubectl, ['delete', 'crd', `foos.${group}`, '--timeout=20s']);
    await kubectl(tools.kubectl, ['wait', '--for', 'condition=established', '--timeout=20s', `crd/bars.${group}`]);
    const accepted = await client.get<CRD>(CRDS, undefined, `bars.${group}`);
    assert.equal(condition(accepted, 'NamesAccepted')?.reason, 'NoConflicts');
    await eventually(5_000, 'bars served', async () => ((await client.list({ group, version: 'v1', resource: 'bars' }, 'default')).items ? true : undefined));
  });
});

describe('kubectl delete namespace with custom resources inside', { timeout: 60_000 }, () => {
  it('the namespace controller (over HTTPS) finds them through discovery and deletes them', async () => {
    const group = 'nsdel.example.com';
    const gvr: GVR = { group, version: 'v1', resource: 'things' };
    await kubectl(tools.kubectl, ['apply', '-f', '-'], crdYAML(group, 'things', 'Thing'));
    await kubectl(tools.kubectl, ['wait', '--for', 'condition=established', '--timeout=20s', `crd/things.${group}`]);
    await createInstances(gvr, 'Thing', ['crs-ns', 'crs-keep']);
    const controllerClient = createHttpsClient(server.kubeconfig);
    const running = runControllers({ client: controllerClient, controllers: [namespaceDeletion({ finalizerEstimateSeconds: 2 })] });
    try {
      for (const bin of [tools.kubectl120]) {
        const out = await kubectl(bin, ['delete', 'namespace', 'crs-ns', '--timeout=30s']);
        assert.match(out, /namespace "crs-ns" deleted/);
      }
      assert.ok(await notFound(client.get(NS, undefined, 'crs-ns')));
      const keys = await storedKeys(group, 'things');
      assert.deepEqual(
        keys.map((key) => key.split('/').slice(-2).join('/')).sort(),
        ['crs-keep/w-0', 'crs-keep/w-1', 'crs-keep/w-2'],
        'only the other namespace keeps its custom resources',
      );
    } finally {
      await running.stop();
      await controllerClient.close();
    }
  });
});

// DELETE of a CRD as upstream's CRD REST answers it (apiextensions-apiserver
// pkg/registry/customresourcedefinition/etcd.go, REST.Delete), on a server whose store applies the
// garbage collector's finalizers (kube-apiserver's default) and with no controller that would remove
// them: the CRD REST's own precondition words on every DELETE; the first DELETE adds only the
// clean-up finalizer (propagationPolicy and orphanDependents have no effect), with neither a grace
// period nor a generation bump; dryRun answers the CRD as it would be and writes nothing; a
// repeated DELETE is the generic store's (options' GC finalizers, deletionGracePeriodSeconds 0).
describe('CRD DELETE as the CRD REST answers it', { timeout: 90_000 }, () => {
  const CLEANUP = 'customresourcecleanup.apiextensions.k8s.io';
  const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const JSON_CT = { 'content-type': 'application/json', accept: 'application/json' };
  let gcServer: TestServer;
  let raw: RawClient;
  /** kubectl's HOME and discovery cache, private to these tests. */
  let kubectlDir: string;

  before(async () => {
    gcServer = await startTestServer({ storage: 'memory', garbageCollection: true });
    raw = new RawClient(gcServer.url, adminCredentials(gcServer.dataDir));
    kubectlDir = await mkdtemp(join(tmpdir(), 'kplane-crd-delete-kubectl-'));
  });
  after(async () => {
    raw?.close();
    await gcServer?.stop();
    if (kubectlDir) await rm(kubectlDir, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown): Promise<RawResponse> =>
    raw.request({ method, path, headers: JSON_CT, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const expectCode = (r: RawResponse, code: number): CRD & Record<string, unknown> => {
    assert.equal(r.status, code, r.text().slice(0, 800));
    return r.json<CRD & Record<string, unknown>>();
  };
  const deleteOptions = (o: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'DeleteOptions', ...o });
  const kubectlAt = (bin: string, args: string[]): Promise<string> => kubectlSession(bin, gcServer.kubeconfig, kubectlDir, 40_000).ok(args);

  /**
   * An established CRD `gizmos.<group>` with one instance held by its own finalizer, so that a
   * DELETE leaves the CRD Terminating until `release` removes that finalizer.
   */
  async function heldCRD(group: string): Promise<{ name: string; crd: CRD; release: () => Promise<void> }> {
    const name = `gizmos.${group}`;
    const crd = expectCode(
      await call(
        'POST',
        CRD_PATH,
        crdObject({ group, plural: 'gizmos', kind: 'Gizmo', spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
      ),
      201,
    );
    const items = `/apis/${group}/v1/namespaces/default/gizmos`;
    await waitServed(raw, items);
    expectCode(await call('POST', items, { apiVersion: `${group}/v1`, kind: 'Gizmo', metadata: { name: 'pinned', finalizers: ['example.com/hold'] } }), 201);
    return {
      name,
      crd,
      async release() {
        expectCode(
          await raw.request({
            method: 'PATCH',
            path: `${items}/pinned`,
            headers: { 'content-type': 'application/merge-patch+json' },
            body: '{"metadata":{"finalizers":null}}',
          }),
          200,
        );
        await eventually(20_000, `${name} gone`, async () => ((await call('GET', `${CRD_PATH}/${name}`)).status === 404 ? true : undefined));
      },
    };
  }

  it('preconditions that do not match are 409 in the CRD REST words, on the first and on a repeated DELETE', async () => {
    const { name, crd, release } = await heldCRD('pre.example.com');
    const uid = crd.metadata?.uid ?? '';
    const conflict = (why: string) => ({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io "${name}": ${why}`,
      reason: 'Conflict',
      details: { name, group: 'apiextensions.k8s.io', kind: 'customresourcedefinitions' },
      code: 409,
    });
    assert.deepEqual(
      expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ preconditions: { uid: 'not-the-uid' } })), 409),
      conflict(`Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`),
    );
    const rv = expectCode(await call('GET', `${CRD_PATH}/${name}`), 200).metadata?.resourceVersion ?? '';
    assert.deepEqual(
      expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ preconditions: { uid, resourceVersion: '1' } })), 409),
      conflict(`Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${rv}`),
    );
    const first = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ preconditions: { uid, resourceVersion: rv } })), 200);
    assert.ok(first.metadata?.deletionTimestamp);
    // A repeated DELETE goes through the CRD REST's check first too.
    assert.deepEqual(
      expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ preconditions: { uid: 'not-the-uid' } })), 409),
      conflict(`Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${uid}`),
    );
    await release();
  });

  for (const k of [
    { ...KUBECTLS[0], cascade: '--cascade=false', policy: 'orphan' },
    { ...KUBECTLS[1], cascade: '--cascade=foreground', policy: 'foreground' },
  ]) {
    it(`kubectl ${k.name} delete crd ${k.cascade}: the first DELETE adds only the clean-up finalizer, no grace period, the same generation`, async () => {
      const { name, crd, release } = await heldCRD(`${k.policy}${k.name.replace('.', '')}.example.com`);
      const out = await kubectlAt(k.bin, ['delete', 'crd', name, k.cascade, '--wait=false']);
      assert.match(out, /deleted/);
      const got = expectCode(await call('GET', `${CRD_PATH}/${name}`), 200);
      assert.ok(got.metadata?.deletionTimestamp);
      assert.deepEqual(got.metadata?.finalizers, [CLEANUP], 'no orphan or foregroundDeletion finalizer on the first DELETE');
      assert.equal(got.metadata?.deletionGracePeriodSeconds, undefined);
      assert.equal(got.metadata?.generation, crd.metadata?.generation);
      // Nothing holds it but its instance: once that goes, the CRD goes (no GC controller runs here).
      await release();
    });
  }

  it("orphanDependents on the first DELETE has no effect either: true → 200, false → 202 (the handler's answer), only the clean-up finalizer", async () => {
    for (const [orphanDependents, code] of [
      [true, 200],
      [false, 202],
    ] as const) {
      const { name, release } = await heldCRD(`orphan-${String(orphanDependents)}.example.com`);
      const first = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ orphanDependents })), code);
      assert.equal(first.kind, 'CustomResourceDefinition');
      assert.deepEqual(first.metadata?.finalizers, [CLEANUP]);
      assert.equal(condition(first, 'Terminating')?.reason, 'InstanceDeletionPending');
      await release();
    }
  });

  it('dryRun: the CRD as the first DELETE would leave it, nothing written (raw and kubectl --dry-run=server)', async () => {
    const { name, release } = await heldCRD('dry.example.com');
    const before = expectCode(await call('GET', `${CRD_PATH}/${name}`), 200);
    const dry = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ dryRun: ['All'], propagationPolicy: 'Orphan' })), 200);
    assert.equal(dry.kind, 'CustomResourceDefinition');
    assert.ok(dry.metadata?.deletionTimestamp);
    assert.deepEqual(dry.metadata?.finalizers, [CLEANUP]);
    assert.deepEqual(
      { status: condition(dry, 'Terminating')?.status, reason: condition(dry, 'Terminating')?.reason, message: condition(dry, 'Terminating')?.message },
      { status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' },
    );
    assert.equal(dry.metadata?.resourceVersion, before.metadata?.resourceVersion);
    for (const { bin } of KUBECTLS) {
      assert.match(await kubectlAt(bin, ['delete', 'crd', name, '--dry-run=server']), /deleted \(server dry run\)/);
    }
    assert.deepEqual(expectCode(await call('GET', `${CRD_PATH}/${name}`), 200), before, 'nothing written');
    expectCode(await call('DELETE', `${CRD_PATH}/${name}`), 200);
    await release();
  });

  it("a repeated DELETE is the generic store's: Orphan adds the orphan finalizer and deletionGracePeriodSeconds 0, Background drops it", async () => {
    const { name, release } = await heldCRD('again.example.com');
    const first = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ propagationPolicy: 'Orphan' })), 200);
    assert.deepEqual(first.metadata?.finalizers, [CLEANUP]);
    const again = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ propagationPolicy: 'Orphan' })), 200);
    assert.deepEqual(again.metadata?.finalizers, [CLEANUP, 'orphan']);
    assert.equal(again.metadata?.deletionGracePeriodSeconds, 0);
    assert.equal(again.metadata?.deletionTimestamp, first.metadata?.deletionTimestamp);
    const background = expectCode(await call('DELETE', `${CRD_PATH}/${name}`, deleteOptions({ propagationPolicy: 'Background' })), 200);
    assert.deepEqual(background.metadata?.finalizers, [CLEANUP]);
    await release();
  });
});
