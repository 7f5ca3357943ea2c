// The ResourceQuota admission plugin against a registry on memory storage: charges, refusals,
// dry runs, scoped quotas, sub-resources, and creates racing at the limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdmissionAttributes } from '../../../admission/index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { ApiRegistry } from '../../registry.js';
import { resourceQuotaAdmission } from './admission.js';
import { resourceQuotas } from './index.js';
import type { ResourceQuota } from './strategy.js';

async function setup(quota: Record<string, unknown>) {
  const registry = new ApiRegistry(new MemoryStorage());
  const store = registry.add(resourceQuotas).store;
  await store.create('ns', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, ...quota });
  const status = quota.status as KubeObject | undefined;
  if (status) await store.update('ns', 'q', (cur) => ({ ...cur!, status }), { subresource: 'status' });
  const plugin = resourceQuotaAdmission(registry);
  const used = async () => ((await store.get('ns', 'q')) as ResourceQuota).status?.used;
  return { plugin, used, registry };
}

const create = (name: string, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  subresource: '',
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  namespace: 'ns',
  name: '',
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } },
  dryRun: false,
  userInfo: { name: 'alice', groups: [] },
  ...extra,
});

const forbidden = (message: string) => (e: unknown) => e instanceof StatusError && e.code === 403 && e.message === message;

describe('ResourceQuota admission', () => {
  it('charges count/configmaps and configmaps, refuses past hard with the names that are over', async () => {
    const { plugin, used } = await setup({
      spec: { hard: { 'count/configmaps': '1', configmaps: '5' } },
      status: { hard: { 'count/configmaps': '1', configmaps: '5' }, used: { 'count/configmaps': '0', configmaps: '0' } },
    });
    await plugin.validate!(create('a'));
    assert.deepEqual(await used(), { 'count/configmaps': '1', configmaps: '1' });
    await assert.rejects(
      async () => plugin.validate!(create('b')),
      forbidden('configmaps "b" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1'),
    );
    assert.deepEqual(await used(), { 'count/configmaps': '1', configmaps: '1' });
  });

  it('a dry run is checked but not charged; updates, sub-resources and other resources are not charged', async () => {
    const { plugin, used } = await setup({
      spec: { hard: { 'count/configmaps': '1' } },
      status: { hard: { 'count/configmaps': '1' }, used: { 'count/configmaps': '0' } },
    });
    await plugin.validate!(create('a', { dryRun: true }));
    await plugin.validate!(create('a', { operation: 'UPDATE' }));
    await plugin.validate!(create('a', { subresource: 'status' }));
    await plugin.validate!(create('a', { resource: { group: '', version: 'v1', resource: 'secrets' } }));
    assert.deepEqual(await used(), { 'count/configmaps': '0' });
    // Checked: once the quota is full, a dry run is refused as the create would be.
    await plugin.validate!(create('b'));
    await assert.rejects(
      async () => plugin.validate!(create('c', { dryRun: true })),
      forbidden('configmaps "c" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1'),
    );
    assert.deepEqual(await used(), { 'count/configmaps': '1' });
  });

  it('a scoped quota counts nothing kplane serves', async () => {
    const { plugin, used } = await setup({
      spec: { hard: { 'count/configmaps': '0' }, scopes: ['BestEffort'] },
      status: { hard: { 'count/configmaps': '0' }, used: { 'count/configmaps': '0' } },
    });
    await plugin.validate!(create('a'));
    assert.deepEqual(await used(), { 'count/configmaps': '0' });
  });

  it('creates racing at the limit are admitted exactly up to it', async () => {
    const { plugin, used } = await setup({
      spec: { hard: { 'count/configmaps': '3' } },
      status: { hard: { 'count/configmaps': '3' }, used: { 'count/configmaps': '0' } },
    });
    const results = await Promise.allSettled(Array.from({ length: 13 }, async (_, i) => plugin.validate!(create(`c${i}`))));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
    assert.deepEqual(await used(), { 'count/configmaps': '3' });
  });

  it('creates racing through two API servers (two plugins, one storage) are admitted exactly up to the limit', async () => {
    const { plugin, used, registry } = await setup({
      spec: { hard: { 'count/configmaps': '3' } },
      status: { hard: { 'count/configmaps': '3' }, used: { 'count/configmaps': '0' } },
    });
    // Each plugin serialises only its own requests: the quota's compare-and-swap keeps them apart.
    const other = resourceQuotaAdmission(registry);
    const results = await Promise.allSettled(Array.from({ length: 13 }, async (_, i) => (i % 2 ? plugin : other).validate!(create(`c${i}`))));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
    assert.deepEqual(await used(), { 'count/configmaps': '3' });
  });
});
