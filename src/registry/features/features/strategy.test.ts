import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../../apimachinery/types.js';
import { featureStrategy, foldUse, validateUse } from './strategy.js';
import type { FeatureObject } from './types.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:01:00Z');
const feature = (): KubeObject => ({
  apiVersion: 'features.kplane.io/v1alpha1',
  kind: 'Feature',
  metadata: { name: 'F', namespace: 'kube-system', generation: 1 },
});
const uses = (o: KubeObject) => (o as FeatureObject).status?.uses ?? [];
const agree = (o: KubeObject) => (o as FeatureObject).status?.conditions?.find((c) => c.type === 'UsesAgree');

test('foldUse: one entry per (component, identity); an equal report changes nothing', () => {
  const a = foldUse(feature(), { component: 'c', identity: 'i', version: '1', value: 'Enabled' }, t0);
  assert.equal(a.created, true);
  assert.equal(a.changed, true);
  assert.deepEqual(uses(a.object), [{ component: 'c', identity: 'i', version: '1', value: 'Enabled', reportTime: '2026-01-01T00:00:00Z' }]);
  assert.equal(agree(a.object)?.status, 'True');
  const again = foldUse(a.object, { component: 'c', identity: 'i', version: '1', value: 'Enabled' }, t1);
  assert.equal(again.changed, false);
  assert.equal(again.object, a.object);
  assert.equal(again.stored.reportTime, '2026-01-01T00:00:00Z');
  const other = foldUse(a.object, { component: 'c', identity: 'j', version: '1', value: 'Disabled' }, t1);
  assert.equal(uses(other.object).length, 2);
  assert.deepEqual(agree(other.object), {
    type: 'UsesAgree',
    status: 'False',
    reason: 'UsesDisagree',
    message: 'uses disagree: 1 Enabled, 1 Disabled',
    lastTransitionTime: '2026-01-01T00:01:00Z',
    observedGeneration: 1,
  });
  const flipped = foldUse(other.object, { component: 'c', identity: 'j', version: '1', value: 'Enabled' }, t1);
  assert.equal(flipped.created, false);
  assert.equal(uses(flipped.object).length, 2);
  assert.equal(agree(flipped.object)?.status, 'True');
});

test('validateUse: required fields, enums, lengths and types with field paths', () => {
  assert.deepEqual(validateUse({ component: 'c', identity: 'i', value: 'Enabled' }, ''), []);
  assert.deepEqual(
    validateUse({ identity: 5, version: 'v'.repeat(65), value: 'on' }, '').map((i) => [i.field, i.type]),
    [
      ['component', 'FieldValueRequired'],
      ['identity', 'FieldValueTypeInvalid'],
      ['version', 'FieldValueTooLong'],
      ['value', 'FieldValueNotSupported'],
    ],
  );
  assert.deepEqual(
    validateUse('x', 'status.uses[0]').map((i) => i.field),
    ['status.uses[0]'],
  );
});

test('status is kept on an update of the object, spec on a write of /status', () => {
  const old = { ...feature(), spec: { desired: 'Enabled' }, status: { state: 'On' } } as KubeObject;
  const next = { ...feature(), spec: { desired: 'Disabled' }, status: { state: 'Off' } } as KubeObject;
  featureStrategy.prepareForUpdate(next, old);
  assert.deepEqual((next as FeatureObject).status, { state: 'On' });
  assert.equal(next.metadata?.generation, 2);
  const viaStatus = { ...feature(), spec: {}, status: { state: 'Off' } } as KubeObject;
  featureStrategy.subresources!['status']!.prepareForUpdate!(viaStatus, old);
  assert.deepEqual((viaStatus as FeatureObject).spec, { desired: 'Enabled' });
  assert.deepEqual(
    featureStrategy.subresources!['status']!.validateUpdate!(
      {
        ...feature(),
        status: {
          state: 'Sideways',
          transition: {
            tasks: [
              { name: 'a', type: 'X' },
              { name: 'a', type: 'Y', phase: 'Done' },
            ],
          },
        },
      },
      old,
    ).map((i) => i.field),
    ['status.state', 'status.transition.tasks[1].phase', 'status.transition.tasks[1].name'],
  );
});

test('uses and status writes check only the uses that changed (ratcheting); merge leaves the stored object alone', () => {
  const sub = featureStrategy.subresources!['uses']!;
  // Stored by an older server that let a bad reportTime through: kept while unchanged.
  const stored = {
    ...feature(),
    status: { uses: [{ component: 'c', identity: 'i', value: 'Enabled', reportTime: 'yesterday' }] },
  } as KubeObject;
  const folded = foldUse(stored, { component: 'c', identity: 'j', value: 'Enabled' }, t0).object;
  assert.deepEqual(sub.validateUpdate!(folded, stored), []);
  assert.deepEqual(featureStrategy.subresources!['status']!.validateUpdate!(folded, stored), []);
  // A changed entry, or one without a stored twin, is checked.
  const changed = { ...stored, status: { uses: [{ component: 'c', identity: 'i', value: 'Maybe', reportTime: 'yesterday' }] } } as KubeObject;
  assert.deepEqual(
    sub.validateUpdate!(changed, stored).map((i) => i.field),
    ['status.uses[0].value', 'status.uses[0].reportTime'],
  );
  assert.deepEqual(
    sub.validateUpdate!(stored, feature()).map((i) => i.field),
    ['status.uses[0].reportTime'],
  );
  const before = JSON.stringify(stored);
  const merged = sub.merge(folded, stored);
  assert.equal(uses(merged).length, 2);
  assert.equal(JSON.stringify(stored), before);
});
