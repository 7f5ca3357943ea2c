// DELETE of a CustomResourceDefinition through the generic store and the CRD strategy, as upstream's
// CRD REST (apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go, REST.Delete)
// does it, with the garbage collector's finalizers on (kube-apiserver's default): its own
// precondition check and words; the first DELETE adds only the clean-up finalizer and the
// Terminating condition, whatever propagationPolicy or orphanDependents say, and leaves the GC
// finalizers the CRD has as they are; a later DELETE is the generic store's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { GenericStore, type DeleteOptions } from '../registry/store.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import { crdStrategy } from './crd-strategy.js';
import { customResourceDefinitionsResource } from './module.js';
import type { CustomResourceDefinition } from './types.js';

const CLEANUP = 'customresourcecleanup.apiextensions.k8s.io';
const NAME = 'widgets.example.com';

async function created(finalizers?: string[]): Promise<{ store: GenericStore; crd: KubeObject }> {
  const store = new GenericStore({
    descriptor: customResourceDefinitionsResource,
    strategy: crdStrategy(),
    storage: new MemoryStorage(),
    keyPrefix: '/registry/apiextensions.k8s.io/customresourcedefinitions/',
    garbageCollection: true,
  });
  const crd = await store.create(undefined, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME, ...(finalizers ? { finalizers } : {}) },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
    },
  });
  return { store, crd: crd.object };
}

function conflictOf(f: () => Promise<unknown>): Promise<{ code: number; message?: string; details?: unknown }> {
  return f().then(
    () => assert.fail('expected a 409'),
    (e: unknown) => {
      assert.ok(isStatusError(e), String(e));
      return { code: e.code, message: e.status.message, details: e.status.details };
    },
  );
}

describe('CRD DELETE (the CRD REST)', () => {
  const options: [string, DeleteOptions][] = [
    ['propagationPolicy=Orphan', { propagationPolicy: 'Orphan' }],
    ['propagationPolicy=Foreground', { propagationPolicy: 'Foreground' }],
    ['propagationPolicy=Background', { propagationPolicy: 'Background' }],
    ['orphanDependents=true', { orphanDependents: true }],
    ['orphanDependents=false', { orphanDependents: false }],
  ];
  for (const [name, opts] of options) {
    it(`the first DELETE with ${name}: only the clean-up finalizer, the GC finalizers it has untouched, no grace period, the same generation`, async () => {
      for (const own of [undefined, ['orphan'], ['example.com/a', 'foregroundDeletion']]) {
        const { store, crd } = await created(own);
        const r = await store.delete(undefined, NAME, opts);
        assert.equal(r.deleted, false);
        const m = r.object.metadata!;
        assert.deepEqual(m.finalizers, [...(own ?? []), CLEANUP], JSON.stringify(own));
        assert.ok(m.deletionTimestamp);
        assert.equal(m.deletionGracePeriodSeconds, undefined);
        assert.equal(m.generation, crd.metadata?.generation);
        const terminating = (r.object as CustomResourceDefinition).status?.conditions?.find((c) => c.type === 'Terminating');
        assert.deepEqual(
          { status: terminating?.status, reason: terminating?.reason, message: terminating?.message },
          {
            status: 'True',
            reason: 'InstanceDeletionPending',
            message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
          },
        );
        assert.deepEqual((await store.get(undefined, NAME)).metadata?.finalizers, m.finalizers);
      }
    });
  }

  it('dryRun: the CRD as the first DELETE would leave it, nothing written', async () => {
    const { store, crd } = await created();
    const r = await store.delete(undefined, NAME, { dryRun: true, propagationPolicy: 'Foreground' });
    assert.deepEqual(r.object.metadata?.finalizers, [CLEANUP]);
    assert.ok(r.object.metadata?.deletionTimestamp);
    assert.deepEqual(await store.get(undefined, NAME), crd);
  });

  it("preconditions: the CRD REST's check and words (UID first), on the first and on a later DELETE", async () => {
    const { store, crd } = await created();
    const uid = crd.metadata?.uid ?? '';
    const rv = crd.metadata?.resourceVersion ?? '';
    const details = { name: NAME, group: 'apiextensions.k8s.io', kind: 'customresourcedefinitions' };
    const prefix = `Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io "${NAME}": `;
    assert.deepEqual(await conflictOf(() => store.delete(undefined, NAME, { preconditions: { uid: 'other', resourceVersion: '999' } })), {
      code: 409,
      message: `${prefix}Precondition failed: UID in precondition: other, UID in object meta: ${uid}`,
      details,
    });
    assert.deepEqual(await conflictOf(() => store.delete(undefined, NAME, { preconditions: { uid, resourceVersion: '999' } })), {
      code: 409,
      message: `${prefix}Precondition failed: ResourceVersion in precondition: 999, ResourceVersion in object meta: ${rv}`,
      details,
    });
    const first = await store.delete(undefined, NAME, { preconditions: { uid, resourceVersion: rv } });
    assert.deepEqual(first.object.metadata?.finalizers, [CLEANUP]);
    const rv2 = first.object.metadata?.resourceVersion ?? '';
    assert.deepEqual(await conflictOf(() => store.delete(undefined, NAME, { preconditions: { resourceVersion: rv } })), {
      code: 409,
      message: `${prefix}Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${rv2}`,
      details,
    });
  });

  it("a later DELETE is the generic store's: the options' GC finalizers, deletionGracePeriodSeconds 0, the deletionTimestamp kept", async () => {
    const { store } = await created();
    const first = await store.delete(undefined, NAME, { propagationPolicy: 'Orphan' });
    const again = await store.delete(undefined, NAME, { propagationPolicy: 'Orphan' });
    assert.equal(again.deleted, false);
    assert.deepEqual(again.object.metadata?.finalizers, [CLEANUP, 'orphan']);
    assert.equal(again.object.metadata?.deletionGracePeriodSeconds, 0);
    assert.equal(again.object.metadata?.deletionTimestamp, first.object.metadata?.deletionTimestamp);
    const background = await store.delete(undefined, NAME, { propagationPolicy: 'Background' });
    assert.deepEqual(background.object.metadata?.finalizers, [CLEANUP]);
  });
});
