import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countedResource, isIntegerResourceName, isStandardQuotaResourceName, isStandardResourceName, objectCountNames } from './quota.js';

describe('quota resource names', () => {
  it('standard names: `storage` is a resource but not a quota one; hugepages are both', () => {
    for (const n of ['cpu', 'requests.storage', 'pods', 'services.loadbalancers', 'hugepages-2Mi', 'requests.hugepages-1Gi']) {
      assert.equal(isStandardResourceName(n), true, n);
      assert.equal(isStandardQuotaResourceName(n), true, n);
    }
    assert.equal(isStandardResourceName('storage'), true);
    assert.equal(isStandardQuotaResourceName('storage'), false);
    assert.equal(isStandardResourceName('widgets'), false);
  });

  it('integer names: object counts, service counts and extended resources', () => {
    for (const n of ['configmaps', 'pods', 'resourcequotas', 'services.nodeports', 'services.loadbalancers', 'count/widgets.example.com'])
      assert.equal(isIntegerResourceName(n), true, n);
    for (const n of ['cpu', 'memory', 'storage', 'requests.storage']) assert.equal(isIntegerResourceName(n), false, n);
  });

  it('object counts: count/ names and the legacy core names', () => {
    assert.deepEqual(objectCountNames('', 'configmaps'), ['count/configmaps', 'configmaps']);
    assert.deepEqual(objectCountNames('', 'events'), ['count/events']);
    assert.deepEqual(objectCountNames('example.com', 'widgets'), ['count/widgets.example.com']);
    assert.deepEqual(countedResource('secrets'), { group: '', resource: 'secrets' });
    assert.deepEqual(countedResource('count/widgets.example.com'), { group: 'example.com', resource: 'widgets' });
    assert.equal(countedResource('services.nodeports'), undefined);
    assert.equal(countedResource('cpu'), undefined);
  });
});
