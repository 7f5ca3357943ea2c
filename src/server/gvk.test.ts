import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import { defaultGroupVersionKind } from './gvk.js';

const lease = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' };
const ns = { group: '', version: 'v1', kind: 'Namespace' };

function d(obj: KubeObject, def: typeof lease): KubeObject {
  defaultGroupVersionKind(obj, def);
  return obj;
}

test('missing kind and apiVersion come from the endpoint', () => {
  assert.deepEqual(d({ metadata: { name: 'x' } }, ns), { metadata: { name: 'x' }, kind: 'Namespace', apiVersion: 'v1' });
  assert.deepEqual(d({ metadata: {} }, lease), { metadata: {}, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1' });
  assert.deepEqual(d({ kind: '', apiVersion: '' }, lease), { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1' });
});

test('present parts are kept, so a mismatch is still reported by the handler', () => {
  assert.deepEqual(d({ kind: 'ConfigMap' }, ns), { kind: 'ConfigMap', apiVersion: 'v1' });
  assert.deepEqual(d({ apiVersion: 'v1' }, lease), { apiVersion: 'v1', kind: 'Lease' });
  assert.deepEqual(d({ apiVersion: 'apps/v1', kind: 'Lease' }, lease), { apiVersion: 'apps/v1', kind: 'Lease' });
});

test('a version-less apiVersion of the same group gets the endpoint version (gvkWithDefaults)', () => {
  assert.deepEqual(d({ apiVersion: 'coordination.k8s.io/' }, lease), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' });
  assert.deepEqual(d({ apiVersion: 'apps/' }, lease), { apiVersion: 'apps/', kind: 'Lease' });
});
