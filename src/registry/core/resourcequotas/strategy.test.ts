// ResourceQuota through the store: the status resets on create and is kept on updates of the
// object, a /status write keeps the spec, quantities are stored in canonical form, the scopes are
// immutable, and the table cells are printResourceQuota's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { GenericStore } from '../../store.js';
import { resourceQuotasResource } from './index.js';
import { quotaCells, resourceQuotaStrategy, type ResourceQuota } from './strategy.js';

const newStore = (): GenericStore =>
  new GenericStore({
    descriptor: resourceQuotasResource,
    strategy: resourceQuotaStrategy,
    storage: new MemoryStorage(),
    keyPrefix: '/registry/resourcequotas/',
  });
const quota = (extra: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'ns' }, ...extra });

describe('ResourceQuota strategy', () => {
  it('create drops the status and stores canonical quantities', async () => {
    const s = newStore();
    const { object } = await s.create('ns', quota({ spec: { hard: { 'count/configmaps': '1000', cpu: '0.5' } }, status: { used: { cpu: '1' } } }));
    const q = object as ResourceQuota;
    assert.deepEqual(q.spec?.hard, { 'count/configmaps': '1k', cpu: '500m' });
    assert.equal(q.status, undefined);
  });

  it('an update keeps the stored status; a /status write keeps the stored spec', async () => {
    const s = newStore();
    await s.create('ns', quota({ spec: { hard: { secrets: '2' } } }));
    await s.update('ns', 'q', (cur) => ({ ...cur!, spec: { hard: { secrets: '9' } }, status: { hard: { secrets: '2' }, used: { secrets: '1' } } }), {
      subresource: 'status',
    });
    let q = (await s.get('ns', 'q')) as ResourceQuota;
    assert.deepEqual(q.spec?.hard, { secrets: '2' });
    assert.deepEqual(q.status, { hard: { secrets: '2' }, used: { secrets: '1' } });
    await s.update('ns', 'q', (cur) => ({ ...cur!, spec: { hard: { secrets: '3' } }, status: {} }));
    q = await s.get('ns', 'q');
    assert.deepEqual(q.spec?.hard, { secrets: '3' });
    assert.deepEqual(q.status, { hard: { secrets: '2' }, used: { secrets: '1' } });
  });

  it('scopes are immutable; a negative used is refused through /status', async () => {
    const s = newStore();
    await s.create('ns', quota({ spec: { hard: { pods: '2' }, scopes: ['BestEffort'] } }));
    await assert.rejects(
      s.update('ns', 'q', (cur) => ({ ...cur!, spec: { hard: { pods: '2' }, scopes: ['NotBestEffort'] } })),
      (e: unknown) => e instanceof StatusError && e.code === 422 && /spec\.scopes: Invalid value: \["NotBestEffort"\]: field is immutable/.test(e.message),
    );
    await assert.rejects(
      s.update('ns', 'q', (cur) => ({ ...cur!, status: { hard: { pods: '2' }, used: { pods: '-1' } } }), { subresource: 'status' }),
      (e: unknown) =>
        e instanceof StatusError && e.code === 422 && /status\.used\[pods\]: Invalid value: "-1": must be greater than or equal to 0/.test(e.message),
    );
  });

  it('REQUEST and LIMIT cells list status.hard sorted, limits.* under LIMIT', () => {
    const q = {
      status: { hard: { 'limits.cpu': '2', 'count/configmaps': '3', pods: '4' }, used: { 'limits.cpu': '0', 'count/configmaps': '1' } },
    } as unknown as ResourceQuota;
    assert.deepEqual(quotaCells(q), ['count/configmaps: 1/3, pods: 0/4', 'limits.cpu: 0/2']);
    assert.deepEqual(quotaCells({}), ['', '']);
  });
});
