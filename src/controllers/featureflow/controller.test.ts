// The leader choice over identity Leases and the tasks a kind's gated fields imply.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { chooseLeader, mergeTasks, tasksFromGatedFields } from './controller.js';
import { clearField, parseFieldPath, parseResource } from './tasks.js';

const now = new Date('2026-08-01T10:00:00Z');
const lease = (name: string, agoMs: number) => ({
  metadata: { name },
  spec: { holderIdentity: `${name}_x`, renewTime: new Date(now.getTime() - agoMs).toISOString() },
});
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

describe('chooseLeader', () => {
  const names = ['apiserver-a', 'apiserver-b', 'apiserver-c'];
  const byHash = [...names].sort((x, y) => (sha(x) < sha(y) ? -1 : 1));

  it('picks the live lease whose name hashes lowest, the same whatever the order', () => {
    const leases = names.map((n) => lease(n, 1_000));
    assert.equal(chooseLeader(leases, now, 40_000).leader, byHash[0]);
    assert.equal(chooseLeader([...leases].reverse(), now, 40_000).leader, byHash[0]);
  });

  it('a stale lease (renewed longer ago than the liveness) does not count: the next lowest leads', () => {
    const leases = names.map((n) => lease(n, n === byHash[0] ? 41_000 : 1_000));
    const { leader, live } = chooseLeader(leases, now, 40_000);
    assert.equal(leader, byHash[1]);
    assert.equal(live.length, 2);
  });

  it('no live lease, or none with a renewTime: no leader', () => {
    assert.equal(chooseLeader([lease('apiserver-a', 60_000)], now, 40_000).leader, undefined);
    assert.equal(chooseLeader([{ metadata: { name: 'apiserver-a' }, spec: {} }], now, 40_000).leader, undefined);
    assert.equal(chooseLeader([], now, 40_000).leader, undefined);
  });
});

describe('tasks declared by gated fields', () => {
  it('one ClearField per kind and feature, every field in one pass; declared tasks follow', () => {
    const tasks = tasksFromGatedFields([
      {
        gvr: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
        gatedFields: [
          { feature: 'CoordinatedLeaderElection', path: ['spec', 'strategy'] },
          { feature: 'CoordinatedLeaderElection', path: ['spec', 'preferredHolder'] },
        ],
      },
      { gvr: { group: '', version: 'v1', resource: 'pods' }, gatedFields: [{ feature: 'X', path: ['spec', 'x'] }] },
    ]);
    assert.deepEqual(tasks['CoordinatedLeaderElection']?.disable, [
      {
        name: 'clear-leases.coordination.k8s.io',
        type: 'ClearField',
        params: { resource: 'coordination.k8s.io/v1/leases', fieldPath: '.spec.strategy,.spec.preferredHolder' },
      },
    ]);
    assert.deepEqual(tasks['X']?.disable?.[0]?.params, { resource: 'v1/pods', fieldPath: '.spec.x' });
    const merged = mergeTasks(tasks, { X: { disable: [{ name: 'mine', type: 'Custom', params: { name: 'f' } }], enable: [] } });
    assert.deepEqual(
      merged['X']?.disable?.map((t) => t.name),
      ['clear-pods', 'mine'],
    );
  });

  it('parses resources and field paths, and clears a field only where it is', () => {
    assert.deepEqual(parseResource('apps/v1/statefulsets'), { group: 'apps', version: 'v1', resource: 'statefulsets' });
    assert.deepEqual(parseResource('v1/pods'), { group: '', version: 'v1', resource: 'pods' });
    for (const bad of ['', 'pods', 'a//b', 'a/b/c/d', undefined]) assert.equal(parseResource(bad), undefined, String(bad));
    assert.deepEqual(parseFieldPath('.spec.strategy'), ['spec', 'strategy']);
    const obj = { spec: { strategy: 'x', other: 1, gone: null } };
    assert.equal(clearField(obj, ['spec', 'strategy']), true);
    assert.equal(clearField(obj, ['spec', 'gone']), true); // null is stored: cleared too
    assert.equal(clearField(obj, ['spec', 'strategy']), false);
    assert.equal(clearField(obj, ['status', 'x']), false);
    assert.deepEqual(obj, { spec: { other: 1 } });
  });
});
