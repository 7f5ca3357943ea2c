// The CRD lifecycle end to end, on a server started without controllers (like
// `kplane serve --controllers=false`: naming, establishing and the clean-up finalizer run inside the
// API module, as in upstream's apiextensions-apiserver): `kubectl wait --for condition=established`;
// kubectl 1.20 and 1.33 `delete crd` with instances in two namespaces returns once the CRD and its
// stored instances are gone; an instance with its own finalizer keeps the CRD Terminating
// (InstanceDeletionInProgress, creates refused) until the finalizer goes; a CRD whose names
// conflict gets NamesAccepted=False with upstream's reason and is not served; `kubectl delete
// namespace` removes custom resources too (namespace controller over HTTPS, found via discovery).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { namespaceDeletion, runControllers } from '../../src/controllers/index.js';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { CRDS, NS } from '../support/gvrs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';
import { eventually } from '../support/eventually.js';

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
      await client.create(gvr, ns, { apiVersion: `${gvr.group}/v1`, kind, metadata: { name: `w-${i}` }, spec: { i } } as KubeObject);
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
    await client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'plain' } } as KubeObject);
    await client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'pinned', finalizers: ['example.com/hold'] } } as KubeObject);

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
    await assert.rejects(client.create(gvr, 'held', { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'late' } } as KubeObject), (e: unknown) => {
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
    const r = await run(tools.kubectl, ['--kubeconfig', server.kubeconfig, 'wait', '--for', 'condition=established', '--timeout=1s', `crd/bars.${group}`], { timeoutMs: 20_000 });
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
