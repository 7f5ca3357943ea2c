// After client-go util/csaupgrade upgrade_test.go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import type { KubeObject, ManagedFieldsEntry } from '../types.js';
import { upgradeClientSideApplyManagedFields } from './csa-upgrade.js';
import { apply, update } from './merge.js';

const entry = (manager: string, operation: 'Apply' | 'Update', fieldsV1: Record<string, unknown>, apiVersion = 'v1'): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion,
  time: '2024-01-01T00:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1: fieldsV1 as ManagedFieldsEntry['fieldsV1'],
});

test('a lone client-side-apply entry becomes the kubectl Apply entry', () => {
  const out = upgradeClientSideApplyManagedFields([
    entry('kubectl-client-side-apply', 'Update', { 'f:data': { '.': {}, 'f:a': {} } }),
    entry('other', 'Update', { 'f:data': { 'f:b': {} } }),
  ]);
  assert.deepEqual(out, [entry('kubectl', 'Apply', { 'f:data': { '.': {}, 'f:a': {} } }), entry('other', 'Update', { 'f:data': { 'f:b': {} } })]);
});

test('an existing kubectl Apply entry absorbs the client-side-apply fields of its version; other CSA entries go', () => {
  const out = upgradeClientSideApplyManagedFields([
    entry('kubectl', 'Apply', { 'f:data': { 'f:a': {} } }),
    entry('kubectl-client-side-apply', 'Update', { 'f:data': { 'f:b': {} } }),
    entry('kubectl-client-side-apply', 'Update', { 'f:data': { 'f:c': {} } }, 'v1beta1'),
  ]);
  assert.deepEqual(out, [entry('kubectl', 'Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } })]);
});

test('nothing to convert leaves the entries as they are', () => {
  const input = [entry('someone', 'Update', { 'f:data': { 'f:a': {} } })];
  assert.deepEqual(upgradeClientSideApplyManagedFields(input), input);
});

test('after the upgrade, server-side apply prunes what client-side apply used to set', () => {
  const schema = { $ref: '#/definitions/io.k8s.api.core.v1.ConfigMap' };
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1', b: '2' } };
  const mf = update({ old: undefined, new: obj, manager: 'kubectl-client-side-apply', schema, defs: builtinDefinitions, apiVersion: 'v1' });
  const upgraded = upgradeClientSideApplyManagedFields(mf!);
  const live = { ...obj, metadata: { ...obj.metadata, uid: 'u', managedFields: upgraded! } };
  const r = apply({
    live,
    config: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } },
    manager: 'kubectl',
    schema,
    defs: builtinDefinitions,
    apiVersion: 'v1',
  });
  assert.deepEqual(r.object.data, { a: '1' });
  assert.deepEqual(
    r.managedFields!.map((e) => [e.manager, e.operation, e.fieldsV1]),
    [['kubectl', 'Apply', { 'f:data': { 'f:a': {} } }]],
  );
});
