import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatusError } from '../apimachinery/errors.js';
import { builtinDefinitions } from '../registry/builtin.js';
import { refTo, resolveSchema } from '../apimachinery/schema.js';
import type { KubeObject } from '../apimachinery/types.js';
import { configMapStrategy } from '../registry/core/configmaps/strategy.js';
import { namespaceStrategy } from '../registry/core/namespaces/strategy.js';
import { applyRequest, forceOf, managerOrUserAgent, trackUpdate, validatePatchOptions, type FieldManagerScope } from './fieldmanager.js';

const cmScope: FieldManagerScope = {
  strategy: configMapStrategy,
  schema: resolveSchema(builtinDefinitions, refTo('io.k8s.api.core.v1.ConfigMap')),
  definitions: builtinDefinitions,
  apiVersion: 'v1',
  kind: 'ConfigMap',
  groupResource: { group: '', resource: 'configmaps' },
  subresource: '',
};
const nsScope = (subresource: string): FieldManagerScope => ({
  ...cmScope,
  strategy: namespaceStrategy,
  schema: resolveSchema(builtinDefinitions, refTo('io.k8s.api.core.v1.Namespace')),
  kind: 'Namespace',
  groupResource: { group: '', resource: 'namespaces' },
  subresource,
});

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

test('managerOrUserAgent: fieldManager first, else the User-Agent up to "/", printable, at most 128 bytes', () => {
  assert.equal(managerOrUserAgent('explicit', 'kubectl/v1.33.0 (linux/amd64) kubernetes/abc'), 'explicit');
  assert.equal(managerOrUserAgent(undefined, 'kubectl/v1.33.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  assert.equal(managerOrUserAgent('', 'kubectl-1.20/v1.20.2 (linux/amd64)'), 'kubectl-1.20');
  assert.equal(managerOrUserAgent(undefined, 'Go-http-client/2.0'), 'Go-http-client');
  assert.equal(managerOrUserAgent(undefined, 'a\tb\u0000c/1'), 'abc');
  assert.equal(managerOrUserAgent(undefined, 'x'.repeat(300)), 'x'.repeat(128));
  assert.equal(managerOrUserAgent(undefined, 'é'.repeat(100)), 'é'.repeat(64));
  assert.equal(managerOrUserAgent(undefined, undefined), '');
});

test('validatePatchOptions: force only for apply, fieldManager required for apply', () => {
  assert.doesNotThrow(() => validatePatchOptions(new URLSearchParams('fieldManager=m&force=true'), 'apply'));
  assert.doesNotThrow(() => validatePatchOptions(new URLSearchParams(''), 'merge'));
  const missing = statusOf(() => validatePatchOptions(new URLSearchParams('force=true'), 'apply'));
  assert.equal(missing.code, 422);
  assert.equal(missing.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  const force = statusOf(() => validatePatchOptions(new URLSearchParams('force=false'), 'strategic'));
  assert.equal(force.message, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
  assert.equal(forceOf(new URLSearchParams('force=true')), true);
  assert.equal(forceOf(new URLSearchParams('force=false')), false);
  assert.equal(forceOf(new URLSearchParams('')), false);
});

test('applyRequest: YAML and JSON bodies, unchanged apply returns the live object itself', () => {
  const yaml = Buffer.from('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: "1"\n');
  const created = applyRequest(cmScope, undefined, { body: yaml, manager: 'm', force: false, fieldValidation: 'Strict' }).object;
  assert.deepEqual(
    created.metadata?.managedFields?.map((e) => [e.manager, e.operation, e.fieldsV1]),
    [['m', 'Apply', { 'f:data': { 'f:a': {} } }]],
  );
  const live: KubeObject = {
    ...created,
    metadata: { ...created.metadata, namespace: 'd', uid: 'u', resourceVersion: '3', creationTimestamp: '2024-01-01T00:00:00Z' },
  };
  const json = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }));
  assert.equal(applyRequest(cmScope, live, { body: json, manager: 'm', force: false, fieldValidation: 'Strict' }).object, live);
  // JSON that only YAML accepts (a comment) still works.
  const relaxed = Buffer.from('{"apiVersion": "v1", "kind": "ConfigMap", # comment\n "metadata": {"name": "c"}, "data": {"a": "1"}}');
  assert.equal(applyRequest(cmScope, live, { body: relaxed, manager: 'm', force: false, fieldValidation: 'Strict' }).object, live);
});

test('applyRequest: metadata keys keep the live order, so a changed managedFields alone does not reorder', () => {
  const live: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'c',
      managedFields: [{ manager: 'x', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } }],
      namespace: 'd',
      uid: 'u',
    },
    data: { a: '1' },
  };
  const out = applyRequest(cmScope, live, {
    body: Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}'),
    manager: 'm',
    force: false,
    fieldValidation: 'Warn',
  }).object;
  assert.deepEqual(Object.keys(out.metadata ?? {}), ['name', 'managedFields', 'namespace', 'uid']);
  assert.deepEqual(out.metadata?.managedFields?.map((e) => e.manager).sort(), ['m', 'x']);
});

test('trackUpdate: create, update, reset with [], untracked objects stay untracked', () => {
  const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } };
  trackUpdate(cmScope, undefined, obj, 'creator');
  assert.deepEqual(
    obj.metadata?.managedFields?.map((e) => [e.manager, e.operation, e.fieldsV1]),
    [['creator', 'Update', { 'f:data': { '.': {}, 'f:a': {} } }]],
  );
  const live: KubeObject = { ...obj, metadata: { ...obj.metadata, uid: 'u' } };
  const next: KubeObject = { ...structuredClone(live), data: { a: '1', b: '2' } };
  trackUpdate(cmScope, live, next, 'writer');
  assert.deepEqual(next.metadata?.managedFields?.map((e) => e.manager).sort(), ['creator', 'writer']);
  const reset: KubeObject = { ...structuredClone(live), metadata: { ...live.metadata, managedFields: [] } };
  trackUpdate(cmScope, live, reset, 'writer');
  assert.equal(reset.metadata?.managedFields, undefined);
  const untracked: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', uid: 'u' }, data: { a: '1' } };
  const changed: KubeObject = { ...structuredClone(untracked), data: { a: '2' } };
  trackUpdate(cmScope, untracked, changed, 'writer');
  assert.equal(changed.metadata?.managedFields, undefined);
});

test('trackUpdate: reset fields per endpoint (namespace status on the main resource, spec on /status)', () => {
  const live: KubeObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'n', uid: 'u', labels: { 'kubernetes.io/metadata.name': 'n' } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
  const created = structuredClone(live);
  trackUpdate(nsScope(''), undefined, created, 'creator');
  // Defaults (the name label) count; status never belongs to anyone on the main resource.
  assert.deepEqual(created.metadata?.managedFields?.[0]?.fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } },
    'f:spec': { '.': {}, 'f:finalizers': {} },
  });
  const tracked: KubeObject = { ...live, metadata: { ...live.metadata, managedFields: created.metadata.managedFields } };
  const viaStatus: KubeObject = { ...structuredClone(tracked), spec: { finalizers: [] }, status: { phase: 'Terminating' } };
  trackUpdate(nsScope('status'), tracked, viaStatus, 'ctrl');
  const entry = viaStatus.metadata?.managedFields?.find((e) => e.manager === 'ctrl');
  assert.equal(entry?.subresource, 'status');
  assert.deepEqual(entry?.fieldsV1, { 'f:status': { 'f:phase': {} } });
  // The main resource's owner keeps spec: a /status write cannot change it.
  assert.deepEqual(viaStatus.metadata?.managedFields?.find((e) => e.manager === 'creator')?.fieldsV1, created.metadata?.managedFields?.[0]?.fieldsV1);
});
