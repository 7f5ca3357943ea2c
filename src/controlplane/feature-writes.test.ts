import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import { withoutFields } from './feature-writes.js';

const entry = (manager: string, fieldsV1: object) => ({
  manager,
  operation: 'Update' as const,
  apiVersion: 'example.com/v1',
  time: '2026-01-01T00:00:00Z',
  fieldsType: 'FieldsV1' as const,
  fieldsV1: fieldsV1 as never,
});

describe('withoutFields (ClearField in process)', () => {
  const obj = (): KubeObject => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: {
      name: 'w',
      managedFields: [
        // Owns spec itself and a field under the removed struct: keeps spec (".").
        entry('owner', { 'f:spec': { '.': {}, 'f:gated': { 'f:a': {} }, 'f:size': {} } }),
        // Owns only what is removed: loses its entry.
        entry('gated-only', { 'f:spec': { 'f:gated': { '.': {}, 'f:b': {} }, 'f:other': { 'f:x': {} } } }),
        // Owns a sibling path under spec only: a parent left empty goes too.
        entry('deep', { 'f:spec': { 'f:gated': { 'f:a': {} } }, 'f:metadata': { 'f:labels': { 'f:x': {} } } }),
      ],
    },
    spec: { size: 1, gated: { a: 1, b: 2 }, other: { x: 1 } },
  });

  it('removes a struct field and what is under it from the object and from every manager', () => {
    const before = obj();
    const snapshot = structuredClone(before);
    const out = withoutFields(before, [
      ['spec', 'gated'],
      ['spec', 'other', 'x'],
    ]);
    assert.ok(out);
    assert.deepEqual(out['spec'], { size: 1, other: {} });
    assert.deepEqual(
      out.metadata?.managedFields?.map((e) => [e.manager, e.fieldsV1, e.time]),
      [
        ['owner', { 'f:spec': { '.': {}, 'f:size': {} } }, '2026-01-01T00:00:00Z'],
        ['deep', { 'f:metadata': { 'f:labels': { 'f:x': {} } } }, '2026-01-01T00:00:00Z'],
      ],
    );
    // The old object (what admission sees as oldObject) is unchanged, and the metadata is a copy.
    assert.deepEqual(before, snapshot);
    assert.notEqual(out.metadata, before.metadata);
  });

  it('answers undefined when none of the fields is there', () => {
    assert.equal(
      withoutFields(obj(), [
        ['spec', 'missing'],
        ['status', 'x'],
      ]),
      undefined,
    );
  });

  it('drops managedFields when no manager is left', () => {
    const o: KubeObject = { metadata: { name: 'w', managedFields: [entry('m', { 'f:spec': { 'f:gated': {} } })] }, spec: { gated: 1 } };
    const out = withoutFields(o, [['spec', 'gated']]);
    assert.deepEqual(out, { metadata: { name: 'w' }, spec: {} });
  });
});
