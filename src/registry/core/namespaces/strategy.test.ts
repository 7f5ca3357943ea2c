import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namespacesResource } from './index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import type { KV } from '../../../storage/storage.js';
import { ApiRegistry, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin } from '../../registry.js';
import { GenericStore } from '../../store.js';
import { namespaceLifecycle } from './lifecycle.js';
import { namespaceStrategy } from './strategy.js';

type Namespace = KubeObject & { spec?: { finalizers?: unknown[] }; status?: { phase?: string; conditions?: unknown[] } };

function store(): GenericStore {
  return new GenericStore({ descriptor: namespacesResource, strategy: namespaceStrategy, storage: new MemoryStorage(), keyPrefix: '/registry/namespaces/' });
}

const ns = (name: string, extra: Partial<Namespace> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name }, ...extra });

/** The 422's message and causes, as upstream's StatusError carries them. */
async function invalid(p: Promise<unknown>): Promise<{ message: string; causes: { field?: string; message?: string }[] }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, 422, e.message);
    return { message: e.message, causes: (e.status.details?.causes ?? []).map((c) => ({ field: c.field, message: c.message })) };
  }
  assert.fail('expected a 422');
}

const NEITHER = 'name is neither a standard finalizer name nor is it fully qualified';

describe('namespaces: spec.finalizers (ValidateNamespace, ValidateNamespaceFinalizeUpdate)', () => {
  it('create refuses an unqualified non-standard name at spec.finalizers (no index, as upstream)', async () => {
    const s = store();
    const err = await invalid(s.create(undefined, ns('a', { spec: { finalizers: ['foo'] } })));
    assert.equal(err.message, `Namespace "a" is invalid: spec.finalizers: Invalid value: "foo": ${NEITHER}`);
    const bad = await invalid(s.create(undefined, ns('b', { spec: { finalizers: ['a/b/c'] } })));
    assert.equal(bad.causes.length, 1);
    assert.equal(bad.causes[0]!.field, 'spec.finalizers');
    assert.match(bad.causes[0]!.message!, /^Invalid value: "a\/b\/c": a qualified name must consist of/);
    // Qualified and standard names are fine; kubernetes is added when missing.
    const ok = (await s.create(undefined, ns('c', { spec: { finalizers: ['example.com/x'] } }))).object as Namespace;
    assert.deepEqual(ok.spec, { finalizers: ['example.com/x', 'kubernetes'] });
  });

  it('/finalize checks each name at spec.finalizers[i]', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const err = await invalid(s.update(undefined, 'a', (cur) => ({ ...cur!, spec: { finalizers: ['kubernetes', 'foo', ''] } }), { subresource: 'finalize' }));
    assert.deepEqual(err.causes, [
      { field: 'spec.finalizers[1]', message: `Invalid value: "foo": ${NEITHER}` },
      { field: 'spec.finalizers[2]', message: 'Invalid value: "": name part must be non-empty' },
      err.causes[2]!, // the qualified-name regex message for ""
      { field: 'spec.finalizers[2]', message: `Invalid value: "": ${NEITHER}` },
    ]);
    assert.match(err.causes[2]!.message!, /^Invalid value: "": name part must consist of/);
    const ok = (await s.update(undefined, 'a', (cur) => ({ ...cur!, spec: { finalizers: ['kubernetes', 'example.com/x'] } }), { subresource: 'finalize' }))
      .object as Namespace;
    assert.deepEqual(ok.spec, { finalizers: ['kubernetes', 'example.com/x'] });
  });
});

describe('namespaces: /status phase (ValidateNamespaceStatusUpdate)', () => {
  const withPhase = (phase: string | undefined) => (cur: KubeObject | undefined) => ({ ...cur!, status: phase === undefined ? {} : { phase } });

  it('without deletionTimestamp the phase may only be Active (status.Phase, capital P as upstream)', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const term = await invalid(s.update(undefined, 'a', withPhase('Terminating'), { subresource: 'status' }));
    assert.equal(term.message, 'Namespace "a" is invalid: status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty');
    const bogus = await invalid(s.update(undefined, 'a', withPhase('Bogus'), { subresource: 'status' }));
    assert.deepEqual(bogus.causes, [{ field: 'status.Phase', message: 'Invalid value: "Bogus": may only be \'Active\' if `deletionTimestamp` is empty' }]);
  });

  it('a status without a phase is defaulted to Active (SetDefaults_NamespaceStatus)', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const out = (await s.update(undefined, 'a', withPhase(undefined), { subresource: 'status' })).object as Namespace;
    assert.equal(out.status?.phase, 'Active');
  });

  it('with deletionTimestamp the phase may only be Terminating', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    await s.delete(undefined, 'a');
    const active = await invalid(s.update(undefined, 'a', withPhase('Active'), { subresource: 'status' }));
    assert.deepEqual(active.causes, [
      { field: 'status.Phase', message: 'Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty' },
    ]);
    const out = (
      await s.update(undefined, 'a', (cur) => ({ ...cur!, status: { phase: 'Terminating', conditions: [{ type: 'X', status: 'True' }] } }), {
        subresource: 'status',
      })
    ).object as Namespace;
    assert.deepEqual(out.status, { phase: 'Terminating', conditions: [{ type: 'X', status: 'True' }] });
  });
});

describe('namespaces: what /status and /finalize write (namespaceStatusStrategy, namespaceFinalizeStrategy)', () => {
  const relabel =
    (spec: Namespace['spec'], status: Namespace['status']) =>
    (cur: KubeObject | undefined): KubeObject => ({
      ...cur!,
      metadata: { ...cur!.metadata, labels: { ...cur!.metadata?.labels, team: 'a' }, annotations: { note: 'x' }, finalizers: ['example.com/f'] },
      spec,
      status,
    });

  it('/status applies metadata and status, and keeps the stored spec', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const out = (
      await s.update(undefined, 'a', relabel({ finalizers: [] }, { phase: 'Active', conditions: [{ type: 'X', status: 'True' }] }), { subresource: 'status' })
    ).object as Namespace;
    assert.deepEqual(out.metadata?.labels, { 'kubernetes.io/metadata.name': 'a', team: 'a' });
    assert.deepEqual(out.metadata?.annotations, { note: 'x' });
    assert.deepEqual(out.metadata?.finalizers, ['example.com/f']);
    assert.deepEqual(out.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(out.status, { phase: 'Active', conditions: [{ type: 'X', status: 'True' }] });
  });

  it('/finalize applies metadata and spec, and keeps the stored status', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const out = (await s.update(undefined, 'a', relabel({ finalizers: ['example.com/x'] }, { phase: 'Terminating' }), { subresource: 'finalize' }))
      .object as Namespace;
    assert.deepEqual(out.metadata?.labels, { 'kubernetes.io/metadata.name': 'a', team: 'a' });
    assert.deepEqual(out.metadata?.annotations, { note: 'x' });
    assert.deepEqual(out.metadata?.finalizers, ['example.com/f']);
    assert.deepEqual(out.spec, { finalizers: ['example.com/x'] });
    assert.deepEqual(out.status, { phase: 'Active' });
  });

  it('metadata written through them is validated as on the namespace (labels; no new finalizers once terminating)', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const bad = await invalid(
      s.update(undefined, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { 'bad key!': 'x' } } }), { subresource: 'status' }),
    );
    assert.equal(bad.causes[0]?.field, 'metadata.labels');
    await s.delete(undefined, 'a');
    const added = await invalid(
      s.update(undefined, 'a', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: ['example.com/late'] } }), { subresource: 'finalize' }),
    );
    assert.equal(added.causes[0]?.field, 'metadata.finalizers');
  });
});

describe('namespaces: DELETE (the namespace REST, pkg/registry/core/namespace/storage)', () => {
  const gcStore = (): GenericStore =>
    new GenericStore({
      descriptor: namespacesResource,
      strategy: namespaceStrategy,
      storage: new MemoryStorage(),
      keyPrefix: '/registry/namespaces/',
      garbageCollection: true,
    });
  const emptyFinalizers = (cur: KubeObject | undefined): KubeObject => ({ ...cur!, spec: { finalizers: [] } });

  it('the first DELETE only marks the namespace Terminating, even without any finalizer; the next one removes it', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const before = (await s.update(undefined, 'a', emptyFinalizers, { subresource: 'finalize' })).object;
    // dryRun: the Terminating namespace it would be, nothing written.
    const dry = await s.delete(undefined, 'a', { dryRun: true });
    assert.equal(dry.deleted, false);
    assert.equal((dry.object as Namespace).status?.phase, 'Terminating');
    assert.ok(dry.object.metadata?.deletionTimestamp);
    assert.equal((await s.get(undefined, 'a')).metadata?.resourceVersion, before.metadata?.resourceVersion);
    const first = await s.delete(undefined, 'a');
    assert.equal(first.deleted, false);
    assert.equal((first.object as Namespace).status?.phase, 'Terminating');
    assert.ok(first.object.metadata?.deletionTimestamp);
    assert.equal(first.object.metadata?.deletionGracePeriodSeconds, undefined);
    assert.equal((await s.get(undefined, 'a')).metadata?.resourceVersion, first.object.metadata?.resourceVersion);
    // Terminating with spec.finalizers empty: an ordinary delete, which removes it now.
    const dryAgain = await s.delete(undefined, 'a', { dryRun: true });
    assert.equal(dryAgain.deleted, true);
    await s.get(undefined, 'a');
    const second = await s.delete(undefined, 'a');
    assert.equal(second.deleted, true);
    assert.equal(second.object.metadata?.name, 'a');
    await assert.rejects(s.get(undefined, 'a'), (e: unknown) => e instanceof StatusError && e.code === 404);
  });

  it('a DELETE of a namespace terminating with spec.finalizers answers it unchanged', async () => {
    const s = store();
    await s.create(undefined, ns('a'));
    const first = await s.delete(undefined, 'a');
    const again = await s.delete(undefined, 'a');
    assert.equal(again.deleted, false);
    assert.deepEqual(again.object, first.object);
  });

  it('once spec.finalizers are gone, metadata.finalizers hold it, and a DELETE that drops the last one removes it', async () => {
    const s = gcStore();
    await s.create(undefined, ns('a'));
    await s.update(undefined, 'a', emptyFinalizers, { subresource: 'finalize' });
    // Orphan on the first DELETE: the orphan finalizer is added (storage.go shouldHaveOrphanFinalizer).
    const first = await s.delete(undefined, 'a', { propagationPolicy: 'Orphan' });
    assert.deepEqual(first.object.metadata?.finalizers, ['orphan']);
    assert.equal((first.object as Namespace).status?.phase, 'Terminating');
    // No options: the orphan finalizer stays and holds the namespace.
    const held = await s.delete(undefined, 'a');
    assert.equal(held.deleted, false);
    assert.deepEqual(held.object.metadata?.finalizers, ['orphan']);
    // Background drops it: nothing holds the namespace any more (store.Delete's errDeleteNow).
    const gone = await s.delete(undefined, 'a', { propagationPolicy: 'Background' });
    assert.equal(gone.deleted, true);
    await assert.rejects(s.get(undefined, 'a'), (e: unknown) => e instanceof StatusError && e.code === 404);
  });

  it('a DELETE of a terminating namespace held only by metadata.finalizers is the generic one: deletionGracePeriodSeconds 0 (markAsDeleting), once', async () => {
    const s = gcStore();
    await s.create(undefined, ns('a'));
    await s.update(undefined, 'a', emptyFinalizers, { subresource: 'finalize' });
    const first = await s.delete(undefined, 'a', { propagationPolicy: 'Orphan' });
    assert.equal(first.object.metadata?.deletionGracePeriodSeconds, undefined);
    const held = await s.delete(undefined, 'a');
    assert.equal(held.deleted, false);
    assert.equal(held.object.metadata?.deletionGracePeriodSeconds, 0);
    assert.equal(held.object.metadata?.deletionTimestamp, first.object.metadata?.deletionTimestamp);
    assert.notEqual(held.object.metadata?.resourceVersion, first.object.metadata?.resourceVersion);
    const dry = await s.delete(undefined, 'a', { dryRun: true });
    assert.equal(dry.object.metadata?.resourceVersion, held.object.metadata?.resourceVersion);
    const again = await s.delete(undefined, 'a');
    assert.deepEqual(again.object, held.object);
  });

  it("admission: none for a namespace still finalizing; after the REST's own preconditions otherwise, on the namespace as read", async () => {
    const s = store();
    const seen: KubeObject[] = [];
    const validate = (old: KubeObject): void => void seen.push(old);
    const created = (await s.create(undefined, ns('a'))).object;
    await assert.rejects(s.delete(undefined, 'a', { validate, preconditions: { uid: 'other' } }), (e: unknown) => e instanceof StatusError && e.code === 409);
    assert.equal(seen.length, 0);
    const first = await s.delete(undefined, 'a', { validate });
    assert.deepEqual(seen, [created]);
    // Terminating with spec.finalizers left: answered as it is, admission is not asked.
    const again = await s.delete(undefined, 'a', { validate });
    assert.deepEqual(again.object, first.object);
    assert.equal(seen.length, 1);
    // Preconditions still apply there, in the REST's words.
    await assert.rejects(
      s.delete(undefined, 'a', { validate, preconditions: { resourceVersion: '1' } }),
      (e: unknown) =>
        e instanceof StatusError &&
        e.code === 409 &&
        /^Operation cannot be fulfilled on namespaces "a": Precondition failed: ResourceVersion in precondition: 1, /.test(e.message),
    );
  });
});

describe('NamespaceLifecycle admission (plugin/namespace/lifecycle)', () => {
  /** Namespaces over a storage whose cache (peek) can be frozen stale, as a lister may be. */
  class StaleCache extends MemoryStorage {
    readonly frozen = new Map<string, KV | undefined>();
    peek(key: string): { kv: KV | undefined } | undefined {
      return this.frozen.has(key) ? { kv: this.frozen.get(key) } : undefined;
    }
  }
  function setup(): { storage: StaleCache; registry: ApiRegistry; namespaces: GenericStore; clock: { now: number }; plugin: AdmissionPlugin } {
    const storage = new StaleCache();
    const registry = new ApiRegistry(storage);
    const namespaces = registry.add({ descriptor: namespacesResource, strategy: namespaceStrategy }).store;
    const clock = { now: 1_000_000 };
    return { storage, registry, namespaces, clock, plugin: namespaceLifecycle(registry, { now: () => clock.now }) };
  }
  const user = { name: 'u', groups: [] };
  const cmAttrs = (operation: AdmissionOperation, namespace: string, name: string, object?: KubeObject): AdmissionAttributes => ({
    operation,
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace,
    name,
    ...(object ? { object } : {}),
    dryRun: false,
    userInfo: user,
  });
  const nsAttrs = (operation: AdmissionOperation, name: string): AdmissionAttributes => ({
    operation,
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'Namespace' },
    namespace: '',
    name,
    dryRun: false,
    userInfo: user,
  });
  const cm = (meta: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta });
  async function rejected(p: Promise<void> | void): Promise<StatusError> {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof StatusError, String(e));
      return e;
    }
    assert.fail('expected an error');
  }

  it('is a mutating plugin (Admit): it runs before the object is named from generateName and validated', () => {
    const { plugin } = setup();
    assert.equal(typeof plugin.admit, 'function');
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
    assert.equal(plugin.validate, undefined);
  });

  it('names the object in the 403 as admission.NewForbidden does: request name, object name, generateName, "Unknown"', async () => {
    const { namespaces, plugin } = setup();
    await namespaces.create(undefined, ns('t'));
    await namespaces.delete(undefined, 't');
    const cases: [string, KubeObject, string][] = [
      ['', cm({ generateName: 'gen-' }), 'gen-'],
      ['', cm({ name: 'named', generateName: 'gen-' }), 'named'],
      ['', cm({}), 'Unknown'],
      ['from-url', cm({ name: 'from-url' }), 'from-url'],
    ];
    for (const [name, object, want] of cases) {
      const e = await rejected(plugin.admit!(cmAttrs('CREATE', 't', name, object)));
      assert.equal(e.code, 403);
      assert.deepEqual(e.status, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `configmaps "${want}" is forbidden: unable to create new content in namespace t because it is being terminated`,
        reason: 'Forbidden',
        details: {
          name: want,
          kind: 'configmaps',
          causes: [{ reason: 'NamespaceTerminating', message: 'namespace t is being terminated', field: 'metadata.namespace' }],
        },
        code: 403,
      });
    }
  });

  it('refuses UPDATE in a missing namespace (404 for the namespace) but not in a terminating one', async () => {
    const { namespaces, plugin } = setup();
    const e = await rejected(plugin.admit!(cmAttrs('UPDATE', 'gone', 'x', cm({ name: 'x' }))));
    assert.equal(e.code, 404);
    assert.equal(e.message, 'namespaces "gone" not found');
    assert.deepEqual(e.status.details, { name: 'gone', kind: 'namespaces' });
    await namespaces.create(undefined, ns('t'));
    await namespaces.delete(undefined, 't');
    await plugin.admit!(cmAttrs('UPDATE', 't', 'x', cm({ name: 'x' })));
  });

  it('admits deletes of content, cluster-scoped kinds, localsubjectaccessreviews and CONNECT without looking', async () => {
    const { plugin } = setup();
    await plugin.admit!(cmAttrs('DELETE', 'gone', 'x'));
    await plugin.admit!(cmAttrs('CONNECT', 'gone', 'x'));
    await plugin.admit!({ ...cmAttrs('CREATE', '', 'crd'), resource: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' } });
    await plugin.admit!({
      ...cmAttrs('CREATE', 'gone', ''),
      resource: { group: 'authorization.k8s.io', version: 'v1', resource: 'localsubjectaccessreviews' },
      kind: { group: 'authorization.k8s.io', version: 'v1', kind: 'LocalSubjectAccessReview' },
    });
    const e = await rejected(
      plugin.admit!({ ...cmAttrs('CREATE', 'gone', ''), resource: { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' } }),
    );
    assert.equal(e.code, 404);
  });

  it('default, kube-system and kube-public are immortal; kube-node-lease and others are not', async () => {
    const { plugin } = setup();
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const e = await rejected(plugin.admit!(nsAttrs('DELETE', name)));
      assert.deepEqual(e.status, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        reason: 'Forbidden',
        details: { name, kind: 'namespaces' },
        code: 403,
      });
    }
    await plugin.admit!(nsAttrs('DELETE', 'kube-node-lease'));
    await plugin.admit!(nsAttrs('UPDATE', 'default'));
  });

  it('after a namespace DELETE through it, creates look past a cache still showing it Active (30 s)', async () => {
    const { storage, namespaces, clock, plugin } = setup();
    await namespaces.create(undefined, ns('t'));
    const key = '/registry/namespaces/t';
    storage.frozen.set(key, await storage.get(key)); // the cache keeps the Active namespace
    await namespaces.delete(undefined, 't');
    // Like a lister: the stale cache is believed...
    await plugin.admit!(cmAttrs('CREATE', 't', 'a', cm({ name: 'a' })));
    // ...until this server admits a DELETE of the namespace: then storage is asked.
    await plugin.admit!(nsAttrs('DELETE', 't'));
    assert.equal((await rejected(plugin.admit!(cmAttrs('CREATE', 't', 'a', cm({ name: 'a' }))))).code, 403);
    clock.now += 31_000;
    await plugin.admit!(cmAttrs('CREATE', 't', 'a', cm({ name: 'a' })));
  });

  it('a namespace missing from the cache is looked up in storage (just created)', async () => {
    const { storage, namespaces, plugin } = setup();
    storage.frozen.set('/registry/namespaces/new', undefined);
    await namespaces.create(undefined, ns('new'));
    await plugin.admit!(cmAttrs('CREATE', 'new', 'a', cm({ name: 'a' })));
  });
});
