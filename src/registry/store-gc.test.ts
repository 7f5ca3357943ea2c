// DELETE with a garbage collector running: the orphan/foregroundDeletion finalizers per
// propagationPolicy, orphanDependents, the object's own finalizers and the resource's default
// policy, exactly as upstream's deletionFinalizersForGarbageCollection; without one, nothing added.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapsResource } from './core/configmaps/index.js';
import type { KubeObject } from '../apimachinery/types.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import { configMapStrategy } from './core/configmaps/strategy.js';
import { GenericStore, type DeleteOptions } from './store.js';
import type { Strategy } from './strategy.js';

function store(garbageCollection: boolean, strategy: Strategy = configMapStrategy): GenericStore {
  return new GenericStore({ descriptor: configMapsResource, strategy, storage: new MemoryStorage(), keyPrefix: '/registry/configmaps/', garbageCollection });
}

async function deleteWith(s: GenericStore, opts: DeleteOptions, finalizers?: string[]): Promise<{ object: KubeObject; deleted: boolean }> {
  await s.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', ...(finalizers ? { finalizers } : {}) } });
  return s.delete('default', 'x', opts);
}

describe('store delete with a garbage collector', () => {
  const cases: [string, DeleteOptions, string[] | undefined, string[] | 'deleted'][] = [
    ['no options: background by default', {}, undefined, 'deleted'],
    ['Background', { propagationPolicy: 'Background' }, undefined, 'deleted'],
    ['Orphan', { propagationPolicy: 'Orphan' }, undefined, ['orphan']],
    ['Foreground', { propagationPolicy: 'Foreground' }, undefined, ['foregroundDeletion']],
    ['orphanDependents=true', { orphanDependents: true }, undefined, ['orphan']],
    ['orphanDependents=false is background', { orphanDependents: false }, undefined, 'deleted'],
    ['own finalizers kept, Orphan added', { propagationPolicy: 'Orphan' }, ['example.com/a'], ['example.com/a', 'orphan']],
    ['an existing orphan finalizer is honoured without options', {}, ['orphan'], ['orphan']],
    ['Foreground replaces an existing orphan finalizer', { propagationPolicy: 'Foreground' }, ['orphan'], ['foregroundDeletion']],
    ['Background drops an existing GC finalizer and deletes', { propagationPolicy: 'Background' }, ['foregroundDeletion'], 'deleted'],
  ];
  for (const [name, opts, fins, want] of cases) {
    it(name, async () => {
      const s = store(true);
      const r = await deleteWith(s, opts, fins);
      if (want === 'deleted') {
        assert.equal(r.deleted, true);
        await assert.rejects(s.get('default', 'x'), { code: 404 });
      } else {
        assert.equal(r.deleted, false);
        const got = await s.get('default', 'x');
        assert.deepEqual(got.metadata?.finalizers, want);
        assert.ok(got.metadata?.deletionTimestamp);
      }
    });
  }

  it('a terminating object switches policy on a second DELETE', async () => {
    const s = store(true);
    await deleteWith(s, { propagationPolicy: 'Foreground' });
    await s.delete('default', 'x', { propagationPolicy: 'Orphan' });
    assert.deepEqual((await s.get('default', 'x')).metadata?.finalizers, ['orphan']);
  });

  it('OrphanDependents as the default policy, Unsupported adds nothing', async () => {
    const orphaning = store(true, { ...configMapStrategy, defaultGarbageCollectionPolicy: 'OrphanDependents' });
    assert.deepEqual((await deleteWith(orphaning, {})).object.metadata?.finalizers, ['orphan']);
    const unsupported = store(true, { ...configMapStrategy, defaultGarbageCollectionPolicy: 'Unsupported' });
    assert.equal((await deleteWith(unsupported, { propagationPolicy: 'Orphan' })).deleted, true);
  });

  it('without a garbage collector DELETE adds no finalizer', async () => {
    for (const opts of [{ propagationPolicy: 'Orphan' }, { propagationPolicy: 'Foreground' }, { orphanDependents: true }] as DeleteOptions[]) {
      const s = store(false);
      assert.equal((await deleteWith(s, opts)).deleted, true);
    }
  });
});
