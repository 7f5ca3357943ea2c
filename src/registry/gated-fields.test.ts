import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Definitions } from '../apimachinery/schema.js';
import type { KubeObject } from '../apimachinery/types.js';
import { dropDisabledFields, gatedFieldInUse, pruneDisabledDefinitions, type GatedField } from './gated-fields.js';

const FIELDS: GatedField[] = [
  { feature: 'F', path: ['spec', 'strategy'] },
  { feature: 'F', path: ['spec', 'preferredHolder'] },
  { feature: 'G', path: ['spec', 'other'] },
];
const gate = (on: Record<string, boolean>) => ({ enabled: (f: string) => on[f] ?? false });
const lease = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec });

describe('dropDisabledFields', () => {
  it('create: drops every field of a feature that is off, keeps those of one that is on', () => {
    const o = lease({ holderIdentity: 'a', strategy: 'OldestEmulationVersion', preferredHolder: 'b', other: 1 });
    assert.deepEqual(dropDisabledFields(o, undefined, FIELDS, gate({ G: true })), ['spec.strategy', 'spec.preferredHolder']);
    assert.deepEqual(o.spec, { holderIdentity: 'a', other: 1 });
  });

  it('feature on: nothing is dropped', () => {
    const o = lease({ strategy: 'x', preferredHolder: 'b' });
    assert.deepEqual(dropDisabledFields(o, undefined, FIELDS, gate({ F: true })), []);
    assert.deepEqual(o.spec, { strategy: 'x', preferredHolder: 'b' });
  });

  it('update ratchets per field: kept when the old object has it set, dropped otherwise', () => {
    const o = lease({ strategy: 'new', preferredHolder: 'b' });
    assert.deepEqual(dropDisabledFields(o, lease({ strategy: 'old' }), FIELDS, gate({})), ['spec.preferredHolder']);
    assert.deepEqual(o.spec, { strategy: 'new' });
  });

  it('an empty string on the old object is in use (a set pointer); null is not', () => {
    assert.equal(gatedFieldInUse(lease({ strategy: '' }), ['spec', 'strategy']), true);
    assert.equal(gatedFieldInUse(lease({ strategy: null }), ['spec', 'strategy']), false);
    assert.equal(gatedFieldInUse(undefined, ['spec', 'strategy']), false);
    assert.equal(gatedFieldInUse({ apiVersion: 'v1', kind: 'X', metadata: {} }, ['spec', 'strategy']), false);
  });

  it('a missing or non-object parent is left alone', () => {
    const noSpec: KubeObject = { apiVersion: 'v1', kind: 'X', metadata: {} };
    assert.deepEqual(dropDisabledFields(noSpec, undefined, FIELDS, gate({})), []);
    const odd = { ...noSpec, spec: 'text' } as KubeObject;
    assert.deepEqual(dropDisabledFields(odd, undefined, FIELDS, gate({})), []);
    assert.equal((odd as { spec?: unknown }).spec, 'text');
  });
});

describe('pruneDisabledDefinitions', () => {
  const defs: Definitions = {
    K: { type: 'object', properties: { spec: { $ref: '#/definitions/S', description: 'spec' } } },
    S: {
      type: 'object',
      required: ['strategy', 'holder'],
      properties: { holder: { type: 'string' }, strategy: { type: 'string' }, preferredHolder: { type: 'string' } },
    },
    A: { type: 'object', properties: { spec: { allOf: [{ $ref: '#/definitions/S' }] } } },
  };
  const roots = [{ definition: 'K', fields: FIELDS }];

  it('leaves out the fields of a feature that is off, through $ref, and from required; the input is unchanged', () => {
    const out = pruneDisabledDefinitions(defs, roots, gate({}));
    assert.deepEqual(Object.keys(out['S']!.properties!), ['holder']);
    assert.deepEqual(out['S']!.required, ['holder']);
    assert.deepEqual(Object.keys(defs['S']!.properties!), ['holder', 'strategy', 'preferredHolder']);
    assert.equal(out['K'], defs['K']);
  });

  it('returns the definitions themselves when every feature is on', () => {
    assert.equal(pruneDisabledDefinitions(defs, roots, gate({ F: true, G: true })), defs);
  });

  it("follows kube-openapi's single allOf reference too", () => {
    const out = pruneDisabledDefinitions(defs, [{ definition: 'A', fields: FIELDS }], gate({}));
    assert.deepEqual(Object.keys(out['S']!.properties!), ['holder']);
  });
});
